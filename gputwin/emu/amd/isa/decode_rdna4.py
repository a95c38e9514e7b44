"""RDNA4 (gfx12) memory formats for the decoder: SMEM with a 24-bit offset, the 96-bit VFLAT/VGLOBAL/
VSCRATCH and VBUFFER. Everything else decodes as on RDNA3 (decode.py).

Cache policy: `extra["th"]` (temporal hint, 3 bits) and `extra["scope"]` (0 CU, 1 SE, 2 DEV, 3 SYS);
an atomic returns the old value when TH bit 0 is set (TH_ATOMIC_RETURN). Offsets: signed 24-bit for all
of SMEM, FLAT/GLOBAL/SCRATCH and buffers. VBUFFER: `srsrc` is an SGPR quad at any multiple of 4 (the
RSRC field is the SGPR number), `soffset` an SGPR or null, MTBUF's format in `extra["format"]` (buffer
and tbuffer instructions share the VBUFFER format; Inst.encoding is "MUBUF" for both).
"""
from __future__ import annotations

from .decode import Decoder, _buffer_vaddr, _Illegal, _sext, _tfe_fits, _vaddr64
from .inst import Inst
from .rdna4_formats import FLAT_SEGMENTS, FORMATS

_F = FORMATS


class Rdna4Decoder(Decoder):
    def _decode(self, b: bytes) -> Inst:
        fname = self.top9[int.from_bytes(b[:4], "little") >> 23]
        if fname in ("FLAT", "MUBUF"):
            if len(b) < 12:
                raise _Illegal(f"truncated {fname} instruction")
            word = int.from_bytes(b[:12], "little")
            return self._vflat(word) if fname == "FLAT" else self._vbuffer(word)
        return super()._decode(b)

    @staticmethod
    def _cpol(fmt, w: int) -> dict[str, int]:
        return {"th": fmt.get(w, "th"), "scope": fmt.get(w, "scope")}

    def _smem(self, w: int) -> Inst:
        fmt = _F["SMEM"]
        info = self._info("SMEM", fmt.get(w, "op"), w)
        return Inst(info.op, "SMEM", info.opcode, 8, self._operands(info.slots, w, None),
                    offset=_sext(fmt.get(w, "offset"), 24), extra=self._cpol(fmt, w))

    def _vflat(self, w: int) -> Inst:
        fmt = _F["FLAT"]
        enc = FLAT_SEGMENTS.get(fmt.get(w, "seg"))
        if enc is None:
            raise _Illegal("VFLAT segment 3 is reserved")
        info = self._info(enc, fmt.get(w, "op"), w)
        extra = self._cpol(fmt, w)
        slots = info.rtn_slots if extra["th"] & 1 and info.rtn_slots else info.slots
        saddr, skip = fmt.get(w, "saddr"), set()
        if enc != "FLAT" and saddr == 124:
            skip.add("saddr")
        if enc == "SCRATCH":
            extra["sve"] = fmt.get(w, "sve")
            if not extra["sve"]:
                skip.add("vaddr")
                if fmt.get(w, "addr"):   # unused ADDR bits, kept so that encoding is exact
                    extra["addr"] = fmt.get(w, "addr")
        ops = self._operands(slots, w, None, skip)
        if enc == "GLOBAL" and saddr == 124:
            _vaddr64(ops)
        return Inst(info.op, enc, info.opcode, 12, ops, offset=_sext(fmt.get(w, "offset"), 24), extra=extra)

    def _vbuffer(self, w: int) -> Inst:
        fmt = _F["MUBUF"]
        info = self._info("MUBUF", fmt.get(w, "op"), w)
        ops = self._operands(info.slots, w, None)
        offen, idxen, tfe = fmt.get(w, "offen"), fmt.get(w, "idxen"), fmt.get(w, "tfe")
        _buffer_vaddr(ops, offen, idxen, fmt.get(w, "vaddr"))
        _tfe_fits(ops, tfe)
        extra = {"offen": offen, "idxen": idxen, "tfe": tfe, "format": fmt.get(w, "format"), **self._cpol(fmt, w)}
        return Inst(info.op, "MUBUF", info.opcode, 12, ops, offset=_sext(fmt.get(w, "offset"), 24), extra=extra)
