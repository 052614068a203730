"""The escaping rules (:mod:`graphviz_tb.escaping`) hold as their examples state, and the
viewer's copies of them give what the Python ones give on the same strings.

The viewer cleans the names it shows (``cleanText`` in ``draw.js``) and quotes the labels of
the DOT it lays out in the page (``quote`` in ``layout.js``): a difference would show a name
one way in the SVG and another in the page, or lay out a group differently.  Node runs the
viewer's sources themselves (``make viewer`` writes the style module they import).
"""

from __future__ import annotations

import doctest
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import graphviz_tb.escaping
from graphviz_tb.escaping import clean_text, dot_string

SRC = Path(graphviz_tb.escaping.__file__).parent / "draw" / "viewer" / "src"

#: Characters a hostile or unusual name is made of: every rule's own cases (newlines, control
#: characters, DEL, C1 controls, bidirectional overrides and isolates, lone surrogates, the
#: non-characters, quotes, backslashes, markup) among ordinary, wide and astral ones.
_POOL = ["a", "Z", "0", "/", "_", " ", "\t", "\n", "\r", "\r\n", "\x00", "\x07", "\x0b", "\x1b",
         "\x1f", "\x7f", "\x85", "\x9f", "\u2028", "\u202e", "\u2067", "\u200f", "\ud800",
         "\udc80", "\ufffd", "\ufffe", "\uffff", '"', "'", "\\", "\\N", "<", ">", "&", "]", "é",
         "名", "↵", "…", "\U0001f600"]


def _strings() -> list[str]:
    """The doctests' inputs, and strings drawn from :data:`_POOL`."""
    examples = [e.source for t in doctest.DocTestFinder().find(graphviz_tb.escaping)
                for e in t.examples]
    rng = random.Random(45)
    drawn = ["".join(rng.choice(_POOL) for _ in range(rng.randrange(0, 40))) for _ in range(400)]
    # A lone high surrogate just before a lone low one would become one astral character
    # once in JSON (JavaScript strings are UTF-16): not the same string on both sides.
    drawn = [s for s in drawn if not re.search("[\ud800-\udbff][\udc00-\udfff]", s)]
    return [*drawn, "", "x" * 500, "名" * 500, "\U0001f600" * 50, *examples]


def test_the_examples_are_the_rules() -> None:
    """Every example in the module's docstrings gives what it states."""
    result = doctest.testmod(graphviz_tb.escaping)
    assert result.attempted >= 15 and result.failed == 0


def test_the_viewer_cleans_and_quotes_as_python_does() -> None:
    """``cleanText`` (with and without a limit) and ``quote``, run by Node on the doctests'
    inputs and 400 random hostile strings, give exactly what Python gives."""
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "Node.js is needed to run the viewer's JavaScript (make viewer installs it)"
    rng = random.Random(7)
    cases = [(s, rng.choice([None, 1, 2, 5, 36, 200])) for s in _strings()]
    script = (f"import {{ cleanText }} from {json.dumps((SRC / 'draw.js').as_uri())};\n"
              f"import {{ quote }} from {json.dumps((SRC / 'layout.js').as_uri())};\n"
              "let text = '';\n"
              "process.stdin.on('data', (d) => { text += d; });\n"
              "process.stdin.on('end', () => {\n"
              "  const out = JSON.parse(text).map(([s, limit]) =>\n"
              "    [cleanText(s, limit === null ? undefined : limit), quote(s)]);\n"
              "  process.stdout.write(JSON.stringify(out));\n"
              "});\n")
    done = subprocess.run([node, "--input-type=module", "-e", script],
                          input=json.dumps(cases), capture_output=True, encoding="utf-8",
                          timeout=60, check=True)
    page = [tuple(pair) for pair in json.loads(done.stdout)]
    python = [(clean_text(s, limit), dot_string(s)) for s, limit in cases]
    wrong = [(s, limit, p, q) for (s, limit), p, q in zip(cases, page, python, strict=True)
             if p != q]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[0]!r}"
