"""Driving clang-19 and ld.lld-19 for `gputwin cc`, with gputwin's device library linked in.

OpenCL C: the kernel is compiled with the library's bitcode linked as builtin bitcode (clang
-mlink-builtin-bitcode: only what the kernel calls, internalized and inlined, as ROCm links its device
libraries), then ld.lld links the code object together with the library compiled as an object, with
--gc-sections: that supplies the functions the back end itself introduces (printf's __printf_alloc,
emitted after bitcode linking) and drops the rest. HIP: clang compiles and links the device code
itself (--cuda-device-only), with gputwin's hip_runtime.h force-included and the same library object
handed to its linker. The library is compiled once per target and cached (gputwin.compiler.cache).
"""
from __future__ import annotations

import functools
import hashlib
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from gputwin.abi.device_libs import provider
from gputwin.compiler import cache

DEVLIB = pathlib.Path(__file__).parent / "devlib"
LANGUAGES = {".cl": "opencl", ".hip": "hip"}
OPT_LEVELS = ("0", "1", "2", "3", "s", "z")
CODE_OBJECT_VERSIONS = (4, 5)
_UNDEFINED = re.compile(r"undefined (?:hidden )?symbol: (.+)$", re.M)
_TARGET = "amdgcn-amd-amdhsa"


class BuildError(RuntimeError):
    """clang or ld.lld refused the source; the message carries their diagnostics (or says which tool is
    missing, or which library defines a symbol the kernel needs)."""


def language_of(path: str | pathlib.Path) -> str:
    lang = LANGUAGES.get(pathlib.Path(path).suffix)
    if lang is None:
        raise BuildError(f"{path}: cannot tell the language from the extension: use .cl (OpenCL C) or .hip "
                         "(HIP), or say --lang opencl|hip")
    return lang


@functools.cache
def _tool(name: str) -> str:
    path = shutil.which(f"{name}-19")
    if path is None:
        pkg = {"clang": "clang-19", "ld.lld": "lld-19", "llvm-objcopy": "llvm-19"}[name]
        raise BuildError(f"gputwin cc needs {name}-19 on PATH (apt install {pkg}; LLVM 19 is the toolchain the "
                         "device library is tested with)")
    return path


@functools.cache
def _clang_version() -> str:
    return subprocess.run([_tool("clang"), "--version"], capture_output=True, text=True).stdout


def _run(cmd: list[str], what: str) -> str:
    """Run a tool; its stderr (warnings) is returned, a failure raises BuildError with the diagnostics."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(_explain(proc.stderr.strip() or f"{what} failed with exit status {proc.returncode}"))
    return proc.stderr


def _explain(diagnostics: str) -> str:
    """The tool's diagnostics, followed by which library defines each symbol the link could not find."""
    missing = list(dict.fromkeys(m.strip() for m in _UNDEFINED.findall(diagnostics)))
    notes = [f"`{name}` is defined by {provider(name)}" for name in missing]
    return "\n".join([diagnostics, *notes])


def _target_flags(arch: str, wave64: bool, cov: int) -> list[str]:
    flags = [f"-mcode-object-version={cov}", f"-DGT_COV={cov}"]
    if wave64 and not arch.startswith("gfx9"):   # gfx9 (CDNA) is wave64 only, and clang's default there
        flags.append("-mwavefrontsize64")
    return flags


def _devlib(arch: str, wave64: bool, cov: int, kind: str) -> bytes:
    """gputwin's OpenCL device library for one target: "bc", the built-ins as LLVM bitcode (opencl.cl), or
    "o", the object ld.lld links (printf.cl: what the back end calls after bitcode linking)."""
    source = DEVLIB / {"bc": "opencl.cl", "o": "printf.cl"}[kind]
    cmd = [_tool("clang"), "-x", "cl", "-cl-std=CL2.0", "-target", _TARGET, f"-mcpu={arch}", "-nogpulib", "-O2",
           *_target_flags(arch, wave64, cov)]
    # the bitcode is left unoptimised (its O2 attributes kept): the kernel's own pipeline optimises what it
    # links, and optimising all ~5000 conversion overloads up front would take seconds per target
    cmd += ["-c", "-emit-llvm", "-Xclang", "-disable-llvm-passes"] if kind == "bc" else ["-c", "-ffunction-sections"]

    def build() -> bytes:
        with tempfile.TemporaryDirectory(prefix="gputwin-devlib-") as tmp:
            out = pathlib.Path(tmp) / f"devlib.{kind}"
            _run([*cmd, str(source), "-o", str(out)], "compiling gputwin's device library")
            if kind == "o":   # its (kernel-less) metadata note would sit beside the kernel's in the code object
                _run([_tool("llvm-objcopy"), "--remove-section=.note", str(out)], "llvm-objcopy")
            return out.read_bytes()
    texts = "\0".join(p.read_text() for p in sorted(DEVLIB.glob("*.[ch]*")))
    key = f"{_clang_version()}\0{' '.join(cmd[1:])}\0{source.name}\0{texts}"
    return cache.get_or_build(key, f"devlib-{arch}-{'w64' if wave64 else 'w32'}-v{cov}.{kind}", build)


