"""printf on the emulated GPU: OpenCL and HIP records land in the driver's printf buffer and are printed
at synchronize, in order; the host formatting follows C's printf (libc's snprintf is the reference)."""
import ctypes
import struct

import pytest
from hypothesis import given, settings, strategies as st

from gputwin import cc
from gputwin.abi.printf import PrintfError, PrintfFormats, decode

LIBC = ctypes.CDLL(None)


def snprintf(fmt: str, *args) -> str:
    buf = ctypes.create_string_buffer(512)
    LIBC.snprintf(buf, 512, fmt.encode(), *args)
    return buf.value.decode()


def opencl_buffer(records: list[tuple[int, bytes]], size: int = 4096) -> bytes:
    body = b"".join(struct.pack("<I", ident) + payload for ident, payload in records)
    return struct.pack("<II", len(body), size) + body + bytes(size - 8 - len(body))


@pytest.mark.parametrize("fmt, c_args, payload", [
    ("%d|%5i|%-4u|%x|%X|%o|%#x", (-7, 42, 3, 255, 255, 8, 26),
     struct.pack("<iiIIIII", -7, 42, 3, 255, 255, 8, 26)),
    ("%f|%.3e|%10.4g|%G|%+.1f", tuple(ctypes.c_double(v) for v in (1.5, -1234.5678, 3.14159265, 1e-10, 2.25)),
     struct.pack("<fffff", 1.5, -1234.5678, 3.14159265, 1e-10, 2.25)),
    ("%ld|%lu|%lx|%hhd|%hd", (ctypes.c_long(-5_000_000_000), ctypes.c_ulong(2**64 - 1), ctypes.c_ulong(2**40),
                              -1, -2), struct.pack("<qQQii", -5_000_000_000, 2**64 - 1, 2**40, 255, 65534)),
    ("%c%c|%%|%*d|%-*d|%.*f", (72, 105, 6, 42, 4, 7, 2, ctypes.c_double(3.14159)),
     struct.pack("<iiiiiiif", 72, 105, 6, 42, 4, 7, 2, 3.14159)),
])
def test_opencl_conversions_print_as_libc_does(fmt, c_args, payload):
    sizes = []
    for arg in c_args:   # the metadata's per-argument sizes, as clang writes them (floats become float)
        sizes.append(8 if isinstance(arg, (ctypes.c_long, ctypes.c_ulong)) else 4)
    table = PrintfFormats.from_metadata({"amdhsa.printf": [f"1:{len(sizes)}:{':'.join(map(str, sizes))}:{fmt}"]})
    messages, lost = decode(table, opencl_buffer([(1, payload)]))
    assert messages == [(1, snprintf(fmt, *c_args))] and lost == 0


def test_opencl_strings_vectors_and_escapes():
    md = {"amdhsa.printf": [r"1:3:4:16:16:s=%s v=%v4hlf|%v2ld\n", "2:0:tab\there" + "\\72 \"q\" \\ \\a"]}
    payload = b"hey\0" + struct.pack("<4f", 1, 2.5, -3, 4) + struct.pack("<2q", -9, 7)
    messages, _ = decode(PrintfFormats.from_metadata(md), opencl_buffer([(1, payload), (2, b"")]))
    assert messages == [(1, "s=hey v=1.000000,2.500000,-3.000000,4.000000|-9,7\n"), (1, 'tab\there: "q" \\ \a')]


def test_hip_records_with_hashes_and_inline_strings():
    fmt = "hip %d %s %.2f %lld|%c"
    table = PrintfFormats.from_metadata({"amdhsa.printf": [f"0:0:1234abcd,{fmt}"]})
    body = struct.pack("<Q", 0x1234ABCD) + struct.pack("<Q", (-3) & 0xFFFFFFFF) + b"abc\0\0\0\0\0" + \
        struct.pack("<dqQ", 0.125, -(2**40), 65)
    record = struct.pack("<I", ((4 + len(body)) << 2) | 2) + body
    dynamic = b"x=%d\n\0\0\0" + struct.pack("<Q", 5)                # a format computed at run time
    record2 = struct.pack("<I", (4 + len(dynamic)) << 2 | 1) + dynamic   # bit 0: to stderr
    data = record + record2
    buf = struct.pack("<II", len(data), 1024) + data + bytes(1016 - len(data))
    messages, lost = decode(table, buf)
    assert messages == [(1, "hip -3 abc 0.12 -1099511627776|A"), (2, "x=5\n")] and lost == 0


def test_a_full_buffer_reports_what_was_lost():
    table = PrintfFormats.from_metadata({"amdhsa.printf": ["1:1:4:%d\n"]})
    buf = bytearray(opencl_buffer([(1, struct.pack("<i", 1))], size=16))
    struct.pack_into("<I", buf, 0, 8 + 8)           # two records reserved, only the first fitted
    messages, lost = decode(table, bytes(buf))
    assert messages == [(1, "1\n")] and lost == 8


