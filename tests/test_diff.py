"""``tbgraph diff``: what changed between two versions of a model.

Every pair is made by TensorFlow (see the ``diff_pairs`` fixture): the same model before and
after one change a person makes in a pull request.  The tests read the diff as a script does
(JSON, exit status) and as a person does (the summary, the merged picture's colours and
legend, parsed from the SVG).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from picture import check_picture, read_svg
from svgparse import classes, fill_of, node_groups, parse, texts

import graphviz_tb
from graphviz_tb.style import DIFF_COLORS

pytestmark = [pytest.mark.tensorflow, pytest.mark.dot]


def _diff(pairs: dict[str, tuple[Path, Path]], name: str) -> graphviz_tb.Diff:
    return graphviz_tb.diff(*pairs[name])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphviz_tb", "diff", *args],
                          capture_output=True, text=True, check=False)


def test_an_inserted_layer_reads_as_one_layer_inserted(diff_pairs: dict) -> None:
    """Keras renumbers every layer after the inserted one (dense_2 becomes dense_3): that is
    one layer added and the rest renamed; the edge it cut in is reported, and the op it now
    feeds as changed (its input rewired)."""
    d = _diff(diff_pairs, "inserted_dense")
    r = d.result
    assert r.removed == []
    assert len(r.changed) == 1 and len(r.changed[0].what) == 1
    assert r.changed[0].what[0].startswith("input 0: ")
    # The edge from the layer before into the one after is gone; two join the new layer.
    [cut] = r.edges_removed
    assert (cut.input, cut.kind) == (0, "data") and cut.dst == r.changed[0].old
    assert len(r.edges_added) == 2
    assert {e.dst for e in r.edges_added} & set(r.added)  # into the new layer
    assert {e.src for e in r.edges_added} & set(r.added)  # and out of it
    assert r.changed[0].new in {e.dst for e in r.edges_added}
    layers = {re.sub(r"_\d+$", "", n.split("/")[1]) for n in r.added}
    assert len(layers) == 1 and len(r.added) >= 5, r.added  # one Dense layer's ops
    assert r.renamed and all(re.sub(r"dense_(\d+)", lambda m: str(int(m.group(1)) + 1), o)
                             .replace("dense_", "") == n.replace("dense_", "")
                             or "dense" in o for o, n in r.renamed)
    assert d.summary()[1].startswith(f"{len(r.added)} ops added under ")


def test_a_changed_padding_is_one_attribute_of_one_op(diff_pairs: dict) -> None:
    r = _diff(diff_pairs, "padding").result
    assert [c.what for c in r.changed] == [["attr padding: SAME -> VALID"]]
    assert r.changed[0].old == r.changed[0].new and r.changed[0].new.endswith("convolution")
    assert r.added == r.removed == []


def test_a_removed_control_dependency(diff_pairs: dict) -> None:
    r = _diff(diff_pairs, "control").result
    assert [c.new for c in r.changed] == ["checked"]
    assert r.changed[0].what[0].startswith("control input ^check/") and \
        r.changed[0].what[0].endswith(" removed")
    assert [(e.dst, e.kind, e.input) for e in r.edges_removed] == [("checked", "control", None)]


def test_a_changed_input_shape(diff_pairs: dict) -> None:
    r = _diff(diff_pairs, "input_shape").result
    images = next(c for c in r.changed if c.new == "images")
    assert "attr shape: [None, 28, 28, 1] -> [None, 32, 32, 1]" in images.what
    # The recorded output shapes after it changed too, and say so.
    assert any(w.startswith("output: float32 ?×28×28×1 -> float32 ?×32×32×1")
               for c in r.changed for w in c.what)


def test_a_swapped_activation(diff_pairs: dict) -> None:
    d = _diff(diff_pairs, "activation")
    r = d.result
    assert [(c.old.rsplit("/", 1)[-1], c.new.rsplit("/", 1)[-1], c.what) for c in r.changed] \
        == [("Relu", "Tanh", ["op: Relu -> Tanh"])]
    # On paper: the changed op's box says what it was, in visible text.
    ops = node_groups(parse(d.render()), "op")
    assert "Tanh · was Relu" in texts(ops[r.changed[0].new])


def test_two_traces_of_one_model_are_equal(diff_pairs: dict) -> None:
    """Traced twice, the function and captured-variable names carry other numbers."""
    d = _diff(diff_pairs, "identical")
    assert d.equal
    proc = _cli(*map(str, diff_pairs["identical"]), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["equal"] is True
    assert data["ops"] == {"added": [], "removed": [], "changed": [], "renamed": data["ops"][
        "renamed"]} and data["groups"] == []


def test_the_json_reports_a_rewired_edge_as_the_summary_does(diff_pairs: dict) -> None:
    """Inserting a layer cuts one edge and adds two: the JSON a CI step reads says so, edge by
    edge with its ends (op and output, consumer and input slot), and carries its format's
    version; the summary counts and lists the same edges."""
    d = _diff(diff_pairs, "inserted_dense")
    proc = _cli(*map(str, diff_pairs["inserted_dense"]), "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["format"], data["version"]) == ("tbgraph-diff", 2)
    [removed] = data["edges"]["removed"]
    assert set(removed) == {"src", "output", "dst", "input", "kind"}
    assert (removed["output"], removed["input"], removed["kind"]) == (0, 0, "data")
    assert len(data["edges"]["added"]) == 2
    [changed] = data["ops"]["changed"]
    assert changed["what"] == [f"input 0: {removed['src']} -> {data['edges']['added'][0]['src']}"
                               if data["edges"]["added"][0]["dst"] == changed["new"] else
                               f"input 0: {removed['src']} -> {data['edges']['added'][1]['src']}"]
    summary = _cli(*map(str, diff_pairs["inserted_dense"])).stdout
    assert "edges: 2 added, 1 removed" in summary
    assert f"data edge removed: {removed['src']} -> {removed['dst']}" in summary
    assert d.result.to_json()["edges"] == data["edges"]


def test_json_for_ci_exits_1_and_names_every_change(diff_pairs: dict) -> None:
    proc = _cli(*map(str, diff_pairs["padding"]), "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["equal"] is False
    assert set(data["ops"]) == {"added", "removed", "changed", "renamed"}
    [changed] = data["ops"]["changed"]
    assert changed["what"] == ["attr padding: SAME -> VALID"]
    assert changed["old"] == changed["new"]
    assert data["groups"] and all({"name", "added", "removed", "changed"} <= set(g)
                                  for g in data["groups"])
    assert any(g["changed"] == 1 and g["name"].endswith("conv_1") for g in data["groups"])


def test_the_summary_says_what_changed_in_words(diff_pairs: dict) -> None:
    proc = _cli(*map(str, diff_pairs["padding"]))
    assert proc.returncode == 1
    assert "changed cnn_1/conv_1/convolution: attr padding: SAME -> VALID" in proc.stdout


def test_the_merged_picture_colours_what_changed(diff_pairs: dict, tmp_path: Path) -> None:
    """The layer added one green box; the op it now feeds amber (its input rewired);
    unchanged grey; the legend counts them; the picture tells the truth (the oracle)."""
    d = _diff(diff_pairs, "inserted_dense")
    out = tmp_path / "diff.svg"
    proc = _cli(*map(str, diff_pairs["inserted_dense"]), "-o", str(out))
    assert proc.returncode == 1 and out.exists(), proc.stderr
    svg = parse(out.read_text())
    ops = node_groups(svg, "op")
    [rewired] = [c.new for c in d.result.changed]
    assert fill_of(ops[rewired]).lower() == DIFF_COLORS["light"]["changed"]
    unchanged = [g for n, g in ops.items() if n not in d.result.added and n != rewired]
    assert all(fill_of(g).lower() == DIFF_COLORS["light"]["unchanged"] for g in unchanged)
    legend = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert f"added: {len(d.result.added)} ops" in legend
    assert "removed: 0 ops" in legend and "changed: 1 op" in legend
    assert "edge added" in legend and "edge removed" in legend  # the edges' colours, too
    # The layer wholly added is one closed box, saying how many ops it adds; the op it now
    # feeds says its input was rewired, beside its box, on paper.
    groups = node_groups(svg, "group")
    layer = d.result.added[0].split("/")[0] + "/" + d.result.added[0].split("/")[1]
    assert "expanded" not in classes(groups[layer])
    assert not {n for n in d.result.added if n in ops}
    assert fill_of(groups[layer]).lower() == DIFF_COLORS["light"]["added"]
    assert f"{len(d.result.added)} ops · +{len(d.result.added)}" in texts(groups[layer])
    assert "MatMul · input 0 rewired" in texts(ops[rewired])
    options = graphviz_tb.RenderOptions(color_by="diff")
    pic = read_svg(out.read_text(), d.render(format="dot", options=options))
    report = check_picture(pic, d.graph.hierarchy(options), structure=False)
    assert report, report.summary()


def test_removed_ops_are_drawn_dashed_and_red(diff_pairs: dict) -> None:
    """Compared the other way round, the inserted layer is removed: red, dashed."""
    old, new = diff_pairs["inserted_dense"]
    d = graphviz_tb.diff(new, old)
    # The layer wholly removed is one closed box unless asked otherwise.
    groups = node_groups(parse(d.render()), "group")
    [layer] = [g for n, g in groups.items() if n.endswith("(removed)")]
    assert "expanded" not in classes(layer)
    assert fill_of(layer).lower() == DIFF_COLORS["light"]["removed"]
    svg = parse(d.render(options=graphviz_tb.RenderOptions(color_by="diff",
                                                          expand=("*(removed)",))))
    ops = node_groups(svg, "op")
    merged = d.graph.model.graph
    removed = [n for n, status in merged.nodes(data="diff") if status == "removed"]
    assert len(removed) == len(d.result.removed)
    # The layer is gone whole: it stays one group, beside the layer now holding its name.
    assert all(re.search(r"/dense_\d+_\d+ \(removed\)/", n) for n in removed), removed
    gone = [ops[n] for n in removed if n in ops]
    assert gone
    for g in gone:
        assert fill_of(g).lower() == DIFF_COLORS["light"]["removed"]
        outline = next(e for e in g.iter() if e.tag.endswith(("ellipse", "polygon", "path")))
        assert outline.get("stroke-dasharray"), "a removed op has a dashed outline"


@pytest.mark.parametrize("which", ["old", "new", "missing"])
def test_a_file_that_is_no_graph_is_one_line_and_status_2(tmp_path: Path, diff_pairs: dict,
                                                          which: str) -> None:
    """As diff(1) and cmp(1) do, trouble is status 2, not the 1 that means "they differ": a
    CI step that fails on any change tells a change from a file it could not read."""
    bad = tmp_path / "bad.pb"
    if which != "missing":
        bad.write_bytes(b"not a graph")
    good = str(diff_pairs["padding"][1])
    proc = _cli(*((good, str(bad)) if which == "new" else (str(bad), good)), "--json")
    assert proc.returncode == 2
    assert proc.stderr.startswith("tbgraph: error:") and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""


# --------------------------------------------------------------------------- the viewer


def test_the_page_marks_an_edge_added_or_removed_when_all_its_ops_edges_are(
        diff_pairs: dict, tmp_path: Path) -> None:
    """Each aggregated edge of a diff's page is added (or removed) exactly when every op edge
    it lists is, read from the page's own columns and the merged model."""
    from pages import page_names

    from graphviz_tb.write.page import page_data

    d = _diff(diff_pairs, "inserted_dense")
    path = tmp_path / "diff.html"
    d.render(path, options=graphviz_tb.RenderOptions(color_by="diff"))
    data = page_data(path.read_text(encoding="utf-8"))
    names = page_names(data)
    g = d.graph.hierarchy(graphviz_tb.RenderOptions(color_by="diff")).model.g
    statuses = data["diff"]["edges"]
    assert len(statuses) == len(data["ae"])
    start, seen = 0, set()
    for status, count in zip(statuses, data["ae"], strict=True):
        marks = {g.succ[names[data["es"][j]]][names[data["ed"][j]]][data["ei"][j]]
                 .get("diff", "unchanged") for j in range(start, start + count)}
        start += count
        expected = {"added": 1, "removed": 2}.get(marks.pop(), 0) if len(marks) == 1 else 0
        assert status == expected, (marks, status)
        seen.add(status)
    assert {1, 2} <= seen  # the page shows the edges the layer added and the one it cut


