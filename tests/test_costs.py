"""What ops cost when they ran: run metadata and profiler captures TensorFlow recorded, read,
attached to the graph's ops, summed per group and drawn (``--color-by compute-time/memory``).

The truth is TensorFlow's own RunMetadata protos (kept by the fixtures) and the pictures are
read back from the SVG: fills, the numbers on each box's second line, and the legend.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from picture import check_picture, read_svg
from svgparse import classes, fill_of, node_groups, parse

import graphviz_tb
from graphviz_tb.cli import main
from graphviz_tb.options import RenderOptions
from graphviz_tb.style import COST_COLORS, NO_RECORD

pytestmark = [pytest.mark.tensorflow, pytest.mark.dot]

SVG_TEXT = "{http://www.w3.org/2000/svg}text"
#: A box's cost on its second line, then its share of the step (``12.3 ms · 18 %``).
_TIME = re.compile(r"(\d+(?:\.\d+)?) (ns|µs|ms|s) · (?:<?\d+(?:\.\d+)? %|–)$")
_BYTES = re.compile(r"(\d+(?:\.\d+)?) (B|KiB|MiB|GiB) · (?:<?\d+(?:\.\d+)? %|–)$")
_NS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
_B = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
_REAL_DEVICE = re.compile(r"device:[^:/]+:\d+$")


def _texts(g: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in g.iter(SVG_TEXT)]


def _shown(g: ET.Element, pattern: re.Pattern[str], units: dict[str, float]) -> float | None:
    """The time (ns) or size (bytes) a box's second line shows, or None."""
    for text in _texts(g)[1:]:
        found = pattern.search(text)
        if found:
            return float(found.group(1)) * units[found.group(2)]
    return None


def _close(shown: float | None, truth: float) -> bool:
    """Three significant digits, as the picture prints them."""
    return shown is not None and abs(shown - truth) <= 0.0051 * truth + 1


def _truth(run_metadata: Any, names: set[str], memory: bool = False) -> dict[str, int]:
    """Per op of ``names``: the sum of its executions' ``all_end_rel`` (ns), or of its
    allocators' ``total_bytes``, from TensorFlow's proto, on real devices."""
    out: dict[str, int] = {}
    for dev in run_metadata.step_stats.dev_stats:
        if not _REAL_DEVICE.search(dev.device):
            continue
        for s in dev.node_stats:
            if s.node_name not in names:
                continue
            value = sum(m.total_bytes for m in s.memory) if memory else (
                s.all_end_rel_nanos or s.all_end_rel_micros * 1000)
            out[s.node_name] = out.get(s.node_name, 0) + value
    return out


def _swatches(legend: ET.Element) -> set[str]:
    """The fills of the legend's colour swatches."""
    return {(el.get("fill") or "").lower() for el in legend.iter()
            if el.tag.endswith(("polygon", "path", "rect")) and el.get("fill")}


