"""The real-GPU load path (PTX -> cubin -> upload -> QMD from the cubin), run on the mock RM with the GPU told to
expect SASS (ptx_native=False): everything up to the SM executing the code. The QMD and constant bank the
driver writes are decoded and compared with the cubin's facts and with `ptxas -v`."""
import re
import shutil
import subprocess

import numpy as np
import pytest

from gputwin.abi import nv_qmd as q
from gputwin.abi.cubin import read_cubin
from gputwin.drivers.nv import ptx_params, sass
from gputwin.drivers.nv.device import NVDevice, cubin_kernel_signature
from gputwin.drivers.nv.qmd import sm_config
from gputwin.drivers.nv.queues import NVComputeQueue
from gputwin.mock.kernel import MockKernel
from gputwin.mock.nvidia import install

needs_tool = pytest.mark.skipif(shutil.which("ptxas") is None and sass._nvjitlink() is None,
                                reason="needs ptxas or nvJitLink (pip install 'gputwin[nv]')")


@pytest.fixture(params=["sm_90", "sm_80"])
def real(request):
    kernel = MockKernel()
    install(kernel, [request.param])
    dev = NVDevice(kernel, 0, ptx_native=False)
    submitted, submit = [], dev._submit

    def capture(queue):                     # launches are kept (the emulated SM runs PTX, not SASS) and
        if isinstance(queue, NVComputeQueue):   # their timeline value is signalled by hand; copies run
            submitted.append(queue)
            dev.timeline_signal.value = dev.timeline_value - 1
        else:
            submit(queue)
    dev._submit, dev.submitted = capture, submitted
    yield dev
    dev.close()


def _launch_slot(dev, index=0):
    view = dev._launch_pool.host_view()
    base = index * 0x1000
    return q.QMD(bytes(view[base:base + q.QMD_SIZE])), bytes(view[base + 0x100:base + 0x1000])


@needs_tool
def test_ptx_is_compiled_uploaded_and_launched_from_the_cubin(real, ptx, tmp_path, monkeypatch):
    if shutil.which("ptxas"):        # the same tool as the `ptxas -v` report compared below
        monkeypatch.setenv("GPUTWIN_NV_COMPILER", "ptxas")
    arch = real.arch
    text = ptx[arch]
    prg = real.load(text, "reverse")
    ck = prg.cubin
    assert ck is not None and prg.signature() == ptx_params.kernels(text)["reverse"].signature()
    image = np.zeros(prg.image.size, np.uint8)

    real.copyout(image, prg.image)
    cubin = read_cubin(image.tobytes())
    assert cubin.kernels["reverse"].text_offset == ck.text_offset
    src = tmp_path / "k.ptx"
    src.write_text(text)
    report = subprocess.run(["ptxas", "-v", f"-arch={arch}", "-o", str(tmp_path / "k.cubin"), str(src)],
                            capture_output=True, text=True).stderr if shutil.which("ptxas") else ""
    buf = real.alloc(4096)
    prg(buf, grid=(3, 2, 1), block=(64, 1, 1), lds=512)
    qmd, cbank = _launch_slot(real)
    assert qmd.get("PROGRAM_ADDRESS_UPPER") << 32 | qmd.get("PROGRAM_ADDRESS_LOWER") == prg.image.va + ck.text_offset
    assert qmd.get("REGISTER_COUNT_V") == ck.registers > 0
    assert qmd.get("BARRIER_COUNT") == 1 and qmd.get("SHARED_MEMORY_SIZE") == ck.shared_bytes + 512
    if report:
        m = re.search(r"entry function 'reverse'.*?Used (\d+) registers, used (\d+) barriers", report, re.S)
        assert (ck.registers, ck.barriers) == (int(m.group(1)), int(m.group(2)))
    fit, largest = sm_config(ck.shared_bytes + 512, arch)
    assert (qmd.get("MIN_SM_CONFIG_SHARED_MEM_SIZE"), qmd.get("TARGET_SM_CONFIG_SHARED_MEM_SIZE"),
            qmd.get("MAX_SM_CONFIG_SHARED_MEM_SIZE")) == (fit, fit, largest)
    assert (qmd.get("CTA_RASTER_WIDTH"), qmd.get("CTA_RASTER_HEIGHT"), qmd.get("CTA_THREAD_DIMENSION0")) == (3, 2, 64)
    off = ck.param_cbank_offset
    assert int.from_bytes(cbank[off:off + 8], "little") == buf.va
    assert qmd.get("CONSTANT_BUFFER_SIZE_SHIFTED40") << 4 >= off + 8
    assert len(real.submitted) == 1


@needs_tool
def test_a_cubin_loads_directly_with_its_own_layout(real, ptx):
    elf = sass.compile_ptx(ptx[real.arch], real.arch)
    prg = real.load(elf, "mixed")
    assert [p.size for p in prg.kernel.params] == [8, 1, 2, 4, 8, 8]
    buf = real.alloc(64)
    prg(buf, b"\x05", b"\x06\x00", b"\x07\x00\x00\x00", 8, buf)
    _, cbank = _launch_slot(real)
    off = prg.cubin.param_cbank_offset
    assert cbank[off + 8:off + 16] == b"\x05\x00\x06\x00\x07\x00\x00\x00"
    assert int.from_bytes(cbank[off + 16:off + 24], "little") == 8
    with pytest.raises(TypeError, match=r"mixed\(.*bytes-like object is required"):
        prg(buf, 5, b"\x06\x00", b"\x07\x00\x00\x00", 8, buf)


@needs_tool
def test_cubin_for_another_arch_or_missing_kernel_is_refused(real, ptx):
    other = "sm_80" if real.arch == "sm_90" else "sm_90"
    with pytest.raises(ValueError, match=f"the cubin is for {other}"):
        real.load(sass.compile_ptx(ptx[other], other), "saxpy")
    with pytest.raises(KeyError, match="no kernel 'nope' in the cubin"):
        real.load(sass.compile_ptx(ptx[real.arch], real.arch), "nope")


@needs_tool
def test_ptx_and_cubin_disagreeing_on_the_abi_is_refused(ptx):
    ck = read_cubin(sass.compile_ptx(ptx["sm_90"], "sm_90")).kernels["saxpy"]
    wrong = ptx_params.kernels(ptx["sm_90"])["mixed"]
    with pytest.raises(ptx_params.PtxSignatureError, match="the cubin's at"):
        cubin_kernel_signature(ck, wrong)


def test_emulated_sm_refuses_sass(ptx):
    import gputwin
    dev = gputwin.open_device("MOCKNV")
    try:
        with pytest.raises(NotImplementedError, match="executes PTX, not SASS"):
            dev.load(b"\x7fELF" + bytes(60), "saxpy")
    finally:
        dev.close()


def test_sm_config_picks_the_smallest_carveout_that_fits():
    assert sm_config(0, "sm_90") == (1, 58)                # 0 KiB -> 0/4+1; 228 KiB -> 58
    assert sm_config(8 * 1024 + 1, "sm_90") == (16 // 4 + 1, 58)
    assert sm_config(164 * 1024, "sm_80") == (42, 42)
    with pytest.raises(ValueError, match="exceed sm_80's largest carveout"):
        sm_config(164 * 1024 + 1, "sm_80")
