"""The compiled kernels' cache where the package folder is read-only (issue #25).

numba caches a function beside its source (``__pycache__``) where it can write there, else
in the user-wide cache folder (``$XDG_CACHE_HOME/numba``, numba's ``UserWideCacheLocator``).
A system install (read-only site-packages) must therefore compile once per user, not once
per process. Each check runs a copy of the package in fresh interpreters whose in-tree cache
cannot be written: its ``__pycache__`` folders are plain files (which binds even for root,
unlike permission bits) and, unless run as root, its folders are read-only.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import mbstat

PACKAGE = Path(mbstat.__file__).resolve().parent

# A small kernel (compiled in about a second): where numba puts its cache, and whether
# this process compiled it or loaded it from there.
CHILD = r"""
import json, sys
import numpy as np
from mbstat._bitmaps import level_bits
codes = np.array([[0, 1], [1, 0], [2, 1]], dtype=np.int8)
bits = level_bits(codes, 3, np.array([3, 2]))
print(json.dumps({"module": level_bits.py_func.__module__, "file": sys.modules["mbstat"].__file__,
                  "cache": level_bits._cache._cache_path, "hits": sum(level_bits.stats.cache_hits.values()),
                  "misses": sum(level_bits.stats.cache_misses.values()),
                  "bits": bits[:, :, 0].tolist()}))
"""


@pytest.fixture
def read_only_copy(tmp_path):
    """A copy of the package whose in-tree cache cannot be written, and the environment of
    a user whose cache folder is ``tmp_path / "user-cache"``."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "mbstat",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc"))
    folders = [site, *(p for p in site.rglob("*") if p.is_dir())]
    for folder in folders[1:]:
        (folder / "__pycache__").write_text("not a folder: numba cannot cache here")
    if os.geteuid() != 0:
        for folder in folders:
            folder.chmod(folder.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "user-cache"),
               PYTHONDONTWRITEBYTECODE="1")
    yield site, env, tmp_path / "user-cache"
    for folder in folders:
        folder.chmod(folder.stat().st_mode | stat.S_IWUSR)


def _run(env, cwd):
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_read_only_install_caches_per_user(read_only_copy, tmp_path):
    site, env, user_cache = read_only_copy
    first = _run(env, tmp_path)
    assert Path(first["file"]).resolve().is_relative_to(site.resolve())  # the copy ran
    assert Path(first["cache"]).resolve().is_relative_to((user_cache / "numba").resolve())
    assert first["misses"] == 1 and first["hits"] == 0
    assert first["bits"] == [[1, 2, 4], [2, 5, 0]]  # bit r: row r has level 0, 1, 2
    assert list(user_cache.rglob("*.nbi")) and not list(site.rglob("*.nbi"))
    second = _run(env, tmp_path)  # a new process: loaded from the user's cache
    assert second["cache"] == first["cache"]
    assert second["hits"] == 1 and second["misses"] == 0
    assert second["bits"] == first["bits"]


def test_no_writable_cache_falls_back_to_the_temporary_folder(read_only_copy, tmp_path):
    """Where neither the package's folders nor the user's cache folder can be written (here
    $XDG_CACHE_HOME is a plain file), numba would refuse to define the cached kernels and the
    import would fail; mbstat caches them in the temporary folder instead, per user."""
    site, env, user_cache = read_only_copy
    user_cache.write_text("not a folder: no user cache either")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**env, "TMPDIR": str(temp)}
    first = _run(env, tmp_path)
    assert Path(first["file"]).resolve().is_relative_to(site.resolve())
    assert Path(first["cache"]).resolve().is_relative_to(temp.resolve())
    assert first["misses"] == 1 and first["bits"] == [[1, 2, 4], [2, 5, 0]]
    second = _run(env, tmp_path)
    assert second["cache"] == first["cache"] and second["hits"] == 1
