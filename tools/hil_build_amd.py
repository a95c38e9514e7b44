"""Assemble the AMD hardware-in-loop programs (gputwin/hil/amd_programs.py) into one code object per arch,
gputwin/hil/amd/<arch>.hsaco, with llvm-mc-19 and ld.lld-19. Run after changing the programs:

    python tools/hil_build_amd.py            # all archs;  --check: exit 1 if a committed file is stale
"""
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from gputwin.hil import amd_programs  # noqa: E402


def build(arch: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        src, obj, out = (pathlib.Path(d) / f"k.{ext}" for ext in ("s", "o", "hsaco"))
        src.write_text(amd_programs.module_source(arch))
        subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj", str(src),
                        "-o", str(obj)], check=True)
        subprocess.run(["ld.lld-19", "-shared", str(obj), "-o", str(out)], check=True)
        return out.read_bytes()


def main() -> int:
    check, stale = "--check" in sys.argv, []
    amd_programs.HERE.mkdir(exist_ok=True)
    for arch in amd_programs.ARCHS:
        image, path = build(arch), amd_programs.HERE / f"{arch}.hsaco"
        if check:
            if not path.exists() or path.read_bytes() != image:
                stale.append(str(path))
        else:
            path.write_bytes(image)
            print(f"{path}: {len(image)} bytes")
    if stale:
        print("stale: " + ", ".join(stale))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
