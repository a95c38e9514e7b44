"""The `gputwin` command line: one function per sub-command, registered in `build_parser`."""
from __future__ import annotations

import argparse
import os
import sys

import gputwin
from gputwin import device as devmod

ASM2464_USB_IDS = ((0xADD1, 0x0001), (0x174C, 0x2463), (0x174C, 0x2464))  # bridge firmware / stock IDs


def _real_amd_gpus() -> list[tuple[str, str]]:
    """(arch, how found) per GPU node in the real KFD topology."""
    from gputwin.drivers.kernel import HostKernel
    k, root = HostKernel(), "/sys/devices/virtual/kfd/kfd/topology/nodes"
    if not k.exists("/dev/kfd") or not k.exists(root):
        return []
    found = []
    for node in sorted(k.listdir(root), key=lambda n: int(n) if n.isdigit() else 0):
        props = dict(line.split()[:2] for line in k.read_text(f"{root}/{node}/properties").splitlines() if line.strip())
        version = int(props.get("gfx_target_version", 0))
        if version:  # CPU nodes report 0
            major, minor, step = version // 10000, version // 100 % 100, version % 100
            found.append((f"gfx{major}{minor:x}{step:x}", f"/dev/kfd, topology node {node}"))
    return found


def _real_usb_bridges() -> list[str]:
    try:
        import usb.core
        return [f"USB {vid:04x}:{pid:04x}" for vid, pid in ASM2464_USB_IDS if usb.core.find(idVendor=vid, idProduct=pid)]
    except Exception:  # no libusb backend on this machine: no bridge can be reached either
        return []


def cmd_info(args) -> int:
    """List the targets this machine can open, and the one $DEV / --dev selects."""
    spec = args.dev or os.environ.get("DEV") or devmod.DEFAULT_SPEC
    try:
        targets = devmod.parse_spec(spec)
    except ValueError as e:
        print(f"gputwin: {e}", file=sys.stderr)
        return 2
    print(f"gputwin {gputwin.__version__}; selected: {', '.join(t.spec for t in targets)}")
    rows = [(f"MOCKAMD:{a}", a, "mock KFD + emulated GPU (gputwin.mock.kfd, gputwin.emu.amd)") for a in devmod.AMD_ARCHS]
    rows.append(("CPU", "host", "llvmlite JIT on this CPU"))
    rows += [(f"AMD:{i}", arch, how) for i, (arch, how) in enumerate(_real_amd_gpus())]
    if os.path.exists("/dev/nvidiactl"):
        rows.append(("NV", "?", "/dev/nvidiactl (driver not built yet)"))
    rows += [("USBAMD", "?", f"ASM2464 bridge at {where} (driver not built yet)") for where in _real_usb_bridges()]
    width = max(len(r[0]) for r in rows)
    for name, arch, how in rows:
        print(f"  {name:<{width}}  {arch:<8}  {how}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gputwin", description="GPU driver stack verified on emulated hardware.")
    p.add_argument("--version", action="version", version=f"gputwin {gputwin.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    info = sub.add_parser("info", help="list the devices this machine can open",
                          description="List the targets this machine can open (mock ones always, real ones "
                                      "when their device files exist) and the one DEV selects.")
    info.add_argument("--dev", help="device spec to check (default: $DEV, else MOCKAMD)")
    info.set_defaults(func=cmd_info)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
