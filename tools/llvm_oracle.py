"""LLVM 19 as the ISA oracle: its disassembler through libLLVM's C API (in process, one call per word)
and llvm-mc-19 for batches of assembly. Used only by the table generator and the differential tests."""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import shutil
import subprocess

LLVM_MC = "llvm-mc-19"


def find_libllvm() -> str | None:
    for pat in ("/usr/lib/llvm-19/lib/libLLVM-19.so", "/usr/lib/llvm-19/lib/libLLVM.so*",
                "/usr/lib/x86_64-linux-gnu/libLLVM-19.so*"):
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[0]
    return ctypes.util.find_library("LLVM-19")


class Disassembler:
    """One LLVM MC disassembler for an AMDGPU cpu; `dis(b)` -> (size, text) or (0, None) if invalid."""

    def __init__(self, cpu: str = "gfx1100", wave64: bool = False):
        path = find_libllvm()
        if path is None:
            raise RuntimeError("libLLVM-19 not found: install llvm-19 to regenerate the ISA tables")
        lib = ctypes.CDLL(path)
        for fn in ("LLVMInitializeAMDGPUTargetInfo", "LLVMInitializeAMDGPUTargetMC",
                   "LLVMInitializeAMDGPUDisassembler"):
            getattr(lib, fn)()
        lib.LLVMCreateDisasmCPUFeatures.restype = ctypes.c_void_p
        lib.LLVMCreateDisasmCPUFeatures.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                                    ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                                    ctypes.c_void_p]
        lib.LLVMDisasmInstruction.restype = ctypes.c_size_t
        lib.LLVMDisasmInstruction.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64,
                                              ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
        self._lib = lib
        features = b"+wavefrontsize64" if wave64 else b""
        self._dc = lib.LLVMCreateDisasmCPUFeatures(b"amdgcn-amd-amdhsa", cpu.encode(), features, None, 0, None,
                                                   None)
        if not self._dc:
            raise RuntimeError(f"LLVM has no disassembler for {cpu}")
        self._buf = ctypes.create_string_buffer(512)

    def dis(self, data: bytes) -> tuple[int, str | None]:
        n = self._lib.LLVMDisasmInstruction(self._dc, data, len(data), 0, self._buf, 512)
        return (n, self._buf.value.decode().strip()) if n else (0, None)


def have_llvm_mc() -> bool:
    return shutil.which(LLVM_MC) is not None


def mc(lines: list[str], cpu: str, disassemble: bool, wave64: bool = False) -> tuple[list[str], str]:
    """Run llvm-mc once over many lines; returns (stdout lines without the .text header, stderr)."""
    args = [LLVM_MC, "-triple=amdgcn", f"-mcpu={cpu}", "-show-encoding"]
    if wave64:
        args.append("-mattr=+wavefrontsize64")
    if disassemble:
        args.append("-disassemble")
    p = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    out = [ln for ln in p.stdout.splitlines() if ln.strip() and ln.strip() != ".text"]
    return out, p.stderr
