"""Recordings: one compressed .npz per (arch, instruction) under fixtures/hw/<arch>/, holding

    out   uint32[n]   the output bit patterns, lane i computed from the inputs' lane i
    meta  JSON        format, op, arity, in_kind, out_kind, seed, n, inputs (digest of the regenerated inputs),
                      program (sha256 of the program text), device, arch, backend, fidelity, gputwin version

Inputs are not stored: gputwin.hil.inputs regenerates them from (kind, arity, seed, n), and the digest proves
they are the ones the hardware saw.
"""
from __future__ import annotations

import hashlib
import io
import json
import pathlib
import time
from dataclasses import dataclass

import numpy as np

from gputwin.emu.nv.ptx import fidelity
from gputwin.hil import inputs
from gputwin.hil.nv_programs import PROGRAMS, Program

FORMAT = 1
BY_OP = {p.op: p for p in PROGRAMS}


def program_hash(program: Program, arch: str) -> str:
    return hashlib.sha256(program.ptx(arch).encode()).hexdigest()[:16]


def file_name(program: Program) -> str:
    return f"{program.op}.npz"


def write(path: pathlib.Path, program: Program, arch: str, seed: int, ins, out: np.ndarray, device: str,
          backend: str) -> None:
    from gputwin import __version__ as version
    meta = {"format": FORMAT, "op": program.op, "arity": program.arity, "in_kind": program.in_kind,
            "out_kind": program.out_kind, "seed": seed, "n": int(len(out)), "inputs": inputs.digest(ins),
            "program": program_hash(program, arch), "device": device, "arch": arch, "backend": backend,
            "fidelity": fidelity.level(program.op)[0], "gputwin": version,
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    buf = io.BytesIO()
    np.savez_compressed(buf, out=np.ascontiguousarray(out, np.uint32), meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    path.write_bytes(buf.getvalue())


@dataclass
class Recording:
    path: pathlib.Path
    meta: dict
    out: np.ndarray


def read(path: pathlib.Path) -> Recording:
    with np.load(path) as z:
        meta = json.loads(z["meta"].tobytes())
        out = z["out"]
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: recording format {meta.get('format')}, this gputwin reads {FORMAT}")
    return Recording(path, meta, out)
