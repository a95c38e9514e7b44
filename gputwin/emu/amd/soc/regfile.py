"""The MMIO register file behind BAR5: registers addressed by dword (the byte offset in the BAR / 4, which
is what amdgpu's SOC15 offsets plus the IP block's base from the discovery table give).

Fail closed: a register no block models raises RegisterError naming the dword and byte offset, never a
silent zero. A register is plain storage unless its block gives read/write hooks (for side effects such as
a mailbox command or a queue activation)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


class RegisterError(RuntimeError):
    """An MMIO access to a register the emulated GPU does not model (or an access it rejects)."""


@dataclass
class Register:
    name: str
    value: int = 0
    read: Callable[[], int] | None = None
    write: Callable[[int], None] | None = None


class RegisterFile:
    def __init__(self, name: str):
        self.name = name
        self._regs: dict[int, Register] = {}

    def add(self, dword: int, name: str, *, reset: int = 0, read: Callable[[], int] | None = None,
            write: Callable[[int], None] | None = None) -> Register:
        if dword in self._regs:
            raise ValueError(f"{self.name}: {name} at dword {dword:#x} collides with {self._regs[dword].name}")
        reg = self._regs[dword] = Register(name, reset & 0xFFFFFFFF, read, write)
        return reg

    def add_read_only(self, dword: int, name: str, value: int) -> Register:
        """A register the hardware (or the VBIOS, before any driver runs) owns: reads give `value`, a write fails."""
        def refuse(v: int) -> None:
            raise RegisterError(f"{self.name}: write of {v:#x} to read-only {name}")
        return self.add(dword, name, reset=value, write=refuse)

    def remove(self, dword: int) -> None:
        """Stop decoding a register (one a block moved, e.g. a remapped flush register)."""
        del self._regs[dword]

    def __contains__(self, dword: int) -> bool:
        return dword in self._regs

    def dwords(self) -> list[int]:
        """Every modelled register's dword address."""
        return sorted(self._regs)

    def get(self, dword: int) -> Register:
        reg = self._regs.get(dword)
        if reg is None:
            raise RegisterError(f"{self.name}: MMIO register at dword {dword:#x} (byte offset {4 * dword:#x}) "
                                f"is not modelled")
        return reg

    def read(self, dword: int) -> int:
        reg = self.get(dword)
        return reg.read() & 0xFFFFFFFF if reg.read else reg.value

    def write(self, dword: int, value: int) -> None:
        reg = self.get(dword)
        value &= 0xFFFFFFFF
        if reg.write:
            reg.write(value)
        else:
            reg.value = value

    def value(self, dword: int) -> int:
        """The stored value (what the last write left), without a read hook's side effects."""
        return self.get(dword).value
