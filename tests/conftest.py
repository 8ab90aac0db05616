"""Shared test helpers."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run_vignette(tmp_path):
    """Run ``vignettes/<name> --quick --out tmp_path`` in a fresh interpreter; return its
    standard output (the test fails with the end of its standard error if it fails)."""

    def run(name, timeout=300):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        proc = subprocess.run([sys.executable, str(ROOT / "vignettes" / name), "--quick",
                               "--out", str(tmp_path)], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    return run
