"""The compile cache: one compile per (IR, target), served from memory, then from disk."""
import os

from gputwin.compiler import cache, compile_kernel, ir
from tests.compiler.helpers import elementwise


def unique_kernel(tag: str):
    # a constant no other test uses, so the first compile is a real miss
    return elementwise("cached", [ir.float32], ir.float32, lambda x: x * float(hash(tag) % 1000 + 0.25))


def test_second_compile_is_a_memory_hit_and_identical():
    before = dict(cache.stats)
    first = compile_kernel(unique_kernel("mem"), "gfx1100")
    second = compile_kernel(unique_kernel("mem"), "gfx1100")     # equal IR from a new Kernel object
    kern = unique_kernel("mem")
    third, fourth = compile_kernel(kern, "gfx1100"), compile_kernel(kern, "gfx1100")   # same object
    assert first == second == third == fourth
    assert cache.stats["compiles"] == before.get("compiles", 0) + 1
    assert cache.stats["memory_hits"] == before.get("memory_hits", 0) + 3


def test_disk_layer_serves_a_fresh_process_view(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUTWIN_CACHE_DIR", str(tmp_path))
    image = compile_kernel(unique_kernel("disk"), "cpu")
    assert len(list(tmp_path.iterdir())) == 1
    cache.clear_memory()
    compiles, disk = cache.stats["compiles"], cache.stats["disk_hits"]
    assert compile_kernel(unique_kernel("disk"), "cpu") == image     # an equal kernel, built again
    assert (cache.stats["compiles"], cache.stats["disk_hits"]) == (compiles, disk + 1)


def test_key_separates_targets_and_ir():
    a, b = unique_kernel("k1"), unique_kernel("k2")
    from gputwin.compiler import render
    keys = {cache.key(render(k, t), t) for k in (a, b) for t in ("gfx1100", "gfx942")}
    assert len(keys) == 4


def test_unwritable_cache_dir_only_costs_recompiles(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GPUTWIN_CACHE_DIR", str(blocker / "sub"))
    kern = unique_kernel("ro")
    assert compile_kernel(kern, "sm_80").startswith(b"//")
    assert not os.path.isdir(blocker / "sub")


def test_ptx_is_cached_on_disk_per_sm_target(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUTWIN_CACHE_DIR", str(tmp_path))
    images = {sm: compile_kernel(unique_kernel("ptx"), sm) for sm in ("sm_80", "sm_90")}
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".sm_80", ".sm_90"]
    assert all(f".target {sm}".encode() in image for sm, image in images.items())
    cache.clear_memory()
    compiles, disk = cache.stats["compiles"], cache.stats["disk_hits"]
    assert {sm: compile_kernel(unique_kernel("ptx"), sm) for sm in ("sm_80", "sm_90")} == images
    assert (cache.stats["compiles"], cache.stats["disk_hits"]) == (compiles, disk + 2)
