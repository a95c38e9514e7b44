"""The ASM2464 protocol driver over the mock pyusb backend: each transfer kind, and every retry path
under injected faults, each bounded (a clear error, never a hang)."""
import numpy as np
import pytest

from gputwin.abi import pcie as regs
from gputwin.abi.pcie import Completion
from gputwin.drivers.usb.errors import LinkDown, TlpError, UsbDisconnected, UsbStall, UsbTimeout
from gputwin.drivers.usb.protocol import Asm2464Protocol
from gputwin.drivers.usb.transport import UsbTransport, find_bridges
from gputwin.mock.usb import MockUsbBackend
from tests.emu.usb.helpers import number_buses, open_windows, ram_enclosure

BAR0 = 0x8_0000_0000


def make(powered=True, crs_timeout_s=0.02, **kw):
    enc, ep = ram_enclosure(powered=powered, **kw)
    backend = MockUsbBackend(enc)
    proto = Asm2464Protocol(UsbTransport(find_bridges(backend)[0]), retry_delay_s=0, crs_timeout_s=crs_timeout_s)
    if powered:
        number_buses(enc)
        open_windows(enc, bar0=BAR0)
    return proto, backend.faults(), enc, ep


def test_power_on_waits_for_the_link_and_a_dead_link_is_a_bounded_error():
    proto, _, enc, _ = make(powered=False, train_polls=5)
    proto.power_on(poll_s=0)
    assert proto.link_state() == 0x78 and enc.link.up
    proto, _, _, _ = make(powered=False, train_polls=10 ** 9)
    with pytest.raises(LinkDown, match="LTSSM state 0x10"):
        proto.power_on(timeout_s=0.02, poll_s=0)


def test_each_request_kind():
    proto, _, enc, ep = make()
    assert proto.config_read(4, 0, 0, 0) == 0xABCD1234 and proto.config_read(4, 0, 0, 2, 2) == 0xABCD
    proto.config_write(4, 0, 0, 0x3C, 0x77, 1)
    assert ep.config_read(0x3C, 1) == 0x77
    assert proto.config_read(0, 0, 0, 0) == 0x24611B21                      # type 0 to the root port
    proto.mem_write(BAR0 + 0x21, 0xBEEF, 2)
    assert ep.mem[0x21:0x23].tobytes() == b"\xef\xbe" and proto.mem_read(BAR0 + 0x20, 4) == 0xBEEF00
    proto.mem_write(0x1000_0004, 0xCAFE, 4)                                   # 32-bit address: MWr32
    assert ep.regs[1] == 0xCAFE and proto.mem_read(0x1000_0004, 4) == 0xCAFE
    data = np.random.default_rng(1).integers(0, 256, 3 << 20, np.uint8).tobytes()[:(2 << 20) - 64]
    proto.stream_write(BAR0 + 64, data)
    assert ep.mem[64:].tobytes() == data and proto.stream_read(BAR0 + 64, len(data)) == data
    proto.sram_write(3, data[:8192])
    assert proto.sram_read(3, 8192) == data[:8192] and proto.xdata_read(0x1000, 600) == bytes(600)
    proto.xdata_write(0x1000, b"\x01\x02")
    assert proto.xdata_read(0x1000, 2) == b"\x01\x02"
    with pytest.raises(ValueError, match="whole 512-byte sectors"):
        proto.sram_write(0, bytes(100))
    with pytest.raises(ValueError, match="whole dwords"):
        proto.stream_read(BAR0 + 2, 8)


def test_lost_completions_are_resent_a_bounded_number_of_times():
    proto, faults, enc, _ = make()
    faults.tlp_no_completion(2)
    faults.tlp_engine_timeout(1)
    assert proto.config_read(4, 0, 0, 0) == 0xABCD1234 and proto.retries == 3
    faults.tlp_no_completion(proto.tlp_attempts)
    with pytest.raises(TlpError, match="no completion after 10 attempts") as e:
        proto.config_read(4, 0, 0, 0)
    assert e.value.status is None


