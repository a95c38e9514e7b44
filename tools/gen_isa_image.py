"""Generate gputwin/emu/amd/isa/tables/<arch>_image.json: the image instructions (gfx11 MIMG, gfx12
VIMAGE/VSAMPLE) as LLVM 19 decodes them.

    python tools/gen_isa_image.py [--arch gfx1100]

LLVM decodes an image word as a default variant of its opcode, then re-sizes VDATA (from DMASK, D16,
TFE) and the address (from DIM, A16 and the opcode's extra arguments) to a variant that exists; when no
such variant exists, or the wider register would run past v255, it prints the default variant. This
generator sweeps the opcode field and records, per opcode and address form (MIMG: plain and NSA):
- `name`, `sampler` (has the sampler operand), `d16` (the D16 bit decodes), `gather` (4-dword result
  whatever DMASK says), `bvh` (image_bvh*: fixed address layouts, `bvh: {a16: layout}`);
- `vd0`, `va0`: the default variant's VDATA dwords and address layout (dwords per address operand);
  `va0_zero`: the default's layout when the other address fields are 0, where that differs (gfx12);
- `addr`: per DIM*2+A16, the address dwords the re-sized variant has (0: none, the default prints);
- `vd_map`: VDATA dwords asked for (image.data_dwords) -> the re-sized variant's (missing: none);
- `reject`: word bits outside the operand fields that LLVM refuses for this opcode (flipping each clear
  bit of a valid word in turn).
What it trusts LLVM for: which opcodes exist, names, the variants and printing. The field layout is
gputwin/emu/amd/isa/image_formats.py, checked by tests/emu/amd/isa/test_image_pixel_llvm.py.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gen_isa import llvm_version  # noqa: E402
from llvm_oracle import Disassembler  # noqa: E402

from gputwin.emu.amd.isa.image import data_dwords, nsa_layout  # noqa: E402
from gputwin.emu.amd.isa.image_formats import DIMS, FAMILY_FORMATS, FORMATS, VADDR_FIELDS  # noqa: E402
from gputwin.emu.amd.isa.table import ARCHES, TABLE_DIR  # noqa: E402

_REG = re.compile(r"v(\d+)$|v\[(\d+):(\d+)\]$")
# Address VGPRs of the probes, one per NSA field (far apart, so any range fits).
_VADDR = (1, 20, 40, 60, 80)
_DATA = [(dmask, d16, tfe) for dmask in (1, 3, 7, 15) for d16 in (0, 1) for tfe in (0, 1)]


def _count(tok: str) -> int:
    m = _REG.match(tok)
    if not m:
        raise ValueError(tok)
    return 1 if m[1] else int(m[3]) - int(m[2]) + 1


def parse(text: str) -> tuple[str, int, tuple[int, ...]]:
    """(mnemonic, VDATA dwords, address layout) of LLVM's text."""
    name, rest = text.split(None, 1)
    vdata, rest = rest.split(", ", 1)
    if rest.startswith("["):
        depth, end = 0, 0
        for end, ch in enumerate(rest):
            depth += {"[": 1, "]": -1}.get(ch, 0)
            if depth == 0:
                break
        addr = rest[1:end]
        layout = tuple(_count(t.strip()) for t in addr.split(","))
    else:
        layout = (_count(rest.split(",")[0]),)
    return name, (0 if vdata == "off" else _count(vdata)), layout


