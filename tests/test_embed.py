"""Pictures embedded where people read about models: Jupyter, Sphinx, MkDocs and Markdown.

The stories: a notebook shows a loaded graph as SVG, or as the viewer once asked; a Sphinx
site and an MkDocs site each draw a committed sample into their pages, static and interactive,
and the built pages hold the picture (an ``<img>`` of a real SVG file, an ``<iframe>`` of a
real viewer file that becomes interactive in Chromium); a rebuild with an unchanged model draws
nothing, and a changed model is drawn again.
"""

from __future__ import annotations

import base64
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from pages import poll

import graphviz_tb
from graphviz_tb import jupyter
from graphviz_tb.embed import EmbedError, ensure_rendered, parse_embed

DENSE = SAMPLES / "dense_frozen.pb"
MNIST = SAMPLES / "mnist_tf1.pb"


def _need(module: str) -> Any:
    """The module, or a skip on a developer machine; in CI a missing one is a failure."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module)


# --------------------------------------------------------------------------- parsing pages


class _Elements(HTMLParser):
    """Every start tag of a page with its attributes, and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: Path) -> _Elements:
    parser = _Elements()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _pictures(page: Path) -> dict[str, list[Path]]:
    """The tbgraph pictures on a built page: the files its ``<img>`` and ``<iframe>`` show."""
    found: dict[str, list[Path]] = {"img": [], "iframe": []}
    for tag, attrs in _parse(page).tags:
        if tag in found and "tbgraph" in attrs.get("class", "").split():
            found[tag].append((page.parent / attrs["src"]).resolve())
    return found


def _assert_svg_file(path: Path) -> None:
    assert path.is_file(), f"{path} is missing"
    head = path.read_text(encoding="utf-8")[:2000]
    assert "<svg" in head and path.suffix == ".svg"


def _assert_viewer_file(path: Path) -> None:
    assert path.is_file(), f"{path} is missing"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'id="tbgraph-data"' in text
    assert "Content-Security-Policy" in text


# --------------------------------------------------------------------------- Python API


def test_graph_shapes_are_the_shape_table_as_data() -> None:
    graph = graphviz_tb.load(str(MNIST))
    rows = graph.shapes(["fc1/MatMul"])
    assert [r["name"] for r in rows] == ["fc1/MatMul"]
    assert [i["shape"] for i in rows[0]["inputs"]] == [[None, 3136], [3136, 1024]]
    assert rows[0]["outputs"][0] == {"dtype": "float32", "shape": [None, 1024],
                                     "text": "float32 ?×1024"}
    everything = graph.shapes()
    assert len(everything) == graph.model.graph.number_of_nodes()
    assert 0 < len(graph.shapes(changes=True)) < len(everything)


# --------------------------------------------------------------------------- Jupyter


@pytest.fixture
def display_settings() -> Any:
    """Restores the notebook display setting a test changes."""
    before = jupyter.get_display()
    yield
    graphviz_tb.set_display(before.format, options=before.options, height=before.height)


@pytest.mark.dot
def test_notebook_shows_svg_by_default(display_settings: None) -> None:
    """The static picture comes twice: as HTML, the SVG at its own size in a frame that
    scrolls (what notebooks show first), and as the SVG itself for converters that take no
    HTML.  Both are the same drawing."""
    graph = graphviz_tb.load(str(DENSE))
    bundle = graph._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert "<svg" in bundle["image/svg+xml"] and "classifier_1" in bundle["image/svg+xml"]
    tags = _Elements()
    tags.feed(bundle["text/html"])
    [(div, frame), (img, attrs)] = tags.tags
    assert div == "div" and "overflow:auto" in frame["style"]
    assert img == "img" and "max-width:none" in attrs["style"]
    prefix = "data:image/svg+xml;base64,"
    assert attrs["src"].startswith(prefix)
    assert base64.b64decode(attrs["src"][len(prefix):]).decode() == bundle["image/svg+xml"]
    assert bundle["text/plain"] == repr(graph)
    # A front end that cannot show SVG gets only the text, and nothing is drawn for it.
    assert set(graph._repr_mimebundle_(exclude={"image/svg+xml"})) == {"text/plain"}
    assert set(graph._repr_mimebundle_(include={"image/svg+xml"})) == {"image/svg+xml"}


