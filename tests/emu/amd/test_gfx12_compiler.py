"""The team compiler's gfx1201 code objects on the RDNA4 emulator: tests/compiler/test_amdgpu_emu.py's
cross-target checks (same bits as the CPU device) with the target set to gfx1201, as EMU_ARCH=gfx1201
does; an unmodelled instruction fails, as it does there."""
from __future__ import annotations

import pytest

import tests.compiler.test_amdgpu_emu as base


@pytest.fixture(autouse=True)
def _gfx1201(monkeypatch):
    monkeypatch.setattr(base, "ARCH", "gfx1201")


for _name in dir(base):
    if _name.startswith("test_"):
        globals()[_name] = getattr(base, _name)
