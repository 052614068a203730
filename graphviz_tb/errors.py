"""Named exceptions and warnings, so callers (and the CLI) can tell bad input from bugs.

Every error raised for a user's input is a :class:`GraphvizTbError`; the CLI turns those into
one line on stderr and exit status 1.  Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import re

__all__ = [
    "CorruptRecordError",
    "ExecutableNotFound",
    "GraphvizTbError",
    "GraphvizTbWarning",
    "InputError",
    "NoGraphError",
    "SelectionError",
    "TensorFlowRequired",
    "printable",
    "terminal_line",
]


class GraphvizTbError(Exception):
    """Base class of every error caused by the user's input or environment."""


class InputError(GraphvizTbError):
    """The input is not a graph we can read (wrong format, empty, malformed).

    The message names the file and what is wrong with it.
    """


class CorruptRecordError(InputError):
    """A TFRecord (event file) record failed its CRC check or was cut short."""


class NoGraphError(InputError):
    """The input was readable but holds no graph (an empty logdir, a graph with no ops)."""


class SelectionError(GraphvizTbError):
    """``--run``/``--tag``/``--graph``/``--tags`` matched nothing among the graphs found."""


class TensorFlowRequired(GraphvizTbError):
    """A feature needs the optional TensorFlow extra, which is not installed."""

    def __init__(self, feature: str) -> None:
        super().__init__(
            f"{feature} needs TensorFlow; install it with: pip install 'graphviz_tb[tf]'"
        )


class ExecutableNotFound(GraphvizTbError):
    """No Graphviz can do what was asked: none is installed, or the one installed lacks a
    format (graphviz-pure draws no PDF).  The message says what to install."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (
            "no Graphviz found: neither Graphviz's 'dot' on PATH nor the graphviz-pure package; "
            "install one (pip install graphviz-pure, or Debian/Ubuntu: sudo apt-get install "
            "graphviz, macOS: brew install graphviz)"))


def printable(text: str, limit: int | None = None) -> str:
    r"""Text from a model file made safe for a terminal, cut to ``limit`` characters.

    Op names and messages quoting them are printed on stderr and by ``tbgraph info``; a name
    holding an escape sequence could clear the screen, retitle the window or fake a line of
    output.  Every non-printable character (controls, line breaks, bidi overrides, zero-width
    marks) is shown as its Python escape instead, so ``\x1b[2J`` prints as those characters.

    >>> printable("a\nb\x1b[2J\u202e")
    'a\\nb\\x1b[2J\\u202e'
    """
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                       for ch in text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


#: The longest run of non-blank characters :func:`terminal_line` keeps whole.
WORD_CHARS = 200

_LONG_WORD = re.compile(rf"\S{{{WORD_CHARS + 1},}}")


def _middle_cut(match: re.Match[str]) -> str:
    word = match.group()
    head = WORD_CHARS // 3
    return f"{word[:head]}…{word[len(word) - (WORD_CHARS - head - 1):]}"


def terminal_line(text: str) -> str:
    """A line for the terminal: :func:`printable`, and every word longer than
    :data:`WORD_CHARS` cut in its middle.

    The long words of our messages are op names, and scopes nested hundreds deep or generated
    names make them kilobytes long: printed whole, one warning filled the screen.  The start
    (the outer scopes) and, longer, the end (the op's own name) are what tell ops apart.

    >>> line = terminal_line("op " + "s/" * 1000 + "relu: odd")
    >>> len(line), line[:9], line[-14:]
    (207, 'op s/s/s/', '/s/s/relu: odd')
    """
    return _LONG_WORD.sub(_middle_cut, printable(text))


class GraphvizTbWarning(UserWarning):
    """Something in the input was odd but we could still draw it (dangling input, ...)."""