def test_notebook_shows_the_viewer_when_asked(display_settings: None) -> None:
    graph = graphviz_tb.load(str(DENSE))
    previous = graphviz_tb.set_display("html", height="420px", depth=2)
    assert previous.format == "svg"
    bundle = graph._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    tags = _Elements()
    tags.feed(bundle["text/html"])
    [(tag, attrs)] = tags.tags
    assert tag == "iframe" and attrs["sandbox"] == "allow-scripts allow-downloads"
    assert "height:420px" in attrs["style"]
    # The whole viewer page, escaped into srcdoc: no CDN, its own CSP, the graph's data.
    page = attrs["srcdoc"]
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=", page)
    with pytest.raises(ValueError, match="svg' or 'html"):
        graphviz_tb.set_display("png")


# --------------------------------------------------------------------------- option parsing


def test_embed_options_are_the_render_options() -> None:
    embed = parse_embed("dense_frozen.pb", {
        "format": "html", "depth": "2", "expand": "a, b*", "color-by": "op", "rankdir": "lr",
        "input-shape": "pixels=1,28,29; other=?,3", "expand-all": None, "legend": "false",
        "height": "400", "width": "80%", "caption": "A caption", "graph": "0",
    }, base=SAMPLES)
    assert embed.source == DENSE and embed.format == "html"
    r = embed.render
    assert (r.depth, r.expand, r.color_by, r.rankdir, r.expand_all, r.legend) == (
        2, ("a", "b*"), "op", "LR", True, False)
    assert r.input_shapes == (("pixels", (1, 28, 29)), ("other", (None, 3)))
    assert (embed.height, embed.width, embed.caption, embed.alt) == (
        "400px", "80%", "A caption", "dense_frozen.pb")
    assert embed.load.graph == 0
    assert embed.filename == f"dense_frozen.pb-{embed.digest[:16]}.html"
    # Same model and options: same name; other options: another name.
    assert parse_embed(str(DENSE), {"depth": "2"}, base="/").digest == parse_embed(
        "dense_frozen.pb", {"depth": "2"}, base=SAMPLES).digest
    assert parse_embed(str(DENSE), {}, base="/").digest != parse_embed(
        str(DENSE), {"depth": "2"}, base="/").digest


@pytest.mark.parametrize(("options", "message"), [
    ({"colour": "op"}, "unknown option 'colour'"),
    ({"depth": "two"}, "'two' is not a whole number"),
    ({"color-by": "rainbow"}, "not one of structure, op"),
    ({"format": "png"}, "not one of svg, html"),
    ({"height": "tall"}, "not a length"),
    ({"legend": "maybe"}, "not true or false"),
    ({"input-shape": "pixels"}, "expected NAME=DIMS"),
])
def test_wrong_embed_options_say_what_is_wrong(options: dict[str, str], message: str) -> None:
    with pytest.raises(EmbedError, match=message):
        parse_embed(str(DENSE), options, base="/")


def test_diff_from_draws_the_difference(tmp_path: Path) -> None:
    """``diff-from`` names the earlier version: coloured by what changed unless told
    otherwise, named by both versions' bytes, drawn as ``tbgraph diff`` draws it."""
    old, new = SAMPLES / "diff" / "cnn_v1.pb", SAMPLES / "diff" / "cnn_v2.pb"
    embed = parse_embed("diff/cnn_v2.pb", {"diff-from": "diff/cnn_v1.pb"}, base=SAMPLES)
    assert (embed.old, embed.source, embed.render.color_by) == (old, new, "diff")
    assert parse_embed(str(new), {"diff-from": str(old), "color-by": "op"},
                       base="/").render.color_by == "op"
    # Another earlier version (here: the same file copied, changed by one byte) is another
    # picture, whatever the file is called.
    copy = tmp_path / "cnn_v1.pb"
    copy.write_bytes(old.read_bytes() + b"\x00")
    assert parse_embed(str(new), {"diff-from": str(copy)}, base="/").digest != embed.digest
    with pytest.raises(EmbedError, match=r"gone\.pb: no such model"):
        parse_embed(str(new), {"diff-from": "gone.pb"}, base=SAMPLES)
    drawn, made = ensure_rendered(embed, tmp_path / "cache")
    assert made
    assert drawn.read_bytes() == graphviz_tb.diff(old, new).render(format="svg").encode()


