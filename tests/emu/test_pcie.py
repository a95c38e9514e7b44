"""The PCIe function model: BAR sizing, memory decoding, Resizable BAR, completions, upstream DMA."""
import numpy as np
import pytest

from gputwin.emu.pcie import MIB, BarSpec, Completion, HostMemory, PcieError, PcieFunction


class RamFunction(PcieFunction):
    def __init__(self):
        super().__init__("ram", 0x1234, 0x5678, 0x058000, [
            BarSpec(0, 256 * MIB, resizable=(256 * MIB, 512 * MIB, 1024 * MIB)),
            BarSpec(5, 4096, is64=False, prefetchable=False)])
        self.data = {}

    def bar_read(self, bar, offset, size):
        return bytes(self.data.get((bar, offset + i), 0) for i in range(size))

    def bar_write(self, bar, offset, data):
        for i, b in enumerate(data):
            self.data[(bar, offset + i)] = b


def test_ids_and_sizing_read_back_the_size_mask_and_type_bits():
    f = RamFunction()
    assert f.config_read(0) == 0x56781234 and f.config_read(0x08) >> 8 == 0x058000
    f.config_write(0x10, 0xFFFFFFFF)
    f.config_write(0x14, 0xFFFFFFFF)
    assert f.config_read(0x10) == 0xF000000C and f.config_read(0x14) == 0xFFFFFFFF   # 256 MiB, 64-bit, pref
    f.config_write(0x24, 0xFFFFFFFF)
    assert f.config_read(0x24) == 0xFFFFF000   # 4 KiB, 32-bit, non-prefetchable
    assert f.config_read(0x18) == 0   # unimplemented slot


def test_memory_decodes_only_with_mem_enable_and_a_miss_is_unsupported_request():
    f = RamFunction()
    f.config_write(0x10, 0x2000_0000)
    f.config_write(0x14, 0x1)
    with pytest.raises(PcieError) as e:
        f.mem_write(0x1_2000_0000, b"x")
    assert e.value.status == Completion.UR
    f.config_write(0x04, 0x2, 2)
    f.mem_write(0x1_2000_0010, b"hi")
    assert f.mem_read(0x1_2000_0010, 2) == b"hi" and f.data[(0, 0x10)] == ord("h")
    with pytest.raises(PcieError, match="hits no BAR"):
        f.mem_read(0x1_2000_0000 + 256 * MIB - 1, 2)   # straddles the end of the BAR


def test_resizable_bar_lists_sizes_and_takes_only_supported_ones():
    f = RamFunction()
    assert f.config_read(0x100) & 0xFFFF == 0x15
    assert f.config_read(0x104) == (1 << 12) | (1 << 13) | (1 << 14)   # 256 MiB .. 1 GiB
    control = f.config_read(0x108)
    assert control & 7 == 0 and (control >> 8) & 0x3F == 8
    f.config_write(0x108, (control & ~(0x3F << 8)) | 10 << 8)
    assert f.bars[0].size == 1024 * MIB
    f.config_write(0x10, 0xFFFFFFFF)
    assert f.config_read(0x10) == 0xC000000C
    f.config_write(0x108, (control & ~(0x3F << 8)) | 12 << 8)   # 4 GiB: not supported, not taken
    assert f.bars[0].size == 1024 * MIB


def test_misaligned_config_access_is_an_unsupported_request():
    with pytest.raises(PcieError, match="config access"):
        RamFunction().config_read(0x2, 4)


def test_host_memory_views_and_misses():
    host = HostMemory()
    ram = np.zeros(4096, np.uint8)
    host.add(0x1000, ram)
    host.view(0x1800, 16)[:] = 7
    assert ram[0x800:0x810].tolist() == [7] * 16
    with pytest.raises(PcieError, match="reaches no memory"):
        host.view(0x1FF0, 32)
    with pytest.raises(ValueError, match="overlaps"):
        host.add(0x1800, np.zeros(16, np.uint8))
