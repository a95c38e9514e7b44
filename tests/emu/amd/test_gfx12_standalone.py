"""End to end on RDNA4: the OpenCL C kernels of fixtures/amd/cl/ compiled by clang-19 for gfx1201
(fixtures/amd/cl/gfx1201/, rebuilt by its build.sh) run on the emulator in wave32 and wave64 and give the
same bits as numpy.

The checks are test_standalone's own (same kernels, inputs and numpy references); only the code objects
differ, so every RDNA3 end-to-end test doubles as an RDNA4 one."""
from __future__ import annotations

import hashlib

import pytest

import tests.emu.amd.test_standalone as rdna3
from gputwin.abi.code_object import CodeObject
from gputwin.emu.amd.standalone import Arena, load_kernel
from tests.emu.amd.helpers import FIXTURES

GFX1201 = FIXTURES / "gfx1201"


REBUILD = "run sh fixtures/amd/cl/gfx1201/build.sh"


def changed_sources() -> set[str]:
    """Sources (fixtures/amd/cl/*.cl, *.h, build.sh) that differ from what the gfx1201 objects were built
    from (SOURCES.sha256, written by the build script)."""
    built = dict(ln.split()[::-1] for ln in (GFX1201 / "SOURCES.sha256").read_text().splitlines())
    now = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
           for p in [FIXTURES / "build.sh", *FIXTURES.glob("*.cl"), *FIXTURES.glob("*.h")]}
    return {name for name in built.keys() | now.keys() if built.get(name) != now.get(name)}


def gfx1201_image(obj: str, name: str, wave64: bool) -> bytes:
    """The gfx1201 build of fixture `obj`. Fails, naming the rebuild step, when the RDNA3 tests moved on
    (a kernel added after the gfx1201 objects were built, or a changed source): a stale fixture is a
    repository to fix, not a test to skip."""
    path = GFX1201 / (obj + (".w64" if wave64 else "") + ".hsaco")
    rdna3_has = name in CodeObject.parse((FIXTURES / path.name).read_bytes()).kernels
    if rdna3_has and (not path.exists() or name not in CodeObject.parse(path.read_bytes()).kernels):
        pytest.fail(f"needs {name} in {path.name} for gfx1201: {REBUILD}", pytrace=False)
    stale = changed_sources() & {obj + ".cl", "gputwin_cl.h", "build.sh"}
    if stale:
        pytest.fail(f"{', '.join(sorted(stale))} changed since the gfx1201 objects were built: {REBUILD}",
                    pytrace=False)
    return path.read_bytes()


def kernel(obj: str, name: str, wave64: bool):
    """(Arena, Kernel) for the gfx1201 build of fixture `obj`."""
    arena = Arena()
    return arena, load_kernel(arena, gfx1201_image(obj, name, wave64), name)


@pytest.fixture(autouse=True)
def _gfx1201_objects(monkeypatch):
    monkeypatch.setattr(rdna3, "kernel", kernel)


for _name in dir(rdna3):
    if _name.startswith("test_"):
        globals()[_name] = getattr(rdna3, _name)


def test_fixtures_are_gfx1201_builds_of_every_rdna3_fixture():
    assert not changed_sources(), f"{', '.join(sorted(changed_sources()))} changed since the gfx1201 build: {REBUILD}"
    rdna3_objects = sorted(p.name for p in FIXTURES.glob("*.hsaco"))
    assert sorted(p.name for p in GFX1201.glob("*.hsaco")) == rdna3_objects
    for name in rdna3_objects:
        assert CodeObject.parse((GFX1201 / name).read_bytes()).arch == "gfx1201", name

