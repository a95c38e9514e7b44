"""Start-up guards (docs/startup.md): a fresh process imports only what its path needs.

Each check runs a program in a fresh interpreter and reads which heavy modules it ended up importing
(sys.modules), so a new eager import anywhere under gputwin fails here instead of silently costing every
user ~0.5 s (ml_dtypes) at start-up. bench/bench_startup.py measures the times themselves.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
HSACO = ROOT / "fixtures" / "drivers" / "kernels_gfx1100_v5.hsaco"
NEVER_AT_RUNTIME = ("hypothesis", "pytest", "_pytest")
REPORT = """
import json, sys
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def loaded_after(program: str, **env) -> set[str]:
    """The top-level modules a fresh interpreter has imported after running `program`."""
    out = subprocess.run([sys.executable, "-c", program + REPORT], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, **env), timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize("spec", ["MOCKAMD", "MOCKNV"])
def test_a_first_launch_imports_no_ml_dtypes(spec):
    kernel = (f'dev.load(open("{HSACO}", "rb").read(), "empty")' if spec == "MOCKAMD" else
              f'dev.load(open("fixtures/drivers/nv/kernels_sm90.ptx").read(), "empty")')
    mods = loaded_after(f"""
import gputwin
dev = gputwin.open_device("{spec}")
prg = {kernel}
prg(grid=1, block=32)
dev.synchronize()
""")
    assert "gputwin" in mods
    assert "ml_dtypes" not in mods and not mods & set(NEVER_AT_RUNTIME)


def test_tensor_work_without_bfloat16_imports_no_ml_dtypes_nor_the_llvm_backend(tmp_path):
    # float32, float16 and integer ops, a reduction and a matmul; the second process finds its
    # kernels in the on-disk compile cache the first one filled, so it needs no LLVM either
    program = """
import numpy as np
import gputwin.tensor as gt
x = gt.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
h = x.astype("float16")
i = gt.Tensor(np.arange(12, dtype=np.int32))
assert ((x + 1).numpy() == np.arange(1, 13, dtype=np.float32).reshape(3, 4)).all()
assert (h * 2).numpy().dtype == np.float16 and int((i // 5).sum().numpy()) == 9
assert (x @ x.T).numpy()[0, 0] == 14.0 and float(h.mean().numpy()) == 5.5
"""
    cache = str(tmp_path)
    first = loaded_after(program, GPUTWIN_CACHE_DIR=cache)
    assert "ml_dtypes" not in first and not first & set(NEVER_AT_RUNTIME)
    second = loaded_after(program + "import sys; assert 'llvmlite.binding' not in sys.modules\n",
                          GPUTWIN_CACHE_DIR=cache)
    assert "ml_dtypes" not in second


def test_gputwin_demo_imports_no_ml_dtypes():
    mods = loaded_after("import gputwin.cli, gputwin.tensor.demo")
    assert "ml_dtypes" not in mods and not mods & set(NEVER_AT_RUNTIME)


def test_bfloat16_loads_ml_dtypes_when_first_used():
    mods = loaded_after("""
import sys
import numpy as np
import gputwin.tensor as gt
assert "ml_dtypes" not in sys.modules
t = gt.Tensor(np.array([1.5, -2.25, 3.0], np.float32)).astype("bfloat16")
assert "ml_dtypes" in sys.modules
assert t.dtype == gt.bfloat16 and (t + 1).numpy().astype(np.float32).tolist() == [2.5, -1.25, 4.0]
""")
    assert "ml_dtypes" in mods


DTYPE_ERRORS = """
import gputwin.tensor as gt
from gputwin.compiler import ir
errors = []
for spec in ("float8_e4m3fn", "nonsense"):
    for check in (gt.dtypes.to_dtype, ir.dtype):
        try:
            check(spec)
        except TypeError as e:
            errors.append(f"{type(e).__name__}: {e}")
"""


def test_dtype_errors_read_as_when_ml_dtypes_was_imported_eagerly():
    """A dtype name only ml_dtypes registers is 'unsupported' (numpy knows it), not 'unknown', also in a
    process that has not imported ml_dtypes; this process has (as when gputwin imported it eagerly)."""
    import ml_dtypes  # noqa: F401
    fresh = subprocess.run([sys.executable, "-c", DTYPE_ERRORS + "import json, sys\n"
                            "print(json.dumps(errors + ['ml_dtypes' in sys.modules]))"],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert fresh.returncode == 0, fresh.stderr
    *errors, imported = json.loads(fresh.stdout)
    here = {}
    exec(DTYPE_ERRORS, here)
    assert errors == here["errors"] and len(errors) == 4
    assert errors[0] == ("DTypeError: unsupported dtype float8_e4m3fn; supported: bool, uint8, int32, int64, "
                         "float16, bfloat16, float32")
    assert imported      # resolving the ml_dtypes-only name imported it, as the eager import did


def test_is_bfloat16_is_exact():
    import ml_dtypes

    from gputwin import deferred
    assert deferred.is_bfloat16(np.dtype(ml_dtypes.bfloat16))
    for other in (np.float16, np.float32, np.uint16, ml_dtypes.float8_e5m2):
        assert not deferred.is_bfloat16(np.dtype(other))
