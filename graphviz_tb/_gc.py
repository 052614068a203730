"""Pause Python's cyclic garbage collector while the big structures are built.

Reading a 65,000-op graph allocates a few hundred thousand dicts, lists and small objects in a
row.  CPython runs its collector every 700 net allocations, and each older-generation pass
rescans everything built so far, so on a big graph the collector alone would about double
the time to load and group it.
Nothing built there becomes cyclic garbage mid-build, so the pause frees nothing late; the
collector is restored, never forced, afterwards.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["paused_gc"]

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
