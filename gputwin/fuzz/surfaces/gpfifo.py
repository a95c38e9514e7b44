"""GPFIFO entries and pushbuffers through the emulated NVIDIA front end (gputwin.emu.nv), sm_90 and sm_80.

Well-formed method streams a driver would write (host semaphore release/acquire, NOP, WFI, non-stall
interrupt, MEM_OP, SET_OBJECT, copy-class LAUNCH_DMA 1D/2D with semaphores, compute-class QMD launches of a
PTX program that stores through its parameter, report semaphores), mutated as the PM4/SDMA streams are (bit
flips, replaced dwords, wrong counts, truncation, junk), then split over GPFIFO entries that are themselves
sometimes wrong (length, address, SUBROUTINE level, GP_PUT past the ring). QMDs get fields set to hostile
values. Nothing may escape the doorbell; what the GPU reports (GpuEvent) must carry a gputwin error; a fresh
channel's semaphore release must still land afterwards.
"""
from __future__ import annotations

import random

import numpy as np

from gputwin.abi import nv_methods as m
from gputwin.abi import nv_qmd as q
from gputwin.drivers.nv.qmd import launch_qmd
from gputwin.drivers.nv.queues import inc
from gputwin.emu.nv.compute import ComputeEngine
from gputwin.emu.nv.copy import CopyEngine
from gputwin.emu.nv.gpu import NVGPU
from gputwin.fuzz.surface import Recorder, Surface, register
from gputwin.fuzz.surfaces.streams import mutate_stream

ARCHES = ("sm_90", "sm_80")
GPFIFO_VA, PB_VA, MEM_VA = 0x10000, 0x20000, 0x100000
ENTRIES, PB_SIZE, MEM_SIZE = 16, 0x10000, 0x40000
PROGRAM_OFF, CB_OFF, QMD_OFF = 0x30000, 0x31000, 0x32000
STORE = """.version 8.0
.target {arch}
.address_size 64
.visible .entry store(.param .u64 p, .param .u32 v)
{{
\t.reg .b64 %rd<3>;
\t.reg .b32 %r<3>;
\tld.param.u64 %rd1, [p];
\tld.param.u32 %r1, [v];
\tmov.u32 %r2, %tid.x;
\tmul.wide.u32 %rd2, %r2, 4;
\tadd.s64 %rd1, %rd1, %rd2;
\tst.global.u32 [%rd1], %r1;
\tret;
}}
"""
QMD_FIELDS = ("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH", "CTA_THREAD_DIMENSION0",
              "CTA_THREAD_DIMENSION1", "SHARED_MEMORY_SIZE", "QMD_MAJOR_VERSION", "CONSTANT_BUFFER_VALID0",
              "CONSTANT_BUFFER_SIZE_SHIFTED40", "PROGRAM_ADDRESS_LOWER", "PROGRAM_ADDRESS_UPPER",
              "RELEASE0_ENABLE", "RELEASE0_ADDRESS_LOWER", "RELEASE0_STRUCTURE_SIZE", "RELEASE0_PAYLOAD64B",
              "DEPENDENT_QMD0_ENABLE", "DEPENDENT_QMD0_POINTER", "DEPENDENT_QMD0_ACTION")


def _qmd(rnd: random.Random, arch: str) -> bytes:
    """A launch of STORE over the data area, sometimes with one to three fields set to hostile values."""
    d = launch_qmd(grid=(rnd.choice([1, 2, 3]), 1, 1), block=(rnd.choice([1, 32, 33, 64]), 1, 1),
                   shared_bytes=rnd.choice([0, 0, 1024]), program_va=MEM_VA + PROGRAM_OFF,
                   cb_va=MEM_VA + CB_OFF, cb_size=0x400)
    if rnd.random() < 0.3:
        d.set("RELEASE0_ENABLE", 1).set("RELEASE0_ADDRESS_LOWER", MEM_VA + 8 * rnd.randrange(64))
        d.set("RELEASE0_PAYLOAD_LOWER", rnd.getrandbits(32))
    if rnd.random() < 0.35:
        for _ in range(rnd.randrange(1, 4)):
            name = rnd.choice(QMD_FIELDS)
            hi, lo = sorted(q.FIELDS[name], reverse=True)
            d.set(name, rnd.choice([0, 1, 2, 1024, 1025, 1 << 16, rnd.getrandbits(32)]) & ((1 << (hi - lo + 1)) - 1))
    return d.to_bytes()


