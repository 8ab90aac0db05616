"""Contingency-table tests: G2 (mutual information) and Pearson X2, calibrated three ways.

Degrees of freedom follow bnlearn: ``(|X|-1)(|Y|-1) prod |Z|`` over the
declared levels (empty strata counted) by default, or bnlearn's adjusted
variant (``-adf``): per non-empty stratum (non-empty rows - 1)(non-empty
columns - 1), summed; an adjusted df of 0 (nothing to test: G2 = X2 = 0) is reported as
bnlearn 4.9 does, statistic 0, df 0, p 1, whether or not the power rule skipped the test.

The p-value of a test comes from one of three calibrations, recorded in its result:

* **asymptotic**: the chi-square with those df;
* **semiparametric** (after bnlearn's ``sp-mi``, Tsamardinos & Borboudakis 2010): a
  chi-square fitted to the statistic's permutation distribution, from B permutations of
  x within the strata of z. bnlearn matches the mean (df = mean of the permuted
  statistics, ``match="mean"``); mbstat by default matches the mean and the variance
  (a scaled chi-square c chi2(k), Satterthwaite 1946: c = var / 2 mean, k = 2 mean^2 /
  var), which holds the level where the mean alone is far too conservative (below 2 rows
  per cell: 0.4% rejections at 0.5 rows per cell against 4.7%, and a third of the power
  of the permutation test at 1 row per cell). Only the strata with fewer than
  :data:`DENSE_STRATUM` rows per cell, or an expected count below 5, are permuted; the
  chi-square moments of the others are added (the strata are independent under the
  permutations). A sparse stratum whose table is 2 x 2 adds its exact moments instead:
  permuting x within it draws its first cell from a hypergeometric law (both margins
  fixed), so the moments are sums over that law's support, what B permutations estimate
  (the limit B -> infinity: no Monte Carlo noise, and no draw at all for tests of binary x
  and y); a larger sparse stratum adds its exact moments where they are known
  (:mod:`~mbstat.ci.tables._table_moments`), and one whose statistics are the same in every
  permutation (one row per x or per y level) adds its value as a shift: the law is fitted
  to the random part and the shift subtracted from the statistic (fitted to constant plus
  random part, the scaled chi-square had the sum's mean but the random part's variance,
  too light a tail: 3% rejections at 0.01). Where every permuted stratum is
  2 x 2 (and ``match="mean+variance"``), the p-value is not the scaled chi-square's, which
  matches two moments but not the skewness of a sum of few discrete laws (liberal in the
  far tail: 137 rejections at 1e-3 among 100,000 sparse nulls, 100 expected), but the tail
  of the exact law of the sum, the dense strata's part a scaled chi-square with their
  moments (:func:`~mbstat.ci.tables._kernels.two_by_two_tail`): enumerated while the law has at
  most 4,096 values (calibration **exact** where no stratum is dense: the permutation
  p-value itself), else the Lugannani-Rice saddlepoint approximation (Daniels 1987;
  within a few % of the exact tail down to 1e-6), the scaled chi-square kept only near
  the mean (:data:`SADDLEPOINT`);
* **permutation** (Monte Carlo): the share of B permuted statistics at least as large
  (a 2 x 2 stratum drawn as one hypergeometric cell a permutation, the others shuffled).

``g2`` and ``x2`` (``calibration="auto"``) use the asymptotic chi-square where it can be
trusted and the semiparametric one elsewhere (:data:`TRUST_MIN_PER_CELL`,
:data:`TRUST_MAX_BIAS`); ``g2-adf`` and ``x2-adf`` stay asymptotic and, as bnlearn's
``mi-adf`` and ``x2-adf``, skip tests with fewer than 5 rows per cell (independence
assumed). Permutations run in one compiled kernel
(:func:`~mbstat.ci.tables.counting.permutation_null`), seeded by the contents of the test's
columns: the same data and test give the same p-value, whatever the order of the tests,
the order of the columns or their names.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from ... import _validation as v
from ..chi2 import CHI2, chi2_logsf, chi2_sf_logsf
from ..protocol import CITest
from ..result import EXACT, NOTES, PERMUTATION, SEMIPARAMETRIC, SKIPPED, table_dtype
from .counting import (DENSE_STRATUM, _ColumnKeys, _kernels, by_size, column_statistics, first_rows,
                       joint_code, masked_statistics, partitioned_calibration,
                       partitioned_statistics, permutation_null, relabelled, relabelling,
                       subset_statistics)

__all__ = ["CALIBRATION_CHOICES", "ContingencyTest", "PermutationTest", "TRUST_MAX_BIAS",
           "TRUST_MIN_PER_CELL", "chi2_logsf", "chi2_sf_logsf", "semiparametric"]

#: ``calibration`` of a contingency test: "auto" is asymptotic where it can be trusted and
#: semiparametric elsewhere.
CALIBRATION_CHOICES = ("auto", "asymptotic", "semiparametric", "permutation")
#: "auto" trusts the asymptotic chi-square from this many rows per cell of the full table
#: (declared levels, as bnlearn's power rule) ...
TRUST_MIN_PER_CELL = 5.0
#: ... and while G2's small-sample bias (Williams 1976; about df (1 + 1/|X|)(1 + 1/|Y|) / 6m
#: at m rows per cell) stays below this many standard deviations sqrt(2 df) of the
#: chi-square: the bias of the strata adds up, so large-df tests need more rows per cell
#: (at 0.1, about 2.7 sqrt(df): 8 rows per cell at df 8, 60 at df 500).
TRUST_MAX_BIAS = 0.1
#: Permutations of the semiparametric calibration (bnlearn's default for sp-mi) and of
#: the Monte Carlo one.
B_SEMIPARAMETRIC = 100
B_PERMUTATION = 5000
#: Tests whose permuted strata are all 2 x 2 take the saddlepoint tail of their exact
#: permutation law (:func:`~mbstat.ci.tables._kernels.saddlepoint_tail`) instead of the scaled
#: chi-square (``match="mean+variance"``).
SADDLEPOINT = True
#: What the semiparametric chi-square is fitted to (``match``).
MATCH_CHOICES = ("mean+variance", "mean")
_TABLE = table_dtype()
_TABLE_N = table_dtype(("n",))


class ContingencyTest(CITest):
    """G2 or Pearson X2 test on (stratified) contingency tables.

    Parameters
    ----------
    statistic : {"g2", "x2"}
    df : {"bnlearn", "adjusted"}
    min_per_cell : float, optional
        Power rule: when the rows number fewer than ``min_per_cell`` times the
        cells of the table (declared levels), the test is not performed and
        independence is assumed (calibration "skipped"), as bnlearn does for its
        adjusted-df tests with 5. None always tests.
    calibration : {"auto", "asymptotic", "semiparametric", "permutation"}
        How p-values are obtained (see the module docstring); "auto" (default) is
        asymptotic where the chi-square can be trusted, semiparametric elsewhere.
    B : int, optional
        Permutations of the semiparametric (default 100) or Monte Carlo (default 5000)
        calibration.
    seed : int, optional
        Seed of the permutations (default 0), mixed with the test's variables.
    match : {"mean+variance", "mean"}
        What the semiparametric chi-square matches: the mean and variance of the permuted
        statistics (default; a scaled chi-square, see :func:`semiparametric`) or the mean
        only, as bnlearn's ``sp-mi``. Either way the reported df is the mean of the
        permuted statistics.
    """

    kind = "discrete"

    def __init__(self, statistic="g2", df="bnlearn", min_per_cell=None, calibration="auto",
                 B=None, seed=None, match="mean+variance"):
        self.stat = v.check_choice("statistic", statistic, ("g2", "x2"))
        self.df_rule = v.check_choice("df", df, ("bnlearn", "adjusted"))
        self.min_per_cell = v.check_number("min_per_cell", min_per_cell, low=0,
                                           allow_none=True)
        self.calibration = v.check_choice("calibration", calibration, CALIBRATION_CHOICES)
        default_b = B_PERMUTATION if calibration == "permutation" else B_SEMIPARAMETRIC
        self.B = default_b if B is None else v.check_int("B", B, low=1)
        self.seed = v.check_content_seed(seed)
        self.match = v.check_choice("match", match, MATCH_CHOICES)
        if match == "mean+variance" and calibration in ("auto", "semiparametric"):
            v.check_int("B", self.B, low=2)  # a variance needs two permutations
        adj = "-adf" if df == "adjusted" else ""
        prefix = {"permutation": "mc-", "semiparametric": "sp-"}.get(calibration, "")
        self.name = prefix + statistic + ("" if prefix else adj)
        self.statistic_name = "G2" if statistic == "g2" else "X2"
        what = "Mutual Information (G2)" if statistic == "g2" else "Pearson's X2"
        self.method = f"{what} test of conditional independence" + (
            ", adjusted df" if adj else "")
        if calibration == "permutation":
            self.method = f"Monte Carlo ({self.B} permutations) {self.method}"
        elif calibration == "semiparametric":
            self.method = f"Semiparametric {self.method}"
        fitted = "mean and variance" if self.match == "mean+variance" else "mean"
        semi = ("df is the mean of the statistic under permutations of x within the strata "
                f"of z, the p-value that of a chi-square with its {fitted} (semiparametric): "
                "computed from each sparse stratum's permutation law (mbstat.ci."
                f"_table_moments), or estimated from {self.B} permutations where their error "
                "bound fails")
        exact = ("exact permutation p-value: every permuted stratum is 2 x 2, the law of the "
                 "statistic under permutations of x within the strata of z enumerated")
        if self.match == "mean+variance" and SADDLEPOINT:
            semi += ("; where every permuted stratum is 2 x 2, the tail of their exact law "
                     "(enumerated, or its saddlepoint approximation) beside the chi-square "
                     "of the dense strata")
        if calibration == "auto":
            too_few = (f"too few rows per cell for the asymptotic chi-square (fewer than "
                       f"{TRUST_MIN_PER_CELL:g}, or G2's small-sample bias above "
                       f"{TRUST_MAX_BIAS:g} sd): ")
            semi, exact = too_few + semi, too_few + exact
        self.notes = {**NOTES, SEMIPARAMETRIC: semi, EXACT: exact,
                      PERMUTATION: f"p-value from {self.B} permutations of x within the "
                                   "strata of z (Monte Carlo)"}

    def least_pvalue(self, alpha: float) -> float:
        """1 / (B + 1) under the Monte Carlo calibration, else 0."""
        return 1.0 / (self.B + 1.0) if self.calibration == "permutation" else 0.0

    def floor_advice(self, level: float) -> str:
        return f"pass B >= {math.floor(1.0 / level)} permutations"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(statistic={self.stat!r}, df={self.df_rule!r}, "
                f"min_per_cell={self.min_per_cell!r}, calibration={self.calibration!r}, "
                f"B={self.B!r}, seed={self.seed!r}, match={self.match!r})")

    #: :meth:`single`'s held arguments (:meth:`_hold_single`: the data set first, then the
    #: kernel, its bitmaps and constants), made on its first call.
    _single_args = None

    def __getstate__(self):  # pickled without :attr:`_single_args` (its data set)
        state = dict(self.__dict__)
        state.pop("_single_args", None)
        return state

    #: Honours ``na="pairwise"``: each test counts the rows complete for its own columns.
    pairwise = True
    #: Runs on a data set in partitions (Dask): tables or sufficient statistics per partition.
    partitioned = True

    def tables(self, tester, xs, y, z):
        """Raw table statistics (k, 4) of the batch, plus |X| (declared), |Y|, the
        declared strata and the rows each test used ((k,), or (1,) when all used every
        row)."""
        ds = tester.dataset
        if ds.partitioned:  # rows in partitions on a cluster: tables counted there, summed
            stats, rows, rx = partitioned_statistics(ds, xs, y, z)
            return stats, rx, ds.level_counts[y], math.prod(ds.level_counts[j] for j in z), rows
        if ds.missing is not None and ds.missing_columns[[y, *z, *{j for xk in xs for j in xk}]
                                                         ].any():
            stats, rows = masked_statistics(ds, xs, y, z)  # test-wise deletion
            rx = [math.prod(ds.level_counts[j] for j in xk) for xk in xs]
            return stats, rx, ds.level_counts[y], math.prod(ds.level_counts[j] for j in z), rows
        return (*self._tables(tester, xs, y, z), _all_rows(tester.n))

    def _tables(self, tester, xs, y, z):
        """:meth:`tables` of complete rows in memory."""
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
        for pos, subsets in by_size(xs):  # one batch per subset size
            rx[pos] = np.prod(ds.cardinalities[subsets].astype(np.float64), axis=1)
            stats[pos] = subset_statistics(codes, subsets, ds.cardinalities, yc, ry, strata,
                                           tester.xp)
        return stats, rx, ry, strata.declared

    def batch(self, tester, xs, y, z):
        stats, rx, ry, rz_declared, rows = self.tables(tester, xs, y, z)
        kernels = _kernels()
        min_per_cell = -1.0 if self.min_per_cell is None else float(self.min_per_cell)
        trust = TRUST_MIN_PER_CELL if self.calibration == "auto" else -1.0
        # test-wise deletion may leave a test no row: nothing to test, independence
        empty = rows < 1 if len(rows) > 1 or rows[0] < 1 else None
        out, flagged = kernels.finish_tests(np.ascontiguousarray(stats, dtype=np.float64),
                                   np.asarray(rx, dtype=np.float64), float(ry),
                                   float(rz_declared),
                                   rows if empty is None else np.maximum(rows, 1.0),
                                   int(self.stat == "x2"), self.df_rule == "adjusted",
                                   min_per_cell, trust, TRUST_MAX_BIAS, CHI2)
        if empty is not None and empty.any():
            empty = np.broadcast_to(empty, len(out))
            out[empty, 0], out[empty, 2:5], out[empty, 5] = 0.0, (1.0, 0.0, 0.0), SKIPPED
            flagged = np.count_nonzero(out[:, 5] == SEMIPARAMETRIC)
        self._calibrated(tester, xs, y, z, out, flagged)
        if getattr(tester, "rows_column", False):  # each test's rows: column "n"
            return np.column_stack([out, np.broadcast_to(rows, len(out))]).view(
                _TABLE_N).reshape(len(out))
        return out.view(_TABLE).reshape(len(out))

    def _calibrated(self, tester, xs, y, z, out, flagged) -> None:
        """Calibrate the rows of ``out`` (k, 6) that need it: every test performed under
        the semiparametric and Monte Carlo calibrations, the ``flagged`` ones under
        "auto" (tables where the chi-square cannot be trusted)."""
        if self.calibration in ("semiparametric", "permutation"):
            self._calibrate(tester, xs, y, z, out,
                            np.flatnonzero((out[:, 5] != SKIPPED) & (out[:, 1] > 0)))
        elif flagged:
            self._calibrate(tester, xs, y, z, out, np.flatnonzero(out[:, 5] == SEMIPARAMETRIC))

    def single(self, tester, x: int, y: int, z: tuple):
        """The results (1, 6) of one test of column ``x`` against y given z (positions) in
        one compiled call (:func:`~mbstat.ci.tables._query.single_test`), the numbers of
        :meth:`batch`; None where that path is needed (data in partitions or keeping
        missing cells, another backend, no level bitmaps, or tables the kernel leaves to
        the batch path's scatter)."""
        held = self._single_args
        if held is None or held[0] is not tester.dataset:  # the call's constant arguments,
            held = self._hold_single(tester)  # once per data set
            if held is None:
                return None
        elif tester.xp is not np:
            return None
        out = np.empty((1, 6))
        flagged = held[1](held[2], np.array((x, y, *z), dtype=np.int64), held[3], held[4],
                          out)
        if flagged:
            if flagged < 0:
                return None
            self._calibrated(tester, [(x,)], y, z, out, flagged)
        elif held[5]:  # every test calibrated
            self._calibrated(tester, [(x,)], y, z, out, 0)
        return out

    def _hold_single(self, tester):
        """:meth:`single`'s held arguments for ``tester``'s data: the data set, the kernel,
        the level bitmaps, the kernel's constants (:func:`~mbstat.ci.tables._query.
        single_args`) and whether every test is calibrated; None where the one-call path
        does not apply."""
        ds = tester.dataset
        if (ds.missing is not None or ds.partitioned or tester.xp is not np
                or ds.level_bits is None or _overridden(type(self))):
            return None
        query = _query()
        consts, params = query.single_args(
            ds.cardinalities, ds.n_rows, int(self.stat == "x2"), self.df_rule == "adjusted",
            -1.0 if self.min_per_cell is None else float(self.min_per_cell),
            TRUST_MIN_PER_CELL if self.calibration == "auto" else -1.0, TRUST_MAX_BIAS)
        held = self._single_args = (ds, query.single_test, ds.level_bits, consts, params,
                                    self.calibration in ("semiparametric", "permutation"))
        return held

    def _calibrate(self, tester, xs, y, z, out, todo) -> None:
        """Replace the asymptotic p-values of the rows ``todo`` of ``out`` by the
        semiparametric or permutation ones (codes from the host data, any backend; rows
        split across threads where that pays, the kernels release the GIL).

        The tests are permuted in chunks by one compiled call
        (:func:`~mbstat.ci.tables._kernels.permutation_nulls`) and their p-values formed in one
        vectorized pass (:meth:`_p_values`): per test, Python only forms its codes and seed;
        tests of one column on complete rows not even that (:meth:`_calibrate_columns`).
        No row to calibrate (every x or y constant: df 0, p 1 as asymptotic) is no work."""
        if len(todo) == 0:
            return None
        ds = tester.dataset
        if ds.partitioned:  # the rows of the strata that need permuting, gathered
            return partitioned_calibration(self, ds, xs, y, z, out, todo)
        codes, cards, n = ds.codes, ds.cardinalities, tester.n
        miss = ds.missing
        if miss is None:
            canon = _Canonical.of(ds)  # levels by first appearance: the same p-value
            canon.relabel(sorted({y, *z, *(j for i in todo for j in xs[i])}))  # whatever
            # the order of a column's levels
            key = _ColumnKeys(canon)  # by content: the same p-value whatever the column order
            z_all = sorted(z, key=key.__getitem__)
            zcode, _ = joint_code([canon.column(j) for j in z_all], cards[z_all], np, n)
            views = {}

            def column(j):  # one array per column: shared columns are passed once
                if j not in views:
                    views[j] = canon.column(j)
                return views[j]

        if miss is None and max(len(xs[i]) for i in todo) == 1:
            return self._calibrate_columns(tester, xs, y, z_all, zcode, key, out, todo)

        def rows(part):
            res = np.empty((len(part), 4))
            for lo in range(0, len(part), _CHUNK):
                chunk = part[lo:lo + _CHUNK]
                inputs = []
                for i in chunk:
                    if miss is None:
                        inputs.append(self._permutation_input(column, key, cards, xs[i], y,
                                                              z, zcode=(z_all, zcode)))
                    else:  # test-wise deletion: the test's complete rows (codes and seeds
                        # from them alone, as the complete-case subset's)
                        kept = np.flatnonzero(~miss[:, [*xs[i], y, *z]].any(axis=1))
                        local = _Canonical(codes, cards, None, len(kept), kept)
                        inputs.append(self._permutation_input(
                            local.column, _ColumnKeys(local), cards, xs[i], y, z))
                nulls, found, tails = _permutation_nulls(inputs, self.B, self._dense_min(),
                                                         self._tails(out[chunk]))
                res[lo:lo + len(chunk)] = self._p_values(out[chunk], nulls, found, n, tails)
            return res

        done = _kernels()._split(rows, todo, len(todo) * n * (self.B + 1))
        out[todo, 1:4] = done[:, :3]
        out[todo, 5] = done[:, 3]

    def _calibrate_columns(self, tester, xs, y, z_all, zcode, key, out, todo) -> None:
        """:meth:`_calibrate` of tests whose x is one column, complete rows: the columns are
        read in place from the code matrix, the seeds formed in one vectorized pass (the
        same seeds and p-values as :meth:`permutation_p`); columns whose levels are not in
        the order of their first appearance are passed relabelled (:class:`_Canonical`)."""
        codes, n = tester.dataset.codes, tester.n
        canon = key.canon
        xcols = np.array([xs[i][0] for i in todo], dtype=np.int64)
        crc = np.array([key[j][0] for j in xcols], dtype=np.uint64)
        y_crc = np.uint64(key[y][0])
        swap = (crc < y_crc) | ((crc == y_crc) & (xcols < y))  # (x, y) in content order
        pair = np.column_stack([np.where(swap, y_crc, crc), np.where(swap, crc, y_crc)])
        seeds = _seeds(self.seed, pair, [key[j][0] for j in z_all])
        zc = np.ascontiguousarray(zcode)
        kernels = _kernels()

        def rows(part):
            res = np.empty((len(part), 4))
            for lo in range(0, len(part), _CHUNK):
                at = part[lo:lo + _CHUNK]
                matrix, x_at, y_at = canon.matrix(codes, xcols[at], int(y))
                nulls, found, tails = kernels.column_nulls(
                    matrix, x_at, y_at, zc, swap[at], seeds[at], int(self.B),
                    self._dense_min(), self._tails(out[todo[at]]))
                res[lo:lo + len(at)] = self._p_values(out[todo[at]], nulls, found, n, tails)
            return res

        done = kernels._split(rows, np.arange(len(todo)), len(todo) * n * (self.B + 1))
        out[todo, 1:4] = done[:, :3]
        out[todo, 5] = done[:, 3]

    def _dense_min(self) -> float:
        return 0.0 if self.calibration == "permutation" else DENSE_STRATUM

    def _tails(self, rows, moments=(0.0, 0.0, 0.0, 0.0)):
        """The saddlepoint tails the kernels are asked for (k, 4): per test its statistic,
        the statistic's column (0 G2, 1 X2) and the null mean and variance of strata not
        among the rows (``moments``, G2 and X2 means then variances); the statistic NaN
        (none asked) under the Monte Carlo calibration, bnlearn's mean-only fit or
        :data:`SADDLEPOINT` off."""
        column_no = int(self.stat == "x2")
        tails = np.empty((len(rows), 4))
        tails[:, 0] = rows[:, 0]
        tails[:, 1:] = column_no, moments[column_no], moments[2 + column_no]
        if (not SADDLEPOINT or self.calibration == "permutation"
                or self.match != "mean+variance"):
            tails[:, 0] = np.nan
        return tails

    def _permutation_input(self, column, keys, cards, xk, y, z, zcode=None):
        """(x code, y code, z code, seed) of one test for :meth:`permutation_p` (see there)."""
        if zcode is None:
            zs = sorted(z, key=keys.__getitem__)
            rows = len(column(y))
            zcode = (zs, joint_code([column(j) for j in zs], cards[zs], np, rows)[0])
        zs, zc = zcode
        xk = sorted(xk, key=keys.__getitem__)
        xcode, _ = joint_code([column(j) for j in xk], cards[list(xk)], np, len(zc))
        ycode, pair = column(y), (*xk, y)
        if len(xk) == 1 and keys[xk[0]] < keys[y]:  # one variable each: (x, y) and
            xcode, ycode, pair = ycode, xcode, (y, xk[0])  # (y, x) are one test
        seed = _seeds(self.seed, np.array([[keys[j][0] for j in pair]], dtype=np.uint64),
                      [keys[j][0] for j in zs])[0]
        return xcode, ycode, zc, seed

    def _p_values(self, rows, nulls, found, n, tails, moments=None):
        """(k, 4) (df, p, log p, calibration code) of the tests of results ``rows`` (k, ...)
        from their permuted statistics ``nulls`` (k, B + 1, 2) and unpermuted moments
        ``found`` (k, 6: means, variances, shifts), plus ``moments`` (4,) of strata not
        among the rows; where the kernels gave a tail (``tails`` (k, 2): log p and code,
        not NaN: tests whose permuted strata are all 2 x 2), the p-value is that tail.
        The law fitted is the random part's: the shift (strata constant under the law) is
        subtracted from the statistic, and df, the statistic's null mean, includes it."""
        column_no = int(self.stat == "x2")
        null = nulls[:, :, column_no]
        res = np.empty((len(rows), 4))
        if self.calibration == "permutation":
            exceed = np.count_nonzero(null[:, 1:] >= null[:, :1] - 1e-9 * max(n, 1), axis=1)
            p = (1.0 + exceed) / (self.B + 1.0)
            res[:, 0], res[:, 1], res[:, 3] = rows[:, 1], p, PERMUTATION
            res[:, 2] = [math.log(q) for q in p]
            return res
        mean, var = found[:, column_no], found[:, 2 + column_no]
        if moments is not None:
            mean, var = mean + moments[column_no], var + moments[2 + column_no]
        shift = found[:, 4 + column_no]
        res[:, :3] = _semiparametric(rows[:, 0] - shift, null[:, 1:], self.match, mean, var)
        res[:, 0] += shift
        res[:, 3] = SEMIPARAMETRIC
        known = np.isfinite(tails[:, 0])
        res[known, 2] = tails[known, 0]
        res[known, 1] = np.exp(tails[known, 0])
        res[known, 3] = tails[known, 1]
        return res

    def permutation_p(self, column, keys, cards, xk, y, z, row, n, zcode=None,
                      moments=(0.0, 0.0, 0.0, 0.0)):
        """(df, p, log p, calibration code) of one test from permutations of x within the
        strata of z: ``column(j)`` gives the test's rows of column j, ``keys`` the columns'
        content keys (order and seeds: the same p-value whatever the column order),
        ``row`` the test's results row (statistic, df, ...), ``n`` the rows (tolerance),
        ``zcode`` optionally (z in key order, its joint code) already formed, ``moments``
        the null mean and variance (G2, X2, then their variances) of strata not among the
        rows (a data set in partitions gathers only the strata that need permuting)."""
        xcode, ycode, zc, seed = self._permutation_input(column, keys, cards, xk, y, z, zcode)
        row = np.asarray(row)[None, :]
        null, found, tail = permutation_null(xcode, ycode, zc, self.B, seed,
                                             self._dense_min(), self._tails(row, moments)[0])
        return tuple(self._p_values(row, null[None], found[None], n, tail[None],
                                    np.asarray(moments, dtype=np.float64))[0])


def _overridden(cls) -> bool:
    """Whether a subclass of :class:`ContingencyTest` counts or finishes its tests its own
    way (:meth:`~ContingencyTest.batch`, ``tables`` or ``_tables`` overridden): its single
    tests then take its batch path, not the compiled one of :meth:`~ContingencyTest.single`."""
    return any(getattr(cls, name) is not getattr(ContingencyTest, name)
               for name in ("batch", "tables", "_tables"))


_QUERY = None


def _query():
    """The one-test kernel's module (numba imported on first use, as :func:`_kernels`)."""
    global _QUERY
    if _QUERY is None:
        from . import _query as query  # deferred: compiled on the first single test

        _QUERY = query
    return _QUERY


#: Tests permuted by one compiled call (bounds the gathered columns: chunk x rows).
_CHUNK = 256
_ROWS = {}


def _all_rows(n: int) -> np.ndarray:
    """The rows every test of complete data used: (1,) float64, one per n (a single test
    spares the allocation; never written: left writable, as the kernels' other callers
    pass it, so that they share one compiled version)."""
    rows = _ROWS.get(n)
    if rows is None:
        if len(_ROWS) > 64:
            _ROWS.clear()
        rows = _ROWS[n] = np.array([float(n)])
    return rows


def _permutation_nulls(inputs, B: int, dense_min: float, tails):
    """:func:`~mbstat.ci.tables.counting.permutation_null` of the tests ``inputs`` ((x, y, z codes,
    seed) each, their ``tails`` (k, 4)) in one compiled call; a column shared by tests (the
    same array) is passed once."""
    slot, columns = {}, []
    tests = np.empty((len(inputs), 3), dtype=np.int64)
    for t, (*codes, _) in enumerate(inputs):
        for c, a in enumerate(codes):
            if id(a) not in slot:
                slot[id(a)] = len(columns)
                columns.append(a)
            tests[t, c] = slot[id(a)]
    starts = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in columns], out=starts[1:])
    data = np.concatenate(columns, dtype=np.int64, casting="unsafe")
    seeds = np.array([s for *_, s in inputs], dtype=np.uint64)
    return _kernels().permutation_nulls(data, starts, tests, seeds, int(B), float(dense_min),
                                        np.ascontiguousarray(tails, dtype=np.float64))


