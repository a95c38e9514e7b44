import numpy as np
import pytest

from gputwin.abi import nv_methods as m
from gputwin.abi import nv_qmd as q
from tests.emu.nv.frontend.rig import MEM_VA, Rig, inc, sem_acquire, sem_release

S = m.SUBCHANNEL_COMPUTE
EMPTY = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry empty()\n{\n\tret;\n}\n"


def program(r, off=0x8000, text=EMPTY, name="empty"):
    blob = name.encode() + b"\0" + text.encode() + b"\0"
    r.mem[off:off + len(blob)] = np.frombuffer(blob, np.uint8)
    return MEM_VA + off


def qmd(prog_va, cb_va, grid=(1, 1, 1), block=(32, 1, 1)):
    d = q.QMD().set("QMD_MAJOR_VERSION", 3).set("CONSTANT_BUFFER_VALID0", 1)
    for i, f in enumerate(("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH")):
        d.set(f, grid[i]).set(f"CTA_THREAD_DIMENSION{i}", block[i])
    d.set("PROGRAM_ADDRESS_LOWER", prog_va & 0xFFFFFFFF).set("PROGRAM_ADDRESS_UPPER", prog_va >> 32)
    d.set("CONSTANT_BUFFER_ADDR_LOWER0", cb_va & 0xFFFFFFFF).set("CONSTANT_BUFFER_SIZE_SHIFTED40", 0x300 >> 4)
    return d


def put_qmd(r, d, off):
    r.mem[off:off + q.QMD_SIZE] = np.frombuffer(d.to_bytes(), np.uint8)
    return MEM_VA + off


def launch(r, qmd_va):
    return (inc(S, m.NVC56F_SET_OBJECT, r.gpu.profile.compute_class) + inc(S, m.COMPUTE_SEND_PCAS_A, qmd_va >> 8)
            + inc(S, m.COMPUTE_SEND_SIGNALING_PCAS2_B, m.PCAS2_B_ACTION_INVALIDATE_COPY_SCHEDULE))


def test_qmd_release_semaphores_and_dependent_qmd_chain():
    r = Rig()
    prog = program(r)
    first = qmd(prog, MEM_VA + 0x4000)
    first.set("RELEASE0_ENABLE", 1).set("RELEASE0_ADDRESS_LOWER", MEM_VA + 0x100).set("RELEASE0_PAYLOAD_LOWER", 41)
    first.set("RELEASE0_STRUCTURE_SIZE", q.RELEASE_STRUCTURE_SIZE_ONE_WORD)
    second = qmd(prog, MEM_VA + 0x4000)
    second.set("RELEASE1_ENABLE", 1).set("RELEASE1_ADDRESS_LOWER", MEM_VA + 0x110).set("RELEASE1_PAYLOAD64B", 1)
    second.set("RELEASE1_PAYLOAD_LOWER", 1).set("RELEASE1_PAYLOAD_UPPER", 2)
    second.set("RELEASE1_STRUCTURE_SIZE", q.RELEASE_STRUCTURE_SIZE_FOUR_WORDS)
    second_va = put_qmd(r, second, 0x2100)
    first.set("DEPENDENT_QMD0_ENABLE", 1).set("DEPENDENT_QMD0_ACTION", q.DEPENDENT_QMD_ACTION_QMD_SCHEDULE)
    first.set("DEPENDENT_QMD0_POINTER", second_va >> 8)
    r.submit(launch(r, put_qmd(r, first, 0x2000)))
    assert r.u32(0x100) == 41 and r.u64(0x110) == 2 << 32 | 1 and r.u64(0x118) == r.gpu.timestamp_ns()
    assert r.gpu.stats.launches == 2


def test_report_semaphore():
    r = Rig()
    r.submit(inc(S, m.NVC56F_SET_OBJECT, r.gpu.profile.compute_class)
             + inc(S, m.COMPUTE_SET_REPORT_SEMAPHORE_A, 0, MEM_VA + 0x40, 99, m.REPORT_SEMAPHORE_D_STRUCTURE_SIZE_ONE_WORD))
    assert r.u32(0x40) == 99


@pytest.mark.parametrize("edit,msg", [
    (lambda d: d.set("QMD_MAJOR_VERSION", 4), "version 04_00; only 03_00"),
    (lambda d: d.set("CTA_THREAD_DIMENSION0", 2048), "1..1024 threads"),
    (lambda d: d.set("CONSTANT_BUFFER_VALID0", 0), "no constant buffer 0"),
    (lambda d: d.set("PROGRAM_ADDRESS_LOWER", MEM_VA + 0x9000), "not an emulated-SM program"),
])
def test_bad_qmds_fail_closed(edit, msg):
    r = Rig()
    r.gpu.listener = lambda e: None
    d = qmd(program(r), MEM_VA + 0x4000)
    edit(d)
    r.submit(launch(r, put_qmd(r, d, 0x2000)))
    assert r.ch.stopped and msg in str(r.ch.error)


def test_semaphore_handshake_between_two_channels():
    """One channel waits on a value the other releases (compute -> copy ordering across channels)."""
    r = Rig()
    other = r.gpu.create_channel(0x30000, 16, np.zeros(0x200, np.uint8))
    r.gpu.mem.map(0x30000, 0x1000)
    r.submit(sem_acquire(MEM_VA, 1, m.SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ) + sem_release(MEM_VA + 8, 2))
    assert r.u32(8) == 0
    pb = MEM_VA + 0x6000
    words = np.array(sem_release(MEM_VA, 1), "<u4")
    r.mem[0x6000:0x6000 + words.nbytes] = words.view(np.uint8)
    e0, e1 = m.gp_entry(pb, len(words))
    r.gpu.mem.write(0x30000, np.array([e0, e1], "<u4").tobytes())
    other.userd.view(np.uint32)[m.USERD_GP_PUT // 4] = 1
    r.gpu.doorbell(other.token)
    assert r.u32(0) == 1 and r.u32(8) == 2
