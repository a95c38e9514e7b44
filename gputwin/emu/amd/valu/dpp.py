"""DPP16 and DPP8 source lane movement (applies to the src0 VGPR of VOP1/VOP2/VOPC/VOP3 forms).

DPP16 (rows of 16 lanes; DPP_CTRL): 0x000-0x0FF quad_perm, 0x101-0x10F row_shl, 0x111-0x11F row_shr,
0x121-0x12F row_ror, 0x140 row_mirror, 0x141 row_half_mirror, 0x150-0x15F row_share,
0x160-0x16F row_xmask. A lane whose source lane is outside its row, or is inactive when FI=0, is
"invalid": with BOUND_CTRL it reads 0, else the lane does not write at all. Lanes in rows cleared in
ROW_MASK or banks (lane % 16 // 4) cleared in BANK_MASK never write.
DPP8: lane i reads lane (i & ~7) + sel[i & 7]; an inactive source lane reads 0 unless FI=1.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction


def _dpp16_sources(ctrl: int, lanes: int) -> np.ndarray:
    """Source lane per lane, -1 where out of the row (invalid)."""
    i = np.arange(lanes)
    row, r = i & ~15, i & 15
    if ctrl <= 0xFF:
        sel = np.array([(ctrl >> (2 * k)) & 3 for k in range(4)])
        return (i & ~3) + sel[i & 3]
    n = ctrl & 0xF
    kind = ctrl & ~0xF
    if kind == 0x100 and n:
        return np.where(r + n < 16, i + n, -1)
    if kind == 0x110 and n:
        return np.where(r - n >= 0, i - n, -1)
    if kind == 0x120 and n:
        return row + ((r - n) & 15)
    if ctrl == 0x140:
        return row + (15 - r)
    if ctrl == 0x141:
        return (i & ~7) + (7 - (i & 7))
    if kind == 0x150:
        return row + n
    if kind == 0x160:
        return row + (r ^ n)
    raise IllegalInstruction(f"DPP_CTRL {ctrl:#x} is not valid on gfx11")


def apply(group, dpp, value):
    """Move (n, L) src0 bits across lanes; returns (moved value, bool (n, L) lanes allowed to write)."""
    lanes, exec_ = group.lanes, group.exec
    value = np.broadcast_to(value, (group.n, lanes))
    if dpp.kind == "dpp8":
        i = np.arange(lanes)
        src = (i & ~7) + np.asarray(dpp.sel)[i & 7]
        moved = value[:, src]
        if not dpp.fi:
            moved = np.where(exec_[:, src], moved, 0).astype(value.dtype)
        return moved, np.ones((group.n, lanes), bool)
    src = _dpp16_sources(dpp.ctrl, lanes)
    valid = np.broadcast_to(src >= 0, (group.n, lanes))
    srcc = np.maximum(src, 0)
    moved = value[:, srcc]
    if not dpp.fi:
        valid = valid & exec_[:, srcc]
    i = np.arange(lanes)
    enabled = (((dpp.row_mask >> (i >> 4)) & 1) == 1) & (((dpp.bank_mask >> ((i >> 2) & 3)) & 1) == 1)
    write = np.broadcast_to(enabled, (group.n, lanes))
    if dpp.bound_ctrl:
        moved = np.where(valid, moved, 0).astype(value.dtype)
    else:
        write = write & valid
    return moved, write
