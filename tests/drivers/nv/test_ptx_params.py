"""The driver's reading of PTX entry signatures (parameter offsets per the PTX ABI, typing, static shared)."""
import numpy as np
import pytest

from gputwin.drivers.nv import ptx_params

PTX = """
.version 8.0
.target sm_90
.address_size 64
.shared .align 8 .b8 buf[100];
.shared .align 4 .f32 tile[4][8];
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .b8 other[64];
.visible .entry k(
    .param .u8 a,
    .param .align 8 .b8 s[12],
    .param .f16 h,
    .param .u64 p,
    .param .s32 n
)
{ mov.u64 %rd1, buf; mov.u64 %rd2, tile; { ret; } }
.entry plain()
{ mov.u64 %rd1, other; ret; }
"""


class Dev:
    def _pointer_of(self, value):
        return value.va


class Buf:
    va = 0x1122_3344_5566


def test_parameter_offsets_follow_alignment():
    k = ptx_params.kernels(PTX)["k"]
    assert [(p.name, p.offset, p.size) for p in k.params] == [("a", 0, 1), ("s", 8, 12), ("h", 20, 2), ("p", 24, 8),
                                                              ("n", 32, 4)]
    assert k.params_size == 36
    assert k.static_shared == 100 + 4 * 8 * 4  # buf, then tile at 100 (already 4-aligned); .extern not counted
    plain = ptx_params.kernels(PTX)["plain"]
    assert plain.params == () and plain.static_shared == 64    # only the variables a kernel names


def test_pack_lays_values_out_as_the_gpu_reads_them():
    k = ptx_params.kernels(PTX)["k"]
    raw = k.pack((-1, bytes(range(12)), 1.5, Buf(), -7), Dev())
    assert raw[0] == 0xFF and raw[8:20] == bytes(range(12))
    assert np.frombuffer(raw[20:22], np.float16)[0] == 1.5
    assert int.from_bytes(raw[24:32], "little") == Buf.va
    assert int.from_bytes(raw[32:36], "little", signed=True) == -7


@pytest.mark.parametrize("args,msg", [
    ((0, b"x", 1.0, Buf(), 1), r"s: wants exactly 12 bytes"),
    ((256, bytes(12), 1.0, Buf(), 1), r"a: 256 does not fit \.u8"),
    ((0, bytes(12), 1.0, Buf(), 1 << 31), r"n: 2147483648 does not fit \.s32"),
    ((0, bytes(12), 1.0, 2.5, 1), r"p: wants an integer"),
    ((True, bytes(12), 1.0, Buf(), 1), r"a: wants an integer"),
])
def test_pack_refuses_values_naming_the_signature(args, msg):
    k = ptx_params.kernels(PTX)["k"]
    with pytest.raises(TypeError, match=r"k\(\.u8 a, \.b8 s\[12\], \.f16 h, \.u64 p, \.s32 n\): " + msg):
        k.pack(args, Dev())


def test_llvm_ptr_parameters_keep_their_natural_alignment():
    # LLVM's NVPTX back end writes `.param .u64 .ptr .global .align 1 name`: .align there is the pointee's
    k = ptx_params.kernels(".visible .entry e(\n.param .u32 n,\n.param .u64 .ptr .global .align 1 p,\n"
                           ".param .u64 .ptr .align 4 q\n)\n{ ret; }")["e"]
    assert [(p.name, p.ptx_type, p.offset, p.align) for p in k.params] == [("n", "u32", 0, 4), ("p", "u64", 8, 8),
                                                                           ("q", "u64", 16, 8)]
    assert k.params_size == 24
