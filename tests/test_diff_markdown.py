"""``tbgraph diff --markdown``: what changed, as a comment a pull request can carry.

The tests read the comment as GitHub does: parsed by a CommonMark reader with GitHub's tables
(markdown-it-py), its tables taken cell by cell and its HTML checked for any element a name
could smuggle in.  The counts are checked against the JSON a CI step reads; the inputs are the
sample diff (TensorFlow), a U-Net against the same U-Net with one stage wider (ONNX, both of
PyTorch's exporters), generated graphs of thousands of ops and graphs of hostile names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import SAMPLES, write_with
from hostile_inputs import HOSTILE_NAMES, graph_def, hostile_names_graph, node, write_pb
from markdown_it import MarkdownIt
from markdown_it.token import Token

import graphviz_tb
from graphviz_tb.escaping import clean_text
from graphviz_tb.write.diff_markdown import LIMIT, changed_modules

REPO = Path(__file__).resolve().parents[1]
OLD, NEW = SAMPLES / "diff" / "cnn_v1.pb", SAMPLES / "diff" / "cnn_v2.pb"
#: What the comment may contain: its own markup, never an element a name made.
ELEMENTS = {"h3", "p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td",
            "details", "summary"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphviz_tb", "diff", *args],
                          capture_output=True, text=True, cwd=REPO, check=False)


class Cell(NamedTuple):
    """A table cell as read: its text, and whether that text is all one code span."""

    text: str
    code: bool


class Comment(NamedTuple):
    """A comment as GitHub reads it: its tables by their first header, rows of cells; the
    text of its heading and paragraphs; the elements of its HTML."""

    tables: dict[str, list[list[Cell]]]
    paragraphs: list[str]
    elements: set[str]


def _read(text: str) -> Comment:
    md = MarkdownIt("commonmark").enable("table")
    tables: dict[str, list[list[Cell]]] = {}
    paragraphs, rows, row = [], [], None
    in_paragraph = False
    for token in md.parse(text):
        if token.type == "table_open":
            rows = []
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            rows.append(row)
        elif token.type == "table_close":
            tables[rows[0][0].text] = rows[1:]
        elif token.type in ("paragraph_open", "heading_open"):
            in_paragraph = True
        elif token.type in ("paragraph_close", "heading_close"):
            in_paragraph = False
        elif token.type == "inline" and row is not None and not in_paragraph:
            row.append(_cell(token.children or []))
        elif token.type == "inline" and in_paragraph:
            paragraphs.append("".join(_text(c) for c in token.children or []))
    parser = _Elements()
    parser.feed(md.render(text))
    return Comment(tables, paragraphs, parser.found)


class _Elements(HTMLParser):
    """The elements an HTML text holds."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.found.add(tag)


def _text(token: Token) -> str:
    return f"`{token.content}`" if token.type == "code_inline" else token.content


def _cell(children: list[Token]) -> Cell:
    if len(children) == 1 and children[0].type == "code_inline":
        return Cell(children[0].content, True)
    return Cell("".join(_text(c) for c in children), False)


def _module_totals(comment: Comment) -> dict[str, int]:
    """The module table's columns summed, the "… and N more" row included."""
    rows = comment.tables["Changed module"]
    return {status: sum(int(r[i].text.replace(",", "")) for r in rows)
            for i, status in enumerate(("added", "removed", "changed"), start=1)}


def _json_totals(data: dict[str, Any]) -> dict[str, int]:
    return {status: len(data["ops"][status]) for status in ("added", "removed", "changed")}


# --------------------------------------------------------------------------- the sample


def test_the_sample_diff_as_a_comment_counts_what_the_json_counts() -> None:
    """The Keras CNN with a Dense layer inserted and a padding changed: the comment's modules
    add up to the JSON's ops, the inserted layer first and marked new, the one-op changes
    after it; the changed ops say what changed; the pointer is the command that draws it."""
    done = _cli(str(OLD), str(NEW), "--markdown")
    assert done.returncode == 1, done.stderr
    data = json.loads(_cli(str(OLD), str(NEW), "--json").stdout)
    comment = _read(done.stdout)
    assert comment.elements <= ELEMENTS, comment.elements
    assert _module_totals(comment) == _json_totals(data) == {"added": 7, "removed": 0,
                                                              "changed": 2}
    assert "Ops: 7 added, 0 removed, 2 changed, 5 renamed. Edges: 2 added, 1 removed." in \
        comment.paragraphs
    assert "Every change is inside `cnn_1`." in comment.paragraphs
    modules = comment.tables["Changed module"]
    assert [row[0].text for row in modules] == [
        "`cnn_1/dense_1_2` (new)", "cnn_1/conv_a_1", "cnn_1/dense_2_1"]
    totals = [sum(int(c.text) for c in row[1:]) for row in modules]
    assert totals == sorted(totals, reverse=True)
    changed = {row[0].text: row[1].text for row in comment.tables["Op"]}
    assert changed["cnn_1/conv_a_1/convolution"] == "attr padding: SAME -> VALID"
    assert len(changed) == len(data["ops"]["changed"])
    assert f"Full picture: `tbgraph diff {OLD} {NEW} -o diff.html`." in comment.paragraphs
    # Deterministic: the same bytes twice.
    assert _cli(str(OLD), str(NEW), "--markdown").stdout == done.stdout


