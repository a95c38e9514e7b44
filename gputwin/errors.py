"""Public error classes: what a GPU can do wrong, as seen from the host (docs/contracts.md, "Errors").

Every fault carries what the layer that raised it knew, and outer layers add what they know: the shader
emulator adds pc, wave and the instruction; the dispatch adds the arch and the kernel's code address; the
command processor adds the queue; the driver adds the kernel's name and the PC offset inside it."""
from __future__ import annotations

# the facts a GpuFault may carry, in the order its message lists them (None = not known)
_FACTS = ("address", "write", "pc", "kernel", "kernel_offset", "line", "instruction", "wave", "trap_id", "opcode",
          "ring_offset", "queue", "arch")
_HEX = ("address", "pc", "kernel_offset", "opcode", "ring_offset")


class GpuFault(RuntimeError):
    """A memory fault, an illegal instruction, a trap or a rejected packet raised by (emulated) GPU work.

    kind: "memory", "illegal_instruction", "trap", "packet", or "fault" (anything else the GPU reported).
    code_address is the dispatch's first instruction (COMPUTE_PGM_LO/HI << 8), from which the driver finds
    `kernel` and `kernel_offset` (= pc - code_address)."""

    def __init__(self, message: str, *, kind: str = "fault", address: int | None = None,
                 pc: int | None = None, wave: int | None = None, write: bool | None = None,
                 queue: str | None = None, arch: str | None = None, instruction: str | None = None,
                 trap_id: int | None = None, opcode: int | None = None, ring_offset: int | None = None,
                 code_address: int | None = None, kernel: str | None = None, kernel_offset: int | None = None,
                 line: int | None = None):
        self.kind, self.address, self.pc, self.wave, self.write, self.queue = kind, address, pc, wave, write, queue
        self.arch, self.instruction, self.trap_id, self.code_address = arch, instruction, trap_id, code_address
        self.opcode, self.ring_offset, self.kernel, self.kernel_offset = opcode, ring_offset, kernel, kernel_offset
        self.line = line   # source line (PTX), where the emulator runs source rather than machine code
        self.reason = message
        super().__init__(message)

    def __str__(self) -> str:
        facts = [f"{k}={v:#x}" if isinstance(v, int) and not isinstance(v, bool) and k in _HEX else f"{k}={v}"
                 for k in _FACTS if (v := getattr(self, k, None)) is not None]
        return f"{self.reason} ({', '.join(facts)})" if facts else self.reason


class MemoryFault(GpuFault):
    """A GPU access to an address that is not mapped, or mapped without the needed permission."""

    def __init__(self, message: str, *, address: int, write: bool = False, **kw):
        super().__init__(message, kind="memory", address=address, write=write, **kw)


class IllegalInstruction(GpuFault):
    """An instruction the emulator does not model (or that is invalid); names the mnemonic or bytes and PC."""

    def __init__(self, message: str, **kw):
        super().__init__(message, kind="illegal_instruction", **kw)


class PacketError(GpuFault):
    """A command packet the engine does not model or that is malformed; names opcode, queue and ring offset."""

    def __init__(self, message: str, **kw):
        super().__init__(message, kind="packet", **kw)


class SanitizerError(GpuFault):
    """What an opt-in checker (GPUTWIN_SANITIZE, docs/sanitizers.md) found wrong in GPU work that the
    hardware would have run silently: an access past an allocation, a read of memory nothing wrote, an LDS
    race, a barrier not reached by the whole workgroup. The facts are the first finding's; `findings`
    holds every finding's one-line report (the message lists them too)."""

    def __init__(self, message: str, *, findings: list[str] | None = None, **kw):
        super().__init__(message, kind="sanitizer", **kw)
        self.findings = list(findings) if findings is not None else [message]


class GpuHang(RuntimeError):
    """Work that cannot finish: it ran past the watchdog (GPUTWIN_WATCHDOG_S seconds of wall clock, or
    GPUTWIN_WATCHDOG_INSTS instructions of one wave/warp in the emulators), or an emulator proved it never
    will (waves or warps parked at a barrier nothing can release). A fault with a known cause is a GpuFault."""


class DeviceLost(RuntimeError):
    """The device reported a fault or a hang earlier; its queues are gone. Open a fresh device."""


class OutOfMemory(MemoryError):
    """An allocation the device (or the host backing it) cannot satisfy; names the size and the heap."""

    def __init__(self, message: str, *, size: int, heap: str):
        self.size, self.heap = size, heap
        super().__init__(message)


class KernelNotFound(KeyError):
    """dev.load(image, name) with a name the code object does not define; lists the names it does."""

    def __init__(self, name: str, available: list[str], where: str = "the code object", detail: str = ""):
        self.name, self.available, self.where, self.detail = name, sorted(available), where, detail
        super().__init__(name)

    def __str__(self) -> str:   # KeyError would print the repr of its argument
        head = self.detail or f"no kernel {self.name!r} in {self.where}"
        return f"{head}; it has {', '.join(self.available) or 'none'}"