def _seeds(seed: int, pair, z_keys):
    """The permutations' seed of each test (k,) uint64 from its content keys: the
    calibration's ``seed``, the keys of its x and y columns in content order (``pair``,
    (k, m)), the size of z and the keys of z's columns in content order (``z_keys``), folded
    by splitmix64 (:func:`~mbstat.ci.tables._kernels.content_seeds`)."""
    k, m = pair.shape
    words = np.empty((k, m + 2 + len(z_keys)), dtype=np.uint64)
    words[:, 0] = seed
    words[:, 1:m + 1] = pair
    words[:, m + 1] = len(z_keys)
    words[:, m + 2:] = np.asarray(z_keys, dtype=np.uint64)
    return _kernels().content_seeds(words)


class _Canonical:
    """A data set's columns with their levels numbered in the order of their first
    appearance down the rows (levels never observed last): the codes that the
    permutations of the calibrations draw on and that key their seeds, so that relabelling
    or reordering a column's levels (reversed categories, a Parquet file's dictionary
    order) changes no p-value. In memory and in partitions the same relabelling
    (:func:`~mbstat.ci.tables.counting.first_rows`); under test-wise deletion, of the test's
    complete ``rows`` (as its complete-case subset would be). A column already in that
    order is read in place. One per data set (complete rows), its maps and relabelled
    columns kept (at most one copy of the code matrix)."""

    _of = weakref.WeakKeyDictionary()

    def __init__(self, codes, cards, missing, n_rows, rows=None):
        self.codes, self.cards, self.missing, self.n_rows = codes, cards, missing, n_rows
        self.rows = rows
        self.maps = {}
        self.columns = {}  # canonical codes of the columns read so far
        self.full = None  # the whole code matrix relabelled (see matrix)

    @classmethod
    def of(cls, ds):
        """The data set's (in memory), made once."""
        if ds not in cls._of:
            cls._of[ds] = cls(ds.codes, ds.cardinalities, ds.missing, ds.n_rows)
        return cls._of[ds]

    def relabel(self, columns) -> None:
        """Find the maps of ``columns`` not known yet (one vectorized pass)."""
        todo = [int(j) for j in columns if int(j) not in self.maps]
        if not todo:
            return
        if self.rows is None:
            firsts = first_rows(self.codes, self.cards, todo, self.missing)
        else:
            firsts = first_rows(self.codes[np.ix_(self.rows, todo)], self.cards[todo],
                                np.arange(len(todo)))
        self.maps.update((j, relabelling(f, self.n_rows)) for j, f in zip(todo, firsts))

    def column(self, j):
        """Canonical codes of column ``j`` (of :attr:`rows`), read-only, made once."""
        out = self.columns.get(j)
        if out is None:
            self.relabel([j])
            column = self.codes[:, j] if self.rows is None else self.codes[self.rows, j]
            out = self.columns[j] = relabelled(column, self.maps[j])
        return out

    def matrix(self, codes, xcols, y):
        """(code matrix, x columns, y column) for :func:`~mbstat.ci.tables._kernels.column_nulls`:
        ``codes`` itself where the columns are canonical, else the whole code matrix with
        every column relabelled, of the same dtype and layout, made once per data set
        (the tests' columns picked from it in place)."""
        cols = np.array(sorted({*xcols.tolist(), int(y)}), dtype=np.int64)  # (np.unique's
        # hash table costs ~1 ms even for a few columns)
        self.relabel(cols)
        if all(self.maps[int(j)] is None for j in cols):
            return codes, xcols, y
        if self.full is None:
            every = range(codes.shape[1])
            self.relabel(every)
            full = np.empty(codes.shape, dtype=codes.dtype, order="F")
            for j in every:
                full[:, j] = relabelled(codes[:, j], self.maps[j])
            full.flags.writeable = False  # the type (and compiled code) of the data's codes
            self.full = full
            self.columns = {j: full[:, j] for j in every}  # views: one copy in all
        return self.full, xcols, y


