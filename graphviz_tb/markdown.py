"""Models drawn into Markdown pages: a Python-Markdown extension and the parser it shares with
the MkDocs plugin (:mod:`graphviz_tb.mkdocs`).

Two ways to write one in a page.  A fenced block, one ``key: value`` a line::

    ```tbgraph
    path: models/encoder.pb
    depth: 2
    format: html
    caption: The encoder, two levels open.
    ```

or one line on its own, for the short cases::

    [[tbgraph models/encoder.pb depth=2 color-by=op]]

The keys are those of the Sphinx directive (see :func:`graphviz_tb.embed.parse_embed`).  Fenced
code blocks of other languages are left alone, so a page can show the syntax itself.

With plain Python-Markdown, add the extension with where pictures go and how pages reach them::

    markdown.markdown(text, extensions=["graphviz_tb.markdown"], extension_configs={
        "graphviz_tb.markdown": {"base_dir": "docs", "output_dir": "site/_tbgraph",
                                 "url_prefix": "_tbgraph/"}})

In MkDocs use the ``tbgraph`` plugin instead: it knows each page's own directory and URL.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from .embed import EmbedError, ensure_rendered, figure_html, parse_embed

__all__ = ["TbgraphExtension", "makeExtension", "replace_embeds"]

#: (model path as written, its options, the 1-based line it starts on) -> the HTML to put there
EmbedRenderer = Callable[[str, dict[str, str], int], str]

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
_TAG = re.compile(r"^ {0,3}\[\[tbgraph\s+(?P<args>.*?)\]\]\s*$")
_PATH_KEYS = ("path", "source", "src")


def _block_options(body: list[str], line: int) -> tuple[str, dict[str, str]]:
    options: dict[str, str] = {}
    for offset, text in enumerate(body, start=1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition(":")
        if not sep:
            raise EmbedError(f"line {line + offset}: expected 'key: value', got {stripped!r}")
        options[key.strip().lower()] = value.strip()
    path = next((options.pop(k) for k in _PATH_KEYS if k in options), "")
    if not path:
        raise EmbedError(f"line {line}: a tbgraph block needs 'path: MODEL'")
    return path, options


def _tag_options(args: str, line: int) -> tuple[str, dict[str, str]]:
    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise EmbedError(f"line {line}: cannot read the tbgraph tag: {exc}") from None
    path, options = "", {}
    for word in words:
        key, sep, value = word.partition("=")
        if sep:
            options[key.strip().lower()] = value
        elif not path:
            path = word
        else:
            options[word.lower()] = ""  # a bare word is a flag: expand-all
    return path, options


def replace_embeds(text: str, render: EmbedRenderer) -> str:
    """Replace every tbgraph block and tag in Markdown ``text`` by ``render``'s HTML.

    ``render`` gets the model path as written, its options and the line number, and returns
    one line of HTML, which is set apart by blank lines so Markdown passes it through.

    Examples
    --------
    >>> from graphviz_tb.markdown import replace_embeds
    >>> page = "```tbgraph\\npath: m.pb\\ndepth: 2\\n```\\n[[tbgraph m.pb format=html]]"
    >>> out = replace_embeds(page, lambda path, opts, line: f"<p>{path} {opts} {line}</p>")
    >>> [text for text in out.splitlines() if text]
    ["<p>m.pb {'depth': '2'} 1</p>", "<p>m.pb {'format': 'html'} 5</p>"]
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marker = fence["fence"]
            end = i + 1
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
            while end < len(lines) and not closing.match(lines[end]):
                end += 1
            if fence["info"].lower() == "tbgraph":
                path, options = _block_options(lines[i + 1:end], i + 1)
                out += ["", render(path, options, i + 1), ""]
            else:
                out += lines[i:end + 1]
            i = end + 1
            continue
        tag = _TAG.match(line)
        if tag:
            path, options = _tag_options(tag["args"], i + 1)
            out += ["", render(path, options, i + 1), ""]
        else:
            out.append(line)
        i += 1
    return "\n".join(out)


class _EmbedPreprocessor(Preprocessor):
    """Runs before fenced code blocks are parsed, and stashes the HTML so Markdown keeps it."""

    def __init__(self, md: Markdown, config: dict[str, Any]) -> None:
        super().__init__(md)
        self.base = Path(config["base_dir"])
        self.output = Path(config["output_dir"])
        self.prefix = str(config["url_prefix"])

    def _render(self, source: str, options: dict[str, str], line: int) -> str:
        embed = parse_embed(source, options, base=self.base)
        path, _ = ensure_rendered(embed, self.output)
        return self.md.htmlStash.store(figure_html(embed, self.prefix + path.name))

    def run(self, lines: list[str]) -> list[str]:
        return replace_embeds("\n".join(lines), self._render).split("\n")


class TbgraphExtension(Extension):
    """Python-Markdown extension drawing ``tbgraph`` blocks and tags (see the module doc)."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {
            "base_dir": [".", "directory that relative model paths start from"],
            "output_dir": [".", "directory the pictures are written to"],
            "url_prefix": ["", "what a page puts before a picture's file name to reach it"],
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        # Above fenced_code (25) so a tbgraph block is ours before it becomes a code block.
        md.preprocessors.register(_EmbedPreprocessor(md, self.getConfigs()), "tbgraph", 30)


def makeExtension(**kwargs: Any) -> TbgraphExtension:
    """Entry point Python-Markdown calls for ``extensions=["graphviz_tb.markdown"]``."""
    return TbgraphExtension(**kwargs)
