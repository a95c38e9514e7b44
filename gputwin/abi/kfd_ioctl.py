"""The KFD ioctl ABI: ctypes mirrors of Linux `include/uapi/linux/kfd_ioctl.h`, KFD_IOCTL version 1.16.

Field names, order and widths follow the header (as of minor version 1.16, "Add contiguous VRAM allocation
flag"); every struct here is asserted against its C size at import time, so a typo changes nothing silently.
Ioctl request numbers are built with `gputwin.abi.ioctl` (the `<asm-generic/ioctl.h>` _IOC encoding).

Both sides use this module: the production driver (drivers/amd) builds requests with it and the mock KFD
(mock/kfd*) decodes them with it, so a grep for a header name finds both.
"""
from __future__ import annotations

import ctypes

from ctypes import c_int32 as s32, c_uint32 as u32, c_uint64 as u64

from gputwin.abi.ioctl import IOR, IOW, IOWR

KFD_IOCTL_MAJOR_VERSION = 1
KFD_IOCTL_MINOR_VERSION = 16

class _Struct(ctypes.Structure):
    def __repr__(self) -> str:
        body = ", ".join(f"{name}={getattr(self, name)!r}" for name, *_ in self._fields_)
        return f"{type(self).__name__}({body})"


def _struct(name: str, fields, size: int):
    cls = type(name, (_Struct,), {"_fields_": fields})
    assert ctypes.sizeof(cls) == size, (name, ctypes.sizeof(cls), size)
    return cls


# --- queues ------------------------------------------------------------------------------------------
KFD_IOC_QUEUE_TYPE_COMPUTE = 0x0
KFD_IOC_QUEUE_TYPE_SDMA = 0x1
KFD_IOC_QUEUE_TYPE_COMPUTE_AQL = 0x2
KFD_IOC_QUEUE_TYPE_SDMA_XGMI = 0x3

KFD_MAX_QUEUE_PERCENTAGE = 100
KFD_MAX_QUEUE_PRIORITY = 15
KFD_MIN_QUEUE_RING_SIZE = 1024

kfd_ioctl_get_version_args = _struct("kfd_ioctl_get_version_args", [
    ("major_version", u32), ("minor_version", u32)], 8)

kfd_ioctl_create_queue_args = _struct("kfd_ioctl_create_queue_args", [
    ("ring_base_address", u64), ("write_pointer_address", u64), ("read_pointer_address", u64),
    ("doorbell_offset", u64),
    ("ring_size", u32), ("gpu_id", u32), ("queue_type", u32), ("queue_percentage", u32),
    ("queue_priority", u32), ("queue_id", u32),
    ("eop_buffer_address", u64), ("eop_buffer_size", u64), ("ctx_save_restore_address", u64),
    ("ctx_save_restore_size", u32), ("ctl_stack_size", u32)], 88)

kfd_ioctl_destroy_queue_args = _struct("kfd_ioctl_destroy_queue_args", [
    ("queue_id", u32), ("pad", u32)], 8)

kfd_ioctl_update_queue_args = _struct("kfd_ioctl_update_queue_args", [
    ("ring_base_address", u64), ("queue_id", u32), ("ring_size", u32), ("queue_percentage", u32),
    ("queue_priority", u32)], 24)

kfd_ioctl_set_cu_mask_args = _struct("kfd_ioctl_set_cu_mask_args", [
    ("queue_id", u32), ("num_cu_mask", u32), ("cu_mask_ptr", u64)], 16)

kfd_ioctl_get_queue_wave_state_args = _struct("kfd_ioctl_get_queue_wave_state_args", [
    ("ctl_stack_address", u64), ("ctl_stack_used_size", u32), ("save_area_used_size", u32),
    ("queue_id", u32), ("pad", u32)], 24)

kfd_ioctl_get_available_memory_args = _struct("kfd_ioctl_get_available_memory_args", [
    ("available", u64), ("gpu_id", u32), ("pad", u32)], 16)

# --- memory policy, clocks, apertures ---------------------------------------------------------------
KFD_IOC_CACHE_POLICY_COHERENT = 0
KFD_IOC_CACHE_POLICY_NONCOHERENT = 1

