"""Pause Python's cyclic garbage collector while the big structures are built, and give back
the memory a parsed graph leaves behind.

Reading a 65,000-op graph allocates a few hundred thousand dicts, lists and small objects in a
row.  CPython runs its collector every 700 net allocations, and each older-generation pass
rescans everything built so far, so on a big graph the collector alone would about double
the time to load and group it.
Nothing built there becomes cyclic garbage mid-build, so the pause frees nothing late; the
collector is restored, never forced, afterwards.
"""

from __future__ import annotations

import ctypes
import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["paused_gc", "return_freed_memory"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def paused_gc(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``func`` with the collector off (nested calls leave it to the outermost)."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


def return_freed_memory() -> None:
    """Give the pages C code has freed back to the system, where the C library can (glibc's
    ``malloc_trim``; elsewhere nothing happens).

    A parsed GraphDef lives in protobuf's memory, taken with ``malloc``: three times the
    file's size.  Once the model is built it is freed, but glibc keeps the pages for later
    ``malloc`` calls, and the later stages allocate their small objects from Python's own
    arenas instead: the freed pages would count in the process's peak to the end.
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # not glibc
        return
    trim(0)
