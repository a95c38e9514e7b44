"""Running HSA code objects on the emulator without a driver: for ISA tests, fixtures and benchmarks.

    mem = AddressSpace(); arena = Arena(mem)
    k = load_kernel(arena, open("fixtures/amd/cl/basic.hsaco", "rb").read(), "saxpy")
    y = arena.alloc(4 * n, data=y_host); x = arena.alloc(4 * n, data=x_host)
    counters = k(y, x, 2.0, n, grid=(n // 256, 1, 1), block=(256, 1, 1))
    arena.read(y, 4 * n)

It does what a runtime does on the way to `run_dispatch`: maps the relocated image, lays out explicit
and hidden kernel arguments from the metadata (gputwin.abi.kernargs, shared with the driver), fills the
user SGPRs the descriptor enables (gputwin.abi.amdhsa), and writes an AQL dispatch packet when the kernel
asks for the dispatch pointer. Pointer arguments are plain GPU addresses (ints). A kernel that prints gets
a printf buffer in the arena; its messages are printed when the dispatch returns (gputwin.abi.printf).
"""
from __future__ import annotations


import numpy as np

from gputwin.abi import amdhsa
from gputwin.abi.code_object import CodeObject
from gputwin.abi.kernargs import LaunchInfo, build_kernargs
from gputwin.abi.printf import PrintfFormats, buffer_size, empty_buffer, print_buffer
from gputwin.emu.amd.dispatch import Counters, Dispatch, run_dispatch
from gputwin.emu.memory import AddressSpace
from gputwin.errors import GpuFault, IllegalInstruction

PAGE = 0x1000


class Arena:
    """A bump allocator of GPU virtual addresses over an AddressSpace; every allocation is its own mapping."""

    def __init__(self, mem: AddressSpace | None = None, base: int = 0x1_0000_0000):
        self.mem = mem if mem is not None else AddressSpace()
        self.next = base

    def alloc(self, nbytes: int, data=None, *, writable: bool = True) -> int:
        size = max(PAGE, (int(nbytes) + PAGE - 1) & ~(PAGE - 1))
        va = self.next
        self.next += size + PAGE            # a guard page between allocations catches overruns
        arr = self.mem.map(va, size, writable=writable, extent=max(1, int(nbytes)))   # memcheck: the exact size
        if data is not None:
            src = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) \
                else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
            arr[:src.size] = src
        return va

    def read(self, va: int, nbytes: int) -> bytes:
        return self.mem.read(va, nbytes)

    def array(self, va: int, dtype, count: int) -> np.ndarray:
        return np.frombuffer(self.mem.read(va, np.dtype(dtype).itemsize * count), dtype).copy()


class Kernel:
    """One kernel of a loaded code object; calling it runs a dispatch and returns the Counters."""

    def __init__(self, arena: Arena, co: CodeObject, base: int, name: str):
        self.arena, self.co, self.base, self.info = arena, co, base, co.find_kernel(name)
        self.printf_buffer: tuple[int, int] | None = None   # (address, size) of the last dispatch's printf buffer

    def dispatch(self, *args, grid=(1, 1, 1), block=(1, 1, 1), dynamic_lds: int = 0) -> Dispatch:
        info, arena = self.info, self.arena
        grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        dims = 3 if grid[2] * block[2] > 1 else 2 if grid[1] * block[1] > 1 else 1
        self.printf_buffer = None
        if any(a.value_kind == "hidden_printf_buffer" for a in info.args):
            self.printf_buffer = (arena.alloc(buffer_size(), empty_buffer(buffer_size())), buffer_size())
        launch = LaunchInfo(grid=grid, block=block, dims=dims, dynamic_lds=dynamic_lds,
                            printf_buffer=self.printf_buffer[0] if self.printf_buffer else 0)
        ka = build_kernargs(info, args, launch, _pointer)
        ka_va = arena.alloc(max(len(ka), 1), bytes(ka))
        kd = self.base + info.kd_offset
        values = {"kernarg_segment_ptr": ka_va, "dispatch_id": 0, "queue_ptr": 0,
                  "private_segment_size": info.private_segment_size}
        props = info.descriptor.kernel_code_properties
        layout = amdhsa.user_sgpr_layout(props)
        if any(name == "dispatch_ptr" for name, _, _ in layout):
            values["dispatch_ptr"] = arena.alloc(64, bytes(_packet(grid, block, info, kd, ka_va)))
        sgprs = [0] * max((first + cnt for _, first, cnt in layout), default=0)
        for name, first, cnt in layout:
            if name not in values:
                raise IllegalInstruction(f"kernel {info.name}: user SGPR {name} is not provided standalone")
            for k in range(cnt):
                sgprs[first + k] = (values[name] >> (32 * k)) & 0xFFFFFFFF
        return Dispatch(code_address=self.base + info.entry_offset, grid=grid, block=block,
                        wave64=not info.wave32, user_sgprs=sgprs, rsrc1=info.rsrc1, rsrc2=info.rsrc2,
                        rsrc3=info.rsrc3, lds_bytes=info.group_segment_size + dynamic_lds,
                        scratch_bytes_per_lane=info.private_segment_size,
                        group_segment=info.group_segment_size + dynamic_lds)

    def __call__(self, *args, grid=(1, 1, 1), block=(1, 1, 1), dynamic_lds: int = 0,
                 watchdog_s: float | None = None, watchdog_insts: int | None = None) -> Counters:
        d = self.dispatch(*args, grid=grid, block=block, dynamic_lds=dynamic_lds)
        try:
            return run_dispatch(self.arena.mem, d, arch=self.co.arch, watchdog_s=watchdog_s,
                                watchdog_insts=watchdog_insts)
        except GpuFault as e:          # what the driver adds to a fault: the kernel and the offset in it
            if e.kernel is None:
                e.kernel = self.info.name
                if e.kernel_offset is None and e.pc is not None:
                    e.kernel_offset = e.pc - d.code_address
            raise
        finally:   # what the kernel printed, also when it faulted (as the driver does at synchronize)
            if self.printf_buffer is not None:
                print_buffer(PrintfFormats.from_metadata(self.co.metadata), self.arena.read(*self.printf_buffer),
                             f"kernel {self.info.name}")


def _pointer(v) -> int:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    raise TypeError(f"a pointer argument takes a GPU address (int), not {type(v).__name__}")


def _packet(grid, block, info, kd: int, kernarg: int) -> amdhsa.hsa_kernel_dispatch_packet_t:
    p = amdhsa.hsa_kernel_dispatch_packet_t()
    p.header = amdhsa.DISPATCH_PACKET_HEADER
    p.setup = 3
    p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z = block
    p.grid_size_x, p.grid_size_y, p.grid_size_z = (g * b for g, b in zip(grid, block))
    p.private_segment_size = info.private_segment_size
    p.group_segment_size = info.group_segment_size
    p.kernel_object, p.kernarg_address = kd, kernarg
    return p


def load_code_object(arena: Arena, image: bytes) -> tuple[CodeObject, int]:
    """Parse and map a code object (relocated to where it lands); returns it and its base address."""
    co = CodeObject.parse(image)
    base = arena.next
    arena.alloc(co.image_size, co.relocated_image(base), writable=False)
    return co, base


def load_kernel(arena: Arena, image: bytes, name: str) -> Kernel:
    co, base = load_code_object(arena, image)
    return Kernel(arena, co, base, name)


__all__ = ["Arena", "Kernel", "load_code_object", "load_kernel"]
