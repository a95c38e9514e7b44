"""Regenerate fixtures/abi/nv_layouts.json: what NVIDIA's own headers say about every NV ABI fact gputwin
defines in ctypes (struct sizes and field offsets, #define values, QMD bit ranges).

    python tools/gen_nv_abi_layouts.py OGKM_DIR OPEN_GPU_DOC_DIR

OGKM_DIR is a checkout of NVIDIA/open-gpu-kernel-modules at tag 580.105.08, OPEN_GPU_DOC_DIR one of
NVIDIA/open-gpu-doc. Sizes, offsets and macro values come from compiling a probe with clang-19 against
those headers; QMD ranges from the MW(hi:lo) text of clc6c0qmd.h. tests/abi/test_nv_abi_layouts.py then
checks gputwin.abi.nv_* against the JSON with no NVIDIA headers installed.
"""
from __future__ import annotations

import ctypes
import json
import pathlib
import re
import subprocess
import sys
import tempfile

from gputwin.abi import nv_classes, nv_ctrl, nv_methods, nv_qmd, nv_rm, nv_uvm

MODULES = (nv_rm, nv_classes, nv_ctrl, nv_uvm, nv_methods)
INCLUDES = ("src/common/sdk/nvidia/inc", "src/nvidia/arch/nvalloc/unix/include", "kernel-open/nvidia-uvm",
            "kernel-open/common/inc", "src/common/inc")
HEADERS = ("nvtypes.h", "nvos.h", "nvstatus.h", "nverror.h", "nvgputypes.h", "nv-ioctl.h", "nv-ioctl-numbers.h",
           "nv_escape.h", "nv-unix-nvos-params-wrappers.h", "class/cl0000.h", "class/cl0001.h", "class/cl003e.h",
           "class/cl0040.h", "class/cl0071.h", "class/cl0080.h", "class/cl2080.h", "class/cl2080_notification.h",
           "class/cl9067.h", "class/cl90f1.h", "class/cla06c.h", "class/clc461.h", "class/clc561.h", "class/clc661.h",
           "class/clc361.h", "class/clc56f.h", "class/clb0b5sw.h", "alloc/alloc_channel.h",
           "ctrl/ctrl0000/ctrl0000gpu.h", "ctrl/ctrl0080/ctrl0080gpu.h", "ctrl/ctrl0080/ctrl0080gr.h",
           "ctrl/ctrl2080/ctrl2080gpu.h", "ctrl/ctrl2080/ctrl2080gr.h", "ctrl/ctrla06c.h", "ctrl/ctrlc36f.h",
           "ctrl/ctrl906f.h", "uvm_linux_ioctl.h", "uvm_ioctl.h")
# gputwin names of method offsets -> the macro in each class header that must agree
METHOD_MACROS = {
    **{k: [f"NVC6C0_{k[8:]}", f"NVCBC0_{k[8:]}"] for k in dir(nv_methods) if k.startswith("COMPUTE_")},
    **{k: [f"NVC6B5_{k[5:]}", f"NVC8B5_{k[5:]}"] for k in dir(nv_methods) if k.startswith("COPY_")},
}


def structs():
    out = {}
    for mod in MODULES:
        for name, obj in vars(mod).items():
            if isinstance(obj, type) and issubclass(obj, ctypes.Structure) and obj.__module__ == mod.__name__ \
                    and name != "_S":
                out[name] = obj
    return out


def constants():
    out = {}
    for mod in MODULES:
        for name, value in vars(mod).items():
            if name.isupper() and isinstance(value, int) and not isinstance(value, bool):   # Fields are not ints
                out[name] = value
    return out


def probe(ogkm: pathlib.Path, doc: pathlib.Path) -> dict:
    # the full class method headers are open-gpu-doc's (the kernel modules ship partial clc8b5.h / clcbc0.h);
    # they come first so their include guards win
    docs = [doc / "classes/dma-copy/clc6b5.h", doc / "classes/dma-copy/clc8b5.h", doc / "classes/compute/clc6c0.h",
            doc / "classes/compute/clcbc0.h"]
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "nvtypes.h"'] + \
        [f'#include "{h}"' for h in docs] + [f'#include "{h}"' for h in HEADERS]
    lines += ["int main(void) {", 'printf("{\\"structs\\": {");']
    for i, (name, st) in enumerate(structs().items()):
        fields = ", ".join(f'\\"{f}\\": %zu' for f, *_ in st._fields_)
        args = ", ".join(f"offsetof({name}, {f})" for f, *_ in st._fields_)
        sep = "," if i else ""
        lines.append(f'printf("{sep}\\"{name}\\": {{\\"size\\": %zu, \\"fields\\": {{{fields}}}}}", sizeof({name}), {args});')
    lines.append('printf("}, \\"macros\\": {\\"_\\": 0");')
    wanted = sorted(set(constants()) | {m for ms in METHOD_MACROS.values() for m in ms})
    for name in wanted:
        lines += [f"#ifdef {name}", f'printf(", \\"{name}\\": %llu", (unsigned long long)({name}));', "#endif"]
    lines += ['printf("}}\\n");', "return 0; }"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = pathlib.Path(tmp, "probe.c"), pathlib.Path(tmp, "probe")
        src.write_text("\n".join(lines))
        flags = [f"-I{ogkm / d}" for d in INCLUDES]
        subprocess.run(["clang-19", "-w", *flags, "-o", str(exe), str(src)], check=True)
        result = json.loads(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
    result["macros"].pop("_")
    return result


def qmd_ranges(doc: pathlib.Path) -> dict:
    text = (doc / "classes/compute/clc6c0qmd.h").read_text()
    out = {}
    for name in nv_qmd.FIELDS:
        base, index = re.fullmatch(r"(.*?)(\d?)", name).groups()
        if base.startswith(("CONSTANT_BUFFER_", "RELEASE")) and index == "" and base[-1].isdigit():
            base, index = base[:-1], base[-1]
        m = re.search(rf"#define NVC6C0_QMDV03_00_{re.escape(name)}\s+MW\((\d+):(\d+)\)", text)
        if m:
            out[name] = [int(m.group(1)), int(m.group(2))]
            continue
        m = re.search(rf"#define NVC6C0_QMDV03_00_{re.escape(base)}\(i\)\s+MW\(\((\d+)\+\(i\)\*(\d+)\):\((\d+)\+\(i\)\*(\d+)\)\)",
                      text)
        if m and index:
            i = int(index)
            out[name] = [int(m.group(1)) + i * int(m.group(2)), int(m.group(3)) + i * int(m.group(4))]
    return out


def main() -> None:
    ogkm, doc = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    data = probe(ogkm, doc)
    data["qmd_v03_00"] = qmd_ranges(doc)
    data["method_macros"] = METHOD_MACROS
    out = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "abi" / "nv_layouts.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{out}: {len(data['structs'])} structs, {len(data['macros'])} macros, {len(data['qmd_v03_00'])} QMD fields")


if __name__ == "__main__":
    main()
