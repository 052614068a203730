"""The one place Graphviz runs, behind one small interface.

The pipeline asks Graphviz two things: lay out many small graphs (one per open group) and
answer each with its ``json0`` (positions, splines, label places), and draw one positioned
document (every coordinate decided already) as SVG, PNG or PDF with ``neato -n2``.  An
:class:`Engine` does both.  There are two:

* :class:`NativeEngine`, Graphviz's own ``dot`` and ``neato`` on PATH (a system package).  It
  is the first choice when present: it draws every format, PDF included.
* :class:`PureEngine`, ``graphviz-pure``: a port of Graphviz 16.1 that pip installs with this
  package as one static program, so ``pip install graphviz_tb`` lays out and draws SVG and PNG
  on a machine with no Graphviz (a notebook server, a shared cluster).  It has no PDF.

Both speak the same command line (several graphs on stdin for ``-Tjson0``, ``-n2`` drawing),
so they share :class:`CommandEngine`.  :func:`current` picks one per process; the environment
variable ``TBGRAPH_ENGINE`` (``native`` or ``pure``) forces the choice, which is how the tests
run the picture oracle through both.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import ExecutableNotFound, GraphvizTbError

__all__ = [
    "DRAW_FORMATS",
    "ENGINE_VARIABLE",
    "INSTALL_GRAPHVIZ",
    "CommandEngine",
    "Engine",
    "NativeEngine",
    "PureEngine",
    "current",
    "pure_executable",
]

#: What :meth:`Engine.draw` can produce, at most (an engine's ``formats`` may be fewer).
DRAW_FORMATS = ("svg", "png", "pdf")
#: The environment variable forcing the engine: ``native`` or ``pure`` (unset: native first).
ENGINE_VARIABLE = "TBGRAPH_ENGINE"
#: How to get Graphviz's own programs, for messages.
INSTALL_GRAPHVIZ = ("install Graphviz (Debian/Ubuntu: sudo apt-get install graphviz, "
                    "macOS: brew install graphviz)")
_PURE = "graphviz-pure"


class Engine:
    """A Graphviz: ``layout`` many graphs, ``draw`` one positioned graph."""

    #: A short name for messages, ``tbgraph --version`` and ``tbgraph info --json``.
    name = "graphviz"
    #: The formats :meth:`draw` produces.
    formats: tuple[str, ...] = DRAW_FORMATS

    def version(self) -> str:
        """The version of this engine's program."""
        raise NotImplementedError

    def describe(self) -> dict[str, object]:
        """What runs: name, version, the Graphviz release it implements, program, formats."""
        return {"name": self.name, "version": self.version(), "formats": list(self.formats)}

    def require(self, fmt: str) -> None:
        """Raise :class:`ExecutableNotFound` unless :meth:`draw` can produce ``fmt``, so a
        render fails before its layout, not after."""
        if fmt in DRAW_FORMATS and fmt not in self.formats:
            raise ExecutableNotFound(
                f"{fmt.upper()} needs Graphviz's own programs ('dot' on PATH), and the engine "
                f"in use, {self.name}, draws {' and '.join(f.upper() for f in self.formats)} "
                f"only; {INSTALL_GRAPHVIZ}, or write one of those formats")

    def arrow_pullback(self, width: float) -> float:
        """How far behind an edge's ``e,x,y`` point this Graphviz draws the arrowhead's point
        for a line ``width`` wide: Graphviz 7 and later pull it back by the mitre of its
        stroke, so the visible point lands on the outline (half the width over the sine of
        the arrowhead's half-angle, whose tangent is 0.35); 2.43 draws it at the point."""
        if self._graphviz_major < 7:
            return 0.0
        return width / 2 * math.hypot(1, 0.35) / 0.35

    @functools.cached_property
    def _graphviz_major(self) -> int:
        """The major release of the Graphviz this implements (0 if unknown): asked once, not
        once per straight edge of a row layout."""
        major = re.match(r"\d+", str(self.describe().get("graphviz", self.version())))
        return int(major.group()) if major else 0

    def layout(self, sources: list[str]) -> list[dict]:
        """Lay out each DOT text with ``dot``; one parsed ``json0`` object per source.

        Raises :class:`GraphvizTbError` when Graphviz refuses any of them.
        """
        raise NotImplementedError

    def draw(self, dot: str, fmt: str) -> bytes:
        """Draw a positioned DOT document (``neato -n2``) as ``svg``, ``png`` or ``pdf``."""
        raise NotImplementedError


