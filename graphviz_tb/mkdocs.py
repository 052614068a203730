"""The MkDocs plugin ``tbgraph``: models drawn into Markdown pages, paths relative to the page.

In ``mkdocs.yml``::

    plugins:
      - search
      - tbgraph            # optional setting: cache_dir (default .cache/tbgraph)

then in any page a fenced ``tbgraph`` block or a ``[[tbgraph PATH key=value ...]]`` line
(syntax in :mod:`graphviz_tb.markdown`; keys as for the Sphinx directive).  PATH is relative
to the page, or to ``docs_dir`` when it starts with ``/``.

MkDocs empties the site directory on every build, so pictures are drawn into a cache beside
``mkdocs.yml`` under names that are content hashes (model bytes, options, package version)
and copied into ``site/_tbgraph/`` after the build: an unchanged model is never drawn twice, a
changed one always is.  ``mkdocs serve`` also watches the models, so editing one redraws the
pages that show it.  A model that cannot be drawn is a warning naming the page and line
(an error under ``mkdocs build --strict``).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.utils import get_relative_url

from .embed import Embed, EmbedError, copy_output, ensure_rendered, figure_html, parse_embed
from .markdown import replace_embeds

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

__all__ = ["TbgraphConfig", "TbgraphPlugin"]

# Messages read "tbgraph: ...", as the Sphinx extension's do.
log = get_plugin_logger("tbgraph")

#: Where the pictures go in the built site.
OUTPUT_DIR = "_tbgraph"


class TbgraphConfig(Config):
    """The plugin's settings in ``mkdocs.yml``."""

    #: Where drawn pictures are kept between builds, relative to ``mkdocs.yml``.
    cache_dir = config_options.Type(str, default=".cache/tbgraph")


class TbgraphPlugin(BasePlugin[TbgraphConfig]):
    """Draws ``tbgraph`` blocks and tags; one instance lives for one ``mkdocs`` run."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = Path(".cache/tbgraph")
        self.used: dict[str, Embed] = {}

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.cache = Path(config.config_file_path or ".").parent / self.config.cache_dir
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        self.used = {}

    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig,
                         files: Files) -> str:
        base = Path(page.file.abs_src_path or config.docs_dir).parent

        def render(source: str, options: dict[str, str], line: int) -> str:
            where = f"{page.file.src_uri}:{line}"
            # Like a Markdown link: relative to the page, or to docs_dir when it starts with /.
            rooted = source.strip().startswith("/")
            try:
                embed = parse_embed(source.strip().lstrip("/") if rooted else source, options,
                                    base=config.docs_dir if rooted else base)
                _, drawn = ensure_rendered(embed, self.cache)
            except EmbedError as exc:
                log.warning("%s: %s", where, exc)
                return f'<p class="tbgraph-error">tbgraph: {html.escape(str(exc))}</p>'
            if drawn:
                log.info("%s: drew %s", where, embed.filename)
            self.used[embed.filename] = embed
            url = get_relative_url(f"{OUTPUT_DIR}/{embed.filename}", page.url)
            return figure_html(embed, url)

        try:
            return replace_embeds(markdown, render)
        except EmbedError as exc:
            log.warning("%s: %s", page.file.src_uri, exc)
            return markdown

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        output = Path(config.site_dir, OUTPUT_DIR)
        for name in sorted(self.used):
            copy_output(self.cache / name, output)
        if output.is_dir():
            for stale in output.iterdir():
                if stale.is_file() and stale.name not in self.used:
                    stale.unlink()

    def on_serve(self, server: LiveReloadServer, *, config: MkDocsConfig,
                 builder: Any) -> LiveReloadServer:
        for source in sorted({str(path) for embed in self.used.values()
                              for path in (embed.source, embed.old) if path is not None}):
            server.watch(source)
        return server
