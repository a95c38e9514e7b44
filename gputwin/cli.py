"""The `gputwin` command line: one function per sub-command, registered in `build_parser`."""
from __future__ import annotations

import argparse
import os
import sys

import gputwin
from gputwin import device as devmod
from gputwin.abi.amdgpu import ARCHS as AM_ARCHS
from gputwin.fuzz import cli as fuzz_cli


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
    from gputwin.drivers.usb import BridgeNotFound, list_bridges
    try:
        return list_bridges()
    except BridgeNotFound:  # no libusb backend on this machine: no bridge can be reached either
        return []


def cmd_info(args) -> int:
    """List the targets this machine can open, and open the one $DEV / --dev selects: exit status 1,
    saying why, when it cannot be opened."""
    spec = args.dev or os.environ.get("DEV") or devmod.DEFAULT_SPEC
    try:
        targets = devmod.parse_spec(spec)
    except ValueError as e:
        print(f"gputwin: {e}", file=sys.stderr)
        return 2
    print(f"gputwin {gputwin.__version__}; selected: {', '.join(t.spec for t in targets)}")
    rows = [(f"MOCKAMD:{a}", a, "mock KFD + emulated GPU (gputwin.mock.kfd, gputwin.emu.amd)") for a in devmod.AMD_ARCHS]
    rows += [(f"MOCKNV:{a}", a, "mock nvidia.ko + emulated GPU + PTX (gputwin.mock.nvidia, gputwin.emu.nv)")
             for a in devmod.NV_MOCK_ARCHS]
    rows += [(f"MOCKUSBAMD:{a}", a, "AM driver over an emulated ASM2464 + board (gputwin.mock.usb, gputwin.emu.amd.soc)")
             for a in AM_ARCHS]
    rows.append(("CPU", "host", "llvmlite JIT on this CPU"))
    rows += [(f"AMD:{i}", arch, how) for i, (arch, how) in enumerate(_real_amd_gpus())]
    if os.path.exists("/dev/nvidiactl"):
        rows.append(("NV", "?", "/dev/nvidiactl (RM 580.105.08 driver; PTX compiled to cubins by gputwin[nv])"))
    rows += [("USBAMD", "?", where) for where in _real_usb_bridges()]
    width = max(len(r[0]) for r in rows)
    for name, arch, how in rows:
        print(f"  {name:<{width}}  {arch:<8}  {how}")
    return _check_selected(spec, targets)


def _check_selected(spec: str, targets: list) -> int:
    """Open what the spec selects (then close it): 0 and the opened devices, or 1 saying why not."""
    try:
        devices = devmod.open_targets(targets)
    except devmod.TargetNotAvailable as e:
        print(f"gputwin: the selected target {spec} cannot be opened: {e}", file=sys.stderr)
        return 1
    for d in devices:
        print(f"opened {d.name}")
        d.close()
    return 0


def cmd_demo(args) -> int:
    """The README's main job: a real workload on the device, checked against numpy (gputwin.tensor.demo)."""
    from gputwin.tensor import demo
    try:
        return demo.report(args.dev, seed=args.seed)
    except (ValueError, devmod.TargetNotAvailable) as e:
        print(f"gputwin: {e}", file=sys.stderr)
        return 2
    except (gputwin.GpuFault, gputwin.GpuHang) as e:  # the device failed the workload: say so, no traceback
        print(f"gputwin demo: the device failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def cmd_run(args) -> int:
    """Run one kernel of an HSA code object or a PTX module on a device and print its buffer arguments
    afterwards.

    The file is PTX when it is text with a `.entry` (nvcc -ptx, gputwin's compiler): it runs on an NV device
    (default MOCKNV when neither --dev nor $DEV names one); otherwise it is a code object (default MOCKAMD).
    --arg forms: a number (typed by the kernel's metadata / .param types); buf:SIZE (SIZE zeroed bytes);
    buf:DTYPE:N (N zeroed elements); buf:DTYPE=v1,v2,... (initialised); bytes:HEX (a by-value argument
    given byte by byte, e.g. a struct); struct:DTYPE=v,DTYPE=v,... (a struct's fields in order, each at its
    natural alignment, padded to the argument's size); local:NBYTES (an OpenCL __local pointer: NBYTES of
    LDS per workgroup). Buffers print as their DTYPE, or for buf:SIZE as the element type of the kernel's
    pointer parameter (code objects; PTX: bytes), under the parameter's name (argN when it has none)."""
    import numpy as np
    from gputwin.abi.code_object import CodeObject, CodeObjectError
    from gputwin.abi.kernargs import LocalMemory
    from gputwin.drivers.nv import ptx_params
    c_types = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16", "int": "int32",
               "uint": "uint32", "long": "int64", "ulong": "uint64", "half": "float16", "float": "float32",
               "double": "float64"}

    def dims(text: str) -> tuple[int, ...]:
        return tuple(int(v) for v in text.split(","))

    def number(text: str):
        try:
            return int(text, 0)
        except ValueError:
            return float(text)
    dev = None
    try:
        image = open(args.code_object, "rb").read()
        is_ptx = not image.startswith(b"\x7fELF") and b".entry" in image
        if is_ptx:
            image = image.decode()
            kernels = ptx_params.kernels(image)
            if args.kernel not in kernels:
                raise gputwin.KernelNotFound(args.kernel, list(kernels), where=args.code_object)
            info = kernels[args.kernel]
            params = info.params
        else:
            info = CodeObject.parse(image).find_kernel(args.kernel)
            params = info.explicit_args
        dev = gputwin.open_device(args.dev or os.environ.get("DEV") or ("MOCKNV" if is_ptx else None))
        dev = dev[0] if isinstance(dev, tuple) else dev
        if is_ptx != str(getattr(dev, "arch", "")).startswith("sm_"):
            raise ValueError(f"{args.code_object} is {'PTX' if is_ptx else 'a code object'}, which {dev.name} cannot "
                             f"load: choose {'an NV (MOCKNV, NV)' if is_ptx else 'an AMD'} device with --dev")
        prg = dev.load(image, args.kernel)
        values, buffers = [], []
        for i, text in enumerate(args.arg):
            kind, _, spec = text.partition(":")
            if kind == "bytes":
                values.append(bytes.fromhex(spec))
                continue
            if kind == "struct":
                values.append(_struct_bytes(spec, params[i].size if i < len(params) and not is_ptx else None))
                continue
            if kind == "local":
                values.append(LocalMemory(int(spec, 0)))
                continue
            if kind != "buf":
                values.append(number(text))
                continue
            spec = text[4:]
            pointee = params[i].type_name.rstrip("*").strip() if i < len(params) and not is_ptx else ""
            if "=" in spec:
                dtype, _, data = spec.partition("=")
                host = np.array([float(v) for v in data.split(",")]).astype(dtype)
            elif ":" in spec:
                dtype, _, count = spec.partition(":")
                host = np.zeros(int(count), dtype)
            else:
                dtype = c_types.get(pointee, "uint8")
                host = np.zeros(int(spec, 0) // np.dtype(dtype).itemsize, dtype)
            buf = dev.alloc(max(host.nbytes, 1))
            dev.copyin(buf, host)
            values.append(buf)
            buffers.append((i, buf, host))
        prg(*values, grid=dims(args.grid), block=dims(args.block), lds=args.lds)
        dev.synchronize()
        for i, buf, host in buffers:
            dev.copyout(host, buf)
            name = (params[i].name if i < len(params) else "") or f"arg{i}"
            print(f"{name} ({host.dtype}[{host.size}]): {np.array2string(host[:args.show], threshold=args.show)}"
                  + (" ..." if host.size > args.show else ""))
        print(f"{info.signature()} ran on {dev.name}: grid {dims(args.grid)}, block {dims(args.block)}")
        return 0
    except (OSError, KeyError, ValueError, TypeError, MemoryError, CodeObjectError, devmod.TargetNotAvailable) as e:
        print(f"gputwin run: {e}", file=sys.stderr)
        return 2
    except (gputwin.GpuFault, gputwin.GpuHang) as e:
        print(f"gputwin run: the GPU reported: {e}", file=sys.stderr)
        return 1
    finally:
        if dev is not None and hasattr(dev, "close"):
            dev.close()


def cmd_cc(args) -> int:
    """Build an HSA code object from OpenCL C (.cl) or HIP (.hip) source with clang-19 and ld.lld-19, linking
    gputwin's device library (work-item functions, barriers, atomics, printf, math: docs/cc.md). The result
    loads with dev.load(open(OUT, "rb").read(), "kernel") and runs with `gputwin run OUT kernel ...`."""
    import pathlib
    from gputwin import cc
    from gputwin.abi.code_object import CodeObject
    out = pathlib.Path(args.output or pathlib.Path(args.source).with_suffix(".hsaco").name)
    flags = [*(f"-D{d}" for d in args.defines), *(f"-I{i}" for i in args.includes), *args.clang_flag]
    try:
        image = cc.compile_file(args.source, args.arch, lang=args.lang, opt=args.opt, wave64=args.wave64,
                                cov=args.code_object_version, flags=tuple(flags))
        out.write_bytes(image)
    except (cc.BuildError, OSError) as e:
        print(f"gputwin cc: {e}", file=sys.stderr)
        return 1
    names = ", ".join(sorted(CodeObject.parse(image).kernels)) or "none"
    print(f"wrote {out}: {args.arch} code object v{args.code_object_version}, kernels {names}")
    return 0


def _mc_target(args, what: str) -> tuple[str | None, bool]:
    """(processor, wave64) from llvm-mc's spellings and gputwin's: -mcpu, --arch (llvm-mc's target
    architecture `amdgcn`, or gputwin's processor name), -triple (amdgcn only), -mattr."""
    arch = args.arch
    if arch is not None and not arch.startswith("gfx"):
        if arch != "amdgcn":
            raise ValueError(f"--arch {arch}: gputwin {what} handles amdgcn (AMDGPU) code only")
        arch = None   # llvm-mc's -arch=amdgcn names the target, not the processor
    if args.triple and not args.triple.startswith("amdgcn"):
        raise ValueError(f"-triple={args.triple}: gputwin {what} handles amdgcn (AMDGPU) code only")
    mattr = (args.mattr or "").split(",")
    return args.mcpu or arch, args.wave64 or "+wavefrontsize64" in mattr


def _read_input(path: str | None, binary: bool = False):
    if not path or path == "-":
        return sys.stdin.buffer.read() if binary else sys.stdin.read()
    with open(path, "rb" if binary else "r") as f:
        return f.read()


def _struct_bytes(spec: str, size: int | None) -> bytes:
    """struct:DTYPE=v,DTYPE=v,...: the fields packed as C lays out a struct (each at its natural
    alignment), padded to `size` (the argument's size from the metadata) when known."""
    import numpy as np
    out = bytearray()
    for field in spec.split(","):
        dtype, eq, value = field.partition("=")
        if not eq:
            raise ValueError(f"struct field {field!r}: write DTYPE=VALUE, e.g. float32=1.5")
        dt = np.dtype(dtype)
        out += bytes(-len(out) % dt.alignment)
        out += np.array(float(value) if dt.kind == "f" else int(value, 0), dt).tobytes()
    if size is not None:
        if len(out) > size:
            raise ValueError(f"struct:{spec} packs {len(out)} bytes; the argument has {size}")
        out += bytes(size - len(out))
    return bytes(out)


def cmd_asm(args) -> int:
    """Assemble LLVM-syntax AMDGPU assembly; print `<asm> ; encoding: [...]` lines as llvm-mc -show-encoding,
    or write an ELF object with -filetype=obj -o OUT. Takes llvm-mc's flags (-triple=, -mcpu=, -mattr=,
    -show-encoding, -disassemble), so it can stand in for llvm-mc in scripts."""
    from gputwin.emu.amd.isa import tool
    if args.disassemble:
        return cmd_disasm(args)
    try:
        arch, wave64 = _mc_target(args, "asm")
        source = _read_input(args.file)
        filename = args.file if args.file and args.file != "-" else "<stdin>"
        if args.filetype == "obj":
            if not args.output:
                raise ValueError("-filetype=obj needs -o FILE (an object file is not for the terminal)")
            image = tool.asm_object(source, arch or "gfx1100", sys.stderr, wave64, filename)
            if image is None:
                return 1
            with open(args.output, "wb") as f:
                f.write(image)
            return 0
        if args.output:
            with open(args.output, "w") as out:
                return tool.asm(source, arch or "gfx1100", out, sys.stderr, wave64, filename)
        return tool.asm(source, arch or "gfx1100", sys.stdout, sys.stderr, wave64, filename)
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as e:
        print(f"gputwin asm: {e}", file=sys.stderr)
        return 2


def cmd_disasm(args) -> int:
    """Disassemble byte lines (llvm-mc -disassemble input) or every kernel of a code object (--elf FILE, or
    a FILE that is an ELF; the processor comes from its ELF header unless --arch/-mcpu says otherwise, as
    llvm-objdump does)."""
    from gputwin.abi.code_object import CodeObjectError
    from gputwin.emu.amd.isa import tool
    try:
        arch, wave64 = _mc_target(args, "disasm")
        elf = args.elf
        if elf is None and args.file and args.file != "-":
            with open(args.file, "rb") as f:
                elf = args.file if f.read(4) == b"\x7fELF" else None
        if elf:
            return tool.disasm_elf(_read_input(elf, binary=True), arch, sys.stdout, sys.stderr, args.show_encoding)
        filename = args.file if args.file and args.file != "-" else "<stdin>"
        return tool.disasm(_read_input(args.file), arch or "gfx1100", sys.stdout, sys.stderr, args.show_encoding,
                           wave64, filename)
    except BrokenPipeError:
        raise
    except (OSError, ValueError, CodeObjectError) as e:
        print(f"gputwin disasm: {e}", file=sys.stderr)
        return 2


def cmd_conformance(args) -> int:
    """Per arch and encoding family: table entries, what the emulator implements (asked entry by entry)
    and what each is verified against (docs/conformance.md). Exit status 1 when an entry hit a bug."""
    import json
    from gputwin.emu.amd import conformance
    from gputwin.emu.nv.ptx import conformance as nv
    wanted = (*conformance.REPORT_ARCHES, *nv.ARCHES) if args.arch == "all" else (args.arch,)
    amd_arches = tuple(a for a in wanted if not a.startswith("sm_"))
    nv_arches = tuple(a for a in wanted if a.startswith("sm_"))
    amd = conformance.report(amd_arches) if amd_arches else {}
    ptx = nv.report(nv_arches) if nv_arches else {}      # NVIDIA: the PTX emulator's report
    if args.json:
        print(json.dumps({**amd, **ptx}, indent=1))
    else:
        print("\n".join(text for text in (amd and conformance.format_text(amd, args.verbose),
                                          ptx and nv.format_text(ptx, args.verbose)) if text))
    bad = any(r["total"]["error"] for r in amd.values()) or any(r["unmodelled_in_fixtures"] for r in ptx.values())
    return 1 if bad else 0


def cmd_hil(args) -> int:
    """Hardware-in-loop (docs/hil.md). `record` runs the conformance programs on --dev and writes one recording
    per instruction to --out (fixtures/hw/<arch>/ by convention); `replay` runs every recording found under
    DIR on the emulator and compares bit for bit. Exit status 1 when a recording differs."""
    from gputwin.hil import record as hil
    if args.hil_command == "record":
        out = args.out
        if out is None:
            raise SystemExit("gputwin hil record: --out DIR is required (fixtures/hw/<arch>/ by convention)")
        try:
            hil.record(args.dev or "MOCKNV", out, backend=args.backend, seed=args.seed)
        except (NotImplementedError, RuntimeError, ValueError) as e:
            print(f"gputwin hil record: {e}", file=sys.stderr)
            return 2
        return 0
    return 1 if hil.replay(args.dir) else 0


def _mc_flags(p: argparse.ArgumentParser) -> None:
    """The target and output flags `asm` and `disasm` share, in llvm-mc's spellings and gputwin's."""
    p.add_argument("--arch", "-arch", dest="arch", metavar="PROCESSOR",
                   help="target processor (default gfx1100; disasm of an ELF: its header's); llvm-mc's "
                        "-arch=amdgcn is accepted too")
    p.add_argument("-mcpu", "--mcpu", dest="mcpu", metavar="PROCESSOR", help="target processor (as llvm-mc)")
    p.add_argument("-triple", "--triple", help="target triple (amdgcn-amd-amdhsa; accepted for llvm-mc scripts)")
    p.add_argument("-mattr", "--mattr", help="target features; +wavefrontsize64 means --wave64")
    p.add_argument("--wave64", action="store_true", help="wave64 code (lane masks are SGPR pairs)")
    p.add_argument("-show-encoding", "--show-encoding", dest="show_encoding", action="store_true",
                   help="add each instruction's bytes (asm always shows them)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gputwin", description="GPU driver stack verified on emulated hardware.")
    p.add_argument("--version", action="version", version=f"gputwin {gputwin.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    info = sub.add_parser("info", help="list the devices this machine can open",
                          description="List the targets this machine can open (mock ones always, real ones "
                                      "when their device files exist) and the one DEV selects.")
    info.add_argument("--dev", help="device spec to check (default: $DEV, else MOCKAMD)")
    info.set_defaults(func=cmd_info)

    run = sub.add_parser("run", help="run one kernel of an HSA code object or a PTX module",
                         description=cmd_run.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("code_object", help="path of the .hsaco (clang/ld.lld/hipcc output) or .ptx (nvcc -ptx)")
    run.add_argument("kernel", help="kernel name")
    run.add_argument("--dev", help="device spec (default: $DEV, else MOCKAMD; MOCKNV for PTX)")
    run.add_argument("--grid", default="1", help="workgroups X[,Y[,Z]] (default 1)")
    run.add_argument("--block", default="1", help="work-items per workgroup X[,Y[,Z]] (default 1)")
    run.add_argument("--arg", action="append", default=[], help="a kernel argument, in order (see above)")
    run.add_argument("--show", type=int, default=16, help="elements of each buffer to print (default 16)")
    run.add_argument("--lds", type=int, default=0, help="bytes of dynamic shared memory per workgroup (HIP's "
                                                        "extern __shared__)")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser("demo", help="run an MLP + attention workload on a device and check it",
                          description="Run a two-layer MLP forward pass and a softmax attention block with "
                                      "gputwin.tensor on the device, compare with numpy, print per-kernel "
                                      "timings and emulator counters. Exit status 1 on a mismatch.")
    demo.add_argument("--dev", help="device spec (default: $DEV, else MOCKAMD)")
    demo.add_argument("--seed", type=int, default=0, help="seed for the random weights and inputs")
    demo.set_defaults(func=cmd_demo)

    from gputwin.cc.build import CODE_OBJECT_VERSIONS, OPT_LEVELS
    cc = sub.add_parser("cc", help="build a code object from OpenCL C (.cl) or HIP (.hip) source",
                        description=cmd_cc.__doc__)
    cc.add_argument("source", help="kernel source: .cl (OpenCL C 2.0) or .hip (HIP, device code)")
    cc.add_argument("--arch", default="gfx1100", help="target processor: gfx1100 (default), gfx1201, gfx942, ...")
    cc.add_argument("-o", dest="output", help="output code object (default: SOURCE's name with .hsaco)")
    cc.add_argument("-O", dest="opt", default="2", choices=OPT_LEVELS, help="optimisation level (default -O2)")
    cc.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]", help="define a macro")
    cc.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR", help="add an include directory")
    cc.add_argument("--lang", choices=("opencl", "hip"), help="source language (default: from the extension)")
    cc.add_argument("--wave64", action="store_true", help="wave64 code on gfx10+ (gfx9 is always wave64)")
    cc.add_argument("--code-object-version", type=int, default=5, choices=CODE_OBJECT_VERSIONS,
                    help="code object version (default 5)")
    cc.add_argument("--clang-flag", action="append", default=[], metavar="FLAG",
                    help="one more flag for clang, e.g. --clang-flag=-cl-std=CL3.0 (repeatable)")
    cc.set_defaults(func=cmd_cc)

    asm = sub.add_parser("asm", help="assemble AMDGPU assembly (llvm-mc -show-encoding format)",
                         description=cmd_asm.__doc__)
    asm.add_argument("file", nargs="?", help="assembly source (default: stdin)")
    _mc_flags(asm)
    asm.add_argument("-filetype", "--filetype", default="asm", choices=("asm", "obj"),
                     help="asm: print the encodings (default); obj: write an ELF object to -o")
    asm.add_argument("-o", dest="output", help="output file (default: stdout)")
    asm.add_argument("-disassemble", "--disassemble", action="store_true", help="disassemble instead (as disasm)")
    asm.add_argument("--elf", help=argparse.SUPPRESS)
    asm.set_defaults(func=cmd_asm)

    dis = sub.add_parser("disasm", help="disassemble AMDGPU machine code (llvm-mc -disassemble format)",
                         description=cmd_disasm.__doc__)
    dis.add_argument("file", nargs="?", help="lines of bytes like 0x01,0x05,0x00,0x06, or an ELF code object "
                                             "(default: stdin)")
    _mc_flags(dis)
    dis.add_argument("--elf", help="an HSA code object (.hsaco): disassemble each kernel")
    dis.add_argument("-disassemble", "--disassemble", action="store_true", help=argparse.SUPPRESS)
    dis.set_defaults(func=cmd_disasm)

    conf = sub.add_parser("conformance", help="ISA coverage of the emulator and what verifies each instruction",
                          description=cmd_conformance.__doc__)
    conf.add_argument("--arch", default="all", choices=("all", "gfx1100", "gfx1200", "gfx1201", "gfx942", "sm_80", "sm_90"),
                      help="architecture to report (default: all AMD ones; sm_80/sm_90: the PTX emulator)")
    conf.add_argument("--verbose", action="store_true", help="one row per instruction")
    conf.add_argument("--json", action="store_true", help="machine-readable report with every entry")
    conf.set_defaults(func=cmd_conformance)

    fuzz_cli.add_subcommand(sub)

    hil = sub.add_parser("hil", help="record conformance programs on a device; replay recordings on the emulator",
                         description=cmd_hil.__doc__)
    hil_sub = hil.add_subparsers(dest="hil_command", required=True, metavar="record|replay")
    rec = hil_sub.add_parser("record", help="run the conformance programs on --dev and write recordings")
    rec.add_argument("--dev", help="device spec: NV, NV:<index>, MOCKNV[:sm_NN] (default MOCKNV)")
    rec.add_argument("--out", help="directory for the recordings, e.g. fixtures/hw/sm_90/")
    rec.add_argument("--backend", default="driver", choices=("driver", "cuda"),
                     help="driver: gputwin's own driver (default); cuda: NVIDIA's CUDA driver API (cuda-bindings)")
    rec.add_argument("--seed", type=int, default=20261201, help="seed of the random inputs")
    rep = hil_sub.add_parser("replay", help="replay every recording under DIR on the emulator")
    rep.add_argument("dir", nargs="?", default="fixtures/hw", help="directory searched for *.npz (default fixtures/hw)")
    hil.set_defaults(func=cmd_hil)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:   # `gputwin disasm x | head`: the reader left; stop quietly, as a SIGPIPE'd tool does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # Python's own flush at exit must not raise again
        return 128 + 13


if __name__ == "__main__":
    sys.exit(main())
