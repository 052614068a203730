"""The project's own documentation builds without a warning, and shows what it promises.

This is the docs build of CI: ``make test`` runs it, so a docstring, a page or a sample that
breaks the site fails the suite.  It builds ``docs/`` exactly as ``make docs`` does (``-W
--keep-going -j auto``), into a temporary directory, then checks the pages people come for:
the gallery draws every sample of the manifest both ways, the CLI reference lists every
command of the real parser, and the shape-debugging page shows TensorFlow's verdict.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES

from graphviz_tb.cli import build_parser
from graphviz_tb.style import DIFF_COLORS

pytestmark = [pytest.mark.docs, pytest.mark.dot, pytest.mark.tensorflow]

DOCS = Path(__file__).resolve().parents[1] / "docs"


class _Pictures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.pictures: list[tuple[str, str, str]] = []  # (tag, src, alt or title)
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("img", "iframe") and "tbgraph" in a.get("class", "").split():
            self.pictures.append((tag, a["src"], a.get("alt") or a.get("title", "")))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _page(path: Path) -> _Pictures:
    parser = _Pictures()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not os.environ.get("CI"):
        pytest.importorskip("sphinx")
        pytest.importorskip("tensorflow")
    out = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "auto", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return out / "html"


def test_gallery_draws_every_sample_static_and_interactive(site: Path) -> None:
    manifest = json.loads((SAMPLES / "MANIFEST.json").read_text())
    gallery = _page(site / "gallery.html")
    for sample in manifest["samples"]:
        kinds = {tag for tag, _, alt in gallery.pictures if alt.startswith(sample["name"] + ",")}
        assert kinds == {"img", "iframe"}, sample["name"]
    for _, src, _ in gallery.pictures:
        assert (site / src).is_file(), src
    assert len(gallery.pictures) == 2 * len(manifest["samples"])


def test_cli_reference_lists_every_command(site: Path) -> None:
    text = " ".join(_page(site / "cli.html").text)
    parser = build_parser()
    commands = next(a.choices for a in parser._actions if hasattr(a, "choices") and a.choices
                    and isinstance(a.choices, dict))
    for name, sub in commands.items():
        assert f"tbgraph {name}" in text
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in text, f"{name} {flag}"


def _text_and_picture(site: Path, name: str) -> tuple[str, str]:
    """A page's text, and the SVG of its one static picture."""
    page = _page(site / name)
    [svg] = [src for tag, src, _ in page.pictures if tag == "img"]
    return " ".join(page.text), (site / svg).read_text()


def test_shape_page_shows_where_inference_breaks(site: Path) -> None:
    text, drawn = _text_and_picture(site, "shapes.html")
    assert "shape inference failed at classifier_1/flatten_1/Reshape" in text
    assert "Cannot reshape a tensor with 812 elements" in text
    assert "1×28×29" in drawn  # the pinned shape on the input's edge


def test_onnx_page_draws_one_model_both_ways(site: Path) -> None:
    """The ONNX page draws ResNet-18 from its ONNX export (whose weights' file is absent)
    and from its ``add_graph`` trace: the same eight blocks, named as the code names them,
    with their class."""
    page = _page(site / "onnx.html")
    pictures = [(site / src).read_text() for tag, src, _ in page.pictures if tag == "img"]
    assert len(pictures) == 2
    blocks = [set(re.findall(r"layer\d\.\d \(BasicBlock\)", svg)) for svg in pictures]
    assert blocks[0] == blocks[1] == {f"layer{s}.{b} (BasicBlock)" for s in range(1, 5)
                                      for b in range(2)}
    assert not (DOCS / "models" / "resnet18.onnx.data").exists()


def test_api_page_documents_the_public_surface(site: Path) -> None:
    text = " ".join(_page(site / "api.html").text)
    for name in ("load", "Graph", "RenderOptions", "LoadOptions", "set_display", "shapes",
                 "render", "InputError"):
        assert name in text


def test_diff_page_draws_what_changed(site: Path) -> None:
    """The diff page runs ``tbgraph diff`` on the sample pair and draws it with
    ``diff-from``: the inserted layer one green box, the changed convolution and the op the
    layer now feeds amber, each saying what changed."""
    text, drawn = _text_and_picture(site, "diff.html")
    assert "ops: 7 added, 0 removed, 2 changed, 5 renamed; edges: 2 added, 1 removed" in text
    assert "changed cnn_1/conv_a_1/convolution: attr padding: SAME -> VALID" in text
    colours = DIFF_COLORS["light"]
    assert drawn.count(f'fill="{colours["added"]}"') >= 2  # the legend's swatch and the layer
    assert f'fill="{colours["changed"]}"' in drawn
    assert "added: 7 ops" in drawn and "changed: 2 ops<" in drawn
    assert "7 ops · +7" in drawn and "padding SAME→VALID" in drawn


#: How high a box name (10 pt) stands on screen in a static picture of the built site, in the
#: page as the theme lays it out: the picture's drawn width over its own (its SVG ``width``
#: in points, 4/3 px each), times 10 pt.
_NAME_PX = """() => [...document.querySelectorAll('img.tbgraph-svg')].map((img) => {
  const own = img.naturalWidth;
  const drawn = img.getBoundingClientRect().width;
  return [img.getAttribute('alt'), own > 0 ? (10 * 4 / 3) * drawn / own : 0];
})"""


@pytest.mark.browser
def test_pictures_in_the_docs_are_readable_where_they_stand(site: Path, browser: Any) -> None:
    """The gallery's, the front page's and the ONNX page's static pictures, in a window as
    wide as the theme's page (1180 px, a 900 px column), draw their names 9 px high or more:
    at their own size in a frame that scrolls, never shrunk to the column."""
    page = browser.new_page(viewport={"width": 1180, "height": 900})
    try:
        for name in ("gallery.html", "index.html", "onnx.html"):
            page.goto((site / name).as_uri())
            page.wait_for_load_state("load")
            heights = page.evaluate(_NAME_PX)
            assert heights, name
            small = [(alt, round(px, 1)) for alt, px in heights if px < 9]
            assert small == [], name
            frames = page.evaluate("[...document.querySelectorAll('.tbgraph-scroll')].map("
                                   "(d) => getComputedStyle(d).overflow)")
            assert frames and set(frames) == {"auto"}
    finally:
        page.close()
