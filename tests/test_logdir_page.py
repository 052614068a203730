"""A whole logdir in one viewer page: every graph (op graphs, Keras' conceptual graph, PyTorch's
graph, run metadata), a picker that switches between them and keeps each one's URL state, and a
graph logged by several runs embedded once.  Driven in headless Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from test_html import Page, _bundle_or_fail

import graphviz_tb
from graphviz_tb.cli import main
from graphviz_tb.write.page import page_json

pytestmark = [pytest.mark.browser, pytest.mark.tensorflow, pytest.mark.dot]

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@pytest.fixture(scope="module")
def logdir(costs_tf1: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs written by Keras (conceptual graph), PyTorch, a TF2 trace, and a TF1 FileWriter
    with run metadata, the last one twice (``tf1`` and ``tf1_again``: the same graphs)."""
    root = tmp_path_factory.mktemp("logdir_page") / "logs"
    for name in ("keras", "pytorch", "trace"):
        shutil.copytree(SAMPLES / "logs" / name, root / name)
    shutil.copytree(costs_tf1["logdir"] / "train", root / "tf1")
    shutil.copytree(costs_tf1["logdir"] / "train", root / "tf1_again")
    return root


@pytest.fixture(scope="module")
def page_file(logdir: Path) -> Path:
    _bundle_or_fail()
    out = logdir.parent / "logs.html"
    assert main(["render", str(logdir), "-o", str(out)]) == 0
    return out


def _embedded(path: Path) -> dict[str, Any]:
    return json.loads(page_json(path.read_text(encoding="utf-8")))


def test_the_page_holds_every_graph_once(logdir: Path, page_file: Path) -> None:
    data = _embedded(page_file)
    discovery = graphviz_tb.load(logdir).discovery
    assert [p["name"] for p in data["pages"]] == [g.name for g in discovery.graphs]
    runs = {p["run"] for p in data["pages"]}
    assert runs == {"keras/train", "pytorch", "trace", "tf1", "tf1_again"}
    by_name = {p["name"]: p["graph"] for p in data["pages"]}
    twins = [(n, n.replace("tf1 ·", "tf1_again ·", 1)) for n in by_name if n.startswith("tf1 ·")]
    assert twins and all(by_name[a] == by_name[b] for a, b in twins), "shared graphs once"
    content = {g.name: g.load().SerializeToString(deterministic=True) for g in discovery.graphs}
    assert len(data["graphs"]) == len(set(content.values())) < len(data["pages"])
    for a in by_name:  # same graph, same embedded copy; different graphs, different copies
        for b in by_name:
            assert (by_name[a] == by_name[b]) == (content[a] == content[b]), (a, b)
    kinds = {g["options"]["title"].split(" · ")[1] for g in data["graphs"]}
    assert {"keras/train", "pytorch", "trace"} <= kinds and kinds & {"tf1", "tf1_again"}
    # The TF1 graphs carry the run metadata of both runs that logged them.
    tf1 = data["graphs"][by_name[twins[0][0]]]
    assert {s["run"] for s in tf1["costs"]["steps"]} == {"tf1", "tf1_again"}


def test_switching_graphs_follows_in_the_view_and_the_url(browser: Any,
                                                          page_file: Path) -> None:
    page = Page(browser, page_file)
    try:
        api = "window.tbgraph"
        pages = page.js(f"{api}.pages()")
        first = page.js(f"{api}.page()")
        pytorch = next(p["name"] for p in pages if p["run"] == "pytorch")
        keras = next(p["name"] for p in pages if p["run"] == "keras/train")
        before = set(page.visible())
        picker = page.page.locator("select[aria-label=graph]")
        picker.select_option(label=pytorch)
        page.wait(f"{api}.ready && {api}.page() === {pytorch!r}")
        shown = set(page.visible())
        assert shown != before and "TinyMLP" in shown, shown
        assert page.page.title().endswith(pytorch)
        hash_ = page.wait("location.hash.includes('graph=') && location.hash")
        assert parse_qs(hash_[1:])["graph"] == [pytorch]
        # Each graph keeps its own view: open a group, look at another graph, come back.
        group = page.js(f"{api}.boxes().find((b) => !b.open && "
                        f"window.tbgraph.dot(b.name) !== null)?.name")
        assert group, "the PyTorch graph has a group to open"
        page.js(f"{api}.expand({group!r})")
        assert group in parse_qs(page.js(f"{api}.state()"))["x"]
        picker.select_option(label=keras)
        page.wait(f"{api}.ready && {api}.page() === {keras!r}")
        assert "x" not in parse_qs(page.js(f"{api}.state()")), "the Keras graph has its own view"
        picker.select_option(label=pytorch)
        page.wait(f"{api}.ready && {api}.page() === {pytorch!r}")
        assert group in parse_qs(page.js(f"{api}.state()"))["x"]
        assert pytorch != first
    finally:
        page.close()


def test_a_link_reopens_its_graph_and_view(browser: Any, page_file: Path) -> None:
    page = Page(browser, page_file)
    try:
        keras = next(p["name"] for p in page.js("window.tbgraph.pages()")
                     if p["run"] == "keras/train")
        page.page.locator("select[aria-label=graph]").select_option(label=keras)
        page.wait(f"window.tbgraph.ready && window.tbgraph.page() === {keras!r}")
        page.js("window.tbgraph.setTheme('dark')")
        state = page.js("window.tbgraph.state()")
    finally:
        page.close()
    again = Page(browser, page_file, "#" + state)
    try:
        assert again.js("window.tbgraph.page()") == keras
        assert again.js("document.querySelector('select[aria-label=graph]').selectedOptions[0]"
                        ".textContent") == keras
        assert again.js("document.documentElement.getAttribute('data-theme')") == "dark"
    finally:
        again.close()


def test_static_formats_still_draw_one_graph(logdir: Path, tmp_path: Path) -> None:
    out = tmp_path / "pytorch.svg"
    assert main(["render", str(logdir), "--run", "pytorch", "-o", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    assert "TinyMLP" in svg and "dense" not in svg.lower()
    single = tmp_path / "one.html"
    assert main(["render", str(logdir), "--graph", "0", "-o", str(single)]) == 0
    assert "pages" not in _embedded(single)
