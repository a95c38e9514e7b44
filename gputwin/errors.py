"""Public error classes: what a GPU can do wrong, as seen from the host."""
from __future__ import annotations


class GpuFault(RuntimeError):
    """A memory fault, an illegal instruction or a trap raised by (emulated) GPU code.

    Carries whatever of address / pc / wave / queue the layer that raised it knew; outer layers add
    what they know (the emulator adds pc and wave, the command processor adds the queue)."""

    def __init__(self, message: str, *, kind: str = "fault", address: int | None = None,
                 pc: int | None = None, wave: int | None = None, write: bool | None = None,
                 queue: str | None = None):
        self.kind, self.address, self.pc, self.wave, self.write, self.queue = kind, address, pc, wave, write, queue
        self.reason = message
        super().__init__(message)

    def __str__(self) -> str:
        facts = [f"{k}={v:#x}" if isinstance(v, int) and k in ("address", "pc") else f"{k}={v}"
                 for k, v in (("address", self.address), ("write", self.write), ("pc", self.pc),
                              ("wave", self.wave), ("queue", self.queue)) if v is not None]
        return f"{self.reason} ({', '.join(facts)})" if facts else self.reason


class MemoryFault(GpuFault):
    """A GPU access to an address that is not mapped, or mapped without the needed permission."""

    def __init__(self, message: str, *, address: int, write: bool = False, **kw):
        super().__init__(message, kind="memory", address=address, write=write, **kw)


class IllegalInstruction(GpuFault):
    """An instruction the emulator does not model (or that is invalid); names the mnemonic or bytes and PC."""

    def __init__(self, message: str, **kw):
        super().__init__(message, kind="illegal_instruction", **kw)


class GpuHang(RuntimeError):
    """A dispatch or queue that did not finish within the watchdog (GPUTWIN_WATCHDOG_S seconds)."""
