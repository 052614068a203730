r"""How text from a model file is made safe before it reaches DOT, SVG or HTML: the one home
of these rules, below every stage, so the layout's DOT, the picture's DOT, the SVG titles and
the page all apply the same ones.  The examples here are the rules' specification (the suite
runs them); the viewer's copies (``cleanText`` in ``draw.js``, ``quote`` in ``layout.js``) are
checked against these functions by ``tests/test_escaping.py``.

Text is cleaned first (:func:`clean_text`: what is shown), then escaped for where it goes
(:func:`dot_string`, :func:`dot_lines`, :func:`dot_html`, :func:`markdown_code`, or
``html.escape`` in the SVG and page writers): markup characters survive cleaning and are the
escaping's job.
"""

from __future__ import annotations

import html
import re

__all__ = ["clean_text", "dot_html", "dot_lines", "dot_string", "markdown_code"]

#: Runs of backticks, which a Markdown code span's fence must outnumber.
_BACKTICKS = re.compile(r"`+")
#: What cannot be shown: C0 controls but tab and the newlines (which become ``↵``), DEL, the
#: C1 controls, the bidirectional marks, embeddings, overrides and isolates (they reorder
#: what follows), the line and paragraph separators, lone surrogates and the two
#: non-characters XML forbids.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                            r"\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def clean_text(text: str, limit: int | None = None) -> str:
    r"""Model strings made safe to show: control characters replaced, newlines as ``↵``, cut.

    Ordinary names, markup characters, quotes, backslashes, tabs and any printable character
    pass unchanged (escaping them is the writer's job):

    >>> clean_text('conv1/weights:0 <b>&"\'\\ naïve 名前\t')
    'conv1/weights:0 <b>&"\'\\ naïve 名前\t'

    Every newline is one ``↵``: ``\n``, ``\r\n`` and a lone ``\r`` (XML readers turn a lone
    ``\r`` into ``\n``, so left alone it would make an SVG title differ from the name it shows):

    >>> clean_text("a\nb\r\nc\rd")
    'a↵b↵c↵d'

    Other control characters, DEL, lone surrogates (a name decoded with ``surrogateescape``)
    and U+FFFE/U+FFFF become the replacement character:

    >>> clean_text("bell\x07 nul\x00 del\x7f esc\x1b \udc80 \ufffe")
    'bell� nul� del� esc� � �'

    So do the C1 controls and the marks, embeddings, overrides and isolates that reorder
    text (a name holding U+202E would be shown backwards from there on, looking like another
    name), and the line and paragraph separators:

    >>> clean_text("c1\x85\x9b bidi\u202egpj.exe\u202c \u2066x\u2069 \u200f \u061c \u2028")
    'c1�� bidi�gpj.exe� �x� � � �'

    Past ``limit`` characters (code points, as the viewer counts them too) the text is cut
    and ends in ``…``, ``limit`` characters in all:

    >>> clean_text("x" * 10, 5)
    'xxxx…'
    >>> clean_text("xxxxx", 5)
    'xxxxx'
    >>> len(clean_text("名" * 100_000, 300))
    300
    >>> clean_text("")
    ''
    """
    if not (text.isascii() and text.isprintable()):  # the common case has nothing to replace
        text = _CONTROL_CHARS.sub(
            "\ufffd", text.replace("\r\n", "↵").replace("\n", "↵").replace("\r", "↵"))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def dot_string(text: str) -> str:
    r"""A DOT quoted escString: backslashes and quotes escaped so Graphviz shows them as is.

    >>> print(dot_string('say "hi"'))
    "say \"hi\""

    A backslash is doubled, so Graphviz neither expands ``\N`` (the node's name) or ``\l``
    nor lets a trailing backslash escape the closing quote:

    >>> print(dot_string("\\N at C:\\dir\\"))
    "\\N at C:\\dir\\"

    Nothing else changes: markup, newlines (see :func:`dot_lines`) and an empty text.

    >>> dot_string("<b>&</b>\n")
    '"<b>&</b>\n"'
    >>> dot_string("")
    '""'
    """
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_lines(lines: list[str]) -> str:
    r"""Lines as one DOT quoted string (a tooltip), each newline written ``\n``.

    >>> print(dot_lines(['conv1 → "relu"', "shape: 3×3"]))
    "conv1 → \"relu\"\nshape: 3×3"
    """
    return dot_string("\n".join(lines)).replace("\n", "\\n")


def dot_html(text: str) -> str:
    """Text escaped for a Graphviz HTML-like label.

    Markup and quotes become character references:

    >>> dot_html('<b> & "x" it\\'s')
    '&lt;b&gt; &amp; &quot;x&quot; it&#x27;s'

    Never empty, because Graphviz rejects an empty ``<FONT></FONT>`` or ``<B></B>`` as a syntax
    error (an op with no name or no type), nor only tabs; and ``]`` as a character reference,
    because Graphviz 2.43 rejects a text of only ``]`` or ``]]`` too (found by the property
    tests and a fuzz of every character up to U+024F):

    >>> dot_html("")
    ' '
    >>> dot_html("\\t")
    ' '
    >>> dot_html("]]")
    '&#93;&#93;'
    """
    return html.escape(text.replace("\t", " "), quote=True).replace("]", "&#93;") or " "


def markdown_code(text: str, limit: int | None = None, *, table: bool = False) -> str:
    r"""Text as a Markdown code span (cleaned first, see :func:`clean_text`), which GitHub and
    any CommonMark reader show literally: no emphasis, link, HTML, ``@mention``, ``#123``
    reference or emoji can come out of a model's names inside one.

    >>> print(markdown_code("conv1/weights:0"))
    `conv1/weights:0`
    >>> print(markdown_code('<img src=x onerror="alert(1)"> *b* _i_ [l](u) @you #1 :+1:'))
    `<img src=x onerror="alert(1)"> *b* _i_ [l](u) @you #1 :+1:`

    Backticks in the text: the fence is one longer than its longest run, and a space pads a
    text that starts or ends with one (CommonMark strips one space from each side):

    >>> print(markdown_code("a`b``c"))
    ```a`b``c```
    >>> print(markdown_code("`x`"))
    `` `x` ``

    So does a text that starts and ends with spaces, which keeps them all:

    >>> print(markdown_code(" x "))
    `  x  `

    Newlines and control characters are cleaned, and the text cut to ``limit``:

    >>> print(markdown_code("new\nline\x1b[2J", 8))
    `new↵lin…`

    In a table cell, a pipe would end the cell, in a code span too (GitHub's tables): it is
    escaped, and the table takes the backslash away before the span is read, so ``\|`` shows
    ``|`` and ``\\|`` shows ``\|``:

    >>> print(markdown_code("a|b\\|c", table=True))
    `a\|b\\|c`

    A code span holds at least one character:

    >>> print(markdown_code(""))
    ` `
    """
    text = clean_text(text, limit) or " "
    if table:
        text = text.replace("|", "\\|")
    runs = _BACKTICKS.findall(text)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    if text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip(" ")):
        text = f" {text} "
    return f"{fence}{text}{fence}"
