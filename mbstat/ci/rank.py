"""Spearman's rank partial correlation test, for monotone non-Gaussian relations.

Every numeric column is replaced by its ranks (average ranks for ties) and Fisher's z test
of zero partial correlation runs on them (the rank partial correlation of Kendall 1942):
``z = sqrt((n - |z| - 3) / 1.06) atanh(r_s)``, two-sided normal p-value, the variance
1.06 / (n - 3) of atanh of Spearman's r under independence being that of Fieller,
Hartley & Pearson (1957, Biometrika 44), where Pearson's is 1 / (n - 3).
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from ._design import PermutableTest
from .gaussian import FisherZ

__all__ = ["Spearman", "FIELLER"]

#: Fieller, Hartley & Pearson's (1957) variance factor of atanh(Spearman's r).
FIELLER = 1.06


class _Ranked:
    """The tester seen through ranks: what FisherZ reads (``dataset``, ``n``)."""

    def __init__(self, tester, dataset):
        self.dataset, self.n, self._tester = dataset, tester.n, tester

    def __getattr__(self, name):  # anything else FisherZ may read comes from the tester
        return getattr(self._tester, name)


def ranked_dataset(dataset):
    """The Dataset with every column replaced by the ranks of its numeric values (all
    continuous); missing values (NaN) stay missing."""
    from ..data import Dataset

    values = np.asarray(dataset.numeric(), dtype=np.float64)
    ranks = stats.rankdata(values, axis=0, nan_policy="omit") if np.isnan(values).any() \
        else stats.rankdata(values, axis=0)
    p = dataset.n_cols
    return Dataset(codes=np.zeros(dataset.codes.shape, dtype=np.uint8, order="F"),
                   levels=((),) * p, names=dataset.names, kinds=("continuous",) * p,
                   values=np.asfortranarray(ranks, dtype=np.float64))


class Spearman(PermutableTest):
    """Spearman's rank partial correlation test (Fisher's z on ranks, variance 1.06 / (n -
    |z| - 3)).

    Assumptions: monotone (not necessarily linear) relations; given z, the ranks of x and y
    are linear in the ranks of z (partial correlation of ranks is zero under conditional
    independence only then: this is a test of vanishing rank partial correlation, exact in
    level for |z| = 0 and approximate otherwise). Numeric columns (discrete ones with
    numeric levels are ranked by their values, ties averaged).

    ``calibration``, ``B`` and ``seed``: the normal approximation (default) or
    permutations (:class:`~mbstat.ci._design.PermutableTest`; exact for an empty z).
    """

    name = "spearman"
    method = "Spearman's rank partial correlation test (Fisher's z on ranks)"
    statistic_name = "z"
    kind = "continuous"
    joint_x = False
    def __init__(self, calibration="asymptotic", B=1000, seed=None):
        super().__init__(calibration, B, seed)
        self._cache = (None, None)

    def check(self, tester, columns) -> None:
        tester.dataset.require_numeric(columns, self.name)

    def ranks(self, tester):
        data, ranked = self._cache
        if data is not tester.dataset:
            ranked = ranked_dataset(tester.dataset)
            self._cache = (tester.dataset, ranked)
        return ranked

    def asymptotic(self, tester, xs, y, z):
        """The results table with normal p-values."""
        view = _Ranked(tester, self.ranks(tester))
        table = FisherZ().batch(view, xs, y, z)
        stat = table["statistic"] / np.sqrt(FIELLER)
        with np.errstate(divide="ignore"):
            log_p = np.minimum(np.log(2.0) + special.log_ndtr(-np.abs(stat)), 0.0)
        table["statistic"], table["log_pvalue"], table["pvalue"] = stat, log_p, np.exp(log_p)
        return table
