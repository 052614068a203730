"""Draw every sample as a person will see it, into ``out/gallery/``: the static picture as PNG,
and the interactive viewer as it first opens, screenshotted in headless Chromium.

Look at these before resolving anything that changes what is drawn: does each label belong to
its edge, is the first view useful?  Run with ``make gallery``; extra paths on the command line
are drawn too (a model of your own, a bench graph).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]


def samples() -> list[Path]:
    """Every sample the demo draws."""
    found = [*SAMPLES.glob("*.pb"), *SAMPLES.glob("*.pbtxt"), *SAMPLES.glob("*.meta"),
             SAMPLES / "saved_model", *(SAMPLES / "logs").iterdir()]
    return sorted(p for p in found if p.exists())


def slug(path: Path) -> str:
    rel = path.resolve()
    try:
        rel = rel.relative_to(SAMPLES)
    except ValueError:
        rel = Path(rel.name)
    return str(rel).replace("/", "_").replace(".", "_")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="more graphs to draw")
    parser.add_argument("-o", "--out", type=Path, default=REPO / "out" / "gallery")
    args = parser.parse_args(argv)

    import graphviz_tb

    args.out.mkdir(parents=True, exist_ok=True)
    pages: list[tuple[Path, Path]] = []
    for path in [*samples(), *args.paths]:
        name = slug(path)
        graph = graphviz_tb.load(path)
        graph.render(args.out / f"{name}.png")
        html = args.out / f"{name}.html"
        graph.render(html)
        pages.append((html, args.out / f"{name}.viewer.png"))
        print(f"drew {path} -> {name}.png", flush=True)

    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium is not on PATH: no viewer screenshots", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for html, shot in pages:
            page.goto(html.resolve().as_uri())
            end = time.monotonic() + 30
            while not page.evaluate("window.tbgraph && window.tbgraph.ready === true"):
                if time.monotonic() > end:
                    print(f"{html.name}: the viewer did not get ready", file=sys.stderr)
                    return 1
                time.sleep(0.05)
            page.screenshot(path=str(shot))
            print(f"screenshot {shot.name}", flush=True)
        browser.close()
    print(f"open {args.out}/*.png and look at them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
