"""DEV: how a run picks its devices, and the one place that wires kernels to drivers.

Grammar: `[MOCK]KIND[:ARCH_OR_INDEX]`, comma-separated for several. KIND is AMD, NV, USBAMD or CPU; ARCH
is a gfx name for AMD kinds or an sm_NN name for NV; INDEX is a device number. MOCK kinds run the real
driver on a mock kernel over emulated hardware; the others need the real device and never fall back.

Mock machines: every `open_device` call builds a fresh one holding the GPUs its spec names. A bare
`MOCKAMD` or `MOCKAMD:gfxNNNN` adds a GPU to the machine and opens it; `MOCKAMD:N` opens GPU N, adding
default (gfx1100) GPUs until there are N+1. So `MOCKAMD:gfx1100,MOCKAMD:gfx942` is one machine with two
GPUs, and `MOCKAMD:1` a machine of two gfx1100s of which the second is opened. MOCKNV targets build one
mock nvidia.ko machine by the same rules (default sm_90; sm_90 and sm_80 are modelled).
"""
from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass

KINDS = ("AMD", "NV", "USBAMD", "CPU")
MOCKABLE = ("AMD", "NV", "USBAMD")
AMD_ARCHS = ("gfx1100", "gfx1200", "gfx1201", "gfx942")
NV_ARCH = re.compile(r"sm_\d{2,3}a?$")
DEFAULT_SPEC = "MOCKAMD"
DEFAULT_AMD_ARCH = "gfx1100"
NV_MOCK_ARCHS = ("sm_90", "sm_80")
DEFAULT_NV_ARCH = "sm_90"

VALID_SPELLINGS = (
    "MOCKAMD, MOCKAMD:<arch>, MOCKAMD:<index>, AMD, AMD:<arch>, AMD:<index>, "
    "MOCKNV, MOCKNV:<sm_NN>, NV, NV:<sm_NN>, NV:<index>, MOCKUSBAMD, USBAMD, CPU; "
    f"<arch> is one of {', '.join(AMD_ARCHS)}; several targets are joined with commas"
)


class TargetNotAvailable(RuntimeError):
    """The target is spelled right but cannot be opened here: its driver is not built yet, or the real
    device it needs is not present (the message says what was looked for)."""


@dataclass(frozen=True)
class Target:
    kind: str                 # AMD, NV, USBAMD, CPU
    mock: bool = False
    arch: str | None = None
    index: int | None = None

    @property
    def spec(self) -> str:
        suffix = self.arch if self.arch is not None else (str(self.index) if self.index is not None else None)
        return ("MOCK" if self.mock else "") + self.kind + (f":{suffix}" if suffix is not None else "")

    @property
    def real(self) -> bool:
        return not self.mock and self.kind != "CPU"


def parse_target(text: str) -> Target:
    raw = text.strip()
    head, _, suffix = raw.partition(":")
    head_u = head.upper()
    mock = head_u.startswith("MOCK")
    kind = head_u[4:] if mock else head_u
    if kind not in KINDS or (mock and kind not in MOCKABLE) or (":" in raw and not suffix):
        raise ValueError(f"unknown device {raw!r}; valid spellings: {VALID_SPELLINGS}")
    if not suffix:
        return Target(kind, mock)
    if kind == "CPU":
        raise ValueError(f"CPU takes no suffix, got {raw!r}; valid spellings: {VALID_SPELLINGS}")
    if suffix.isdigit():
        return Target(kind, mock, index=int(suffix))
    arch = suffix.lower()
    if kind in ("AMD", "USBAMD") and arch in AMD_ARCHS:
        return Target(kind, mock, arch=arch)
    if kind == "NV" and NV_ARCH.match(arch):
        return Target(kind, mock, arch=arch)
    raise ValueError(f"unknown architecture {suffix!r} for {kind} in {raw!r}; valid spellings: {VALID_SPELLINGS}")


