"""Shared pieces of the model-based CI tests (conditional Gaussian, regression, rank):
design matrices from a Dataset, least squares within strata, chi-square tables.

Everything is vectorized over rows; the only Python loops run over strata (configurations
of discrete variables) or over the columns of a candidate's block.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
import weakref
import zlib
from collections import OrderedDict

import numpy as np

from ... import _validation as v
from ...data.dataset import column_values, is_discrete
from ..chi2 import chi2_sf_logsf
from ..protocol import CITest
from ..result import ASYMPTOTIC, NOTES, PERMUTATION, results_table

__all__ = ["PermutableTest", "chi2_table", "column_values", "dummies", "grouped_residuals", "grouped_rss",
           "is_discrete", "strata", "MACHINE_TOL"]

#: bnlearn's MACHINE_TOL (sqrt of the double epsilon): a residual standard error below it
#: makes a conditional Gaussian model singular.
MACHINE_TOL = float(np.sqrt(np.finfo(np.float64).eps))


def strata(dataset, cols) -> tuple:
    """Configurations of the discrete columns ``cols``: (codes 0..G-1 of the observed
    configurations, G, the number of declared configurations, prod of the levels)."""
    n = dataset.n_rows
    cols = list(cols)
    if not cols:
        return np.zeros(n, dtype=np.intp), 1, 1
    declared = int(np.prod([dataset.level_counts[j] for j in cols], dtype=np.float64))
    key = np.zeros(n, dtype=np.int64)
    for j in cols:  # a loop over columns: mixed-radix code of each row's configuration
        key = key * dataset.level_counts[j] + dataset.codes[:, j]
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.reshape(-1).astype(np.intp), len(uniq), declared


def combine(g1, G1, g2, G2) -> tuple:
    """Codes of the pairs (g1, g2), compacted to the observed pairs: (codes, G)."""
    uniq, inverse = np.unique(g1.astype(np.int64) * G2 + g2, return_inverse=True)
    return inverse.reshape(-1).astype(np.intp), len(uniq)


def dummies(dataset, j: int) -> np.ndarray:
    """Treatment-coded dummies (n, levels - 1) of discrete column j, the first declared level
    as reference (as R's ``model.matrix``); unused levels give all-zero columns, dropped."""
    k = dataset.level_counts[j]
    codes = dataset.codes[:, j].astype(np.intp)
    out = (codes[:, None] == np.arange(1, k)[None, :]).astype(np.float64)
    return out[:, out.any(axis=0)]


def _groups(g, G):
    order = np.argsort(g, kind="stable")
    counts = np.bincount(g, minlength=G)
    return np.split(order, np.cumsum(counts)[:-1]), counts


def grouped_residuals(Y, D, g, G):
    """Residuals of the columns of Y (n, k) on D (n, p) by least squares within each
    group of ``g`` (codes 0..G-1); rank-deficient designs handled by an SVD of the design's
    columns scaled to unit length in the group (singular values below 1e-10 of the largest
    dropped), so that a column's units never decide the rank. Returns (E (n, k), counts (G,))."""
    Y = np.asarray(Y, dtype=np.float64)
    E = np.empty_like(Y)
    parts, counts = _groups(g, G)
    for idx in parts:  # one least-squares fit per stratum
        if not len(idx):
            continue
        d = D[idx]
        norms = np.sqrt(np.einsum("ij,ij->j", d, d))
        d = d[:, norms > 0] / norms[norms > 0]  # unit columns: the rank cut is unit-free
        if d.shape[1]:
            u, s, _ = np.linalg.svd(d, full_matrices=False)
            u = u[:, s > 1e-10 * max(s[0], 1e-300)] if len(s) else u[:, :0]
            block = Y[idx]
            E[idx] = block - u @ (u.T @ block)
        else:
            E[idx] = Y[idx]
    return E, counts


def grouped_rss(Y, D, g, G):
    """Residual sums of squares (k, G) of each column of Y on D within each group, and the
    group counts (G,)."""
    E, counts = grouped_residuals(Y, D, g, G)
    return group_sums(E * E, g, G).T, counts


def group_sums(V, g, G):
    """Sums (G, k) of the rows of V (n, k) in each group (one sparse product)."""
    from scipy import sparse

    n = len(g)
    onehot = sparse.csr_matrix((np.ones(n), (g, np.arange(n))), shape=(G, n))
    return np.asarray(onehot @ V)


#: Per-stratum moments are kept while strata x columns^2 stays below this (80 MB).
MOMENTS_CELLS = 10_000_000
#: The moments answer where each pivot of the regressors (correlation units, within a
#: stratum) and each residual variance of the targets is at least this (rounding error of
#: the residual sums of squares below about 1e-12 of their size); elsewhere the rows do.
WELL_POSED = 1e-3
_MOMENTS = weakref.WeakKeyDictionary()  # dataset -> {discrete columns: StratumMoments}
#: Sets of strata kept per data set, most recent last.
_MOMENTS_KEPT = 32
_MOMENTS_LOCK = threading.Lock()


class StratumMoments:
    """Counts, means and centred cross-products of a data set's continuous columns within
    each configuration of some discrete ones, computed once (O(n p^2)) and shared by every
    test of a search that conditions on those strata (issue #26): a least-squares fit of
    one column on others within the strata is then an O(q^3) solve per stratum,
    independent of n.

    Attributes: ``g`` (n,) the stratum of each row, ``G``, ``counts`` (G,), ``means``
    (G, p), ``cross`` (G, p, p) the centred cross-products (two passes: the stratum means,
    then the means of the deviations), ``pos`` the position of each data set column among
    the continuous ones (-1 for a discrete one).
    """

    def __init__(self, dataset, cols):
        self.g, self.G, _ = strata(dataset, cols)
        cont = [j for j in range(dataset.n_cols) if not is_discrete(dataset, j)]
        self.pos = np.full(dataset.n_cols, -1, dtype=np.intp)
        self.pos[cont] = np.arange(len(cont))
        values = column_values(dataset, cont)
        self.counts = np.bincount(self.g, minlength=self.G).astype(np.float64)
        self.means = group_sums(values, self.g, self.G) / self.counts[:, None]
        dev = values - self.means[self.g]
        shift = group_sums(dev, self.g, self.G) / self.counts[:, None]
        dev -= shift[self.g]
        self.means += shift
        self.cross = np.empty((self.G, len(cont), len(cont)))
        order = np.argsort(self.g, kind="stable")
        bounds = np.cumsum(self.counts.astype(np.intp))[:-1]
        for s, idx in enumerate(np.split(order, bounds)):  # one GEMM per stratum
            d = dev[idx]
            self.cross[s] = d.T @ d

    def residual_parts(self, first, others, regressors):
        """Residual cross-products within each stratum of the data set columns ``first``
        and ``others`` on [1, ``regressors``]: ``(ff (G,), fo (G, k), oo (G, k), ok)``, the
        sum of squares of ``first``'s residuals, their products with each of ``others``'
        and those of ``others``; ``first`` None gives ff and fo None. ``ok`` False where a
        stratum's fit is not well posed (:data:`WELL_POSED`; the caller reads the rows
        then); strata with no more rows than coefficients are not checked (their fit is
        singular anyway)."""
        C = self.cross
        o = self.pos[list(others)]
        r = self.pos[list(regressors)]
        f = None if first is None else self.pos[first]
        used = self.counts > len(r) + 1
        oo = np.einsum("gii->gi", C[:, o][:, :, o])
        ff = None if f is None else C[:, f, f].copy()
        fo = None if f is None else C[:, f, o].copy()
        scale = oo if f is None else np.column_stack([ff, oo])
        if np.any(scale[used] <= 0):
            return ff, fo, oo, False
        if len(r):
            crr = C[:, r][:, :, r]
            sr = np.sqrt(np.einsum("gii->gi", crr))
            if np.any(sr[used] <= 0):
                return ff, fo, oo, False
            crr = np.where(used[:, None, None], crr, np.eye(len(r)))
            sr = np.where(used[:, None], sr, 1.0)
            try:  # pivots of the regressors in correlation units
                L = np.linalg.cholesky(crr / (sr[:, :, None] * sr[:, None, :]))
            except np.linalg.LinAlgError:
                return ff, fo, oo, False
            if np.any(np.einsum("gii->gi", L)[used] ** 2 < WELL_POSED):
                return ff, fo, oo, False
            cro = C[:, r][:, :, o]
            sol = np.linalg.solve(crr, cro)
            oo = oo - np.einsum("grk,grk->gk", cro, sol)
            if f is not None:
                crf = C[:, r, f]
                fo = fo - np.einsum("gr,grk->gk", crf, sol)
                ff = ff - np.einsum("gr,gr->g", crf, np.linalg.solve(crr, crf[..., None])[..., 0])
        resid = oo if f is None else np.column_stack([ff, oo])
        ok = bool(np.all(resid[used] >= WELL_POSED * scale[used]))
        return ff, fo, oo, ok

    def raw_squares(self, cols) -> np.ndarray:
        """Uncentred sums of squares (G, k) of the columns ``cols`` within each stratum."""
        c = self.pos[list(cols)]
        return np.einsum("gii->gi", self.cross[:, c][:, :, c]) + self.counts[:, None] * \
            self.means[:, c] ** 2


def stratum_moments(dataset, cols):
    """The :class:`StratumMoments` of ``dataset`` within the strata of the discrete columns
    ``cols`` (any order), computed once per data set and set of columns and kept while the
    data set lives; None where they would be too large (:data:`MOMENTS_CELLS`) or the data
    keep missing cells."""
    cols = tuple(sorted(cols))
    if dataset.missing is not None:
        return None
    with _MOMENTS_LOCK:
        store = _MOMENTS.setdefault(dataset, OrderedDict())
        hit = store.get(cols)
        if hit is not None:
            store.move_to_end(cols)
    if hit is not None:
        return hit
    p = sum(not is_discrete(dataset, j) for j in range(dataset.n_cols))
    declared = np.prod([dataset.level_counts[j] for j in cols], dtype=np.float64)
    if min(declared, dataset.n_rows) * p * p > MOMENTS_CELLS:
        return None
    hit = StratumMoments(dataset, cols)
    with _MOMENTS_LOCK:
        store[cols] = hit
        while len(store) > _MOMENTS_KEPT:
            store.popitem(last=False)
    return hit


def chi2_table(statistic, df, n, calibration=ASYMPTOTIC):
    """A results table of chi-square tests: p-values and their logs, ``mi`` = stat / 2n."""
    statistic = np.maximum(np.asarray(statistic, dtype=np.float64), 0.0)
    df = np.broadcast_to(np.asarray(df, dtype=np.float64), statistic.shape)
    p, log_p = chi2_sf_logsf(statistic, np.ascontiguousarray(np.maximum(df, 1.0)))
    none = df <= 0  # x adds no parameter: nothing to test
    p, log_p = np.where(none, 1.0, p), np.where(none, 0.0, log_p)
    return results_table(len(statistic), statistic=statistic, df=df, pvalue=p,
                         log_pvalue=log_p, mi=statistic / (2.0 * max(n, 1)),
                         calibration=calibration)


#: ``calibration`` of the model-based tests (mi-cg, reg-lr, spearman).
CALIBRATIONS = ("asymptotic", "permutation")
#: Permutations of their Monte Carlo calibration.
B_PERMUTATION = 1000
PERMUTATION_NOTE = ("p-value from permutations of x within the strata of the (discrete) "
                    "conditioning set (Monte Carlo)")


def permutation_table(test, tester, xs, y, z, table, B: int, seed: int):
    """``table`` (the test's asymptotic results) with Monte Carlo p-values: the share of B
    data sets, x's rows permuted within the strata of z, whose statistic is at least the
    observed one in absolute value (a signed z two-sided) ((1 + exceed) / (B + 1)). Exact in level when z is discrete (x and y are
    exchangeable within strata under the null); refused when z has continuous columns.

    The permuted statistics come from ``test.asymptotic`` on the test's columns alone (one
    Dataset per permutation); the generator is seeded by ``seed`` and the contents of y
    and z, so a candidate gets the same p-value in any batch and any order of the columns.
    """
    ds = tester.dataset
    cont = [ds.names[j] for j in z if not is_discrete(ds, j)]
    if cont:
        raise ValueError(f"test {test.name!r}: calibration='permutation' permutes x within "
                         f"the strata of a discrete z; z has continuous columns {cont} (use "
                         "the asymptotic calibration, or test 'rcot' with permutations)")
    xcols = sorted({j for xk in xs for j in xk})
    cols = [y, *z, *xcols]
    sub = ds.subset(cols)
    pos = {j: i for i, j in enumerate(cols)}
    xs_s = [tuple(pos[j] for j in xk) for xk in xs]
    y_s, z_s = pos[y], tuple(pos[j] for j in z)
    xpos = [pos[j] for j in xcols]
    g, _, _ = strata(sub, z_s)
    n = len(g)
    # the permutations depend on y and z alone: each candidate's p-value is the same in
    # any batch and any order of the columns
    words = [zlib.crc32(np.ascontiguousarray(sub.numeric()[:, i]).tobytes()) for i in
             range(1 + len(z))]
    rng = np.random.default_rng([seed, words[0], *sorted(words[1:])])
    observed = np.abs(np.asarray(table["statistic"], dtype=np.float64))  # z: two-sided
    exceed = np.zeros(len(xs))
    order = np.argsort(g, kind="stable")
    # a copy computes the permuted statistics: a cache the test keeps of its data (the
    # ranks of spearman's) stays that of the caller's data, not the last permutation's
    worker = copy.copy(test)
    for _ in range(B):  # one data set per permutation: the test's own columns only
        shuffled = np.lexsort((rng.random(n), g))  # rows sorted by stratum, random within
        perm = np.empty(n, dtype=np.intp)
        perm[order] = shuffled
        codes = np.array(sub.codes, order="F")
        codes[:, xpos] = sub.codes[perm][:, xpos]
        values = None
        if sub.values is not None:
            values = np.array(sub.values, order="F")
            values[:, xpos] = sub.values[perm][:, xpos]
        permuted = dataclasses.replace(sub, codes=codes, values=values)
        stat = worker.asymptotic(tester.on(permuted, worker), xs_s, y_s, z_s)["statistic"]
        exceed += np.abs(stat) >= observed * (1 - 1e-9)
    p = (1.0 + exceed) / (B + 1.0)
    out = table.copy()
    out["pvalue"], out["log_pvalue"], out["calibration"] = p, np.log(p), PERMUTATION
    return out


class PermutableTest(CITest):
    """A model-based test with two calibrations: its own asymptotic p-values
    (:meth:`asymptotic`) or :func:`permutation_table`'s.

    Parameters
    ----------
    calibration : {"asymptotic", "permutation"}
        The asymptotic null (default), or B permutations of x within the strata of z
        (exact in level for an empty or discrete z; refused for a continuous one).
    B : int
        Permutations (default 1000).
    seed : int
        Seed of the permutations (default 0), mixed with the contents of y and z.
    """

    notes = {**NOTES, PERMUTATION: PERMUTATION_NOTE}

    def __init__(self, calibration="asymptotic", B=B_PERMUTATION, seed=None):
        self.calibration = v.check_choice("calibration", calibration, CALIBRATIONS)
        self.B = v.check_int("B", B, low=1)
        self.seed = v.check_content_seed(seed)

    def __repr__(self) -> str:
        own = "".join(f"{k}={getattr(self, k)!r}, " for k in self.own_arguments)
        return (f"{type(self).__name__}({own}calibration={self.calibration!r}, B={self.B!r}, "
                f"seed={self.seed!r})")

    #: Arguments of a subclass shown first by ``repr``.
    own_arguments = ()

    def asymptotic(self, tester, xs, y, z) -> np.ndarray:
        """The results table with the asymptotic p-values."""
        raise NotImplementedError

    def batch(self, tester, xs, y, z):
        if not self.joint_x and any(len(xk) != 1 for xk in xs):
            raise ValueError(f"test {self.name!r} takes single variables as x, not sets")
        table = self.asymptotic(tester, xs, y, z)
        if self.calibration == "permutation":
            return permutation_table(self, tester, xs, y, z, table, self.B, self.seed)
        return table
