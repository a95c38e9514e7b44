"""The team compiler's gfx1201 code objects on the RDNA4 emulator: tests/compiler/test_amdgpu_emu.py's
cross-target checks (same bits as the CPU device) with the target set to gfx1201, as EMU_ARCH=gfx1201
does, but strict: an unmodelled instruction fails here instead of skipping."""
from __future__ import annotations

import pytest

import tests.compiler.test_amdgpu_emu as base


class _NeverRaised(Exception):
    """Stands in for IllegalInstruction in base's skip clause, so gaps surface as failures."""


@pytest.fixture(autouse=True)
def _gfx1201_strict(monkeypatch):
    monkeypatch.setattr(base, "ARCH", "gfx1201")
    monkeypatch.setattr(base, "IllegalInstruction", _NeverRaised)


for _name in dir(base):
    if _name.startswith("test_"):
        globals()[_name] = getattr(base, _name)
