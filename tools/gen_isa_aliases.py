"""Generate gputwin/emu/amd/isa/tables/<arch>_aliases.json: the other mnemonics LLVM accepts for an
instruction and prints under its canonical name (s_andn2_b32 -> s_and_not1_b32, v_ffbh_u32 -> v_clz_i32_u32,
flat_atomic_add -> flat_atomic_add_u32, ds_write_b32 -> ds_store_b32, ...).

    python tools/gen_isa_aliases.py [--arch gfx1100] [--td LLVM/llvm/lib/Target/AMDGPU]

Candidates come from two places, and only propose:
- LLVM's TableGen sources (`--td`): every `AMDGPUMnemonicAlias<"from", "to">`, and every real instruction
  defined under a new name for gfx11/gfx12 (`defm S_ANDN2_B32 : SOP2_Real_gfx11_gfx12<0x022,
  "s_and_not1_b32">`: its pseudo's mnemonic becomes an alias of the new name; the multiclasses write that
  alias with AMDGPUMnemonicAlias<ps.Mnemonic, name>). The pairs are kept in tools/gen_isa_aliases_td.txt
  (mnemonics only) so that a regeneration without the LLVM sources proposes the same ones.
- naming rules (the pre-gfx11 spellings: dword/dwordx2, ubyte, write/read, _x2, smax/umin, legacy...).
A candidate is kept only when llvm-mc-19 assembles real instructions written with it (random table words,
printed by gputwin, their mnemonic swapped; e32, e64 and DPP forms alike) to the same bytes and canonical
text as the canonical spelling, and never to anything else: the oracle decides.
"""
from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import random
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TD_PAIRS = ROOT / "tools" / "gen_isa_aliases_td.txt"
_SUFFIXES = ("_e64_dpp", "_dpp", "_e32", "_e64")   # printed forms an alias carries over
_MNEMONIC = re.compile(r"^(s|v|ds|buffer|tbuffer|flat|global|scratch)_[a-z0-9_]+$")

# (canonical token -> older spellings), applied to "_"-separated pieces of a mnemonic
_TOKEN = {
    "b32": ["dword", ""], "b64": ["dwordx2", "x2"], "b96": ["dwordx3"], "b128": ["dwordx4"],
    "b256": ["dwordx8"], "b512": ["dwordx16"], "u8": ["ubyte"], "i8": ["sbyte"], "u16": ["ushort"],
    "i16": ["sshort"], "b8": ["byte"], "b16": ["short"], "u32": [""], "u64": ["x2"], "i64": ["x2"],
    "store": ["write"], "load": ["read"], "cmpstore": ["cmpst"], "storexchg": ["wrxchg"],
    "store2": ["write2"], "store2st64": ["write2st64"], "load2": ["read2"], "load2st64": ["read2st64"],
    "storexchg2": ["wrxchg2"], "storexchg2st64": ["wrxchg2st64"], "dx9": ["legacy"], "nearest": ["rpi"], "floor": ["flr"],
}
# whole-piece rewrites that change more than one token
_PHRASE = [
    ("max_i32", "smax"), ("min_i32", "smin"), ("max_u32", "umax"), ("min_u32", "umin"),
    ("max_i64", "smax_x2"), ("min_i64", "smin_x2"), ("max_u64", "umax_x2"), ("min_u64", "umin_x2"),
    ("cmpswap_f32", "fcmpswap"), ("min_f32", "fmin"), ("max_f32", "fmax"), ("cmpswap_f64", "fcmpswap_x2"),
    ("min_f64", "fmin_x2"), ("max_f64", "fmax_x2"), ("_2addr_stride64", "2st64"), ("_2addr", "2"),
    ("dx9_zero", "legacy"), ("d16_u8", "ubyte_d16"), ("d16_i8", "sbyte_d16"), ("d16_b16", "short_d16"),
    ("d16_hi_u8", "ubyte_d16_hi"), ("d16_hi_i8", "sbyte_d16_hi"), ("d16_hi_b16", "short_d16_hi"),
    ("d16_hi_b8", "byte_d16_hi"), ("u8_d16", "ubyte_d16"), ("b16_d16_hi", "write_b16_d16_hi"),
    ("set_inst_prefetch_distance", "inst_prefetch"), ("csub_u32", "csub"),
]


def candidates(name: str) -> set[str]:
    """Older spellings a canonical mnemonic might have had (over-generated; the oracle filters)."""
    outs = {name}
    for a, b in _PHRASE:
        outs |= {o.replace(a, b) for o in outs if a in o}
    pieces_sets = set()
    for o in outs:
        parts = o.split("_")
        opts = [[p] + _TOKEN.get(p, []) for p in parts]
        for combo in itertools.islice(itertools.product(*opts), 64):
            pieces_sets.add("_".join(p for p in combo if p))
    return (outs | pieces_sets) - {name}


def _mnemonic(text: str) -> str | None:
    """A TableGen name or string as a mnemonic: 'V_CMP_TRU_F16_t16' -> 'v_cmp_tru_f16'."""
    m = text.lower()
    for tail in ("_t16", "_fake16", "_gfx11", "_gfx12", "_pseudo", "_e32", "_e64", "_vi", "_si"):
        m = m.removesuffix(tail)
    return m if _MNEMONIC.match(m) else None


