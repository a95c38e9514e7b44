"""The f32 add/sub/mul fast path (valu/fast_float.py) against the table path, bit for bit: NaN payloads,
signalling NaNs, infinities, denormals and signed zeros, EXEC-masked lanes, VOP2/VOP3/VOPD forms, and the
fall-back to the table path under a MODE that flushes denormals or rounds otherwise."""
import numpy as np
import pytest

from gputwin.emu.amd import valu
from gputwin.emu.amd.isa.inst import Inst
from gputwin.emu.amd.valu import fast_float, prepare, vopd

from .helpers import MODE, C, S, V, fill, group, inst

SPECIAL = [0x7FC00000, 0xFFC12345, 0x7F800001, 0xFF800000, 0x7F800000, 0x00000001, 0x807FFFFF, 0x00000000,
           0x80000000, 0x3F800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000]


def _bits(rng, shape):
    v = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    pick = rng.integers(0, 3, shape) == 0          # a third of the lanes: special values
    v[pick] = rng.choice(np.array(SPECIAL, np.uint32), int(pick.sum()))
    return v


def _table(g, ins):
    if ins.encoding == "VOPD":
        return vopd.execute(g, ins, valu.OPS.get, valu._fetch, valu._run_op)
    op = valu.OPS[ins.op]
    return valu._run_op(g, ins, op, *valu._fetch(g, ins, op))


def _pair(rng, ins, mode=MODE, wave64=False):
    """(fast result registers, table result registers) for the same starting state."""
    out = []
    ex = rng.integers(0, 4, (3, 64 if wave64 else 32)) > 0
    a, b, c = (_bits(rng, ex.shape) for _ in range(3))
    for run in (prepare(ins), lambda g: _table(g, ins)):
        g = group(3, wave64, mode=mode)
        for reg, val in ((1, a), (2, b), (3, c), (4, c ^ np.uint32(1))):
            fill(g, reg, val)
        g.s[7] = np.array([0x7FA00000, 0x00000003, 0xBF800000], np.uint32)
        g.set_exec(ex.copy())
        run(g)
        out.append([np.array(g.vgpr(r)) for r in (3, 4)])
    return out


@pytest.mark.parametrize("op", ["v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32"])
@pytest.mark.parametrize("encoding", ["VOP2", "VOP3"])
@pytest.mark.parametrize("src1", ["vgpr", "sgpr", "const"])
def test_fast_f32_ops_equal_the_table_path(op, encoding, src1, rng):
    s1 = {"vgpr": V(2), "sgpr": S(7), "const": C(243)}[src1]          # 243: inline constant -1.0
    ins = inst(op, encoding, vdst=V(3), src0=V(1), src1=s1)
    assert fast_float.build(ins, None) is not None
    fast, table = _pair(rng, ins)
    for f, t in zip(fast, table):
        assert np.array_equal(f, t)


def test_fast_vopd_pair_reads_both_halves_before_writing(rng):
    # X writes v3, Y reads v3: Y must see the old value, as in the table path
    ins = Inst(op="v_dual", encoding="VOPD", opcode=0, size=8,
               vopd=(inst("v_dual_mul_f32", "VOPD", vdst=V(3), src0=V(1), src1=V(2)),
                     inst("v_dual_add_f32", "VOPD", vdst=V(4), src0=V(3), src1=V(1))))
    assert fast_float.build(ins, None) is not None
    fast, table = _pair(rng, ins, wave64=False)
    for f, t in zip(fast, table):
        assert np.array_equal(f, t)


@pytest.mark.parametrize("mode", [0x300, MODE | 0x1])   # denormals flushed / round toward +inf
def test_other_modes_fall_back_to_the_table_path(mode, rng):
    ins = inst("v_mul_f32", "VOP2", vdst=V(3), src0=V(1), src1=V(2))
    fast, table = _pair(rng, ins, mode=mode)
    for f, t in zip(fast, table):
        assert np.array_equal(f, t)


def test_modifiers_take_the_table_path():
    for kw in ({"neg": (True, False, False)}, {"abs": (False, True, False)}, {"clamp": True}, {"omod": 1}):
        assert fast_float.build(inst("v_add_f32", "VOP3", vdst=V(3), src0=V(1), src1=V(2), **kw), None) is None
