"""Generate gputwin/emu/amd/isa/tables/gfx942.json (CDNA3) from LLVM 19, the oracle.

    python tools/gen_isa_cdna3.py [--arch gfx942]

The same sweep as tools/gen_isa.py (and its probing helpers), with the GFX9 formats of
gputwin/emu/amd/isa/cdna3_formats.py and what GFX9 adds:
- AGPRs: LLVM prints `a5` / `a[0:3]`; the probe maps them like VGPRs and records the slots whose
  registers are AGPRs in the entry's `agpr` list (slot indices) when the encoding fixes it
  (v_accvgpr_read/write/mov); the ACC / ACC_CD bits that choose it per word are the decoder's.
- VOP3P-MAI (VOP3P opcodes >= 0x40): probed with the MAI field names; `mods` records cbsz/abid/blgp.
- SDWA (src0 = 249) on VOP1/VOP2/VOPC: `"sdwa": true` when LLVM decodes it.
- SMEM probes with IMM=1 and SOE=1 (immediate offset plus an SGPR), FLAT's "off" SADDR is 0x7F.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import struct
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import gen_isa  # noqa: E402
import gen_isa_mods  # noqa: E402
from gen_isa_probe import FORMATS, TAIL, find_base, word_bytes  # noqa: E402
from gen_isa_mods import probe_mods, probe_reject, probe_symbols, probe_types  # noqa: E402

from gputwin.emu.amd.isa.cdna3_formats import SADDR_OFF, SRC_SDWA  # noqa: E402

V = lambda n: 256 + n   # noqa: E731
PROBES = {
    "SOP2": {"sdst": [20, 0], "ssrc0": [40, 0], "ssrc1": [60, 0]},
    "SOP1": {"sdst": [20, 0], "ssrc0": [40, 0]},
    "SOPC": {"ssrc0": [40, 0], "ssrc1": [60, 0]},
    "SOPK": {"sdst": [20, 0], "simm16": [0x1234, 0]},
    "SOPP": {"simm16": [0x12, 0]},
    "SMEM": {"sdata": [20, 0], "sbase": [20, 0], "offset": [0x10, 0], "soffset": [60, 0], "imm": [1], "soe": [1, 0]},
    "VOP1": {"vdst": [10, 0], "src0": [V(20), 40, 0]},
    "VOP2": {"vdst": [10, 0], "src0": [V(20), 40, 0], "vsrc1": [60, 0]},
    "VOPC": {"src0": [V(20), 40, 0], "vsrc1": [60, 0]},
    "VOP3": {"vdst": [10, 0], "src0": [V(20), 40, 0], "src1": [V(60), 80, 0], "src2": [V(120), 64, 0]},
    "VOP3P": {"vdst": [10, 0], "src0": [V(20), 40, 0], "src1": [V(60), 80, 0], "src2": [V(120), 64, 0],
              "op_sel_hi": [3], "op_sel_hi2": [1]},
    "VOP3PMAI": {"vdst": [8, 0], "src0": [V(20), 40, 0], "src1": [V(60), 80, 0], "src2": [V(120), 64, 0]},
    "DS": {"addr": [10, 0], "data0": [60, 0], "data1": [120, 0], "vdst": [180, 0]},
    "FLAT": {"addr": [10, 0], "data": [60, 0], "saddr": [20, SADDR_OFF, 0], "vdst": [120, 0], "sve": [1, 0]},
    "MUBUF": {"vaddr": [10, 0], "vdata": [60, 0], "srsrc": [5, 0], "soffset": [40, 128]},
    "MTBUF": {"vaddr": [10, 0], "vdata": [60, 0], "srsrc": [5, 0], "soffset": [40, 128], "format": [1]},
}
# GFX9 modifier bits (no DLC; SC0/SC1/NT on gfx940; MAI's own fields).
MOD_BITS = {
    "VOP3": gen_isa_mods._MOD_BITS["VOP3"], "VOP3SD": gen_isa_mods._MOD_BITS["VOP3SD"],
    "VOP3P": gen_isa_mods._MOD_BITS["VOP3P"],
    "VOP3PMAI": [("cbsz", 1), ("abid", 1), ("blgp", 1)],
    "SMEM": [("glc", 1), ("nv", 1)],
    "FLAT": [("glc", 1), ("slc", 1), ("sc1", 1), ("sve", 1), ("acc", 1)],
    "DS": [("gds", 1), ("acc", 1)],
    "MUBUF": [("glc", 1), ("slc", 1), ("sc1", 1), ("offen", 1), ("idxen", 1), ("acc", 1)],
    "MTBUF": [("glc", 1), ("slc", 1), ("sc1", 1), ("offen", 1), ("idxen", 1), ("acc", 1)],
}
SKIPPED: list[str] = []
_AREG = re.compile(r"(^|[\s,\-|(\[])a(\d+|\[\d+:\d+\])")


class Cdna3Sweeper(gen_isa.Sweeper):
    def entry(self, fmt_name, fixed, text, size, values):
        """AGPR operands (a5, a[0:3]) map like VGPRs; their slot indices go to e["agpr"].
        s_set_gpr_idx_on's SSRC1 field is its VGPR-indexing mode mask, printed gpr_idx(SRC0,...)."""
        _, ops, _ = gen_isa.split_text(text)
        if fmt_name == "SOPC" and ops and (ops[-1].startswith("gpr_idx(") or ops[-1] == hex(values["ssrc1"])):
            e = self.entry(fmt_name, fixed, text[:text.rindex(",")], size, values)
            if e is not None:
                e["slots"].append(["src1", "ssrc1", 0, "gpr_idx"])
            return e
        agpr = [i for i, tok in enumerate(ops) if re.match(r"^[-|]*a(\d|\[)", tok)]
        e = super().entry(fmt_name, fixed, _AREG.sub(r"\1v\2", text), size, values)
        if e is not None and agpr:
            e["agpr"] = agpr
        return e

    def dis(self, data, wave64=False):
        # gfx942 is wave64 only: LLVM's gfx942 disassembler already prints lane masks as pairs.
        size, text = super().dis(data, False)
        return size, text


