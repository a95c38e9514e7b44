"""Generate gputwin/emu/amd/isa/tables/<arch>.json from LLVM 19, the oracle.

    python tools/gen_isa.py [--arch gfx1100]

For every encoding format of the arch's family (gputwin/emu/amd/isa/rdna3_formats.py, rdna4_formats.py;
table.ARCHES says which) the generator sweeps the opcode field
through LLVM's disassembler with recognisable register numbers in each operand field, and records
per opcode: the mnemonic, the operands in printed order with the field each comes from and its size in
dwords, whether a literal is always read, which source kinds each source field accepts, how constants
print (the operand's data type) and which modifiers the instruction has. What it trusts from LLVM: the
mnemonics, operand order/sizes and printing; what it does not take from LLVM: the field layouts
(the *_formats.py modules, hand-written from the ISA guides and checked by the differential tests).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gen_isa_probe import (FLAT_SEGMENTS, FORMATS, PROBES, PROBES_GFX12, TAIL, TOP9, find_base,  # noqa: E402
                           parse_reg, split_text, word_bytes)
from gen_isa_mods import probe_mods, probe_reject, probe_symbols, probe_types, probe_vopd  # noqa: E402
from llvm_oracle import Disassembler  # noqa: E402

from gputwin.emu.amd.isa.table import ARCHES, FAMILIES  # noqa: E402

SRC9 = {"src0", "src1", "src2"}
VGPR8 = {"vdst", "vsrc1", "addr", "data0", "data1", "data", "vaddr", "vdata"}
SGPR = {"sdst": 1, "ssrc0": 1, "ssrc1": 1, "sdata": 1, "soffset": 1, "saddr": 1, "sbase": 2, "srsrc": 4, "rsrc": 1}
ROLE = {"ssrc0": "src0", "ssrc1": "src1", "vsrc1": "src1", "srsrc": "srsrc", "rsrc": "srsrc"}


def field_reg(fmt: str, field: str, value: int):
    """The register a probe field value denotes, as ('v'|'s', number)."""
    if field in SRC9:
        return ("v", value - 256) if value >= 256 else ("s", value)
    if field in ("ssrc0", "ssrc1"):
        return ("s", value)
    if field in VGPR8:
        return ("v", value)
    if field in SGPR:
        return ("s", value * SGPR[field])
    return None


SOPP_SPECIAL = {"s_waitcnt": "waitcnt", "s_delay_alu": "delay_alu", "s_waitcnt_depctr": "depctr", "s_wait_alu": "depctr"}


def imm_kind(mnemonic: str, tok: str) -> str:
    """How a SOPK/SOPP 16-bit immediate prints: hwreg(...), sendmsg(...), a named packing, hex or decimal."""
    if mnemonic in SOPP_SPECIAL:
        return SOPP_SPECIAL[mnemonic]
    if tok.startswith(("hwreg(", "sendmsg(")):
        return tok.split("(")[0]
    if tok.startswith("0x"):
        return "hex"
    if tok.isdigit():
        return "dec"
    raise SystemExit(f"gen_isa: unknown immediate form {tok!r} of {mnemonic}")


def role_of(fmt: str, field: str, name: str) -> str:
    if fmt == "FLAT" and field == "addr":
        return "vaddr"
    if fmt == "FLAT" and field == "data":
        return "vdata"
    if fmt in ("MUBUF", "MTBUF") and field == "vdata":
        return "vdst" if "load" in name else "vdata"
    return ROLE.get(field, field)


class Sweeper:
    def __init__(self, arch: str):
        self.llvm = Disassembler(arch)
        self.llvm64 = Disassembler(arch, wave64=True)

    def dis(self, data: bytes, wave64: bool = False):
        size, text = (self.llvm64 if wave64 else self.llvm).dis(data)
        if not size or "/*Invalid" in text or "/*invalid" in text:
            return 0, None
        return size, text.split(" ; Warning")[0]

    def lo128_note(self, data: bytes, wave64: bool = False) -> bool:
        """Whether LLVM decodes the word, printing a VGPR above v127 with its "Lo128" register-class note."""
        size, text = (self.llvm64 if wave64 else self.llvm).dis(data)
        return bool(size) and "Lo128' register class" in text

    def wave64_slots(self, fmt_name: str, fixed: dict, e: dict, values: dict) -> dict[str, list]:
        """Slots that differ in wave64: {index: [dwords, ptype]} (lane masks become SGPR pairs and VCC_LO
        VCC; WMMA accumulators halve and read their constants differently)."""
        fmt = FORMATS[fmt_name]
        size, text = self.dis(word_bytes(fmt, fmt.pack(**values)) + TAIL, wave64=True)
        e64 = self.entry(fmt_name, fixed, text, size, values) if size else None
        if e64 is None or len(e64["slots"]) != len(e["slots"]):
            raise SystemExit(f"gen_isa: wave64 form of {e['name']} does not line up: {text!r}")
        e64["probe"] = values
        probe_types(_Wave64(self), fmt_name, e64)
        out = {}
        for i, (a, b) in enumerate(zip(e["slots"], e64["slots"])):
            if a[2] != b[2] or a[1] != b[1] or (a[5:6] or [None]) != (b[5:6] or [None]):
                out[str(i)] = [b[2], b[5] if len(b) > 5 else None]
        return out


    def entry(self, fmt_name: str, fixed: dict, text: str, size: int, values: dict) -> dict | None:
        fmt = FORMATS[fmt_name]
        mnemonic, ops, mods = split_text(text)
        base = mnemonic
        for suffix in ("_e32", "_e64"):
            base = base.removesuffix(suffix)
        slots = []
        for pos, tok in enumerate(ops):
            reg = parse_reg(tok)
            slot = None
            if reg:
                kind, num, count = reg
                half = kind == "v16"
                kind = "v" if half else kind
                for field, value in values.items():
                    if field in ("op", "seg") or field not in fmt.fields:
                        continue
                    fr = field_reg(fmt_name, field, value)
                    if fmt_name in ("VOP1", "VOP3", "VOP3SD") and field == "vdst" and kind == "s" and num == value:
                        slot = ["sdst", field, count, "s"]
                    elif fr == (kind, num) and (value != 0 or num == 0):
                        kindspec = "src" if field in SRC9 else ("ssrc" if field in ("ssrc0", "ssrc1") else kind)
                        slot = [role_of(fmt_name, field, mnemonic), field, count, kindspec + ("16" if half else "")]
                    if slot:
                        break
            elif tok in ("vcc_lo", "vcc", "exec_lo", "exec"):
                role = "sdst" if pos < 2 and fmt_name != "VOP2" or pos == 1 else "src2"
                if fmt_name == "VOPC":
                    role = "sdst"
                slot = [role, "=" + tok, 1 if tok.endswith("_lo") else 2, "imp"]
            elif tok == "0x12345678":
                slot = ["k" if fmt_name != "SOPK" else "src0", "=literal", 1, "lit"]
            elif tok == "off":
                slot = [{"FLAT": "saddr", "MUBUF": "vaddr", "MTBUF": "vaddr"}.get(fmt_name, "?"), "=off", 0, "off"]
            elif tok.startswith("sendmsg(") and fmt_name == "SOP1":
                slot = ["src0", "ssrc0", 1, "sendmsg"]
            elif fmt_name == "SMEM" and tok == hex(values["offset"]) and pos <= 1:
                slot = ["offset", "offset", 0, "offset"]   # gfx12 s_prefetch_*: the offset in second place
            elif fmt_name == "SMEM" and tok == str(values["sdata"]):
                slot = ["sdata", "sdata", 0, "imm"]   # s_atc_probe: decimal up to 64, else hex
            elif fmt_name in ("SOPK", "SOPP"):
                slot = ["simm16", "simm16", 0, imm_kind(mnemonic, tok)]
            if slot is None:
                return None
            slots.append(slot)
        if fmt_name == "SOPP" and slots and slots[0][3] in SOPP_SPECIAL.values():
            slots, mods = slots[:1], []
        return {"name": mnemonic, "op": base, "size": fmt.size, "literal": size > fmt.size, "slots": slots,
                "mods": mods}


class _Wave64:
    """The sweeper, disassembling as wave64."""

    def __init__(self, sw: Sweeper):
        self.sw = sw

    def dis(self, data: bytes):
        return self.sw.dis(data, wave64=True)

    def lo128_note(self, data: bytes) -> bool:
        return self.sw.lo128_note(data, wave64=True)


def select_arch(arch: str) -> str:
    """Point the probing helpers at this architecture's formats; returns its family."""
    family = ARCHES[arch]
    mod = FAMILIES[family]
    FORMATS.clear()
    FORMATS.update(mod.FORMATS)
    TOP9[:] = mod.TOP9
    FLAT_SEGMENTS.clear()
    FLAT_SEGMENTS.update(mod.FLAT_SEGMENTS)
    return family


