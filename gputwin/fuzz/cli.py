"""`gputwin fuzz`: run campaigns from the command line, or replay a reproducer (docs/fuzzing.md)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_subcommand(sub) -> None:
    p = sub.add_parser("fuzz", help="fuzz gputwin's surfaces (KFD ioctls, PM4/SDMA, ISA, code objects, API, "
                                    "NV RM/UVM, GPFIFO, PTX)",
                       description=cmd_fuzz.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=1.0, help="total time, shared equally by the surfaces (default 1)")
    p.add_argument("--surface", action="append", help="a surface to fuzz (repeatable; default: all, see --list)")
    p.add_argument("--seed", type=int, default=0, help="campaign seed (default 0): same seed, same cases")
    p.add_argument("--cases", type=int, help="stop each surface after this many cases (also bounded by --minutes)")
    p.add_argument("--out", default="fuzz-out", help="folder for reproducers and summary.json (default fuzz-out)")
    p.add_argument("--watchdog", type=float, default=2.0, help="GPUTWIN_WATCHDOG_S in the worker (default 2)")
    p.add_argument("--replay", metavar="FILE", help="run one reproducer in this process and print its outcome")
    p.add_argument("--list", action="store_true", help="list the surfaces")
    p.set_defaults(func=cmd_fuzz)


def cmd_fuzz(args) -> int:
    """Seeded, bounded fuzz campaigns. Each case runs in a worker subprocess (restarted after a crash or a
    case stuck past the watchdog); outcomes are counted by exception type; leaks (exceptions that are not
    gputwin errors), crashes and timeouts are written to --out as JSON reproducers, replayable with --replay.
    Exit status 1 when any surface had a leak, crash or timeout."""
    from gputwin.fuzz.runner import replay, run_campaign
    from gputwin.fuzz.surface import surfaces
    known = surfaces()
    if args.list:
        for name, s in known.items():
            print(f"{name:8} {s.doc}")
        return 0
    if args.replay:
        rec = replay(args.replay)
        print("outcomes:", dict(rec.counts))
        for f in rec.findings:
            print(f"\nstep {f['step']}: {f['message']}\n{f['trace']}")
        return 1 if rec.findings else 0
    chosen = args.surface or [name for name, s in known.items() if s.default]
    unknown = [s for s in chosen if s not in known]
    if unknown:
        print(f"unknown surface(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    share = 60.0 * args.minutes / len(chosen)
    results = []
    for name in chosen:
        r = run_campaign(name, seed=args.seed, cases=args.cases, seconds=share, out=args.out,
                         watchdog_s=args.watchdog)
        print(r.summary(), flush=True)
        for path in r.reproducers:
            print(f"  reproducer: {path}")
        results.append(r)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps([{
        "surface": r.surface, "seed": r.seed, "cases": r.cases, "seconds": round(r.seconds, 1),
        "leaking_cases": r.leaks, "crashes": r.crashes, "timeouts": r.timeouts, "outcomes": dict(r.counts),
        "reproducers": r.reproducers} for r in results], indent=1))
    print(f"total: {sum(r.cases for r in results)} cases, {sum(r.leaks for r in results)} leaking, "
          f"{sum(r.crashes for r in results)} crashes, {sum(r.timeouts for r in results)} timeouts")
    return 0 if all(r.clean for r in results) else 1
