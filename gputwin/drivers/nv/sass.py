"""PTX -> cubin for real NVIDIA GPUs, through NVIDIA's own pip-installable tools (`pip install gputwin[nv]`).

Two back ends, tried in this order (GPUTWIN_NV_COMPILER=nvjitlink|ptxas picks one):
- nvJitLink (`nvidia-nvjitlink`): libnvJitLink.so loaded with ctypes; the PTX is added as NVJITLINK_INPUT_PTX
  and linked for `-arch=sm_NN`.
- ptxas (`nvidia-cuda-nvcc` puts it in site-packages/nvidia/cu13/bin, or any ptxas on PATH).
Cubins are cached through gputwin's compile cache (memory + $GPUTWIN_CACHE_DIR), keyed by the PTX text, the
arch and the tool's version, so a new toolchain never reuses an old cubin.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

NVJITLINK_INPUT_PTX = 2      # nvJitLinkInputType, nvJitLink.h


class PtxCompilerMissing(RuntimeError):
    """Neither nvJitLink nor ptxas is installed; the message says how to get one."""


class PtxCompileError(RuntimeError):
    """The NVIDIA tool rejected the PTX; the message carries its log."""


def _site_dirs() -> list[pathlib.Path]:
    return [pathlib.Path(p) for p in sys.path if p and os.path.isdir(os.path.join(p, "nvidia"))]


@functools.lru_cache(maxsize=None)
def _nvjitlink():
    for base in _site_dirs():
        for lib in sorted(glob.glob(str(base / "nvidia" / "*" / "lib" / "libnvJitLink.so*")), reverse=True):
            try:
                so = ctypes.CDLL(lib)
            except OSError:
                continue
            major, minor = ctypes.c_uint(), ctypes.c_uint()
            if so.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor)) == 0:
                return so, f"nvjitlink-{major.value}.{minor.value}"
    return None


@functools.lru_cache(maxsize=None)
def _ptxas():
    found = [str(p) for base in _site_dirs() for p in sorted((base / "nvidia").glob("*/bin/ptxas"))]
    path = found[0] if found else shutil.which("ptxas")
    if path is None:
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    version = re.search(r"V(\d+\.\d+\.\d+)", out)
    return path, f"ptxas-{version.group(1) if version else 'unknown'}"


def tool() -> tuple[str, str]:
    """(back end, version tag) that compile_ptx will use; PtxCompilerMissing if none is installed."""
    want = os.environ.get("GPUTWIN_NV_COMPILER", "")
    if want not in ("", "nvjitlink", "ptxas"):
        raise ValueError(f"GPUTWIN_NV_COMPILER={want!r}: use nvjitlink or ptxas")
    if want in ("", "nvjitlink") and (nv := _nvjitlink()) is not None:
        return "nvjitlink", nv[1]
    if want in ("", "ptxas") and (px := _ptxas()) is not None:
        return "ptxas", px[1]
    raise PtxCompilerMissing("loading PTX on a real NVIDIA GPU needs nvJitLink or ptxas: "
                             "pip install 'gputwin[nv]' (nvidia-nvjitlink, nvidia-cuda-nvcc)"
                             + (f" (GPUTWIN_NV_COMPILER={want})" if want else ""))


def _check(so, handle, status: int, what: str) -> None:
    if status:
        size = ctypes.c_size_t()
        so.nvJitLinkGetErrorLogSize(handle, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        so.nvJitLinkGetErrorLog(handle, log)
        raise PtxCompileError(f"nvJitLink {what} failed (status {status}): {log.value.decode(errors='replace').strip()}")


def _with_nvjitlink(ptx: str, arch: str) -> bytes:
    so = _nvjitlink()[0]
    handle = ctypes.c_void_p()
    opts = (ctypes.c_char_p * 1)(f"-arch={arch}".encode())
    status = so.nvJitLinkCreate(ctypes.byref(handle), 1, opts)
    if status:
        raise PtxCompileError(f"nvJitLinkCreate -arch={arch} failed (status {status})")
    try:
        data = ptx.encode()
        _check(so, handle, so.nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, data, ctypes.c_size_t(len(data)),
                                               b"module.ptx"), "AddData")
        _check(so, handle, so.nvJitLinkComplete(handle), "Complete")
        size = ctypes.c_size_t()
        _check(so, handle, so.nvJitLinkGetLinkedCubinSize(handle, ctypes.byref(size)), "GetLinkedCubinSize")
        out = ctypes.create_string_buffer(size.value)
        _check(so, handle, so.nvJitLinkGetLinkedCubin(handle, out), "GetLinkedCubin")
        return out.raw
    finally:
        so.nvJitLinkDestroy(ctypes.byref(handle))


def _with_ptxas(ptx: str, arch: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="gputwin-ptxas-") as d:
        src, out = os.path.join(d, "module.ptx"), os.path.join(d, "module.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        run = subprocess.run([_ptxas()[0], f"-arch={arch}", "-o", out, src], capture_output=True, text=True)
        if run.returncode:
            raise PtxCompileError(f"ptxas -arch={arch} failed: {run.stderr.strip()}")
        with open(out, "rb") as f:
            return f.read()


def compile_ptx(ptx: str, arch: str) -> bytes:
    """The cubin for `ptx` on `arch` (sm_NN), from the disk cache or the installed NVIDIA tool."""
    if not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise ValueError(f"arch {arch!r}: expected sm_NN")
    backend, version = tool()
    from gputwin.compiler import cache      # the compile cache: memory, then $GPUTWIN_CACHE_DIR
    build = _with_nvjitlink if backend == "nvjitlink" else _with_ptxas
    return cache.get_or_build(ptx, f"{arch}.{version}.cubin", lambda: build(ptx, arch))
