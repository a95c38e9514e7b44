"""Seeded, bounded fuzz campaigns: cases go to a worker subprocess, outcomes are counted, leaks, crashes and
timeouts become reproducer files.

Case i of a campaign with seed K on surface S is generated from random.Random(f"{S}:{K}:{i}"), so a
campaign is repeatable. The worker runs with GPUTWIN_WATCHDOG_S (default 2 s here) so runaway GPU work
ends as GpuHang; a case that outlives `case_timeout` past that is a timeout: the worker is killed and
restarted, as it is after a crash (a worker that dies: segfault, abort, out of memory). Reproducers are
written once per distinct signature (surface, kind, label, innermost frame) to keep a long run's folder
readable; the counts say how often each happened.
"""
from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gputwin.fuzz.surface import Recorder, surfaces

WATCHDOG_S = 2.0
CASE_TIMEOUT_S = 30.0      # past the watchdog: the worker is stuck where no watchdog looks


@dataclass
class Result:
    surface: str
    seed: int
    cases: int = 0
    seconds: float = 0.0
    counts: Counter = field(default_factory=Counter)   # outcome label -> steps
    leaks: int = 0            # cases with at least one non-gputwin exception
    crashes: int = 0
    timeouts: int = 0
    reproducers: list = field(default_factory=list)    # paths written
    signatures: Counter = field(default_factory=Counter)

    @property
    def clean(self) -> bool:
        return not (self.leaks or self.crashes or self.timeouts)

    def summary(self) -> str:
        top = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return (f"{self.surface}: {self.cases} cases in {self.seconds:.1f} s, seed {self.seed}: "
                f"{self.leaks} leaking, {self.crashes} crashes, {self.timeouts} timeouts\n  outcomes: {top}")


class Worker:
    """One worker subprocess; `run` returns its reply, or ("crash", detail) / ("timeout", detail)."""

    def __init__(self, watchdog_s: float = WATCHDOG_S):
        env = dict(os.environ, GPUTWIN_WATCHDOG_S=str(watchdog_s), PYTHONFAULTHANDLER="1")
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "gputwin.fuzz.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        ready = self._read(120.0)
        if not isinstance(ready, dict) or "ready" not in ready:
            raise RuntimeError(f"fuzz worker did not start: {ready}")

    def _read(self, timeout: float):
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return ("timeout", f"no reply within {timeout:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            return ("crash", f"worker exited with rc {rc}\n{self._stderr_tail()}")
        return json.loads(line)

    def _stderr_tail(self, n: int = 6000) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - n))
        return self.stderr.read().decode(errors="replace")

    def run(self, surface: str, case: dict, timeout: float):
        self.stderr.seek(0)          # the log of this case only (before sending it: the worker is idle)
        self.stderr.truncate()
        try:
            self.proc.stdin.write((json.dumps({"surface": surface, "case": case}) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return ("crash", f"worker gone before the case\n{self._stderr_tail()}")
        return self._read(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stderr.close()


def case_rng(surface: str, seed: int, index: int) -> random.Random:
    return random.Random(f"{surface}:{seed}:{index}")


def _write_reproducer(out: Path, result: Result, index: int, case: dict, kind: str, label: str,
                      detail: dict) -> Path | None:
    signature = f"{result.surface}|{kind}|{label}|{detail.get('where', '')}"
    result.signatures[signature] += 1
    if result.signatures[signature] > 1:
        return None
    out.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)[:60]
    path = out / f"{result.surface}-{kind}-{safe}-s{result.seed}-{index}-{len(result.reproducers)}.json"
    path.write_text(json.dumps({
        "surface": result.surface, "seed": result.seed, "index": index, "kind": kind, "label": label,
        "signature": signature, "detail": detail, "case": case,
        "replay": f"gputwin fuzz --replay {path}"}, indent=1))
    result.reproducers.append(str(path))
    return path


def run_campaign(surface: str, *, seed: int = 0, cases: int | None = None, seconds: float | None = None,
                 out: str | os.PathLike = "fuzz-out", case_timeout: float = CASE_TIMEOUT_S,
                 watchdog_s: float = WATCHDOG_S, worker: Worker | None = None, progress=None) -> Result:
    """Run cases of one surface until `cases` are done or `seconds` have passed (at least one bound)."""
    if cases is None and seconds is None:
        raise ValueError("a campaign needs a bound: cases and/or seconds")
    s = surfaces()[surface]
    result, out = Result(surface, seed), Path(out)
    own = worker is None
    worker = worker or Worker(watchdog_s)
    start = time.monotonic()          # after the worker is up: its start is not the surface's time
    try:
        i = 0
        while (cases is None or i < cases) and (seconds is None or time.monotonic() - start < seconds):
            case = s.generate(case_rng(surface, seed, i))
            reply = worker.run(surface, case, watchdog_s + case_timeout)
            if isinstance(reply, tuple):       # the worker died or hung: restart it
                kind, text = reply
                result.crashes += kind == "crash"
                result.timeouts += kind == "timeout"
                _write_reproducer(out, result, i, case, kind, kind, {"log": text})
                worker.close()
                worker = Worker(watchdog_s)
            else:
                result.counts.update(reply["counts"])
                if reply["findings"]:
                    result.leaks += 1
                    for f in reply["findings"]:
                        _write_reproducer(out, result, i, case, "leak", f["label"], f)
            i += 1
            result.cases = i
            if progress is not None:
                progress(result)
    finally:
        result.seconds = time.monotonic() - start
        if own:
            worker.close()
    return result


def replay(path: str | os.PathLike) -> Recorder:
    """Run a reproducer's case in this process (a crash reproduces as a crash) and return its outcomes."""
    rep = json.loads(Path(path).read_text())
    return surfaces()[rep["surface"]].run_case(rep["case"])