class Prober:
    def __init__(self, arch: str, fmt_name: str, nsa: bool):
        self.dis = Disassembler(arch)
        self.fmt = FORMATS[fmt_name]
        self.name = fmt_name
        self.nsa = nsa
        self.size = 12 if nsa or fmt_name != "MIMG" else 8
        self.nfields = VADDR_FIELDS[fmt_name] if self.size == 12 else 1

    def word(self, vals: dict) -> int:
        return self.fmt.pack(**vals)

    def text(self, word: int) -> str | None:
        n, t = self.dis.dis(word.to_bytes(self.size, "little") + bytes(8))
        if n != self.size or t is None or "/*" in t or "Warning" in t:
            return None
        return t

    def base(self, op: int, sampler: bool, nvaddr: int, **kw) -> dict:
        vals = {"op": op, "dmask": 1, "vdata": 5}
        if self.name == "MIMG":
            vals.update(srsrc=2, ssamp=3 if sampler else 0, nsa=int(self.nsa))
        else:
            vals.update(rsrc=8)
            if self.name == "VSAMPLE":
                vals["samp"] = 12 if sampler else 0
        for i in range(min(nvaddr, self.nfields)):
            vals[f"vaddr{i}"] = _VADDR[i]
        vals.update(kw)
        return vals


def probe_op(p: Prober, op: int) -> dict | None:
    # the operand forms: sampler or not; BVH needs DMASK 0xf and R128 (gfx11 also UNORM); MSAA loads an MSAA dim
    bvh = {"dmask": 15, "r128": 1, **({"unorm": 1} if p.name == "MIMG" else {})}
    found = None
    for sampler in ((True, False) if p.name != "VIMAGE" else (False,)):
        for extra in ({}, bvh, {"dim": 6}):
            for nvaddr in range(p.nfields, 0, -1):   # gfx12: fields past the default's must be 0
                vals = p.base(op, sampler, nvaddr, **extra)
                t = p.text(p.word(vals))
                if t:
                    found = (sampler, extra, nvaddr, vals, t)
                    break
            if found:
                break
        if found:
            break
    if not found:
        return None
    sampler, extra, nvaddr, vals, text = found
    name = text.split()[0]
    e = {"name": name, "sampler": sampler, "bvh": "bvh" in name}
    e["need"] = p.word(extra) & ~p.word({}) if e["bvh"] else 0   # bits BVH cannot do without
    # the default variant: ask for 5 VDATA dwords starting at v252, which no variant fits
    dflt = p.text(p.word(dict(vals, vdata=252, dmask=15, tfe=1)))
    if e["bvh"]:
        e.update(gather=False, d16=False, vd0=parse(text)[1], vd_map={}, addr=[], va0=[])
        e["bvh_layout"] = [list(parse(bvh_text(p, dict(vals, a16=a16)))[2]) for a16 in (0, 1)]
    else:
        _, vd0, va0 = parse(dflt)
        e.update(vd0=vd0, va0=list(va0[:p.nfields] if p.size == 12 else va0))
        # gfx12 VIMAGE: with the other address fields 0 the word decodes as a one-address default variant
        zero = p.text(p.word(dict(vals, vdata=252, dmask=15, tfe=1, **{f"vaddr{i}": 0 for i in range(1, p.nfields)})))
        if p.size == 12 and zero and list(parse(zero)[2]) != e["va0"]:
            e["va0_zero"] = list(parse(zero)[2])
        e["gather"] = parse(text)[1] == 4
        e["d16"] = p.text(p.word(dict(vals, d16=1))) is not None
        data = [c for c in _DATA if e["d16"] or not c[1]]
        vd_map, addr = {vd0: vd0}, []
        outcomes = {}
        for dim in range(8):
            for a16 in (0, 1):
                got = []
                for dmask, d16, tfe in data:
                    t = p.text(p.word(dict(vals, dim=dim, a16=a16, dmask=dmask, d16=d16, tfe=tfe)))
                    if t:
                        got.append((data_dwords(e["gather"], dmask, d16, tfe), *parse(t)[1:]))
                outcomes[dim * 2 + a16] = got
        for key in range(16):
            conv = [g for g in outcomes[key] if g[1:] != (vd0, tuple(e["va0"]))]
            for want, vd, _ in conv:
                if vd_map.setdefault(want, vd) != vd:
                    raise SystemExit(f"gen_isa_image: {name}: VDATA {want} re-sized to {vd} and {vd_map[want]}")
        for key in range(16):
            conv = {sum(g[2]) for g in outcomes[key] if g[1:] != (vd0, tuple(e["va0"]))}
            if len(conv) > 1:
                raise SystemExit(f"gen_isa_image: {name} dim/a16 {key}: several address sizes {conv}")
            addr.append(conv.pop() if conv else 0)   # nothing re-sized: no variant for this address size
        e["addr"] = addr
        e["vd_map"] = {str(k): v for k, v in sorted(vd_map.items())}
    e["reject"] = probe_reject(p, vals)
    if e["bvh"]:   # the A16 form (gfx12: with its unused fifth address field zero) must not count A16 as refused
        a16 = dict(vals, a16=1, **({"vaddr4": 0} if p.nfields == 5 else {}))
        e["reject"] &= probe_reject(p, a16)
    return e