def compile_file(path: str | pathlib.Path, arch: str = "gfx1100", *, lang: str | None = None, opt: str = "2",
                 wave64: bool = False, cov: int = 5, flags: tuple[str, ...] = (), warnings=sys.stderr) -> bytes:
    """The code object built from the OpenCL C (.cl) or HIP (.hip) file at `path` for processor `arch`.

    `opt` is clang's -O level; `wave64` builds wave64 code on gfx10+ (gfx9 is always wave64); `cov` is the
    code object version (5, clang-19's default, or 4); `flags` go to clang as they are (-D, -I, -cl-std=...).
    clang's warnings are written to `warnings` (None: dropped). Raises BuildError."""
    path = pathlib.Path(path)
    lang = lang or language_of(path)
    if lang not in LANGUAGES.values():
        raise BuildError(f"unknown language {lang!r}: opencl or hip")
    if str(opt) not in OPT_LEVELS:
        raise BuildError(f"-O{opt}: the optimisation level is one of {', '.join(OPT_LEVELS)}")
    if cov not in CODE_OBJECT_VERSIONS:
        raise BuildError(f"code object version {cov}: gputwin cc builds v4 or v5")
    if not re.fullmatch(r"gfx[0-9a-f]+", arch):
        raise BuildError(f"--arch {arch!r} is not an AMDGPU processor name such as gfx1100, gfx1201, gfx942")
    if not path.is_file():
        raise BuildError(f"{path}: no such file")
    target = _target_flags(arch, wave64, cov)
    with tempfile.TemporaryDirectory(prefix="gputwin-cc-") as tmp:
        tmpdir = pathlib.Path(tmp)
        lib_o = tmpdir / "devlib.o"
        lib_o.write_bytes(_devlib(arch, wave64, cov, "o"))
        out = tmpdir / "kernel.hsaco"
        if lang == "opencl":
            lib_bc = tmpdir / "devlib.bc"
            lib_bc.write_bytes(_devlib(arch, wave64, cov, "bc"))
            obj = tmpdir / f"{path.stem}.o"   # the name ld.lld quotes in "referenced by"
            log = _run([_tool("clang"), "-x", "cl", "-cl-std=CL2.0", "-target", _TARGET, f"-mcpu={arch}", "-nogpulib",
                        f"-O{opt}", "-cl-kernel-arg-info", *target, *flags, "-Xclang", "-mlink-builtin-bitcode",
                        "-Xclang", str(lib_bc), "-c", str(path), "-o", str(obj)], "clang")
            log += _run([_tool("ld.lld"), "-shared", "--no-undefined", "--gc-sections", str(obj), str(lib_o), "-o",
                         str(out)], "ld.lld")
        else:
            cuid = hashlib.sha256(path.read_bytes()).hexdigest()[:16]   # a fixed CUID: the same source builds
            log = _run([_tool("clang"), "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib",   # the same bytes
                        f"--offload-arch={arch}", f"-O{opt}", "--no-gpu-bundle-output", "-mprintf-kind=buffered",
                        f"-cuid={cuid}", "-I", str(DEVLIB / "include"), "-include", "hip/hip_runtime.h", *target,
                        *flags, "-c", str(path), "-o", str(out), "-Xoffload-linker", str(lib_o),
                        "-Xoffload-linker", "--gc-sections"], "clang")
        if log.strip() and warnings is not None:
            print(log.rstrip(), file=warnings)
        return out.read_bytes()


def compile_source(source: str, lang: str, arch: str = "gfx1100", *, filename: str | None = None, **kw) -> bytes:
    """compile_file for source text: it is written to a temporary `filename` (default kernel.cl / kernel.hip),
    the name clang's diagnostics will show."""
    suffix = {v: k for k, v in LANGUAGES.items()}.get(lang)
    if suffix is None:
        raise BuildError(f"unknown language {lang!r}: opencl or hip")
    with tempfile.TemporaryDirectory(prefix="gputwin-cc-src-") as tmp:
        path = pathlib.Path(tmp) / (filename or f"kernel{suffix}")
        path.write_text(source)
        return compile_file(path, arch, lang=lang, **kw)