@pytest.mark.browser
def test_the_viewer_lists_changes_and_shows_old_beside_new(diff_pairs: dict, browser: object,
                                                           tmp_path: Path) -> None:
    """The page opens coloured by what changed, lists the change, and a click on it selects
    the op, whose details put its old attributes beside its new ones; the version switch
    hides what only the other version has; the picture tells the truth (the oracle)."""
    from picture import DOM_SCRIPT, read_dom
    from test_html import Page

    d = _diff(diff_pairs, "padding")
    page_path = tmp_path / "diff.html"
    d.render(page_path)
    page = Page(browser, page_path)
    try:
        api = "window.tbgraph"
        [changed] = d.result.changed
        assert page.js(f"{api}.changes()") == [changed.new]
        assert page.js("document.querySelector('select[aria-label=\"colour by\"]').value") == \
            "diff"
        page.page.locator("nav.changes button.link").first.click()
        page.wait(f"{api}.state().includes('s=')")
        details = page.page.locator("aside.details").inner_text()
        assert "attr padding: SAME -> VALID" in details
        row = page.page.locator("table.attrs.diff tr.differs", has_text="padding")
        assert row.count() == 1 and "SAME" in row.inner_text() and "VALID" in row.inner_text()
        fill = page.js(f"document.querySelector('g.op[data-node=\"{changed.new}\"] .shape')"
                       ".getAttribute('fill')")
        assert fill.lower() == DIFF_COLORS["light"]["changed"]
        options = graphviz_tb.RenderOptions(color_by="diff")
        report = check_picture(read_dom(page.js(DOM_SCRIPT)), d.graph.hierarchy(options),
                               structure=False)
        assert report, report.summary()
    finally:
        page.close()

    d = _diff(diff_pairs, "inserted_dense")
    layer = "/".join(d.result.added[0].split("/")[:2])  # closed unless asked: ask
    d.render(page_path, options=graphviz_tb.RenderOptions(color_by="diff", expand=(layer,)))
    page = Page(browser, page_path)
    try:
        added = [n for n in d.result.added if page.js(
            f"!!document.querySelector('[data-node=\"{n}\"]')")]
        assert added, "the inserted layer is drawn open"
        visible = f"getComputedStyle(document.querySelector('[data-node=\"{added[0]}\"]')).display"
        assert page.js(visible) != "none"
        page.js("window.tbgraph.setSide('old')")
        assert page.js(visible) == "none"
        page.js("window.tbgraph.setSide('new')")
        assert page.js(visible) != "none"
    finally:
        page.close()


