"""Fuzz campaigns over gputwin's surfaces (docs/fuzzing.md).

`runner` drives seeded, bounded campaigns: every case runs in a worker subprocess (restarted after a crash
or a case that outlives its timeout), outcomes are counted by exception type, and anything that is not a
gputwin error, a crash or a timeout is written out as a reproducer. `surface` holds the registry the
surfaces (gputwin.fuzz.surfaces.*) plug into; `classify` decides what counts as a gputwin error.
"""