def test_a_missing_model_is_named() -> None:
    with pytest.raises(EmbedError, match=r"no_such\.pb: no such model"):
        parse_embed("no_such.pb", {}, base=SAMPLES)


# --------------------------------------------------------------------------- Sphinx


SPHINX_INDEX = """\
Models
======

.. tbgraph:: models/dense.pb
   :caption: The *frozen* classifier.
   :name: fig-dense

.. tbgraph:: models/dense.pb
   :format: html
   :height: 420px
   :alt: the classifier, interactive

See :ref:`fig-dense`.

.. toctree::
   :glob:

   guide/page
   more/*
"""

SPHINX_PAGE = """\
Guide
=====

.. tbgraph:: ../models/dense.pb
   :color-by: op
   :rankdir: LR
"""


def _sphinx_project(root: Path) -> Path:
    """Eight pages, so ``-j auto`` really reads in parallel (Sphinx does past five); the six
    under ``more/`` all show the same picture, which parallel workers may draw at once."""
    (root / "models").mkdir(parents=True)
    (root / "guide").mkdir()
    (root / "more").mkdir()
    shutil.copyfile(DENSE, root / "models" / "dense.pb")
    (root / "conf.py").write_text('extensions = ["graphviz_tb.sphinx"]\n')
    (root / "index.rst").write_text(SPHINX_INDEX)
    (root / "guide" / "page.rst").write_text(SPHINX_PAGE)
    for i in range(6):
        # "/models" is from the source directory, as for Sphinx's image directive.
        model = "/models/dense.pb" if i == 0 else "../models/dense.pb"
        (root / "more" / f"page{i}.rst").write_text(
            f"More {i}\n======\n\n.. tbgraph:: {model}\n")
    return root


