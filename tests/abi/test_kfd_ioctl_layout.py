"""kfd_ioctl structs and requests added after uapi 1.11, pinned to the field lists of the Linux header
(include/uapi/linux/kfd_ioctl.h, KFD_IOCTL_MINOR_VERSION 15, plus the 1.16 CONTIGUOUS flag).

The host's own header (1.11) cannot check these, so test_kfd_ioctl.py skips them; the expected offsets
below were worked out by hand from the header's member order and C alignment rules, not from our module."""
import ctypes

import pytest

from gputwin.abi import ioctl
from gputwin.abi import kfd_ioctl as k


def _layout(struct):
    return [(name, getattr(struct, name).offset, ctypes.sizeof(ctype)) for name, ctype in struct._fields_], \
        ctypes.sizeof(struct)


@pytest.mark.parametrize("struct, fields, size", [
    # 1.13 (debugger API): __u64 r_debug; __u32 mode_mask; __u32 capabilities_mask;
    (k.kfd_ioctl_runtime_enable_args, [("r_debug", 0, 8), ("mode_mask", 8, 4), ("capabilities_mask", 12, 4)], 16),
    # 1.13: __u64 r_debug; __u32 runtime_state; __u32 ttmp_setup;
    (k.kfd_runtime_info, [("r_debug", 0, 8), ("runtime_state", 8, 4), ("ttmp_setup", 12, 4)], 16),
    # 1.9 (available memory ioctl): __u64 available; __u32 gpu_id; __u32 pad;
    (k.kfd_ioctl_get_available_memory_args, [("available", 0, 8), ("gpu_id", 8, 4), ("pad", 12, 4)], 16),
    # failure (4 x __u32); __u64 va; __u32 gpu_id; __u32 ErrorType (was pad before RAS reporting)
    (k.kfd_hsa_memory_exception_data, [("failure", 0, 16), ("va", 16, 8), ("gpu_id", 24, 4),
                                       ("ErrorType", 28, 4)], 32),
    # 1.14 (update kfd_event_data): __u64 last_event_age;
    (k.kfd_hsa_signal_event_data, [("last_event_age", 0, 8)], 8),
    (k.kfd_ioctl_alloc_queue_gws_args, [("queue_id", 0, 4), ("num_gws", 4, 4), ("first_gws", 8, 4),
                                        ("pad", 12, 4)], 16),
    (k.kfd_ioctl_set_cu_mask_args, [("queue_id", 0, 4), ("num_cu_mask", 4, 4), ("cu_mask_ptr", 8, 8)], 16),
    (k.kfd_ioctl_get_queue_wave_state_args, [("ctl_stack_address", 0, 8), ("ctl_stack_used_size", 8, 4),
                                             ("save_area_used_size", 12, 4), ("queue_id", 16, 4),
                                             ("pad", 20, 4)], 24),
])
def test_post_1_11_struct_matches_header_field_list(struct, fields, size):
    assert _layout(struct) == (fields, size)


def test_event_data_union_holds_all_three_members_ahead_of_ext_and_event_id():
    # union { memory_exception_data (32); hw_exception_data (16); signal_event_data (8) } is 32 bytes
    assert k.kfd_event_data._u.offset == 0
    assert ctypes.sizeof(k._kfd_event_data_union) == 32
    assert (k.kfd_event_data.kfd_event_data_ext.offset, k.kfd_event_data.event_id.offset,
            k.kfd_event_data.pad.offset, ctypes.sizeof(k.kfd_event_data)) == (32, 40, 44, 48)


# name -> (direction, nr) exactly as the header's AMDKFD_IO{R,W,WR}(nr, struct) lines say
_HEADER_REQUESTS = {
    "GET_VERSION": ("R", 0x01), "CREATE_QUEUE": ("WR", 0x02), "DESTROY_QUEUE": ("WR", 0x03),
    "SET_MEMORY_POLICY": ("W", 0x04), "GET_CLOCK_COUNTERS": ("WR", 0x05),
    "GET_PROCESS_APERTURES": ("R", 0x06), "UPDATE_QUEUE": ("W", 0x07), "CREATE_EVENT": ("WR", 0x08),
    "DESTROY_EVENT": ("W", 0x09), "SET_EVENT": ("W", 0x0A), "RESET_EVENT": ("W", 0x0B),
    "WAIT_EVENTS": ("WR", 0x0C), "SET_SCRATCH_BACKING_VA": ("WR", 0x11), "GET_TILE_CONFIG": ("WR", 0x12),
    "SET_TRAP_HANDLER": ("W", 0x13), "GET_PROCESS_APERTURES_NEW": ("WR", 0x14), "ACQUIRE_VM": ("W", 0x15),
    "ALLOC_MEMORY_OF_GPU": ("WR", 0x16), "FREE_MEMORY_OF_GPU": ("W", 0x17),
    "MAP_MEMORY_TO_GPU": ("WR", 0x18), "UNMAP_MEMORY_FROM_GPU": ("WR", 0x19), "SET_CU_MASK": ("W", 0x1A),
    "GET_QUEUE_WAVE_STATE": ("WR", 0x1B), "ALLOC_QUEUE_GWS": ("WR", 0x1E), "SET_XNACK_MODE": ("WR", 0x21),
    "AVAILABLE_MEMORY": ("WR", 0x23), "RUNTIME_ENABLE": ("WR", 0x25),
}
_DIR = {"R": ioctl.IOC_READ, "W": ioctl.IOC_WRITE, "WR": ioctl.IOC_READ | ioctl.IOC_WRITE}


@pytest.mark.parametrize("name", sorted(_HEADER_REQUESTS))
def test_request_direction_and_number_match_header(name):
    request = getattr(k, f"AMDKFD_IOC_{name}")
    direction, nr = _HEADER_REQUESTS[name]
    assert (ioctl.IOC_DIR(request), ioctl.IOC_NR(request)) == (_DIR[direction], nr)


def test_post_1_11_request_numbers_as_the_kernel_computes_them():
    # _IOWR('K', nr, 16-byte struct) = 0xC0104Bnn
    assert k.AMDKFD_IOC_AVAILABLE_MEMORY == 0xC0104B23
    assert k.AMDKFD_IOC_RUNTIME_ENABLE == 0xC0104B25
    assert k.AMDKFD_COMMAND_END == 0x27


def test_post_1_11_constants_match_header():
    assert (k.KFD_MEM_ERR_NO_RAS, k.KFD_MEM_ERR_SRAM_ECC, k.KFD_MEM_ERR_POISON_CONSUMED,
            k.KFD_MEM_ERR_GPU_HANG) == (0, 1, 2, 3)
    assert (k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, k.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED,
            k.KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT, k.KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS) == (
        1 << 4, 1 << 25, 1 << 24, 1 << 23)
    assert (k.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, k.KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK) == (1, 2)
    assert (k.KFD_INVALID_FD, k.KFD_IOC_QUEUE_TYPE_SDMA_XGMI) == (0xFFFFFFFF, 3)
