"""The viewer's page: one self-contained, offline HTML document holding the viewer, its layout
worker and the graph data (:mod:`graphviz_tb.draw.viewer_data`), its integer columns packed as
base64 typed arrays and the whole deflated, under a content security policy that lets nothing
load."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import sys
import zlib
from array import array
from collections import deque
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from ..draw.viewer_data import VIEWER_DIR, finite
from ..errors import GraphvizTbError
from ..escaping import clean_text

if TYPE_CHECKING:
    from collections.abc import Iterator
    from concurrent.futures import Future

    from ..options import StyleOptions

__all__ = ["PageEntry", "page_data", "page_json", "page_pieces", "write_page"]


#: The integer columns a page carries packed (see :func:`_packed`).
_PACKED = ("parent", "nb", "kind", "type", "sz", "tpl", "dev", "dt", "nops", "attr", "out", "cap",
           "ag", "as", "ad", "an", "ac", "ar", "ab", "al", "aw", "ae", "es", "ed", "ec", "ei",
           "carry")


#: Array typecodes for integers (int8, int16, int32), narrowest first.
_INT_CODES = ("b", "h", "i")


_PAGE_DATA = re.compile(
    r'<script type="application/octet-stream" id="tbgraph-data">([^<]*)</script>')

#: zlib's fastest level: JSON of a million-op graph (167 MB) deflates to a sixth in about a
#: second; the default level would take four times as long for a tenth less.
_DEFLATE_LEVEL = 1


def _json(value: Any) -> str:
    """Compact JSON in ASCII: every other character escaped, so no lone surrogate (which UTF-8
    cannot encode) nor U+2028/U+2029 reaches the page, with no pass over the text to find them
    (that pass, and encoding the text to UTF-8, cost more than the escapes)."""
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return json.dumps(finite(value), separators=(",", ":"))


def _deflated(value: dict[str, Any]) -> Iterator[str]:
    """A page's data (:func:`_json_pieces`, ASCII JSON) deflated (zlib format) as base64, in
    pieces, which the page inflates with the browser's own DecompressionStream.  Deflated, a
    page is a fifth of its JSON's size (a million-op graph's 167 MB), and base64 needs no
    escaping inside ``<script>``.

    The JSON is deflated piece by piece and each piece's output encoded as it comes (base64
    of whole 3-byte groups joins into the base64 of the whole), for a writer to write it as it
    comes: the whole JSON, its deflated bytes and their base64, each held whole, were the
    largest allocations of a big graph's page.  ``value`` is emptied as it is written (see
    :func:`_json_pieces`).

    Pieces are deflated on a second thread while the next are encoded: zlib lets go of the
    interpreter as it works, so the two overlap (each was half of a million-op page's
    writing).  Encoding runs ahead by up to :data:`_AHEAD` bytes of JSON, as the pieces' sizes
    are uneven (a packed column is quick to encode and slow to deflate, a list of names the
    other way round).  One compressor deflates them one after another, in order, so the bytes
    are those of deflating the whole at once.
    """
    from concurrent.futures import ThreadPoolExecutor  # here: 10 ms that only a page needs

    deflate = zlib.compressobj(_DEFLATE_LEVEL)
    pending = b""
    with ThreadPoolExecutor(max_workers=1) as pool:  # one worker: the pieces stay in order
        running: deque[tuple[Future[bytes], int]] = deque()
        ahead = 0
        for piece in _json_pieces(value, "graphs" not in value):
            data = piece.encode("ascii")
            running.append((pool.submit(deflate.compress, data), len(data)))
            ahead += len(data)
            # Take what is deflated; wait only while too far ahead.
            while running and (running[0][0].done() or ahead > _AHEAD):
                done, size = running.popleft()
                ahead -= size
                pending += done.result()
            whole = len(pending) - len(pending) % 3
            if whole:
                yield base64.b64encode(pending[:whole]).decode("ascii")
                pending = pending[whole:]
        for done, _ in running:
            pending += done.result()
    yield base64.b64encode(pending + deflate.flush()).decode("ascii")


#: How far (bytes of JSON) :func:`_deflated` encodes ahead of the deflating.
_AHEAD = 1 << 24


def _json_pieces(value: dict[str, Any], graph: bool) -> Iterator[str]:
    """:func:`_json` of a page's data in pieces that join to it: one value at a time, a
    logdir page's ``graphs`` one graph at a time.  The data of a ``graph`` has its integer
    columns packed (:func:`_packed`) as each is written, so no more than one is held packed.
    Each value is taken out of ``value`` as it is written, so what is written is let go (a
    million-op page's columns are 300 MB)."""
    yield "{"
    for i, key in enumerate(list(value)):
        item = value.pop(key)
        yield ("," if i else "") + _json(key) + ":"
        if key == "graphs" and not graph:
            yield "["
            for j in range(len(item)):
                if j:
                    yield ","
                yield from _json_pieces(item[j], True)
                item[j] = None  # written
            yield "]"
        elif graph and key in _PACKED:
            yield _json(_packed(item))
        else:
            yield from _json_list(item) if type(item) is list else (_json(item),)
    yield "}"


#: How many items of a list :func:`_json_list` writes at a time.
_LIST_PIECE = 1 << 16


def _json_list(items: list[Any]) -> Iterator[str]:
    """:func:`_json` of a list in pieces of :data:`_LIST_PIECE` items: a million-op page's
    names, written whole, were one string of 30 MB and its bytes as many again."""
    if len(items) <= _LIST_PIECE:
        yield _json(items)
        return
    yield "["
    for start in range(0, len(items), _LIST_PIECE):
        yield ("," if start else "") + _json(items[start:start + _LIST_PIECE])[1:-1]
    yield "]"


def _little_endian(values: array[Any]) -> array[Any]:
    """``values`` in place as little-endian (as the page reads them), whatever this machine's
    own order."""
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _packed(column: Any) -> Any:
    """An integer column packed: its array typecode (the narrowest of int8, int16, int32 that
    holds it) then base64 of its little-endian bytes; the column itself beyond int32 (a
    hostile file's output slot), which stays JSON.

    A column of NASNet-Large is 60,000 to 370,000 numbers: as JSON they would be most of the
    page's encoding in Python and of its parsing in the browser, which wants typed arrays
    anyway.  Packed, Python writes each with a few C calls and the page views the decoded
    bytes as a typed array.
    """
    packed = _narrowed(column)
    return column if packed is None else packed[0] + base64.b64encode(packed[1]).decode("ascii")


#: From how many values numpy narrows a 4-byte column (:func:`_narrowed`): below, importing
#: it costs more than it saves.
_NUMPY_FROM = 250_000


def _narrowed(column: Any) -> tuple[str, bytes] | None:
    """A column's narrowest typecode (of :data:`_INT_CODES`) and its values' little-endian
    bytes in it; None beyond int32.

    A 4-byte array of :data:`_NUMPY_FROM` values or more is narrowed by numpy, from its
    minimum and maximum (two passes in C over the bytes, without a Python int per value:
    a million-op page's columns took a second the other way).  Any other column goes
    through ``array``, which checks the range in C value by value, trying each typecode.
    """
    if isinstance(column, array) and column.typecode == "i" and len(column) >= _NUMPY_FROM:
        import numpy as np  # imported for big pages only: see _NUMPY_FROM

        wide = np.frombuffer(column, dtype=np.int32)
        low, high = int(wide.min()), int(wide.max())
        code = "b" if low >= -128 and high < 128 else "h" if low >= -32768 and high < 32768 \
            else "i"
        return code, wide.astype(f"<i{array(code).itemsize}").tobytes()
    for code in _INT_CODES:
        try:
            values = array(code, column)
        except OverflowError:
            continue
        return code, _little_endian(values).tobytes()
    return None


def _unpack(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`_packed`, column by column."""
    out = dict(data)
    for key in _PACKED:
        if isinstance(data[key], str):
            values = array(data[key][0], base64.b64decode(data[key][1:]))
            out[key] = _little_endian(values).tolist()
    return out


def page_json(page: str) -> str:
    """The JSON a viewer page embeds, inflated, its integer columns still packed."""
    match = _PAGE_DATA.search(page)
    if match is None:
        raise GraphvizTbError("no embedded tbgraph data in this page")
    return zlib.decompress(base64.b64decode(match.group(1))).decode("ascii")


def page_data(page: str) -> dict[str, Any]:
    """The data embedded in a viewer page, as :func:`build_data` made it (or, for a page of
    several graphs, as :func:`render_pages` assembled it): what benchmarks and tests read
    back from a written page."""
    data = json.loads(page_json(page))
    if "graphs" in data:
        return {**data, "graphs": [_unpack(g) for g in data["graphs"]]}
    return _unpack(data)


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _read_viewer() -> tuple[str, str, str]:
    """The viewer's script, its style, and its layout worker (gzipped, as base64)."""
    bundle, worker = VIEWER_DIR / "bundle.js", VIEWER_DIR / "layout-worker.js.gz"
    missing = [p for p in (bundle, worker) if not p.is_file()]
    if missing:
        raise GraphvizTbError(
            f"the HTML viewer is not built ({', '.join(map(str, missing))} missing); run "
            "'make viewer' (it needs Node.js and npm) in the graphviz_tb source tree"
        )
    script = bundle.read_text(encoding="utf-8")
    style = (VIEWER_DIR / "viewer.css").read_text(encoding="utf-8")
    # A bundle is inlined between <script> tags: it must not close them itself.
    script = re.sub(r"</(script)", r"<\\/\1", script, flags=re.IGNORECASE)
    return script, style, base64.b64encode(worker.read_bytes()).decode("ascii")


@dataclass(frozen=True)
class PageEntry:
    """One graph of a logdir as the page's picker lists it: its run, its name in the run,
    and which embedded graph draws it (a graph several runs share is embedded once)."""

    run: str
    name: str
    graph: int


def write_page(data: dict[str, Any], options: StyleOptions, title: str) -> str:
    """The HTML document around the embedded data (:func:`page_pieces`, joined)."""
    return "".join(page_pieces(data, options, title))


def page_pieces(data: dict[str, Any], options: StyleOptions, title: str) -> Iterator[str]:
    """The HTML document around the embedded data: style, viewer, layout worker, policy; in
    pieces that join to it, the data's made as they are asked for, so a writer holds one at a
    time (a million-op page is 36 MB, and joined then encoded it was held three times over).
    The viewer is read here and now: a missing one fails before any file is begun.  ``data``
    is the page's to let go: it is emptied as it is written."""
    script, style, worker = _read_viewer()
    title = html.escape(clean_text(title, 200), quote=True)
    csp = "; ".join([
        "default-src 'none'",
        f"script-src {_csp_hash(script)} 'wasm-unsafe-eval'",
        f"style-src {_csp_hash(style)}",
        "img-src data: blob:",
        "connect-src 'none'",
        "font-src 'none'",
        "media-src 'none'",
        "object-src 'none'",
        "frame-src 'none'",
        "worker-src blob:",  # Graphviz lays out in a worker started from the page's own code
        "manifest-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ])
    theme = "dark" if options.theme == "dark" else "light"
    head = (
        "<!DOCTYPE html>\n"
        f"<html lang=\"en\" data-theme=\"{theme}\">\n<head>\n"
        "<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"graphviz_tb\">\n"
        f"<title>{title}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        "<div id=\"app\"><noscript>This graph viewer needs JavaScript.</noscript></div>\n"
        "<script type=\"application/octet-stream\" id=\"tbgraph-data\">"
    )
    tail = (
        "</script>\n"
        # Inert data (never run as it is): the worker's script, decoded by the viewer.
        f"<script type=\"application/octet-stream\" id=\"tbgraph-worker\">{worker}</script>\n"
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )
    return chain((head,), _deflated(data), (tail,))
