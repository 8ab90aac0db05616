"""mbstat: Markov-blanket feature selection with an R-style functional API."""
from __future__ import annotations

from .algorithms import METHODS, iamb, inter_iamb
from .blankets import BlanketCollection, blankets
from .backend import get_backend, gpu_available, set_backend
from .ci import TESTS, CIResult, ci_test, ci_test_batch, cond_mutual_info, tests_table
from .data import Dataset, as_dataset

__version__ = "0.1.0"

__all__ = [
    "METHODS", "BlanketCollection", "blankets", "CIResult", "Dataset", "TESTS", "as_dataset", "ci_test", "ci_test_batch",
    "cond_mutual_info", "get_backend", "iamb", "inter_iamb", "gpu_available", "set_backend", "tests_table",
]
