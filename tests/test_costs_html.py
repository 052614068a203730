"""Costs in the interactive viewer, driven in real headless Chromium: colour by compute time
and memory, the step picker, the details panel and the "top ops" list, on run metadata
TensorFlow recorded (see the ``costs_tf1`` fixture)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from svgparse import fill_of, node_groups, parse
from test_html import Page, _bundle_or_fail

import graphviz_tb
from graphviz_tb.style import COST_COLORS, NO_RECORD, UNIQUE_COLOR

pytestmark = [pytest.mark.browser, pytest.mark.tensorflow, pytest.mark.dot]

_REAL_DEVICE = re.compile(r"device:[^:/]+:\d+$")


@pytest.fixture(scope="module")
def page_file(costs_tf1: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    _bundle_or_fail()
    out = tmp_path_factory.mktemp("costs_html") / "costs.html"
    # The top level, collapsed: the tests read the colour of the `gradients` box.
    graphviz_tb.load(costs_tf1["logdir"]).render(out, depth=1)
    return out


@pytest.fixture
def page(browser: Any, page_file: Path) -> Any:
    opened = Page(browser, page_file)
    yield opened
    opened.close()


def _wall(run_metadata: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for dev in run_metadata.step_stats.dev_stats:
        if _REAL_DEVICE.search(dev.device):
            for s in dev.node_stats:
                out[s.node_name] = out.get(s.node_name, 0) + (
                    s.all_end_rel_nanos or s.all_end_rel_micros * 1000)
    return out


def test_colour_by_compute_time_matches_the_static_picture(page: Page,
                                                           costs_tf1: dict[str, Any]) -> None:
    api = "window.tbgraph"
    assert page.js(f"{api}.colorModes()")[-3:] == ["compute-time", "memory", "none"]
    steps = page.js(f"{api}.steps()")
    assert [s.rsplit(" · ", 1)[-1] for s in steps] == ["forward", "train"]
    assert page.js(f"{api}.step()") == steps[1], "the latest step is shown first"
    assert page.is_hidden_top_ops()
    page.js(f"{api}.setColorBy('compute-time')")
    fills = page.js(f"{api}.fills()")
    graph = graphviz_tb.load(costs_tf1["logdir"])
    static = node_groups(parse(graph.render(color_by="compute-time", depth=1)))
    assert fills and {n: f.lower() for n, f in fills.items()} == {
        n: fill_of(g).lower() for n, g in static.items() if n in fills}
    assert COST_COLORS["light"][-1] in fills.values()
    assert page.js("document.querySelector('.legend h3').textContent") == \
        "colour = compute time, log scale (×3.2 a step)"
    # The legend says the step's total, as the static picture does.
    legend = page.js("document.querySelector('.legend').textContent")
    static_legend = " ".join("".join(t.itertext()) for t in static["legend"].iter(
        "{http://www.w3.org/2000/svg}text"))
    total = re.search(r"step total: [\d.]+ \S+", static_legend)
    assert total and total.group(0) in legend
    # An open group's frame keeps its total in its title, as in the static picture.
    assert page.js(f"{api}.expand('train')") is not False
    titles = page.js("[...document.querySelectorAll('g.group.expanded')].map("
                     "(g) => g.querySelector('text').textContent)")
    assert any(re.search(r" · [\d.]+ (ns|µs|ms|s)( · <?[\d.]+ %)?$", t) for t in titles), titles


def test_top_ops_are_sorted_by_cost_and_jump_to_the_node(page: Page,
                                                         costs_tf1: dict[str, Any]) -> None:
    page.js("window.tbgraph.setColorBy('compute-time')")
    names = set(graphviz_tb.load(costs_tf1["logdir"]).model.graph)
    truth = {n: t for n, t in _wall(costs_tf1["metadata"]["train"]).items() if n in names}
    top = page.js("window.tbgraph.topOps()")
    assert top[0] == max(truth, key=truth.__getitem__)
    assert [truth[n] for n in top] == sorted((truth[n] for n in top), reverse=True)
    rows = page.page.locator(".topops li button")
    assert rows.count() == len(top)
    assert rows.nth(0).get_attribute("data-name") == top[0]
    assert top[0] not in page.visible(), "the hottest op starts inside a collapsed group"
    rows.nth(0).click()
    page.wait(f"window.tbgraph.visibleNodes().includes({top[0]!r})")
    page.wait("!document.querySelector('.details').classList.contains('hidden')")
    details = page.js("document.querySelector('.details').textContent")
    assert top[0] in details and "compute time" in details and "allocated" in details
    assert "s=" + top[0].replace("/", "%2F") in page.wait(
        "window.tbgraph.state().includes('s=') && window.tbgraph.state()")


def test_the_step_picker_switches_costs_and_the_link_keeps_it(page: Page, browser: Any,
                                                              page_file: Path) -> None:
    api = "window.tbgraph"
    page.js(f"{api}.setColorBy('compute-time')")
    assert page.js(f"{api}.fills()")["gradients"].lower() != UNIQUE_COLOR["light"]
    picker = page.page.locator("select[aria-label=step]")
    assert picker.is_visible()
    picker.select_option(index=0)  # the forward step, which ran no gradient
    assert page.js(f"{api}.step()").endswith("forward")
    assert page.js(f"{api}.fills()")["gradients"].lower() == NO_RECORD["light"]
    page.js(f"{api}.setColorBy('memory')")
    state = page.wait(f"{api}.state().includes('step=') && {api}.state()")
    assert "color=memory" in state
    again = Page(browser, page_file, "#" + state)
    try:
        assert again.js(f"{api}.step()").endswith("forward")
        assert again.js("document.querySelector('select[aria-label=step]').value") == "0"
        assert again.js("document.querySelector('.legend h3').textContent") == \
            "colour = memory, log scale (×3.2 a step)"
        assert not again.is_hidden_top_ops()
    finally:
        again.close()


def test_a_page_without_costs_offers_no_cost_mode(browser: Any, tmp_path: Path) -> None:
    _bundle_or_fail()
    sample = Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb"
    out = tmp_path / "plain.html"
    graphviz_tb.load(sample).render(out)
    plain = Page(browser, out)
    try:
        assert "compute-time" not in plain.js("window.tbgraph.colorModes()")
        assert plain.js("window.tbgraph.steps()") == []
        assert not plain.page.locator("select[aria-label=step]").is_visible()
    finally:
        plain.close()


def test_top_ops_show_a_name_too_long_for_its_row_whole(page: Page) -> None:
    """A name too long for the list wraps, after a ``/``, and is seen whole: its last letters
    (which tell ``…Conv2DBackpropInput`` from ``…Conv2DBackpropFilter``) in view, nothing
    hidden past the row's edge."""
    page.js("window.tbgraph.setColorBy('compute-time')")
    rows = page.js("""[...document.querySelectorAll('.topops .name')].map((e) => {
        const box = e.getBoundingClientRect(), r = document.createRange();
        r.selectNodeContents(e);
        const lines = new Set([...r.getClientRects()].map((c) => Math.round(c.top)));
        const texts = [...e.firstChild.childNodes].filter((n) => n.nodeType === 3);
        const last = texts[texts.length - 1];
        r.setStart(last, last.length - 1);
        r.setEnd(last, last.length);
        const end = r.getBoundingClientRect();
        return {text: e.textContent, lines: lines.size, hidden: e.scrollWidth > e.clientWidth + 1,
                endInside: end.left >= box.left - 0.5 && end.right <= box.right + 0.5
                           && end.bottom <= box.bottom + 0.5,
                brokenAt: texts.slice(0, -1).every((t) => t.data.endsWith("/"))};
      })""")
    assert any(r["lines"] > 1 for r in rows), "the sample has names too long for one line"
    assert [r["text"] for r in rows if r["hidden"] or not r["endInside"]] == []
    assert all(r["brokenAt"] for r in rows)


