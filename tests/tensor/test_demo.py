"""`gputwin demo` (gputwin/tensor/demo.py and the CLI sub-command) on the device under test."""
import re

from gputwin.cli import main
from gputwin.tensor import demo


def test_demo_matches_numpy_and_reuses_programs(tdev):
    first = demo.run(tdev, seed=1)
    built = tdev.stats.programs_built
    second = demo.run(tdev, seed=1)
    assert first.ok and second.ok, (first.errors, second.errors)
    assert tdev.stats.programs_built == built  # the second run compiles nothing


def test_demo_command_prints_timings_and_succeeds(tdev, capsys):
    assert main(["demo", "--dev", tdev.spec]) == 0
    out = capsys.readouterr().out
    assert "warm run" in out and "M_matmul_32x64x128" in out and "attention: max error" in out
    # its steps are announced as they start, before the results
    steps = [out.index(s) for s in ("step 1/3", "step 2/3", "step 3/3", "cold run (compiles):")]
    assert steps == sorted(steps)
    if tdev.spec.upper().startswith("MOCK"):  # emulated devices also report what the emulator executed
        # AMD counts waves and wave-instructions, NV warps and warp-instructions: nonzero either way
        m = re.search(r"both runs: (\d+) (?:dispatches|launches), (\d+) (?:waves|warps), (\d+) (?:wave|warp)-instr", out)
        assert m and all(int(g) > 0 for g in m.groups()), out
