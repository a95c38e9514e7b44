"""A named bit field of a 32-bit packet dword or register, shared by the abi/ header modules.

`F(value)` places a value into the field (as the C headers' `FIELD(x)` macros do: `((x) & mask) << shift`),
`F.get(dword)` reads it back, so the packet builder and the packet parser use the same fact.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    shift: int
    width: int

    @property
    def mask(self) -> int:
        """The field's mask in place (the headers' `__MASK` / `_mask << _shift`)."""
        return ((1 << self.width) - 1) << self.shift

    def __call__(self, value: int) -> int:
        return (int(value) & ((1 << self.width) - 1)) << self.shift

    def get(self, dword: int) -> int:
        return (int(dword) >> self.shift) & ((1 << self.width) - 1)
