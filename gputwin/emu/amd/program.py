"""Decoded code objects: each instruction decoded once into a handler closure, then cached.

A Program maps byte offsets to steps (handler, next offset, Inst). Instructions are decoded lazily the
first time control reaches them, so code given only as an address (no known length) works, and bytes
past the kernel (padding, data) are never decoded unless executed. Code given as bytes is cached by
content; code in memory by location, reused while the bytes decoded from it are unchanged.
"""
from __future__ import annotations

from collections import OrderedDict

from gputwin.emu.amd import cdna3, gfx12, gpr_idx, lds, mubuf, salu, sanitize, smem, sopk, sopp, vmem
from gputwin.emu.amd.native import tier
from gputwin.errors import GpuFault, IllegalInstruction

_VALU_ENCODINGS = {"VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P", "VOPD", "VINTERP"}
_BUILDERS = {
    "SOP1": salu.build_sop1, "SOP2": salu.build_sop2, "SOPK": sopk.build, "SOPC": salu.build_sopc,
    "SOPP": sopp.build, "SMEM": smem.build, "DS": lds.build,
    "FLAT": vmem.build, "GLOBAL": vmem.build, "SCRATCH": vmem.build,
    "MUBUF": mubuf.build, "MTBUF": mubuf.build,
}
MAX_CACHED = 64


def _raiser(exc: GpuFault):
    def h(g):
        raise exc
    return h


def _valu_builder():
    """The VALU teammate's entry point: a per-instruction builder if offered, else execute(). An import
    failure is kept and reported by every VALU instruction (fail closed, the rest keeps working)."""
    try:
        from gputwin.emu.amd import valu
    except Exception as e:   # noqa: BLE001 - any failure to load VALU semantics is reported, not fatal
        return e
    prepare = getattr(valu, "prepare", None)
    if prepare is not None:
        return prepare
    return lambda inst: (lambda g: valu.execute(g, inst))


_VALU = _valu_builder()


def build_handler(inst, arch: str = "gfx1100", *, strict: bool = False):
    """handler(group) -> control for one decoded instruction; unmodelled ones raise when executed.
    strict=True raises their GpuFault now instead (the conformance report probes with it)."""
    try:
        return _build(inst, arch)
    except GpuFault as e:
        if strict:
            raise
        return _raiser(e)


def _build(inst, arch: str = "gfx1100"):
    if arch in gfx12.ARCHES:   # RDNA4: its own instructions, the rest under their gfx11 names
        h = gfx12.build(inst)
        if h is not None:
            return h
        inst = gfx12.as_gfx11(inst)
    elif arch == cdna3.ARCH:   # CDNA3: VGPR indexing mode around everything (gpr_idx.py), then _build_cdna3
        h = gpr_idx.build_scalar(inst)
        return h if h is not None else gpr_idx.wrap(inst, _build_cdna3(inst), _build_cdna3)
    if inst.encoding in _VALU_ENCODINGS:
        if isinstance(_VALU, Exception):
            raise IllegalInstruction(f"{inst.op}: VALU semantics failed to load: {_VALU}")
        return _VALU(inst)
    build = _BUILDERS.get(inst.encoding)
    h = build(inst) if build is not None else None
    if h is None:
        raise IllegalInstruction(f"{inst.op} ({inst.encoding}) is not modelled")
    return h


def _build_cdna3(inst):
    """CDNA3: AGPRs, MFMA, SDWA, GFX9 v_cmpx; the rest as gfx11 (isa/cdna3_names.py)."""
    h = cdna3.handler(inst, _build)
    return h if h is not None else cdna3.zero_high(inst, _build(inst))


_VALU_VGPR_ONLY = {"VOP1", "VOP2", "VOP3", "VOP3SD", "VOP3P"}


def exec_inert(inst) -> bool:
    """Does `inst` leave a wave whose EXEC is all zero untouched? (VALU writing only VGPRs under EXEC,
    vector memory and LDS accesses, scheduling hints.) Lane-mask, SGPR and EXEC writers do not qualify."""
    if inst is None:
        return False
    enc = inst.encoding
    if enc in _VALU_VGPR_ONLY:
        sdst, vdst = inst.operands.get("sdst"), inst.operands.get("vdst")
        return (sdst is None or sdst.index == 124) and vdst is not None and vdst.kind == "vgpr" \
            and inst.op != "v_writelane_b32"
    if enc == "VOPD":
        return True
    if enc in ("DS", "GLOBAL", "FLAT", "SCRATCH"):
        return inst.op not in ("ds_append", "ds_consume")
    return enc == "SOPP" and (inst.op in sopp.NOPS or inst.op in gfx12.NOPS)


