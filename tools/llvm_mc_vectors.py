"""Compare gputwin's assembler/disassembler with llvm-mc-19 on the input lines of LLVM's own MC tests.

    python tools/llvm_mc_vectors.py PATH... [--arch gfx1100] [--show N] [--wave64]

Each PATH is a test file or a directory of them (llvm/test/MC/AMDGPU/gfx11_*.s, gfx12_*.s,
llvm/test/MC/Disassembler/AMDGPU/gfx11_*.txt, gfx12_*.txt), fetched by hand; they are not part of
gputwin. Without --arch a file's arch comes from its name (gfx11_* -> gfx1100, gfx12_* -> gfx1200).
Only the input lines are used: the ground truth is what the installed llvm-mc-19 prints for each of
them, never the CHECK lines (LLVM main may be newer than 19). Both tools run once per file, with a
marker instruction after every input line to re-align the outputs (an input line may print several
instructions, or nothing when rejected).

The figure counts only the lines llvm-mc-19 accepts: such a line passes when gputwin prints the same
text and encoding. Lines LLVM rejects are counted apart ("gputwin also accepts": accepted where LLVM
refuses, which may be right, as gputwin's disassembler is total over decoded words). Totals are per
family: gfx11/gfx12 x asm/disasm.
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


def _gputwin_once(src: str, disasm: bool, arch: str, wave64: bool) -> tuple[str, str]:
    from gputwin.emu.amd.isa import tool

    out, err = io.StringIO(), io.StringIO()
    (tool.disasm if disasm else tool.asm)(src, arch, out, err, wave64=wave64)
    return out.getvalue(), err.getvalue()


def run_gputwin(lines: list[str], disasm: bool, arch: str, wave64: bool) -> list[tuple[str, ...] | None]:
    """Like run_llvm. A Python exception is a bug, not a rejection: the file is then run line by line and
    each line that raises prints `<crash: ...>` (a mismatch whatever LLVM did)."""
    mark = MARK_BYTES if disasm else MARK_ASM
    try:
        return _align(lines, *_gputwin_once(_with_markers(lines, mark), disasm, arch, wave64))
    except Exception:   # noqa: BLE001 - locate the crashing lines
        pass
    res = []
    for line in lines:
        try:
            res += _align([line], *_gputwin_once(_with_markers([line], mark), disasm, arch, wave64))
        except Exception as e:   # noqa: BLE001
            res.append((f"<crash: {type(e).__name__}: {e}>",))
    return res


_ARCH_OF_PREFIX = {"gfx11": "gfx1100", "gfx12": "gfx1200"}


def arch_of(path: pathlib.Path) -> str | None:
    return _ARCH_OF_PREFIX.get(path.name.split("_", 1)[0])


def compare_file(path: pathlib.Path, arch: str, wave64: bool) -> tuple[int, int, int, list[str]]:
    """(passed, LLVM-accepted lines, lines LLVM rejects but gputwin accepts, mismatch descriptions)."""
    disasm = path.suffix == ".txt"
    lines = (dasm_inputs if disasm else asm_inputs)(path.read_text())
    if not lines:
        return 0, 0, 0, []
    want = run_llvm(lines, disasm, arch, wave64)
    got = run_gputwin(lines, disasm, arch, wave64)
    passed = total = extra = 0
    bad = []
    for line, w, g in zip(lines, want, got):
        if disasm:
            # llvm-mc reports undecodable words on stderr only; gputwin prints `.long` and an error
            w = None if w is None else tuple(x for x in w if not x.startswith(".long")) or None
            g = None if g is None else tuple(x for x in g if not x.startswith(".long")) or None
        if w is None:
            extra += g is not None
            continue
        total += 1
        if w == g:
            passed += 1
        else:
            bad.append(f"  {line}\n    llvm-mc-19: {' | '.join(w)}\n"
                       f"    gputwin:    {'<error>' if g is None else ' | '.join(g)}")
    return passed, total, extra, bad


def _files(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    out = []
    for p in paths:
        out += sorted(q for q in p.iterdir() if q.suffix in (".s", ".txt")) if p.is_dir() else [p]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", type=pathlib.Path, nargs="+")
    ap.add_argument("--arch", help="default: from each file's name")
    ap.add_argument("--wave64", action="store_true")
    ap.add_argument("--show", type=int, default=5, help="mismatches printed per file")
    a = ap.parse_args(argv)
    families: dict[str, list[int]] = {}
    for path in _files(a.paths):
        arch = a.arch or arch_of(path)
        if arch is None:
            print(f"{path.name}: skipped (no arch; give --arch)")
            continue
        try:
            passed, total, extra, bad = compare_file(path, arch, a.wave64)
        except RuntimeError as e:
            print(f"{path.name}: {e}")
            continue
        fam = families.setdefault(f"{path.name.split('_', 1)[0]} {'disasm' if path.suffix == '.txt' else 'asm'}",
                                  [0, 0, 0])
        fam[0], fam[1], fam[2] = fam[0] + passed, fam[1] + total, fam[2] + extra
        pct = 100.0 * passed / total if total else 100.0
        note = f", gputwin also accepts {extra} LLVM rejects" if extra else ""
        print(f"{path.name}: {passed}/{total} ({pct:.2f}%){note}")
        for b in bad[:a.show]:
            print(b)
    ok = True
    for name, (passed, total, extra) in sorted(families.items()):
        ok &= passed == total
        print(f"TOTAL {name}: {passed}/{total} ({100.0 * passed / max(total, 1):.2f}%), "
              f"gputwin also accepts {extra} lines LLVM rejects")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
