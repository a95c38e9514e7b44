"""A GPFIFO channel: the PBDMA front end that fetches GPFIFO entries, decodes pushbuffer methods and hands
each method to the host class (methods below 0x100) or to the engine object bound on its subchannel.

GPFIFO: a ring of `entries` 8-byte entries at `gpfifo_va`; the host writes GP_PUT (an entry index) into
USERD at 0x8C and rings the doorbell; the channel writes GP_GET back at 0x88 after each consumed entry.
An entry gives a pushbuffer segment (address 39:2, LENGTH dwords); LENGTH 0 is a control entry (NOP).
Pushbuffer dwords are method headers (NVC56F_DMA_*: incrementing, non-incrementing, increment-once,
immediate data, END_PB_SEGMENT) followed by their data. A method that cannot complete yet (a semaphore
acquire not satisfied) parks the channel at that data dword; it is retried on the next run.
"""
from __future__ import annotations

import numpy as np

from gputwin.abi import nv_methods as m
from gputwin.abi.nv_classes import CLASS_NAMES
from gputwin.errors import GpuFault


class MethodError(GpuFault):
    """A method, class or pushbuffer encoding the emulator does not model; names it and where it was."""

    def __init__(self, message: str, **kw):
        super().__init__(message, kind="method", **kw)


class Channel:
    def __init__(self, gpu, gpfifo_va: int, entries: int, userd: np.ndarray, token: int, name: str):
        if entries <= 0 or entries & (entries - 1):
            raise ValueError(f"GPFIFO of {entries} entries is not a power of two")
        self.gpu, self.gpfifo_va, self.entries, self.token, self.name = gpu, gpfifo_va, entries, token, name
        self.userd = userd.view(np.uint32)
        self.gp_get = 0
        self.pending = False
        self.stopped = False
        self.error: BaseException | None = None
        self.enabled = True
        self.engines: dict[int, object] = {}      # subchannel -> engine object (host/compute/copy state)
        self.host = None                          # the channel's host-class state (emu.nv.host.Host)
        self.objects: dict[int, object] = {}      # class id -> engine allocated on this channel (by RM)
        self._seg: tuple[int, int] | None = None  # (next dword address, dwords left) of the current segment
        self._mthd: tuple[int, int, int, int] | None = None   # (sec_op, subchannel, method, count left)
        self._first_method = 0                    # the header's method, for increment-once
        self._words: list[int] = []               # the current segment, as fetched
        from gputwin.emu.nv.host import Host
        self.host = Host(self)

    def describe(self, where: int | None = None) -> str:
        at = f" at pushbuffer {where:#x}" if where is not None else ""
        return f"channel {self.name} (GP_GET {self.gp_get}){at}"

    def bind_object(self, class_id: int, engine) -> None:
        """RM allocated an engine object of `class_id` on this channel; SET_OBJECT binds it to a subchannel."""
        self.objects[class_id] = engine

    def runnable(self) -> bool:
        return self.enabled and not self.stopped and (self._seg is not None or self.gp_put() != self.gp_get)

    def gp_put(self) -> int:
        return int(self.userd[m.USERD_GP_PUT // 4]) % self.entries

    # --- one step: a method (or one GPFIFO entry fetch) ------------------------------------------------
    def step(self) -> bool:
        if self._seg is None:
            if self.gp_put() == self.gp_get:
                return False
            e0, e1 = (int(x) for x in self.gpu.mem.view(self.gpfifo_va + 8 * self.gp_get, 8).view("<u4"))
            length = (e1 >> m.GP_ENTRY1_LENGTH_SHIFT) & m.GP_ENTRY1_LENGTH_MASK
            if e1 & m.GP_ENTRY1_LEVEL_SUBROUTINE:
                raise MethodError(f"GPFIFO entry {self.gp_get} is a SUBROUTINE-level entry (not modelled)",
                                  queue=self.name)
            if length:
                address = (e0 & 0xFFFFFFFC) | (e1 & m.GP_ENTRY1_GET_HI_MASK) << 32
                # the PBDMA fetches the segment ahead of executing it
                self._words = self.gpu.mem.view(address, 4 * length).view("<u4").tolist()
                self._seg = (address, length)
            else:
                self._advance_gp_get()
            self.gpu.stats.gp_entries += 1
            return True
        addr, left = self._seg
        if self._mthd is None:
            self._header(addr)
        elif not self._data(addr):
            return False
        return True

    def _advance_gp_get(self) -> None:
        self.gp_get = (self.gp_get + 1) % self.entries
        self.userd[m.USERD_GP_GET // 4] = self.gp_get

    def _consume(self) -> None:
        addr, left = self._seg
        self._seg = (addr + 4, left - 1) if left > 1 else None
        if self._seg is None:
            if self._mthd is not None and self._mthd[3] > 0:
                raise MethodError(f"pushbuffer segment ended with {self._mthd[3]} data dwords of the "
                                  f"method {self._first_method:#x} header missing", queue=self.name)
            self._mthd = None
            self._advance_gp_get()

    def _word(self) -> int:
        return self._words[len(self._words) - self._seg[1]]

    def _header(self, addr: int) -> None:
        h = self._word()
        sec_op, subc, method, count = m.decode_header(h)
        if sec_op == m.SEC_OP_IMMD_DATA_METHOD:
            if not self._method(subc, method, count, addr):
                return                               # parked: the header is re-read next time
            self._consume()
        elif sec_op in (m.SEC_OP_INC_METHOD, m.SEC_OP_NON_INC_METHOD, m.SEC_OP_ONE_INC):
            if count:
                self._mthd, self._first_method = (sec_op, subc, method, count), method
            self._consume()
        elif sec_op == m.SEC_OP_END_PB_SEGMENT:
            self._seg = None
            self._advance_gp_get()
        elif h == 0:                                 # NVC56F_DMA_NOP
            self._consume()
        else:
            raise MethodError(f"pushbuffer header {h:#010x} ({m.SEC_OP_NAMES[sec_op]}) is not modelled",
                              queue=self.name, address=addr)

    def _data(self, addr: int) -> bool:
        sec_op, subc, method, count = self._mthd
        if not self._method(subc, method, self._word(), addr):
            return False
        if sec_op == m.SEC_OP_INC_METHOD or (sec_op == m.SEC_OP_ONE_INC and method == self._first_method):
            method += 4
        self._mthd = (sec_op, subc, method, count - 1) if count > 1 else None
        self._consume()
        return True

    # --- method dispatch ----------------------------------------------------------------------------------
    def _method(self, subc: int, method: int, data: int, addr: int) -> bool:
        """Execute one method; False when it must wait (the channel parks)."""
        self.gpu.tick()
        self.gpu.stats.methods += 1
        if method < m.HOST_METHOD_LIMIT:
            if method == m.NVC56F_SET_OBJECT:
                return self._set_object(subc, data, addr)
            return self.host.method(method, data, addr)
        engine = self.engines.get(subc)
        if engine is None:
            raise MethodError(f"method {method:#x} on subchannel {subc}, which has no object bound",
                              queue=self.name, address=addr)
        return engine.method(method, data, addr)

    def _set_object(self, subc: int, data: int, addr: int) -> bool:
        class_id = data & 0xFFFF
        engine = self.objects.get(class_id)
        if engine is None:
            raise MethodError(f"SET_OBJECT of class {CLASS_NAMES.get(class_id, hex(class_id))} on subchannel {subc}: "
                              f"no such object was allocated on this channel", queue=self.name, address=addr)
        self.engines[subc] = engine
        return True