def _sphinx_build(root: Path) -> subprocess.CompletedProcess[str]:
    _need("sphinx")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "--no-color", "-j", "auto",
         "-b", "html", str(root), str(root / "_build")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _drawn(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The pictures a build reports drawing (both builders log ``tbgraph: ... drew NAME``)."""
    return sorted(re.findall(r"tbgraph: .*?drew (\S+)", result.stdout + result.stderr))


@pytest.fixture(scope="module")
def sphinx_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _sphinx_project(tmp_path_factory.mktemp("sphinx"))
    _sphinx_build(root)
    return root


@pytest.mark.docs
@pytest.mark.dot
def test_sphinx_pages_hold_the_pictures(sphinx_site: Path) -> None:
    out = sphinx_site / "_build"
    index = _pictures(out / "index.html")
    [svg] = index["img"]
    [viewer] = index["iframe"]
    _assert_svg_file(svg)
    _assert_viewer_file(viewer)
    assert svg.parent == viewer.parent == out / "_tbgraph"
    page = _parse(out / "index.html")
    text = " ".join(page.text)
    assert "frozen" in text and "classifier." in text  # the caption, markup rendered
    [(_, frame)] = [(t, a) for t, a in page.tags if t == "iframe"]
    assert frame["title"] == "the classifier, interactive" and "height:420px" in frame["style"]
    assert "allow-scripts" in frame["sandbox"]
    # A page one directory down reaches the model with ../ and the picture with ../_tbgraph.
    [nested] = _pictures(out / "guide" / "page.html")["img"]
    _assert_svg_file(nested)
    assert 'class="edge' in nested.read_text() and nested != svg
    # Pages read by parallel workers: their pictures reached the site (the environment merged).
    for i in range(6):
        assert _pictures(out / "more" / f"page{i}.html")["img"] == [svg]
    assert len(list((out / "_tbgraph").iterdir())) == 3


@pytest.mark.docs
@pytest.mark.dot
def test_sphinx_draws_only_when_the_model_changes(tmp_path: Path) -> None:
    root = _sphinx_project(tmp_path / "site")
    first = _sphinx_build(root)
    # Parallel readers may each draw the picture the pages share: same name, same bytes.
    assert len(set(_drawn(first))) == 3
    out = root / "_build" / "_tbgraph"
    stamps = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}

    again = _sphinx_build(root)
    assert _drawn(again) == []
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamps

    # Touched but identical: the pages are read again, the pictures are not drawn again.
    model = root / "models" / "dense.pb"
    os.utime(model, (time.time() + 5, time.time() + 5))
    touched = _sphinx_build(root)
    assert "updating environment: 0 added, 8 changed" in touched.stdout
    assert _drawn(touched) == []

    # Changed: every picture of it is drawn anew, and the old files leave the site.
    shutil.copyfile(MNIST, model)
    changed = _sphinx_build(root)
    assert len(set(_drawn(changed))) == 3
    names = {p.name for p in out.iterdir()}
    assert names.isdisjoint(stamps) and len(names) == 3
    assert "conv1" in _pictures(root / "_build" / "index.html")["img"][0].read_text()


@pytest.mark.docs
def test_sphinx_reports_a_missing_model_at_its_line(tmp_path: Path) -> None:
    _need("sphinx")
    root = tmp_path / "site"
    root.mkdir()
    (root / "conf.py").write_text('extensions = ["graphviz_tb.sphinx"]\n')
    (root / "index.rst").write_text("Title\n=====\n\n.. tbgraph:: missing.pb\n   :depth: 2\n")
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-b", "html", str(root),
                             str(root / "_build")], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "index.rst:4" in result.stderr and "missing.pb: no such model" in result.stderr


# --------------------------------------------------------------------------- MkDocs


MKDOCS_INDEX = """\
# Models

```tbgraph
path: models/dense.pb
caption: The frozen classifier.
```

[[tbgraph models/dense.pb format=html height=420px alt="the classifier, interactive"]]

The syntax itself, shown and not drawn:

```markdown
[[tbgraph models/missing.pb]]
```
"""

MKDOCS_PAGE = """\
# Guide

[[tbgraph ../models/dense.pb color-by=op rankdir=LR]]

From the docs directory, the same picture:

[[tbgraph /models/dense.pb color-by=op rankdir=LR]]
"""


def _mkdocs_project(root: Path) -> Path:
    docs = root / "docs"
    (docs / "models").mkdir(parents=True)
    (docs / "guide").mkdir()
    shutil.copyfile(DENSE, docs / "models" / "dense.pb")
    (docs / "index.md").write_text(MKDOCS_INDEX)
    (docs / "guide" / "page.md").write_text(MKDOCS_PAGE)
    # The default theme fetches highlight.js from a CDN; the test allows no network at all.
    (root / "mkdocs.yml").write_text("site_name: models\nplugins:\n  - tbgraph\n"
                                     "theme:\n  name: mkdocs\n  highlightjs: false\n"
                                     "nav:\n  - index.md\n  - guide/page.md\n")
    return root


def _mkdocs_build(root: Path) -> subprocess.CompletedProcess[str]:
    _need("mkdocs")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def mkdocs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _mkdocs_project(tmp_path_factory.mktemp("mkdocs"))
    _mkdocs_build(root)
    return root


@pytest.mark.docs
@pytest.mark.dot
def test_mkdocs_pages_hold_the_pictures(mkdocs_site: Path) -> None:
    site = mkdocs_site / "site"
    index = _pictures(site / "index.html")
    [svg] = index["img"]
    [viewer] = index["iframe"]
    _assert_svg_file(svg)
    _assert_viewer_file(viewer)
    assert svg.parent == site / "_tbgraph"
    page = _parse(site / "index.html")
    text = " ".join(page.text)
    assert "The frozen classifier." in text
    assert "[[tbgraph models/missing.pb]]" in text  # the code block was left alone
    [frame] = [a for t, a in page.tags if t == "iframe"]
    assert frame["title"] == "the classifier, interactive" and "height:420px" in frame["style"]
    nested, rooted = _pictures(site / "guide" / "page" / "index.html")["img"]
    _assert_svg_file(nested)
    assert rooted == nested


@pytest.mark.docs
@pytest.mark.dot
def test_mkdocs_draws_only_when_the_model_changes(tmp_path: Path) -> None:
    root = _mkdocs_project(tmp_path / "site")
    assert len(_drawn(_mkdocs_build(root))) == 3
    cache = root / ".cache" / "tbgraph"
    stamps = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert _drawn(_mkdocs_build(root)) == []
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == stamps
    assert len(list((root / "site" / "_tbgraph").iterdir())) == 3

    shutil.copyfile(MNIST, root / "docs" / "models" / "dense.pb")
    assert len(_drawn(_mkdocs_build(root))) == 3
    site_files = {p.name for p in (root / "site" / "_tbgraph").iterdir()}
    assert len(site_files) == 3 and site_files.isdisjoint(stamps)


@pytest.mark.docs
def test_mkdocs_strict_fails_on_a_missing_model(tmp_path: Path) -> None:
    root = _mkdocs_project(tmp_path / "site")
    (root / "docs" / "guide" / "page.md").write_text("# Guide\n\n[[tbgraph nowhere.pb]]\n")
    _need("mkdocs")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "guide/page.md:3" in result.stderr and "nowhere.pb: no such model" in result.stderr


@pytest.mark.docs
@pytest.mark.dot
def test_python_markdown_extension(tmp_path: Path) -> None:
    markdown = _need("markdown")
    out = tmp_path / "site" / "_tbgraph"
    html = markdown.markdown(
        "Intro\n\n```tbgraph\npath: dense_frozen.pb\ndepth: 2\n```\n",
        extensions=["graphviz_tb.markdown", "fenced_code"],
        extension_configs={"graphviz_tb.markdown": {
            "base_dir": str(SAMPLES), "output_dir": str(out), "url_prefix": "_tbgraph/"}})
    tags = _Elements()
    tags.feed(html)
    [src] = [a["src"] for t, a in tags.tags if t == "img"]
    assert src.startswith("_tbgraph/dense_frozen.pb-")
    _assert_svg_file(tmp_path / "site" / src)
    assert "<code" not in html


# --------------------------------------------------------------------------- in a browser


def _assert_interactive(frame: Any) -> None:
    poll(frame, "window.tbgraph && window.tbgraph.ready === true", timeout=20)
    # The model is one scope holding nearly every op: the first view opens it by itself.
    first = frame.evaluate("window.tbgraph.visibleNodes()")
    assert "classifier_1" in first and "classifier_1/flatten_1" in first
    assert frame.evaluate("window.tbgraph.collapse('classifier_1')") is not False
    before = frame.evaluate("window.tbgraph.visibleNodes()")
    assert "classifier_1" in before and "classifier_1/flatten_1" not in before
    assert frame.evaluate("window.tbgraph.expand('classifier_1')") is True
    after = poll(frame, "window.tbgraph.visibleNodes().includes('classifier_1/flatten_1')"
                        " && window.tbgraph.visibleNodes()", timeout=20)
    assert len(after) > len(before)


def _open_embedded(browser: Any, page_path: Path) -> tuple[Any, Any, list[str]]:
    """The page from file:// and its viewer frame, scrolled into view (it loads lazily)."""
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    problems: list[str] = []

    def script_error(error: Any) -> None:
        # Only the viewer's errors count: the host page's theme scripts are not ours.
        if "/_tbgraph/" in (error.stack or "") or "about:srcdoc" in (error.stack or ""):
            problems.append(f"pageerror: {error}")

    page.on("pageerror", script_error)
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        ("file:", "data:", "blob:", "about:")) else (problems.append(route.request.url),
                                                     route.abort()))
    page.goto(page_path.as_uri())
    element = page.wait_for_selector("iframe.tbgraph, iframe[srcdoc]")
    element.scroll_into_view_if_needed()
    end = time.monotonic() + 20
    while (frame := element.content_frame()) is None or frame.url == "about:blank":
        assert time.monotonic() < end, "the viewer frame never loaded"
        time.sleep(0.05)
    return page, frame, problems


