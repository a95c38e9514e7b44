"""Building kernels: what the IR accepts and the clear errors it raises before anything compiles."""
import numpy as np
import pytest

from gputwin.compiler import ir


def builder(**kw):
    return ir.KernelBuilder("k", **kw)


def test_numpy_dtypes_and_names_map_to_ir_dtypes():
    assert ir.dtype(np.float32) is ir.float32
    assert ir.dtype("bfloat16") is ir.bfloat16
    assert ir.dtype(np.dtype(np.bool_)) is ir.bool_
    with pytest.raises(TypeError, match="float64"):
        ir.dtype(np.float64)


def test_binary_ops_need_equal_dtypes():
    k = builder()
    a, b = k.buffer("a", ir.float32), k.buffer("b", ir.int32)
    with pytest.raises(ir.IRError, match="float32 and int32"):
        a[0] + b[0]


def test_python_numbers_adopt_the_operand_dtype():
    k = builder()
    a = k.buffer("a", ir.float16)
    v = a[0] * 2 + 0.5
    assert v.dtype is ir.float16
    with pytest.raises(ir.IRError, match="does not fit"):
        k.buffer("b", ir.uint8)[0] + 300


def test_integer_true_division_and_float_floordiv_are_refused():
    k = builder()
    i, f = k.buffer("i", ir.int32), k.buffer("f", ir.float32)
    with pytest.raises(ir.IRError, match="floor division"):
        i[0] / i[1]
    with pytest.raises(ir.IRError, match="integers"):
        f[0] // f[1]


def test_value_loaded_inside_if_cannot_escape():
    k = builder()
    a, out = k.buffer("a", ir.float32), k.buffer("out", ir.float32)
    with k.if_(k.global_id(0) < 4):
        x = a[0]
    with pytest.raises(ir.IRError, match="does not contain this use"):
        out[0] = x


def test_values_from_before_a_barrier_cannot_be_used_after_it():
    k = builder()
    a, out = k.buffer("a", ir.float32), k.buffer("out", ir.float32)
    x = a[k.local_id(0)]
    gid = k.global_id(0)                # pure index math stays usable
    k.barrier()
    out[gid] = 1.0
    with pytest.raises(ir.IRError, match="was made inside a block .* that does not contain this use"):
        out[gid] = x


def test_barrier_only_at_top_level():
    k = builder()
    with k.if_(k.local_id(0) < 3):
        with pytest.raises(ir.IRError, match="top level"):
            k.barrier()


def test_uniform_range_rules():
    with ir.KernelBuilder("ur") as k:
        out = k.buffer("out", ir.int32)
        total = k.var(ir.int32, 0)                      # top level: visible inside the loop and after it
        with k.uniform_range(3) as r:
            with k.if_(r > 0):
                with pytest.raises(ir.IRError, match="top level"):
                    k.barrier()
                with pytest.raises(ir.IRError, match="top level"):
                    with k.uniform_range(2):
                        pass
            inner = k.var(ir.int32, 1)
            k.barrier()
            total.set(total.get() + r)
            with pytest.raises(ir.IRError, match="not visible"):
                inner.get()                             # declared before the barrier, inside the loop
        with pytest.raises(ir.IRError, match="does not contain this use"):
            out[0] = r                                  # the loop variable ends with the loop
        out[0] = total.get()
        k.build()
    with ir.KernelBuilder("ur2") as k:
        with pytest.raises(ir.IRError, match="non-negative Python int"):
            with k.uniform_range(k.scalar("n", ir.int32)):
                pass
    with ir.KernelBuilder("ur3") as k:
        with k.uniform_range(2):
            with pytest.raises(ir.IRError, match="open if_/range/uniform_range"):
                k.build()


def test_bad_local_sizes_and_names_are_rejected():
    with pytest.raises(ir.IRError, match="local_size"):
        ir.KernelBuilder("k", local_size=(2048, 1, 1))
    with pytest.raises(ir.IRError, match="identifier"):
        ir.KernelBuilder("not a name")
    k = builder()
    k.buffer("a", ir.float32)
    with pytest.raises(ir.IRError, match="used twice"):
        k.scalar("a", ir.int32)


def test_store_needs_the_buffer_dtype_and_an_integer_index():
    k = builder()
    out = k.buffer("out", ir.float32)
    with pytest.raises(ir.IRError, match="cast first"):
        out[0] = ir.const(1, ir.int32)
    with pytest.raises(ir.IRError, match="int32 or int64"):
        out[ir.const(1.0, ir.float32)] = 1.0


def test_where_needs_a_bool_condition_and_if_needs_bool():
    k = builder()
    a = k.buffer("a", ir.float32)
    with pytest.raises(ir.IRError, match="bool"):
        ir.where(a[0], a[1], a[2])
    with pytest.raises(ir.IRError, match="bool"):
        with k.if_(a[0]):
            pass


def test_values_have_no_python_truth_value():
    k = builder()
    with pytest.raises(ir.IRError, match="truth"):
        bool(k.global_id(0) < 3)


def test_float_constants_keep_exact_bits():
    assert ir.const(float("nan"), ir.float32).arg == 0x7FC00000
    assert ir.const(-0.0, ir.float16).arg == 0x8000
    assert ir.const(1.0, ir.bfloat16).arg == 0x3F80
