"""The README's "Write your own kernel" section works as written: its files are written, its shell lines
(`gputwin ...`, through the CLI's main) and Python blocks run in a scratch directory, and each `text`
block's lines appear, in order, in what the commands before it printed."""
import pathlib
import re
import shlex

from gputwin.cli import main

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"```(\w+)(?: (\S+))?\n(.*?)```", re.S)


def section() -> str:
    text = README.read_text()
    start = text.index("## Write your own kernel")
    return text[start:text.index("\n## ", start + 1)]


def test_write_your_own_kernel_works_as_written(toolchain, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
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
                assert main(argv[1:]) == 0, capsys.readouterr()
                printed += capsys.readouterr().out
        elif kind == "python":
            exec(compile(body, "README.md", "exec"), {})
            printed += capsys.readouterr().out
        elif kind == "text":
            lines, pos = printed.splitlines(), 0
            for want in body.splitlines():
                assert want in lines[pos:], f"{want!r} not printed (in order) by:\n{printed}"
                pos = lines.index(want, pos) + 1
            printed = ""
