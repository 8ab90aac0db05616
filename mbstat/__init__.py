"""mbstat: Markov-blanket feature selection with an R-style functional API."""
from __future__ import annotations

import os as _os
import tempfile as _tempfile

from numba.core import config as _numba_config
from numba.misc.appdirs import AppDirs as _AppDirs


def _numba_cache_fallback() -> None:
    """Give numba a cache folder it can write where it has none (set before the kernels are
    defined). numba caches compiled kernels beside their sources, else in the user's cache
    folder; where it can write in neither (a read-only install run by a user without a
    writable home), it refuses to define a cached function and ``import mbstat`` would fail.
    There the kernels are cached in the temporary folder, per user."""
    if _os.environ.get("NUMBA_CACHE_DIR"):
        return
    for folder in (_os.path.join(_os.path.dirname(__file__), "__pycache__"),
                   _AppDirs(appname="numba", appauthor=False).user_cache_dir):
        try:
            _os.makedirs(folder, exist_ok=True)
            _tempfile.TemporaryFile(dir=folder).close()
            return
        except OSError:
            continue
    user = _os.getuid() if hasattr(_os, "getuid") else _os.getlogin()
    _os.environ["NUMBA_CACHE_DIR"] = _os.path.join(_tempfile.gettempdir(),
                                                  f"mbstat-numba-{user}")
    _numba_config.CACHE_DIR = _os.environ["NUMBA_CACHE_DIR"]


_numba_cache_fallback()

from .algorithms import (LEARNERS, METHODS, fast_iamb, fbed, fsdms, gs_m, hiton_mb, hiton_pc,
                         iamb, iamb_fdr, iamb_ip, inter_iamb, learners_table, mb_to_pc, mbor,
                         member_tests, mmmb, mmpc, pc_superset, ppfs, rgs, ses, si_hiton_pc,
                         sp_superset, tie, wfsdms)
from .blankets import BlanketCollection, blankets
from .backend import get_backend, gpu_available, set_backend
from .ci import TESTS, ci_test, ci_test_batch, cond_mutual_info, tests_table
from .ci.result import CIResult
from .ci.models.crt import crt_test
from .ci.models.loco import loco_test
from .ci.models.ppi import ppi_test
from .data import Dataset, as_dataset
from .dependency import dependency
from .stability import arc_strengths, stability

__version__ = "0.1.0"

__all__ = [
    "arc_strengths", "as_dataset", "BlanketCollection", "blankets", "ci_test", "ci_test_batch",
    "CIResult", "cond_mutual_info", "Dataset", "dependency", "fast_iamb", "fbed", "fsdms",
    "get_backend", "gpu_available", "gs_m", "hiton_mb", "hiton_pc", "iamb", "iamb_fdr", "iamb_ip",
    "crt_test", "inter_iamb", "LEARNERS", "learners_table", "loco_test", "mb_to_pc", "mbor", "member_tests",
    "METHODS", "mmmb", "mmpc", "pc_superset", "ppfs", "ppi_test", "rgs", "ses", "set_backend",
    "si_hiton_pc", "sp_superset", "stability", "TESTS", "tests_table", "tie", "wfsdms"
]