@pytest.mark.parametrize("order", ["--markdown old new", "old --markdown new"])
def test_markdown_before_the_paths_prints_the_comment(order: str) -> None:
    """``--markdown`` takes an optional file, so written before (or between) the two paths it
    took the first as that file and said 'the following arguments are required: new'.  The
    comment goes to stdout, the same as with ``--markdown`` last, and no input is written."""
    before = OLD.read_bytes(), NEW.read_bytes()
    args = [{"old": str(OLD), "new": str(NEW)}.get(word, word) for word in order.split()]
    done = _cli(*args)
    assert done.returncode == 1, done.stderr
    assert done.stdout == _cli(str(OLD), str(NEW), "--markdown").stdout
    assert (OLD.read_bytes(), NEW.read_bytes()) == before


def test_one_path_alone_is_one_line_and_status_2() -> None:
    done = _cli(str(OLD))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "new" in lines[0], done.stderr


def test_with_a_picture_the_comment_names_it(tmp_path: Path) -> None:
    """``-o diff.html --markdown FILE``: the summary on stdout as ever, the picture written,
    and the comment, in its file, points at the picture."""
    picture, comment_file = tmp_path / "diff.html", tmp_path / "comment.md"
    done = _cli(str(OLD), str(NEW), "-o", str(picture), "--markdown", str(comment_file))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("ops: 7 added")
    assert picture.stat().st_size > 0
    comment = _read(comment_file.read_text(encoding="utf-8"))
    assert f"Full picture: `{picture}` (open it in a browser)." in comment.paragraphs
    assert f"wrote {comment_file}" in done.stderr


def test_equal_graphs_say_so_and_exit_0() -> None:
    done = _cli(str(OLD), str(OLD), "--markdown")
    assert done.returncode == 0, done.stderr
    comment = _read(done.stdout)
    assert comment.paragraphs[1:] == ["No change: the graphs are equal."]
    assert comment.tables == {}


@pytest.mark.parametrize("case", ["json and markdown", "same file", "no directory",
                                  "bad input"])
