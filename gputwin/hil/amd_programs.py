"""The AMD conformance programs: one hand-written kernel per instruction, gfx1100 / gfx1201 (wave32) and
gfx942 (wave64), same contract as the NV set: lane i computes out[i] = OP(in0[i], in1[i], in2[i]) on raw 32-bit
patterns for i < n, kernel arguments (out, in0, in1, in2, count), block 256.

The assembly is generated here; tools/hil_build_amd.py assembles it with llvm-mc-19 + ld.lld-19 into one code
object per arch, committed as gputwin/hil/amd/<arch>.hsaco so a machine with only the GPU needs no LLVM.
"""
from __future__ import annotations

import functools
import pathlib
from dataclasses import dataclass

import numpy as np

ARCHS = ("gfx1100", "gfx1201", "gfx942")
HERE = pathlib.Path(__file__).parent / "amd"

# (instruction, arity, input kind); the result is always written as the raw 32-bit VGPR
OPS: tuple[tuple[str, int, str], ...] = (
    ("v_exp_f32", 1, "f32"), ("v_log_f32", 1, "f32"), ("v_rcp_f32", 1, "f32"), ("v_rcp_iflag_f32", 1, "f32"),
    ("v_rsq_f32", 1, "f32"), ("v_sqrt_f32", 1, "f32"), ("v_sin_f32", 1, "f32"), ("v_cos_f32", 1, "f32"),
    # exact, as checks
    ("v_fma_f32", 3, "f32"), ("v_add_f32", 2, "f32"), ("v_mul_f32", 2, "f32"), ("v_cvt_i32_f32", 1, "f32"),
    ("v_cvt_f32_i32", 1, "s32"), ("v_rndne_f32", 1, "f32"), ("v_fract_f32", 1, "f32"), ("v_mul_hi_i32", 2, "s32"),
)

_WAVE32 = {   # gfx11 / gfx12 spelling
    "load_args": "  s_load_b256 s[4:11], s[0:1], 0x0\n  s_load_b32 s12, s[0:1], 0x20\n",
    "gid": "  s_lshl_b32 s13, s2, 8\n  v_add_nc_u32 v1, s13, v0\n",
    "guard": "  v_cmp_gt_u32 vcc_lo, s12, v1\n  s_and_saveexec_b32 s14, vcc_lo\n  s_cbranch_execz .Lend_{k}\n",
    "load": "  global_load_b32 v{r}, v2, s[{lo}:{hi}]\n", "store": "  global_store_b32 v2, v6, s[4:5]\n",
}
SYNTAX = {
    "gfx1100": {**_WAVE32, "wait_args": "  s_waitcnt lgkmcnt(0)\n", "wait_loads": "  s_waitcnt vmcnt(0)\n"},
    # GFX12 has architected SGPRs: the workgroup ID X is in TTMP9, not a system SGPR after the user SGPRs
    "gfx1201": {**_WAVE32, "gid": "  s_lshl_b32 s13, ttmp9, 8\n  v_add_nc_u32 v1, s13, v0\n",
                "wait_args": "  s_wait_kmcnt 0x0\n", "wait_loads": "  s_wait_loadcnt 0x0\n"},
    "gfx942": {
        "load_args": "  s_load_dwordx8 s[4:11], s[0:1], 0x0\n  s_load_dword s12, s[0:1], 0x20\n",
        "gid": "  s_lshl_b32 s13, s2, 8\n  v_add_u32 v1, s13, v0\n",
        "guard": "  v_cmp_gt_u32 vcc, s12, v1\n  s_and_saveexec_b64 s[14:15], vcc\n  s_cbranch_execz .Lend_{k}\n",
        "load": "  global_load_dword v{r}, v2, s[{lo}:{hi}]\n", "store": "  global_store_dword v2, v6, s[4:5]\n",
        "wait_args": "  s_waitcnt lgkmcnt(0)\n", "wait_loads": "  s_waitcnt vmcnt(0)\n",
    },
}


@dataclass(frozen=True)
class Program:
    op: str
    arity: int
    in_kind: str
    out_kind: str = "b32"

    @property
    def kernel(self) -> str:
        return "hil_" + self.op

    @property
    def dtype(self):
        return np.uint32

    def text(self, arch: str) -> str:
        """This kernel's assembly and kernel descriptor for `arch` (the recordings hash it)."""
        s, k = SYNTAX[arch], self.kernel
        srcs = ", ".join(f"v{3 + i}" for i in range(self.arity))
        loads = "".join(s["load"].format(r=3 + i, lo=6 + 2 * i, hi=7 + 2 * i) for i in range(self.arity))
        wave64 = arch == "gfx942"
        descriptor = ("  .amdhsa_accum_offset 8\n" if wave64 else "  .amdhsa_wavefront_size32 1\n")
        return (f".text\n.globl {k}\n.p2align 8\n.type {k},@function\n{k}:\n" + s["load_args"] + s["gid"]
                + s["wait_args"] + s["guard"].format(k=k) + "  v_lshlrev_b32 v2, 2, v1\n" + loads + s["wait_loads"]
                + f"  {self.op} v6, {srcs}\n" + s["store"] + f".Lend_{k}:\n  s_endpgm\n.Lfunc_end_{k}:\n"
                f".size {k}, .Lfunc_end_{k}-{k}\n\n.rodata\n.p2align 6\n.amdhsa_kernel {k}\n"
                "  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_user_sgpr_count 2\n"
                "  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_next_free_vgpr 8\n  .amdhsa_next_free_sgpr 16\n"
                f"  .amdhsa_kernarg_size 40\n{descriptor}.end_amdhsa_kernel\n")

    def metadata(self, arch: str) -> str:
        args = "".join(f"      - .name: {name}\n        .offset: {8 * i}\n        .size: 8\n"
                       "        .value_kind: global_buffer\n        .address_space: global\n"
                       for i, name in enumerate(("out", "in0", "in1", "in2")))
        return (f"  - .name: {self.kernel}\n    .symbol: {self.kernel}.kd\n    .kernarg_segment_size: 40\n"
                "    .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n    .private_segment_fixed_size: 0\n"
                f"    .wavefront_size: {64 if arch == 'gfx942' else 32}\n    .sgpr_count: 16\n    .vgpr_count: 8\n"
                "    .max_flat_workgroup_size: 256\n    .args:\n" + args
                + "      - .name: count\n        .offset: 32\n        .size: 4\n        .value_kind: by_value\n")

    def image(self, arch: str) -> bytes:
        return code_object(arch)


PROGRAMS: tuple[Program, ...] = tuple(Program(*o) for o in OPS)


def module_source(arch: str) -> str:
    """The whole module (every program) for llvm-mc: target, kernels, then the HSA metadata (YAML)."""
    if arch not in SYNTAX:
        raise ValueError(f"no AMD conformance programs for {arch}; written for {', '.join(ARCHS)}")
    return (f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}"\n' + "\n".join(p.text(arch) for p in PROGRAMS)
            + f"\n.amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.target: amdgcn-amd-amdhsa--{arch}\n"
            "amdhsa.kernels:\n" + "".join(p.metadata(arch) for p in PROGRAMS) + "...\n.end_amdgpu_metadata\n")


@functools.lru_cache(maxsize=None)
def code_object(arch: str) -> bytes:
    path = HERE / f"{arch}.hsaco"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: python tools/hil_build_amd.py (needs llvm-mc-19, ld.lld-19)")
    return path.read_bytes()