kfd_ioctl_set_memory_policy_args = _struct("kfd_ioctl_set_memory_policy_args", [
    ("alternate_aperture_base", u64), ("alternate_aperture_size", u64), ("gpu_id", u32),
    ("default_policy", u32), ("alternate_policy", u32), ("pad", u32)], 32)

kfd_ioctl_get_clock_counters_args = _struct("kfd_ioctl_get_clock_counters_args", [
    ("gpu_clock_counter", u64), ("cpu_clock_counter", u64), ("system_clock_counter", u64),
    ("system_clock_freq", u64), ("gpu_id", u32), ("pad", u32)], 40)

kfd_process_device_apertures = _struct("kfd_process_device_apertures", [
    ("lds_base", u64), ("lds_limit", u64), ("scratch_base", u64), ("scratch_limit", u64),
    ("gpuvm_base", u64), ("gpuvm_limit", u64), ("gpu_id", u32), ("pad", u32)], 56)

NUM_OF_SUPPORTED_GPUS = 7
kfd_ioctl_get_process_apertures_args = _struct("kfd_ioctl_get_process_apertures_args", [
    ("process_apertures", kfd_process_device_apertures * NUM_OF_SUPPORTED_GPUS), ("num_of_nodes", u32),
    ("pad", u32)], 56 * 7 + 8)

kfd_ioctl_get_process_apertures_new_args = _struct("kfd_ioctl_get_process_apertures_new_args", [
    ("kfd_process_device_apertures_ptr", u64), ("num_of_nodes", u32), ("pad", u32)], 16)

# --- events ------------------------------------------------------------------------------------------
KFD_INVALID_FD = 0xFFFFFFFF

KFD_IOC_EVENT_SIGNAL = 0
KFD_IOC_EVENT_NODECHANGE = 1
KFD_IOC_EVENT_DEVICESTATECHANGE = 2
KFD_IOC_EVENT_HW_EXCEPTION = 3
KFD_IOC_EVENT_SYSTEM_EVENT = 4
KFD_IOC_EVENT_DEBUG_EVENT = 5
KFD_IOC_EVENT_PROFILE_EVENT = 6
KFD_IOC_EVENT_QUEUE_EVENT = 7
KFD_IOC_EVENT_MEMORY = 8

KFD_IOC_WAIT_RESULT_COMPLETE = 0
KFD_IOC_WAIT_RESULT_TIMEOUT = 1
KFD_IOC_WAIT_RESULT_FAIL = 2

KFD_SIGNAL_EVENT_LIMIT = 4096

KFD_HW_EXCEPTION_WHOLE_GPU_RESET = 0
KFD_HW_EXCEPTION_PER_ENGINE_RESET = 1
KFD_HW_EXCEPTION_GPU_HANG = 0
KFD_HW_EXCEPTION_ECC = 1

KFD_MEM_ERR_NO_RAS = 0
KFD_MEM_ERR_SRAM_ECC = 1
KFD_MEM_ERR_POISON_CONSUMED = 2
KFD_MEM_ERR_GPU_HANG = 3

kfd_ioctl_create_event_args = _struct("kfd_ioctl_create_event_args", [
    ("event_page_offset", u64), ("event_trigger_data", u32), ("event_type", u32), ("auto_reset", u32),
    ("node_id", u32), ("event_id", u32), ("event_slot_index", u32)], 32)

kfd_ioctl_destroy_event_args = _struct("kfd_ioctl_destroy_event_args", [("event_id", u32), ("pad", u32)], 8)
kfd_ioctl_set_event_args = _struct("kfd_ioctl_set_event_args", [("event_id", u32), ("pad", u32)], 8)
kfd_ioctl_reset_event_args = _struct("kfd_ioctl_reset_event_args", [("event_id", u32), ("pad", u32)], 8)

kfd_memory_exception_failure = _struct("kfd_memory_exception_failure", [
    ("NotPresent", u32), ("ReadOnly", u32), ("NoExecute", u32), ("imprecise", u32)], 16)

kfd_hsa_memory_exception_data = _struct("kfd_hsa_memory_exception_data", [
    ("failure", kfd_memory_exception_failure), ("va", u64), ("gpu_id", u32), ("ErrorType", u32)], 32)

