"""Contingency-table tests: G2 (mutual information), Pearson X2, Monte Carlo.

Degrees of freedom follow bnlearn: ``(|X|-1)(|Y|-1) prod |Z|`` over the
declared levels (empty strata counted) by default, or bnlearn's adjusted
variant (``-adf``): per non-empty stratum (non-empty rows - 1)(non-empty
columns - 1), summed and floored at 1.
"""
from __future__ import annotations

import math

import numpy as np

from .base import CITest, batch_from_table
from .counting import (_kernels, column_statistics, joint_code, stratum_code,
                       subset_statistics, table_statistics)

__all__ = ["chi2_logsf", "chi2_sf_logsf", "ContingencyTest", "PermutationTest"]


def chi2_logsf(x, df):
    """Natural log of the chi-square survival function, accurate in the far tail.

    ``scipy.stats.chi2.logsf`` is ``log(sf)`` and returns -inf once the
    p-value underflows (around x = 1500 for small df); there we evaluate
    log Q(df/2, x/2) from the continued fraction of the upper incomplete
    gamma function (modified Lentz), which is finite for any x.
    """
    return chi2_sf_logsf(x, df)[1]


def chi2_sf_logsf(x, df):
    """The chi-square p-value and its accurate natural log (see :func:`chi2_logsf`).

    p is scipy's ``chdtrc`` (its C function, called from compiled code); log p is
    ``log(p)`` in the middle, ``log1p(-chdtr)`` where p > 0.5 (exact near 1), and the
    continued fraction of Q(df/2, x/2) in log space where p < 1e-260 (p may be 0
    there). One compiled pass.
    """
    x = np.asarray(x, dtype=np.float64)
    df = np.asarray(df, dtype=np.float64)
    kernels = _kernels()
    if x.ndim == 1 and x.shape == df.shape:  # the engine's case needs no reshaping
        return kernels.chi2_sf_logsf(df, x, kernels.CHI2)
    shape = np.broadcast_shapes(x.shape, df.shape)
    x, df = (np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in (x, df))
    return tuple(a.reshape(shape)[()] for a in kernels.chi2_sf_logsf(df, x, kernels.CHI2))


class ContingencyTest(CITest):
    """Asymptotic G2 or Pearson X2 test on (stratified) contingency tables.

    Parameters
    ----------
    statistic : {"g2", "x2"}
    df : {"bnlearn", "adjusted"}
    min_per_cell : float, optional
        Power rule: when the rows number fewer than ``min_per_cell`` times the
        cells of the table (declared levels), the test is not performed and
        independence is assumed (flagged ``skipped``), as bnlearn does for its
        adjusted-df tests with 5. None (default) always tests.
    """

    kind = "discrete"

    def __init__(self, statistic="g2", df="bnlearn", min_per_cell=None):
        self.stat = statistic
        self.df_rule = df
        self.min_per_cell = min_per_cell
        adj = "-adf" if df == "adjusted" else ""
        self.name = statistic + adj
        self.statistic_name = "G2" if statistic == "g2" else "X2"
        what = "Mutual Information (G2)" if statistic == "g2" else "Pearson's X2"
        self.method = f"{what} test of conditional independence" + (
            ", adjusted df" if adj else ""
        )

    def tables(self, tester, xs, y, z):
        """Raw table statistics (k, 4) of the batch, plus |X| (declared), |Y| and the
        declared strata."""
        ds = tester.dataset
        ry = ds.level_counts[y]
        if max(map(len, xs)) == 1:  # the common case: one (k, 1) index array
            xcols = np.array(xs, dtype=np.int64).reshape(-1)
            rx = ds.cardinalities[xcols]
            if tester.xp is np:
                stats = column_statistics(ds, xcols, y, z)
                if stats is not None:
                    return stats, rx, ry, math.prod(ds.level_counts[j] for j in z)
            strata = tester.strata(z)
            stats = subset_statistics(tester.columns(slice(None)), xcols[:, None],
                                      ds.cardinalities, tester.columns(int(y)), ry, strata,
                                      tester.xp)
            return stats, rx, ry, strata.declared
        yc = tester.columns(int(y))
        strata = tester.strata(z)
        codes = tester.columns(slice(None))
        stats = np.empty((len(xs), 4))
        rx = np.empty(len(xs))
        by_size = {}  # one batch per subset size: each is one (k, size) index array
        for i, xk in enumerate(xs):
            by_size.setdefault(len(xk), []).append(i)
        for pos in by_size.values():
            subsets = np.array([xs[i] for i in pos], dtype=np.int64)
            rx[pos] = np.prod(ds.cardinalities[subsets].astype(np.float64), axis=1)
            stats[pos] = subset_statistics(codes, subsets, ds.cardinalities, yc, ry, strata,
                                           tester.xp)
        return stats, rx, ry, strata.declared

    def results(self, tester, xs, y, z):
        stats, rx, ry, rz_declared = self.tables(tester, xs, y, z)
        kernels = _kernels()
        min_per_cell = -1.0 if self.min_per_cell is None else float(self.min_per_cell)
        return kernels.finish_tests(np.ascontiguousarray(stats, dtype=np.float64),
                                    np.asarray(rx, dtype=np.float64), float(ry),
                                    float(rz_declared), tester.n, int(self.stat == "x2"),
                                    self.df_rule == "adjusted", min_per_cell, kernels.CHI2)

    def batch(self, tester, xs, y, z):
        return batch_from_table(self.results(tester, xs, y, z))