def bvh_text(p: Prober, vals: dict) -> str:
    """A BVH form's text; gfx12 refuses address fields past the ones the form uses, so zero them in turn."""
    for n in range(p.nfields, 0, -1):
        t = p.text(p.word(dict(vals, **{f"vaddr{i}": 0 for i in range(n, p.nfields)})))
        if t:
            return t
    raise SystemExit(f"gen_isa_image: no BVH form decodes for {vals}")


def probe_reject(p: Prober, vals: dict) -> int:
    """Bits LLVM refuses, set one at a time on a valid word (opcode, identifier and NSA bits excluded)."""
    word = p.word(vals)
    skip = p.fmt.fields_mask(*(f for f in ("op", "nsa") if f in p.fmt.fields)) | p.fmt.ident_mask()
    bad = 0
    for bit in range(p.size * 8):
        b = 1 << bit
        if word & b or skip & b:
            continue
        if p.text(word | b) is None:
            bad |= b
    return bad


def aliases(arch: str, encodings: dict) -> dict[str, str]:
    """Other mnemonics llvm-mc-19 takes for these instructions (kept only if it assembles a line written
    with one to the canonical line's bytes and text). Candidates: the gfx11 name of the same opcode (LLVM's
    MIMG_Atomic_Renamed keeps it as an alias on gfx12) and the *_num_flt spellings of the fp atomics."""
    if ARCHES[arch] != "rdna4":
        return {}
    p11 = Prober("gfx1100", "MIMG", False)
    lines: dict[str, str] = {}   # canonical name -> a line LLVM prints for it
    cands: dict[str, set[str]] = {}
    for key, ops in encodings.items():
        p = Prober(arch, key, True)
        for op, e in ops.items():
            vals = p.base(int(op), e["sampler"], p.nfields if e["bvh"] else len(e["va0"]), dim=0)
            t = p.text(p.word(vals)) if not e["bvh"] else None
            if t:
                lines[e["name"]] = t
            old = probe_op(p11, int(op)) if key == "VIMAGE" else None
            names = {old["name"]} if old else set()
            names |= {e["name"].replace(x, x[:-4] + "_num_flt") for x in ("_min_flt", "_max_flt") if x in e["name"]}
            cands[e["name"]] = names - {e["name"]}
    out = {}
    for c, names in sorted(cands.items()):
        for a in sorted(names):
            if c not in lines:
                continue
            src = f"{lines[c]}\n{a}{lines[c][len(c):]}\n"
            p = subprocess.run(["llvm-mc-19", "-triple=amdgcn", f"-mcpu={arch}", "-show-encoding"], input=src,
                               capture_output=True, text=True)
            got = [ln.strip() for ln in p.stdout.splitlines() if "encoding" in ln]
            if not p.stderr and len(got) == 2 and got[0] == got[1]:
                out[a] = c
    return out