kfd_hsa_hw_exception_data = _struct("kfd_hsa_hw_exception_data", [
    ("reset_type", u32), ("reset_cause", u32), ("memory_lost", u32), ("gpu_id", u32)], 16)

kfd_hsa_signal_event_data = _struct("kfd_hsa_signal_event_data", [("last_event_age", u64)], 8)


class _kfd_event_data_union(ctypes.Union):
    _fields_ = [("memory_exception_data", kfd_hsa_memory_exception_data),
                ("hw_exception_data", kfd_hsa_hw_exception_data),
                ("signal_event_data", kfd_hsa_signal_event_data)]


class kfd_event_data(_Struct):
    _anonymous_ = ("_u",)  # the C union is anonymous: .memory_exception_data etc. reach straight into it
    _fields_ = [("_u", _kfd_event_data_union), ("kfd_event_data_ext", u64), ("event_id", u32),
                ("pad", u32)]


assert ctypes.sizeof(kfd_event_data) == 48

kfd_ioctl_wait_events_args = _struct("kfd_ioctl_wait_events_args", [
    ("events_ptr", u64), ("num_events", u32), ("wait_for_all", u32), ("timeout", u32),
    ("wait_result", u32)], 24)

# --- scratch, tiles, trap handler, VM ----------------------------------------------------------------
kfd_ioctl_set_scratch_backing_va_args = _struct("kfd_ioctl_set_scratch_backing_va_args", [
    ("va_addr", u64), ("gpu_id", u32), ("pad", u32)], 16)

kfd_ioctl_get_tile_config_args = _struct("kfd_ioctl_get_tile_config_args", [
    ("tile_config_ptr", u64), ("macro_tile_config_ptr", u64), ("num_tile_configs", u32),
    ("num_macro_tile_configs", u32), ("gpu_id", u32), ("gb_addr_config", u32), ("num_banks", u32),
    ("num_ranks", u32)], 40)

kfd_ioctl_set_trap_handler_args = _struct("kfd_ioctl_set_trap_handler_args", [
    ("tba_addr", u64), ("tma_addr", u64), ("gpu_id", u32), ("pad", u32)], 24)

kfd_ioctl_acquire_vm_args = _struct("kfd_ioctl_acquire_vm_args", [("drm_fd", u32), ("gpu_id", u32)], 8)

# --- memory ------------------------------------------------------------------------------------------
KFD_IOC_ALLOC_MEM_FLAGS_VRAM = 1 << 0
KFD_IOC_ALLOC_MEM_FLAGS_GTT = 1 << 1
KFD_IOC_ALLOC_MEM_FLAGS_USERPTR = 1 << 2
KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL = 1 << 3
KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP = 1 << 4
KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE = 1 << 31
KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE = 1 << 30
KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC = 1 << 29
KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE = 1 << 28
KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM = 1 << 27
KFD_IOC_ALLOC_MEM_FLAGS_COHERENT = 1 << 26
KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED = 1 << 25
KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT = 1 << 24
KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS = 1 << 23

kfd_ioctl_alloc_memory_of_gpu_args = _struct("kfd_ioctl_alloc_memory_of_gpu_args", [
    ("va_addr", u64), ("size", u64), ("handle", u64), ("mmap_offset", u64), ("gpu_id", u32),
    ("flags", u32)], 40)

kfd_ioctl_free_memory_of_gpu_args = _struct("kfd_ioctl_free_memory_of_gpu_args", [("handle", u64)], 8)

kfd_ioctl_map_memory_to_gpu_args = _struct("kfd_ioctl_map_memory_to_gpu_args", [
    ("handle", u64), ("device_ids_array_ptr", u64), ("n_devices", u32), ("n_success", u32)], 24)

kfd_ioctl_unmap_memory_from_gpu_args = _struct("kfd_ioctl_unmap_memory_from_gpu_args", [
    ("handle", u64), ("device_ids_array_ptr", u64), ("n_devices", u32), ("n_success", u32)], 24)

kfd_ioctl_alloc_queue_gws_args = _struct("kfd_ioctl_alloc_queue_gws_args", [
    ("queue_id", u32), ("num_gws", u32), ("first_gws", u32), ("pad", u32)], 16)

