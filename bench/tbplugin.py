"""How fast the tbgraph tab draws in TensorBoard, against ``tbgraph render`` of the same graph.

On a logdir holding NASNet-Large's TF2 training step (69,453 ops, ``bench/graphs``), paired
runs in turn, each a fresh process:

* ``tbgraph render LOGDIR -o x.html``: the command line's viewer page, start to end;
* the first ``/data/plugin/tbgraph/view`` of a freshly started ``tensorboard --logdir LOGDIR``
  (once its data provider lists the run, through TensorBoard's own Graphs dashboard's route,
  so the pipeline's import is in the timed request, as it is in the command's time): the
  issue's target is at most 1.2x the command;
* the same request again, five times (the page comes from the cache): target under 0.5 s.

Both TensorBoard data providers are measured: the default one (``--load_fast=auto``, the
Rust data server when it runs here) and the in-process one (``--load_fast=false``).

Usage: ``python bench/tbplugin.py [GRAPH.pb] [--repeat N] [--out FILE]`` (default 3 rounds,
its section of ``bench/RESULTS.md``, which ``run.py`` keeps).  Nothing here is a test.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from peers import write_logdir
from run import (
    TBPLUGIN_BEGIN,
    TBPLUGIN_END,
    load_average,
    one_graph_arguments,
    run_timed,
    tbgraph,
    write_section,
)

RUN = "nasnet_step"
REPEATS = 5
START_S = 300.0
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str, timeout: float = 900.0) -> tuple[int, bytes]:
    try:
        with _NO_PROXY.open(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return 0, b""


@contextlib.contextmanager
def tensorboard(logdir: Path, log: Path, flags: list[str]) -> Iterator[str]:
    """A fresh ``tensorboard --logdir`` (its own process group), up and listing the run."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    script = Path(sys.executable).with_name("tensorboard")
    with log.open("wb") as out:
        proc = subprocess.Popen([str(script), "--logdir", str(logdir), "--host", "127.0.0.1",
                                 "--port", str(port), *flags], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True,
                                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    try:
        deadline = time.monotonic() + START_S
        while RUN.encode() not in _get(f"{base}/data/plugin/graphs/info", 5)[1]:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tensorboard did not list the run; see {log}")
            time.sleep(0.25)
        yield base
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
                break


def timed_view(base: str) -> tuple[float, int]:
    """One ``/view`` of the run's graph: seconds and page size."""
    began = time.perf_counter()
    status, body = _get(f"{base}/data/plugin/tbgraph/view?run={RUN}&graph=0")
    seconds = time.perf_counter() - began
    if status != 200:
        raise RuntimeError(f"/view answered {status}: {body[:200]!r}")
    return seconds, len(body)


def cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"


def main() -> int:
    path, args = one_graph_arguments(__doc__.splitlines()[0], 3, "tbplugin.py")
    load_start = load_average()
    arms = {"default data server": [], "`--load_fast=false`": ["--load_fast=false"]}
    cli: list[float] = []
    first: dict[str, list[float]] = {arm: [] for arm in arms}
    again: dict[str, list[float]] = {arm: [] for arm in arms}
    size = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        logdir = work / "logs"
        write_logdir(path, logdir / RUN)
        for n in range(args.repeat):
            print(f"round {n + 1} of {args.repeat}", file=sys.stderr)
            cli.append(run_timed(tbgraph("render", str(logdir), "-o",
                                         str(work / "cli.html"))).wall)
            for arm, flags in arms.items():
                with tensorboard(logdir, work / f"tb-{n}.log", flags) as base:
                    seconds, size = timed_view(base)
                    first[arm].append(seconds)
                    again[arm].extend(timed_view(base)[0] for _ in range(REPEATS))
    mid = statistics.median(cli)
    lines = [
        TBPLUGIN_BEGIN,
        "## The tbgraph tab in TensorBoard",
        "",
        f"Generated by `bench/tbplugin.py` on `{path.name}` written to a logdir as "
        f"`Event.graph_def`: {args.repeat} rounds, each a fresh `tbgraph render LOGDIR -o "
        "x.html` and, per data provider, a fresh `tensorboard --logdir LOGDIR` asked for the "
        "run's `/data/plugin/tbgraph/view` once it lists the run (first request: the pipeline's "
        f"import, reading the blob, drawing; {size / 1e6:.1f} MB page), then "
        f"{REPEATS} times more (from the cache). Median (min–max). Load average (1, 5, 15 "
        f"min) at the start: {load_start}; at the end: {load_average()}.",
        "",
        "| | wall | ÷ `tbgraph render` | target |",
        "|---|---|---|---|",
        f"| `tbgraph render LOGDIR -o x.html` | {cell(cli)} | 1.00× | |",
    ]
    for arm in arms:
        ratio = statistics.median(first[arm]) / mid
        lines.append(f"| first `/view`, {arm} | {cell(first[arm])} | {ratio:.2f}× | "
                     f"≤ 1.2× {'met' if ratio <= 1.2 else 'missed'} |")
    for arm in arms:
        slow = statistics.median(again[arm])
        lines.append(f"| repeated `/view`, {arm} | {cell(again[arm])} | "
                     f"{slow / mid:.3f}× | < 0.5 s {'met' if slow < 0.5 else 'missed'} |")
    lines.append(TBPLUGIN_END)
    text = "\n".join(lines)
    print(text)
    print(json.dumps({"cli": cli, "first": first, "again": again}), file=sys.stderr)
    write_section(Path(args.out), text, TBPLUGIN_BEGIN, TBPLUGIN_END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