def semiparametric(statistic: float, permuted: np.ndarray, match: str = "mean+variance",
                   mean: float = 0.0, var: float = 0.0):
    """(df, p, log p) of ``statistic`` against a chi-square fitted to its ``permuted`` values
    plus an independent part of null ``mean`` and variance ``var`` (the strata that were
    not permuted, see :func:`~mbstat.ci.tables.counting.permutation_null`).

    df is their mean, the statistic's expectation under the null (bnlearn's estimate). The
    p-value is the chi-square's with that df (``match="mean"``, bnlearn's sp-mi), or that
    of a scaled chi-square c chi2(k) with their mean and variance (``"mean+variance"``:
    c = var / 2 mean, k = 2 mean^2 / var; c = 1 and k = df where the variance is a
    chi-square's). Permuted values that are all 0 (x or y constant within every stratum)
    give df 0 and p 1; permuted values that do not vary beyond rounding (no permutation
    moves the statistic: an ID-like column) give the permutation p-value, 1 unless the
    statistic exceeds them all.
    """
    out = _semiparametric(np.array([float(statistic)]), np.asarray(permuted, float)[None, :],
                          match, np.array([float(mean)]), np.array([float(var)]))
    return tuple(float(a) for a in out[0])


def _semiparametric(statistic, permuted, match, mean, var):
    """:func:`semiparametric` of k tests: ``statistic``, ``mean``, ``var`` (k,), ``permuted``
    (k, B); returns (k, 3)."""
    mean = permuted.mean(axis=1) + mean
    var = permuted.var(axis=1, ddof=1) + var if match == "mean+variance" else 2.0 * mean
    res = np.empty((len(mean), 3))
    res[:] = 0.0, 1.0, 0.0  # every permuted value 0 (mean or var <= 0): df 0 and p 1
    tol = 1e-9 * np.maximum(1.0, mean)
    fitted = (mean > 0.0) & (var > 0.0)
    point = fitted & (var <= tol * tol)  # no permutation moves the statistic (an ID-like
    # x or y within the strata, or one row per stratum): the null is a point mass, so p is
    # the permutation p-value, 1 unless the statistic exceeds every permuted value
    for i in np.flatnonzero(point):
        p = 1.0 / (permuted.shape[1] + 1.0) if statistic[i] > mean[i] + tol[i] else 1.0
        res[i] = mean[i], p, math.log(p)
    scaled = np.flatnonzero(fitted & ~point)
    if len(scaled):
        scale = var[scaled] / (2.0 * mean[scaled])
        p, log_p = chi2_sf_logsf(statistic[scaled] / scale, mean[scaled] / scale)
        res[scaled, 0], res[scaled, 1], res[scaled, 2] = mean[scaled], p, log_p
    return res


class PermutationTest(ContingencyTest):
    """Monte Carlo permutation version of the G2 or X2 test (``mc-g2``, ``mc-x2``).

    x is permuted within the strata of z, ``B`` times; the p-value is
    (1 + #{permuted statistic >= observed}) / (B + 1). Each test draws from a
    generator seeded by ``seed`` and the test's variables, so results do not
    depend on the order in which tests are asked.
    """

    def __init__(self, statistic="g2", B=B_PERMUTATION, seed=None):
        super().__init__(statistic, "bnlearn", calibration="permutation", B=B, seed=seed)
