"""Fuzz surfaces; importing this package registers every one (add a module here to add a surface)."""
from gputwin.fuzz.surfaces import am, api, canary, codeobj, gpfifo, isa, kfd, ptx, rm, streams  # noqa: F401
