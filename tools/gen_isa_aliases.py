"""Generate gputwin/emu/amd/isa/tables/<arch>_aliases.json: the older mnemonics LLVM still accepts for
gfx11 instructions (flat_atomic_add -> flat_atomic_add_u32, ds_write_b32 -> ds_store_b32, ...).

    python tools/gen_isa_aliases.py [--arch gfx1100]

Candidates come from naming rules (the pre-gfx11 spellings: dword/dwordx2, ubyte, write/read, _x2,
smax/umin, legacy...), applied to every canonical mnemonic of the table. A candidate is kept only when
llvm-mc-19 assembles a real instruction written with it (a random table word, printed by gputwin, its
mnemonic swapped) to the same bytes and canonical text as the canonical spelling: the oracle decides,
the rules only propose.
"""
from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import random
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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


def main(argv: list[str] | None = None) -> int:
    from gputwin.emu.amd.isa.decode import decoder
    from gputwin.emu.amd.isa.disasm import printer
    from gputwin.emu.amd.isa.table import load
    from tests.emu.amd.isa.corpus import random_word

    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="gfx1100")
    a = ap.parse_args(argv)
    table, rng = load(a.arch), random.Random(7)
    dec, pr = decoder(a.arch), printer(a.arch, False, asm_style=True)
    canon_lines: dict[str, list[str]] = {}
    for enc, ops in sorted(table.by_enc.items()):
        if enc.startswith("VOPD"):
            continue
        for info in ops.values():
            for _ in range(3):
                try:
                    text = pr.text(dec.decode(random_word(info, rng)))
                except Exception:   # a word the printer or decoder refuses proves nothing
                    continue
                canon_lines.setdefault(text.split(" ", 1)[0], []).append(text)
    probes = []   # (alias, canonical, line written with the alias, canonical line)
    for canon, lines in canon_lines.items():
        base = canon.removesuffix("_e32").removesuffix("_e64")
        for alias in candidates(base):
            alias_full = alias + canon[len(base):]
            if alias_full in canon_lines:
                continue
            for line in lines:
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
    aliases: dict[str, str] = {}
    for (alias, canon, _, _), g, w in zip(probes, got, want):
        if g and g == w:
            aliases[alias] = canon
    out = ROOT / "gputwin/emu/amd/isa/tables" / f"{a.arch}_aliases.json"
    out.write_text(json.dumps(dict(sorted(aliases.items())), indent=0) + "\n")
    print(f"{len(aliases)} aliases from {len(probes)} probes -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
