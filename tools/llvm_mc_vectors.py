"""Compare gputwin's gfx11 assembler/disassembler with llvm-mc-19 on the input lines of LLVM's own MC tests.

    python tools/llvm_mc_vectors.py DIR [--arch gfx1100] [--show N] [--wave64]

DIR holds LLVM test files (llvm/test/MC/AMDGPU/gfx11_asm_*.s, llvm/test/MC/Disassembler/AMDGPU/
gfx11_dasm_*.txt), fetched by hand; they are not part of gputwin. Only the input lines are used: the
ground truth is what the installed llvm-mc-19 prints for each of them, never the CHECK lines (LLVM main
may be newer than 19). A line passes when both tools print the same text (and encoding), or both reject
it. Both tools run once per file, with a marker instruction after every input line to re-align the
outputs (an input line may print several instructions, or nothing when rejected).
"""
from __future__ import annotations

import argparse
import io
import pathlib
import re
import subprocess
import sys

MARK_ASM = "s_nop 0x7bcd"
MARK_BYTES = "0xcd,0x7b,0x80,0xbf"
_MARK_TEXT = "s_nop 0x7bcd"


def asm_inputs(text: str) -> list[str]:
    """Instruction lines of an assembler test: comments, directives and RUN lines dropped."""
    out = []
    for raw in text.splitlines():
        line = re.split(r"//|;", raw, maxsplit=1)[0].strip()
        if line and not line.startswith((".", "#")):
            out.append(line)
    return out


def dasm_inputs(text: str) -> list[str]:
    """Byte lines of a disassembler test (`0x..,0x..` or `[0x.., ...]`), comments dropped."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if re.match(r"\[?\s*0x[0-9a-fA-F]", line):
            out.append(line)
    return out


def _chunks(stdout: str) -> list[list[str]]:
    """Printed instructions between markers, whitespace-normalised."""
    groups, cur = [], []
    for raw in stdout.splitlines():
        line = " ".join(raw.split())
        if not line or line == ".text":
            continue
        if line.startswith(_MARK_TEXT) and (line == _MARK_TEXT or line.startswith(_MARK_TEXT + " ;")):
            groups.append(cur)
            cur = []
        else:
            cur.append(line)
    return groups


def _error_lines(stderr: str) -> set[int]:
    return {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):", stderr)}


def _align(lines: list[str], stdout: str, stderr: str) -> list[tuple[str, ...] | None]:
    """Per input line: its printed instructions, or None when the tool reported an error for it."""
    bad, groups = _error_lines(stderr), _chunks(stdout)
    if len(groups) != len(lines):
        raise RuntimeError(f"could not align output: {len(groups)} groups for {len(lines)} lines")
    return [None if 2 * i + 1 in bad else tuple(g) for i, g in enumerate(groups)]


def _with_markers(lines: list[str], mark: str) -> str:
    return "".join(f"{line}\n{mark}\n" for line in lines)


def run_llvm(lines: list[str], disasm: bool, arch: str, wave64: bool) -> list[tuple[str, ...] | None]:
    args = ["llvm-mc-19", "-triple=amdgcn", f"-mcpu={arch}"]
    if wave64:
        args.append("-mattr=+wavefrontsize64")
    args.append("-disassemble" if disasm else "-show-encoding")
    src = _with_markers(lines, MARK_BYTES if disasm else MARK_ASM)
    p = subprocess.run(args, input=src, capture_output=True, text=True, timeout=600)
    return _align(lines, p.stdout, p.stderr)


def run_gputwin(lines: list[str], disasm: bool, arch: str, wave64: bool) -> list[tuple[str, ...] | None]:
    from gputwin.emu.amd.isa import tool

    src = _with_markers(lines, MARK_BYTES if disasm else MARK_ASM)
    out, err = io.StringIO(), io.StringIO()
    if disasm:
        tool.disasm(src, arch, out, err, wave64=wave64)
    else:
        tool.asm(src, arch, out, err, wave64=wave64)
    return _align(lines, out.getvalue(), err.getvalue())


def compare_file(path: pathlib.Path, arch: str, wave64: bool) -> tuple[int, int, list[str]]:
    """(passed, total, mismatch descriptions) for one test file."""
    disasm = path.suffix == ".txt"
    lines = (dasm_inputs if disasm else asm_inputs)(path.read_text())
    if not lines:
        return 0, 0, []
    want = run_llvm(lines, disasm, arch, wave64)
    got = run_gputwin(lines, disasm, arch, wave64)
    passed, bad = 0, []
    for line, w, g in zip(lines, want, got):
        if disasm and w is not None and g is not None:
            # llvm-mc reports undecodable words on stderr only; gputwin prints `.long` and an error
            w = tuple(x for x in w if not x.startswith(".long"))
        if w == g or (w is None and g is None):
            passed += 1
        else:
            bad.append(f"  {line}\n    llvm-mc-19: {'<error>' if w is None else ' | '.join(w)}\n"
                       f"    gputwin:    {'<error>' if g is None else ' | '.join(g)}")
    return passed, len(lines), bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--arch", default="gfx1100")
    ap.add_argument("--wave64", action="store_true")
    ap.add_argument("--show", type=int, default=5, help="mismatches printed per file")
    a = ap.parse_args(argv)
    files = sorted(p for p in a.dir.iterdir() if p.suffix in (".s", ".txt"))
    tot_pass = tot = 0
    for path in files:
        try:
            passed, total, bad = compare_file(path, a.arch, a.wave64)
        except RuntimeError as e:
            print(f"{path.name}: {e}")
            continue
        tot_pass, tot = tot_pass + passed, tot + total
        pct = 100.0 * passed / total if total else 100.0
        print(f"{path.name}: {passed}/{total} ({pct:.1f}%)")
        for b in bad[:a.show]:
            print(b)
    print(f"TOTAL: {tot_pass}/{tot} ({100.0 * tot_pass / max(tot, 1):.1f}%)")
    return 0 if tot_pass == tot else 1


if __name__ == "__main__":
    sys.exit(main())
