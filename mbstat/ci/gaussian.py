"""Fisher's z test of zero partial correlation, for Gaussian data."""
from __future__ import annotations

import numpy as np
from scipy import special

from .base import ASYMPTOTIC, SKIPPED, CITest, results_table
from .moments import (column_moments, partial_from_rows, partitioned_partials,
                      standardize)

__all__ = ["FisherZ"]


class FisherZ(CITest):
    """Fisher's z transform of the partial correlation of x and y given z.

    The statistic is ``sqrt(n - |z| - 3) * atanh(r)``, two-sided normal p-value (as
    bnlearn's ``zf``; |z| counts z's columns). The partial correlation comes from the
    correlation matrix of the data's columns, computed once per data set and shared by
    every test of a search (:mod:`mbstat.ci.moments`): a test costs O(|z|^3) whatever n,
    one elimination of z's block for a batch of candidates; where the z block or a
    residual is nearly collinear (correlation units below 1e-3) it is recomputed from
    the rows by a pivoted QR (collinear z columns dropped: the projection on the span of
    z). On data in partitions (Dask) the partitions send R factors of their centred
    blocks, merged once.

    An x (or y) that carries no variation given z gives r = 0, p = 1, as an exact
    constant (reading: scipy's pearsonr returns NaN there, R's cor.test NA; a learner
    needs a p-value, and 1 is the one that adds nothing): a constant column (range 0),
    an exact linear function of z (residual sd below 1e-12 of its own centred sd), or a
    residual within half a unit of rounding of the column's values (3 z + 1e8). The rule
    is invariant under offset and scale: 1e8 + 1e-5 N(0, 1) is a signal, as for
    ``scipy.stats.pearsonr``.
    """

    name = "fisher_z"
    method = "Fisher's Z test of zero partial correlation"
    statistic_name = "z"
    kind = "continuous"
    joint_x = False

    def check(self, tester, columns) -> None:
        tester.dataset.require_numeric(columns, self.name)

    #: Honours ``na="pairwise"``: each test's correlation over its own complete rows.
    pairwise = True
    #: Runs on a data set in partitions (Dask): tables or sufficient statistics per partition.
    partitioned = True

    #: Recompute every test from the rows (QR per test, O(n)) instead of the shared
    #: correlation matrix (for checks and the benchmarks' "before").
    _from_rows = False

    def batch(self, tester, xs, y, z):
        if any(len(xk) != 1 for xk in xs):
            raise ValueError("test 'fisher_z' takes single variables as x, not sets")
        ds = tester.dataset
        xcols = [xk[0] for xk in xs]
        if ds.partitioned:  # R factors per partition, merged once (complete data: kept)
            r, n = partitioned_partials(ds, y, xcols, z)
        elif ds.missing is not None and ds.missing_columns[[y, *z, *xcols]].any():
            r, n = pairwise_partial_correlations(ds, y, xcols, z, getattr(tester, "xp", np),
                                                 self._from_rows)
        else:
            r = partial_correlations(ds, y, xcols, z, getattr(tester, "xp", np),
                                     self._from_rows)
            n = np.full(len(xs), float(tester.n))
        dof = n - len(z) - 3
        rows_column = getattr(tester, "rows_column", False)
        if not rows_column and (dof < 1).any():
            raise ValueError(f"fisher_z needs more than |z| + 3 = {len(z) + 3} rows; "
                             f"got {int(n.min())}")
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = np.sqrt(np.maximum(dof, 0.0)) * np.arctanh(r)
            log_p = np.log(2.0) + special.log_ndtr(-np.abs(stat))
            mi = -0.5 * np.log1p(-(r**2))
        short = dof < 1  # na="pairwise": too few complete rows for this test
        stat[short], log_p[short], mi[short] = 0.0, 0.0, 0.0
        table = results_table(len(xs), extra=("n",) if rows_column else (),
                              statistic=stat, df=np.nan, pvalue=np.minimum(np.exp(log_p), 1.0),
                              log_pvalue=np.minimum(log_p, 0.0), mi=mi,
                              calibration=np.where(short, SKIPPED, ASYMPTOTIC))
        if rows_column:
            table["n"] = n
        return table


def partial_correlations(ds, y: int, xcols, z, xp=np, from_rows: bool = False):
    """Partial correlations (k,) of the columns ``xcols`` of the Dataset ``ds`` with column
    y given the columns z, from its correlation matrix (:func:`~mbstat.ci.moments.
    column_moments`, computed once per data set; the rows where a test is ill posed), or
    from the rows alone (``from_rows``)."""
    if from_rows:
        cols = [y, *z, *xcols]
        u, unit, floor, _, _ = standardize(ds.numeric()[:, cols])
        m = len(z)
        return partial_from_rows(u, unit, floor, 0, range(m + 1, len(cols)), range(1, m + 1))
    return column_moments(ds, xp).partial(y, xcols, z)[0]


def pairwise_partial_correlations(ds, y: int, xcols, z, xp=np, from_rows: bool = False):
    """Partial correlations (k,) and rows (k,) of the columns ``xcols`` with y given z, each
    over the rows complete for its own x, y and z (test-wise deletion; ``ds.missing``
    marks the missing cells). The candidates complete on the rows complete for y and z
    share those rows and the correlation matrix of that missing pattern (kept for the
    data set); the others are computed from their own rows, one each."""
    miss = ds.missing
    z = list(z)
    xcols = np.asarray(xcols, dtype=np.intp)
    base = ~miss[:, [y, *z]].any(axis=1)
    r, n = np.zeros(len(xcols)), np.empty(len(xcols))
    shared = ~miss[np.ix_(base, xcols)].any(axis=0)
    n[shared] = base.sum()
    m = len(z)
    if shared.any() and n[shared][0] > m + 1:
        if from_rows:
            cols = [y, *z, *xcols[shared]]
            u, unit, floor, _, _ = standardize(ds.numeric()[np.ix_(base, cols)])
            r[shared] = partial_from_rows(u, unit, floor, 0, range(m + 1, len(cols)),
                                          range(1, m + 1))
        else:
            pattern = tuple(c for c in (y, *z) if ds.missing_columns[c])
            r[shared] = column_moments(ds, xp, pattern).partial(y, xcols[shared], z)[0]
    for i in np.flatnonzero(~shared):
        kept = base & ~miss[:, xcols[i]]
        n[i] = kept.sum()
        if n[i] > m + 1:
            u, unit, floor, _, _ = standardize(ds.numeric()[np.ix_(kept, [y, *z, xcols[i]])])
            r[i] = partial_from_rows(u, unit, floor, 0, [m + 1], range(1, m + 1))[0]
    return r, n