def _render(args: list[str], path: Path) -> ET.Element:
    assert main([*args, "-o", str(path)]) == 0
    return parse(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- the static picture


def test_the_most_expensive_op_is_hottest_and_shows_its_time(
        costs_tf1: dict[str, Any], tmp_path: Path) -> None:
    logdir = costs_tf1["logdir"]
    svg = _render(["render", str(logdir), "--color-by", "compute-time", "--run-metadata",
                   "train", "--expand-all"], tmp_path / "hot.svg")
    ops = node_groups(svg, "op")
    truth = _truth(costs_tf1["metadata"]["train"], set(ops))
    assert len(truth) > 10, "most ops of the training step ran"
    hottest = max(truth, key=truth.__getitem__)
    assert fill_of(ops[hottest]).lower() == COST_COLORS["light"][-1]
    assert _close(_shown(ops[hottest], _TIME, _NS), truth[hottest]), _texts(ops[hottest])
    for name, ns in truth.items():  # every op that ran says its own time
        assert _close(_shown(ops[name], _TIME, _NS), ns), (name, _texts(ops[name]), ns)
    _assert_value_scale(svg, ops, truth, sum(_truth(
        costs_tf1["metadata"]["train"], set(graphviz_tb.load(logdir).model.graph)).values()))


def test_group_totals_are_the_sums_of_their_ops(costs_tf1: dict[str, Any],
                                                tmp_path: Path) -> None:
    logdir = costs_tf1["logdir"]
    graph = graphviz_tb.load(logdir, run_metadata="train")
    svg = _render(["render", str(logdir), "--color-by", "compute-time", "--run-metadata",
                   "train"], tmp_path / "groups.svg")
    truth = _truth(costs_tf1["metadata"]["train"], set(graph.model.graph))
    groups = node_groups(svg, "group")
    checked = 0
    opened = 0
    for name, g in groups.items():
        # An op named like its scope is drawn inside it.
        inside = [v for op, v in truth.items() if op == name or op.startswith(name + "/")]
        if "expanded" in classes(g):  # an open group keeps its total in its frame's title
            found = _TIME.search(_texts(g)[0]) if inside else None
            assert found is None or _close(float(found.group(1)) * _NS[found.group(2)],
                                           sum(inside)), (name, _texts(g)[0])
            opened += found is not None
            continue
        if not inside:
            assert _shown(g, _TIME, _NS) is None, f"{name} ran nothing but shows a time"
            continue
        assert _close(_shown(g, _TIME, _NS), sum(inside)), (name, _texts(g), sum(inside))
        checked += 1
    assert checked >= 3, sorted(groups)
    assert opened >= 1


def test_memory_colours_by_allocated_bytes(costs_tf1: dict[str, Any], tmp_path: Path) -> None:
    svg = _render(["render", str(costs_tf1["logdir"]), "--color-by", "memory",
                   "--run-metadata", "train", "--expand-all"], tmp_path / "memory.svg")
    ops = node_groups(svg, "op")
    truth = {k: v for k, v in _truth(costs_tf1["metadata"]["train"], set(ops),
                                     memory=True).items() if v}
    assert truth, "the training step allocated memory"
    biggest = max(truth, key=truth.__getitem__)
    assert fill_of(ops[biggest]).lower() == COST_COLORS["light"][-1]
    for name, size in truth.items():
        assert _close(_shown(ops[name], _BYTES, _B), size), (name, _texts(ops[name]), size)


def test_run_metadata_picks_the_step(costs_tf1: dict[str, Any], tmp_path: Path) -> None:
    """The forward step never ran the gradients: with it, their boxes have no record."""
    args = ["render", str(costs_tf1["logdir"]), "--color-by", "compute-time", "--depth", "1"]
    forward = node_groups(_render([*args, "--run-metadata", "forward"], tmp_path / "f.svg"),
                          "group")
    train = node_groups(_render([*args, "--run-metadata", "train"], tmp_path / "t.svg"),
                        "group")
    assert _shown(forward["gradients"], _TIME, _NS) is None
    assert _shown(train["gradients"], _TIME, _NS) is not None
    default = node_groups(_render(args, tmp_path / "d.svg"), "group")  # the latest: train
    assert fill_of(default["gradients"]) == fill_of(train["gradients"])


def test_cost_pictures_tell_the_truth(costs_tf1: dict[str, Any]) -> None:
    """The picture oracle holds for pictures coloured by cost (labels one line longer)."""
    graph = graphviz_tb.load(costs_tf1["logdir"], run_metadata="train")
    for variant in ({"depth": 1}, {"depth": 2}, {"expand_all": True}):
        for mode in ("compute-time", "memory"):
            options = RenderOptions(color_by=mode, **variant)
            pic = read_svg(graph.render(options=options),
                           graph.render(format="dot", options=options))
            report = check_picture(pic, graph.hierarchy(options), structure=False)
            assert report, report.summary()


def test_output_is_deterministic(costs_tf1: dict[str, Any]) -> None:
    graph = graphviz_tb.load(costs_tf1["logdir"])
    assert graph.render(color_by="compute-time") == graph.render(color_by="compute-time")


# --------------------------------------------------------------------------- reading


def test_function_body_ops_get_the_stats_of_their_own_call(costs_tf1: dict[str, Any]) -> None:
    """One function called twice ran on its own: its body ops are recorded under their names
    inside the function, and each execution goes to the call whose run encloses it."""
    graph = graphviz_tb.load(costs_tf1["graph"], run_metadata=str(costs_tf1["run_metadata"]))
    costs = graph.costs()
    assert costs is not None
    ops = costs.current.ops
    windows = {}
    for dev in costs_tf1["metadata"]["calls"].step_stats.dev_stats:
        for s in dev.node_stats:
            if s.node_name in ("PartitionedCall", "PartitionedCall_1"):
                windows[s.node_name] = (s.all_start_nanos, s.all_start_nanos + s.all_end_rel_nanos)
    assert len(windows) == 2
    for call, (start, end) in windows.items():
        matmul = ops[f"{call}/inner/MatMul"]
        assert matmul.runs == 1
        assert matmul.start is not None
        step_start = min(s.all_start_nanos for d in costs_tf1["metadata"]["calls"]
                         .step_stats.dev_stats for s in d.node_stats)
        assert start <= matmul.start + step_start <= end
        body = sum(c.time for n, c in ops.items() if n.startswith(call + "/"))
        # The call keeps only what its body did not spend: the group never counts twice.
        assert ops[call].time + body <= ops[call].wall + sum(
            c.wall - c.time for n, c in ops.items() if n.startswith(call + "/"))
        assert ops[call].time == max(0, ops[call].wall - sum(
            c.wall for n, c in ops.items() if n.startswith(call + "/")))


def test_run_metadata_and_step_stats_files_read_alike(costs_tf1: dict[str, Any],
                                                      tmp_path: Path) -> None:
    values = []
    for name in ("run_metadata", "step_stats"):
        graph = graphviz_tb.load(costs_tf1["graph"], run_metadata=str(costs_tf1[name]))
        costs = graph.costs()
        assert costs is not None
        values.append({n: (c.time, c.allocated) for n, c in costs.current.ops.items()})
    assert values[0] == values[1] and len(values[0]) > 8
    svg = _render(["render", str(costs_tf1["graph"]), "--color-by", "compute-time",
                   "--run-metadata", str(costs_tf1["step_stats"])], tmp_path / "calls.svg")
    assert any(_shown(g, _TIME, _NS) for g in node_groups(svg).values())


def test_info_lists_the_run_metadata(costs_tf1: dict[str, Any],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(costs_tf1["logdir"]), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    tags = [(c["tag"], c["step"], c["origin"]) for c in info["run_metadata"]]
    assert tags == [("forward", 1, "event:run_metadata"), ("train", 2, "event:run_metadata")]
    assert main(["info", str(costs_tf1["logdir"])]) == 0
    text = capsys.readouterr().out
    assert "recorded costs: 2" in text and "tag forward" in text and "tag train" in text


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("args, message", [
    (["--color-by", "compute-time", "--run-metadata", "nope"],
     "no run metadata 'nope' for run 'train'"),
    (["--color-by", "memory", "--run-metadata", "{junk}"],
     "is not a RunMetadata or StepStats"),
])
def test_a_bad_choice_is_one_clear_line(costs_tf1: dict[str, Any], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str], args: list[str],
                                        message: str) -> None:
    out = tmp_path / "never.svg"
    junk = tmp_path / "junk.pb"
    junk.write_bytes(b"\x0a\x03abc not step stats")
    args = [a.format(junk=junk) for a in args]
    assert main(["render", str(costs_tf1["logdir"]), *args, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_colouring_by_cost_without_costs_says_how_to_record_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb"
    assert main(["render", str(sample), "--color-by", "compute-time", "-o",
                 str(tmp_path / "x.svg")]) == 1
    err = capsys.readouterr().err
    assert "needs recorded costs" in err and "FULL_TRACE" in err
    assert not (tmp_path / "x.svg").exists()


# --------------------------------------------------------------------------- TF2 profiler


def _xprof() -> None:
    """xprof reads TF2 profiler captures; CI installs it (the [profile] extra)."""
    import os

    if not os.environ.get("CI"):
        pytest.importorskip("xprof")


def test_keras_profile_batch_colours_the_traced_step(keras_profile: Path,
                                                     tmp_path: Path) -> None:
    """Keras' callback with ``profile_batch`` writes the traced training step and a profiler
    capture; the capture's op times land on the step's ops, inside the function body."""
    _xprof()
    graph = graphviz_tb.load(keras_profile)
    costs = graph.costs()
    assert costs is not None and costs.current.source.origin == "profile"
    dense = [n for n in costs.current.ops if "/seq_1/dense" in n or "/seq/dense" in n]
    assert dense, sorted(costs.current.ops)[:20]
    assert all(graph.model.graph.nodes[n].get("function") for n in dense)
    svg = _render(["render", str(keras_profile), "--color-by", "compute-time", "--expand-all"],
                  tmp_path / "keras.svg")
    ops = node_groups(svg, "op")
    timed = {n: c.time for n, c in costs.current.ops.items() if n in ops}
    hottest = max(timed, key=timed.__getitem__)
    assert fill_of(ops[hottest]).lower() == COST_COLORS["light"][-1]
    assert _close(_shown(ops[hottest], _TIME, _NS), timed[hottest])
    _assert_value_scale(svg, ops, timed, sum(costs.current.ops[n].time
                                             for n in costs.current.ops))


def _assert_value_scale(svg: ET.Element, ops: dict[str, ET.Element], truth: dict[str, int],
                        total: int) -> None:
    """What every cost picture's legend promises: ops ten times apart at least two steps
    apart (or the cheaper in the coolest step); the step's total with its unit; every op
    without a record in the legend's no-record colour, unlike any step."""
    step = {name: COST_COLORS["light"].index(fill_of(ops[name]).lower()) for name in truth}
    for a in truth:
        for b in truth:
            if truth[a] >= 10 * truth[b] > 0:
                assert step[a] - step[b] >= 2 or step[b] == 0, (a, b, step[a], step[b])
    legend_g = node_groups(svg)["legend"]
    legend = _texts(legend_g)
    assert legend[0] == "colour = compute time, log scale (×3.2 a step)"
    shown = next(t for t in legend if t.startswith("step total: ")).split()
    assert _close(float(shown[2]) * _NS[shown[3]], total)
    unrecorded = [g for name, g in ops.items() if _shown(g, _TIME, _NS) is None]
    assert unrecorded and {fill_of(g).lower() for g in unrecorded} == {NO_RECORD["light"]}
    assert NO_RECORD["light"] in _swatches(legend_g)
    assert NO_RECORD["light"] not in COST_COLORS["light"]


def test_a_profiler_capture_has_no_memory_to_colour_by(
        keras_profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _xprof()
    assert main(["render", str(keras_profile), "--color-by", "memory", "-o",
                 str(tmp_path / "m.svg")]) == 1
    assert "holds timings only" in capsys.readouterr().err
