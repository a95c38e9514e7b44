"""The surfaces' own machinery does what they claim: relocated metadata notes are what the loader reads,
mutations stay where they are aimed, and the pointer zoo's pages have the protections it names."""
import errno
import random

import numpy as np
import pytest

from gputwin.abi.code_object import CodeObject
from gputwin.emu.amd.standalone import Arena, load_kernel
from gputwin.fuzz.surfaces.codeobj import mutate_metadata, relocate_metadata
from gputwin.fuzz.surfaces.isa import fixture, mutate
from gputwin.fuzz.surfaces.kfd import PAGE, Zoo
from gputwin.mock.kernel import MockKernel


def test_relocated_metadata_is_what_the_loader_reads_and_the_kernel_still_runs():
    image, _, _ = fixture("kernels_gfx1100_v5.hsaco")
    md = CodeObject.parse(image).metadata
    moved = relocate_metadata(image, md)
    assert len(moved) > len(image) and CodeObject.parse(moved).metadata == md
    arena = Arena()
    reverse = load_kernel(arena, moved, "reverse")      # reverses each workgroup's slice through LDS
    a = np.random.default_rng(11).integers(0, 1 << 32, 128, dtype=np.uint32)
    va = arena.alloc(a.nbytes, a)
    reverse(va, grid=(2, 1, 1), block=(64, 1, 1))
    assert arena.array(va, np.uint32, 128).tolist() == a.reshape(2, 64)[:, ::-1].reshape(-1).tolist()


def test_a_metadata_mutation_reaches_the_parsed_metadata():
    image, _, _ = fixture("kernels_gfx1201_v5.hsaco")
    md = CodeObject.parse(image).metadata
    changed, what = mutate_metadata(random.Random(3), md)
    assert changed != md and md == CodeObject.parse(image).metadata   # the original is untouched
    raw = relocate_metadata(image, changed)
    try:
        assert CodeObject.parse(raw).metadata == changed
    except Exception as e:   # the loader may refuse it, but only as a CodeObjectError
        assert type(e).__name__ == "CodeObjectError", (what, e)


def test_instruction_mutations_stay_inside_text():
    image, (lo, size), _ = fixture("kernels_gfx942_v5.hsaco")
    blob = bytearray(image)
    for seed in range(20):
        edits = mutate(random.Random(seed), blob, lo, lo + size)
        assert edits and all(lo <= off < lo + size for off, _ in edits)
    assert blob[:lo] == image[:lo] and blob[lo + size:] == image[lo + size:]


@pytest.fixture
def zoo():
    kernel = MockKernel()
    z = Zoo(kernel)
    yield kernel, z
    z.release()


def test_the_pointer_zoo_pages_have_the_protections_they_are_named_for(zoo):
    kernel, z = zoo

    def readable(addr):
        try:
            kernel.copy_from_user(addr, 8)
            return True
        except OSError as e:
            assert e.errno == errno.EFAULT
            return False

    def writable(addr):
        try:
            kernel.copy_to_user(addr, bytes(8))
            return True
        except OSError as e:
            assert e.errno == errno.EFAULT
            return False
    assert readable(z.rw) and writable(z.rw)
    assert not readable(z.rw + PAGE - 4) and not writable(z.rw + PAGE - 4)   # runs into the PROT_NONE page
    assert readable(z.ro) and not writable(z.ro)
    assert not readable(z.wo) and writable(z.wo)
    assert not readable(z.none) and not writable(z.none)
    assert not readable(z.gone) and not writable(z.gone)


def test_ptx_mutations_start_from_loadable_fixtures_and_are_seeded():
    from gputwin.emu.nv.ptx import load_module
    from gputwin.fuzz.surfaces.ptx import fixture, fixture_names, mutate
    for arch in ("sm_80", "sm_90"):
        assert len(fixture_names(arch)) >= 10
        for name in fixture_names(arch):
            assert load_module(fixture(arch, name)).kernels, (arch, name)
    text = fixture("sm_90", "integer.ptx")
    a, b = mutate(random.Random(5), text), mutate(random.Random(5), text)
    assert a == b and a[0] != text and a[1]


def test_rm_cases_reach_a_live_driver_tree_and_the_fuzzers_own_client():
    from gputwin.abi import nv_classes as c
    from gputwin.fuzz.surfaces.rm import _Case
    k = _Case(random.Random(2), "sm_90", driver=True)
    try:
        classes = {o.class_id for cl in k.rm.clients.values() for o in cl.objects.values()}
        assert {c.HOPPER_CHANNEL_GPFIFO_A, c.HOPPER_COMPUTE_A, c.FERMI_VASPACE_A} <= classes
        assert len(k.rm.clients) == 2 and len(k.uuid) == 16 and any(k.uuid)
    finally:
        k.close()


def test_gpfifo_fresh_channel_check_sees_a_release_land_and_a_stopped_gpu_fail():
    from gputwin.emu.nv.gpu import NVGPU
    from gputwin.fuzz.surfaces.gpfifo import Gpfifo
    Gpfifo()._still_works(NVGPU("sm_80"))
    gpu = NVGPU("sm_90")
    gpu.doorbell = lambda token: None            # a GPU that never runs the channel
    with pytest.raises(AssertionError, match="did not land"):
        Gpfifo()._still_works(gpu)