def test_crs_is_retried_until_the_function_is_ready_or_the_deadline_passes():
    # a generous deadline where the function becomes ready (three round trips must not race a loaded
    # machine's scheduler), a short one where it never does
    proto, faults, _, _ = make(crs_timeout_s=10.0)
    faults.tlp_completion(Completion.CRS, 3, kind="config")
    assert proto.config_read(4, 0, 0, 0) == 0xABCD1234 and proto.retries == 3
    proto, faults, _, _ = make()
    faults.tlp_completion(Completion.CRS, 10 ** 4, kind="config")
    with pytest.raises(TlpError, match="completion CRS"):
        proto.config_read(4, 0, 0, 0)


@pytest.mark.parametrize("status", [Completion.UR, Completion.CA])
def test_ur_and_ca_are_answers_raised_at_once(status):
    proto, faults, enc, _ = make()
    faults.tlp_completion(status, kind="memory")
    sent = enc.tlp.sent
    with pytest.raises(TlpError, match=f"MRd64 of 4 bytes at 0x800000010: completion {status.name}") as e:
        proto.mem_read(BAR0 + 0x10, 4)
    assert e.value.status == status and proto.retries == 0 and enc.tlp.sent == sent + 1
    with pytest.raises(TlpError, match="completion UR"):
        proto.config_read(5, 0, 0, 0)                                         # no such bus


def test_a_lost_completion_read_is_read_again_without_resending_the_request():
    proto, faults, enc, _ = make()
    faults.timeout(0, request=0xF0, request_type=0xC0, delivered=True)
    sent = enc.tlp.sent
    assert proto.config_read(4, 0, 0, 0) == 0xABCD1234
    assert enc.tlp.sent == sent + 1 and proto.retries == 1


def test_stalls_and_timeouts_on_streams_clear_the_halt_and_redo_the_transfer():
    proto, faults, _, ep = make()
    ep.mem[:4096] = np.arange(4096) % 251
    faults.stall(0x81)
    assert proto.stream_read(BAR0, 4096) == ep.mem[:4096].tobytes() and proto.retries == 1
    faults.timeout(0x02)
    proto.stream_write(BAR0, bytes(range(256)) * 4)
    assert ep.mem[:1024].tobytes() == bytes(range(256)) * 4 and proto.retries == 2
    faults.timeout(0x02, delivered=True)
    proto.sram_write(0, bytes(512))
    assert proto.retries == 3


def test_persistent_usb_faults_give_up_with_the_transfer_named():
    proto, faults, _, _ = make()
    faults.timeout(0x81, count=3)
    with pytest.raises(UsbTimeout, match=r"streamed read of 64 bytes at 0x800000000: .*bulk IN 0x81 timed out.*"
                                         r"gave up after 3 attempts"):
        proto.stream_read(BAR0, 64)
    faults.stall(0, request=0xE5, count=3)
    with pytest.raises(UsbStall, match="XDATA write at 0x0010"):
        proto.xdata_write(0x10, b"\x01")


def test_xdata_reads_take_as_many_data_stages_as_the_link_allows():
    proto, _, enc, _ = make(usb2=True)
    enc.xdata.ram[0x100:0x100 + 300] = bytes(range(150)) * 2
    assert proto.xdata_read(0x100, 300) == bytes(range(150)) * 2
    assert proto.config_read(4, 0, 0, 0) == 0xABCD1234


def test_an_unplugged_enclosure_is_reported_at_once_without_retries():
    proto, faults, _, _ = make()
    faults.unplug()
    with pytest.raises(UsbDisconnected, match="No such device"):
        proto.config_read(4, 0, 0, 0)
    assert proto.retries == 0


def test_a_stalled_completion_read_is_read_again_and_persistent_loss_names_the_request():
    proto, faults, enc, _ = make()
    faults.stall(0, request=0xF0, request_type=0xC0)
    sent = enc.tlp.sent
    assert proto.config_read(4, 0, 0, 0) == 0xABCD1234 and enc.tlp.sent == sent + 1
    faults.timeout(0, request=0xF0, request_type=0xC0, count=3)
    with pytest.raises(UsbTimeout, match=r"CfgRd1 of 4 bytes at 0x4000000: completion read: .*gave up after 3"):
        proto.config_read(4, 0, 0, 0)
