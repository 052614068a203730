"""The Sphinx extension: ``.. tbgraph:: path/to/model.pb`` draws a model into the page.

Add ``"graphviz_tb.sphinx"`` to ``extensions`` in ``conf.py``, then::

    .. tbgraph:: ../models/encoder.pb
       :depth: 2
       :color-by: op
       :caption: The encoder, two levels open.

    .. tbgraph:: ../models/encoder.pb
       :format: html
       :height: 500px

The path is relative to the document (or, starting with ``/``, to the source directory, as for
Sphinx's ``image``).  Every option of :func:`graphviz_tb.embed.parse_embed`
is accepted (``format``, ``depth``, ``expand``, ``collapse``, ``expand-all``, ``focus``,
``radius``, ``color-by``, ``rankdir``, ``theme``, ``title``, ``legend``, ``input-shape`` ...,
``height``, ``width``, ``caption``, ``alt``), plus Sphinx's ``name`` and ``class``.

How a build goes:

* **Read** (in parallel under ``-j``): the directive hashes the model and its options, draws
  the picture into a cache directory (``<doctreedir>/tbgraph``, or ``tbgraph_cache_dir``)
  unless a file of that hash is already there, and records which files the document uses in
  the build environment.  The model is a dependency of the document, so changing it makes
  Sphinx read the document again, which gives a new hash and a new picture.
* **Write** (HTML builders): the picture is an ``<img>`` (svg) or a sandboxed ``<iframe>`` of
  the viewer file (html), pointing into ``_tbgraph/`` in the output.  Other builders get the
  alt text.
* **Finish**: the files the documents use are copied into ``<outdir>/_tbgraph`` (redrawn
  if the cache lost them) and files no document uses any more are removed there and in the
  default cache (a ``tbgraph_cache_dir`` set in ``conf.py`` may be shared, so it is left
  alone).

No module-level state is shared: what documents use lives in the environment, which Sphinx
merges after a parallel read, and every file is written atomically under a content-addressed
name, so parallel workers that draw the same picture agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

from .embed import (
    OPTION_NAMES,
    Embed,
    EmbedError,
    copy_output,
    embed_files,
    ensure_rendered,
    markup,
    parse_embed,
)
from .version import __version__

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.writers.html5 import HTML5Translator

__all__ = ["TbgraphDirective", "setup", "tbgraph_node"]

logger = logging.getLogger(__name__)

#: Where the pictures go in the HTML output.
OUTPUT_DIR = "_tbgraph"


class tbgraph_node(nodes.General, nodes.Element):
    """A drawn model in the doctree; ``embed`` holds the :class:`~graphviz_tb.embed.Embed`."""


def _uses(env: BuildEnvironment) -> dict[str, dict[str, Embed]]:
    """docname -> {output file name: the embed drawing it}, kept in the environment."""
    if not hasattr(env, "tbgraph_uses"):
        env.tbgraph_uses = {}  # type: ignore[attr-defined]
    return env.tbgraph_uses  # type: ignore[attr-defined,no-any-return]


def _cache_dir(env: BuildEnvironment) -> Path:
    configured = env.config.tbgraph_cache_dir
    if configured:
        return Path(env.srcdir, configured)
    return Path(env.doctreedir, "tbgraph")


class TbgraphDirective(SphinxDirective):
    """``.. tbgraph:: PATH`` with the options listed in :mod:`graphviz_tb.sphinx`."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {
        **{name: directives.unchanged for name in OPTION_NAMES},
        "name": directives.unchanged,
        "class": directives.class_option,
    }

    def run(self) -> list[nodes.Node]:
        raw = {k: v for k, v in self.options.items() if k in OPTION_NAMES}
        # As for Sphinx's own image and literalinclude: relative to the document, or to the
        # source directory when the path starts with "/".
        _, path = self.env.relfn2path(self.arguments[0].strip(), self.env.docname)
        try:
            embed = parse_embed(str(path), raw, base=self.env.srcdir)
            for file in embed_files(embed):
                self.env.note_dependency(str(file))
            _, drawn = ensure_rendered(embed, _cache_dir(self.env))
        except EmbedError as exc:
            logger.warning("tbgraph: %s", exc, location=self.get_location(),
                           type="tbgraph", subtype="render")
            return []
        if drawn:
            logger.info("tbgraph: drew %s", embed.filename, location=self.get_location())
        _uses(self.env).setdefault(self.env.docname, {})[embed.filename] = embed

        node = tbgraph_node(embed=embed)
        self.set_source_info(node)
        if not embed.caption:
            node["classes"] += self.options.get("class", [])
            self.add_name(node)
            return [node]
        figure = nodes.figure("", node, classes=["tbgraph-figure",
                                                 *self.options.get("class", [])])
        self.set_source_info(figure)
        text_nodes, messages = self.state.inline_text(embed.caption, self.lineno)
        caption = nodes.caption(embed.caption, "", *text_nodes)
        self.set_source_info(caption)
        figure += caption
        self.add_name(figure)
        return [figure, *messages]


def _visit_html(self: HTML5Translator, node: tbgraph_node) -> None:
    embed: Embed = node["embed"]
    page = self.builder.get_target_uri(self.builder.current_docname)
    url = relative_uri(page, f"{OUTPUT_DIR}/{embed.filename}")
    self.body.append(markup(embed, url))
    raise nodes.SkipNode


def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Builders other than HTML get the alt text in place of the picture."""
    if app.builder.format == "html":
        return
    for node in list(doctree.findall(tbgraph_node)):
        node.replace_self(nodes.paragraph("", node["embed"].alt))


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _uses(env).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str],
           other: BuildEnvironment) -> None:
    mine, theirs = _uses(env), _uses(other)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = theirs[docname]


def _finish(app: Sphinx, exception: BaseException | None) -> None:
    """Copy the pictures in use into the output; drop the ones nothing uses any more."""
    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    used: dict[str, Embed] = {}
    for files in _uses(env).values():
        used.update(files)
    cache, output = _cache_dir(env), Path(app.outdir, OUTPUT_DIR)
    for embed in (used[name] for name in sorted(used)):
        try:
            cached, _ = ensure_rendered(embed, cache)
        except EmbedError as exc:
            logger.warning("tbgraph: %s", exc, type="tbgraph", subtype="render")
            continue
        copy_output(cached, output)
    # A cache dir named in conf.py may be shared with other projects: only ours is pruned.
    owned = [output] if env.config.tbgraph_cache_dir else [cache, output]
    for directory in owned:
        if directory.is_dir():
            for stale in directory.iterdir():
                if stale.is_file() and stale.name not in used and not stale.name.startswith("."):
                    stale.unlink()


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, its node and the build hooks (called by Sphinx)."""
    app.add_config_value("tbgraph_cache_dir", "", "env", types=frozenset({str}))
    app.add_node(tbgraph_node, html=(_visit_html, None))
    app.add_directive("tbgraph", TbgraphDirective)
    app.connect("doctree-resolved", _resolve)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _finish)
    return {
        "version": __version__,
        "env_version": 1,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }

