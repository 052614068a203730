"""The one place Graphviz runs, behind one small interface.

The pipeline asks Graphviz two things: lay out many small graphs (one per open group) and
answer each with its ``json0`` (positions, splines, label places), and draw one positioned
document (every coordinate decided already) as SVG, PNG or PDF with ``neato -n2``.  An
:class:`Engine` does both.  :func:`current` picks the engine once per process.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess

from .errors import ExecutableNotFound, GraphvizTbError

__all__ = ["DRAW_FORMATS", "Engine", "NativeEngine", "current"]

#: What :meth:`Engine.draw` can produce.
DRAW_FORMATS = ("svg", "png", "pdf")


class Engine:
    """A Graphviz: ``layout`` many graphs, ``draw`` one positioned graph."""

    #: A short name for messages and ``tbgraph --version``.
    name = "graphviz"

    def version(self) -> str:
        """The Graphviz version this engine runs."""
        raise NotImplementedError

    def layout(self, sources: list[str]) -> list[dict]:
        """Lay out each DOT text with ``dot``; one parsed ``json0`` object per source.

        Raises :class:`GraphvizTbError` when Graphviz refuses any of them.
        """
        raise NotImplementedError

    def draw(self, dot: str, fmt: str) -> bytes:
        """Draw a positioned DOT document (``neato -n2``) as ``svg``, ``png`` or ``pdf``."""
        raise NotImplementedError


class NativeEngine(Engine):
    """The ``dot`` and ``neato`` programs on PATH: the first choice when present.

    Several small graphs go to one ``dot`` process (it reads graphs one after another from
    one input), which saves a process start per group.
    """

    name = "dot"

    def version(self) -> str:
        proc = self._run(["dot", "-V"], b"")
        text = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        return text.split("version", 1)[-1].strip().split(" ")[0] if "version" in text else text

    def layout(self, sources: list[str]) -> list[dict]:
        proc = self._run(["dot", "-Tjson0"], "\n".join(sources).encode("utf-8"))
        if proc.returncode != 0:
            raise GraphvizTbError(f"Graphviz dot failed: {_last_line(proc.stderr)}")
        text = proc.stdout.decode("utf-8")
        decoder = json.JSONDecoder()
        results, pos = [], 0
        while len(results) < len(sources):
            while pos < len(text) and text[pos].isspace():
                pos += 1
            obj, pos = decoder.raw_decode(text, pos)
            results.append(obj)
        return results

    def draw(self, dot: str, fmt: str) -> bytes:
        proc = self._run(["neato", "-n2", f"-T{fmt}"], dot.encode("utf-8"))
        if proc.returncode != 0 or not proc.stdout:
            raise GraphvizTbError(f"Graphviz failed to draw {fmt}: {_last_line(proc.stderr)}")
        return proc.stdout

    @staticmethod
    def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(argv, input=data, capture_output=True, check=False)
        except FileNotFoundError:
            raise ExecutableNotFound() from None


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no output"


@functools.cache
def current() -> Engine:
    """The engine this process uses: Graphviz's own programs when ``dot`` is on PATH.

    Raises :class:`ExecutableNotFound` when there is none.
    """
    if shutil.which("dot") is None:
        raise ExecutableNotFound()
    return NativeEngine()
