"""PM4 facts pinned to Linux amdgpu/nvd.h (opcodes, RELEASE_MEM bit positions) and the VGT_EVENT_TYPE
enumeration (BOTTOM_OF_PIPE_TS = 0x28, CS_DONE = 0x2F, as in the gfx10+ register enum headers)."""
from gputwin.abi import amd_pm4 as p


def test_event_types_a_compute_queue_uses_match_vgt_event_type_enum():
    assert (p.CACHE_FLUSH_TS, p.CACHE_FLUSH, p.CS_PARTIAL_FLUSH, p.CACHE_FLUSH_AND_INV_TS_EVENT,
            p.CACHE_FLUSH_AND_INV_EVENT, p.BOTTOM_OF_PIPE_TS, p.CS_DONE) == (
        0x04, 0x06, 0x07, 0x14, 0x16, 0x28, 0x2F)


def test_opcodes_match_nvd_h():
    assert {name: p.OPCODE_NAMES.get(op) for name, op in [
        ("NOP", 0x10), ("DISPATCH_DIRECT", 0x15), ("WRITE_DATA", 0x37), ("WAIT_REG_MEM", 0x3C),
        ("INDIRECT_BUFFER", 0x3F), ("COPY_DATA", 0x40), ("EVENT_WRITE", 0x46), ("RELEASE_MEM", 0x49),
        ("ACQUIRE_MEM", 0x58), ("SET_SH_REG", 0x76), ("SET_UCONFIG_REG", 0x79)]} == {
        name: name for name in ("NOP", "DISPATCH_DIRECT", "WRITE_DATA", "WAIT_REG_MEM", "INDIRECT_BUFFER",
                                "COPY_DATA", "EVENT_WRITE", "RELEASE_MEM", "ACQUIRE_MEM", "SET_SH_REG",
                                "SET_UCONFIG_REG")}


def test_release_mem_control_bits_match_nvd_h_shifts():
    assert (p.PACKET3_RELEASE_MEM_DST_SEL.shift, p.PACKET3_RELEASE_MEM_INT_SEL.shift,
            p.PACKET3_RELEASE_MEM_DATA_SEL.shift, p.PACKET3_RELEASE_MEM_CACHE_POLICY.shift) == (16, 24, 29, 25)
    assert (p.PACKET3_RELEASE_MEM_EXECUTE, p.PACKET3_RELEASE_MEM_GCR_SEQ, p.PACKET3_RELEASE_MEM_GCR_GL2_WB) == (
        1 << 28, 1 << 22, 1 << 21)
    assert p.PACKET3_COMPUTE(p.PACKET3_NOP, 0) == 0xC0001002
