"""The surface registry: what a fuzz campaign can aim at.

A surface turns a seeded `random.Random` into a case (a JSON-able dict, so a reproducer is the case itself)
and executes a case, recording one outcome per step in a `Recorder`. Surfaces live in
gputwin/fuzz/surfaces/, one module per area, and register themselves with `register`; a new one (USB,
...) is one more module listed in surfaces/__init__.py.
"""
from __future__ import annotations

import random
import traceback
from collections import Counter

from gputwin.fuzz import classify


class Recorder:
    """One case's outcomes: a count per label and, for every leak, what a reproducer needs."""

    def __init__(self, validation: bool = False):
        self.validation = validation     # the surface's own argument validation counts as gputwin errors
        self.counts: Counter = Counter()
        self.findings: list[dict] = []

    def ok(self, label: str = "ok") -> None:
        self.counts[label] += 1

    def error(self, step, e: BaseException | None, prefix: str = "", *, validation: bool | None = None) -> None:
        """Count e; validation=False overrides the surface's allowance (errors that are not argument checks)."""
        if e is None:                  # an event without an error object
            self.counts[prefix + "None"] += 1
            return
        good, name = classify.label(e, validation=self.validation if validation is None else validation)
        if good:
            self.counts[prefix + name] += 1
        else:
            self.leak(step, prefix + name, f"{type(e).__name__}: {e}", where=classify.where(e),
                      trace="".join(traceback.format_exception(e))[-4000:])

    def leak(self, step, name: str, message: str, *, where: str = "", trace: str = "") -> None:
        self.counts["leak:" + name] += 1
        self.findings.append({"step": step, "label": name, "message": message[:2000], "where": where,
                              "trace": trace})

    def step(self, step, fn, *args, **kw):
        """fn(*args, **kw), recording "ok" or the error; returns its result (None after an error)."""
        try:
            result = fn(*args, **kw)
        except Exception as e:   # noqa: BLE001 - every exception is an outcome to classify
            self.error(step, e)
            return None
        self.ok()
        return result


class Surface:
    name = ""
    doc = ""                  # one line for `gputwin fuzz --list` and docs/fuzzing.md
    validation = False        # whether ValueError/TypeError raised by gputwin code are deliberate here
    default = True            # part of a campaign over "all" surfaces

    def generate(self, rnd: random.Random) -> dict:
        raise NotImplementedError

    def execute(self, case: dict, rec: Recorder) -> None:
        raise NotImplementedError

    def run_case(self, case: dict) -> Recorder:
        """Execute one case and record its outcomes; an exception the surface's own step handling let
        through is still an outcome, never the end of the worker."""
        rec = Recorder(self.validation)
        try:
            self.execute(case, rec)
        except Exception as e:   # noqa: BLE001 - see above
            rec.error("case", e)
        return rec


SURFACES: dict[str, Surface] = {}


def register(cls: type[Surface]) -> type[Surface]:
    SURFACES[cls.name] = cls()
    return cls


def surfaces() -> dict[str, Surface]:
    """Every registered surface (importing the surface modules registers them)."""
    import gputwin.fuzz.surfaces  # noqa: F401
    return SURFACES