class CommandEngine(Engine):
    """A Graphviz run as a program: what :class:`NativeEngine` and :class:`PureEngine` share.

    Several small graphs go to one process (it reads graphs one after another from one
    input), which saves a process start per group; the layout batches run in threads, each its
    own process, so any number can run at once.
    """

    def __init__(self, program: str) -> None:
        #: The program that lays out (``dot``, or graphviz-pure's one binary).
        self.program = program
        self._version_text: str | None = None

    def layout_argv(self) -> list[str]:
        """The command line that lays out graphs read from stdin as ``json0``."""
        raise NotImplementedError

    def draw_argv(self, fmt: str) -> list[str]:
        """The command line that draws a positioned document read from stdin."""
        raise NotImplementedError

    def version_text(self) -> str:
        """The program's own ``-V`` line (asked once)."""
        if self._version_text is None:
            proc = self._run([self.program, "-V"], b"")
            self._version_text = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        return self._version_text

    def version(self) -> str:
        found = re.search(r"version (\S+)", self.version_text())
        return found.group(1) if found else "unknown"

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "path": self.program}

    def layout(self, sources: list[str]) -> list[dict]:
        proc = self._run(self.layout_argv(), "\n".join(sources).encode("utf-8"))
        if proc.returncode != 0:
            raise GraphvizTbError(f"Graphviz ({self.name}) failed: {_last_line(proc.stderr)}")
        text = proc.stdout.decode("utf-8")
        decoder = json.JSONDecoder()
        results: list[dict] = []
        pos = 0
        while len(results) < len(sources):
            while pos < len(text) and text[pos].isspace():
                pos += 1
            obj, pos = decoder.raw_decode(text, pos)
            results.append(obj)
        return results

    def draw(self, dot: str, fmt: str) -> bytes:
        self.require(fmt)
        proc = self._run(self.draw_argv(fmt), dot.encode("utf-8"))
        if proc.returncode != 0 or not proc.stdout:
            raise GraphvizTbError(f"Graphviz ({self.name}) failed to draw {fmt}: "
                                  f"{_last_line(proc.stderr)}")
        return proc.stdout

    @staticmethod
    def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(argv, input=data, capture_output=True, check=False)
        except FileNotFoundError:
            raise ExecutableNotFound(f"{argv[0]} is gone; {INSTALL_GRAPHVIZ}") from None


class NativeEngine(CommandEngine):
    """Graphviz's own ``dot`` and ``neato`` on PATH: the first choice when present."""

    name = "dot"

    def __init__(self, dot: str = "dot", neato: str = "neato") -> None:
        super().__init__(dot)
        self.neato = neato

    def layout_argv(self) -> list[str]:
        return [self.program, "-Tjson0"]

    def draw_argv(self, fmt: str) -> list[str]:
        return [self.neato, "-n2", f"-T{fmt}"]

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "graphviz": self.version()}


class PureEngine(CommandEngine):
    """``graphviz-pure``, installed by pip with this package: Graphviz without a system package.

    It measures text with built-in font tables and warns on stderr about every non-ASCII
    character (the ``×`` of ``?×784``) on every run; ``-q`` keeps those warnings quiet (errors
    still show).  It writes SVG and PNG, not PDF.
    """

    name = _PURE
    formats = ("svg", "png")

    def layout_argv(self) -> list[str]:
        return [self.program, "-q", "-Tjson0"]

    def draw_argv(self, fmt: str) -> list[str]:
        return [self.program, "-q", "-Kneato", "-n2", f"-T{fmt}"]

    def describe(self) -> dict[str, object]:
        # "graphviz-pure version 0.2.2 (Rust port of Graphviz 16.1.0)"
        found = re.search(r"Graphviz (\d[\w.]*)", self.version_text())
        return {**super().describe(), "graphviz": found.group(1) if found else "unknown"}


def pure_executable() -> str | None:
    """The graphviz-pure program, wherever pip put it.

    pip installs it as a script, in the environment's ``bin`` (or ``~/.local/bin``), which is
    on PATH only while that environment is activated; ``.venv/bin/tbgraph`` run by its full
    path activates nothing.  So ask the installed distribution where its file is, and look on
    PATH only when no distribution is installed (a system copy).
    """
    # Imported only when no native dot was found: reading metadata slows start-up.
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(_PURE)
    except PackageNotFoundError:
        return shutil.which(_PURE)
    for file in dist.files or ():
        if file.name in (_PURE, f"{_PURE}.exe"):
            path = Path(str(dist.locate_file(file))).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return shutil.which(_PURE)


@functools.cache
def current() -> Engine:
    """The engine this process uses: Graphviz's own programs when ``dot`` and ``neato`` are on
    PATH, else graphviz-pure; ``TBGRAPH_ENGINE=native`` or ``pure`` allows only that one.

    Raises :class:`ExecutableNotFound` when there is none, and :class:`GraphvizTbError` for a
    ``TBGRAPH_ENGINE`` that names neither.
    """
    choice = os.environ.get(ENGINE_VARIABLE, "").strip().lower()
    if choice not in ("", "native", "pure"):
        raise GraphvizTbError(f"{ENGINE_VARIABLE}={choice!r} names no engine: use 'native' "
                              f"(Graphviz's dot on PATH) or 'pure' (graphviz-pure), or unset it")
    if choice != "pure":
        dot, neato = shutil.which("dot"), shutil.which("neato")
        if dot and neato:
            return NativeEngine(dot, neato)
        if choice == "native":
            raise ExecutableNotFound(f"{ENGINE_VARIABLE}=native, but Graphviz's 'dot' and "
                                     f"'neato' are not on PATH; {INSTALL_GRAPHVIZ}")
    program = pure_executable()
    if program is None:
        raise ExecutableNotFound()
    return PureEngine(program)


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no output"
