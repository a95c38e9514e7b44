"""Public API misuse through open_device("MOCKAMD"): each bad argument raises a gputwin or Python error that
names it, before any state changes, and the device keeps working afterwards."""
import numpy as np
import pytest

import gputwin
from gputwin.abi.code_object import CodeObjectError
from tests.abi.patch_code_object import kernel_metadata, with_metadata


@pytest.fixture
def dev():
    d = gputwin.open_device("MOCKAMD")
    yield d
    d.close()


def _still_works(dev, hsaco):
    """A copy round trip and a launch after the refusal: no timeline value was left unsignalled."""
    y = dev.alloc(64)
    dev.copyin(y, np.arange(16, dtype=np.float32))
    dev.load(hsaco["v5"], "saxpy")(y, y, 1.0, 16, grid=1, block=32)
    out = np.empty(16, np.float32)
    dev.copyout(out, y)
    assert out.tolist() == [2.0 * i for i in range(16)]


@pytest.mark.parametrize("call,exc,match", [
    (lambda d, b: d.copyin(b, b"12345678", 2.0), TypeError, "offset must be an integer byte count, got 2.0"),
    (lambda d, b: d.copyin(b, b"12345678", True), TypeError, "offset must be an integer byte count, got True"),
    (lambda d, b: d.copyout(bytearray(8), b, "0"), TypeError, "offset must be an integer byte count, got '0'"),
    (lambda d, b: d.copyin(b, b"12345678", -1), ValueError, "at offset -1 do not fit"),
    (lambda d, b: d.copyin(b, "text", 0), TypeError, "copyin needs a C-contiguous bytes-like object or ndarray, got str"),
    (lambda d, b: d.copyout(None, b), TypeError, "copyout needs a C-contiguous bytes-like object or ndarray, got NoneType"),
    (lambda d, b: d.copyout(bytes(8), b), TypeError, "writable destination"),
    (lambda d, b: d.alloc(2.5), ValueError, "positive byte count, got 2.5"),
    (lambda d, b: d.alloc(True), ValueError, "positive byte count, got True"),
    (lambda d, b: d.load(1 << 40, "saxpy"), TypeError, "bytes of a code object"),
    (lambda d, b: d.free(b"not a buffer"), TypeError, "is not a buffer"),
])
def test_bad_arguments_are_refused_before_anything_is_queued(dev, hsaco, call, exc, match):
    buf = dev.alloc(64)
    before = dev.timeline_value
    with pytest.raises(exc, match=match):
        call(dev, buf)
    assert dev.timeline_value == before
    _still_works(dev, hsaco)


def test_bad_launch_arguments_queue_nothing(dev, hsaco):
    prg = dev.load(hsaco["v5"], "saxpy")
    y = dev.alloc(64)
    before = dev.timeline_value
    for kw, exc, match in [(dict(grid=2.0), ValueError, "grid"), (dict(block=(257,)), ValueError, "more than its 256"),
                           (dict(lds=-1), ValueError, "lds"), (dict(grid=(1 << 31,), block=2), ValueError, "2\\^32")]:
        with pytest.raises(exc, match=match):
            prg(y, y, 1.0, 16, **kw)
    with pytest.raises(TypeError, match="saxpy"):
        prg(y, 1.0, 16)
    assert dev.timeline_value == before
    _still_works(dev, hsaco)


def test_a_wrong_kernel_name_lists_the_kernels_and_is_a_key_error(dev, hsaco):
    with pytest.raises(gputwin.KernelNotFound, match="no kernel 'saxpi' in the code object; it has empty, fault") as e:
        dev.load(hsaco["v5"], "saxpi")
    assert isinstance(e.value, KeyError) and "saxpy" in e.value.available and e.value.name == "saxpi"