def test_top_ops_rows_read_differently(page: Page) -> None:
    """Each row, as far as it can be seen, names another op: a name cut at its start to fit
    the row must not lose the part that tells it from another row's (two rows read
    ``…2D_grad/Conv2DBackpropFilter``, the gradients of conv1 and of conv2)."""
    page.js("window.tbgraph.setColorBy('compute-time')")
    seen = page.js("""[...document.querySelectorAll('.topops .name')].map((e) => {
        const box = e.getBoundingClientRect(), r = document.createRange();
        let shown = "";
        for (const text of e.firstChild.childNodes) {
          for (let k = 0; text.nodeType === 3 && k < text.length; k++) {
            r.setStart(text, k);
            r.setEnd(text, k + 1);
            const c = r.getBoundingClientRect();
            if (c.left >= box.left - 0.5 && c.right <= box.right + 0.5
                && c.top >= box.top - 0.5 && c.bottom <= box.bottom + 0.5) shown += text.data[k];
          }
        }
        return shown;
      })""")
    names = page.js("[...document.querySelectorAll('.topops li button')]"
                    ".map((b) => b.dataset.name)")
    assert len(seen) == len(names) > 10
    assert len(set(seen)) == len(seen), sorted(s for s in seen if seen.count(s) > 1)


_COST_LINE = re.compile(r"^compute time: ([\d.]+) (ns|µs|ms|s) · (<)?([\d.]+) %$")
_UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def test_the_legend_total_and_every_share_are_the_recorded_sums(
        page: Page, costs_tf1: dict[str, Any]) -> None:
    """The viewer's "step total" is the sum of every time TensorFlow recorded for an op of
    the graph, and each box's share is its ops' sum over it, both read from TensorFlow's own
    RunMetadata, not from our own sums.  (With the viewer's sums dropping the last recorded
    op, its step total read 1 ms for 994 µs of records and the shares followed.)"""
    page.js("window.tbgraph.setColorBy('compute-time')")
    graph = graphviz_tb.load(costs_tf1["logdir"])
    names = set(graph.model.graph)
    truth = {n: t for n, t in _wall(costs_tf1["metadata"]["train"]).items() if n in names}
    total = sum(truth.values())
    legend = page.js("document.querySelector('.legend').textContent")
    shown = re.search(r"step total: ([\d.]+) (ns|µs|ms|s)", legend)
    assert shown and abs(float(shown.group(1)) * _UNITS[shown.group(2)] - total) \
        <= 0.0051 * total, (legend, total)
    tips = page.js("Object.fromEntries([...document.querySelectorAll('g.node')].map("
                   "(g) => [g.dataset.node, g.querySelector(':scope > title').textContent]))")
    checked = 0
    for name, tip in tips.items():
        line = next((x for x in tip.splitlines() if x.startswith("compute time: ")), None)
        inside = sum(t for op, t in truth.items() if op == name or op.startswith(name + "/"))
        if line is None or line.endswith("no record"):
            assert inside == 0, (name, tip)
            continue
        found = _COST_LINE.match(line)
        assert found, line
        share = 100 * inside / total
        assert abs(float(found.group(4)) - share) <= (0.51 if share >= 10 else 0.051) or (
            found.group(3) and share < 0.1), (name, line, share)
        checked += 1
    assert checked >= 5, tips
