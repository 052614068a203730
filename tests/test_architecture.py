"""The package reads as a pipeline: each stage imports only the stages before it.

The order is written down once, as an import-linter layers contract in ``pyproject.toml``
(``make lint`` runs it too).  These tests run it, show that it catches a backwards import, and
check two habits it cannot: no module takes another module's private names, and every import
made inside a function (to keep ``tbgraph --help`` and ``import graphviz_tb`` fast) says why.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: pytest brings the same parser as tomli
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "graphviz_tb"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
MYPY = Path(sys.executable).with_name("mypy")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.fail("import-linter is not installed: pip install -e '.[test]'")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--config", str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True, check=False)


def _mypy(root: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    if not MYPY.exists():
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    return subprocess.run([str(MYPY), "--config-file", str(root / "pyproject.toml"),
                           "--cache-dir", str(cache)], cwd=root, capture_output=True,
                          text=True, check=False)


def _copy_with(root: Path, code: str, module: str = "group/tree.py") -> Path:
    """A copy of the package (and its pyproject.toml) under ``root``, with ``code`` appended to
    one of its modules (the hierarchy's by default): a planted fault a checker must report."""
    shutil.copytree(PACKAGE, root / "graphviz_tb",
                    ignore=shutil.ignore_patterns("__pycache__", "viewer"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    planted = root / "graphviz_tb" / module
    planted.write_text(planted.read_text(encoding="utf-8") + code, encoding="utf-8")
    return root


def test_the_type_hints_agree_with_the_code(tmp_path: Path) -> None:
    """mypy finds nothing in the package; and it is not vacuous: a copy where the hierarchy
    hands a group's name (a string) where its depth (an int) is due is reported."""
    proc = _mypy(REPO, tmp_path / "cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    copy = _copy_with(tmp_path / "copy", "\n\ndef _wrong(g: Group) -> int:\n"
                                         "    return g.name\n")
    proc = _mypy(copy, tmp_path / "cache")
    assert proc.returncode != 0
    assert "tree.py" in proc.stdout and "Incompatible return value" in proc.stdout


def test_every_stage_imports_only_earlier_stages() -> None:
    proc = _lint(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout


def test_every_module_has_its_place_in_the_contract() -> None:
    """A module left out of the layers is checked by nothing: each one is named."""
    contract = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = contract["tool"]["importlinter"]["contracts"][0]["layers"]
    named = {name.strip() for layer in layers for name in layer.split("|")}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert modules - named == set()
    assert named - modules == set()


def test_a_backwards_import_breaks_the_contract(tmp_path: Path) -> None:
    """The contract is not vacuous: the hierarchy importing the layout (a later stage), even
    inside a function, is reported."""
    _copy_with(tmp_path, "\n\ndef _backwards() -> float:\n"
                         "    from ..layout.groups import PT  # a later stage\n"
                         "    return PT\n")
    proc = _lint(tmp_path)
    assert proc.returncode != 0
    assert "graphviz_tb.group is not allowed to import graphviz_tb.layout" in proc.stdout
    assert "graphviz_tb.group.tree -> graphviz_tb.layout.groups" in proc.stdout


@pytest.mark.parametrize("module", ["layout/scene.py", "draw/dot.py", "write/page.py"])
def test_the_layout_and_the_writers_never_read_the_view(tmp_path: Path, module: str) -> None:
    """They take the view's :class:`~graphviz_tb.picture.Picture`: importing ``view/`` (to
    decide again what is open, or the colouring) is reported, though the layers allow it."""
    _copy_with(tmp_path, "\n\ndef _decides_again() -> int:\n"
                         "    from ..view.opening import AUTO_DEPTH  # the view's own rule\n"
                         "    return AUTO_DEPTH\n", module)
    proc = _lint(tmp_path)
    assert proc.returncode != 0
    stage = module.split("/")[0]
    assert f"graphviz_tb.{stage} is not allowed to import graphviz_tb.view" in proc.stdout, \
        proc.stdout
    assert "pipeline stages import only earlier stages KEPT" in proc.stdout


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"), str(p)))
            for p in sorted(PACKAGE.rglob("*.py"))]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_module_takes_another_modules_private_names() -> None:
    """``from .x import _helper`` and ``x._helper`` reach past a module's interface."""
    found = []
    for path, tree in _modules():
        ours = set()  # names bound to our own modules by `from . import x` / `import ...`
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "")
                                                     .startswith("graphviz_tb")):
                for alias in node.names:
                    if _private(alias.name):
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: imports "
                                     f"{alias.name} from {node.module or '.'}")
                    ours.add(alias.asname or alias.name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in ours):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: uses "
                             f"{node.value.id}.{node.attr}")
    assert found == []


