"""The tbgraph tab never in TensorBoard's way, and in TensorBoard as users run it.

* Loading the plugin at start-up imports nothing heavy (no stage of the pipeline, networkx or
  TensorFlow): the guarantee, checked exactly, behind the next test.
* ``tensorboard --logdir`` starts no slower with the plugin than without, within noise, in
  paired runs.
* ``--logdir_spec`` with named runs, started the way ``%tensorboard`` starts it in Jupyter
  (``tensorboard.notebook.start``).
* The TensorBoard releases of the last two years: 2.19 and 2.20 (February and July 2025), each
  put in front of the installed 2.21 with ``pip install --target`` (the rest of the
  environment is this one), with TensorBoard's default data server.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tensorboard_server import SAMPLES, TensorBoard, free_port, query, start, wait_for

import graphviz_tb
from graphviz_tb.api import discover
from graphviz_tb.options import RenderOptions
from graphviz_tb.write.page import page_data

pytestmark = [pytest.mark.slow]

PLUGIN = "/data/plugin/tbgraph"
#: ``tensorboard``, with tbgraph's entry point hidden (as if it were not installed) when told
#: ``without``: both arms of the paired runs start through this one launcher.  It also writes
#: how long TensorBoard took to load its dynamic plugins (the entry points: tbgraph's is one).
_LAUNCHER = """\
import json, sys, time
from tensorboard import default, main
arm, out = sys.argv.pop(1), sys.argv.pop(1)
entry_points = default._iter_entry_points
if arm == "without":
    default._iter_entry_points = lambda group: [
        e for e in entry_points(group) if e.name != "tbgraph"]
load = default.get_dynamic_plugins

def timed():
    began = time.perf_counter()
    plugins = load()
    with open(out, "w") as f:
        json.dump({"seconds": time.perf_counter() - began,
                   "plugins": sorted(p.__name__ for p in plugins)}, f)
    return plugins

