"""Queue Meta Data (QMD) version 03_00: the launch descriptor of AMPERE_COMPUTE_A and HOPPER_COMPUTE_A.

Field positions are the MW(hi:lo) bit ranges of NVIDIA/open-gpu-doc `classes/compute/clc6c0qmd.h`
(NVC6C0_QMDV03_00_*); `clcbc0qmd.h` defines the same V03_00 layout for Hopper (next to V04_00, which gputwin
does not model). A QMD is 256 bytes (64 dwords); bit n lives in dword n // 32.
"""
from __future__ import annotations

import numpy as np

QMD_SIZE = 0x100
QMD_MAJOR_VERSION_03 = 3
QMD_VERSION_00 = 0

# name -> (hi, lo)
FIELDS: dict[str, tuple[int, int]] = {
    "SM_GLOBAL_CACHING_ENABLE": (134, 134),
    "INVALIDATE_TEXTURE_HEADER_CACHE": (186, 186),
    "INVALIDATE_TEXTURE_SAMPLER_CACHE": (187, 187),
    "INVALIDATE_TEXTURE_DATA_CACHE": (188, 188),
    "INVALIDATE_SHADER_DATA_CACHE": (189, 189),
    "INVALIDATE_INSTRUCTION_CACHE": (190, 190),
    "INVALIDATE_SHADER_CONSTANT_CACHE": (191, 191),
    "CWD_MEMBAR_TYPE": (369, 368),
    "API_VISIBLE_CALL_LIMIT": (378, 378),
    "SAMPLER_INDEX": (382, 382),
    "CTA_RASTER_WIDTH": (415, 384),
    "CTA_RASTER_HEIGHT": (431, 416),
    "CTA_RASTER_DEPTH": (463, 448),
    "DEPENDENT_QMD0_POINTER": (511, 480),
    "DEPENDENT_QMD0_ENABLE": (512, 512),
    "DEPENDENT_QMD0_ACTION": (515, 513),
    "DEPENDENT_QMD0_PREFETCH": (516, 516),
    "SHARED_MEMORY_SIZE": (561, 544),
    "MIN_SM_CONFIG_SHARED_MEM_SIZE": (567, 562),
    "MAX_SM_CONFIG_SHARED_MEM_SIZE": (574, 569),
    "QMD_VERSION": (579, 576),
    "QMD_MAJOR_VERSION": (583, 580),
    "CTA_THREAD_DIMENSION0": (607, 592),
    "CTA_THREAD_DIMENSION1": (623, 608),
    "CTA_THREAD_DIMENSION2": (639, 624),
    "REGISTER_COUNT_V": (656, 648),
    "TARGET_SM_CONFIG_SHARED_MEM_SIZE": (662, 657),
    "SHARED_ALLOCATION_ENABLE": (663, 663),
    "SHADER_LOCAL_MEMORY_LOW_SIZE": (759, 736),
    "BARRIER_COUNT": (767, 763),
    "PROGRAM_ADDRESS_LOWER": (1567, 1536),
    "PROGRAM_ADDRESS_UPPER": (1584, 1568),
    "SASS_VERSION": (1663, 1656),
}
for _i, _base in enumerate((768, 896, 1664)):          # RELEASE0, RELEASE1, RELEASE2
    FIELDS.update({
        f"RELEASE{_i}_ADDRESS_LOWER": (_base + 31, _base), f"RELEASE{_i}_ADDRESS_UPPER": (_base + 39, _base + 32),
        f"RELEASE{_i}_MEMBAR_TYPE": (_base + 51, _base + 51), f"RELEASE{_i}_REDUCTION_OP": (_base + 54, _base + 52),
        f"RELEASE{_i}_ENABLE": (_base + 55, _base + 55), f"RELEASE{_i}_REDUCTION_FORMAT": (_base + 57, _base + 56),
        f"RELEASE{_i}_REDUCTION_ENABLE": (_base + 58, _base + 58),
        f"RELEASE{_i}_NON_BLOCKING_INTR_TYPE": (_base + 60, _base + 59),
        f"RELEASE{_i}_PAYLOAD64B": (_base + 61, _base + 61), f"RELEASE{_i}_STRUCTURE_SIZE": (_base + 63, _base + 62),
        f"RELEASE{_i}_PAYLOAD_LOWER": (_base + 95, _base + 64), f"RELEASE{_i}_PAYLOAD_UPPER": (_base + 127, _base + 96),
    })
for _i in range(8):                                   # constant buffers 0..7
    FIELDS[f"CONSTANT_BUFFER_VALID{_i}"] = (640 + _i, 640 + _i)
    FIELDS[f"CONSTANT_BUFFER_ADDR_LOWER{_i}"] = (1055 + _i * 64, 1024 + _i * 64)
    FIELDS[f"CONSTANT_BUFFER_ADDR_UPPER{_i}"] = (1072 + _i * 64, 1056 + _i * 64)
    FIELDS[f"CONSTANT_BUFFER_SIZE_SHIFTED4{_i}"] = (1087 + _i * 64, 1075 + _i * 64)

RELEASE_STRUCTURE_SIZE_FOUR_WORDS, RELEASE_STRUCTURE_SIZE_ONE_WORD, RELEASE_STRUCTURE_SIZE_TWO_WORDS = 0, 1, 2
DEPENDENT_QMD_ACTION_QMD_SCHEDULE = 1
DEPENDENT_QMD_ACTION_QMD_INVALIDATE_COPY_SCHEDULE = 3


class QMD:
    """A QMD as 64 little-endian dwords, read and written by field name."""

    def __init__(self, data: bytes | None = None):
        raw = bytes(QMD_SIZE) if data is None else bytes(data)
        if len(raw) != QMD_SIZE:
            raise ValueError(f"a QMD is {QMD_SIZE} bytes, got {len(raw)}")
        self.value = int.from_bytes(raw, "little")

    @staticmethod
    def _field(name: str) -> tuple[int, int]:
        try:
            return FIELDS[name]
        except KeyError:
            raise KeyError(f"QMD V03_00 has no field {name}") from None

    def get(self, name: str) -> int:
        hi, lo = self._field(name)
        return (self.value >> lo) & ((1 << (hi - lo + 1)) - 1)

    def set(self, name: str, value: int) -> "QMD":
        hi, lo = self._field(name)
        mask = (1 << (hi - lo + 1)) - 1
        if not 0 <= value <= mask:
            raise ValueError(f"QMD field {name} ({hi - lo + 1} bits) cannot hold {value:#x}")
        self.value = self.value & ~(mask << lo) | value << lo
        return self

    def to_bytes(self) -> bytes:
        return self.value.to_bytes(QMD_SIZE, "little")

    def dwords(self) -> np.ndarray:
        return np.frombuffer(self.to_bytes(), "<u4")
