"""The campaign runner: counts by outcome, restarts the worker after a crash or a hang, writes reproducers
that replay; and the exception classification it relies on."""
import errno
import json

import pytest

from gputwin.errors import GpuHang
from gputwin.fuzz import classify
from gputwin.fuzz.runner import case_rng, replay, run_campaign
from gputwin.fuzz.surface import surfaces


CASES, SEED = 7, 24


@pytest.fixture(scope="module")
def canary(tmp_path_factory):
    planned = [surfaces()["canary"].generate(case_rng("canary", SEED, i))["do"] for i in range(CASES)]
    assert {"ok", "gputwin", "leak", "crash", "hang"} <= set(planned)   # the seed covers every outcome
    out = tmp_path_factory.mktemp("canary")
    return planned, run_campaign("canary", seed=SEED, cases=CASES, out=out, case_timeout=1.0, watchdog_s=0.1)


def test_every_canary_outcome_is_counted_and_crashes_and_hangs_restart_the_worker(canary):
    planned, r = canary
    assert r.cases == CASES
    assert r.crashes == planned.count("crash") and r.timeouts == planned.count("hang")
    assert r.leaks == planned.count("leak")
    assert r.counts["ok"] == planned.count("ok") and r.counts["MemoryFault"] == planned.count("gputwin")
    assert r.counts["leak:IndexError"] == planned.count("leak")
    kinds = sorted(json.loads(open(p).read())["kind"] for p in r.reproducers)
    assert kinds == ["crash", "leak", "timeout"]      # one file per distinct signature
    crash = json.loads(open(next(p for p in r.reproducers if "-crash-" in p)).read())
    assert "rc -11" in crash["detail"]["log"] and "Segmentation fault" in crash["detail"]["log"]
    assert crash["case"] == {"do": "crash"} and crash["replay"].startswith("gputwin fuzz --replay ")


def test_a_leak_reproducer_replays_in_process(canary):
    _, r = canary
    leak = next(p for p in r.reproducers if "-leak-" in p)
    rec = replay(leak)
    assert rec.counts["leak:IndexError"] == 1 and rec.findings[0]["where"].startswith("gputwin/fuzz/surfaces/")


def test_a_campaign_needs_a_bound():
    with pytest.raises(ValueError, match="needs a bound"):
        run_campaign("canary")


def _raise(exc):
    raise exc


def _caught(fn):
    try:
        fn()
    except BaseException as e:   # noqa: BLE001
        return e
    raise AssertionError("did not raise")


def test_classification():
    assert classify.label(_caught(lambda: _raise(GpuHang("x")))) == (True, "GpuHang")
    assert classify.label(_caught(lambda: [][1])) == (False, "IndexError")
    # an OSError the mock raised carries its errno; one raised outside gputwin is not the mock's
    from gputwin.mock.kernel import MockKernel
    enoent = _caught(lambda: MockKernel().open("/nope"))
    assert classify.label(enoent) == (True, "OSError:ENOENT")
    assert classify.label(_caught(lambda: _raise(OSError(errno.EINVAL, "x"))))[0] is False
    # a ValueError gputwin raises on purpose counts only where the surface validates arguments
    from gputwin.emu.memory import AddressSpace
    bad_map = _caught(lambda: AddressSpace().map(0, 0))
    assert classify.label(bad_map) == (False, "ValueError")
    assert classify.label(bad_map, validation=True) == (True, "ValueError")
    assert classify.label(_caught(lambda: int("x")), validation=True) == (False, "ValueError")
    # a host buffer that is not bytes-like is the API's own TypeError (issue 11 defect 10), not memoryview's
    from gputwin.drivers.hcq import _bytes_view
    assert classify.label(_caught(lambda: _bytes_view(None, "copyout")), validation=True) == (True, "TypeError")