default.get_dynamic_plugins = timed
main.run_main()
"""
#: What loading the plugin may not import: the pipeline's stages, the driver, and the heavy
#: libraries a render needs.
_HEAVY = ("graphviz_tb.read", "graphviz_tb.model", "graphviz_tb.group", "graphviz_tb.view",
          "graphviz_tb.layout", "graphviz_tb.draw", "graphviz_tb.write", "graphviz_tb.pipeline",
          "networkx", "tensorflow", "keras")
_LOAD_PLUGIN = """\
import json, sys, time
from importlib import metadata
from tensorboard import default, program  # what TensorBoard has imported by then
from tensorboard.plugins import base_plugin
before = set(sys.modules)
began = time.perf_counter()
(entry,) = [e for e in metadata.entry_points(group="tensorboard_plugins") if e.name == "tbgraph"]
plugin = entry.load()(base_plugin.TBContext(data_provider=None))
plugin.get_plugin_apps(), plugin.frontend_metadata(), plugin.data_plugin_names()
seconds = time.perf_counter() - began
print(json.dumps({"seconds": seconds, "modules": sorted(set(sys.modules) - before)}))
"""


@pytest.fixture(scope="module")
def sample_logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed sample logdirs as runs of one logdir: costs, keras, pytorch, trace."""
    logdir = tmp_path_factory.mktemp("samples") / "logs"
    shutil.copytree(SAMPLES / "logs", logdir)
    return logdir


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    """What TensorBoard does with the plugin at start-up (load the entry point, make the
    plugin, ask its routes and metadata) imports graphviz_tb's facade and nothing of the
    pipeline, networkx or TensorFlow: those wait for the tab's first request."""
    done = subprocess.run([sys.executable, "-c", _LOAD_PLUGIN], capture_output=True,
                          text=True, check=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    heavy = [m for m in loaded["modules"] if m.startswith(_HEAVY)]
    assert heavy == []
    assert "graphviz_tb.tbplugin.plugin" in loaded["modules"]


def _startup(logdir: Path, work: Path, arm: str) -> tuple[TensorBoard, dict[str, Any]]:
    """TensorBoard started with or ``without`` the plugin, and how long it took to load its
    dynamic plugins."""
    loading = work / f"plugins-{arm}.json"
    board = start(["--logdir", str(logdir)], work / arm,
                  command=[sys.executable, "-c", _LAUNCHER, arm, str(loading)])
    return board, json.loads(loading.read_text())


def test_tensorboard_starts_no_slower_with_the_plugin(sample_logdir: Path,
                                                      tmp_path: Path) -> None:
    """Paired runs, their order alternating: ``tensorboard --logdir`` started with the plugin
    installed, and without it (its entry point hidden), each until its first answer (the
    plugin listing).

    * Wall time: TensorBoard takes seconds to start here (it imports TensorFlow) and this
      machine is shared, so one start can come seconds late.  The median of the paired
      differences must stay under half a second, 15 % of the start, or twice the differences'
      own spread (their median absolute deviation), whichever is most: no slower, within
      noise.
    * What the plugin adds, measured inside each start: the time TensorBoard spends loading
      its dynamic plugins, with ours and without.  The paired difference is small and steady
      (tens of milliseconds): its median must stay under a quarter of a second and 3 % of
      the start.  What loading imports is checked exactly by the test above.
    """
    pairs = []
    for k in range(5):
        times: dict[str, tuple[float, float]] = {}
        for arm in (("with", "without") if k % 2 == 0 else ("without", "with")):
            board, loading = _startup(sample_logdir, tmp_path / str(k), arm)
            try:
                listing = board.json("/data/plugins_listing")
            finally:
                board.stop()
            assert ("tbgraph" in listing) == (arm == "with")
            assert ("TbgraphPlugin" in loading["plugins"]) == (arm == "with")
            times[arm] = (board.started_in, loading["seconds"])
        pairs.append(times)
    report = [{arm: f"start {wall:.2f} s, plugins loaded in {load:.3f} s"
               for arm, (wall, load) in p.items()} for p in pairs]
    print(f"start-up, {len(pairs)} pairs: {report}")
    wall = [p["with"][0] - p["without"][0] for p in pairs]
    start_s = statistics.median(p["without"][0] for p in pairs)
    spread = statistics.median(abs(d - statistics.median(wall)) for d in wall)
    assert statistics.median(wall) < max(0.5, 0.15 * start_s, 2 * spread), report
    added = statistics.median(p["with"][1] - p["without"][1] for p in pairs)
    assert added < min(0.25, 0.03 * start_s), report


def _check_serves_like_tbgraph(board: TensorBoard, logdir: Path,
                               runs: dict[str, Path]) -> None:
    """The tab is listed and active; every run of ``runs`` (TensorBoard's name -> the run's
    directory) is listed, and its latest graph's page is the one ``tbgraph`` writes."""
    assert board.json("/data/plugins_listing")["tbgraph"]["enabled"] is True
    listed = wait_for(lambda: (found := {r["run"]: r for r in board.json(f"{PLUGIN}/runs")
                                         ["runs"]}) and set(runs) <= set(found) and found)
    for run, directory in runs.items():
        graphs = listed[run]["graphs"]
        index = len(graphs) - 1
        page = board.get(f"{PLUGIN}/view?{query(run=run, graph=index)}")
        assert page.status == 200, page.text[:300]
        name = graphs[index]["name"]
        here = discover(directory)
        local = next(i for i, g in enumerate(here.graphs)
                     if g.name.partition(" · ")[2] == name.partition(" · ")[2])
        expected = graphviz_tb.load(directory, graph=local).render(
            format="html", options=RenderOptions(title=name))
        assert isinstance(expected, str)
        assert _unnamed(page.body.decode()) == _unnamed(expected), run


def _unnamed(page: str) -> dict[str, Any]:
    """A page's data, its recorded steps' names and runs left out: those carry the run's name,
    which a run's own directory read alone does not have."""
    data = page_data(page)
    for step in (data.get("costs") or {}).get("steps", []):
        step.pop("name")
        step.pop("run")
    return data


@pytest.fixture
def notebook_tensorboard(sample_logdir: Path, monkeypatch: pytest.MonkeyPatch,
                         tmp_path: Path, capsys: pytest.CaptureFixture[str]
                         ) -> Iterator[tuple[TensorBoard, dict[str, Path]]]:
    """TensorBoard with ``--logdir_spec`` naming two runs, started by
    ``tensorboard.notebook.start``: what Jupyter's ``%tensorboard`` magic calls with its line
    (outside a notebook it prints where to look instead of showing an iframe)."""
    from tensorboard import manager, notebook

    monkeypatch.setenv("TENSORBOARD_BINARY", str(Path(sys.executable).with_name("tensorboard")))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # TensorBoard's instance files go here
    monkeypatch.setattr(tempfile, "tempdir", None)
    named = {"mnist": sample_logdir / "costs", "mlp": sample_logdir / "trace"}
    spec = ",".join(f"{name}:{path}" for name, path in named.items())
    port = free_port()
    notebook.start(f"--logdir_spec {shlex.quote(spec)} --host 127.0.0.1 --port {port}")
    assert f"http://localhost:{port}" in capsys.readouterr().out
    (info,) = [i for i in manager.get_all() if i.port == port]
    board = TensorBoard(f"http://127.0.0.1:{port}", info.pid, group=False)
    # TensorBoard names a run by its name, then its directory below the named one.
    yield board, {f"{name}/.": path for name, path in named.items()}
    board.stop()


def test_named_runs_started_as_jupyter_starts_tensorboard(
        notebook_tensorboard: tuple[TensorBoard, dict[str, Path]], sample_logdir: Path) -> None:
    board, runs = notebook_tensorboard
    _check_serves_like_tbgraph(board, sample_logdir, runs)


@pytest.mark.parametrize("version", ["2.19.0", "2.20.0"])
def test_earlier_tensorboard_releases(version: str, sample_logdir: Path,
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    """An earlier TensorBoard release, with the plugin: listed, active, listing the runs and
    serving the pages ``tbgraph`` writes (TensorBoard's default data server, as users run it).
    Those releases import ``pkg_resources``, which setuptools dropped in release 81: their
    users have an earlier setuptools, and so does the release's folder here."""
    target = tmp_path_factory.mktemp(f"tensorboard-{version}")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--disable-pip-version-check", "--target", str(target),
                           f"tensorboard=={version}", "setuptools<81"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr[-500:]
    board = start(["--logdir", str(sample_logdir)], target / "work",
                  command=[sys.executable, "-m", "tensorboard.main"],
                  python_path=(str(target),))
    try:
        assert board.json("/data/environment")["version"] == version
        runs = {name: sample_logdir / name for name in ("costs", "keras/train", "pytorch",
                                                        "trace")}
        _check_serves_like_tbgraph(board, sample_logdir, runs)
    finally:
        board.stop()