def sweep(arch: str) -> dict:
    family = select_arch(arch)
    all_probes = PROBES_GFX12 if family == "rdna4" else PROBES
    sw = Sweeper(arch)
    tables: dict[str, dict] = {}
    for fmt_name, fmt in FORMATS.items():
        if fmt_name in ("VOP3SD", "VOPD"):
            continue
        segs = FLAT_SEGMENTS if fmt_name == "FLAT" else {None: fmt_name}
        for seg, enc in segs.items():
            table = tables.setdefault(enc, {})
            for op in range(1 << fmt.fields["op"][1]):
                fixed = {"op": op} if seg is None else {"op": op, "seg": seg}
                if TOP9[fmt.pack(**fixed) >> 23 & 0x1FF] != fmt_name:
                    continue
                probes = all_probes[fmt_name]
                if enc == "FLAT":   # FLAT proper has no SADDR: LLVM encodes 124 (off) there
                    probes = dict(probes, saddr=[124])
                found = find_base(sw.dis, fmt, fixed, probes)
                if not found and "gds" in fmt.fields:
                    # GWS, ds_ordered_count, ds_*_gs_reg_rtn exist only with GDS set (the `gds` operand)
                    found = find_base(sw.dis, fmt, dict(fixed, gds=1), probes)
                if not found:
                    continue
                values, size, text = found
                use_fmt = fmt_name
                if fmt_name == "VOP3":
                    sd_vals = dict(values, sdst=84)
                    sd_vals.pop("abs", None)
                    s2, t2 = sw.dis(word_bytes(FORMATS["VOP3SD"], FORMATS["VOP3SD"].pack(**sd_vals)) + TAIL)
                    if s2 and ("s84" in t2 or "s[84:85]" in t2):
                        use_fmt, values, size, text = "VOP3SD", sd_vals, s2, t2
                e = sw.entry(use_fmt, fixed, text, size, values)
                if e is None:
                    raise SystemExit(f"gen_isa: cannot map operands of {enc} op {op}: {text!r}")
                if fmt_name == "FLAT" and "atomic" in e["name"]:
                    # Atomics that return the old value (GLC=1; gfx12: TH_ATOMIC_RETURN) print a destination.
                    rvals = dict(values, **({"glc": 1} if "glc" in fmt.fields else {"th": 1}))
                    rs, rt = sw.dis(word_bytes(fmt, fmt.pack(**rvals)) + TAIL)
                    rtn = sw.entry(fmt_name, fixed, rt, rs, rvals) if rs else None
                    if rtn is None:
                        raise SystemExit(f"gen_isa: cannot map the returning form of {e['name']}: {rt!r}")
                    e["rtn_slots"] = rtn["slots"]
                e["enc"] = use_fmt if use_fmt == "VOP3SD" else enc
                e["probe"] = dict(values)
                probe_types(sw, use_fmt, e)
                probe_mods(sw, use_fmt, e)
                probe_reject(sw, use_fmt, e)
                del e["probe"]
                # wave64 forms: VALU lane masks, WMMA accumulators, gfx12 global_load_tr_* (half the VGPRs)
                w64 = sw.wave64_slots(use_fmt, fixed, e, values)
                if w64:
                    e["w64"] = w64
                    if use_fmt == "VOP3P":   # gfx12 wave64 v_swmmac_*: a 2-bit index_key, other refused bits
                        e64 = {"slots": e["slots"], "probe": dict(values)}
                        probe_mods(_Wave64(sw), use_fmt, e64)
                        probe_reject(_Wave64(sw), use_fmt, e64)
                        if e64["mods"] != e["mods"]:
                            e["w64_mods"] = e64["mods"]
                        if e64.get("reject", 0) != e.get("reject", 0):
                            e["w64_reject"] = e64.get("reject", 0)
                table[str(op)] = e
    tables.update(probe_vopd(sw))
    return tables, probe_symbols(sw, tables)


def llvm_version() -> str:
    out = subprocess.run(["llvm-mc-19", "--version"], capture_output=True, text=True).stdout
    return next((ln.strip() for ln in out.splitlines() if "version" in ln), "llvm 19")


def write_table(arch: str, generator: str, tables: dict, symbols: dict) -> pathlib.Path:
    """Write tables/<arch>.json, one instruction per line so the file stays diffable and readable."""
    out = pathlib.Path(__file__).resolve().parent.parent / "gputwin/emu/amd/isa/tables" / f"{arch}.json"
    doc = {"arch": arch, "generator": generator, "oracle": llvm_version(), "symbols": symbols,
           "encodings": tables}
    text = json.dumps(doc, indent=None, separators=(",", ":"), sort_keys=True).replace('},"', '},\n"')
    out.write_text(text + "\n")
    print(f"wrote {out} ({sum(len(t) for t in tables.values())} instructions, {len(text) // 1024} KiB)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="gfx1100")
    args = ap.parse_args()
    write_table(args.arch, "tools/gen_isa.py", *sweep(args.arch))

if __name__ == "__main__":
    main()