@pytest.mark.parametrize("nbytes", [25 << 30, 1 << 50, 1 << 64])
def test_oversized_allocations_are_out_of_memory_naming_the_size(dev, hsaco, nbytes):
    with pytest.raises(gputwin.OutOfMemory, match=f"cannot allocate {nbytes} bytes of vram") as e:
        dev.alloc(nbytes)
    assert isinstance(e.value, MemoryError) and e.value.size == nbytes and e.value.heap == "vram"
    _still_works(dev, hsaco)


@pytest.mark.parametrize("edit,match", [
    (lambda k: k.update({".kernarg_segment_size": 2 ** 31}), "exceeds"),
    (lambda k: k[".args"][1].update({".offset": -4}), "argument 1"),
    (lambda k: k[".args"][0].update({".size": -4}), "argument 0"),
    (lambda k: k[".args"][0].update({".value_kind": "image"}), "argument kinds 'image' are not supported"),
    (lambda k: k[".args"][-1].update({".value_kind": "hidden_bogus"}), "'hidden_bogus' are not supported"),
])
def test_bad_kernel_metadata_fails_at_load(dev, hsaco, edit, match):
    blob = with_metadata(hsaco["v5"], lambda md: edit(kernel_metadata(md, "saxpy")))
    with pytest.raises(CodeObjectError, match=f"kernel saxpy: .*{match}"):
        dev.load(blob, "saxpy")
    _still_works(dev, hsaco)


def test_a_kernel_entry_off_the_256_byte_grid_fails_at_load(dev, hsaco):
    """COMPUTE_PGM_LO holds the entry address >> 8: an entry 4 bytes past the grid cannot be launched."""
    from gputwin.abi.code_object import CodeObject
    blob = bytearray(hsaco["v5"])
    k = CodeObject.parse(bytes(blob)).kernels["saxpy"]
    desc = bytes(CodeObject.parse(bytes(blob)).read_vaddr(k.kd_offset, 64, "descriptor"))
    at = blob.find(desc)
    assert at >= 0 and blob.find(desc, at + 1) < 0          # the descriptor's bytes, found once
    entry = int.from_bytes(blob[at + 16:at + 24], "little", signed=True) + 4   # kernel_code_entry_byte_offset
    blob[at + 16:at + 24] = entry.to_bytes(8, "little", signed=True)
    with pytest.raises(CodeObjectError, match="kernel saxpy: its entry at 0x[0-9a-f]+ .* is not 256-byte aligned"):
        dev.load(bytes(blob), "saxpy")
    _still_works(dev, hsaco)


def test_gfx1201_grid_limits_are_checked_at_launch(hsaco):
    from pathlib import Path
    blob = (Path(__file__).resolve().parents[3] / "fixtures" / "drivers" / "kernels_gfx1201_v5.hsaco").read_bytes()
    dev = gputwin.open_device("MOCKAMD:gfx1201")
    try:
        prg = dev.load(blob, "empty")
        before = dev.timeline_value
        for grid in [(1, 65537, 1), (1, 1, 65537)]:
            with pytest.raises(ValueError, match="workgroup ids Y and Z are 16 bits"):
                prg(grid=grid, block=1)
        assert dev.timeline_value == before
        prg(grid=(1, 65536, 1), block=1, wait=True)   # the largest grid that fits runs
    finally:
        dev.close()


def test_a_queue_that_fails_to_build_gives_its_timeline_value_back(dev, hsaco, monkeypatch):
    from gputwin.drivers.amd.pm4 import AMDComputeQueue
    prg = dev.load(hsaco["v5"], "saxpy")
    y = dev.alloc(64)
    before = dev.timeline_value

    def broken(self, *args, **kw):
        raise RuntimeError("packet builder failed")
    with monkeypatch.context() as m:
        m.setattr(AMDComputeQueue, "exec", broken)
        with pytest.raises(RuntimeError, match="packet builder failed"):
            prg(y, y, 1.0, 16, grid=1, block=32)
    assert dev.timeline_value == before
    _still_works(dev, hsaco)
