"""Opt-in checkers of emulated GPU work (GPUTWIN_SANITIZE; docs/sanitizers.md), shared by every emulated
device: config (which checkers), memcheck, initcheck, racecheck (LDS), the per-dispatch Session that
collects and raises findings, and report (the finding line, the exit tally). Each shader core hooks in
with its own address computation (AMD: gputwin/emu/amd/sanitize.py)."""
