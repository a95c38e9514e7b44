"""The README's "Write your own kernel" section works as written: its files are written, its shell lines
and Python blocks run (in a fresh process each, in a scratch directory), and each `text` block's lines
appear, in order, in what the commands before it printed."""
import pathlib
import re
import shlex
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"```(\w+)(?: (\S+))?\n(.*?)```", re.S)


def section() -> str:
    text = README.read_text()
    start = text.index("## Write your own kernel")
    return text[start:text.index("\n## ", start + 1)]


def run(cmd: list[str], cwd: pathlib.Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_write_your_own_kernel_works_as_written(toolchain, tmp_path):
    blocks = BLOCK.findall(section())
    kinds = [k for k, _, _ in blocks]
    assert kinds.count("text") == 2 and "python" in kinds and "sh" in kinds
    assert {name for _, name, _ in blocks if name} == {"saxpy.cl", "scale.hip"}
    printed = ""
    for kind, name, body in blocks:
        if name:
            (tmp_path / name).write_text(body)
        elif kind == "sh":
            for line in filter(None, body.splitlines()):
                argv = shlex.split(line)
                assert argv[0] == "gputwin"
                printed += run([sys.executable, "-m", "gputwin.cli", *argv[1:]], tmp_path)
        elif kind == "python":
            printed += run([sys.executable, "-c", body], tmp_path)
        elif kind == "text":
            lines, pos = printed.splitlines(), 0
            for want in body.splitlines():
                assert want in lines[pos:], f"{want!r} not printed (in order) by:\n{printed}"
                pos = lines.index(want, pos) + 1
            printed = ""
