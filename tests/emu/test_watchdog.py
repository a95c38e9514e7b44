"""The emulators' watchdog: its knobs, their validation, and scopes that share one deadline."""
from __future__ import annotations

import pytest

from gputwin.emu import watchdog
from gputwin.emu.watchdog import Watchdog


def test_knobs_come_from_the_environment_with_generous_defaults(monkeypatch):
    monkeypatch.delenv("GPUTWIN_WATCHDOG_S", raising=False)
    monkeypatch.delenv("GPUTWIN_WATCHDOG_INSTS", raising=False)
    wd = Watchdog()
    assert (wd.seconds, wd.wave_insts) == (300.0, 1 << 22)
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "2.5")
    monkeypatch.setenv("GPUTWIN_WATCHDOG_INSTS", "1000")
    wd = Watchdog()
    assert (wd.seconds, wd.wave_insts) == (2.5, 1000)
    assert Watchdog(seconds=7, wave_insts=9).wave_insts == 9       # explicit limits win over the environment


@pytest.mark.parametrize("name, raw", [("GPUTWIN_WATCHDOG_S", "soon"), ("GPUTWIN_WATCHDOG_INSTS", "0"),
                                       ("GPUTWIN_WATCHDOG_S", "-1")])
def test_bad_knob_values_are_rejected_by_name(monkeypatch, name, raw):
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=name):
        Watchdog()


def test_the_hang_message_names_both_knobs_and_the_progress():
    wd = Watchdog(seconds=5, wave_insts=123)
    e = wd.hang(wd.time_cause(), "3 of 4 waves finished")
    text = str(e)
    assert "GPUTWIN_WATCHDOG_S=5 s" in text and "GPUTWIN_WATCHDOG_INSTS=123" in text
    assert "3 of 4 waves finished" in text and "wall-clock limit of 5 s" in text


def test_a_scope_is_current_inside_and_nested_scopes_share_its_deadline():
    assert watchdog.current() is None
    outer = Watchdog(seconds=60)
    with watchdog.scope(outer) as wd:
        assert wd is outer and watchdog.current() is outer
        with watchdog.scope(Watchdog(seconds=1)) as inner:
            assert inner is outer                 # one deadline for everything the outer run covers
    assert watchdog.current() is None
