"""Start-up latency in a fresh process: what a user waits for before the first result.

Each figure is the best of REPEATS fresh processes (subprocess), wall time from starting the interpreter
to the end of the program:
- `first_launch_s_<dev>`: the raw device API, `import gputwin; open the device; load the empty kernel;
  launch it; synchronize` (MOCKAMD and MOCKNV, or the devices in $DEV).
- `first_tensor_s_<dev>`: the Tensor path, `from gputwin.tensor import Tensor; (Tensor(x) + 1).numpy()`
  with DEV=<dev>; the kernel comes from the on-disk compile cache (a temporary $GPUTWIN_CACHE_DIR,
  filled by the unmeasured first run), as in any session after the first.
- `demo_import_s`: what `gputwin demo` imports before it starts working (gputwin.cli and
  gputwin.tensor.demo).
For scale: the bare interpreter's start-up (`python_startup_s`), numpy's import (`numpy_import_s`, both
included in every other figure) and what importing ml_dtypes on top of numpy would add
(`ml_dtypes_import_s`: none of the paths above pays it, bfloat16 work does).
Figures run with bytecode caches, as an installed package has them (written to a temporary
PYTHONPYCACHEPREFIX by the unmeasured first run); `first_launch_nopyc_s_<dev>` without them, as under
PYTHONDONTWRITEBYTECODE=1 (every module compiled from source in every process).
Prints one figure per line: `first_launch_s_mockamd 0.35`, ...
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 5
LAUNCH = """
import gputwin
dev = gputwin.open_device({spec!r})
if str(dev.arch).startswith("sm_"):
    prg = dev.load(open({ptx!r}.format(dev.arch.replace("_", ""))).read(), "empty")
else:
    prg = dev.load(open({hsaco!r}, "rb").read(), "empty")
prg(grid=1, block=32)
dev.synchronize()
"""
TENSOR = """
import numpy as np
from gputwin.tensor import Tensor
(Tensor(np.arange(64, dtype=np.float32)) + 1).numpy()
"""
DEMO_IMPORTS = "import gputwin.cli, gputwin.tensor.demo"


def best_of(code: str, env: dict) -> float:
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)   # writes the caches, if any
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    fixtures = ROOT / "fixtures" / "drivers"
    with tempfile.TemporaryDirectory() as cache:
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached.update(PYTHONPYCACHEPREFIX=cache, GPUTWIN_CACHE_DIR=cache + "/kernels")
        uncached = dict(cached, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=cache + "/none")
        print(f"python_startup_s {best_of('pass', cached):.3f}", flush=True)
        numpy_s = best_of("import numpy", cached)
        print(f"numpy_import_s {numpy_s:.3f}", flush=True)      # what a launch cannot avoid
        print(f"ml_dtypes_import_s {best_of('import numpy, ml_dtypes', cached) - numpy_s:.3f}", flush=True)
        for spec in os.environ.get("DEV", "MOCKAMD,MOCKNV").split(","):
            code = LAUNCH.format(spec=spec, ptx=str(fixtures / "nv" / "kernels_{}.ptx"),
                                 hsaco=str(fixtures / "kernels_gfx1100_v5.hsaco"))
            tag = spec.lower().replace(":", "_")
            print(f"first_launch_s_{tag} {best_of(code, cached):.3f}", flush=True)
            print(f"first_launch_nopyc_s_{tag} {best_of(code, uncached):.3f}", flush=True)
            print(f"first_tensor_s_{tag} {best_of(TENSOR, dict(cached, DEV=spec)):.3f}", flush=True)
        print(f"demo_import_s {best_of(DEMO_IMPORTS, cached):.3f}", flush=True)


if __name__ == "__main__":
    main()