def test_trouble_is_one_line_and_status_2(tmp_path: Path, case: str) -> None:
    """Both on stdout, both into one file, a directory that is not there, an input that is no
    graph: one line on stderr, status 2 (not the 1 of "they differ"), no file written."""
    target = tmp_path / "out.md"
    args = {"json and markdown": [str(OLD), str(NEW), "--json", "--markdown"],
            "same file": [str(OLD), str(NEW), "-o", str(target), "--markdown", str(target)],
            "no directory": [str(OLD), str(NEW), "--markdown", str(tmp_path / "no" / "c.md")],
            "bad input": [str(OLD), str(tmp_path / "missing.pb"), "--markdown", str(target)],
            }[case]
    done = _cli(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("tbgraph: error:") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- ONNX


@pytest.fixture(scope="session")
def unet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The U-Net and its wider twin, with both exporters (PyTorch, in its own process)."""
    if not os.environ.get("CI"):
        for module in ("torch", "onnxscript", "onnx"):
            pytest.importorskip(module)
    return write_with("onnx_unet.py", tmp_path_factory.mktemp("unet"), "the U-Net files")


@pytest.mark.torch
@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_a_wider_stage_of_a_unet_is_the_one_module_changed(unet_dir: Path,
                                                           exporter: str) -> None:
    """The stage made wider (``down.1``) holds every change, whichever exporter wrote the
    files: the comment says so, names the stage as the code does, its rows are the stage's
    parts, and they add up to the JSON's ops."""
    files = [str(unet_dir / f"{name}_{exporter}.onnx") for name in ("unet", "unet_wider")]
    done = _cli(*files, "--markdown")
    assert done.returncode == 1, done.stderr
    data = json.loads(_cli(*files, "--json").stdout)
    assert data["ops"]["changed"] and not data["ops"]["added"] and not data["ops"]["removed"]
    assert all(c["new"].startswith("down.1/") for c in data["ops"]["changed"])
    comment = _read(done.stdout)
    assert comment.elements <= ELEMENTS
    assert _module_totals(comment) == _json_totals(data)
    [inside] = [p for p in comment.paragraphs if p.startswith("Every change is inside ")]
    assert re.fullmatch(r"Every change is inside `down\.1( \(ConvBlock\))?`\.", inside), inside
    rows = comment.tables["Changed module"]
    assert len(rows) >= 2
    assert all(row[0].text.startswith(("down.1.", "`down.1")) for row in rows), rows


@pytest.mark.torch
def test_the_merged_model_keeps_the_module_labels(unet_dir: Path) -> None:
    """The diff's picture names each PyTorch module as the model's own picture does
    (``down.1.conv1``, ``pool (call 2)``), not by the last part of its path."""
    d = graphviz_tb.diff(*(unet_dir / f"{name}_ts.onnx" for name in ("unet", "unet_wider")))
    labels = d.new.model.scope_labels
    assert labels["down.1/conv1"] == "down.1.conv1"
    h = d.graph.hierarchy(graphviz_tb.RenderOptions(color_by="diff"))
    shown = {name: h.groups[name].label for name in labels if name in h.groups}
    assert shown == {name: labels[name] for name in shown} and len(shown) == len(labels)


# --------------------------------------------------------------------------- size


def _layers(prefix: str, count: int, ops: tuple[str, ...], source: str, device: str = ""
            ) -> list[Any]:
    """``count`` scopes named ``prefix<i>``, a chain of ``ops`` each, one after another, the
    first reading ``source``."""
    nodes, previous = [], source
    for i in range(count):
        for j, op in enumerate(ops):
            name = f"{prefix}{i}/{op.lower()}{j}"
            nodes.append(node(name, op, [previous], device=device))
            previous = name
    return nodes


def test_a_huge_diff_stays_under_the_limit(tmp_path: Path) -> None:
    """Thousands of ops on each side: 300 layers renamed and rebuilt of other ops (all their
    ops removed and added), 300 kept with every op moved to another device (changed), under a
    scope of 200 emoji (4 bytes each).  The comment stays under 60 KB, its tables end in
    "… and N more" rows, and its modules still add up to the JSON's ops."""
    wide = "🎉" * 200
    start = f"{wide}/start"
    old = [node("input", "Placeholder"),
           *_layers(f"{wide}/old_", 300, ("Relu", "Sigmoid") * 2 + ("Relu",), "input")]
    new = [node("input", "Placeholder"), node(start, "Placeholder"),
           *_layers(f"{wide}/new_", 300, ("Tanh", "Softplus") * 2 + ("Tanh",), start)]
    kept = ("Relu", "Identity", "Relu", "Identity", "Relu")
    old += _layers(f"{wide}/kept_", 300, kept, "input")
    new += _layers(f"{wide}/kept_", 300, kept, "input", device="/device:GPU:0")
    d = graphviz_tb.diff(write_pb(tmp_path / "old.pb", graph_def(old)),
                         write_pb(tmp_path / "new.pb", graph_def(new)))
    text = d.markdown()
    assert len(text.encode("utf-8")) < LIMIT
    comment = _read(text)
    data = d.to_json()
    assert min(_json_totals(data).values()) >= 1500
    assert _module_totals(comment) == _json_totals(data)
    modules = comment.tables["Changed module"]
    assert re.fullmatch(r"… and [\d,]+ more modules", modules[-1][0].text)
    assert comment.tables["Op"][-1][0].text.startswith("… and ")
    assert len(modules) > 10 and len(comment.tables["Op"]) > 5  # cut, not emptied


# --------------------------------------------------------------------------- hostile names


def test_hostile_names_stay_text_in_their_cells(tmp_path: Path) -> None:
    """Every hostile name as a module (a scope) whose op changed and which gained an op, and
    as a file name: each table row keeps its four cells, each name is one code span showing
    the name (cleaned: newlines as ↵), and the HTML holds no element a name made."""
    old = hostile_names_graph()
    new = hostile_names_graph()
    for i, text in enumerate(HOSTILE_NAMES):
        new.node.append(node(f"{text}/added{i}", "Identity", [text]))
    for nd in new.node:
        if "/inner" in nd.name:
            nd.attr["note"].s += b"|`<b>*x*</b>\n@someone"
    name = "old `|<b>` *x*.pb"
    d = graphviz_tb.diff(write_pb(tmp_path / name, old),
                         write_pb(tmp_path / "new.pb", new))
    text = d.markdown(picture="a|b`c <i>.html")
    comment = _read(text)
    assert comment.elements <= ELEMENTS, comment.elements
    assert comment.paragraphs[0] == f"tbgraph diff: `{name}` → `new.pb`"
    assert "Full picture: `a|b`c <i>.html` (open it in a browser)." in comment.paragraphs
    h = d.graph.hierarchy(graphviz_tb.RenderOptions(color_by="diff"))
    _, rows = changed_modules(h)
    table = comment.tables["Changed module"]
    assert len(table) == min(len(rows), 30) + (len(rows) > 30)
    for row, expected in zip(table[:30], rows, strict=False):
        assert len(row) == 4 and row[0].code, row
        name = expected.module.name if expected.module else ""
        assert row[0].text == clean_text(name, 160), (row, name)
        assert [int(c.text) for c in row[1:]] == [expected.added, expected.removed,
                                                  expected.changed]
    assert _module_totals(comment) == _json_totals(d.to_json())
    ops = comment.tables["Op"]
    assert all(len(row) == 2 for row in ops), ops
    changed = {c.new: "; ".join(c.what) for c in d.result.changed}
    for row in ops[:-1]:
        assert row[0].code and row[1].code
        assert any(row[0].text == clean_text(n, 160) and row[1].text == clean_text(w, 300)
                   for n, w in changed.items()), row
