"""``pip install graphviz_tb`` as a user gets it: the sdist and wheel, built as a release is,
installed into a fresh virtualenv and run on a machine with neither Graphviz nor Node.js.

* ``python -m build`` makes the sdist (sources and the npm lock file, no build products) and,
  from it, the wheel, whose build hook bundles the HTML viewer with Node.js;
* the wheel built straight from the tree is the same file, byte for byte;
* the wheel carries the compiled accelerator (mypyc), and the installed package draws every
  sample and corpus graph byte for byte as the pure-Python modules do; without a C compiler
  the build falls back to a pure wheel, saying so in one line;
* without Node.js, building from source stops at build time with one line saying what to
  install, and leaves no wheel;
* the installed ``tbgraph`` draws SVG and an HTML viewer that gets ready in Chromium, first on
  a PATH with no ``dot`` and no ``node`` (graphviz-pure draws), then with ``dot`` (native);
* the installed package registers the tbgraph tab with TensorBoard, its built script inside.

Everything is built and installed in temporary directories removed at the end.
"""

from __future__ import annotations

import ast
import email
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_inputs import page_problems

import graphviz_tb

pytestmark = [pytest.mark.packaging, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]


def _compiled_modules() -> tuple[str, ...]:
    """The build hook's COMPILED, read from its source (importing it needs hatchling)."""
    hook = ast.parse((REPO / "scripts" / "hatch_build.py").read_text(encoding="utf-8"))
    (value,) = [node.value for node in hook.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["COMPILED"]]
    return tuple(ast.literal_eval(value))


COMPILED = _compiled_modules()
SAMPLE = REPO / "samples" / "mnist_tf1.pb"
VIEWER = "graphviz_tb/draw/viewer"
PRODUCTS = (f"{VIEWER}/bundle.js", f"{VIEWER}/layout-worker.js.gz",
            "graphviz_tb/tbplugin/tab.js")


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=900,
                          **kwargs)


