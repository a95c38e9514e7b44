"""PTX -> cubin through NVIDIA's tools (gputwin.drivers.nv.sass): both back ends, the cache key, the errors."""
import shutil

import pytest

from gputwin.abi.cubin import read_cubin
from gputwin.compiler import cache
from gputwin.drivers.nv import sass

EMPTY = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .f32 x) { .reg .b64 %rd<2>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [p]; ld.param.f32 %f1, [x]; st.global.f32 [%rd1], %f1; ret; }
"""


def _available(backend):
    return (sass._nvjitlink() if backend == "nvjitlink" else sass._ptxas()) is not None


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUTWIN_CACHE_DIR", str(tmp_path))
    cache.clear_memory()
    yield tmp_path
    cache.clear_memory()


@pytest.mark.parametrize("backend", ["ptxas", "nvjitlink"])
def test_each_backend_makes_a_cubin_for_the_arch(backend, monkeypatch, fresh_cache):
    if not _available(backend):
        pytest.skip(f"needs {backend} (pip install 'gputwin[nv]')")
    monkeypatch.setenv("GPUTWIN_NV_COMPILER", backend)
    for arch in ("sm_80", "sm_90"):
        cubin = read_cubin(sass.compile_ptx(EMPTY, arch))
        assert cubin.arch == arch
        assert [(p.offset, p.size) for p in cubin.kernels["k"].params] == [(0, 8), (8, 4)]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_cache_is_keyed_by_ptx_arch_and_tool_version(monkeypatch, fresh_cache):
    monkeypatch.setenv("GPUTWIN_NV_COMPILER", "ptxas")
    before = cache.stats["compiles"]
    a = sass.compile_ptx(EMPTY, "sm_90")
    cache.clear_memory()
    assert sass.compile_ptx(EMPTY, "sm_90") == a and cache.stats["compiles"] == before + 1   # from disk
    names = [p.name for p in fresh_cache.iterdir()]
    assert len(names) == 1 and names[0].endswith(f".sm_90.{sass.tool()[1]}.cubin")
    sass.compile_ptx(EMPTY, "sm_80")
    sass.compile_ptx(EMPTY.replace("%f1;", "%f1; "), "sm_90")
    assert cache.stats["compiles"] == before + 3 and len(list(fresh_cache.iterdir())) == 3


def test_no_tool_installed_says_how_to_get_one(monkeypatch):
    monkeypatch.setattr(sass, "_nvjitlink", lambda: None)
    monkeypatch.setattr(sass, "_ptxas", lambda: None)
    monkeypatch.delenv("GPUTWIN_NV_COMPILER", raising=False)
    with pytest.raises(sass.PtxCompilerMissing, match=r"pip install 'gputwin\[nv\]'"):
        sass.compile_ptx(EMPTY, "sm_90")


def test_unknown_backend_and_arch_are_refused(monkeypatch):
    monkeypatch.setenv("GPUTWIN_NV_COMPILER", "clang")
    with pytest.raises(ValueError, match="GPUTWIN_NV_COMPILER='clang'"):
        sass.tool()
    with pytest.raises(ValueError, match="expected sm_NN"):
        sass.compile_ptx(EMPTY, "gfx1100")


@pytest.mark.parametrize("backend", ["ptxas", "nvjitlink"])
def test_bad_ptx_carries_the_tool_log(backend, monkeypatch, fresh_cache):
    if not _available(backend):
        pytest.skip(f"needs {backend} (pip install 'gputwin[nv]')")
    monkeypatch.setenv("GPUTWIN_NV_COMPILER", backend)
    with pytest.raises(sass.PtxCompileError, match="(?i)bogus"):
        sass.compile_ptx(EMPTY.replace("ret;", "bogus.op %f1;"), "sm_90")
