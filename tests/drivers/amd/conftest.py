"""Shared helpers for the AMD driver tests: the fixture code objects, and a bare emulated GPU that runs
the driver's PM4 packets directly (without KFD) so the packet builders and the loader are tested alone."""
from pathlib import Path

import numpy as np
import pytest

from gputwin.abi.code_object import CodeObject

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "drivers"


@pytest.fixture(scope="session")
def hsaco():
    """name -> bytes of the fixture code objects (v5 / v4 / w64 for gfx1100, v6 for gfx11-generic, hip)."""
    blobs = {v: (FIX / f"kernels_gfx1100_{v}.hsaco").read_bytes() for v in ("v5", "v4", "w64")}
    blobs["v6"] = (FIX / "kernels_gfx11_generic_v6.hsaco").read_bytes()
    blobs["hip"] = (FIX / "kernels_hip_gfx1100.hsaco").read_bytes()
    return blobs


class BareGPU:
    """An emulated gfx1100 with a few fixed mappings; `run(cmds)` pushes PM4 dwords and rings the doorbell."""
    RING, PTRS, KARGS, SIG, IMAGE, DATA = 0x2000_0000, 0x2001_0000, 0x2002_0000, 0x2003_0000, 0x1000_0000, 0x3000_0000

    def __init__(self):
        from gputwin.emu.amd.gpu import GPU
        self.gpu = GPU("gfx1100")
        self.events = []
        self.gpu.listener = self.events.append
        for va, n in ((self.RING, 1 << 16), (self.PTRS, 4096), (self.KARGS, 1 << 16), (self.SIG, 4096),
                      (self.DATA, 1 << 22)):
            self.gpu.mem.map(va, n)
        self.queue = self.gpu.create_compute_queue(self.RING, 1 << 16, self.PTRS, self.PTRS + 8)
        self.put = 0

    def load(self, blob: bytes) -> CodeObject:
        co = CodeObject.parse(blob)
        self.gpu.mem.map(self.IMAGE, co.image_size, np.frombuffer(co.relocated_image(self.IMAGE), np.uint8).copy())
        return co

    def run(self, cmds: list[int]) -> None:
        self.gpu.mem.write(self.RING + 4 * self.put, np.asarray(cmds, np.uint32))
        self.put += len(cmds)
        self.gpu.ring_doorbell(self.queue, self.put)


@pytest.fixture
def bare_gpu():
    return BareGPU()
