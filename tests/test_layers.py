"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and they can fail.

The layers, lowest first: argument checks and leaf helpers; the backend; data and
Bayesian networks; models; the CI tests; results; algorithms; front ends. A layer imports
only the layers below it, directly or not (e.g. the data layer nothing of ``mbstat.ci``,
``mbstat.ci`` nothing of ``mbstat.results`` or ``mbstat.algorithms``, ``mbstat.results``
nothing of ``mbstat.algorithms``). The same check runs in ``.ci/run`` as ``lint-imports``.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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


def test_contracts_fail_on_a_forbidden_import(tmp_path):
    """A copy of the package where data.py imports the CI layer breaks the contract."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "mbstat", tmp_path / "mbstat",
                    ignore=shutil.ignore_patterns("__pycache__", "*.bif.gz", "*.nb[ic]"))
    data = tmp_path / "mbstat" / "data.py"
    data.write_text(data.read_text() + "\nfrom .ci.base import CITester  # forbidden\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "mbstat.data is not allowed to import mbstat.ci" in run.stdout, run.stdout
    assert "mbstat.data -> mbstat.ci.base" in run.stdout, run.stdout
