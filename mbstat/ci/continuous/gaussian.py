"""Fisher's z test of zero partial correlation, for Gaussian data."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..protocol import CITest
from ..result import ASYMPTOTIC, SKIPPED, table_dtype
from .moments import (WELL_POSED, column_moments, partial_from_correlations, partial_from_rows,
                      partitioned_partials, standardize)

__all__ = ["FisherZ"]


class FisherZ(CITest):
    """Fisher's z transform of the partial correlation of x and y given z.

    The statistic is ``sqrt(n - |z| - 3) * atanh(r)``, two-sided normal p-value (as
    bnlearn's ``zf``; |z| counts z's columns). The partial correlation comes from the
    correlation matrix of the data's columns, computed once per data set and shared by
    every test of a search (:mod:`mbstat.ci.continuous.moments`): a test costs O(|z|^3) whatever n,
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
        """Refuse columns that hold no numbers (:meth:`~mbstat.data.Dataset.require_numeric`):
        text levels, and pandas Categoricals, ordered or not: a Pearson correlation reads
        the spacing of values, which declared categories do not have (R's ``cor`` refuses
        factors alike). Integer and bool columns enter with their values (0/1), as in R."""
        ds = tester.dataset
        if self.__dict__.get("_numeric") is ds:  # every column of ds is numeric: seen once
            return
        if not ds.partitioned and all(ds._numbers):
            self._numeric = ds
            return
        ds.require_numeric(columns, self.name)

    #: Honours ``na="pairwise"``: each test's correlation over its own complete rows.
    pairwise = True
    #: Runs on a data set in partitions (Dask): tables or sufficient statistics per partition.
    partitioned = True

    #: Recompute every test from the rows (QR per test, O(n)) instead of the shared
    #: correlation matrix (for checks and the benchmarks' "before").
    _from_rows = False

    def batch(self, tester, xs, y, z):
        k = len(xs)
        xcols = _single_columns(xs)
        ds = tester.dataset
        rows_column = getattr(tester, "rows_column", False)
        m = len(z)
        if not rows_column and ds.missing is None and not self._from_rows \
                and not ds.partitioned:  # the common case, leanest (one compiled call)
            lean = self._lean(tester, ds, y, z, xcols)
            if lean is not None:
                return lean
        if ds.partitioned:  # R factors per partition, merged once (complete data: kept)
            r, n = partitioned_partials(ds, y, xcols, z)
        elif ds.missing is not None and ds.missing_columns[[y, *z, *xcols]].any():
            r, n = pairwise_partial_correlations(ds, y, xcols, z, getattr(tester, "xp", np),
                                                 self._from_rows)
        elif self._from_rows:
            r = partial_correlations(ds, y, xcols, z, from_rows=True)
            n = np.full(k, float(tester.n))
        else:  # the common case, lean: one compiled call for r and the table
            if tester.n - m - 3 < 1 and not rows_column:
                self._too_few(m, tester.n)
            cm = self._moments(ds, getattr(tester, "xp", np))
            zc = np.array(z, dtype=np.int64)
            out = np.empty((k, 7 if rows_column else 6))
            status = np.empty(k, dtype=np.int8)
            store, slot = cm.state
            if not fisher_from_correlations(store, slot, cm.unit, cm.floor, y, zc, xcols,
                                            WELL_POSED, float(tester.n), out, status):
                store, slot = cm.rows([y, *z])
                fisher_from_correlations(store, slot, cm.unit, cm.floor, y, zc, xcols,
                                         WELL_POSED, float(tester.n), out, status)
            redo = np.flatnonzero(status == 2)
            if len(redo):  # ill posed for the correlations: the rows decide (those rows only)
                part = np.empty((len(redo), out.shape[1]))
                fisher_table(cm.partial(y, xcols[redo], z)[0],
                             np.full(len(redo), float(tester.n)), m, part)
                out[redo] = part
            return out.view(table_dtype(("n",) if rows_column else ())).reshape(k)
        if not rows_column and (n - m - 3 < 1).any():
            self._too_few(m, n.min())
        out = np.empty((k, 7 if rows_column else 6))
        fisher_table(r, n, m, out)
        return out.view(table_dtype(("n",) if rows_column else ())).reshape(k)

    def _lean(self, tester, ds, y, z, xcols):
        """The table of a batch on complete data in memory from the shared correlation
        matrix, in one compiled call (the rows of y and z present, none ill posed), or None
        (the general path then answers, the same numbers)."""
        n = tester.n
        m = len(z)
        if n - m - 3 < 1:
            self._too_few(m, n)
        held = self.__dict__.get("_held")
        if held is not None and held[0] is ds and held[1] is getattr(tester, "xp", np):
            cm = held[2]
        else:
            cm = self._moments(ds, getattr(tester, "xp", np))
        k = len(xcols)
        out = np.empty((k, 6))
        store, slot = cm.state
        if _fisher_lean(store, slot, cm.unit, cm.floor, y, np.array(z, dtype=np.int64), xcols,
                        WELL_POSED, float(n), out):
            return out.view(_TABLE).reshape(k)
        return None

    def max_conditioning(self, n: int):
        """n - 4: the test needs more than |z| + 3 rows."""
        return max(n - 4, 0)

    def _too_few(self, m, n):
        raise ValueError(f"{self.name} needs more than |z| + 3 = {m + 3} rows; got {int(n)}")

    def _moments(self, ds, xp):
        """The data set's :class:`~mbstat.ci.continuous.moments.ColumnMoments` (looked up once per
        data set and array module by this test)."""
        hit = self.__dict__.get("_held")
        if hit is not None and hit[0] is ds and hit[1] is xp:
            return hit[2]
        cm = column_moments(ds, xp)
        self._held = (ds, xp, cm)
        return cm


