"""The native tier: hot loops of pure wave-local integer code run as machine code (docs/emulator-jit.md).

Loops watches the back-edges of a Program (the only instructions it wraps); once one has run HOT times
it finds the loop's region (region.py), compiles it (codegen.py, llvmlite, cached process-wide) and
installs an entry step at the loop header whose handler returns a Native control. The executor hands
such a control to Native.run with each wave's remaining instruction budget and accounts the counts
it returns, so g.insts, wave_insts, lane_ops and steps are what the numpy tier reports for the same
waves. GPUTWIN_JIT=0 turns the tier off; GPUTWIN_JIT=strict makes a compile failure raise (the test
suite's setting) where production runs the numpy tier and says so once on stderr.
"""
from __future__ import annotations

import ctypes
import os
from collections import OrderedDict
import sys
import threading
import time
from typing import TYPE_CHECKING

import numpy as np

from gputwin.emu.amd import cdna3
from gputwin.emu.amd.salu import set_scc
from gputwin.emu.amd.sopp import BRANCHES, branch_target

if TYPE_CHECKING:
    from .codegen import Layout

HOT = 256                  # back-edge executions (per Program and branch) before a loop is compiled
PER_CALL = 1 << 22         # wave-instructions one native call may run: the wall clock is read between calls
MIN_PER_WAVE = 1 << 12
MAX_CACHED = 256           # compiled regions kept process-wide (installed ones live on with their Program)

_CACHE_LOCK = threading.Lock()   # _COMPILED is looked up, filled and trimmed by every thread that runs code
_COMPILED: "OrderedDict[tuple, Compiled]" = OrderedDict()
_warned: set[str] = set()
compile_seconds: list[float] = []   # per compiled region (bench/bench_emu.py reports them)


def mode() -> str:
    return os.environ.get("GPUTWIN_JIT", "1")


def applies(arch: str, sanitize: bool) -> bool:
    """Does the tier serve programs of this kind? (not gfx942, not under the memory sanitizer)"""
    return mode() != "0" and arch != cdna3.ARCH and not sanitize


