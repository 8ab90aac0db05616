"""Shared test helpers."""
import os
import signal
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


@pytest.fixture(autouse=True)
def sigint_handler_kept():
    """Every test leaves SIGINT's handler as it found it (the Ctrl-C tests' children inherit
    an ignored SIGINT; mbstat's compiled calls hold SIGINT and must hand it back)."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    assert after is before or after == before, f"SIGINT's handler left {after!r}, was {before!r}"