@pytest.mark.browser
@pytest.mark.docs
def test_sphinx_viewer_is_interactive(browser: Any, sphinx_site: Path) -> None:
    page, frame, problems = _open_embedded(browser, sphinx_site / "_build" / "index.html")
    try:
        assert frame.url.endswith(".html") and "/_tbgraph/" in frame.url
        _assert_interactive(frame)
        assert problems == []
    finally:
        page.close()


@pytest.mark.browser
@pytest.mark.docs
def test_mkdocs_viewer_is_interactive(browser: Any, mkdocs_site: Path) -> None:
    page, frame, problems = _open_embedded(browser, mkdocs_site / "site" / "index.html")
    try:
        _assert_interactive(frame)
        assert problems == []
    finally:
        page.close()


@pytest.mark.browser
def test_notebook_viewer_is_interactive(browser: Any, tmp_path: Path,
                                        display_settings: None) -> None:
    graphviz_tb.set_display("html")
    bundle = graphviz_tb.load(str(DENSE))._repr_mimebundle_()
    notebook = tmp_path / "notebook.html"
    notebook.write_text(f"<!DOCTYPE html><html><body><h1>Out[1]:</h1>{bundle['text/html']}"
                        "</body></html>", encoding="utf-8")
    page, frame, problems = _open_embedded(browser, notebook)
    try:
        assert frame.url == "about:srcdoc"
        _assert_interactive(frame)
        assert problems == []
    finally:
        page.close()


