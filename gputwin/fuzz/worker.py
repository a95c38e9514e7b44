"""The fuzz worker: a subprocess that executes cases sent by the runner, one JSON line each way.

Request: {"surface": name, "case": {...}}; reply: {"counts": {label: n}, "findings": [...]}. The protocol
uses a private copy of stdout; anything the code under test prints goes to stderr, which the runner keeps
for crash reports (faulthandler writes the Python stack of a segfault there). Address space is capped
(GPUTWIN_FUZZ_MEMORY_GB, default 8) so a case cannot take the machine's memory.
"""
from __future__ import annotations

import faulthandler
import json
import logging
import os
import resource
import sys


def _limit_memory() -> None:
    gb = float(os.environ.get("GPUTWIN_FUZZ_MEMORY_GB", "8"))
    if gb > 0:
        limit = int(gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    faulthandler.enable()
    logging.disable(logging.CRITICAL)      # the mock's dmesg lines would flood the crash log
    _limit_memory()
    from gputwin.fuzz.surface import surfaces
    known = surfaces()
    proto.write(json.dumps({"ready": sorted(known)}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rec = known[req["surface"]].run_case(req["case"])
        proto.write(json.dumps({"counts": rec.counts, "findings": rec.findings}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
