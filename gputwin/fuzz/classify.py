"""Which exceptions are gputwin's own, deliberate errors and which are leaks.

A gputwin error is one a user can act on: an instance of a public class defined in gputwin (errors.py's
GpuFault/MemoryFault/IllegalInstruction/GpuHang, PacketError, CodeObjectError, DeviceLost, ...), an
OSError carrying a real errno that gputwin code (the mock kernel) raised, or -- where a surface allows
argument validation -- a ValueError/TypeError/MemoryError that a `raise` statement in gputwin code raised.
Anything else (IndexError from numpy, a TypeError out of ctypes, KeyError, a bare ValueError from deep
inside the emulator on a surface that does not validate arguments) is a leak: a defect to report.
"""
from __future__ import annotations

import errno
import linecache
import os
import traceback

import gputwin

PACKAGE_DIR = os.path.dirname(os.path.abspath(gputwin.__file__))
VALIDATION = (ValueError, TypeError, MemoryError)


def _raised_by_gputwin(e: BaseException) -> bool:
    """Whether the innermost frame is gputwin code and its line is a raise statement (a deliberate error,
    not a builtin's complaint about something gputwin passed it)."""
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = os.path.abspath(tb.tb_frame.f_code.co_filename)
    line = linecache.getline(path, tb.tb_lineno).strip()
    return path.startswith(PACKAGE_DIR + os.sep) and line.startswith("raise")


def _gputwin_class(e: BaseException) -> bool:
    cls = type(e)
    return cls.__module__.split(".")[0] == "gputwin" and not cls.__name__.startswith("_")


def label(e: BaseException, *, validation: bool = False) -> tuple[bool, str]:
    """(is it a gputwin error, the outcome label it is counted under)."""
    name = type(e).__name__
    if _gputwin_class(e):
        return True, name
    if isinstance(e, OSError):
        code = errno.errorcode.get(e.errno or 0, str(e.errno))
        return bool(e.errno) and _raised_by_gputwin(e), f"OSError:{code}"
    if validation and isinstance(e, VALIDATION) and _raised_by_gputwin(e):
        return True, name
    return False, name


def where(e: BaseException) -> str:
    """file:line of the innermost gputwin frame (else the innermost frame), for grouping findings."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if os.path.abspath(f.filename).startswith(PACKAGE_DIR + os.sep)]
    if not frames:
        return "?"
    f = (ours or frames)[-1]
    path = os.path.abspath(f.filename)
    if ours:
        path = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))
    return f"{path}:{f.lineno}"