class Program:
    """Steps by byte offset. `code` is the instruction bytes: a bytes object, or a live uint8 view of the
    mapping the code sits in (then `snapshot()` / `matches()` tell whether it changed); None for a
    pre-decoded program."""

    def __init__(self, code, arch: str = "gfx1100", insts=None, *, wave64: bool = False, sanitize: bool = False):
        self.code, self.arch, self.wave64 = code, arch, wave64
        self.sanitize = sanitize         # memory instructions check their accesses first (emu/amd/sanitize.py)
        self.steps: dict[int, tuple] = {}
        self.decoded_end = 0             # end of the furthest instruction decoded so far
        self.origin = None               # the mapping array live code was taken from (program_at)
        self._seen = b""                 # code bytes [0, len) as they were when last checked
        self._inert: dict[tuple[int, int], int | None] = {}
        self.loops = tier.Loops(self) if tier.applies(arch, sanitize) else None   # hot loops -> native code
        for off, inst in insts or ():
            self.steps[off] = (self._handler(inst, off), off + inst.size, inst)

    def step(self, pc: int):
        st = self.steps.get(pc)
        if st is None:
            st = self.steps[pc] = self._decode(pc)
            self.decoded_end = max(self.decoded_end, st[1])
        return st

    def matches(self) -> bool:
        """Do the code bytes decoded so far still hold what was decoded (live code only)?"""
        n = len(self._seen)
        return bytes(self.code[:n]) == self._seen

    def snapshot(self) -> None:
        """Remember the decoded code bytes, for matches() at the next dispatch."""
        self._seen = bytes(self.code[:self.decoded_end])

    def inert_run(self, start: int, end: int) -> int | None:
        """Instructions from `start` to `end` when the path there is code that waves with EXEC = 0 may
        execute without effect (so an s_cbranch_execz to `end` need not split the group), else None.
        The path is straight-line code that may follow s_branch (LLVM's else blocks in a loop end in a
        branch back to the loop header); any conditional branch ends it."""
        key = (start, end)
        if key not in self._inert:
            count, pc = 0, start
            while pc != end and count < 256:
                fn, nxt, inst = self.step(pc)
                if inst is not None and inst.op == "s_branch":
                    nxt = sopp.branch_target(pc, inst)
                elif not exec_inert(inst) or nxt > end >= pc:
                    break
                count, pc = count + 1, nxt
            self._inert[key] = count if pc == end else None
        return self._inert[key]

    def _decode(self, pc: int):
        if self.code is None or not 0 <= pc < len(self.code) or pc % 4:
            return (_raiser(IllegalInstruction(f"no instruction at code offset {pc:#x}")), pc, None)
        from gputwin.emu.amd.isa import decode
        try:
            inst = decode(self.code, self.arch, pc, wave64=self.wave64, strict=False)
        except GpuFault as e:
            e.pc = None          # the decoder reports a code offset; the executor fills the address
            return (_raiser(e), pc, None)
        except Exception as e:  # the decoder's own errors: report the raw bytes, never crash
            raw = bytes(self.code[pc:pc + 8]).hex()
            return (_raiser(IllegalInstruction(f"undecodable instruction bytes {raw}: {e}")), pc, None)
        return (self._handler(inst, pc), pc + inst.size, inst)

    def _handler(self, inst, pc: int):
        h = build_handler(inst, self.arch)
        if self.sanitize:
            return sanitize.wrap(inst, h, self.arch, self.wave64)
        return h if self.loops is None else self.loops.watch(pc, inst, h)


_CACHE: "OrderedDict[tuple, Program]" = OrderedDict()


def _cached(key, make) -> Program:
    p = _CACHE.get(key)
    if p is None:
        p = _CACHE[key] = make()
        if len(_CACHE) > MAX_CACHED:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return p


def program_for(code: bytes, arch: str = "gfx1100", wave64: bool = False, sanitize: bool = False) -> Program:
    """The cached Program for these code bytes (decoded lazily, once)."""
    return _cached((arch, wave64, sanitize, bytes(code)),
                   lambda: Program(bytes(code), arch, wave64=wave64, sanitize=sanitize))


def program_at(data, start: int, arch: str = "gfx1100", wave64: bool = False, sanitize: bool = False) -> Program:
    """The cached Program for code at byte `start` of the mapping backed by uint8 array `data`.

    Decoding reads the live mapping lazily; a cached Program is reused while the bytes it decoded are
    unchanged (checked per dispatch, cost proportional to the kernel's size, not the mapping's)."""
    key = (arch, wave64, sanitize, id(data), start)
    p = _CACHE.get(key)
    if p is not None and p.origin is data and p.matches():
        _CACHE.move_to_end(key)
        return p
    _CACHE.pop(key, None)
    p = _cached(key, lambda: Program(data[start:], arch, wave64=wave64, sanitize=sanitize))
    p.origin = data                  # the mapping's array: id() alone may be reused after an unmap
    return p
