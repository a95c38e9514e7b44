"""`gputwin hil record` and `gputwin hil replay`: the recorder writes what a device computes for every
conformance program; the replayer runs the same programs on the emulator and compares bit for bit."""
from __future__ import annotations

import pathlib
import time
from dataclasses import dataclass, field

import numpy as np

from gputwin.hil import inputs, recording
from gputwin.hil.runners import DriverRunner, open_runner

DEFAULT_SEED = 20261201


def ordered_programs(vendor: str):
    """Approximate instructions first (what the recordings exist for), then the exact ones as checks."""
    return sorted(recording.PROGRAMS[vendor], key=lambda p: recording.fidelity_level(vendor, p.op) != "approximate")


def record(spec: str, out_dir, *, backend: str = "driver", seed: int = DEFAULT_SEED, n: int = inputs.N,
           log=print) -> list[pathlib.Path]:
    runner = open_runner(spec, backend)
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written, start = [], time.monotonic()
    try:
        for program in ordered_programs(runner.vendor):
            ins = inputs.make(program.in_kind, program.arity, seed, n)
            out = runner.run(program, ins)
            path = out_dir / recording.file_name(program)
            recording.write(path, runner.vendor, program, runner.arch, seed, ins, out, runner.name, backend)
            written.append(path)
            log(f"{program.op:24s} {n} lanes -> {path}")
    finally:
        runner.close()
    log(f"recorded {len(written)} programs on {runner.name}, {runner.arch}, in {time.monotonic() - start:.1f} s")
    return written


@dataclass
class Mismatch:
    path: pathlib.Path
    op: str
    lanes: int                                   # lanes that differ
    examples: list = field(default_factory=list)  # (lane, input bit patterns, recorded, emulated)
    reason: str = ""
    digits: int = 10                              # "0x" + hex digits of one lane (18 for 64-bit lanes)

    def __str__(self) -> str:
        if self.reason:
            return f"{self.op} ({self.path}): {self.reason}"
        w = self.digits
        ex = "; ".join(f"lane {i} in=({', '.join(f'{x:#0{w}x}' for x in xs)}) hardware={r:#0{w}x} emulator={e:#0{w}x}"
                       for i, xs, r, e in self.examples)
        return f"{self.op} ({self.path}): {self.lanes} lane(s) differ: {ex}"


def replay_file(path, runners: dict) -> Mismatch | None:
    """Replay one recording on MOCKNV:<arch> / MOCKAMD:<arch>; None when every bit matches."""
    rec = recording.read(pathlib.Path(path))
    meta, op = rec.meta, rec.meta["op"]
    vendor = meta.get("vendor")
    if vendor not in recording.PROGRAMS:
        return Mismatch(rec.path, op, 0, reason=f"unknown vendor {vendor!r}")
    program = recording.BY_OP[vendor].get(op)
    if program is None:
        return Mismatch(rec.path, op, 0, reason="no conformance program for this instruction in this gputwin")
    if recording.program_hash(program, meta["arch"]) != meta["program"]:
        return Mismatch(rec.path, op, 0, reason="the program text changed since it was recorded: record again")
    ins = inputs.make(meta["in_kind"], meta["arity"], meta["seed"], meta["n"])
    if inputs.digest(ins) != meta["inputs"]:
        return Mismatch(rec.path, op, 0, reason="gputwin.hil.inputs no longer regenerates the recorded inputs")
    spec = f"{recording.MOCK[vendor]}:{meta['arch']}"
    runner = runners.get(spec)
    if runner is None:
        runner = runners[spec] = DriverRunner(spec)
    got = runner.run(program, ins)
    if got.dtype != rec.out.dtype or got.shape != rec.out.shape:
        return Mismatch(rec.path, op, 0, reason=f"recorded {rec.out.dtype}[{len(rec.out)}], the program makes "
                                                f"{got.dtype}[{len(got)}]")
    diff = np.flatnonzero(got != rec.out)
    if not len(diff):
        return None
    examples = [(int(i), [int(a[i]) for a in ins], int(rec.out[i]), int(got[i])) for i in diff[:4]]
    return Mismatch(rec.path, op, int(len(diff)), examples, digits=2 + 2 * rec.out.dtype.itemsize)


def find_recordings(root) -> list[pathlib.Path]:
    return sorted(pathlib.Path(root).rglob("*.npz"))


def replay(root, log=print) -> list[Mismatch]:
    paths = find_recordings(root)
    runners, bad = {}, []
    try:
        for path in paths:
            m = replay_file(path, runners)
            log(f"{'ok ' if m is None else 'BAD'} {path}" + ("" if m is None else f"\n    {m}"))
            if m is not None:
                bad.append(m)
    finally:
        for r in runners.values():
            r.close()
    log(f"replayed {len(paths)} recording(s) under {root}: {len(paths) - len(bad)} match, {len(bad)} differ")
    return bad