def build(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -m build ARGS`` (the [test] extra has it; CI never skips for want of it)."""
    if importlib.util.find_spec("build") is None:
        message = "the 'build' package is not installed (pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return run([sys.executable, "-m", "build", *args], **kwargs)


def user_env(path: str) -> dict[str, str]:
    """A user's environment: this PATH, a home, and nothing of this test run (no PYTHONPATH
    pointing at the source tree, no forced engine)."""
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


@pytest.fixture(scope="module")
def dist() -> Iterator[dict[str, Path]]:
    """``python -m build``: the sdist, then the wheel built from the sdist."""
    with tempfile.TemporaryDirectory(prefix="tbgraph-dist-") as out:
        # The accelerator must be built here: a silent fallback would test the pure wheel.
        proc = build("--outdir", out, str(REPO), env={**os.environ, "TBGRAPH_COMPILE": "require"})
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        found = {"sdist": list(Path(out).glob("*.tar.gz")), "wheel": list(Path(out).glob("*.whl"))}
        assert all(len(v) == 1 for v in found.values()), found
        yield {k: v[0] for k, v in found.items()}


@pytest.fixture(scope="module")
def installed(dist: dict[str, Path]) -> Iterator[Path]:
    """A fresh virtualenv with the wheel and its dependencies installed by pip; its ``bin``."""
    with tempfile.TemporaryDirectory(prefix="tbgraph-venv-") as root:
        venv = Path(root) / "venv"
        proc = run([sys.executable, "-m", "venv", str(venv)])
        assert proc.returncode == 0, proc.stderr
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_USER")}
        proc = run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                    str(dist["wheel"])], env=env)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        yield venv / "bin"


def test_the_sdist_holds_sources_and_no_build_products(dist: dict[str, Path]) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for needed in ("pyproject.toml", "package.json", "package-lock.json",
                   "scripts/build-viewer.mjs", "scripts/hatch_build.py",
                   f"{VIEWER}/src/main.js", f"{VIEWER}/viewer.css", "graphviz_tb/version.py"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith("node_modules") or n in PRODUCTS]


def test_the_wheel_carries_the_built_viewer_and_its_dependencies(dist: dict[str, Path]
                                                                 ) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
        meta = email.message_from_bytes(wheel.read(
            f"graphviz_tb-{graphviz_tb.__version__}.dist-info/METADATA"))
        bundle = wheel.read(PRODUCTS[0]).decode("utf-8")
        worker = wheel.read(PRODUCTS[1])
        tab = wheel.read(PRODUCTS[2]).decode("utf-8")
    assert "window.tbgraph" in bundle and worker[:2] == b"\x1f\x8b"
    assert "export" in tab and "render" in tab
    assert not [n for n in names if "/viewer/src/" in n or "/tbplugin/src/" in n], \
        "the viewer's and the tab's sources stay out"
    assert meta["Version"] == graphviz_tb.__version__
    requires = meta.get_all("Requires-Dist") or []
    assert "graphviz-pure==0.2.2" in requires
    assert not [r for r in requires if r.split(";")[0].strip().startswith("graphviz>")]
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert re.fullmatch(rf"graphviz_tb-{re.escape(graphviz_tb.__version__)}-{tag}-{tag}-"
                        r"[a-z0-9_]+\.whl", dist["wheel"].name), dist["wheel"].name
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    compiled = {n.removesuffix(suffix) + ".py" for n in names if n.endswith(suffix)}
    assert set(COMPILED) <= compiled, "every module of the accelerator is compiled"
    assert set(COMPILED) <= names, "the pure-Python modules are there too"


def test_a_wheel_from_the_tree_is_the_wheel_from_the_sdist(dist: dict[str, Path],
                                                           tmp_path: Path) -> None:
    """A clone (or a git URL) builds the same wheel, byte for byte: same viewer, same files."""
    proc = build("--wheel", "--outdir", str(tmp_path), str(REPO))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / dist["wheel"].name).read_bytes() == dist["wheel"].read_bytes()


def test_building_from_source_without_node_stops_at_build_time(dist: dict[str, Path],
                                                               tmp_path: Path) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        sdist.extractall(tmp_path, filter="data")
    source = next(p for p in tmp_path.iterdir() if p.is_dir())
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = build("--wheel", "--outdir", str(tmp_path / "out"), str(source),
                 env={**os.environ, "PATH": str(empty)})
    assert proc.returncode != 0
    assert ("graphviz_tb: building from source bundles the HTML viewer, which needs Node.js "
            "and npm on PATH; install them") in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list((tmp_path / "out").glob("*.whl"))


def test_without_a_compiler_the_wheel_is_pure_python(tmp_path: Path) -> None:
    """``pip install`` on a machine with no C compiler still gives a working wheel: the
    build says in one line that it leaves the accelerator out, and the wheel is pure."""
    proc = build("--wheel", "--outdir", str(tmp_path), str(REPO),
                 env={**os.environ, "CC": "false", "TBGRAPH_COMPILE": ""})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = [line for line in (proc.stdout + proc.stderr).splitlines()
            if "without the compiled accelerator" in line]
    assert len(said) == 1 and said[0].startswith("graphviz_tb: building without the compiled"
                                                 " accelerator ("), said
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as opened:
        names = opened.namelist()
    assert set(COMPILED) <= set(names)
    assert not [n for n in names if n.endswith((".so", ".pyd"))]


def test_asked_for_pure_python_the_wheel_is_pure_and_says_nothing(tmp_path: Path) -> None:
    """``TBGRAPH_PURE=1`` leaves the accelerator out on purpose: no compiler is tried, so
    nothing is said, and the wheel is the pure one."""
    proc = build("--wheel", "--outdir", str(tmp_path), str(REPO),
                 env={**os.environ, "TBGRAPH_PURE": "1", "TBGRAPH_COMPILE": ""})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "accelerator" not in proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as opened:
        assert not [n for n in opened.namelist() if n.endswith((".so", ".pyd"))]


def test_the_compiled_package_draws_what_pure_python_draws(installed: Path,
                                                           tmp_path: Path) -> None:
    """Every sample and corpus graph, at two views, as DOT and as the viewer's data: the
    installed (compiled) package writes the bytes this tree's pure-Python modules write."""
    where = run([str(installed / "python"), "-c",
                 "import graphviz_tb.group.tree as t; print(t.__file__)"],
                env=user_env(os.environ["PATH"]), cwd=tmp_path)
    assert where.stdout.strip().endswith(sysconfig.get_config_var("EXT_SUFFIX")), where
    snapshot = str(REPO / "scripts" / "snapshot.py")
    env = {**user_env(os.environ["PATH"]), "TBGRAPH_ENGINE": "pure"}
    for python, out in ((sys.executable, "pure"), (str(installed / "python"), "compiled")):
        # The pure side imports this tree (PYTHONPATH), the compiled side the virtualenv.
        side = {**env, "PYTHONPATH": str(REPO)} if out == "pure" else env
        proc = run([python, snapshot, "write", str(tmp_path / out), "--no-steps"], env=side,
                   cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run([sys.executable, snapshot, "compare", str(tmp_path / "pure"),
                str(tmp_path / "compiled")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert proc.stdout.endswith(" outputs differ\n") and proc.stdout.startswith("0 of ")
    assert int(proc.stdout.split()[2]) >= 40, proc.stdout  # the samples alone give 40 or more


def _use(bin_dir: Path, browser: Any, path: str, work: Path) -> str:
    """Run the installed ``tbgraph`` on this PATH: SVG, then HTML opened in Chromium until it
    is ready and a group opens; returns ``tbgraph --version``."""
    env = user_env(path)
    where = run([str(bin_dir / "python"), "-c", "import graphviz_tb; print(graphviz_tb.__file__)"],
                env=env, cwd=work)
    assert where.stdout.startswith(str(bin_dir.parent)), where.stdout + where.stderr
    for fmt in ("svg", "html"):
        out = work / f"mnist.{fmt}"
        proc = run([str(bin_dir / "tbgraph"), "render", str(SAMPLE), "-o", str(out)], env=env,
                   cwd=work)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == f"wrote {out} ({out.stat().st_size:,} bytes)\n"
    assert "<svg" in (work / "mnist.svg").read_text(encoding="utf-8")
    assert page_problems(browser, work / "mnist.html") == []
    page = browser.new_page()
    try:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((work / "mnist.html").as_uri())
        page.wait_for_function("window.tbgraph && window.tbgraph.ready === true", timeout=30_000)
        # Opening a group lays it out in the page, with the Graphviz the wheel carries.
        assert page.evaluate("window.tbgraph.expand('train')") is not False
        assert errors == []
    finally:
        page.close()
    return run([str(bin_dir / "tbgraph"), "--version"], env=env, cwd=work).stdout


def test_the_installed_package_adds_the_tensorboard_tab(installed: Path, tmp_path: Path
                                                       ) -> None:
    """TensorBoard (a dependency, installed with it) finds the tbgraph plugin through the
    entry point the wheel declares; it loads, and the tab's built script is in the package."""
    code = (
        "import json\n"
        "from importlib import metadata\n"
        "from tensorboard.plugins import base_plugin\n"
        "from graphviz_tb.tbplugin.plugin import TAB_SCRIPT\n"
        "(entry,) = [e for e in metadata.entry_points(group='tensorboard_plugins')"
        " if e.name == 'tbgraph']\n"
        "plugin = entry.load()(base_plugin.TBContext(data_provider=None))\n"
        "print(json.dumps([entry.value, plugin.frontend_metadata().es_module_path,"
        " sorted(plugin.get_plugin_apps()), str(TAB_SCRIPT), TAB_SCRIPT.read_text()]))\n")
    proc = run([str(installed / "python"), "-c", code], env=user_env(str(installed)),
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    value, module, routes, where, script = json.loads(proc.stdout)
    assert (value, module) == ("graphviz_tb.tbplugin:TbgraphPlugin", "/index.js")
    assert routes == ["/diff", "/index.js", "/progress", "/runs", "/view"]
    assert where.startswith(str(installed.parent)) and "export" in script


@pytest.mark.browser
def test_the_installed_package_works_without_dot_or_node(installed: Path, browser: Any,
                                                         tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    assert shutil.which("dot", path=str(empty)) is None
    assert shutil.which("node", path=str(empty)) is None
    version = _use(installed, browser, str(empty), tmp_path)
    assert version.startswith(f"tbgraph {graphviz_tb.__version__}\n")
    assert f"graphviz-pure 0.2.2 (Graphviz 16.1.0), {installed}/graphviz-pure" in version
    pdf = tmp_path / "mnist.pdf"
    proc = run([str(installed / "tbgraph"), "render", str(SAMPLE), "-o", str(pdf)],
               env=user_env(str(empty)), cwd=tmp_path)
    assert proc.returncode == 1 and not pdf.exists()
    assert proc.stderr.startswith("tbgraph: error: PDF needs Graphviz's own programs")
    assert proc.stderr.count("\n") == 1


@pytest.mark.browser
@pytest.mark.dot
def test_the_installed_package_uses_dot_when_present(installed: Path, browser: Any,
                                                     tmp_path: Path) -> None:
    """Graphviz's own programs on PATH (still no Node.js): they are the first choice, and PDF
    works."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for program in ("dot", "neato"):
        found = shutil.which(program)
        assert found, f"{program} is not installed (make test installs Graphviz)"
        (tools / program).symlink_to(found)
    version = _use(installed, browser, str(tools), tmp_path)
    assert "Graphviz engine: dot " in version
    assert f", {tools}/dot; draws SVG, PNG, PDF" in version
    pdf = tmp_path / "mnist.pdf"
    proc = run([str(installed / "tbgraph"), "render", str(SAMPLE), "-o", str(pdf)],
               env=user_env(str(tools)), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert pdf.read_bytes().startswith(b"%PDF-")


def _readme_block(heading: str) -> list[str]:
    """The command lines of the first ``sh`` block under a README heading, comments cut."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines()
            if line.split("#", 1)[0].strip()]


def test_the_readme_keeps_the_set_up_contract_first() -> None:
    """A developer's two commands come first; a user's ``pip install`` path follows."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.index("\n## Set-up") < text.index("\n## Install") < text.index("\n## Use")
    assert _readme_block("Set-up") == ["make demo", "make test"]


def test_the_readme_points_only_inside_the_repository() -> None:
    """A reader of the README on PyPI or a fork has only the repository: every relative link
    and every path it names for reading lies inside it (it once sent readers to a design
    file beside the repository)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)", text)
    relative = [t for t in targets if "://" not in t]
    assert relative and all((REPO / t).exists() for t in relative), relative
    assert "../shared" not in text and "DESIGN.md" not in text


@pytest.mark.browser
def test_the_readme_user_path_works_in_a_fresh_virtualenv(installed: Path, browser: Any,
                                                          tmp_path: Path) -> None:
    """The README's install block, line by line, on a PATH with neither Graphviz nor Node.js:
    ``pip install graphviz_tb`` is the wheel installed above, then each ``tbgraph`` line runs
    as written, on a real model saved as ``model.pb``."""
    lines = _readme_block("Install")
    assert lines[0] == "pip install graphviz_tb"
    shutil.copy(SAMPLE, tmp_path / "model.pb")
    empty = tmp_path / "bin"
    empty.mkdir()
    for line in lines[1:]:
        program, *args = line.split()
        assert program == "tbgraph", line
        proc = run([str(installed / "tbgraph"), *args], env=user_env(str(empty)), cwd=tmp_path)
        assert proc.returncode == 0, f"{line}: {proc.stderr}"
    assert (tmp_path / "model.svg").read_bytes().startswith(b"<?xml")
    assert page_problems(browser, tmp_path / "model.html") == []