kfd_ioctl_set_xnack_mode_args = _struct("kfd_ioctl_set_xnack_mode_args", [("xnack_enabled", s32)], 4)

# --- runtime enable (debugger coordination, 1.13) -------------------------------------------------
KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK = 1
KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK = 2

DEBUG_RUNTIME_STATE_DISABLED = 0
DEBUG_RUNTIME_STATE_ENABLED = 1
DEBUG_RUNTIME_STATE_ENABLED_BUSY = 2
DEBUG_RUNTIME_STATE_ENABLED_ERROR = 3

kfd_runtime_info = _struct("kfd_runtime_info", [("r_debug", u64), ("runtime_state", u32),
                                                ("ttmp_setup", u32)], 16)

kfd_ioctl_runtime_enable_args = _struct("kfd_ioctl_runtime_enable_args", [
    ("r_debug", u64), ("mode_mask", u32), ("capabilities_mask", u32)], 16)

# enum kfd_dbg_trap_exception_code: what KFD tells the runtime (and a debugger) a queue or device ran into
EC_NONE = 0
EC_QUEUE_WAVE_ABORT = 1
EC_QUEUE_WAVE_TRAP = 2
EC_QUEUE_WAVE_MATH_ERROR = 3
EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION = 4
EC_QUEUE_WAVE_MEMORY_VIOLATION = 5
EC_QUEUE_WAVE_APERTURE_VIOLATION = 6
EC_QUEUE_PACKET_DISPATCH_DIM_INVALID = 16
EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID = 17
EC_QUEUE_PACKET_DISPATCH_CODE_INVALID = 18
EC_QUEUE_PACKET_RESERVED = 19
EC_QUEUE_PACKET_UNSUPPORTED = 20
EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID = 21
EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID = 22
EC_QUEUE_PACKET_VENDOR_UNSUPPORTED = 23
EC_QUEUE_PREEMPTION_ERROR = 30
EC_QUEUE_NEW = 31
EC_DEVICE_QUEUE_DELETE = 32
EC_DEVICE_MEMORY_VIOLATION = 33
EC_DEVICE_RAS_ERROR = 34
EC_DEVICE_FATAL_HALT = 35
EC_DEVICE_NEW = 36
EC_PROCESS_RUNTIME = 48
EC_PROCESS_DEVICE_REMOVE = 49

# --- request numbers ---------------------------------------------------------------------------------
AMDKFD_IOCTL_BASE = ord("K")

# request number -> (name, args struct): how the mock decodes a request and names it in errors
IOCTLS: dict[int, tuple[str, type]] = {}


def _kfd(name: str, ioc, nr: int, struct) -> int:
    request = ioc(AMDKFD_IOCTL_BASE, nr, struct)
    IOCTLS[request] = (name, struct)
    return request


AMDKFD_IOC_GET_VERSION = _kfd("AMDKFD_IOC_GET_VERSION", IOR, 0x01, kfd_ioctl_get_version_args)
AMDKFD_IOC_CREATE_QUEUE = _kfd("AMDKFD_IOC_CREATE_QUEUE", IOWR, 0x02, kfd_ioctl_create_queue_args)
AMDKFD_IOC_DESTROY_QUEUE = _kfd("AMDKFD_IOC_DESTROY_QUEUE", IOWR, 0x03, kfd_ioctl_destroy_queue_args)
AMDKFD_IOC_SET_MEMORY_POLICY = _kfd("AMDKFD_IOC_SET_MEMORY_POLICY", IOW, 0x04, kfd_ioctl_set_memory_policy_args)
AMDKFD_IOC_GET_CLOCK_COUNTERS = _kfd("AMDKFD_IOC_GET_CLOCK_COUNTERS", IOWR, 0x05,
                                     kfd_ioctl_get_clock_counters_args)
AMDKFD_IOC_GET_PROCESS_APERTURES = _kfd("AMDKFD_IOC_GET_PROCESS_APERTURES", IOR, 0x06,
                                        kfd_ioctl_get_process_apertures_args)