@pytest.mark.browser
def test_notebook_picture_is_readable_where_it_stands(browser: Any, tmp_path: Path,
                                                      display_settings: None) -> None:
    """In a notebook's output column (800 px, its images capped at the column's width, as
    JupyterLab and the classic notebook style them) a picture wider than the column draws
    its names 9 px high or more: at its own size, in a frame that scrolls."""
    graphviz_tb.set_display("svg", expand_all=True)
    graph = graphviz_tb.load(str(SAMPLES / "mnist_tf1.pb"))
    bundle = graph._repr_mimebundle_()
    notebook = tmp_path / "notebook.html"
    notebook.write_text(
        "<!DOCTYPE html><html><head><style>.output{width:800px}"
        ".output img{max-width:100%;height:auto}</style></head><body>"
        f"<div class='output'>{bundle['text/html']}</div></body></html>", encoding="utf-8")
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    try:
        page.goto(notebook.as_uri())
        page.wait_for_load_state("load")
        natural, drawn = page.evaluate("(() => { const i = document.querySelector('img');"
                                       " return [i.naturalWidth, "
                                       "i.getBoundingClientRect().width]; })()")
        assert natural > 800, "the picture is wider than the column, or the test proves nothing"
        assert (10 * 4 / 3) * drawn / natural >= 9  # a 10 pt name, in px on screen
        overflow = page.evaluate("getComputedStyle(document.querySelector('.output > div'))"
                                 ".overflow")
        assert overflow == "auto"
    finally:
        page.close()


def test_import_stays_cheap() -> None:
    """The embedding modules must not make ``import graphviz_tb`` pull in their frameworks."""
    code = ("import sys, graphviz_tb; graphviz_tb.set_display('svg'); "
            "print(sorted(m for m in ('sphinx', 'docutils', 'markdown', 'mkdocs', 'tensorflow', "
            "'networkx', 'IPython') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["graphviz_tb.embed", "graphviz_tb.errors", "graphviz_tb.jupyter",
                                  "graphviz_tb.markdown"])
def test_docstring_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest
    import importlib

    if name.endswith("markdown"):
        _need("markdown")
    monkeypatch.chdir(SAMPLES.parent)  # the examples name samples/ as a reader in a clone would
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
