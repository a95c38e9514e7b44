"""The dispatch progress line (gputwin/emu/progress.py): when it shows (terminal, GPUTWIN_PROGRESS), what
it says, that it is rate-limited and erased, and that both emulators report through it."""
import io
import re

import numpy as np
import pytest

from gputwin.emu import progress
from gputwin.emu.progress import Progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_one_rewritten_line_then_it_is_erased(monkeypatch):
    monkeypatch.delenv("GPUTWIN_PROGRESS", raising=False)
    out = Tty()
    p = Progress("gfx1100 dispatch", 2048, stream=out, after_s=0)
    p.waves_done, p.wave_insts = 512, 3_000_000
    p.show(running=1_500_000, ended=64)       # 64 waves of the running batch have ended
    p.show()                                  # within EVERY_S of the first: nothing more
    text = out.getvalue()
    assert text.startswith("\r\x1b[Kgputwin: gfx1100 dispatch: 576/2048 waves done, 4.5M wave-instructions (")
    assert text.count("gputwin:") == 1 and "/s), " in text
    p.close()
    assert out.getvalue().endswith("\r\x1b[K")


def test_nothing_before_the_threshold_or_without_a_terminal(monkeypatch):
    monkeypatch.delenv("GPUTWIN_PROGRESS", raising=False)
    early, pipe = Tty(), io.StringIO()
    Progress("x", 1, stream=early).show()      # default threshold: 2 s not yet passed
    Progress("x", 1, stream=pipe, after_s=0).show()
    assert early.getvalue() == "" and pipe.getvalue() == ""


def test_environment_turns_it_off_or_forces_plain_lines(monkeypatch):
    monkeypatch.setenv("GPUTWIN_PROGRESS", "0")
    tty = Tty()
    Progress("x", 1, stream=tty, after_s=0).show()
    assert tty.getvalue() == ""
    monkeypatch.setenv("GPUTWIN_PROGRESS", "1")
    log = io.StringIO()
    p = Progress("x", 4, stream=log, after_s=0)
    p.show(running=10)
    p.close()
    assert re.fullmatch(r"gputwin: x: 0/4 waves done, 10 wave-instructions \(\S+/s\), \d+\.\d s\n", log.getvalue())
    monkeypatch.setenv("GPUTWIN_PROGRESS", "yes")
    with pytest.raises(ValueError, match="GPUTWIN_PROGRESS"):
        Progress("x", 1)


def test_a_stderr_that_went_away_stops_the_reporting_not_the_dispatch(monkeypatch):
    monkeypatch.setenv("GPUTWIN_PROGRESS", "1")
    gone = io.StringIO()
    gone.close()                                         # writes raise ValueError, as a broken pipe raises OSError
    p = Progress("x", 1, stream=gone, after_s=0)
    p.show()
    p.close()
    assert p.mode == "off"


@pytest.mark.parametrize("spec", ["MOCKAMD", "MOCKNV"])
def test_both_emulators_report_a_long_dispatch(spec, monkeypatch, capsys):
    from gputwin.tensor import Tensor
    monkeypatch.setenv("GPUTWIN_PROGRESS", "1")
    monkeypatch.setattr(progress, "AFTER_S", 0.0)       # every dispatch counts as long
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    a = np.ones((40, 24), np.float32)
    (Tensor(a, device=spec) @ Tensor(a.T.copy(), device=spec)).numpy()
    err = capsys.readouterr().err
    unit = "waves" if spec == "MOCKAMD" else "warps"
    assert f" {unit} done, " in err and ("gfx1100 dispatch" if spec == "MOCKAMD" else "PTX kernel M_matmul") in err