def parse_spec(spec: str | None = None) -> list[Target]:
    """Targets named by `spec`, else $DEV, else the default MOCKAMD."""
    if spec is None:
        spec = os.environ.get("DEV") or DEFAULT_SPEC
    parts = [p for p in spec.split(",")]
    if not spec.strip() or any(not p.strip() for p in parts):
        raise ValueError(f"empty device in {spec!r}; valid spellings: {VALID_SPELLINGS}")
    return [parse_target(p) for p in parts]


# --- opening ---------------------------------------------------------------------------------------
def _mock_layout(targets: list[Target], default: str = DEFAULT_AMD_ARCH) -> tuple[list[str], list[int]]:
    """The GPU archs of one mock machine and, per MOCK target of one kind, the index it opens."""
    archs: list[str] = []
    picks: list[int] = []
    for t in targets:
        if t.index is not None:
            while len(archs) <= t.index:
                archs.append(default)
            picks.append(t.index)
        else:
            archs.append(t.arch or default)
            picks.append(len(archs) - 1)
    return archs, picks


def _open_mock_amd(targets: list[Target]) -> list:
    # Imported here (opening is what needs them), never caught: a mock target is part of gputwin, so a
    # broken import is a bug to report, not a target that is "not available".
    from gputwin.drivers.amd.device import AMDDevice
    from gputwin.mock.kernel import MockKernel
    from gputwin.mock.kfd import install
    archs, picks = _mock_layout(targets)
    kernel = MockKernel()
    kfd = install(kernel, archs)
    devices = [AMDDevice(kernel, index) for index in picks]
    for dev, index in zip(devices, picks):
        _emulated[dev] = kfd.nodes[index].gpu
    return devices


def _open_mock_nv(targets: list[Target]) -> list:
    # never caught, as for MOCKAMD: a broken import of gputwin's own mock is a bug, not "not available"
    from gputwin.drivers.nv.device import NVDevice
    from gputwin.mock.kernel import MockKernel
    from gputwin.mock.nvidia import install
    for t in targets:
        if t.arch is not None and t.arch not in NV_MOCK_ARCHS:
            raise TargetNotAvailable(f"{t.spec}: the mock NVIDIA GPU models {', '.join(NV_MOCK_ARCHS)}, not {t.arch}")
    archs, picks = _mock_layout(targets, DEFAULT_NV_ARCH)
    kernel = MockKernel()
    rm = install(kernel, archs)
    devices = [NVDevice(kernel, index, ptx_native=True) for index in picks]   # the emulated SM runs PTX
    for dev, index in zip(devices, picks):
        _emulated[dev] = rm.gpus[index].emu
    return devices


def _open_nv(t: Target):
    from gputwin.drivers.kernel import HostKernel
    kernel = HostKernel()
    missing = [p for p in ("/dev/nvidiactl", "/dev/nvidia-uvm") if not kernel.exists(p)]
    if missing:
        raise TargetNotAvailable(f"{t.spec}: no real NVIDIA GPU here (looked for {', '.join(missing)}); "
                                 f"use MOCKNV for the emulated one")
    from gputwin.drivers.nv.device import NVDevice
    dev = NVDevice(kernel, t.index or 0)
    if t.arch is not None and dev.arch != t.arch:
        dev.close()
        raise TargetNotAvailable(f"{t.spec}: NVIDIA GPU {t.index or 0} is {dev.arch}, not {t.arch}; pick it by index")
    return dev


_emulated: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def emulated_gpu(dev):
    """The emulated GPU (gputwin.emu.amd.gpu.GPU) behind a MOCK device, for its counters (`.stats`);
    None for a device on real hardware or the CPU."""
    return _emulated.get(dev)


def _open_amd(t: Target):
    from gputwin.drivers.kernel import HostKernel
    kernel = HostKernel()
    if not kernel.exists("/dev/kfd"):
        raise TargetNotAvailable(f"{t.spec}: no real AMD GPU here (looked for /dev/kfd); "
                                 f"use MOCKAMD for the emulated one")
    from gputwin.drivers.amd.device import AMDDevice
    dev = AMDDevice(kernel, t.index or 0)
    if t.arch is not None and dev.arch != t.arch:
        dev.close()
        raise TargetNotAvailable(f"{t.spec}: AMD GPU {t.index or 0} is {dev.arch}, not {t.arch}; pick it by index")
    return dev


