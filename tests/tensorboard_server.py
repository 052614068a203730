"""A real ``tensorboard`` process for the plugin's tests: started on a free port, with no stdin
(as in CI), waited for, asked over HTTP, and stopped with whatever it started.

``audit=True`` starts it with a ``sitecustomize`` that records, through Python's audit hooks,
every file the process opens or lists: what the hostile-request tests read back to show that a
request naming a path reads no file.  Nothing here is a test.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

#: How long TensorBoard may take to answer (it imports TensorFlow when installed).
START_S = 180.0
#: The ``sitecustomize`` of an audited process: one line per file opened or directory listed.
_AUDIT_HOOK = """\
import os, sys
_log = open(os.environ["TBGRAPH_AUDIT_LOG"], "a", buffering=1, encoding="utf-8")

def _hook(event, args):
    if event in ("open", "os.listdir", "os.scandir") and args and args[0] is not None:
        try:
            path = os.fsdecode(args[0]) if not isinstance(args[0], int) else None
        except TypeError:
            path = None
        if path is not None:
            _log.write(event + "\\t" + repr(path) + "\\n")

sys.addaudithook(_hook)
"""
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Answer:
    """One HTTP answer."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def query(**params: str | int) -> str:
    """A query string whose values are quoted byte for byte (NUL and slashes too)."""
    return "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())


@dataclass
class TensorBoard:
    """A running ``tensorboard``: its address, process, log and (with ``audit``) the files it
    opened.  ``group``: the process leads a process group of its own (we started it), which
    :meth:`stop` ends whole (TensorBoard's data server with it)."""

    url: str
    pid: int
    log: Path | None = None
    audit: Path | None = None
    started_in: float = 0.0
    group: bool = True
    proc: subprocess.Popen | None = field(default=None, repr=False)  # ours, kept to reap it

    def get(self, path: str, timeout: float = 600.0) -> Answer:
        try:
            with _NO_PROXY.open(self.url + path, timeout=timeout) as response:
                return Answer(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, dict(error.headers), error.read())

    def json(self, path: str) -> Any:
        answer = self.get(path)
        assert answer.status == 200, (path, answer.status, answer.text[:300])
        return answer.json()

    def opened(self) -> list[str]:
        """Every path the process opened or listed so far (``audit`` only)."""
        assert self.audit is not None
        return self.audit.read_text(encoding="utf-8").splitlines()

    def stop(self) -> None:
        """End the process, politely first (TensorBoard then stops its data server), and
        whatever is left of its process group."""
        kill = os.killpg if self.group else os.kill
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(self.pid, sig)
            deadline = time.monotonic() + 15
            while _alive(self.pid, self.proc) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not _alive(self.pid, self.proc):
                break
        if self.group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    def log_tail(self, lines: int = 15) -> str:
        if self.log is None:
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _alive(pid: int, proc: subprocess.Popen | None = None) -> bool:
    """Whether process ``pid`` still runs (``proc``: ours, reaped when it has ended)."""
    if proc is not None:
        return proc.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def tensorboard_command() -> list[str]:
    """The ``tensorboard`` console script beside this Python (the venv's)."""
    script = Path(sys.executable).with_name("tensorboard")
    assert script.exists(), "tensorboard is not installed beside this Python"
    return [str(script)]


def start(args: list[str], work: Path, *, command: list[str] | None = None,
          audit: bool = False, python_path: tuple[str, ...] = (),
          ready: str = "/data/plugins_listing") -> TensorBoard:
    """Start ``tensorboard ARGS`` on a free port of 127.0.0.1 and wait until ``ready`` answers.

    ``python_path`` goes first on the process's PYTHONPATH (an older TensorBoard, say).
    """
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = work / f"tensorboard-{port}.log"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONUNBUFFERED": "1"}
    paths = list(python_path)
    audit_log = None
    if audit:
        hook_dir = work / "audit-hook"
        hook_dir.mkdir(exist_ok=True)
        (hook_dir / "sitecustomize.py").write_text(_AUDIT_HOOK, encoding="utf-8")
        audit_log = work / f"opened-{port}.log"
        audit_log.write_text("", encoding="utf-8")
        env["TBGRAPH_AUDIT_LOG"] = str(audit_log)
        paths.append(str(hook_dir))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep)
    cmd = [*(command or tensorboard_command()), *args, "--host", "127.0.0.1",
           "--port", str(port)]
    began = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    board = TensorBoard(f"http://127.0.0.1:{port}", proc.pid, log, audit_log, proc=proc)
    deadline = began + START_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"tensorboard exited ({proc.returncode}):\n{board.log_tail()}")
        try:
            if board.get(ready, timeout=5).status == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            board.stop()
            raise RuntimeError(f"tensorboard did not answer in {START_S:.0f} s:\n"
                               f"{board.log_tail()}")
        time.sleep(0.05)
    board.started_in = time.monotonic() - began
    return board


