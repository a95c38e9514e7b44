"""Recordings: one compressed .npz per (arch, instruction) under fixtures/hw/<arch>/, holding

    out   uint32[n]   the output bit patterns (uint64 for f64 programs), lane i computed from the inputs' lane i
    meta  JSON        format, vendor (nv, amd), op, arity, in_kind, out_kind, seed, n, inputs (digest of the regenerated inputs),
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
import zipfile
from dataclasses import dataclass

import numpy as np

from gputwin.hil import amd_programs, inputs, nv_programs

FORMAT = 1
PROGRAMS = {"nv": nv_programs.PROGRAMS, "amd": amd_programs.PROGRAMS}
BY_OP = {vendor: {p.op: p for p in progs} for vendor, progs in PROGRAMS.items()}
MOCK = {"nv": "MOCKNV", "amd": "MOCKAMD"}


def fidelity_level(vendor: str, op: str) -> str:
    """The emulator's fidelity level for an instruction ("approximate", "decision", "exact")."""
    if vendor == "nv":
        from gputwin.emu.nv.ptx import fidelity
        return fidelity.level(op)[0]
    from gputwin.emu.amd import fidelity
    return fidelity.level(op)[0]


def program_hash(program, arch: str) -> str:
    return hashlib.sha256(program.text(arch).encode()).hexdigest()[:16]


def file_name(program) -> str:
    return f"{program.op}.npz"


def write(path: pathlib.Path, vendor: str, program, arch: str, seed: int, ins, out: np.ndarray, device: str,
          backend: str) -> None:
    from gputwin import __version__ as version
    meta = {"format": FORMAT, "vendor": vendor, "op": program.op, "arity": program.arity, "in_kind": program.in_kind,
            "out_kind": program.out_kind, "seed": seed, "n": int(len(out)), "inputs": inputs.digest(ins),
            "program": program_hash(program, arch), "device": device, "arch": arch, "backend": backend,
            "fidelity": fidelity_level(vendor, program.op), "gputwin": version,
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    buf = io.BytesIO()
    np.savez_compressed(buf, out=np.ascontiguousarray(out, program.dtype), meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    path.write_bytes(buf.getvalue())


@dataclass
class Recording:
    path: pathlib.Path
    meta: dict
    out: np.ndarray


def read(path: pathlib.Path) -> Recording:
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes())
            out = z["out"]
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as e:   # each says what broke
        raise ValueError(f"{path}: not a gputwin recording ({type(e).__name__}: {e})") from None
    if not isinstance(meta, dict) or out.dtype not in (np.uint32, np.uint64):
        raise ValueError(f"{path}: not a gputwin recording (meta {type(meta).__name__}, out {out.dtype})")
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: recording format {meta.get('format')}, this gputwin reads {FORMAT}")
    return Recording(path, meta, out)


def inventory(root) -> dict[str, list[str]]:
    """{arch: sorted instructions with a recording} under `root` (fixtures/hw): what conformance reports can
    count as "verified against hardware" once the replay test passes for them."""
    out: dict[str, set] = {}
    for path in sorted(pathlib.Path(root).rglob("*.npz")):
        meta = read(path).meta
        out.setdefault(meta["arch"], set()).add(meta["op"])
    return {arch: sorted(ops) for arch, ops in sorted(out.items())}
