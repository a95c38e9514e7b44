"""Errors of the PTX front end: text the parser or planner cannot accept, named by line and token."""
from __future__ import annotations


class PtxError(ValueError):
    """PTX that does not parse, or that uses something the emulator does not model (fail closed)."""

    def __init__(self, message: str, *, line: int | None = None, token: str | None = None):
        self.line, self.token, self.reason = line, token, message
        where = f"PTX line {line}" if line is not None else "PTX"
        super().__init__(f"{where}: {message}" + (f" (at {token!r})" if token else ""))
