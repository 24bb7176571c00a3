"""Operating-system names for real-time threads, so that ``ps -L``, ``top -H`` and ``perf sched`` show them.

Python's ``threading`` names stay inside the interpreter (before 3.14); a kernel tool only sees "python3"
for every thread. Naming the robot loop's OS thread is how a lab finds it when a cycle is late.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["set_os_thread_name"]

_PR_SET_NAME = 15  # linux/prctl.h
_libc = None


def set_os_thread_name(name: str) -> bool:
    """Give the calling thread the kernel name ``name`` (at most 15 bytes are kept); False where impossible."""
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    try:
        if _libc is None:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return _libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