def _open_cpu(t: Target):
    from gputwin.drivers.cpu import CPUDevice   # part of gputwin (llvmlite is a dependency): never caught
    return CPUDevice()


def _open_mock_usbamd(t: Target):
    """An emulated board (gputwin.emu.amd.soc) in an emulated ASM2464 enclosure behind the mock libusb
    backend: the USB driver brings up PCIe through the bridge, the kernel-less AM driver boots the GPU."""
    # never caught, as for MOCKAMD: a broken import of gputwin's own mock is a bug, not "not available"
    from gputwin.drivers.amd.am.device import AMDevice
    from gputwin.drivers.usb import open_usb_pci
    from gputwin.emu.amd.soc import board
    from gputwin.mock.usb import usb_gpu
    from gputwin.abi.amdgpu import ARCHS
    if t.index is not None:
        raise TargetNotAvailable(f"{t.spec}: a MOCKUSBAMD is one emulated enclosure; pick its arch, not an index")
    if (t.arch or DEFAULT_AMD_ARCH) not in ARCHS:
        raise TargetNotAvailable(f"{t.spec}: the emulated board behind the bridge models {', '.join(ARCHS)}")
    function = board.build(t.arch or DEFAULT_AMD_ARCH)
    backend, _enclosure = usb_gpu(function)
    dev = AMDevice(open_usb_pci(backend), "MOCKUSBAMD")
    _emulated[dev] = function.gpu
    return dev


def _open_usbamd(t: Target):
    """A real enclosure: libusb finds the bridge; no bridge is TargetNotAvailable, never a fall-back."""
    from gputwin.drivers.amd.am.device import AMDevice
    from gputwin.drivers.amd.am.firmware import SYSTEM_DIR
    from gputwin.drivers.usb import BridgeNotFound, open_usb_pci
    try:
        pci = open_usb_pci(None, t.index or 0)
    except BridgeNotFound as e:
        raise TargetNotAvailable(f"{t.spec}: {e}; use MOCKUSBAMD for the emulated one") from None
    dev = AMDevice(pci, "USBAMD", firmware_dir=SYSTEM_DIR)
    if t.arch is not None and dev.arch != t.arch:
        dev.close()
        raise TargetNotAvailable(f"{t.spec}: the GPU behind the bridge is {dev.arch}, not {t.arch}")
    return dev


def open_targets(targets: list[Target]) -> list:
    devices: list = [None] * len(targets)
    if any(t.mock for t in targets):   # a misspelt GPUTWIN_SANITIZE fails here, not inside a mock ioctl
        from gputwin import sanitizer_config as config
        config.checkers(), config.report_all()
    mock_amd = [i for i, t in enumerate(targets) if t.mock and t.kind == "AMD"]
    if mock_amd:
        for i, d in zip(mock_amd, _open_mock_amd([targets[i] for i in mock_amd])):
            devices[i] = d
    mock_nv = [i for i, t in enumerate(targets) if t.mock and t.kind == "NV"]
    if mock_nv:
        for i, d in zip(mock_nv, _open_mock_nv([targets[i] for i in mock_nv])):
            devices[i] = d
    for i, t in enumerate(targets):
        if devices[i] is not None:
            continue
        if t.kind == "CPU":
            devices[i] = _open_cpu(t)
        elif t.kind == "AMD" and not t.mock:
            devices[i] = _open_amd(t)
        elif t.kind == "NV" and not t.mock:
            devices[i] = _open_nv(t)
        elif t.kind == "USBAMD":
            devices[i] = _open_mock_usbamd(t) if t.mock else _open_usbamd(t)
    return devices


def open_device(spec: str | None = None):
    """One device for one target; a tuple of devices for a comma-separated list."""
    targets = parse_spec(spec)
    devices = open_targets(targets)
    return devices[0] if len(targets) == 1 else tuple(devices)