def _packets(rnd: random.Random, gpu: NVGPU) -> list[list[int]]:
    p = gpu.profile
    sc, sk = m.SUBCHANNEL_COPY, m.SUBCHANNEL_COMPUTE

    def addr():
        return MEM_VA + 8 * rnd.randrange(MEM_SIZE // 16)

    out = [inc(sk, m.NVC56F_SET_OBJECT, p.compute_class), inc(sc, m.NVC56F_SET_OBJECT, p.copy_class)]
    for _ in range(rnd.randrange(1, 12)):
        kind = rnd.choice(["release", "acquire", "nop", "nonstall", "memop", "object", "copy", "copy2d",
                           "copysem", "launch", "launch", "launch", "report", "raw"])
        if kind in ("release", "acquire"):
            a, v = addr(), rnd.choice([0, 1, rnd.getrandbits(64)])
            op = m.SEM_EXECUTE_OPERATION_RELEASE if kind == "release" else rnd.randrange(7)
            flags = op | rnd.choice([0, m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT]) | rnd.choice(
                [0, m.SEM_EXECUTE_RELEASE_WFI, m.SEM_EXECUTE_RELEASE_TIMESTAMP, m.SEM_EXECUTE_ACQUIRE_SWITCH_TSG])
            out.append(inc(0, m.NVC56F_SEM_ADDR_LO, a & 0xFFFFFFFF, a >> 32, v & 0xFFFFFFFF, v >> 32, flags))
        elif kind == "nop":
            out.append(inc(rnd.randrange(8), m.NVC56F_NOP, rnd.getrandbits(32)))
        elif kind == "nonstall":
            out.append(inc(0, m.NVC56F_NON_STALL_INTERRUPT, 0))
        elif kind == "memop":
            out.append(inc(0, m.NVC56F_WFI, 0) + inc(0, m.NVC56F_MEM_OP_A, 0, 0, 0, rnd.choice([
                m.MEM_OP_D_OPERATION_MEMBAR, m.MEM_OP_D_OPERATION_L2_FLUSH_DIRTY, rnd.getrandbits(32)])))
        elif kind == "object":
            out.append(inc(rnd.randrange(8), m.NVC56F_SET_OBJECT, rnd.choice(
                [p.compute_class, p.copy_class, 0xC56F, 0xC6C0, 0xCBC0, 0xC8B5, rnd.getrandbits(16)])))
        elif kind in ("copy", "copy2d"):
            src, dst, n = addr(), addr(), rnd.choice([1, 4, 64, 4096])
            out.append(inc(sc, m.COPY_OFFSET_IN_UPPER, src >> 32, src & 0xFFFFFFFF, dst >> 32, dst & 0xFFFFFFFF))
            multi = 0
            if kind == "copy2d":
                out.append(inc(sc, m.COPY_PITCH_IN, rnd.choice([0, 64, 4096]), rnd.choice([0, 64, 4096])))
                multi = m.LAUNCH_DMA_MULTI_LINE_ENABLE
            out.append(inc(sc, m.COPY_LINE_LENGTH_IN, n, rnd.choice([1, 2, 16])))
            out.append(inc(sc, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED | m.LAUNCH_DMA_FLUSH_ENABLE
                           | m.LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH | m.LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH | multi))
        elif kind == "copysem":
            a = addr()
            out.append(inc(sc, m.COPY_SET_SEMAPHORE_A, a >> 32, a & 0xFFFFFFFF, rnd.getrandbits(32)))
            out.append(inc(sc, m.COPY_LAUNCH_DMA, rnd.getrandbits(32) & ~0x3 if rnd.random() < 0.5 else 0x8))
        elif kind == "launch":
            qva = MEM_VA + QMD_OFF + 0x100 * rnd.randrange(4)
            out.append(inc(sk, m.COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, 0) + inc(sk, m.COMPUTE_SEND_PCAS_A, qva >> 8)
                       + inc(sk, m.COMPUTE_SEND_SIGNALING_PCAS2_B, m.PCAS2_B_ACTION_INVALIDATE_COPY_SCHEDULE
                             if rnd.random() < 0.85 else rnd.randrange(16)))
        elif kind == "report":
            a = addr()
            out.append(inc(sk, m.COMPUTE_SET_REPORT_SEMAPHORE_A, a >> 32, a & 0xFFFFFFFF, rnd.getrandbits(32),
                           rnd.choice([m.REPORT_SEMAPHORE_D_STRUCTURE_SIZE_ONE_WORD, rnd.getrandbits(32)])))
        else:
            out.append([rnd.getrandbits(32) for _ in range(rnd.randrange(1, 6))])
    return out


@register
class Gpfifo(Surface):
    name = "gpfifo"
    doc = "mutated GPFIFO entries and pushbuffers (host, copy, compute methods, QMDs) through the NV front end"

    def generate(self, rnd: random.Random) -> dict:
        return {"arch": rnd.choice(ARCHES), "seed": rnd.getrandbits(32), "mutate": rnd.random() < 0.6,
                "entries": rnd.choice(["good"] * 6 + ["length", "address", "subroutine", "put"])}

    def execute(self, case: dict, rec: Recorder) -> None:
        rnd, arch = random.Random(case["seed"]), case["arch"]
        gpu = NVGPU(arch)
        events = []
        gpu.listener = events.append
        gpu.mem.map(GPFIFO_VA, 8 * ENTRIES)
        gpu.mem.map(PB_VA, PB_SIZE)
        mem = gpu.mem.map(MEM_VA, MEM_SIZE)
        mem[:] = np.frombuffer(rnd.randbytes(MEM_SIZE), np.uint8)
        blob = b"store\0" + STORE.format(arch=arch).encode() + b"\0"
        mem[PROGRAM_OFF:PROGRAM_OFF + len(blob)] = np.frombuffer(blob, np.uint8)
        params = (MEM_VA + 0x1000).to_bytes(8, "little") + rnd.getrandbits(32).to_bytes(4, "little")
        cb = gpu.profile.cbank0_param_offset
        mem[CB_OFF + cb:CB_OFF + cb + len(params)] = np.frombuffer(params, np.uint8)
        for i in range(4):
            raw = _qmd(rnd, arch)
            mem[QMD_OFF + 0x100 * i:QMD_OFF + 0x100 * i + len(raw)] = np.frombuffer(raw, np.uint8)
        ch = self._channel(gpu, np.zeros(m.USERD_SIZE, np.uint8))
        packets = _packets(rnd, gpu)
        cuts = sorted(rnd.sample(range(1, len(packets)), min(len(packets) - 1, rnd.randrange(3))))
        put, pb = 0, PB_VA
        for lo, hi in zip([0, *cuts], [*cuts, len(packets)]):     # one GPFIFO entry per group of packets
            group = packets[lo:hi]
            words = mutate_stream(rnd, group) if case["mutate"] else [w for p in group for w in p]
            gpu.mem.write(pb, np.array(words, "<u4").tobytes())
            e0, e1 = m.gp_entry(pb, len(words))
            pb += 4 * len(words)
            bad = case["entries"] if rnd.random() < 0.5 else "good"
            if bad == "length":
                e1 = (e1 & ~(m.GP_ENTRY1_LENGTH_MASK << m.GP_ENTRY1_LENGTH_SHIFT)) | (
                    rnd.choice([0, len(words) + 1, PB_SIZE, m.GP_ENTRY1_LENGTH_MASK]) << m.GP_ENTRY1_LENGTH_SHIFT)
            elif bad == "address":
                e0, e1 = rnd.getrandbits(32) & ~3, (e1 & ~m.GP_ENTRY1_GET_HI_MASK) | rnd.getrandbits(8)
            elif bad == "subroutine":
                e1 |= m.GP_ENTRY1_LEVEL_SUBROUTINE
            gpu.mem.write(GPFIFO_VA + 8 * put, np.array([e0, e1], "<u4").tobytes())
            put += 1
        if case["entries"] == "put":
            put = rnd.choice([ENTRIES, ENTRIES + 1, 0xFFFFFFFF, rnd.getrandbits(32)])
        ch.userd.view(np.uint32)[m.USERD_GP_PUT // 4] = put % (1 << 32)
        rec.step("doorbell", gpu.doorbell, ch.token)
        for e in events:
            if e.kind == "nonstall":
                rec.ok("event:nonstall")
            else:
                rec.error("event", e.error, f"event:{e.kind}:", validation=False)
        rec.step("fresh channel", self._still_works, gpu)

    @staticmethod
    def _channel(gpu: NVGPU, userd: np.ndarray, gpfifo_va: int = GPFIFO_VA):
        ch = gpu.create_channel(gpfifo_va, ENTRIES, userd)
        p = gpu.profile
        ch.bind_object(p.compute_class, ComputeEngine(ch, p.compute_class))
        ch.bind_object(p.copy_class, CopyEngine(ch, p.copy_class))
        return ch

    def _still_works(self, gpu: NVGPU) -> None:
        """A semaphore release on a new channel lands: a fault stops one channel, never the GPU."""
        base = 0x800000
        gpu.mem.map(base, 0x2000)
        target = base + 0x1000
        words = inc(0, m.NVC56F_SEM_ADDR_LO, target & 0xFFFFFFFF, target >> 32, 0x600DF00D, 0,
                    m.SEM_EXECUTE_OPERATION_RELEASE)
        gpu.mem.write(base, np.array(words, "<u4").tobytes())
        gpu.mem.write(base + 0x800, np.array(m.gp_entry(base, len(words)), "<u4").tobytes())
        ch = self._channel(gpu, np.zeros(m.USERD_SIZE, np.uint8), base + 0x800)
        ch.userd.view(np.uint32)[m.USERD_GP_PUT // 4] = 1
        gpu.doorbell(ch.token)
        got = gpu.mem.read_u32(target)
        if got != 0x600DF00D:
            raise AssertionError(f"a fresh channel's semaphore release did not land after the fuzzed stream ({got:#x})")