def test_malformed_records_say_where():
    table = PrintfFormats.from_metadata({"amdhsa.printf": ["1:1:4:%d\n"]})
    with pytest.raises(PrintfError, match="offset 8 names format 9"):
        decode(table, opencl_buffer([(9, b"\0" * 4)]))
    wide = PrintfFormats.from_metadata({"amdhsa.printf": ["1:2:4:4:%*d"]})
    with pytest.raises(PrintfError, match="a field of 1000000000 characters"):
        decode(wide, opencl_buffer([(1, struct.pack("<ii", 10**9, 1))]))
    with pytest.raises(PrintfError, match="neither"):
        PrintfFormats.from_metadata({"amdhsa.printf": ["garbage"]})


PRINTF_CL = r"""
__kernel void hello(__global int *o, float f) {
  int i = get_global_id(0);
  printf("work-item %d of %d: f=%.2f %s %v2d\n", i, (int)get_global_size(0), f * i, "ok", (int2)(i, -i));
}
"""
PRINTF_HIP = r"""
#include <hip/hip_runtime.h>
__global__ void hello(float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  printf("thread %d block %u: %.1f %s\n", i, blockIdx.x, f + i, i % 2 ? "odd" : "even");
}
"""


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942"])
def test_printf_prints_at_synchronize_in_launch_order(toolchain, devices, capsys, arch):
    dev = devices(arch)
    cl = dev.load(cc.compile_source(PRINTF_CL, "opencl", arch), "hello")
    hip = dev.load(cc.compile_source(PRINTF_HIP, "hip", arch), "hello")
    buf = dev.alloc(64)
    cl(buf, 0.5, grid=1, block=3)
    hip(2.0, grid=2, block=2)
    cl(buf, 1.0, grid=1, block=2)
    assert capsys.readouterr().out == ""            # nothing before synchronize
    dev.synchronize()
    want = [f"work-item {i} of 3: f={0.5 * i:.2f} ok {i},{-i}" for i in range(3)]
    want += [f"thread {i} block {i // 2}: {2.0 + i:.1f} {'odd' if i % 2 else 'even'}" for i in range(4)]
    want += [f"work-item {i} of 2: f={float(i):.2f} ok {i},{-i}" for i in range(2)]
    assert capsys.readouterr().out.splitlines() == want
    dev.synchronize()
    assert capsys.readouterr().out == ""            # each message once


def test_printf_overflow_is_reported(toolchain, devices, capsys, monkeypatch):
    monkeypatch.setenv("GPUTWIN_PRINTF_BUFFER", "64")
    dev = devices("gfx1100")
    prg = dev.load(cc.compile_source(PRINTF_CL, "opencl", "gfx1100"), "hello")
    prg(dev.alloc(64), 1.0, grid=1, block=32)
    dev.synchronize()
    out, err = capsys.readouterr()
    assert 1 <= len(out.splitlines()) < 32 and out.splitlines()[0].startswith("work-item 0 of 32")
    assert "bytes of printf output did not fit the 64-byte printf buffer" in err
    monkeypatch.setenv("GPUTWIN_PRINTF_BUFFER", "lots")
    with pytest.raises(ValueError, match="GPUTWIN_PRINTF_BUFFER='lots'"):
        prg(dev.alloc(64), 1.0, grid=1, block=1)


def test_printf_before_a_fault_is_still_printed(toolchain, capsys):
    import gputwin
    src = PRINTF_CL.replace("(int2)(i, -i));", "(int2)(i, -i));\n  if (i == 0) o[1 << 28] = 1;")
    with gputwin.open_device("MOCKAMD") as dev:
        prg = dev.load(cc.compile_source(src, "opencl"), "hello")
        prg(dev.alloc(64), 1.0, grid=1, block=1)
        with pytest.raises(gputwin.GpuFault):
            dev.synchronize()
        assert capsys.readouterr().out.startswith("work-item 0 of 1")


def test_standalone_dispatches_print_too(toolchain, capsys):
    from gputwin.emu.amd.standalone import Arena, load_kernel
    arena = Arena()
    k = load_kernel(arena, cc.compile_source(PRINTF_CL, "opencl"), "hello")
    k(arena.alloc(64), 2.0, grid=(1, 1, 1), block=(2, 1, 1))
    assert capsys.readouterr().out == "work-item 0 of 2: f=0.00 ok 0,0\nwork-item 1 of 2: f=2.00 ok 1,-1\n"


FORMATS = st.text(alphabet="%dxsfcpv4hl*.-0123 ab\\n", max_size=24)


@settings(max_examples=300, deadline=None)
@given(fmt=FORMATS, sizes=st.lists(st.sampled_from([1, 2, 4, 8, 16]), max_size=4), body=st.binary(max_size=200),
       hip=st.booleans())
def test_any_buffer_decodes_or_says_why(fmt, sizes, body, hip):
    """Whatever a kernel left in the buffer, decoding returns messages or raises PrintfError: never another
    exception, never a hang."""
    entry = f"0:0:abc,{fmt}" if hip else f"1:{len(sizes)}:{''.join(f'{s}:' for s in sizes)}{fmt}"
    table = PrintfFormats.from_metadata({"amdhsa.printf": [entry]})
    head = struct.pack("<IQ", (12 + len(body)) << 2 | 2, 0xABC) if hip else struct.pack("<I", 1)   # a valid start
    record = head + body
    buf = struct.pack("<II", len(record), len(record) + 8) + record
    try:
        messages, lost = decode(table, buf)
    except PrintfError:
        return
    assert lost == 0 and all(isinstance(t, str) for _, t in messages)
