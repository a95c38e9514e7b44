"""The PM4 compute-queue builder and the loader, run on a bare emulated GPU (no KFD in between)."""
from types import SimpleNamespace

import numpy as np

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi.kernargs import LaunchInfo, build_kernargs
from gputwin.drivers.amd.loader import LoadedKernel
from gputwin.drivers.amd.pm4 import AMDComputeQueue


def launch(g, co, name, args, grid, block, dispatch_id=1):
    k = LoadedKernel(co.kernels[name], g.IMAGE, "gfx1100")
    ka = build_kernargs(k.info, args, LaunchInfo(grid, block), lambda b: b.va)
    g.gpu.mem.write(g.KARGS, bytes(ka))
    if k.dispatch_ptr:
        g.gpu.mem.write(g.KARGS + k.args_size, k.dispatch_packet(g.KARGS, grid, block, 3))
    q = AMDComputeQueue(event=(42, g.SIG + 64))
    q.dispatch(k.code_va, k.rsrc1, k.rsrc2(), k.rsrc3, k.user_data(g.KARGS, dispatch_id), grid, block, k.wave32)
    q.signal(SimpleNamespace(va=g.SIG), dispatch_id)
    g.run(q.cmds)
    return k


def buf(va):
    return SimpleNamespace(va=va)


def test_saxpy_dispatch_signals_and_interrupts(bare_gpu, hsaco):
    g = bare_gpu
    co = g.load(hsaco["v5"])
    n = 1000
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    g.gpu.mem.write(g.DATA, y)
    g.gpu.mem.write(g.DATA + 0x10000, x)
    launch(g, co, "saxpy", (buf(g.DATA), buf(g.DATA + 0x10000), np.float32(1.75), n), (8, 1, 1), (128, 1, 1))
    out = g.gpu.mem.read(g.DATA, 4 * n)
    want = (np.float64(1.75) * x.astype(np.float64) + y).astype(np.float32)   # one rounding: an FMA
    assert out == want.tobytes()
    assert g.gpu.mem.read_u64(g.SIG) == 1
    assert g.gpu.mem.read_u64(g.SIG + 64) == 42   # the event's mailbox, written before the interrupt
    assert [(e.kind, e.ctx_id) for e in g.events] == [("interrupt", 42)]


def test_code_object_v4_kernel_reads_the_dispatch_packet(bare_gpu, hsaco):
    g = bare_gpu
    co = g.load(hsaco["v4"])
    grid, block = (3, 2, 2), (4, 2, 2)
    k = launch(g, co, "sizes", (buf(g.DATA),), grid, block)
    assert k.dispatch_ptr
    n = np.prod(grid) * np.prod(block)
    rec = np.frombuffer(g.gpu.mem.read(g.DATA, 32 * n), np.uint32).reshape(n, 8)
    assert (rec[:, :6] == [4, 2, 2, 12, 4, 4]).all()


def test_lds_size_is_programmed_from_the_descriptor(bare_gpu, hsaco):
    g = bare_gpu
    co = g.load(hsaco["v5"])
    a = np.arange(512, dtype=np.uint32)
    g.gpu.mem.write(g.DATA, a)
    k = launch(g, co, "reverse", (buf(g.DATA),), (2, 1, 1), (256, 1, 1))
    assert k.lds_bytes == 1024 and (k.rsrc2() >> 15) & 0x1FF == 2
    out = np.frombuffer(g.gpu.mem.read(g.DATA, 2048), np.uint32)
    assert (out == np.concatenate([a[255::-1], a[:255:-1]])).all()


