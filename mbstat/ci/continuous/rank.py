"""Rank-based partial correlation tests, for monotone non-Gaussian relations: Spearman's
and the normal-scores (nonparanormal) test.

Every numeric column is replaced by its ranks (average ranks for ties) and Fisher's z test
of zero partial correlation runs on them (the rank partial correlation of Kendall 1942):
``z = sqrt((n - |z| - 3) / 1.06) atanh(r_s)``, two-sided normal p-value, the variance
1.06 / (n - 3) of atanh of Spearman's r under independence being that of Fieller,
Hartley & Pearson (1957, Biometrika 44), where Pearson's is 1 / (n - 3).

Spearman's partial correlation is zero under conditional independence only when the ranks
of x and y are linear in those of z, which fails even for Gaussian data (x = z + e) given
a non-empty z: its level drifts upward with n (measured in vignettes/mixed_tests.py). The
``normal-scores`` test replaces each column by its van der Waerden scores
``Phi^-1(rank / (n + 1))`` instead, estimates of the latent Gaussian variables of a
Gaussian copula (nonparanormal) model (Liu, Lafferty & Wasserman 2009, JMLR 10; Harris &
Drton 2013, JMLR 14), and runs Fisher's z on them (variance 1 / (n - |z| - 3)): under
that model conditional independence is a zero latent partial correlation, whatever the
monotone marginal transformations.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
from scipy import special, stats

from ...data import Dataset
from ..result import as_matrix
from ._design import PermutableTest
from .gaussian import FisherZ, fisher_rescale

__all__ = ["FIELLER", "NormalScores", "Spearman"]

#: Fieller, Hartley & Pearson's (1957) variance factor of atanh(Spearman's r).
FIELLER = 1.06

_LOCK = threading.Lock()
_RANKED = weakref.WeakKeyDictionary()  # dataset -> {normal_scores: ranked Dataset}


class _Ranked:
    """The tester seen through ranks: what FisherZ reads (``dataset``, ``n``)."""

    def __init__(self, tester, dataset):
        self.dataset, self.n, self._tester = dataset, tester.n, tester

    def __getattr__(self, name):  # anything else FisherZ may read comes from the tester
        return getattr(self._tester, name)


def ranked_dataset(dataset, normal_scores: bool = False):
    """The Dataset with every column replaced by the ranks of its numeric values, or by
    their van der Waerden scores Phi^-1(rank / (n + 1)) (all continuous); missing values
    (NaN) stay missing."""

    values = np.asarray(dataset.numeric(), dtype=np.float64)
    ranks = stats.rankdata(values, axis=0, nan_policy="omit") if np.isnan(values).any() \
        else stats.rankdata(values, axis=0)
    if normal_scores:
        counts = (~np.isnan(values)).sum(axis=0)
        ranks = special.ndtri(ranks / (counts + 1.0))
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
    permutations (:class:`~mbstat.ci.continuous._design.PermutableTest`; exact for an empty z).

    The ranks and their correlation matrix are computed once per data set and shared by
    every test (:mod:`mbstat.ci.continuous.moments`): a test costs O(|z|^3) whatever n.
    """

    name = "spearman"
    method = "Spearman's rank partial correlation test (Fisher's z on ranks)"
    statistic_name = "z"
    kind = "continuous"
    joint_x = False

    def check(self, tester, columns) -> None:
        tester.dataset.require_numeric(columns, self.name)

    #: Whether columns become normal scores (else ranks), and the variance factor of
    #: atanh of their correlation.
    normal_scores = False
    variance_factor = FIELLER

    def ranks(self, tester):
        """The tester's data ranked (or as normal scores): computed once per data set and
        kept while it lives, so that every tester of the data set (each ``ci_test`` call,
        each learner of a search) shares the ranks and their correlation matrix."""
        ds = tester.dataset
        held = self.__dict__.get("_held")
        if held is not None and held[0] is ds:
            return held[1]
        with _LOCK:
            per = _RANKED.get(ds)
            if per is None:
                per = _RANKED[ds] = {}
        ranked = per.get(self.normal_scores)
        if ranked is None:
            ranked = per[self.normal_scores] = ranked_dataset(ds, self.normal_scores)
        self._held = (ds, ranked)
        return ranked

    def asymptotic(self, tester, xs, y, z):
        """The results table with normal p-values."""
        view = _Ranked(tester, self.ranks(tester))
        fisher = self.__dict__.get("_fisher")
        if fisher is None:
            fisher = self._fisher = FisherZ()
        table = fisher.batch(view, xs, y, z)
        if self.variance_factor != 1.0:
            fisher_rescale(as_matrix(table), 1.0 / np.sqrt(self.variance_factor))
        return table


class NormalScores(Spearman):
    """Normal-scores (nonparanormal) partial correlation test: Fisher's z on the van der
    Waerden scores Phi^-1(rank / (n + 1)) of every column.

    Assumptions: a Gaussian copula (nonparanormal) model, i.e. x, y and z are unknown
    monotone transformations of jointly Gaussian variables; then the test holds its level
    for any z, where Spearman's needs an empty z. Numeric columns (discrete ones ranked by
    their values, ties averaged; many ties break the copula model).
    """

    name = "normal-scores"
    method = "Normal-scores partial correlation test (Fisher's z on van der Waerden scores)"
    normal_scores = True
    variance_factor = 1.0
