"""GFX9 (gfx942) mnemonics -> the RDNA3 mnemonic of the same operation (the emulator's vocabulary).

The CDNA3 decoder reports `Inst.op` in RDNA3 terms when the two instructions compute the same thing on
the same operands, so one set of semantics serves both. Names left alone either exist on both with the
same meaning (v_add_f32, s_add_u32, v_add_co_u32) or are GFX9-only (v_mfma_*, v_accvgpr_*, ds_cmpst_*,
whose operand order differs from gfx11's ds_cmpstore) and are modelled under their own name, or not.
"""
from __future__ import annotations

import functools
import re

# Memory data sizes: GFX9 suffix -> RDNA3 suffix.
_SIZES = {"dword": "b32", "dwordx2": "b64", "dwordx3": "b96", "dwordx4": "b128", "dwordx8": "b256",
          "dwordx16": "b512", "ubyte": "u8", "sbyte": "i8", "ushort": "u16", "sshort": "i16", "byte": "b8",
          "short": "b16", "ubyte_d16": "d16_u8", "sbyte_d16": "d16_i8", "short_d16": "d16_b16",
          "ubyte_d16_hi": "d16_hi_u8", "sbyte_d16_hi": "d16_hi_i8", "short_d16_hi": "d16_hi_b16",
          "byte_d16_hi": "d16_hi_b8"}
# Atomics: GFX9 operation (with _x2 for 64-bit) -> RDNA3 suffix.
_ATOMICS = {"add": "add_u32", "sub": "sub_u32", "smin": "min_i32", "umin": "min_u32", "smax": "max_i32",
            "umax": "max_u32", "and": "and_b32", "or": "or_b32", "xor": "xor_b32", "swap": "swap_b32",
            "cmpswap": "cmpswap_b32", "inc": "inc_u32", "dec": "dec_u32"}
_DS = {"ds_write_b8": "ds_store_b8", "ds_write_b16": "ds_store_b16", "ds_write_b32": "ds_store_b32",
       "ds_write_b64": "ds_store_b64", "ds_write_b96": "ds_store_b96", "ds_write_b128": "ds_store_b128",
       "ds_write2_b32": "ds_store_2addr_b32", "ds_write2_b64": "ds_store_2addr_b64",
       "ds_write2st64_b32": "ds_store_2addr_stride64_b32", "ds_write2st64_b64": "ds_store_2addr_stride64_b64",
       "ds_read_b32": "ds_load_b32", "ds_read_b64": "ds_load_b64", "ds_read_b96": "ds_load_b96",
       "ds_read_b128": "ds_load_b128", "ds_read_u8": "ds_load_u8", "ds_read_i8": "ds_load_i8",
       "ds_read_u16": "ds_load_u16", "ds_read_i16": "ds_load_i16", "ds_read2_b32": "ds_load_2addr_b32",
       "ds_read2_b64": "ds_load_2addr_b64", "ds_read2st64_b32": "ds_load_2addr_stride64_b32",
       "ds_read2st64_b64": "ds_load_2addr_stride64_b64", "ds_wrxchg_rtn_b32": "ds_storexchg_rtn_b32",
       "ds_wrxchg_rtn_b64": "ds_storexchg_rtn_b64", "ds_wrxchg2_rtn_b32": "ds_storexchg_2addr_rtn_b32",
       "ds_wrxchg2_rtn_b64": "ds_storexchg_2addr_rtn_b64",
       "ds_wrxchg2st64_rtn_b32": "ds_storexchg_2addr_stride64_rtn_b32",
       "ds_wrxchg2st64_rtn_b64": "ds_storexchg_2addr_stride64_rtn_b64", "ds_write_b8_d16_hi": "ds_store_b8_d16_hi",
       "ds_write_b16_d16_hi": "ds_store_b16_d16_hi", "ds_read_u8_d16": "ds_load_u8_d16",
       "ds_read_u8_d16_hi": "ds_load_u8_d16_hi", "ds_read_i8_d16": "ds_load_i8_d16",
       "ds_read_i8_d16_hi": "ds_load_i8_d16_hi", "ds_read_u16_d16": "ds_load_u16_d16",
       "ds_read_u16_d16_hi": "ds_load_u16_d16_hi"}
_VALU = {"v_add_u32": "v_add_nc_u32", "v_sub_u32": "v_sub_nc_u32", "v_subrev_u32": "v_subrev_nc_u32",
         "v_addc_co_u32": "v_add_co_ci_u32", "v_subb_co_u32": "v_sub_co_ci_u32",
         "v_subbrev_co_u32": "v_subrev_co_ci_u32", "v_add_u16": "v_add_nc_u16", "v_sub_u16": "v_sub_nc_u16",
         "v_add_i32": "v_add_nc_i32", "v_sub_i32": "v_sub_nc_i32", "v_add_i16": "v_add_nc_i16",
         "v_sub_i16": "v_sub_nc_i16", "v_ffbh_u32": "v_clz_i32_u32", "v_ffbl_b32": "v_ctz_i32_b32",
         "v_ffbh_i32": "v_cls_i32", "v_cvt_pkrtz_f16_f32": "v_cvt_pk_rtz_f16_f32",
         "v_cvt_pknorm_i16_f32": "v_cvt_pk_norm_i16_f32", "v_cvt_pknorm_u16_f32": "v_cvt_pk_norm_u16_f32"}
_SALU = {"s_andn2_b32": "s_and_not1_b32", "s_andn2_b64": "s_and_not1_b64", "s_orn2_b32": "s_or_not1_b32",
         "s_orn2_b64": "s_or_not1_b64", "s_andn2_saveexec_b64": "s_and_not1_saveexec_b64",
         "s_orn2_saveexec_b64": "s_or_not1_saveexec_b64", "s_andn1_saveexec_b64": "s_and_not0_saveexec_b64",
         "s_orn1_saveexec_b64": "s_or_not0_saveexec_b64", "s_ff1_i32_b32": "s_ctz_i32_b32",
         "s_ff1_i32_b64": "s_ctz_i32_b64", "s_flbit_i32_b32": "s_clz_i32_u32", "s_flbit_i32_b64": "s_clz_i32_u64",
         "s_flbit_i32": "s_cls_i32", "s_flbit_i32_i64": "s_cls_i32_i64"}
_MEM = re.compile(r"^(s_load|s_buffer_load|global_load|global_store|flat_load|flat_store|scratch_load|"
                  r"scratch_store|buffer_load|buffer_store)_(\w+)$")
_ATOMIC = re.compile(r"^(global|flat|buffer)_atomic_(\w+?)(_x2)?$")
_CMP_TRUE = re.compile(r"^(v_cmpx?)_tru_(f16|f32|f64)$")     # GFX9 "tru" (always true) is RDNA3's "t"


@functools.cache
def canonical(op: str) -> str:
    """The RDNA3 mnemonic for GFX9 mnemonic `op` (itself when there is none)."""
    for table in (_VALU, _SALU, _DS):
        if op in table:
            return table[op]
    m = _MEM.match(op)
    if m and m[2] in _SIZES:
        return f"{m[1]}_{_SIZES[m[2]]}"
    m = _CMP_TRUE.match(op)
    if m:
        return f"{m[1]}_t_{m[2]}"
    m = _ATOMIC.match(op)
    if m and m[2] in _ATOMICS:
        suffix = _ATOMICS[m[2]]
        if m[3]:
            suffix = suffix[:-2] + "64"
        return f"{m[1]}_atomic_{suffix}"
    return op
