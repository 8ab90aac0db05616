"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and they can fail.

The layers, lowest first: argument checks and leaf helpers; the backend; data and
Bayesian networks; the CI tests (with their models); results; algorithms; front ends. A
layer imports only the layers below it, directly or not (e.g. the data layer nothing of
``mbstat.ci``, ``mbstat.ci`` nothing of ``mbstat.results`` or ``mbstat.algorithms``,
``mbstat.results`` nothing of ``mbstat.algorithms``). Inside ``mbstat.ci``: the engine above
the registry above four independent families of tests (contingency tables, continuous and
mixed, model-based, oracles) above the protocol and the result types. The same check runs
in ``.ci/run`` as ``lint-imports``. Beside the contracts: no circle of imports anywhere in
the package, and no import of mbstat's own modules inside a function unless it is marked
``# deferred:`` with its reason.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the test extra")

ROOT = Path(__file__).resolve().parents[1]
# lint-imports, run by the interpreter of the tests; reads pyproject.toml in the working
# directory and analyses the mbstat package found there (it puts that directory first on
# the path). No cache: nothing is written into the checkout.
LINT = [sys.executable, "-c",
        "import sys; from importlinter.cli import lint_imports_command as c; "
        "c(['--no-cache'] + sys.argv[1:])"]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_import_contracts_hold():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def _copy(tmp_path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "mbstat", tmp_path / "mbstat",
                    ignore=shutil.ignore_patterns("__pycache__", "*.bif.gz", "*.nb[ic]"))
    return tmp_path / "mbstat"


def test_contracts_fail_on_a_forbidden_import(tmp_path):
    """A copy of the package where the data layer imports the CI layer breaks the contract."""
    data = _copy(tmp_path) / "data" / "__init__.py"
    data.write_text(data.read_text() + "\nfrom ..ci.engine import CITester  # forbidden\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "mbstat.data is not allowed to import mbstat.ci" in run.stdout, run.stdout
    assert "mbstat.data -> mbstat.ci.engine" in run.stdout, run.stdout


def test_contracts_fail_when_one_family_imports_another(tmp_path):
    """The families of ``mbstat.ci`` are independent: the continuous family may not take a
    piece of the contingency family (inside a function, too)."""
    mixed = _copy(tmp_path) / "ci" / "continuous" / "mixed.py"
    mixed.write_text(mixed.read_text() + "\n\ndef _g2():\n"
                     "    from ..tables.contingency import ContingencyTest  # forbidden\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "mbstat.ci.continuous is not allowed to import mbstat.ci.tables" in run.stdout
    assert "mbstat.ci.continuous.mixed -> mbstat.ci.tables.contingency" in run.stdout
    assert "1 broken" in run.stdout, run.stdout


def _imports(path: Path, module: str):
    """(imported mbstat module, inside a function, line text) of every import in a file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    inside = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(fn) if n is not fn)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            target, names = None, [a.name for a in node.names]
        else:
            continue
        for name in ([target] if target else []) + names:
            if name.split(".")[0] == "mbstat":
                yield name, id(node) in inside, lines[node.lineno - 1]


def _modules() -> dict:
    out = {}
    for path in sorted((ROOT / "mbstat").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def test_no_import_cycle_in_the_package():
    """The graph of imports between mbstat's modules (inside functions too; a package
    depends on its ``__init__``) has no circle: every strongly connected component is
    one module."""
    modules = _modules()
    names = sorted(modules)
    index = {name: i for i, name in enumerate(names)}
    edges = set()
    for name, path in modules.items():
        for target, _, _ in _imports(path, name):
            while target and target not in index:  # a name imported from a module
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                edges.add((index[name], index[target]))
    rows, cols = zip(*edges)
    graph = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(names)))
    n, labels = connected_components(graph, directed=True, connection="strong")
    circles = [[names[i] for i in np.flatnonzero(labels == c)] for c in range(n)
               if (labels == c).sum() > 1]
    assert not circles, circles
    assert len(edges) > 200  # the graph was read


def test_imports_inside_functions_are_deferrals_with_a_reason():
    """An import of mbstat's own modules inside a function hides a dependency from the
    module's header; it is kept only to defer a cost, marked ``# deferred: <reason>``."""
    hidden = [(name, line) for name, path in _modules().items()
              for target, inside, line in _imports(path, name)
              if inside and "# deferred:" not in line]
    assert not hidden, hidden
