"""The sysfs topology of the mock KFD: node 0 the CPU, one GPU node per arch with a real node's keys."""
import pytest

from gputwin.mock.kernel import MockKernel
from gputwin.mock.kfd import install
from gputwin.mock.kfd_topology import TOPOLOGY


def props(kernel, path):
    return {key: int(value) for key, value in (line.split() for line in kernel.read_text(path).splitlines())}


@pytest.fixture
def kernel():
    kernel = MockKernel()
    install(kernel, ["gfx1100", "gfx1201", "gfx942"])
    return kernel


def test_nodes_are_the_cpu_then_one_per_gpu(kernel):
    assert kernel.listdir(f"{TOPOLOGY}/nodes") == ["0", "1", "2", "3"]
    assert kernel.read_text(f"{TOPOLOGY}/nodes/0/gpu_id") == "0\n"
    assert props(kernel, f"{TOPOLOGY}/nodes/0/properties")["simd_count"] == 0


@pytest.mark.parametrize("node,arch,target,wave", [(1, "gfx1100", 110000, 32), (2, "gfx1201", 120001, 32),
                                                  (3, "gfx942", 90402, 64)])
def test_gpu_nodes_show_target_version_wave_size_and_render_minor(kernel, node, arch, target, wave):
    p = props(kernel, f"{TOPOLOGY}/nodes/{node}/properties")
    assert p["gfx_target_version"] == target and p["wave_front_size"] == wave
    assert p["vendor_id"] == 0x1002 and p["lds_size_in_kb"] == 64 and p["simd_count"] > 0
    assert p["max_waves_per_simd"] > 0 and p["simd_per_cu"] in (2, 4)
    assert p["drm_render_minor"] == 127 + node and kernel.exists(f"/dev/dri/renderD{p['drm_render_minor']}")
    assert kernel.read_text(f"{TOPOLOGY}/nodes/{node}/name").strip() == arch
    assert int(kernel.read_text(f"{TOPOLOGY}/nodes/{node}/gpu_id")) > 0
    bank = props(kernel, f"{TOPOLOGY}/nodes/{node}/mem_banks/0/properties")
    assert bank["size_in_bytes"] == p["local_mem_size"] > 0


def test_gpu_ids_are_distinct_and_stable(kernel):
    ids = [kernel.read_text(f"{TOPOLOGY}/nodes/{n}/gpu_id") for n in (1, 2, 3)]
    again = MockKernel()
    install(again, ["gfx1100", "gfx1201", "gfx942"])
    assert len(set(ids)) == 3 and ids == [again.read_text(f"{TOPOLOGY}/nodes/{n}/gpu_id") for n in (1, 2, 3)]


def test_two_identical_gpus_get_different_ids():
    kernel = MockKernel()
    install(kernel, ["gfx1100", "gfx1100"])
    assert kernel.read_text(f"{TOPOLOGY}/nodes/1/gpu_id") != kernel.read_text(f"{TOPOLOGY}/nodes/2/gpu_id")
