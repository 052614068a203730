"""Screenshot TensorBoard with the tbgraph tab open, as the README and the docs show it.

Starts ``tensorboard --logdir`` on the committed sample logdirs (``samples/logs``), opens it in
headless Chromium (Debian's, at 1400x900), opens the tab on a run and saves a PNG per theme:
``docs/images/tensorboard_tab.png`` (light) and ``tensorboard_tab_dark.png``.  Look at them
before committing them.

Usage: ``.venv/bin/python scripts/tensorboard_screenshot.py [--run costs] [--color
compute-time] [--out docs/images]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from tensorboard_server import query, start  # noqa: E402  (the tests' TensorBoard helper)

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
_VIEWER_READY = (
    "(part) => { const f = document.querySelector('iframe[name=tbgraph-view]');"
    " return f && f.contentWindow && f.contentWindow.location.href.includes(part)"
    " && f.contentWindow.tbgraph && f.contentWindow.tbgraph.ready === true; }")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", default="costs")
    parser.add_argument("--color", default="compute-time")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("tensorboard_screenshot.py: Debian's chromium is not on PATH")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        logdir = Path(tmp) / "logs"
        shutil.copytree(REPO / "samples" / "logs", logdir)
        board = start(["--logdir", str(logdir)], Path(tmp) / "tb")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, headless=True,
                                            args=CHROMIUM_ARGS)
                for theme in ("light", "dark"):
                    out = args.out / ("tensorboard_tab.png" if theme == "light"
                                      else "tensorboard_tab_dark.png")
                    shoot(browser, board.url, args.run, args.color, theme, out)
                    print(f"wrote {out}")
                browser.close()
        finally:
            board.stop()
    return 0


def shoot(browser: Any, url: str, run: str, color: str, theme: str, out: Path) -> None:
    """TensorBoard with the tab open on ``run`` (the viewer's first view), coloured by
    ``color``, in ``theme``."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{url}/#tbgraph")
    if theme == "dark":
        page.click("button[aria-label='Menu for changing light or dark theme']")
        page.click("[role=menuitem]:has-text('Dark')")
    tab = page.wait_for_selector("iframe[src*='plugin_entry.html?name=tbgraph']",
                                 timeout=60_000).content_frame()
    tab.wait_for_function("() => !!window.tbgraphTab", timeout=60_000)
    tab.select_option("select[aria-label='run']", run)
    tab.wait_for_function(_VIEWER_READY, arg=query(run=run), timeout=300_000)
    viewer = tab.wait_for_selector("iframe[name=tbgraph-view]").content_frame()
    viewer.wait_for_function(f"() => document.documentElement.dataset.theme === '{theme}'")
    if color:
        viewer.select_option("select[aria-label='colour by']", color)
    page.mouse.move(0, 0)
    page.wait_for_timeout(800)  # the minimap and TensorBoard's own transitions settle
    page.screenshot(path=str(out))
    page.close()


if __name__ == "__main__":
    raise SystemExit(main())
