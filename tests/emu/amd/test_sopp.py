"""Program control: branches (uniform and divergent between waves), s_endpgm, s_trap, messages, no-ops."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.errors import GpuFault, IllegalInstruction
from tests.emu.amd.helpers import run


def test_uniform_branch_skips_code():
    g = run("s_mov_b32 s0, 1\ns_branch skip\ns_mov_b32 s0, 2\nskip:\ns_mov_b32 s1, 3")
    assert g.s[0].tolist() == [1, 1] and g.s[1].tolist() == [3, 3]


@pytest.mark.parametrize("branch,taken_when", [
    ("s_cbranch_scc0", lambda scc, vcc, ex: not scc), ("s_cbranch_scc1", lambda scc, vcc, ex: scc),
    ("s_cbranch_vccz", lambda scc, vcc, ex: vcc == 0), ("s_cbranch_vccnz", lambda scc, vcc, ex: vcc != 0),
    ("s_cbranch_execz", lambda scc, vcc, ex: ex == 0), ("s_cbranch_execnz", lambda scc, vcc, ex: ex != 0)])
def test_conditional_branches_per_wave_then_reconverge(branch, taken_when):
    # four waves with every combination: SCC, VCC and EXEC differ per wave, so the group splits
    scc = [True, False, True, False]
    vcc = [0, 1, 0, 0x80000000]
    ex = np.zeros((4, 32), bool)
    ex[0], ex[3, 31] = True, True
    g = run(f"s_mov_b32 s0, 1\n{branch} skip\ns_mov_b32 s0, 2\nskip:\ns_mov_b32 s1, 3", n=4,
            sgprs={106: vcc}, scc=scc, exec_mask=ex)
    exec_words = [int(w) for w in g.s[126]]
    expect = [1 if taken_when(scc[i], vcc[i], exec_words[i]) else 2 for i in range(4)]
    assert g.s[0].tolist() == expect
    assert g.s[1].tolist() == [3, 3, 3, 3]


def test_divergent_loop_trip_counts_per_wave():
    # each wave loops s2 times: waves leave the loop at different iterations and end together
    g = run("s_mov_b32 s0, 0\nloop:\ns_add_u32 s0, s0, 5\ns_sub_u32 s2, s2, 1\ns_cmp_lg_u32 s2, 0\n"
            "s_cbranch_scc1 loop", n=3, sgprs={2: [1, 4, 2]})
    assert g.s[0].tolist() == [5, 20, 10]


def test_trap_raises_gpu_fault_with_pc_and_wave():
    with pytest.raises(GpuFault, match="s_trap 2") as e:
        run("s_nop 0\ns_trap 2", n=2)
    assert e.value.kind == "trap" and e.value.pc == 0x1000 + 4 and e.value.wave == 0


def test_accepted_hints_are_no_ops():
    g = run("s_waitcnt lgkmcnt(0)\ns_delay_alu instid0(VALU_DEP_1)\ns_clause 0x1\ns_waitcnt_vscnt null, 0x0\n"
            "s_sleep 1\ns_setprio 2\ns_icache_inv\ns_sendmsg sendmsg(MSG_DEALLOC_VGPRS)\ns_mov_b32 s0, 9")
    assert g.s[0].tolist() == [9, 9]


def test_unmodelled_message_is_illegal_and_named():
    with pytest.raises(IllegalInstruction, match="message 1"):
        run("s_sendmsg sendmsg(MSG_INTERRUPT)")


def test_s_code_end_is_not_executable():
    with pytest.raises(IllegalInstruction, match="s_code_end"):
        run("s_code_end")


@pytest.mark.parametrize("text", ["s_branch -3", "s_cmp_eq_u32 0, 0\ns_cbranch_scc1 -4"])
def test_branch_before_the_first_instruction_faults_instead_of_ending(text):
    # negative code offsets are END/BARRIER to the executor: such a jump used to end or park the wave
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.amd.isa import assemble
    from gputwin.emu.memory import AddressSpace
    from gputwin.errors import MemoryFault
    code = assemble(text + "\ns_endpgm", "gfx1100")
    with pytest.raises(MemoryFault, match="instruction fetch from unmapped address") as e:
        run_dispatch(AddressSpace(), Dispatch(0x1000, code=code, block=(32, 1, 1)))
    assert e.value.address == 0x1000 - 8 and e.value.wave == 0   # both target 8 bytes before the code


def test_branch_into_mapped_code_before_the_dispatch_entry_runs_it():
    # clang -O0 places called helpers before the kernel: the program is decoded from the mapping's start
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.amd.isa import assemble
    from gputwin.emu.memory import AddressSpace
    mem = AddressSpace()
    code = assemble("s_mov_b32 s0, 1\ns_endpgm\ns_branch -3\ns_endpgm", "gfx1100")   # 0x1008 -> 0x1000
    mem.map(0x1000, 0x1000)[:len(code)] = np.frombuffer(code, np.uint8)
    counters = run_dispatch(mem, Dispatch(0x1008, block=(32, 1, 1)))
    assert counters.wave_insts == 3            # s_branch, then s_mov_b32 and s_endpgm before the entry


@pytest.mark.parametrize("trap_id", [0, 1, 2, 4, 7, 0xFF])
def test_every_trap_id_but_debugtrap_is_a_trap_fault_naming_it(trap_id):
    with pytest.raises(GpuFault, match=rf"^s_trap {trap_id} \(") as e:
        run(f"s_trap {trap_id}", n=1)
    assert e.value.kind == "trap" and e.value.trap_id == trap_id


def test_debugtrap_without_a_debugger_continues():
    g = run("s_mov_b32 s0, 1\ns_trap 3\ns_mov_b32 s0, 2", n=2)   # llvm.debugtrap
    assert g.s[0].tolist() == [2, 2]
