"""The wheel build hook: the HTML viewer is built before the package is, or the build fails.

The viewer (``graphviz_tb/draw/viewer/bundle.js`` and ``layout-worker.js.gz``, and the
TensorBoard tab ``graphviz_tb/tbplugin/tab.js``) is made from
npm packages pinned in ``package-lock.json`` by ``scripts/build-viewer.mjs``.  It is a build
product, never committed, so a wheel built from a clone, a git URL or the sdist has to make it:

* when the two files are there and newer than every source (``make viewer`` ran), they are
  used as they are;
* otherwise Node.js builds them: ``npm ci`` first when there is no ``node_modules`` (an
  existing one is the developer's, and is never reinstalled from here), then the bundler,
  which runs ``graphviz_tb/style.py`` and ``graphviz_tb/group/aside.py`` with this Python for
  the style and rules shared with the viewer;
* without Node.js the build stops with one message saying what to install.  It never makes a
  wheel whose ``tbgraph render -o x.html`` fails later.

A finished wheel is opened and checked to hold both files.  Hatchling runs this file (see
``[tool.hatch.build.targets.wheel.hooks.custom]`` in pyproject.toml).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, NoReturn

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

VIEWER = "graphviz_tb/draw/viewer"
#: What the bundler makes, relative to the project root.
PRODUCTS = (f"{VIEWER}/bundle.js", f"{VIEWER}/layout-worker.js.gz",
            "graphviz_tb/tbplugin/tab.js")
#: What it makes them from.
SOURCES = ("package.json", "package-lock.json", "scripts/build-viewer.mjs", f"{VIEWER}/src",
           "graphviz_tb/tbplugin/src", "graphviz_tb/style.py", "graphviz_tb/group/aside.py")


def fail(message: str) -> NoReturn:
    """Stop the build with one line on stderr (no traceback: it is not a bug in the build)."""
    raise SystemExit(f"graphviz_tb: {message}")


def stale(root: Path) -> bool:
    """Whether a product is missing or older than a source (the rule ``make viewer`` keeps)."""
    products = [root / p for p in PRODUCTS]
    if not all(p.is_file() for p in products):
        return True
    sources = [f for s in SOURCES for f in ((root / s).rglob("*") if (root / s).is_dir()
                                            else [root / s]) if f.is_file()]
    return max(f.stat().st_mtime for f in sources) > min(p.stat().st_mtime for p in products)


def _run(argv: list[str], root: Path, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False,
                          env=None if env is None else {**os.environ, **env})
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        fail(f"building the HTML viewer failed: {' '.join(argv[:2])} exited "
             f"{proc.returncode}: {tail}")


def build_viewer(root: Path) -> None:
    """Make the viewer's two files with Node.js, installing the pinned npm packages first
    when this tree has none."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        fail("building from source bundles the HTML viewer, which needs Node.js and npm on "
             "PATH; install them (Debian/Ubuntu: sudo apt-get install nodejs npm, macOS: brew "
             "install node), or install the built wheel (pip install graphviz_tb)")
    if not (root / "node_modules").exists():
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], root)
    # The bundler runs graphviz_tb/style.py and group/aside.py for what the viewer shares with
    # Python: with this interpreter, the one building the package (python3 may not be on PATH).
    _run([node, "scripts/build-viewer.mjs"], root, env={"PYTHON": sys.executable})
    missing = [p for p in PRODUCTS if not (root / p).is_file()]
    if missing:
        fail(f"the viewer build made no {', '.join(missing)}")


class ViewerHook(BuildHookInterface):
    """Build the viewer when needed; ship it in the wheel although git ignores it."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if stale(root):
            build_viewer(root)
        # An editable install reads them from this tree; a wheel carries them.
        if version == "standard":
            build_data["artifacts"].extend(f"/{p}" for p in PRODUCTS)

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if version != "standard":
            return
        with zipfile.ZipFile(artifact_path) as wheel:
            missing = set(PRODUCTS) - set(wheel.namelist())
        if missing:
            Path(artifact_path).unlink()
            fail(f"the wheel lacks {', '.join(sorted(missing))}")

