"""The sysfs topology the mock KFD publishes under /sys/devices/virtual/kfd/kfd/topology, with the keys
and formats of kfd_topology.c: node 0 is the CPU, nodes 1.. the GPUs."""
from __future__ import annotations

import os

from gputwin.mock.kfd_state import KfdNode

TOPOLOGY = "/sys/devices/virtual/kfd/kfd/topology"
HEAP_TYPE_SYSTEM, HEAP_TYPE_FB_PUBLIC = 0, 1
IOLINK_TYPE_PCIEXPRESS = 2
HSA_CAP_ATS_PRESENT = 1 << 1    # capability bits a real gfx11/gfx12/gfx942 node shows in part
HSA_CAP_FLAGS_COHERENTHOSTACCESS = 1 << 10


def _props(pairs: list[tuple[str, int]]) -> str:
    return "".join(f"{key} {value}\n" for key, value in pairs)


def _cpu_properties(n_gpus: int) -> str:
    cores = os.cpu_count() or 1
    return _props([
        ("cpu_cores_count", cores), ("simd_count", 0), ("mem_banks_count", 1), ("caches_count", 0),
        ("io_links_count", n_gpus), ("p2p_links_count", 0), ("cpu_core_id_base", 0), ("simd_id_base", 0),
        ("max_waves_per_simd", 0), ("lds_size_in_kb", 0), ("gds_size_in_kb", 0), ("num_gws", 0),
        ("wave_front_size", 0), ("array_count", 0), ("simd_arrays_per_engine", 0), ("cu_per_simd_array", 0),
        ("simd_per_cu", 0), ("max_slots_scratch_cu", 0), ("gfx_target_version", 0), ("vendor_id", 0),
        ("device_id", 0), ("location_id", 0), ("domain", 0), ("drm_render_minor", 0), ("hive_id", 0),
        ("num_sdma_engines", 0), ("num_sdma_xgmi_engines", 0), ("num_sdma_queues_per_engine", 0),
        ("num_cp_queues", 0), ("max_engine_clk_ccompute", 3000), ("capability", 0), ("debug_prop", 0),
        ("num_xcc", 0)])


def _gpu_properties(node: KfdNode) -> str:
    p = node.profile
    return _props([
        ("cpu_cores_count", 0), ("simd_count", p.simd_count), ("mem_banks_count", 1), ("caches_count", 0),
        ("io_links_count", 1), ("p2p_links_count", 0), ("cpu_core_id_base", 0),
        ("simd_id_base", 0x80000000 + 0x1000 * node.index), ("max_waves_per_simd", p.max_waves_per_simd),
        ("lds_size_in_kb", p.lds_size_in_kb), ("gds_size_in_kb", 0), ("num_gws", 64),
        ("wave_front_size", p.wave_size), ("array_count", p.array_count),
        ("simd_arrays_per_engine", p.simd_arrays_per_engine), ("cu_per_simd_array", p.cu_per_simd_array),
        ("simd_per_cu", p.simd_per_cu), ("max_slots_scratch_cu", p.max_slots_scratch_cu),
        ("gfx_target_version", p.gfx_target_version), ("vendor_id", 0x1002), ("device_id", p.device_id),
        ("location_id", node.index << 8), ("domain", 0), ("drm_render_minor", node.render_minor),
        ("hive_id", 0), ("num_sdma_engines", p.num_sdma_engines), ("num_sdma_xgmi_engines", 0),
        ("num_sdma_queues_per_engine", 6), ("num_cp_queues", 8 * p.num_xcc), ("max_engine_clk_fcompute", 2500),
        ("local_mem_size", p.local_mem_size), ("fw_version", p.fw_version),
        ("capability", HSA_CAP_ATS_PRESENT | HSA_CAP_FLAGS_COHERENTHOSTACCESS), ("debug_prop", 0),
        ("sdma_fw_version", 21), ("unique_id", 0x5A5A0000 + node.gpu_id), ("num_xcc", p.num_xcc),
        ("max_engine_clk_ccompute", 3000)])


def _mem_bank(heap_type: int, size: int) -> str:
    return _props([("heap_type", heap_type), ("size_in_bytes", size), ("flags", 0), ("width", 64),
                   ("mem_clk_max", 1250)])


def _io_link(node_from: int, node_to: int) -> str:
    return _props([("type", IOLINK_TYPE_PCIEXPRESS), ("version_major", 0), ("version_minor", 0),
                   ("node_from", node_from), ("node_to", node_to), ("weight", 20), ("min_latency", 0),
                   ("max_latency", 0), ("min_bandwidth", 312), ("max_bandwidth", 64000),
                   ("recommended_transfer_size", 0), ("flags", 1)])


def mount(kernel, nodes: list[KfdNode]) -> None:
    kernel.mount_file(f"{TOPOLOGY}/generation_id", "1\n")
    kernel.mount_file(f"{TOPOLOGY}/system_properties", _props([("platform_oem", 0), ("platform_id", 0),
                                                               ("platform_rev", 0)]))
    cpu = f"{TOPOLOGY}/nodes/0"
    kernel.mount_file(f"{cpu}/gpu_id", "0\n")
    kernel.mount_file(f"{cpu}/name", "\n")
    kernel.mount_file(f"{cpu}/properties", _cpu_properties(len(nodes)))
    kernel.mount_file(f"{cpu}/mem_banks/0/properties", _mem_bank(HEAP_TYPE_SYSTEM, os.sysconf("SC_PHYS_PAGES")
                                                                 * os.sysconf("SC_PAGE_SIZE")))
    kernel.mount_dir(f"{cpu}/caches")
    for i, node in enumerate(nodes):
        kernel.mount_file(f"{cpu}/io_links/{i}/properties", _io_link(0, node.index))
    for node in nodes:
        base = f"{TOPOLOGY}/nodes/{node.index}"
        kernel.mount_file(f"{base}/gpu_id", f"{node.gpu_id}\n")
        kernel.mount_file(f"{base}/name", f"{node.gpu.arch}\n")
        kernel.mount_file(f"{base}/properties", _gpu_properties(node))
        kernel.mount_file(f"{base}/mem_banks/0/properties", _mem_bank(HEAP_TYPE_FB_PUBLIC, node.profile.local_mem_size))
        kernel.mount_dir(f"{base}/caches")
        kernel.mount_file(f"{base}/io_links/0/properties", _io_link(node.index, 0))