def asm_data(arch: str, encodings: dict) -> None:
    """Per entry `asm_data`: bit DMASK*4+D16*2+TFE set when llvm-mc-19 assembles that combination (with
    VDATA of the size LLVM asks for): the assembler's variants are not the disassembler's (gfx11 atomics
    with TFE, for one, assemble but never decode re-sized)."""
    for key, ops in encodings.items():
        lines, where = [], []
        for op, e in ops.items():
            if e["bvh"] or key.endswith("_NSA"):
                continue
            dim = next(d for d in range(8) if e["addr"][2 * d] and ("msaa" not in e["name"] or d >= 6))
            n = e["addr"][2 * dim]
            regs = [(20 + i * 8, c) for i, c in enumerate((n,) if key == "MIMG" else nsa_layout(key, n))]
            regs = [f"v[{r}:{r + c - 1}]" if c > 1 else f"v{r}" for r, c in regs]
            addr = regs[0] if len(regs) == 1 else "[" + ", ".join(regs) + "]"
            for dmask in range(16):
                for d16 in (0, 1):
                    for tfe in (0, 1):
                        k = 4 if e["gather"] else max(bin(dmask).count("1"), 1)
                        vd = (k + 1) // 2 + tfe if d16 else k + tfe
                        vdata = f"v[0:{vd - 1}]" if vd > 1 else "v0"
                        samp = ", s[12:15]" if e["sampler"] else ""
                        mods = (f" dmask:{dmask:#x}" if dmask else "") + f" dim:{dim}" + " tfe" * tfe + " d16" * d16
                        lines.append(f"{e['name']} {vdata}, {addr}, s[8:15]{samp}{mods}".replace(
                            f"dim:{dim}", f"dim:SQ_RSRC_IMG_{DIMS[dim]}"))
                        where.append((op, dmask * 4 + d16 * 2 + tfe))
        p = subprocess.run(["llvm-mc-19", "-triple=amdgcn", f"-mcpu={arch}", "-show-encoding"],
                           input="\n".join(lines) + "\n", capture_output=True, text=True)
        bad = {int(m) for m in re.findall(r"<stdin>:(\d+):", p.stderr)}
        for i, (op, bit) in enumerate(where):
            e = ops[op]
            e.setdefault("asm_data", 0)
            if i + 1 not in bad:
                e["asm_data"] |= 1 << bit
    nsa = encodings.get("MIMG_NSA", {})
    for op, e in nsa.items():   # the same instructions: the written VDATA does not depend on the address form
        e["asm_data"] = encodings["MIMG"][op].get("asm_data", 0)


def generate(arch: str) -> dict:
    family = ARCHES[arch]
    out: dict[str, dict] = {}
    for fmt_name in FAMILY_FORMATS[family]:
        for nsa in ((False, True) if fmt_name == "MIMG" else (True,)):
            key = fmt_name + ("_NSA" if fmt_name == "MIMG" and nsa else "")
            p = Prober(arch, fmt_name, nsa)
            ops = {}
            for op in range(256):
                e = probe_op(p, op)
                if e:
                    ops[str(op)] = e
            out[key] = ops
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="gfx1100")
    a = ap.parse_args(argv)
    encodings = generate(a.arch)
    asm_data(a.arch, encodings)
    doc = {"oracle": llvm_version(), "aliases": aliases(a.arch, encodings), "encodings": encodings}
    lines = ["{", f'"oracle": {json.dumps(doc["oracle"])},', f'"aliases": {json.dumps(doc["aliases"])},',
             '"encodings": {']
    encs = list(doc["encodings"].items())
    for i, (enc, ops) in enumerate(encs):
        lines.append(f'{json.dumps(enc)}: {{')
        items = list(ops.items())
        for j, (op, e) in enumerate(items):
            lines.append(f'{json.dumps(op)}: {json.dumps(e)}' + ("," if j < len(items) - 1 else ""))
        lines.append("}" + ("," if i < len(encs) - 1 else ""))
    lines += ["}", "}"]
    path = TABLE_DIR / f"{a.arch}_image.json"
    path.write_text("\n".join(lines) + "\n")
    print(f"{path}: " + ", ".join(f"{k}: {len(v)}" for k, v in doc["encodings"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
