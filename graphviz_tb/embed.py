"""What the Sphinx directive, the Markdown extension and the MkDocs plugin share.

An embedded picture is described by a handful of ``key: value`` options written in a document
(``depth: 2``, ``color-by: op``, ``format: html`` ...).  This module turns those strings into
one :class:`Embed` (the model's path plus the same :class:`~graphviz_tb.options.LoadOptions`
and :class:`~graphviz_tb.options.RenderOptions` the API and the CLI use), names its output by a
content hash, renders it once into a cache directory, and writes the HTML that shows it.

Why a content hash: documentation is rebuilt far more often than models change, and a large
graph takes seconds to lay out.  The output's file name is a digest of the model's bytes, the
options and the package version, so an unchanged model is never drawn twice, a changed one
always is, and two parallel builders that draw the same picture write the same file (each
atomically), so ``sphinx-build -j auto`` needs no locking.

Nothing here imports Sphinx, MkDocs or Markdown; the heavy pipeline is imported only when a
picture is actually rendered.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .api import diff, load
from .errors import GraphvizTbError
from .jupyter import scroll_frame
from .options import COLOR_BY, RANKDIRS, LoadOptions, RenderOptions, parse_input_shape
from .version import __version__

__all__ = [
    "DEFAULT_HEIGHT",
    "OPTION_NAMES",
    "Embed",
    "EmbedError",
    "content_digest",
    "copy_output",
    "embed_files",
    "ensure_rendered",
    "figure_html",
    "markup",
    "model_files",
    "parse_embed",
]

#: Height of an interactive (iframe) picture when the document gives none.
DEFAULT_HEIGHT = "600px"

_CSS_LENGTH = re.compile(r"^\d+(\.\d+)?(px|em|rem|%|vh|vw|ex|ch|pt|cm|mm|in)?$")
_TRUE = {"", "true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class EmbedError(GraphvizTbError, ValueError):
    """An embedding's options are wrong, or its model cannot be found or drawn.

    The message names the option or the file, so a documentation build can report it at the
    line of the directive or block.
    """


def _int(name: str, text: str) -> int:
    if not text.strip().isdigit():
        raise EmbedError(f"option {name!r}: {text!r} is not a whole number (0 or more)")
    return int(text)


def _bool(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EmbedError(f"option {name!r}: {text!r} is not true or false")


def _choice(name: str, text: str, choices: tuple[str, ...]) -> str:
    value = text.strip()
    if value not in choices:
        raise EmbedError(f"option {name!r}: {value!r} is not one of {', '.join(choices)}")
    return value


def _globs(text: str) -> tuple[str, ...]:
    # TensorFlow op names hold neither commas nor spaces, so both separate patterns.
    return tuple(p for p in re.split(r"[,\s]+", text.strip()) if p)


def _input_shapes(name: str, text: str) -> tuple[tuple[str, tuple[int | None, ...]], ...]:
    pins = []
    for item in (p for p in re.split(r"[;\s]+", text.strip()) if p):
        try:
            pins.append(parse_input_shape(item))
        except ValueError as exc:
            raise EmbedError(f"option {name!r}: {exc}") from None
    return tuple(pins)


def _length(name: str, text: str) -> str:
    value = text.strip()
    if not _CSS_LENGTH.match(value):
        raise EmbedError(f"option {name!r}: {value!r} is not a length such as 400px, 30em or "
                         "100%")
    return value + "px" if value[-1].isdigit() else value


# option -> (where it goes: "render", "load" or "page"; the field name; the parser)
_Parser = Callable[[str, str], object]
_OPTIONS: dict[str, tuple[str, str, _Parser]] = {
    "format": ("page", "format", lambda n, t: _choice(n, t, ("svg", "html"))),
    "height": ("page", "height", _length),
    "width": ("page", "width", _length),
    "alt": ("page", "alt", lambda n, t: t.strip()),
    "caption": ("page", "caption", lambda n, t: t.strip()),
    "depth": ("render", "depth", _int),
    "budget": ("render", "budget", _int),
    "expand": ("render", "expand", lambda n, t: _globs(t)),
    "collapse": ("render", "collapse", lambda n, t: _globs(t)),
    "expand-all": ("render", "expand_all", _bool),
    "focus": ("render", "focus", lambda n, t: t.strip() or None),
    "radius": ("render", "radius", _int),
    "color-by": ("render", "color_by", lambda n, t: _choice(n, t, COLOR_BY)),
    "rankdir": ("render", "rankdir", lambda n, t: _choice(n, t.upper(), RANKDIRS)),
    "theme": ("render", "theme", lambda n, t: _choice(n, t, ("light", "dark"))),
    "title": ("render", "title", lambda n, t: t.strip() or None),
    "legend": ("render", "legend", _bool),
    "shapes": ("render", "shapes", _bool),
    "dtypes": ("render", "dtypes", _bool),
    "aux": ("render", "aux", _bool),
    "series": ("render", "series", _bool),
    "input-shape": ("render", "input_shapes", _input_shapes),
    "infer-shapes": ("render", "infer_shapes", _bool),
    "run": ("load", "run", lambda n, t: t.strip() or None),
    "tag": ("load", "tag", lambda n, t: t.strip() or None),
    "graph": ("load", "graph", _int),
    "tags": ("load", "tags", lambda n, t: _globs(t)),
    "functions": ("load", "functions", _bool),
    "run-metadata": ("load", "run_metadata", lambda n, t: t.strip() or None),
    "diff-from": ("page", "old", lambda n, t: t.strip()),
}

#: Every option a document may give, in the order the docs list them.
OPTION_NAMES: tuple[str, ...] = tuple(_OPTIONS)


@dataclass(frozen=True)
class Embed:
    """One picture to embed: which model, drawn how, shown how.

    Attributes
    ----------
    source:
        The model (file or directory), absolute.
    format:
        ``svg`` (a static picture) or ``html`` (the interactive viewer, in an iframe).
    load, render:
        The same option objects ``graphviz_tb.load()`` and ``Graph.render()`` take.
    width, height:
        CSS lengths for the picture on the page (an iframe defaults to the full width and
        :data:`DEFAULT_HEIGHT`).
    alt:
        Text for readers who cannot see the picture; defaults to the model's file name.
    caption:
        A caption under the picture, or None.
    old:
        With ``diff-from``: the earlier version of the model, absolute; the picture is then
        the difference from it to ``source`` (as ``tbgraph diff OLD NEW``).
    digest:
        The content hash naming the output (see :func:`content_digest`).
    """

    source: Path
    format: str = "svg"
    load: LoadOptions = field(default_factory=LoadOptions)
    render: RenderOptions = field(default_factory=RenderOptions)
    width: str | None = None
    height: str | None = None
    alt: str = ""
    caption: str | None = None
    old: Path | None = None
    digest: str = ""

    @property
    def filename(self) -> str:
        """The output's file name: the model's name and the first 16 hex digits of the hash."""
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.source.name).strip("._") or "graph"
        return f"{stem}-{self.digest[:16]}.{self.format}"


def parse_embed(source: str, options: Mapping[str, str | None], *,
                base: str | os.PathLike[str]) -> Embed:
    """Build an :class:`Embed` from a document's path and option strings.

    Parameters
    ----------
    source:
        The model's path as written in the document; relative paths are taken from ``base``
        (the directory of the document).
    options:
        Option names (as in :data:`OPTION_NAMES`, with hyphens) to their text.  ``None`` or an
        empty string for a boolean option means true, as a bare Sphinx flag does.
    base:
        The directory relative paths start from.

    Raises
    ------
    EmbedError
        An unknown option, a value of the wrong kind, or a model path that does not exist.

    Examples
    --------
    >>> from graphviz_tb.embed import parse_embed
    >>> embed = parse_embed("samples/mnist_tf1.pb", {"depth": "2", "color-by": "op"},
    ...                     base=".")
    >>> embed.render.depth, embed.render.color_by, embed.format
    (2, 'op', 'svg')
    >>> embed.filename.startswith("mnist_tf1.pb-") and embed.filename.endswith(".svg")
    True
    """
    if not source.strip():
        raise EmbedError("no model path given")
    path = _existing(base, source)
    groups: dict[str, dict[str, object]] = {"page": {}, "render": {}, "load": {}}
    for name, text in options.items():
        key = name.strip().lower().replace("_", "-")
        if key not in _OPTIONS:
            raise EmbedError(f"unknown option {name!r}; known: {', '.join(OPTION_NAMES)}")
        where, attr, parse = _OPTIONS[key]
        groups[where][attr] = parse(key, "" if text is None else str(text))
    try:
        load = LoadOptions(**groups["load"])  # type: ignore[arg-type]
        render = RenderOptions(**groups["render"])  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise EmbedError(str(exc)) from None
    page = groups["page"]
    if "old" in page:
        page["old"] = _existing(base, str(page["old"]))
        if "color_by" not in groups["render"]:  # a diff is coloured by what changed
            render = replace(render, color_by="diff")
    embed = Embed(source=path, load=load, render=render,
                  alt=str(page.get("alt") or path.name), **{
                      k: v for k, v in page.items() if k != "alt"})  # type: ignore[arg-type]
    return _with_digest(embed)


def _existing(base: str | os.PathLike[str], source: str) -> Path:
    path = Path(base, os.path.expanduser(source.strip())).resolve()
    if not path.exists():
        raise EmbedError(f"{path}: no such model file or directory")
    return path


def embed_files(embed: Embed) -> Iterator[Path]:
    """Every file the picture is drawn from: the model's, and the earlier version's."""
    for path in (embed.old, embed.source):
        if path is not None:
            yield from model_files(path)


def model_files(path: Path) -> Iterator[Path]:
    """The files a model consists of, in a stable order (one file, or a directory's files)."""
    if path.is_file():
        yield path
        return
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            yield Path(root, name)


def content_digest(path: Path, settings: str) -> str:
    """SHA-256 over the package version, ``settings`` and every byte of the model.

    For a directory (a SavedModel or a logdir) each file's path relative to it is hashed with
    its content, so renaming a run re-renders too.
    """
    digest = hashlib.sha256()
    digest.update(f"graphviz_tb {__version__}\0{settings}\0".encode())
    for file in model_files(path):
        name = file.relative_to(path).as_posix() if path.is_dir() else ""
        digest.update(f"{name}\0{file.stat().st_size}\0".encode())
        with open(file, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _with_digest(embed: Embed) -> Embed:
    settings = repr((embed.format, sorted(asdict(embed.load).items()),
                     sorted(asdict(embed.render).items())))
    if embed.old is not None:  # the earlier version's bytes are part of what is drawn
        settings += "\0diff-from\0" + content_digest(embed.old, "")
    return replace(embed, digest=content_digest(embed.source, settings))


def ensure_rendered(embed: Embed, directory: str | os.PathLike[str]) -> tuple[Path, bool]:
    """Render ``embed`` into ``directory`` unless a file of that content hash is already there.

    Returns the output's path and whether it was drawn now.  The file is written atomically,
    so builders running in parallel never see half a file.

    Raises
    ------
    EmbedError
        The model cannot be read or drawn; the message names the model.
    """
    target = Path(directory, embed.filename)
    if target.is_file():
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if embed.old is not None:
            diff(str(embed.old), str(embed.source), embed.load).render(
                target, format=embed.format, options=embed.render)
        else:
            load(str(embed.source), embed.load).render(target, format=embed.format,
                                                       options=embed.render)
    except GraphvizTbError as exc:
        raise EmbedError(f"{embed.source}: {exc}") from None
    return target, True


def copy_output(source: Path, directory: str | os.PathLike[str]) -> Path:
    """Put a cached output into a site's directory, atomically, skipped when already there.

    A hard link when the file system allows one (the viewer files are over a megabyte each),
    else a copy.
    """
    target = Path(directory, source.name)
    if target.is_file() and target.stat().st_size == source.stat().st_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _style(width: str | None, height: str | None) -> str:
    parts = [f"width:{width}" if width else "", f"height:{height}" if height else ""]
    return ";".join(p for p in parts if p)


def markup(embed: Embed, url: str) -> str:
    """The HTML showing the output found at ``url``, without a caption.

    A static picture is an ``<img>`` linked to the full-size file (an SVG in ``<img>`` runs
    no script and loads nothing), drawn at its own size in a frame that scrolls: shrunk to a
    700-900 px column, a model's names would be 5 px high, unreadable where they stand.  A
    ``width`` or ``height`` the author gives still sizes it.  The interactive form is an
    ``<iframe>`` of the viewer file: it keeps its own Content-Security-Policy and scripts
    apart from the page, and the ``sandbox`` attribute keeps its scripts from touching the
    page that embeds it.
    """
    if embed.format == "svg":
        style = _style(embed.width, embed.height) or "max-width:none;height:auto"
        return scroll_frame(url, embed.alt, style, href=url)
    src = html.escape(url, quote=True)
    alt = html.escape(embed.alt, quote=True)
    style = _style(embed.width or "100%", embed.height or DEFAULT_HEIGHT)
    return (f'<div class="tbgraph-frame">'
            f'<iframe class="tbgraph tbgraph-html" src="{src}" title="{alt}" '
            f'style="{style};border:1px solid #c8c8c8;border-radius:4px" loading="lazy" '
            f'sandbox="allow-scripts allow-downloads"></iframe>'
            f'<div class="tbgraph-open"><a href="{src}">Open the viewer on its own page</a>'
            f'</div></div>')


def figure_html(embed: Embed, url: str) -> str:
    """:func:`markup` inside a ``<figure>`` with the caption, for Markdown pages."""
    caption = (f"<figcaption>{html.escape(embed.caption)}</figcaption>" if embed.caption
               else "")
    return f'<figure class="tbgraph-figure">{markup(embed, url)}{caption}</figure>'
