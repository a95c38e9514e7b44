"""The ASM2464 custom-firmware protocol on top of UsbTransport (numbers in gputwin/abi/asm2464.py; the
protocol in docs/usb.md): XDATA access, PCIe power and link-up wait, single PCIe requests with their
completion status, streamed memory reads and writes, and SRAM DMA.

Retries, all bounded (a vanished enclosure, UsbDisconnected, is never retried):
- a stalled or timed-out transfer: clear both bulk endpoints' halts (which also cancels a half-done
  stream in the firmware) and redo the whole operation, `usb_attempts` times in all;
- the 8-byte completion read (0xF0 IN) that timed out or stalled is read again alone: the firmware keeps
  the last completion until the next request, so the request is not sent twice;
- a request the engine got no completion for (return code 1: error, 0xFF: the firmware stopped polling)
  is sent again, `tlp_attempts` times;
- a configuration request completed with CRS (the function is not ready) is sent again until
  `crs_timeout_s` passes (PCIe gives a function 1 s after reset).
UR and CA completions are answers, not transient: they raise TlpError at once.

Redoing a write repeats it; for memory and registers without side effects on write that is harmless,
for one with side effects (a FIFO, a doorbell) it is the same risk any retrying PCIe host takes."""
from __future__ import annotations

import struct
import time

from gputwin.abi import asm2464 as fw
from gputwin.abi import pcie as regs
from gputwin.abi.pcie import Completion
from gputwin.drivers.usb.errors import (LinkDown, TlpError, UsbBridgeError, UsbDisconnected, UsbStall, UsbTimeout,
                                       UsbTransferError)
from gputwin.drivers.usb.transport import EP_IN, EP_OUT, UsbTransport

STREAM_CHUNK = 4 << 20      # bytes per streamed request (bounds one bulk transfer's size and timeout)
_TLP_NAMES = {regs.TLP_MRD32: "MRd32", regs.TLP_MRD64: "MRd64", regs.TLP_MWR32: "MWr32", regs.TLP_MWR64: "MWr64",
              regs.TLP_CFGRD0: "CfgRd0", regs.TLP_CFGRD1: "CfgRd1", regs.TLP_CFGWR0: "CfgWr0",
              regs.TLP_CFGWR1: "CfgWr1"}


class Asm2464Protocol:
    def __init__(self, transport: UsbTransport, *, usb_attempts: int = 3, tlp_attempts: int = 10,
                 crs_timeout_s: float = 1.0, retry_delay_s: float = 0.001):
        self.usb = transport
        self.usb_attempts, self.tlp_attempts = usb_attempts, tlp_attempts
        self.crs_timeout_s, self.retry_delay_s = crs_timeout_s, retry_delay_s
        self.retries = 0     # how many times anything was redone (tests and benchmarks read it)

    def _retrying(self, what: str, op):
        for attempt in range(self.usb_attempts):
            try:
                return op()
            except UsbDisconnected:
                raise
            except UsbTransferError as e:
                if attempt + 1 == self.usb_attempts:
                    raise type(e)(f"{what}: {e} (gave up after {self.usb_attempts} attempts)") from None
                self.retries += 1
                self._resync()

    def _resync(self) -> None:
        for ep in (EP_OUT, EP_IN):
            self.usb.clear_halt(ep)

    # --- XDATA -----------------------------------------------------------------------------------------
    def xdata_read(self, address: int, size: int) -> bytes:
        out = bytearray()
        while len(out) < size:
            want = min(fw.XDATA_READ_MAX, size - len(out))
            got = self._retrying(f"XDATA read at {address + len(out):#06x}", lambda: self.usb.control_in(
                fw.REQ_XDATA_READ, want, value=address + len(out)))
            if not got:
                raise UsbBridgeError(f"XDATA read at {address + len(out):#06x} returned no data")
            out += got
        return bytes(out)

    def xdata_write(self, address: int, data: bytes) -> None:
        for i, value in enumerate(data):
            self._retrying(f"XDATA write at {address + i:#06x}", lambda: self.usb.control_out(
                fw.REQ_XDATA_WRITE, value=address + i, index=value))

    # --- PCIe power and link ---------------------------------------------------------------------------
    def link_state(self) -> int:
        return self.xdata_read(fw.XDATA_LTSSM, 1)[0]

    def power_on(self, timeout_s: float = 2.0, poll_s: float = 0.01) -> None:
        """Power the PCIe slot if the link is not up, then wait (bounded) for the link to train."""
        if self.link_state() == fw.LTSSM_L0:
            return
        self._retrying("PCIe power on", lambda: self.usb.control_out(fw.REQ_PCIE_POWER, value=1, timeout_ms=10000))
        deadline = time.monotonic() + timeout_s
        while (state := self.link_state()) != fw.LTSSM_L0:
            if time.monotonic() > deadline:
                raise LinkDown(f"{self.usb.where}: PCIe link did not come up within {timeout_s} s "
                               f"(LTSSM state {state:#04x}, L0 is {fw.LTSSM_L0:#04x})")
            time.sleep(poll_s)

    # --- single requests ---------------------------------------------------------------------------------
    def request(self, fmt: int, address: int, size: int = 4, value: int | None = None) -> int | None:
        """One PCIe request of `size` bytes (1..4, within a dword). Reads return the value."""
        offset = address & 3
        if not 1 <= size <= 4 - offset:
            raise ValueError(f"a single PCIe request moves 1..4 bytes within a dword, not {size} at {address:#x}")
        be = ((1 << size) - 1) << offset
        setup = struct.pack("<III", address & 0xFFFFFFFC, address >> 32,
                            0 if value is None else (value << 8 * offset) & 0xFFFFFFFF)
        name = f"{_TLP_NAMES.get(fmt, hex(fmt))} of {size} bytes at {address:#x}"
        is_config = fmt & 0x1F != 0
        posted = fmt & regs.FMT_HAS_DATA and not is_config
        crs_deadline, lost = None, 0
        while True:
            self._retrying(name, lambda: self.usb.control_out(fw.REQ_TLP, fmt | be << 8, fw.MODE_SINGLE, setup))
            if posted:
                return None
            data, status_hi, status_lo, kind, ret = struct.unpack("<IBBBB", self._completion(name))
            if ret != fw.RET_DONE:
                lost += 1
                if lost == self.tlp_attempts:
                    raise TlpError(f"{self.usb.where}: {name}: no completion after {lost} attempts "
                                   f"({'engine error' if ret == fw.RET_ERROR else 'firmware poll timed out'})",
                                   None)
                self._pause()
                continue
            code = status_hi >> 5
            if code == Completion.CRS and is_config:
                crs_deadline = crs_deadline or time.monotonic() + self.crs_timeout_s
                if time.monotonic() < crs_deadline:
                    self._pause()
                    continue
            if code != Completion.SC:
                raise _completion_error(f"{self.usb.where}: {name}", code)
            byte_count, has_data = (status_hi & 0xF) << 8 | status_lo, bool(kind & 1)
            if byte_count != (4 if is_config else size) or has_data != (value is None):
                raise UsbBridgeError(f"{self.usb.where}: {name}: malformed completion (byte count {byte_count}, "
                                     f"{'with' if has_data else 'without'} data)")
            return None if value is not None else (data >> 8 * offset) & ((1 << 8 * size) - 1)

    def _pause(self) -> None:
        self.retries += 1
        time.sleep(self.retry_delay_s)

    def _completion(self, name: str) -> bytes:
        """The 8-byte completion reply; a lost reply is read again (the firmware keeps it)."""
        for attempt in range(1, self.usb_attempts + 1):
            try:
                reply = self.usb.control_in(fw.REQ_TLP, fw.TLP_REPLY_SIZE)
                break
            except (UsbTimeout, UsbStall) as e:
                if attempt == self.usb_attempts:
                    raise type(e)(f"{name}: completion read: {e} (gave up after {attempt} attempts)") from None
                self.retries += 1
        if len(reply) != fw.TLP_REPLY_SIZE:
            raise UsbBridgeError(f"{name}: completion read returned {len(reply)} bytes")
        return reply

    def config_read(self, bus: int, dev: int, fn: int, offset: int, size: int = 4) -> int:
        fmt = regs.TLP_CFGRD1 if bus else regs.TLP_CFGRD0
        return self.request(fmt, regs.cfg_address(bus, dev, fn, offset) | offset & 3, size)

    def config_write(self, bus: int, dev: int, fn: int, offset: int, value: int, size: int = 4) -> None:
        fmt = regs.TLP_CFGWR1 if bus else regs.TLP_CFGWR0
        self.request(fmt, regs.cfg_address(bus, dev, fn, offset) | offset & 3, size, value)

    def mem_read(self, address: int, size: int) -> int:
        return self.request(regs.TLP_MRD64 if address >> 32 else regs.TLP_MRD32, address, size)

    def mem_write(self, address: int, value: int, size: int) -> None:
        self.request(regs.TLP_MWR64 if address >> 32 else regs.TLP_MWR32, address, size, value)

    # --- streams ---------------------------------------------------------------------------------------
    def stream_read(self, address: int, nbytes: int) -> bytes:
        """nbytes (whole dwords) of memory from `address` on, as 1-DW reads; no per-dword completion status
        comes back (the firmware does not check it), so callers keep streams inside assigned BARs."""
        _check_dwords(address, nbytes)
        parts = []
        for pos in range(0, nbytes, STREAM_CHUNK):
            n = min(STREAM_CHUNK, nbytes - pos)

            def one(a=address + pos, n=n):
                self._stream_setup(regs.TLP_MRD64, a, n, fw.MODE_STREAM_READ)
                got = self.usb.bulk_in(n, timeout_ms=_bulk_timeout_ms(n))
                if len(got) != n:
                    raise UsbTransferError(f"streamed read returned {len(got)} of {n} bytes")
                return got
            parts.append(self._retrying(f"streamed read of {n} bytes at {address + pos:#x}", one))
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def stream_write(self, address: int, data) -> None:
        _check_dwords(address, len(data))
        view = memoryview(data).cast("B")
        for pos in range(0, len(view), STREAM_CHUNK):
            chunk = view[pos:pos + STREAM_CHUNK]

            def one(a=address + pos, chunk=chunk):
                self._stream_setup(regs.TLP_MWR64, a, len(chunk), fw.MODE_STREAM_WRITE)
                self.usb.bulk_out(chunk, timeout_ms=_bulk_timeout_ms(len(chunk)))
            self._retrying(f"streamed write of {len(chunk)} bytes at {address + pos:#x}", one)

    def _stream_setup(self, fmt: int, address: int, nbytes: int, mode: int) -> None:
        self.usb.control_out(fw.REQ_TLP, fmt | 0xF << 8, mode,
                             struct.pack("<III", address & 0xFFFFFFFF, address >> 32, nbytes // 4))

    # --- SRAM DMA ----------------------------------------------------------------------------------------
    def sram_write(self, slot: int, data) -> None:
        """Whole sectors into the SRAM copy buffer from 16 KiB slot `slot` on (len(data) % 512 == 0)."""
        n = len(data)
        self._check_sram(slot, n)

        def one():
            self.usb.control_out(fw.REQ_SRAM_DMA, n // fw.SECTOR, slot | _slots(n) << 8)
            self.usb.bulk_out(data, timeout_ms=_bulk_timeout_ms(n))
        self._retrying(f"SRAM write of {n} bytes at slot {slot}", one)

    def sram_read(self, slot: int, nbytes: int) -> bytes:
        self._check_sram(slot, nbytes)

        def one():
            self.usb.control_out(fw.REQ_SRAM_DMA, nbytes // fw.SECTOR | fw.SRAM_DMA_TO_HOST,
                                 slot | _slots(nbytes) << 8)
            got = self.usb.bulk_in(nbytes, timeout_ms=_bulk_timeout_ms(nbytes))
            if len(got) != nbytes:
                raise UsbTransferError(f"SRAM read returned {len(got)} of {nbytes} bytes")
            return got
        return self._retrying(f"SRAM read of {nbytes} bytes at slot {slot}", one)

    @staticmethod
    def _check_sram(slot: int, nbytes: int) -> None:
        if nbytes % fw.SECTOR or not nbytes or slot * fw.SRAM_SLOT + nbytes > fw.SRAM_SIZE:
            raise ValueError(f"SRAM DMA moves whole 512-byte sectors inside the {fw.SRAM_SIZE // 1024} KiB "
                             f"buffer, not {nbytes} bytes from slot {slot}")


def _completion_error(what: str, code: int) -> TlpError:
    try:
        return TlpError(what, Completion(code))
    except ValueError:
        return TlpError(f"{what}: reserved completion status {code:#05b}", None)


def _slots(nbytes: int) -> int:
    return -(-nbytes // fw.SRAM_SLOT)


def _bulk_timeout_ms(nbytes: int) -> int:
    return 1000 + nbytes // (50 << 10)     # 1 s plus 20 ms per MiB: far above USB 3 rates, bounded


def _check_dwords(address: int, nbytes: int) -> None:
    if address % 4 or nbytes % 4:
        raise ValueError(f"streamed PCIe access moves whole dwords, not {nbytes} bytes at {address:#x}")
