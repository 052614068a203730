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

A finished wheel is opened and checked to hold both files.

The wheel also carries the compiled accelerator: the modules of :data:`COMPILED` (the
hierarchy, the model, the viewer's data: the loops every op and edge goes through) compiled
to C extensions by mypyc, which makes a render about a fifth faster.  Python imports an
extension before the ``.py`` beside it, and both give the same bytes (``tests/
test_packaging.py`` compares them).  The accelerator is optional:

* without a C compiler (or where mypyc fails) the wheel is pure Python, with one line
  saying so, and ``tbgraph`` works the same, only slower;
* ``TBGRAPH_PURE=1`` builds the pure wheel on purpose; ``TBGRAPH_COMPILE=require`` stops
  the build when the accelerator cannot be made (the tests use it);
* an editable install (``pip install -e``, what ``make`` sets up) is never compiled, so an
  edit to a module takes effect at once.

Hatchling runs this file (see ``[tool.hatch.build.targets.wheel.hooks.custom]`` in
pyproject.toml).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
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


#: The modules compiled by mypyc: the stages that walk every op and edge, from the model to
#: the viewer's data (measured: the HTML of NASNet-Large's training step in 0.78x the time
#: with the first 14, 0.96x that again with the rest).  A module here must not be
#: subclassed by one that is not (mypyc forbids it; Stub is why layout/parts.py is here).
COMPILED = (
    "graphviz_tb/model/graph.py", "graphviz_tb/model/builder.py",
    "graphviz_tb/group/tree.py", "graphviz_tb/group/scopes.py", "graphviz_tb/group/series.py",
    "graphviz_tb/group/templates.py", "graphviz_tb/group/wiring.py",
    "graphviz_tb/group/partition.py", "graphviz_tb/group/dataflow.py",
    "graphviz_tb/group/updates.py", "graphviz_tb/group/training.py", "graphviz_tb/layout/parts.py",
    "graphviz_tb/layout/text.py", "graphviz_tb/draw/viewer_ops.py",
    "graphviz_tb/draw/viewer_data.py",
    "graphviz_tb/model/build.py", "graphviz_tb/model/handles.py", "graphviz_tb/model/shapes.py",
    "graphviz_tb/model/calls.py", "graphviz_tb/read/attrs.py", "graphviz_tb/read/dtypes.py",
    "graphviz_tb/group/variables.py", "graphviz_tb/group/replicas.py",
    "graphviz_tb/group/build.py", "graphviz_tb/group/legend.py",
    "graphviz_tb/layout/groups.py", "graphviz_tb/layout/scene.py",
    "graphviz_tb/view/opening.py", "graphviz_tb/draw/dot.py", "graphviz_tb/write/page.py",
    "graphviz_tb/model/budget.py",
)


def compile_accelerator(root: Path, work: Path) -> dict[str, str]:
    """Compile :data:`COMPILED` with mypyc under ``work``; each extension made -> its path in
    the wheel.  Raises (or exits, as mypyc does on a type error) when it cannot."""
    from mypyc.build import mypycify  # the build's requirements have mypy (mypyc) ...
    from setuptools import Distribution  # ... and setuptools, whose build_ext compiles C
    from setuptools.command.build_ext import build_ext

    here = Path.cwd()
    os.chdir(root)  # mypyc names modules after the paths it is given
    try:
        extensions = mypycify(["--ignore-missing-imports", *COMPILED], opt_level="3",
                              debug_level="0",  # no paths of this build in the binaries
                              target_dir=str(work / "c"))
        command = build_ext(Distribution({"name": "graphviz_tb", "ext_modules": extensions}))
        command.build_lib, command.build_temp = str(work / "lib"), str(work / "temp")
        command.parallel = os.cpu_count() or 1
        command.ensure_finalized()
        command.run()
    finally:
        os.chdir(here)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    built = sorted((work / "lib").rglob(f"*{suffix}"))
    if len(built) <= len(COMPILED):  # one per module, and mypyc's shared runtime
        raise RuntimeError(f"mypyc made {len(built)} extensions for {len(COMPILED)} modules")
    return {str(p): p.relative_to(work / "lib").as_posix() for p in built}


class ViewerHook(BuildHookInterface):
    """Build the viewer when needed; ship it in the wheel although git ignores it.  Compile
    the accelerator into a wheel (never into an editable install) when it can be."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if stale(root):
            build_viewer(root)
        # An editable install reads them from this tree; a wheel carries them.
        if version == "standard":
            build_data["artifacts"].extend(f"/{p}" for p in PRODUCTS)
            self._accelerate(root, build_data)

    def _accelerate(self, root: Path, build_data: dict[str, Any]) -> None:
        """Add the compiled modules to the wheel, and tag it for this Python and platform;
        leave it pure when told to or when they cannot be made."""
        if os.environ.get("TBGRAPH_PURE") == "1":
            return
        self._work = tempfile.TemporaryDirectory(prefix="graphviz_tb-mypyc-")
        try:
            built = compile_accelerator(root, Path(self._work.name))
        except (Exception, SystemExit) as error:  # mypyc exits on a type error
            if os.environ.get("TBGRAPH_COMPILE") == "require":
                fail(f"the compiled accelerator could not be built: {error}")
            reason = str(error).strip().splitlines()[-1:] or [type(error).__name__]
            print(f"graphviz_tb: building without the compiled accelerator ({reason[0]}); "
                  "tbgraph works the same, only slower", file=sys.stderr)
            return
        build_data["force_include"].update(built)
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            work.cleanup()
        if version != "standard":
            return
        with zipfile.ZipFile(artifact_path) as wheel:
            missing = set(PRODUCTS) - set(wheel.namelist())
        if missing:
            Path(artifact_path).unlink()
            fail(f"the wheel lacks {', '.join(sorted(missing))}")