def td_pairs(td_dir: pathlib.Path) -> set[tuple[str, str]]:
    """(alias, canonical) candidates from LLVM's AMDGPU .td files (over-generated; the oracle filters)."""
    pairs: set[tuple[str, str]] = set()
    for path in sorted(td_dir.glob("*.td")):
        text = re.sub(r"//[^\n]*", "", path.read_text())
        for a, b in re.findall(r'MnemonicAlias\s*<\s*"([^"]+)"\s*,\s*"([^"]+)"', text):
            pairs.add((a, b))
        # a real instruction under its gfx11/gfx12 name: the record (pseudo) and any names among its arguments
        for rec, mc, args in re.findall(r"defm\s+(\w+)\s*:\s*(\w+)\s*<([^;>]*)>", text):
            if "gfx11" not in mc.lower() and "gfx12" not in mc.lower():
                continue
            names = {n for n in [_mnemonic(rec)] + [_mnemonic(x) for x in re.findall(r'"([^"]+)"', args)] if n}
            pairs |= {(x, y) for x in names for y in names if x != y}
        for a, rec in re.findall(r'Alias\s*<\s*"([^"]+)"\s*,\s*(\w+)\s*>', text):
            m = _mnemonic(rec)
            if m and m != a:
                pairs |= {(a, m), (m, a)}
    return pairs


def split_suffix(name: str) -> tuple[str, str]:
    """'v_cls_i32_e64_dpp' -> ('v_cls_i32', '_e64_dpp')."""
    for suf in _SUFFIXES:
        if name.endswith(suf):
            return name[:-len(suf)], suf
    return name, ""


def main(argv: list[str] | None = None) -> int:
    from gputwin.emu.amd.isa.decode import decoder
    from gputwin.emu.amd.isa.disasm import printer
    from gputwin.emu.amd.isa.table import load
    from tests.emu.amd.isa.corpus import random_word

    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="gfx1100")
    ap.add_argument("--td", type=pathlib.Path, help="LLVM's llvm/lib/Target/AMDGPU: refresh " + TD_PAIRS.name)
    a = ap.parse_args(argv)
    if a.td:
        TD_PAIRS.write_text("".join(f"{x} {y}\n" for x, y in sorted(td_pairs(a.td))))
    from_td: dict[str, set[str]] = {}
    for line in TD_PAIRS.read_text().splitlines():
        alias, canon = line.split()
        from_td.setdefault(canon, set()).add(alias)
    table, rng = load(a.arch), random.Random(7)
    dec, pr = decoder(a.arch), printer(a.arch, False, asm_style=True)
    canon_lines: dict[str, list[str]] = {}
    for enc, ops in sorted(table.by_enc.items()):
        if enc.startswith("VOPD"):
            continue
        for info in ops.values():
            for _ in range(8):
                try:
                    text = pr.text(dec.decode(random_word(info, rng)))
                except Exception:   # a word the printer or decoder refuses proves nothing
                    continue
                canon_lines.setdefault(text.split(" ", 1)[0], []).append(text)
    names = set(canon_lines) | {split_suffix(c)[0] for c in canon_lines}
    probes = []   # (alias, canonical, line written with the alias, canonical line)
    for canon, lines in sorted(canon_lines.items()):
        base, suf = split_suffix(canon)
        for alias in sorted(candidates(base) | from_td.get(base, set())):
            alias_full = alias + suf
            if alias_full in names or alias in names:
                continue
            for line in lines[:4]:
                probes.append((alias_full, canon, alias_full + line[len(canon):], line))
    mc = ["llvm-mc-19", "-triple=amdgcn", f"-mcpu={a.arch}", "-show-encoding"]

    def run(lines):
        src = "".join(f"{x}\ns_nop 0x7bcd\n" for x in lines)
        p = subprocess.run(mc, input=src, capture_output=True, text=True)
        groups, cur = [], []
        for raw in p.stdout.splitlines():
            s = " ".join(raw.split())
            if not s or s == ".text":
                continue
            if s.startswith("s_nop 0x7bcd"):
                groups.append(cur)
                cur = []
            else:
                cur.append(s)
        return groups

    got = run([p[2] for p in probes])
    want = run([p[3] for p in probes])
    # LLVM strips the _e32/_e64/_dpp/_e64_dpp suffix before it applies an alias, so one verdict per base name
    verdict: dict[tuple[str, str], bool] = {}
    for (alias, canon, _, _), g, w in zip(probes, got, want):
        if w:   # a canonical line LLVM accepts: the alias must give the very same
            key = (split_suffix(alias)[0], split_suffix(canon)[0])
            verdict[key] = verdict.get(key, True) and g == w
    aliases = {alias: canon for (alias, canon), ok in sorted(verdict.items()) if ok and alias != canon}
    out = ROOT / "gputwin/emu/amd/isa/tables" / f"{a.arch}_aliases.json"
    out.write_text(json.dumps(dict(sorted(aliases.items())), indent=0) + "\n")
    print(f"{len(aliases)} aliases from {len(probes)} probes -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
