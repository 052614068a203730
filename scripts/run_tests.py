"""Run the test suite one file per pytest process, as ``make test`` does.

Why: TensorFlow and torch never free what they keep of a graph they traced or exported, so in
one process the suite's memory only grows; it passed the machine's 24 GB and the kernel killed
it (twice, with a different order of files each time, pytest-randomly shuffling them).  A
process per file bounds the peak by the heaviest file, and a file that is killed is reported
as such while the others still run.  Each file's time and peak memory are printed, so the next
file that grows is seen before it kills anything.

Usage: ``run_tests.py [pytest options] [-- files]``; every file under ``tests/`` named
``test_*.py`` when none are given.  Exits non-zero when any file fails or is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
#: pytest's exit code when every test of a file was deselected (the quick tier's markers).
NO_TESTS = 5


def _run(file: Path, options: list[str]) -> tuple[int, float, float]:
    """One file's pytest in a process of its own: its exit status, seconds and peak GB.

    The peak is the largest resident size of the process and of anything it waited for
    (Graphviz, Chromium, the packaging tests' pip), as the kernel counts it."""
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "pytest", "-q", *options, str(file)])
    _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - start, usage.ru_maxrss / 2**20


def _verdict(code: int) -> str:
    """What an exit status says, in words: a kill names its signal."""
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return {0: "passed", NO_TESTS: "no tests selected"}.get(code, f"failed (exit {code})")


def main(argv: list[str]) -> int:
    """Run each file, print a table of time and memory, and say which files did not pass."""
    options, files = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) \
        if "--" in argv else (argv, [])
    paths = [Path(f) for f in files] or sorted(TESTS.glob("test_*.py"))
    rows = []
    for path in paths:
        print(f"== {path.name}", flush=True)
        code, seconds, peak = _run(path, options)
        rows.append((path.name, code, seconds, peak))
    print("\nfile                            seconds  peak GB  result")
    for name, code, seconds, peak in rows:
        print(f"{name:<32}{seconds:>7.0f}{peak:>9.2f}  {_verdict(code)}")
    bad = [name for name, code, _, _ in rows if code not in (0, NO_TESTS)]
    total = sum(seconds for _, _, seconds, _ in rows)
    print(f"{len(rows)} files in {total / 60:.1f} min; "
          + (f"not passed: {', '.join(bad)}" if bad else "all passed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
