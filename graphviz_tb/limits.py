"""The memory a process of ours may use: the limit (``TBGRAPH_MEMORY_LIMIT``, else what the
machine has free), and the cap the command line sets on itself so that running out is a
one-line error, never a kill by the kernel.  Below every stage: the CLI sets the cap before it
reads anything."""

from __future__ import annotations

import os
import re
import sys

from .errors import GraphvizTbError

__all__ = ["ENV", "MB", "limit_process", "memory_limit", "parse_size", "resident"]


ENV = "TBGRAPH_MEMORY_LIMIT"


MB = 2**20


_UNKNOWN_RESIDENT = 100 * MB  # what the process holds, where the system cannot say


_CAP_FLOOR = 256 * MB  # the lowest cap limit_process() sets


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)


def resident() -> int:
    """This process's resident memory now (Linux), or its peak so far, or a guess."""
    try:
        with open("/proc/self/statm", encoding="ascii") as stream:
            return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource  # POSIX only
    except ImportError:
        return _UNKNOWN_RESIDENT
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes there, KiB elsewhere


def parse_size(text: str) -> int:
    """``2G``, ``512M``, ``1.5g``, ``800000000`` -> bytes; ValueError otherwise."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size (e.g. 8G, 512M, 1000000000)")
    number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * 1024 ** "_kmgt".index(unit)) if unit else int(number)


def memory_limit() -> tuple[int | None, str]:
    """The memory a render may use, and where that figure comes from."""
    text = os.environ.get(ENV)
    if text:
        try:
            return parse_size(text), ENV
        except ValueError as exc:
            raise GraphvizTbError(f"{ENV}: {exc}") from None
    try:
        with open("/proc/meminfo", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available"
    except (OSError, ValueError, IndexError):
        pass
    return None, ""


def limit_process() -> int | None:
    """Cap this process's data segment at :func:`memory_limit` (the command line calls this;
    a library leaves process limits alone).  Should the estimate fall short, an allocation
    past the limit then raises MemoryError, which the command line reports in one line,
    instead of the kernel killing the process once the machine runs out.  Returns the cap."""
    try:
        import resource  # POSIX only: elsewhere there is no cap to set
    except ImportError:
        return None
    limit, _ = memory_limit()
    if limit is None:
        return None
    # Never below what starting up takes: Python fails to import modules past a cap that low
    # (without a clear error), and the estimate refuses such graphs first anyway.
    limit = max(limit, _CAP_FLOOR)
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or limit < soft:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    return limit