class PermutationTest(ContingencyTest):
    """Monte Carlo permutation version of the G2 or X2 test.

    x is permuted within the strata of z, ``B`` times; the p-value is
    (1 + #{permuted statistic >= observed}) / (B + 1). Each test draws from a
    generator seeded by ``seed`` and the test's variables, so results do not
    depend on the order in which tests are asked.
    """

    def __init__(self, statistic="g2", B=5000, seed=None):
        super().__init__(statistic, "bnlearn")
        self.B = B
        self.seed = 0 if seed is None else seed
        self.name = "mc-" + statistic
        self.method = f"Monte Carlo ({B} permutations) {self.method}"

    results = CITest.results  # from batch() below: the Monte Carlo p-values

    def batch(self, tester, xs, y, z):
        asym = batch_from_table(ContingencyTest.results(self, tester, xs, y, z))
        column = int(self.stat == "x2")
        xp = tester.xp
        ds = tester.dataset
        strata = tester.strata(z)
        zc = stratum_code(strata, xp, tester.n)
        yc = tester.columns(int(y))
        ry = int(ds.cardinalities[y])
        order = xp.argsort(zc, kind="stable")
        pvalue = np.empty(len(xs))
        chunk = max(1, min(self.B, (1 << 22) // max(tester.n, 1)))
        for i, xk in enumerate(xs):
            cards = ds.cardinalities[list(xk)]
            xcode, rx = joint_code(list(tester.columns(list(xk))), cards, xp, tester.n)
            rng = np.random.default_rng([self.seed, y, len(z), *z, *xk])
            exceed = 0
            observed = asym["statistic"][i]
            for start in range(0, self.B, chunk):
                b = min(chunk, self.B - start)
                noise = xp.asarray(rng.random((b, tester.n)))
                perm = xp.argsort(zc[None, :] + noise, axis=1)
                xperm = xp.empty((b, tester.n), dtype=xp.int64)
                xperm[:, order] = xcode[perm]
                res = table_statistics(xperm, np.full(b, rx), yc, ry, strata, xp)
                exceed += int(np.sum(res[:, column] >= observed * (1 - 1e-12)))
            pvalue[i] = (1.0 + exceed) / (self.B + 1.0)
        asym["pvalue"] = pvalue
        asym["log_pvalue"] = np.log(pvalue)
        return asym
