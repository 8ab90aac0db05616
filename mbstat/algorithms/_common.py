"""What every Markov-blanket learner does before and after its search."""
from __future__ import annotations

import numpy as np

from .._validation import check_features
from ..ci.engine import CITester
from ..ci.registry import UnknownTestArguments

__all__ = ["prepare", "strongest"]


def prepare(data, target, *, test, alpha, backend, discretize=None, na="raise",
            test_args=None, candidates=None):
    """Build the tester and resolve the target and candidates.

    Returns (tester, target name, list of candidate names).
    """
    try:
        tester = CITester(data, test, alpha=alpha, backend=backend, discretize=discretize, na=na,
                          **(test_args or {}))
    except UnknownTestArguments as exc:  # a misspelt or misplaced parameter of the learner
        raise TypeError(f"{exc.unknown}: neither a parameter of this learner nor an argument of "
                        f"test {exc.test!r} (it accepts: {exc.accepted})") from None
    ds = tester.dataset
    t = ds.index(target, "target")
    cands = [ds.names[j] for j in check_features(ds, t, candidates)]
    return tester, ds.names[t], cands


def strongest(batch) -> int:
    """Index of the most dependent candidate: smallest log p, then largest statistic."""
    return int(np.lexsort((-batch.statistic, batch.log_pvalue))[0])