AMDKFD_IOC_UPDATE_QUEUE = _kfd("AMDKFD_IOC_UPDATE_QUEUE", IOW, 0x07, kfd_ioctl_update_queue_args)
AMDKFD_IOC_CREATE_EVENT = _kfd("AMDKFD_IOC_CREATE_EVENT", IOWR, 0x08, kfd_ioctl_create_event_args)
AMDKFD_IOC_DESTROY_EVENT = _kfd("AMDKFD_IOC_DESTROY_EVENT", IOW, 0x09, kfd_ioctl_destroy_event_args)
AMDKFD_IOC_SET_EVENT = _kfd("AMDKFD_IOC_SET_EVENT", IOW, 0x0A, kfd_ioctl_set_event_args)
AMDKFD_IOC_RESET_EVENT = _kfd("AMDKFD_IOC_RESET_EVENT", IOW, 0x0B, kfd_ioctl_reset_event_args)
AMDKFD_IOC_WAIT_EVENTS = _kfd("AMDKFD_IOC_WAIT_EVENTS", IOWR, 0x0C, kfd_ioctl_wait_events_args)
AMDKFD_IOC_SET_SCRATCH_BACKING_VA = _kfd("AMDKFD_IOC_SET_SCRATCH_BACKING_VA", IOWR, 0x11,
                                         kfd_ioctl_set_scratch_backing_va_args)
AMDKFD_IOC_GET_TILE_CONFIG = _kfd("AMDKFD_IOC_GET_TILE_CONFIG", IOWR, 0x12, kfd_ioctl_get_tile_config_args)
AMDKFD_IOC_SET_TRAP_HANDLER = _kfd("AMDKFD_IOC_SET_TRAP_HANDLER", IOW, 0x13, kfd_ioctl_set_trap_handler_args)
AMDKFD_IOC_GET_PROCESS_APERTURES_NEW = _kfd("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", IOWR, 0x14,
                                            kfd_ioctl_get_process_apertures_new_args)
AMDKFD_IOC_ACQUIRE_VM = _kfd("AMDKFD_IOC_ACQUIRE_VM", IOW, 0x15, kfd_ioctl_acquire_vm_args)
AMDKFD_IOC_ALLOC_MEMORY_OF_GPU = _kfd("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", IOWR, 0x16,
                                      kfd_ioctl_alloc_memory_of_gpu_args)
AMDKFD_IOC_FREE_MEMORY_OF_GPU = _kfd("AMDKFD_IOC_FREE_MEMORY_OF_GPU", IOW, 0x17, kfd_ioctl_free_memory_of_gpu_args)
AMDKFD_IOC_MAP_MEMORY_TO_GPU = _kfd("AMDKFD_IOC_MAP_MEMORY_TO_GPU", IOWR, 0x18, kfd_ioctl_map_memory_to_gpu_args)
AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU = _kfd("AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", IOWR, 0x19,
                                        kfd_ioctl_unmap_memory_from_gpu_args)
AMDKFD_IOC_SET_CU_MASK = _kfd("AMDKFD_IOC_SET_CU_MASK", IOW, 0x1A, kfd_ioctl_set_cu_mask_args)
AMDKFD_IOC_GET_QUEUE_WAVE_STATE = _kfd("AMDKFD_IOC_GET_QUEUE_WAVE_STATE", IOWR, 0x1B,
                                       kfd_ioctl_get_queue_wave_state_args)
AMDKFD_IOC_ALLOC_QUEUE_GWS = _kfd("AMDKFD_IOC_ALLOC_QUEUE_GWS", IOWR, 0x1E, kfd_ioctl_alloc_queue_gws_args)
AMDKFD_IOC_SET_XNACK_MODE = _kfd("AMDKFD_IOC_SET_XNACK_MODE", IOWR, 0x21, kfd_ioctl_set_xnack_mode_args)
AMDKFD_IOC_AVAILABLE_MEMORY = _kfd("AMDKFD_IOC_AVAILABLE_MEMORY", IOWR, 0x23, kfd_ioctl_get_available_memory_args)
AMDKFD_IOC_RUNTIME_ENABLE = _kfd("AMDKFD_IOC_RUNTIME_ENABLE", IOWR, 0x25, kfd_ioctl_runtime_enable_args)

AMDKFD_COMMAND_START = 0x01
AMDKFD_COMMAND_END = 0x27