def test_every_import_inside_a_function_says_why() -> None:
    """Imports belong at the top of a module.  One made inside a function (to keep start-up
    fast, or because only one feature needs TensorFlow) carries a comment, on its line or on
    the line above the block of imports it starts."""
    found = []
    for path, tree in _modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                k = node.lineno - 1
                while k > 0 and lines[k - 1].strip().startswith(("from ", "import ")):
                    k -= 1  # to the first import of a block
                said = "#" in lines[node.lineno - 1] or lines[k - 1].strip().startswith("#") \
                    or ("#" in lines[k - 1] and "try:" in lines[k - 1])
                if not said:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: "
                                 f"{lines[node.lineno - 1].strip()}")
    assert found == []


#: The stages, in the order the driver runs them; each is a folder of the package.
STAGES = ("read", "model", "group", "view", "layout", "draw", "write")


def test_the_contract_reads_in_the_order_of_the_stages() -> None:
    """The layers contract lists the stage folders latest first, each one a folder of the
    package, with the driver above them all and the base modules below."""
    contract = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = contract["tool"]["importlinter"]["contracts"][0]["layers"]
    stages = [layer for layer in layers if layer in STAGES]
    assert stages == list(reversed(STAGES))
    assert all((PACKAGE / stage / "__init__.py").is_file() for stage in STAGES)
    assert layers.index("pipeline") == layers.index(stages[0]) - 1
    assert layers[-1] == "errors"


def _package_imports_in_functions() -> list[tuple[str, str]]:
    """(module file, module imported) for every import of our own package made inside a
    function."""
    found = []
    for path, tree in _modules():
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                    found.append((str(path.relative_to(REPO)), target))
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                        "graphviz_tb"):
                    found.append((str(path.relative_to(REPO)), node.module or ""))
                elif isinstance(node, ast.Import):
                    found.extend((str(path.relative_to(REPO)), a.name) for a in node.names
                                 if a.name.startswith("graphviz_tb"))
    return found


#: The text reports, which the API reads where they are made rather than through the driver.
REPORTS = ("graphviz_tb.write.info", "graphviz_tb.write.shape_table",
           "graphviz_tb.write.diff_markdown")


def test_only_the_api_imports_the_driver_and_only_lazily() -> None:
    """One lazy import boundary: the API imports the driver (and the text reports) inside
    its functions, and no other module of the package imports a module of the package inside
    a function, nor the driver at all."""
    lazy = _package_imports_in_functions()
    assert lazy, "the API imports the driver when a graph is loaded"
    assert {(path, target) for path, target in lazy} <= {
        ("graphviz_tb/api.py", target) for target in ("graphviz_tb.pipeline", *REPORTS)}
    eager = [(path, node.lineno) for path, tree in _modules() for node in tree.body
             if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("pipeline")]
    assert eager == []


def test_importing_the_package_does_not_import_the_driver() -> None:
    """``import graphviz_tb`` (and so ``tbgraph --help``) stays free of every stage."""
    code = ("import sys, graphviz_tb, graphviz_tb.cli\n"
            "print(sorted(m for m in sys.modules if m.startswith('graphviz_tb.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = set(ast.literal_eval(proc.stdout.strip()))
    stages = {m for m in loaded if m.split(".")[1] in (*STAGES, "pipeline")}
    assert stages == set(), stages


#: No source file of ours is longer than this.
MAX_LINES = 600


def test_no_source_file_is_over_600_lines() -> None:
    """Small files with one job each: every Python module and every viewer source (the
    style module the build generates aside)."""
    sources = [*PACKAGE.rglob("*.py"), *(PACKAGE / "draw" / "viewer" / "src").glob("*.js")]
    assert len(sources) > 60
    long = {str(p.relative_to(REPO)): n for p in sources if not p.name.endswith(".gen.js")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
