"""SOPP: program control (branches, s_endpgm, s_barrier, s_trap, s_sendmsg) and the accepted no-ops."""
from __future__ import annotations


from gputwin.emu.amd.control import BARRIER, END, Diverge, before_code
from gputwin.emu.amd.hwreg import MSG_DEALLOC_VGPRS
from gputwin.errors import GpuFault, IllegalInstruction

TRAP_LLVM_DEBUGTRAP = 3   # AMDGPUUsage "Trap Handler ABI": s_trap 3 is a no-op unless a debugger is attached

# Scheduling hints and cache controls: nothing to model for a functional emulator.
NOPS = {"s_nop", "s_waitcnt", "s_delay_alu", "s_clause", "s_waitcnt_depctr", "s_set_inst_prefetch_distance",
         "s_sleep", "s_setprio", "s_icache_inv", "s_ttracedata", "s_ttracedata_imm", "s_wait_event",
         "s_wakeup", "s_incperflevel", "s_decperflevel", "s_wait_idle"}


def _nonzero_words(index):
    """Per wave: is the lane mask in SGPR `index` (a pair in wave64) non-zero? Reads the packed words."""
    def f(g):
        w = g.s[index]
        return (w | g.s[index + 1]) != 0 if g.wave64 else w != 0
    return f


def _taken(op):
    """Per-wave branch condition of an s_cbranch_* as a function of the group."""
    vcc, exe = _nonzero_words(106), _nonzero_words(126)
    return {
        "s_cbranch_scc0": lambda g: ~g.scc,
        "s_cbranch_scc1": lambda g: g.scc,
        "s_cbranch_vccz": lambda g: ~vcc(g),
        "s_cbranch_vccnz": vcc,
        "s_cbranch_execz": lambda g: ~exe(g),
        "s_cbranch_execnz": exe,
    }.get(op)


# the SOPP branches, each with the condition it tests (None: always taken)
BRANCHES = {"s_branch": None, "s_cbranch_scc0": "scc0", "s_cbranch_scc1": "scc1", "s_cbranch_vccz": "vccz",
            "s_cbranch_vccnz": "vccnz", "s_cbranch_execz": "execz", "s_cbranch_execnz": "execnz"}


def branch_target(pc: int, inst) -> int:
    """Byte offset an SOPP branch at `pc` jumps to: the next instruction plus 4 x the signed SIMM16."""
    imm = (inst.simm16 or 0) & 0xFFFF
    return pc + 4 + 4 * ((imm ^ 0x8000) - 0x8000)


def build(inst):
    op = inst.op
    imm = inst.simm16 if inst.simm16 is not None else 0
    if op in NOPS:
        return lambda g: None
    if op == "s_endpgm":
        return lambda g: END
    if op == "s_barrier":
        return lambda g: BARRIER
    rel = branch_target(0, inst)
    if op == "s_branch":
        def branch(g):
            if g.pc + rel < 0:
                raise before_code(g, g.pc + rel)
            return g.pc + rel
        return branch
    cond = _taken(op)
    if cond is not None:
        def cbranch(g):
            taken = cond(g)
            if g.pc + rel < 0 and taken.any():
                raise before_code(g, g.pc + rel)
            return Diverge.branch(taken, g.pc + rel)
        return cbranch
    if op == "s_sendmsg":
        if imm & 0xFF != MSG_DEALLOC_VGPRS:
            raise IllegalInstruction(f"s_sendmsg: message {imm & 0xFF} is not modelled")
        return lambda g: None
    if op == "s_trap" and imm & 0xFF == TRAP_LLVM_DEBUGTRAP:
        return lambda g: None   # no debugger attached: the runtime's trap handler returns at once
    if op == "s_trap":
        def trap(g):
            raise GpuFault(f"s_trap {imm & 0xFF}", kind="trap", trap_id=imm & 0xFF)
        return trap
    if op == "s_round_mode":
        def h(g):
            g.mode = (g.mode & ~0xF) | (imm & 0xF)
        return h
    if op == "s_denorm_mode":
        def h(g):
            g.mode = (g.mode & ~0xF0) | ((imm & 0xF) << 4)
        return h
    return None