def test_wave64_kernel_clears_cs_w32_en(hsaco, bare_gpu):
    from gputwin.abi.code_object import CodeObject
    co = CodeObject.parse(hsaco["w64"])
    k = LoadedKernel(co.kernels["saxpy"], 0x1000_0000, "gfx1100")
    q = AMDComputeQueue().dispatch(k.code_va, k.rsrc1, k.rsrc2(), k.rsrc3, [], (1, 1, 1), (64, 1, 1), k.wave32)
    i = next(i for i, d in enumerate(q.cmds) if pm4.CP_PACKET3_GET_OPCODE(d) == pm4.PACKET3_DISPATCH_DIRECT
             and pm4.CP_PACKET_GET_TYPE(d) == 3)
    assert not k.wave32 and not (q.cmds[i + 4] >> 15) & 1
    g = bare_gpu
    co = g.load(hsaco["w64"])
    x = np.arange(100, dtype=np.float32)
    g.gpu.mem.write(g.DATA, np.zeros(100, np.float32))
    g.gpu.mem.write(g.DATA + 0x10000, x)
    launch(g, co, "saxpy", (buf(g.DATA), buf(g.DATA + 0x10000), -3.0, 100), (2, 1, 1), (64, 1, 1))
    assert g.gpu.mem.read(g.DATA, 400) == (x * np.float32(-3) + np.float32(0)).tobytes()   # -0 + +0 = +0


def test_wait_reg_mem_parks_until_the_signal_reaches_the_value(bare_gpu):
    g = bare_gpu
    sig, done = SimpleNamespace(va=g.SIG), SimpleNamespace(va=g.SIG + 8)
    g.run(AMDComputeQueue().wait(sig, 5).signal(done, 99).cmds)
    assert g.gpu.mem.read_u64(done.va) == 0
    g.gpu.mem.write_u64(sig.va, 5)
    g.gpu.run()
    assert g.gpu.mem.read_u64(done.va) == 99


def test_code_address_must_be_256_byte_aligned():
    import pytest
    with pytest.raises(ValueError, match="256-byte aligned"):
        AMDComputeQueue().dispatch(0x1000_0040, 0, 0, 0, [], (1, 1, 1), (1, 1, 1), True)


def test_scratch_kernel_uses_the_tmpring_and_scratch_base(bare_gpu, hsaco):
    from gputwin.drivers.amd.loader import scratch_layout
    from gputwin.abi import amd_regs as regs
    g = bare_gpu
    co = g.load(hsaco["v5"])
    k = LoadedKernel(co.kernels["scratch"], g.IMAGE, "gfx1100")
    # 2 CUs x 12 slots over the emulated gfx1100's 6 shader engines (the emulator reads WAVES per engine)
    props = {"simd_count": 4, "simd_per_cu": 2, "array_count": 12, "simd_arrays_per_engine": 2,
             "max_slots_scratch_cu": 12}
    tmpring, size = scratch_layout(k.scratch_per_lane, "gfx1100", props)
    assert k.uses_scratch and regs.COMPUTE_TMPRING_SIZE__WAVESIZE.get(tmpring) * 256 >= 64 * k.scratch_per_lane
    assert regs.COMPUTE_TMPRING_SIZE__WAVES.get(tmpring) == 4 and size == 24 * 256 * \
        regs.COMPUTE_TMPRING_SIZE__WAVESIZE.get(tmpring)
    SCRATCH = 0x4000_0000
    g.gpu.mem.map(SCRATCH, size)
    n, kk = 64, 5
    ka = build_kernargs(k.info, (buf(g.DATA), kk), LaunchInfo((2, 1, 1), (32, 1, 1)), lambda b: b.va)
    g.gpu.mem.write(g.KARGS, bytes(ka))
    q = AMDComputeQueue().dispatch(k.code_va, k.rsrc1, k.rsrc2(), k.rsrc3, k.user_data(g.KARGS, 1), (2, 1, 1),
                                   (32, 1, 1), k.wave32, tmpring, SCRATCH)
    g.run(q.cmds)
    assert not g.events
    gid = np.arange(n, dtype=np.uint32)
    assert (np.frombuffer(g.gpu.mem.read(g.DATA, 4 * n), np.uint32) == ((gid * 7 + kk) & 63) * kk + gid).all()