class Native:
    """A handler's control: run this compiled region for the group (the executor calls run())."""

    __slots__ = ("code",)

    def __init__(self, code: "Compiled"):
        self.code = code

    def run(self, g, budget: np.ndarray):
        """Run every wave of `g` from its PC (the header) until it leaves the region or spends its budget.
        Returns (instructions per wave, exit pc per wave, lane-ops)."""
        return self.code.run(g, np.clip(budget, 0, max(PER_CALL // max(g.n, 1), MIN_PER_WAVE)))


class Compiled:
    def __init__(self, ir: str, layout: Layout):
        from gputwin.compiler.llvm import emit_object, load_object
        self._engine, addr = load_object(emit_object(ir, "cpu"), "region")
        self.fn = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * 6)(addr)
        self.layout = layout
        lay = layout
        self._s_rows = list(lay.sgprs)
        self._s_out = [lay.sgprs.index(i) for i in lay.sgprs_written]
        self._v_out = [(lay.vgprs.index(r), r) for r in lay.vgprs_written]

    def run(self, g, budget: np.ndarray):
        lay, n = self.layout, g.n
        sbuf = g.s[self._s_rows]
        vbuf = np.empty((len(lay.vgprs), n, g.lanes), np.uint32)
        for k, r in enumerate(lay.vgprs):
            vbuf[k] = g.vgpr(r)
        scc = g.scc.astype(np.uint8)
        count = np.array(budget, np.int64)
        exit_pc, lanes = np.empty(n, np.int64), np.empty(n, np.int64)
        self.fn(n, vbuf.ctypes.data, sbuf.ctypes.data, scc.ctypes.data, count.ctypes.data, exit_pc.ctypes.data,
                lanes.ctypes.data)
        if self._s_out:
            g.set_sgpr_rows(lay.sgprs_written, sbuf[self._s_out])
        for k, r in self._v_out:
            g.put_vgpr(r, vbuf[k])
        if lay.scc_written:
            set_scc(g, scc.view(bool))
        return count, exit_pc, int(lanes.sum())


def compiled(insts: dict, header: int, wave64: bool, mode: int | None = None) -> Compiled:
    """The machine code for region `insts` entered at `header` (cached by its instructions and the MODE
    bits its float instructions are compiled for, None when it has none)."""
    key = (wave64, header, mode, tuple((pc, repr(inst)) for pc, inst in sorted(insts.items())))
    with _CACHE_LOCK:
        code = _COMPILED.get(key)
        if code is not None:
            _COMPILED.move_to_end(key)
            return code
    t = time.perf_counter()
    from . import codegen      # the IR generator loads with the first hot loop, not with every emulator
    ir, layout = codegen.render(insts, header, wave64, "region", mode)
    code = Compiled(ir, layout)
    compile_seconds.append(time.perf_counter() - t)
    with _CACHE_LOCK:             # another thread may have compiled it meanwhile: keep one
        code = _COMPILED.setdefault(key, code)
        _COMPILED.move_to_end(key)
        if len(_COMPILED) > MAX_CACHED:
            _COMPILED.popitem(last=False)
    return code


class Loops:
    """One Program's hot-loop watch: wraps its backward branches, compiles a loop once it is hot."""

    def __init__(self, program):
        self.program = program

    def watch(self, pc: int, inst, handler):
        """`handler`, counting its executions when `inst` is a backward branch."""
        if inst is None or inst.encoding != "SOPP" or inst.op not in BRANCHES:
            return handler
        target = branch_target(pc, inst)
        if target > pc:
            return handler
        hits = 0

        def counted(g):
            nonlocal hits
            hits += 1
            if hits >= HOT:
                self._heat(pc, target, handler, g.mode)
            return handler(g)
        return counted

    def _heat(self, pc: int, header: int, handler, mode_reg: int) -> None:
        """Compile the loop `header`..`pc` (for the hot group's MODE register `mode_reg` when it holds f32
        instructions) and install its entry at the header."""
        from . import fops, region
        steps = self.program.steps
        steps[pc] = (handler,) + steps[pc][1:]           # stop counting: one attempt per loop
        insts = region.find(self.program, header, pc, fops.runs_under(mode_reg))
        if insts is None:
            return
        floats = region.uses_floats(insts)
        entry = self._entry(insts, header, mode_reg & fops.MODE_BITS if floats else None)
        if entry is None:
            return
        st = self.program.step(header)
        if not floats:
            steps[header] = (lambda g: entry,) + st[1:]
            return
        # a float region is compiled per MODE (its flushing and IEEE rules are compile-time choices): a
        # group under another MODE gets its own version, or the numpy tier when f32 does not round to
        # nearest even there (or that compile failed)
        plain, by_mode = st[0], {mode_reg & fops.MODE_BITS: entry}

        def enter(g):
            key = g.mode & fops.MODE_BITS
            e = by_mode.get(key)
            if e is None:
                e = by_mode[key] = (self._entry(insts, header, key) if fops.runs_under(g.mode) else None) or False
            return e or plain(g)
        steps[header] = (enter,) + st[1:]

    def _entry(self, insts: dict, header: int, fmode: int | None) -> Native | None:
        """The Native control of region `insts` for MODE bits `fmode`, or None when compiling failed."""
        try:
            return Native(compiled(insts, header, self.program.wave64, fmode))
        except Exception as e:  # noqa: BLE001 - a bug, but the numpy tier runs the same bits
            if mode() == "strict":
                raise
            msg = f"gputwin: native tier: compiling the loop at code offset {header:#x} failed ({e}); " \
                  f"running it on the numpy tier"
            if msg not in _warned:
                _warned.add(msg)
                print(msg, file=sys.stderr)
            return None