def _is_mai(sw, op: int) -> bool:
    """VOP3P opcodes of the MAI half (MFMA, SMFMAC, v_accvgpr_read/write), told by their mnemonic."""
    mai = FORMATS["VOP3PMAI"]
    for extra in ({"src1": V(60), "src2": V(120)}, {}):   # v_accvgpr_read/write take one source
        _, text = sw.dis(word_bytes(mai, mai.pack(op=op, vdst=8, src0=V(20), **extra)) + TAIL)
        if text:
            return text.startswith(("v_mfma", "v_smfmac", "v_accvgpr"))
    return False


def sweep(arch: str) -> tuple[dict, dict]:
    gen_isa.select_arch(arch)
    gen_isa_mods._MOD_BITS = MOD_BITS   # the shared probe reads its modifier list from here
    sw = Cdna3Sweeper(arch)
    tables: dict[str, dict] = {}
    for fmt_name, fmt in FORMATS.items():
        if fmt_name == "VOP3SD":
            continue
        segs = gen_isa.FLAT_SEGMENTS if fmt_name == "FLAT" else {None: fmt_name}
        for seg, enc in segs.items():
            table = tables.setdefault("VOP3P" if enc == "VOP3PMAI" else enc, {})
            for op in range(1 << fmt.fields["op"][1]):
                if fmt_name.startswith("VOP3P") and _is_mai(sw, op) != (fmt_name == "VOP3PMAI"):
                    continue
                fixed = {"op": op} if seg is None else {"op": op, "seg": seg}
                if gen_isa.TOP9[fmt.pack(**fixed) >> 23 & 0x1FF] != ("VOP3P" if fmt_name == "VOP3PMAI" else fmt_name):
                    continue
                probes = PROBES[fmt_name]
                if enc == "FLAT":
                    probes = dict(probes, saddr=[0])
                found = find_base(sw.dis, fmt, fixed, probes)
                if not found:
                    continue
                values, size, text = found
                use_fmt = fmt_name
                if fmt_name == "VOP3":
                    sd_vals = dict(values, sdst=84)
                    s2, t2 = sw.dis(word_bytes(FORMATS["VOP3SD"], FORMATS["VOP3SD"].pack(**sd_vals)) + TAIL)
                    if s2 and ("s84" in t2 or "s[84:85]" in t2):
                        use_fmt, values, size, text = "VOP3SD", sd_vals, s2, t2
                e = sw.entry(use_fmt, fixed, text, size, values)
                if e is None:   # forms whose operands the probe cannot map: left out (and printed)
                    SKIPPED.append(text)
                    continue
                if fmt_name == "FLAT" and "atomic" in e["name"]:
                    rvals = dict(values, glc=1)
                    rs, rt = sw.dis(word_bytes(fmt, fmt.pack(**rvals)) + TAIL)
                    rtn = sw.entry(fmt_name, fixed, rt, rs, rvals) if rs else None
                    if rtn is None:
                        raise SystemExit(f"gen_isa_cdna3: cannot map the returning form of {e['name']}: {rt!r}")
                    e["rtn_slots"] = rtn["slots"]
                e["enc"] = use_fmt if use_fmt == "VOP3SD" else "VOP3P" if use_fmt == "VOP3PMAI" else enc
                e["probe"] = dict(values)
                probe_types(sw, use_fmt, e)
                probe_mods(sw, use_fmt, e)
                probe_reject(sw, use_fmt, e)
                if use_fmt == "VOP3PMAI":
                    e["mai"] = True
                if fmt_name in ("VOP1", "VOP2", "VOPC"):
                    sdwa = sw.dis(word_bytes(fmt, fmt.pack(**dict(values, src0=SRC_SDWA))) +
                                  struct.pack("<II", 0x00060614 if fmt_name != "VOPC" else 0x00060014, 0))
                    if sdwa[0]:
                        e["sdwa"] = True
                del e["probe"]
                table[str(op)] = e
    return tables, probe_symbols(sw, tables)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="gfx942")
    args = ap.parse_args()
    tables, symbols = sweep(args.arch)
    for skipped in SKIPPED:
        print(f"left out (operands not mapped): {skipped}")
    gen_isa.write_table(args.arch, "tools/gen_isa_cdna3.py", tables, symbols)

if __name__ == "__main__":
    main()