@pytest.mark.browser
def test_the_change_list_tells_every_change_apart(browser: object, tmp_path: Path) -> None:
    """The list shows each op by the end of its name, which is what differs along a path.
    Two of the sample diff's added ops end alike (``…/BiasAdd/ReadVariableOp/resource`` and
    ``…/Cast/ReadVariableOp/resource``) and were listed as the same two words; a row shows as
    much of the name's end as tells it from every other row, marked as cut where it is."""
    from test_html import Page

    samples = Path(__file__).resolve().parents[1] / "samples" / "diff"
    page_path = tmp_path / "diff.html"
    graphviz_tb.diff(samples / "cnn_v1.pb", samples / "cnn_v2.pb").render(page_path)
    page = Page(browser, page_path)
    try:
        rows = page.js("[...document.querySelectorAll('nav.changes button.link')].map("
                       "(b) => [b.dataset.name, b.querySelector('.name').textContent])")
        assert len(rows) == 9  # 7 ops added, conv_a's padding, the op the new layer feeds
        full = [name for name, _ in rows]
        shown = [text for _, text in rows]
        assert len(set(shown)) == len(set(full)) == len(rows), shown
        for name, text in rows:
            assert text == name or (text.startswith("…/") and name.endswith(text[1:])), \
                (name, text)
        # Nothing cuts the shown end further: the changed op's description once squeezed its
        # name to "…/conv…".
        clipped = page.js("[...document.querySelectorAll('nav.changes .name')].filter("
                          "(e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)")
        assert clipped == []
    finally:
        page.close()


def test_the_viewer_writes_each_change_beside_its_box_as_the_picture_does(
        diff_pairs: dict, browser: object, tmp_path: Path) -> None:
    """The page's first view follows the static picture's rules: the changed op says what it
    was, the layer wholly added is one closed box saying so, the rewired op says so."""
    from test_html import Page

    for pair, text in (("activation", "was Relu"), ("inserted_dense", "input 0 rewired")):
        d = _diff(diff_pairs, pair)
        name = d.result.changed[0].new
        page_path = tmp_path / f"{pair}.html"
        d.render(page_path)
        page = Page(browser, page_path)
        try:
            shown = page.js(f"document.querySelector('g.op[data-node=\"{name}\"]').textContent")
            assert text in shown, shown
            if pair == "inserted_dense":
                layer = "/".join(d.result.added[0].split("/")[:2])
                box = page.js(f"(() => {{ const g = document.querySelector("
                              f"'g.group[data-node=\"{layer}\"]'); return g && "
                              f"[g.getAttribute('class'), g.textContent]; }})()")
                assert box is not None and "expanded" not in box[0], box
                assert f"+{len(d.result.added)}" in box[1], box
        finally:
            page.close()
