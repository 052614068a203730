"""Viewer pages in tests: opening one in the test browser, and the names of its members."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["open_viewer", "page_names", "poll"]


def open_viewer(browser: Any, graph: Any, path: Path, options: Any = None) -> Any:
    """The graph's viewer page, written to ``path`` and opened in ``browser`` once it is
    ready; its script errors collect in ``page.errors``."""
    graph.render(path, options=options)
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    poll(page, "window.tbgraph && window.tbgraph.ready === true", timeout=30,
         why=lambda: f"the viewer did not get ready: {errors}")
    page.errors = errors
    return page


def poll(frame: Any, expression: str, timeout: float = 10,
         why: Callable[[], str] | None = None) -> Any:
    """Evaluate ``expression`` in a page or frame until it is truthy, and return its value.
    (Playwright's ``wait_for_function`` evaluates strings inside the page, which the
    viewer's Content-Security-Policy rightly forbids.)  ``why()`` says what failed."""
    end = time.monotonic() + timeout
    while True:
        value = frame.evaluate(expression)
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(why() if why else f"timed out waiting for {expression}")
        time.sleep(0.05)


def page_names(data: dict[str, Any]) -> list[str]:
    """Each viewer member's full name, by its index, as the page builds them from the data
    (``ns``, each member's name below its base ``nb``)."""
    names = [""]
    for i in range(1, len(data["parent"])):
        base = data["nb"][i]
        names.append(data["ns"][i] if base < 0 else f"{names[base]}/{data['ns'][i]}")
    return names
