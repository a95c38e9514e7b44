"""gputwin.abi.kernargs: explicit arguments typed by metadata, hidden arguments filled as ROCm does."""
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gputwin.abi.code_object import CodeObject, KernelArg
from gputwin.abi.kernargs import LaunchInfo, build_kernargs

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "drivers"
V5 = CodeObject.parse((FIX / "kernels_gfx1100_v5.hsaco").read_bytes())
V4 = CodeObject.parse((FIX / "kernels_gfx1100_v4.hsaco").read_bytes())


class Buf:
    def __init__(self, va):
        self.va = va


def pointer_of(v):
    if not isinstance(v, Buf):
        raise TypeError(f"wants a buffer, got {type(v).__name__}")
    return v.va


def test_saxpy_explicit_and_hidden_v5():
    k = V5.kernels["saxpy"]
    ka = build_kernargs(k, (Buf(0x1000), Buf(0x2000), 2.5, 77), LaunchInfo(grid=(5, 3, 2), block=(64, 2, 1)),
                        pointer_of)
    assert len(ka) == k.kernarg_size
    assert struct.unpack_from("<QQfi", ka, 0) == (0x1000, 0x2000, 2.5, 77)
    base = 24   # hidden arguments follow the explicit ones, at the offsets AMDGPUUsage gives
    assert struct.unpack_from("<3I", ka, base) == (5, 3, 2)
    assert struct.unpack_from("<6H", ka, base + 12) == (64, 2, 1, 0, 0, 0)
    assert struct.unpack_from("<3Q", ka, base + 40) == (0, 0, 0)
    assert struct.unpack_from("<H", ka, base + 64) == (3,)
    assert not any(ka[base + 66:])   # no other hidden argument is filled in


def test_grid_dims_and_dynamic_lds_follow_the_launch():
    k = V5.kernels["saxpy"]
    extra = KernelArg(24 + 72, 4, "hidden_dynamic_lds_size")
    k2 = replace(k, args=k.args + [extra])
    ka = build_kernargs(k2, (Buf(1), Buf(2), 1.0, 1), LaunchInfo((1, 1, 1), (1, 1, 1), dims=1, dynamic_lds=4096),
                        pointer_of)
    assert struct.unpack_from("<H", ka, 24 + 64) == (1,) and struct.unpack_from("<I", ka, 24 + 72) == (4096,)


def test_v4_hidden_arguments_are_global_offsets_only():
    k = V4.kernels["hidden"]
    kinds = [a.value_kind for a in k.args if a.hidden]
    assert kinds[:3] == ["hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z"]
    ka = build_kernargs(k, (Buf(8),), LaunchInfo((2, 2, 2), (8, 8, 1)), pointer_of)
    assert struct.unpack_from("<Q", ka, 0) == (8,) and not any(ka[8:]) and len(ka) == 8 + 56


def test_every_scalar_type_is_packed_by_its_type_name():
    k = V5.kernels["scalars"]
    vals = (-3, 250, -30000, 65000, -(2 ** 31), 2 ** 32 - 1, -(2 ** 63), 2 ** 64 - 1, np.float32(1.5), 0.1)
    ka = build_kernargs(k, (Buf(64),) + vals, LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)
    offs = [a.offset for a in k.explicit_args[1:]]
    got = [struct.unpack_from(f, ka, o)[0] for f, o in zip("bBhHiIqQfd", offs)]
    assert got[:8] == list(vals[:8]) and got[8] == 1.5 and got[9] == 0.1


@pytest.mark.parametrize("index,value,match", [
    (1, 128, "out of range"),         # char
    (2, -1, "out of range"),          # uchar
    (5, 1.5, "got float"),            # int
    (9, "1.0", "cannot take str"),    # float
    (3, True, "cannot take bool"),
])
def test_bad_scalar_is_type_error_naming_the_signature(index, value, match):
    k = V5.kernels["scalars"]
    args = [Buf(64), 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0]
    args[index] = value
    with pytest.raises(TypeError, match=match) as e:
        build_kernargs(k, tuple(args), LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)
    assert "scalars(ulong* out, char c, uchar uc" in str(e.value)


def test_wrong_count_and_non_buffer_pointer_are_type_errors():
    k = V5.kernels["saxpy"]
    with pytest.raises(TypeError, match=r"takes 4 arguments, got 3: saxpy\(float\* y, float\* x, float a, int n\)"):
        build_kernargs(k, (Buf(1), Buf(2), 1.0), LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)
    with pytest.raises(TypeError, match="wants a buffer, got int"):
        build_kernargs(k, (Buf(1), 0x1234, 1.0, 3), LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)


def test_int_is_accepted_for_a_float_parameter():
    ka = build_kernargs(V5.kernels["saxpy"], (Buf(1), Buf(2), 3, 4), LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)
    assert struct.unpack_from("<f", ka, 16) == (3.0,)


def test_unknown_hidden_kind_fails_closed():
    k = replace(V5.kernels["empty"], args=[KernelArg(0, 8, "hidden_something_new")],
                metadata={".kernarg_segment_size": 8})
    with pytest.raises(NotImplementedError, match="hidden_something_new"):
        build_kernargs(k, (), LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)


def test_local_arguments_are_laid_out_after_static_lds():
    from gputwin.abi.kernargs import LocalMemory, lds_layout
    k = V5.kernels["lrev"]
    static = k.group_segment_size
    args = (Buf(0x1000), LocalMemory(6), LocalMemory(10))
    offsets, dynamic = lds_layout(k, args, LaunchInfo((1, 1, 1), (1, 1, 1), dynamic_lds=32))
    assert offsets == {1: static, 2: static + 6}          # ushort pointee: 2-byte alignment
    assert dynamic == 6 + 10 + 32
    ka = build_kernargs(k, args, LaunchInfo((1, 1, 1), (1, 1, 1)), pointer_of)
    assert struct.unpack_from("<QII", ka, 0) == (0x1000, static, static + 6)


def test_hip_dynamic_shared_memory_is_a_hidden_argument():
    hip = CodeObject.parse((FIX / "kernels_hip_gfx1100.hsaco").read_bytes()).kernels["dyn"]
    arg = next(a for a in hip.args if a.value_kind == "hidden_dynamic_lds_size")
    ka = build_kernargs(hip, (Buf(0x40),), LaunchInfo((2, 1, 1), (64, 1, 1), dynamic_lds=256), pointer_of)
    assert struct.unpack_from("<I", ka, arg.offset) == (256,)
