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


def _copy_with(root: Path, code: str) -> Path:
    """A copy of the package (and its pyproject.toml) under ``root``, with ``code`` appended to
    its hierarchy module: a planted fault a checker must report."""
    shutil.copytree(PACKAGE, root / "graphviz_tb",
                    ignore=shutil.ignore_patterns("__pycache__", "viewer"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    hierarchy = root / "graphviz_tb" / "hierarchy.py"
    hierarchy.write_text(hierarchy.read_text(encoding="utf-8") + code, encoding="utf-8")
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
    assert "hierarchy.py" in proc.stdout and "Incompatible return value" in proc.stdout


def test_every_stage_imports_only_earlier_stages() -> None:
    proc = _lint(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 kept, 0 broken" in proc.stdout


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
                         "    from .layout import PT  # a later stage\n"
                         "    return PT\n")
    proc = _lint(tmp_path)
    assert proc.returncode != 0
    assert "graphviz_tb.hierarchy is not allowed to import graphviz_tb.layout" in proc.stdout


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
