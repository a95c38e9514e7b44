"""hostmem: malloc tuning for big numpy temporaries, and its opt-out."""
from __future__ import annotations

import ctypes

import pytest

from gputwin.emu import hostmem


def test_tuning_applies_on_glibc_and_can_be_turned_off(monkeypatch):
    if not hasattr(ctypes.CDLL(None), "mallopt"):
        pytest.skip("needs glibc (mallopt)")
    monkeypatch.delenv("GPUTWIN_MALLOPT", raising=False)
    assert hostmem.tune_malloc() is True
    monkeypatch.setenv("GPUTWIN_MALLOPT", "0")
    assert hostmem.tune_malloc() is False
