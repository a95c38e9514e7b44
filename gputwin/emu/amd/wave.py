"""Wave state for the RDNA3 emulator: a WaveGroup is every wave of a dispatch that shares a PC.

All waves of a group execute each instruction together on numpy arrays shaped (waves, lanes), so one
Python-level step advances thousands of lanes. The group owns the register files of its waves:
- VGPRs: one uint32 (n, L) array per register, allocated on first write (unwritten registers read 0).
  Stored arrays are never modified in place (writes build a new array), so callers may keep or alias
  what `vgpr()` returns, and `set_vgpr` may keep the array it is given; both are marked read-only. A
  register may be a broadcast view (a value per wave or lane, or one for all): do not assume contiguity.
- The scalar operand space: a uint32 (128, n) array, one row (the values of all waves) per operand
  encoding (0..105 SGPRs, 106/107 VCC, 108..123 TTMP, 124 NULL, 125 M0, 126/127 EXEC). EXEC is also
  kept unpacked as a bool (n, L) mask; both forms are updated together on every write.
- sgpr() also reads 251 vccz, 252 execz, 253 scc and the apertures 235..238 (src_shared_base...).
- SCC as a bool (n,) array and MODE as one uint32 (uniform within a group; groups only merge when equal).
- insts: an int64 (n,) count of the instructions each wave has executed (the watchdog's per-wave budget).

This module is the contract with the VALU semantics (docs/contracts.md); keep its API stable.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu import hostmem  # noqa: F401 - tunes malloc for big arrays on import
from gputwin.errors import IllegalInstruction

NUM_SGPR_SLOTS = 128
NUM_VGPR_SLOTS = 515   # 0..255 VGPRs; 256..511 CDNA3 AGPRs a0..a255, 512..514 its SDWA scratch (emu/amd/cdna3.py)
VCC, NULL, M0, EXEC = 106, 124, 125, 126
SRC_VCCZ, SRC_EXECZ, SRC_SCC = 251, 252, 253
APERTURES = (235, 236, 237, 238)  # src_shared_base/limit, src_private_base/limit


class WaveGroup:
    """n waves x L lanes that execute the same instruction; see the module docstring."""

    __slots__ = ("n", "lanes", "wave64", "mode", "pc", "ctx", "waves", "wg", "s", "v", "scc",
                 "_exec", "exec_full", "exec_count", "_masks", "_exec_words", "insts", "_written")

    def __init__(self, ctx, waves: np.ndarray, wg: np.ndarray, *, wave64: bool, mode: int, pc: int,
                 exec_mask: np.ndarray | None = None):
        self.ctx = ctx                      # per-dispatch state the core owns (memory, LDS, apertures)
        self.waves = np.asarray(waves, np.int64)   # global wave id of each wave (for faults, scratch)
        self.wg = np.asarray(wg, np.int64)         # flat workgroup index of each wave (LDS, barriers)
        self.n = int(self.waves.size)
        self.wave64 = bool(wave64)
        self.lanes = 64 if wave64 else 32
        self.mode = int(mode)
        self.pc = int(pc)                   # byte offset from the dispatch's code address
        self.s = np.zeros((NUM_SGPR_SLOTS, self.n), np.uint32)
        self.v: list[np.ndarray | None] = [None] * NUM_VGPR_SLOTS
        self._written: set[int] = set()     # VGPRs ever written: the only ones take/merge move
        self.scc = np.zeros(self.n, bool)
        self.insts = np.zeros(self.n, np.int64)     # instructions each wave has executed (the watchdog's budget)
        self._masks: dict[int, np.ndarray] = {}
        self.set_exec(np.zeros((self.n, self.lanes), bool) if exec_mask is None else exec_mask)

    # --- EXEC ----------------------------------------------------------------------------------
    @property
    def exec(self) -> np.ndarray:
        return self._exec

    def set_exec(self, mask: np.ndarray) -> None:
        """Set EXEC from a bool (n, L) mask (the group takes ownership of a full-shape bool array)."""
        mask = _own_mask(mask, self.n, self.lanes)
        self._unpacked_exec(mask)
        words = _pack(mask)
        self.s[EXEC] = words[:, 0]
        self.s[EXEC + 1] = words[:, 1] if self.wave64 else 0

    def _unpacked_exec(self, mask: np.ndarray) -> None:
        """Take a read-only bool (n, L) mask as EXEC (the SGPR words are the caller's business)."""
        self._exec = mask
        self._exec_words = None             # EXEC as select words (_select_words), made on first masked write
        self.exec_count = int(np.count_nonzero(mask))
        self.exec_full = self.exec_count == mask.size

    # --- VGPRs ---------------------------------------------------------------------------------
    def vgpr(self, reg: int) -> np.ndarray:
        a = self.v[reg]
        if a is None:                       # unwritten: zeros, as a broadcast (no memory to fill)
            a = self.v[reg] = np.broadcast_to(_ZERO, (self.n, self.lanes))
        return a

    def set_vgpr(self, reg: int, value, mask: np.ndarray | None = None) -> None:
        """Write lanes where `mask` (default EXEC) is set; value broadcasts to (n, L) by numpy's rules:
        (n, L), (n, 1) one value per wave, (L,) one value per lane, or a scalar.

        Values are bit patterns: 4-byte arrays (int32, float32) are reinterpreted, others converted with
        wrap-around. The group takes ownership of a full (n, L) uint32 array: the caller must not modify
        it later. Passing `group.exec` itself as the mask is as fast as passing None."""
        value = np.asarray(value)
        if value.dtype != np.uint32:
            value = value.view(np.uint32) if value.dtype.itemsize == 4 and value.dtype.kind != "b" \
                else value.astype(np.uint32)
        if mask is None or mask is self._exec:
            if self.exec_full:
                if value.shape != (self.n, self.lanes):
                    # a per-wave, per-lane or uniform value stays a broadcast view of a private copy (it may
                    # be a view of the SGPR file, which changes under it)
                    value = np.broadcast_to(np.array(value), (self.n, self.lanes))
                self.put_vgpr(reg, value)
                return
            if self.exec_count == 0:
                return
            words = self._exec_words
            if words is None:
                words = self._exec_words = self._select_words()
            if words is not False:
                # a bitwise select: where() branches per element, ~4x slower when lanes of waves disagree
                old = self.vgpr(reg)
                out = np.bitwise_and(np.bitwise_xor(value, old), words)
                self.put_vgpr(reg, np.bitwise_xor(out, old, out=out))
                return
            mask = self._exec
        self.put_vgpr(reg, np.where(mask, value, self.vgpr(reg)))

    def _select_words(self):
        """EXEC as uint32 all-ones/zero words for masked writes, or False when where() is the faster
        select: when nearly every wave is wholly on or off (if (tid < k) on whole waves), its branches
        follow long runs and it makes one pass where the bitwise select makes three."""
        lo = self.s[EXEC]
        whole = (lo == 0) | (lo == 0xFFFFFFFF)
        if self.wave64:
            whole &= self.s[EXEC + 1] == lo
        if 8 * (self.n - int(np.count_nonzero(whole))) <= self.n:
            return False
        return _words(self._exec)

    def put_vgpr(self, reg: int, arr: np.ndarray) -> None:
        """Store a full (n, L) uint32 array as VGPR `reg` (every lane; the group takes ownership)."""
        if not 0 <= reg < NUM_VGPR_SLOTS:
            raise IllegalInstruction(f"VGPR v{reg} out of range")
        if arr.flags.writeable:
            arr.flags.writeable = False
        self.v[reg] = arr
        self._written.add(reg)

    # --- scalar operand space ------------------------------------------------------------------
    def sgpr(self, index: int) -> np.ndarray:
        """uint32 (n,) value of scalar operand `index` (also 251 vccz, 252 execz, 253 scc, 235..238 apertures)."""
        if index < NUM_SGPR_SLOTS:
            return self.s[index] if index != NULL else np.zeros(self.n, np.uint32)
        if index == SRC_SCC:
            return self.scc.astype(np.uint32)
        if index == SRC_EXECZ:
            return (~self._exec.any(axis=1)).astype(np.uint32)
        if index == SRC_VCCZ:
            return (~self.lane_mask(VCC).any(axis=1)).astype(np.uint32)
        if index in APERTURES:
            return np.full(self.n, self.ctx.aperture(index), np.uint32)
        raise IllegalInstruction(f"scalar operand {index} is not modelled")

    def set_sgpr(self, index: int, value) -> None:
        if index == NULL:
            return
        if not 0 <= index < NUM_SGPR_SLOTS:
            raise IllegalInstruction(f"scalar destination {index} is not writable")
        self.s[index] = value
        self._masks.pop(index, None)
        self._masks.pop(index - 1, None)
        if index >= EXEC:                   # the words stand as written (wave32: EXEC_HI reads 0)
            if not self.wave64:
                self.s[EXEC + 1] = 0
            mask = _unpack(self.s[EXEC:EXEC + 2].T, self.lanes)
            mask.flags.writeable = False
            self._unpacked_exec(mask)

    def set_sgpr_rows(self, rows, values: np.ndarray) -> None:
        """Write whole rows of the scalar operand space at once (rows < 128, NULL excluded; values (k, n));
        lane masks and EXEC are re-derived as set_sgpr does for each."""
        self.s[list(rows)] = values
        self._masks.clear()
        if EXEC in rows or EXEC + 1 in rows:
            self.set_sgpr(EXEC, self.s[EXEC].copy())

    def sgpr64(self, index: int) -> np.ndarray:
        """uint64 (n,) value of the scalar pair starting at `index`."""
        if index == NULL:
            return np.zeros(self.n, np.uint64)
        lo = self.s[index].astype(np.uint64)
        return lo | (self.s[index + 1].astype(np.uint64) << np.uint64(32))

    def set_sgpr64(self, index: int, value) -> None:
        value = np.asarray(value, np.uint64)
        if index == NULL:
            return
        self.s[index + 1] = (value >> np.uint64(32)).astype(np.uint32)
        self._masks.pop(index + 1, None)
        self.set_sgpr(index, (value & np.uint64(0xFFFFFFFF)).astype(np.uint32))

    # --- lane masks (VCC, SDST, EXEC) ----------------------------------------------------------
    def lane_mask(self, index: int) -> np.ndarray:
        """bool (n, L): bits of one SGPR (wave32) or an SGPR pair (wave64), e.g. VCC (106)."""
        if index == EXEC:
            return self._exec
        m = self._masks.get(index)
        if m is None:
            if index == NULL:
                return np.zeros((self.n, self.lanes), bool)
            words = self.s[index:index + (2 if self.wave64 else 1)].T
            m = _unpack(words, self.lanes)
            m.flags.writeable = False
            self._masks[index] = m
        return m

    def set_lane_mask(self, index: int, mask: np.ndarray) -> None:
        """Write a bool (n, L) lane mask into SGPR `index` (a pair in wave64); 126 is EXEC. Ownership of a
        full-shape bool array passes to the group, as with set_vgpr."""
        if index == EXEC:
            self.set_exec(mask)
            return
        if index == NULL:
            return
        mask = _own_mask(mask, self.n, self.lanes)
        words = _pack(mask)
        self.s[index] = words[:, 0]
        if self.wave64:
            self.s[index + 1] = words[:, 1]
            self._masks.pop(index + 1, None)
        self._masks.pop(index - 1, None)
        self._masks[index] = mask

    # --- splitting and merging (the core's) ----------------------------------------------------
    def take(self, sel: np.ndarray) -> "WaveGroup":
        """A new group made of the waves selected by `sel` (bool (n,) or indices); same PC and MODE."""
        idx = np.flatnonzero(sel) if sel.dtype == bool else sel
        g = WaveGroup.__new__(WaveGroup)
        g.ctx, g.wave64, g.lanes, g.mode, g.pc = self.ctx, self.wave64, self.lanes, self.mode, self.pc
        g.waves, g.wg = self.waves.take(idx), self.wg.take(idx)
        g.n = int(g.waves.size)
        g.s = _take_waves(self.s, idx)
        g.v = [None] * NUM_VGPR_SLOTS
        for r in self._written:
            g.v[r] = _take_rows(self.v[r], idx, self.lanes)
        g._written = set(self._written)
        g.scc = self.scc.take(idx)
        g.insts = self.insts.take(idx)
        g._masks = {}
        g.set_exec(self._exec.take(idx, axis=0))
        return g

    def can_merge(self, other: "WaveGroup") -> bool:
        return self.pc == other.pc and self.mode == other.mode and self.wave64 == other.wave64

    @staticmethod
    def merge(groups: list["WaveGroup"]) -> "WaveGroup":
        """One group holding the waves of all `groups` (which must agree by can_merge)."""
        if len(groups) == 1:
            return groups[0]
        first = groups[0]
        g = WaveGroup.__new__(WaveGroup)
        g.ctx, g.wave64, g.lanes, g.mode, g.pc = first.ctx, first.wave64, first.lanes, first.mode, first.pc
        g.waves = np.concatenate([x.waves for x in groups])
        g.wg = np.concatenate([x.wg for x in groups])
        g.n = int(g.waves.size)
        g.s = np.concatenate([x.s for x in groups], axis=1)
        live = set().union(*(x._written for x in groups))
        g.v = [None] * NUM_VGPR_SLOTS
        g._written = live
        for r in live:
            g.v[r] = _ro(np.concatenate([x.vgpr(r) for x in groups]))
        g.scc = np.concatenate([x.scc for x in groups])
        g.insts = np.concatenate([x.insts for x in groups])
        g._masks = {}
        g.set_exec(np.concatenate([x.exec for x in groups]))
        return g


_ZERO = np.zeros((), np.uint32)


def compact(a):
    """The smallest array that broadcasts to the same values as register array `a`: a 0-d array when `a`
    is a broadcast of one value, an (n, 1) column when it is a broadcast of one value per wave, else `a`.
    Looks only at strides (free); VALU and memory fast paths use it to work per wave rather than per lane."""
    st = getattr(a, "strides", None)
    if st is None or a.ndim != 2 or st[1] != 0 or a.size == 0:
        return a
    return a[0, 0] if st[0] == 0 else a[:, :1]


def _take_rows(a: np.ndarray, idx: np.ndarray, lanes: int) -> np.ndarray:
    """Rows `idx` of VGPR array `a`, keeping a broadcast (one value per wave, per lane, or for all) a
    broadcast rather than materialising it."""
    st = a.strides
    if st[1] == 0:                                 # one value per wave, or one for all
        col = a[:, :1].take(idx, axis=0) if st[0] else a[:1, :1]
        return np.broadcast_to(col, (idx.size, lanes))
    if st[0] == 0:                                 # one value per lane, the same in every wave
        return np.broadcast_to(a[0], (idx.size, lanes))
    return _ro(a.take(idx, axis=0))


def _take_waves(s: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The (128, n) SGPR file's columns `idx`. numpy moves one element at a time along the last axis, so
    for big groups only the rows a kernel ever wrote (a few dozen of the 128; the rest are zero) move."""
    if s.shape[1] < 512:
        return s.take(idx, axis=1)
    live = np.flatnonzero(s.any(axis=1))
    out = np.zeros((s.shape[0], idx.size), s.dtype)
    out[live] = s.take(live, axis=0).take(idx, axis=1)
    return out


def _own_mask(mask, n: int, lanes: int) -> np.ndarray:
    """A read-only contiguous bool (n, L) mask: the caller's array itself when it already is one (the
    caller hands it over and must not modify it), else a copy."""
    if not (isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == (n, lanes)
            and mask.flags.c_contiguous):
        mask = np.array(np.broadcast_to(mask, (n, lanes)), dtype=bool)
    mask.flags.writeable = False
    return mask


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _words(mask: np.ndarray) -> np.ndarray:
    """bool mask -> uint32 0xFFFFFFFF where set, 0 elsewhere (same shape)."""
    w = np.asarray(mask, bool).astype(np.uint32)
    return np.negative(w, out=w)


def _pack(mask: np.ndarray) -> np.ndarray:
    """bool (n, 32|64) -> uint32 (n, 1|2), lane 0 in bit 0 (rows are whole bytes: pack the flat array)."""
    n = mask.shape[0]
    return np.packbits(np.ascontiguousarray(mask).reshape(-1), bitorder="little").view("<u4").reshape(n, -1)


def _unpack(words: np.ndarray, lanes: int) -> np.ndarray:
    """uint32 (n, >=1) -> bool (n, lanes)."""
    w = np.ascontiguousarray(words[:, :lanes // 32], dtype="<u4")
    return np.unpackbits(w.reshape(-1).view(np.uint8), bitorder="little").view(bool).reshape(w.shape[0], lanes)