def wait_for(check: Any, timeout: float = 60.0, every: float = 0.25) -> Any:
    """Poll ``check()`` until it returns something true (returned), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout:.0f} s: {check}")
        time.sleep(every)


# --------------------------------------------------------------------------- the logdir

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
#: NASNet-Large's TF2 training step as ``make bench`` builds it (the same construction as
#: :func:`build_nasnet_step`), reused when a developer has it.
BENCH_NASNET = REPO / "bench" / "graphs" / "nasnet_large_step.pb"
#: A run name a model directory may well have: markup and quotes, to be escaped everywhere.
MARKUP_RUN = "<img src=x onerror=alert(1)> & \"run\" 'one'"
_BUILD_NASNET = """\
import sys
import keras, tensorflow as tf
import training_steps
graph_def, _, _ = training_steps.application_step(tf, keras, "NASNetLarge", "adam", 331)
open(sys.argv[1], "wb").write(graph_def.SerializeToString())
"""


def write_graph_event(graph_pb: Path, run_dir: Path, step: int = 0) -> None:
    """One event file holding ``graph_pb``'s GraphDef as ``Event.graph_def``, written by
    TensorBoard's own writer as ``tf.summary.graph`` and ``FileWriter.add_graph`` write it."""
    # Imported here: TensorBoard's writer imports TensorFlow, for its file system layer.
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    run_dir.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(run_dir), filename_suffix=f".step{step}")
    writer.add_event(event_pb2.Event(wall_time=time.time(), step=step,
                                     graph_def=graph_pb.read_bytes()))
    writer.close()


def build_nasnet_step(work: Path) -> Path:
    """NASNet-Large's TF2 training step (69,453 ops: Keras' Adam, ``GradientTape``), built by
    TensorFlow in a process of its own (a few minutes; ``bench/graphs`` holds it once ``make
    bench`` ran, and then it is taken from there)."""
    if BENCH_NASNET.is_file():
        return BENCH_NASNET
    out = work / "nasnet_large_step.pb"
    subprocess.run([sys.executable, "-c", _BUILD_NASNET, str(out)], check=True,
                   cwd=Path(__file__).parent, capture_output=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    return out


def plugin_logdir(root: Path, tf1_run: Path, trace_run: Path, nasnet_pb: Path) -> Path:
    """The logdir TensorBoard serves to the plugin's tests, one run each:

    * ``tf1``: a TF1 ``FileWriter`` run (graph, meta graph, a traced step's run metadata);
    * ``trace``: a TF2 ``tf.summary.trace_export`` of two ``tf.function`` calls;
    * ``pytorch``: PyTorch's ``SummaryWriter.add_graph`` (the committed sample);
    * ``costs``: TF1 MNIST with two steps' run metadata (the committed sample);
    * ``keras``: Keras' TensorBoard callback, the conceptual graph only (the committed sample);
    * ``nasnet_step``: NASNet-Large's training step, 69,453 ops;
    * ``cnn_v1``, ``cnn_v2``: a CNN before and after a change (``samples/diff``), to compare;
    * a run named with markup and quotes (:data:`MARKUP_RUN`), holding the v1 CNN;
    * ``broken``: a graph event whose bytes are no GraphDef.
    """
    logdir = root / "logs"
    shutil.copytree(tf1_run, logdir / "tf1")
    shutil.copytree(trace_run, logdir / "trace")
    for sample in ("pytorch", "costs"):
        shutil.copytree(SAMPLES / "logs" / sample, logdir / sample)
    shutil.copytree(SAMPLES / "logs" / "keras" / "train", logdir / "keras")
    write_graph_event(nasnet_pb, logdir / "nasnet_step")
    write_graph_event(SAMPLES / "diff" / "cnn_v1.pb", logdir / "cnn_v1")
    write_graph_event(SAMPLES / "diff" / "cnn_v2.pb", logdir / "cnn_v2")
    write_graph_event(SAMPLES / "diff" / "cnn_v1.pb", logdir / MARKUP_RUN)
    garbage = root / "garbage.pb"
    garbage.write_bytes(b"\x0a\x05\x0a\x03abc\xff not a graph")
    write_graph_event(garbage, logdir / "broken")
    return logdir