_LOG2 = math.log(2.0)
_SQRT1_2 = math.sqrt(0.5)


@njit(cache=True, nogil=True)
def _log_two_sided(stat):
    """log P(|N(0, 1)| >= |stat|) = log erfc(|stat| / sqrt 2): log1p(-erf) near 0, log erfc
    in the body, and past 37 (where erfc underflows) the asymptotic series of
    Abramowitz & Stegun 26.2.12 for log 2 Phi(-|stat|)."""
    a = abs(stat)
    if a < 1.0:
        return math.log1p(-math.erf(a * _SQRT1_2))
    if a < 37.0:
        return math.log(math.erfc(a * _SQRT1_2))
    if a == np.inf:
        return -np.inf
    x2 = a * a
    term, total = 1.0, 1.0
    for j in range(1, 12):
        term *= -(2.0 * j - 1.0) / x2
        total += term
    return _LOG2 - 0.5 * x2 - math.log(a) - 0.5 * math.log(2.0 * math.pi) + math.log(total)


@njit(cache=True, nogil=True)
def fisher_table(r, n, m, out):
    """Fill the results table ``out`` (k, 6 or 7: the FIELDS, then the rows) from partial
    correlations ``r`` over ``n`` rows given |z| = m: z = sqrt(n - m - 3) atanh(r), the
    two-sided normal log p-value, mi = -log(1 - r^2) / 2; "skipped" with too few rows."""
    for t in range(len(r)):
        dof = n[t] - m - 3.0
        row = out[t]
        row[1] = np.nan
        if out.shape[1] > 6:
            row[6] = n[t]
        if dof < 1.0:
            row[0], row[2], row[3], row[4], row[5] = 0.0, 1.0, 0.0, 0.0, SKIPPED
            continue
        rt = r[t]
        if rt >= 1.0 or rt <= -1.0:
            stat, mi = math.copysign(np.inf, rt), np.inf
        else:
            stat = math.sqrt(dof) * math.atanh(rt)
            mi = -0.5 * math.log1p(-rt * rt)
        log_p = min(_log_two_sided(stat), 0.0)
        row[0], row[2], row[3], row[4], row[5] = stat, math.exp(log_p), log_p, mi, ASYMPTOTIC


@njit(cache=True, nogil=True)
def fisher_rescale(out, factor):
    """Multiply the statistics of a table ``out`` (k, columns) by ``factor`` (a variance
    factor's 1 / sqrt, as Spearman's 1.06) and recompute its p-values."""
    for t in range(out.shape[0]):
        if out[t, 5] == SKIPPED:
            continue
        stat = out[t, 0] * factor
        log_p = min(_log_two_sided(stat), 0.0)
        out[t, 0], out[t, 2], out[t, 3] = stat, math.exp(log_p), log_p


@njit(cache=True, nogil=True)
def fisher_from_correlations(store, slot, unit, floor, y, z, xs, theta, n, out, status):
    """:func:`~mbstat.ci.continuous.moments.partial_from_correlations` and :func:`fisher_table` in
    one call (all over n rows); False (nothing done) when a row of y or z is missing."""
    if slot[y] < 0:
        return False
    for i in range(len(z)):
        if slot[z[i]] < 0:
            return False
    k = len(xs)
    r = np.zeros(k)
    partial_from_correlations(store, slot, unit, floor, y, z, xs, theta, r, status)
    fisher_table(r, np.full(k, n), len(z), out)
    return True


@njit(cache=True, nogil=True)
def _fisher_lean(store, slot, unit, floor, y, z, xs, theta, n, out):
    """:func:`fisher_from_correlations` where every candidate is well posed: True with
    ``out`` filled; False (``out`` undefined) when a row of y or z is missing or some
    candidate is ill posed (the caller then takes the general path)."""
    k = len(xs)
    status = np.empty(k, dtype=np.int8)
    if not fisher_from_correlations(store, slot, unit, floor, y, z, xs, theta, n, out, status):
        return False
    for t in range(k):
        if status[t] == 2:
            return False
    return True


def _single_columns(xs) -> np.ndarray:
    """The column positions (k,) of candidates given as 1-tuples; an error naming x for a
    set of variables."""
    try:
        cols = np.array(xs, dtype=np.int64)
    except ValueError:  # tuples of different lengths
        cols = None
    if cols is None or cols.shape != (len(xs), 1):
        if any(len(xk) != 1 for xk in xs):
            raise ValueError("test 'fisher_z' takes single variables as x, not sets")
        cols = np.array([xk[0] for xk in xs], dtype=np.int64)
    return cols.reshape(len(xs))


_TABLE = table_dtype(())


def partial_correlations(ds, y: int, xcols, z, xp=np, from_rows: bool = False):
    """Partial correlations (k,) of the columns ``xcols`` of the Dataset ``ds`` with column
    y given the columns z, from its correlation matrix (:func:`~mbstat.ci.continuous.moments.
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
