"""The batched calibration (one compiled call permutes many flagged tests) gives the
p-values of the former per-test implementation, kept here verbatim as the reference, to the
bit: on many random sparse tables, every calibration (auto, semiparametric with either
match, permutation), x of one or two columns, and under ``na="pairwise"``. Both permute
canonical codes (levels by first appearance; formed here by pandas' factorize order)."""
import math

import numpy as np
import pandas as pd
import pytest

from mbstat import ci_test_batch
from mbstat.ci.tables import contingency
from mbstat.ci.result import PERMUTATION, SEMIPARAMETRIC
from mbstat.ci.tables.contingency import ContingencyTest, _ColumnKeys
from mbstat.ci.tables.counting import _kernels, joint_code, permutation_null


# ------------------------------------------- the former implementation (reference, verbatim)
def _old_semiparametric(statistic, permuted, match="mean+variance", mean=0.0, var=0.0):
    mean = float(permuted.mean()) + mean
    var = float(permuted.var(ddof=1)) + var if match == "mean+variance" else 2.0 * mean
    if mean <= 0.0 or var <= 0.0:
        return 0.0, 1.0, 0.0
    tol = 1e-9 * max(1.0, mean)
    if var <= tol * tol:
        above = statistic > mean + tol
        p = 1.0 / (len(permuted) + 1.0) if above else 1.0
        return mean, p, math.log(p)
    scale = var / (2.0 * mean)
    p, log_p = contingency.chi2_sf_logsf(statistic / scale, mean / scale)
    return mean, float(p), float(log_p)


def _old_permutation_p(self, column, keys, cards, xk, y, z, row, n, zcode=None,
                       moments=(0.0, 0.0, 0.0, 0.0)):
    column_no = int(self.stat == "x2")
    # the inputs and seed as the batched path forms them (the seed was a SeedSequence of the
    # same content words before the 2 x 2 strata were drawn as hypergeometric cells)
    xcode, ycode, zc, seed = self._permutation_input(column, keys, cards, xk, y, z, zcode)
    exact = self.calibration == "permutation"
    null, found, _ = permutation_null(xcode, ycode, zc, self.B, seed,
                                   0.0 if exact else contingency.DENSE_STRATUM)
    null = null[:, column_no]
    if exact:
        exceed = np.count_nonzero(null[1:] >= null[0] - 1e-9 * max(n, 1))
        p = (1.0 + exceed) / (self.B + 1.0)
        return row[1], p, math.log(p), PERMUTATION
    mean = found[column_no] + moments[column_no]
    var = found[2 + column_no] + moments[2 + column_no]
    # since constant strata are shifts (fitted law of the random part): statistic less the
    # shift, df the whole null mean
    shift = found[4 + column_no]
    df, p, log_p = _old_semiparametric(row[0] - shift, null[1:], self.match, mean, var)
    return df + shift, p, log_p, SEMIPARAMETRIC


class _FirstAppearance:
    """The data's codes with each column's levels numbered by first appearance down the
    rows (pandas' factorize order; levels never seen last in code order): the canonical
    codes the calibrations permute, formed independently (of a test's complete rows under
    test-wise deletion)."""

    def __init__(self, codes, cards):
        self.codes = np.empty_like(codes)
        for j in range(codes.shape[1]):
            col = codes[:, j]
            seen = pd.unique(col)
            order = [*seen, *(v for v in range(int(cards[j])) if v not in seen)]
            relabel = np.empty(len(order), dtype=np.int64)
            relabel[np.array(order, dtype=np.int64)] = np.arange(len(order))
            self.codes[:, j] = relabel[col]

    def column(self, j):
        return self.codes[:, j]


def _old_calibrate(self, tester, xs, y, z, out, todo):
    ds = tester.dataset
    canon = _FirstAppearance(ds.codes, ds.cardinalities)
    codes, cards, n = canon.codes, ds.cardinalities, tester.n
    key = _ColumnKeys(canon)
    z_all = sorted(z, key=key.__getitem__)
    zcode, _ = joint_code([codes[:, j] for j in z_all], cards[z_all], np, n)
    miss = ds.missing

    def rows(part):
        res = np.empty((len(part), 4))
        for r, i in enumerate(part):
            if miss is None:
                res[r] = _old_permutation_p(self, lambda j: codes[:, j], key, cards, xs[i], y,
                                            z, out[i], n, zcode=(z_all, zcode))
            else:
                kept = ~miss[:, [*xs[i], y, *z]].any(axis=1)
                local = _FirstAppearance(ds.codes[kept], cards)
                res[r] = _old_permutation_p(self, local.column, _ColumnKeys(local), cards,
                                            xs[i], y, z, out[i], n)
        return res

    done = _kernels()._split(rows, todo, len(todo) * n * (self.B + 1))
    out[todo, 1:4] = done[:, :3]
    out[todo, 5] = done[:, 3]


# ------------------------------------------------------------------------ random sparse data
def sparse_frame(seed, holes=0.0):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 400))
    cols = {}
    for j in range(8):  # sparse candidates: binary with few ones, a few with 3 levels
        levels = 3 if j % 4 == 3 else 2
        share = rng.uniform(0.01, 0.3)
        cols[f"x{j}"] = np.where(rng.random(n) < share, rng.integers(1, levels, n), 0)
    cols["y"] = np.where(rng.random(n) < rng.uniform(0.05, 0.5), 1, 0) + (
        rng.random(n) < 0.1) * int(rng.integers(0, 2))
    for j in range(3):
        cols[f"z{j}"] = rng.integers(0, int(rng.integers(2, 6)), n)
    frame = pd.DataFrame({k: pd.Categorical(v) for k, v in cols.items()})
    if holes:
        frame = frame.mask(rng.random(frame.shape) < holes)
    return frame


XS = [*(f"x{j}" for j in range(8)), ("x0", "x3"), ("x1", "x2")]
CASES = [dict(test="g2"), dict(test="x2"), dict(test="sp-g2"), dict(test="sp-x2", B=40),
         dict(test="sp-g2", match="mean"), dict(test="mc-g2", B=60), dict(test="g2", seed=7)]


def both(monkeypatch, frame, z, na="raise", **args):
    # the reference predates the 2 x 2 tails (enumerated or saddlepoint): compared without
    # them (tests/test_saddlepoint.py checks the batched tails against the per-test ones)
    monkeypatch.setattr(contingency, "SADDLEPOINT", False)
    new = ci_test_batch(frame, XS, "y", z, na=na, **args).table.copy()
    with monkeypatch.context() as m:
        m.setattr(ContingencyTest, "_calibrate", _old_calibrate)
        old = ci_test_batch(frame, XS, "y", z, na=na, **args).table.copy()
    return new, old


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_batched_calibration_equals_the_per_test_one(monkeypatch, case):
    calibrated = 0
    for seed in range(12):
        frame = sparse_frame(seed)
        z = [[], ["z0"], ["z0", "z1"], ["z0", "z1", "z2"]][seed % 4]
        new, old = both(monkeypatch, frame, z, **case)
        np.testing.assert_array_equal(new, old)  # to the bit, NaN where NaN
        calibrated += int(np.isin(new[:, 5], (SEMIPARAMETRIC, PERMUTATION)).sum())
    assert calibrated > 20  # the comparison covers calibrated tests, not only asymptotic ones


@pytest.mark.parametrize("case", CASES[:3] + CASES[5:6],
                         ids=lambda c: "-".join(map(str, c.values())))
def test_pairwise_missing_equals_the_per_test_one(monkeypatch, case):
    calibrated = 0
    for seed in range(8):
        frame = sparse_frame(100 + seed, holes=0.05)
        z = [["z0"], ["z0", "z1"], []][seed % 3]
        new, old = both(monkeypatch, frame, z, na="pairwise", **case)
        np.testing.assert_array_equal(new, old)
        calibrated += int(np.isin(new[:, 5], (SEMIPARAMETRIC, PERMUTATION)).sum())
    assert calibrated > 10


def test_many_tests_span_chunks_and_threads(monkeypatch):
    """More flagged tests than one compiled call takes (chunks), split across threads."""
    rng = np.random.default_rng(5)
    n = 150
    frame = pd.DataFrame({f"x{j}": pd.Categorical((rng.random(n) < 0.03).astype(int))
                          for j in range(contingency._CHUNK + 60)})
    frame["y"] = pd.Categorical((rng.random(n) < 0.2).astype(int))
    frame["z0"] = pd.Categorical(rng.integers(0, 8, n))
    xs = [c for c in frame.columns if c.startswith("x")]
    monkeypatch.setattr(contingency, "SADDLEPOINT", False)
    new = ci_test_batch(frame, xs, "y", ["z0"], test="g2").table.copy()
    with monkeypatch.context() as m:
        m.setattr(ContingencyTest, "_calibrate", _old_calibrate)
        old = ci_test_batch(frame, xs, "y", ["z0"], test="g2").table.copy()
    np.testing.assert_array_equal(new, old)
    assert (new[:, 5] == SEMIPARAMETRIC).sum() > contingency._CHUNK


def test_scalar_semiparametric_equals_the_former_one():
    rng = np.random.default_rng(3)
    for _ in range(200):
        permuted = rng.chisquare(rng.uniform(0.5, 20), int(rng.integers(2, 300)))
        if rng.random() < 0.1:
            permuted[:] = permuted[0]  # a point mass
        stat, mean, var = rng.uniform(0, 40), rng.uniform(0, 3), rng.uniform(0, 3)
        for match in ("mean+variance", "mean"):
            assert contingency.semiparametric(stat, permuted, match, mean, var) == \
                _old_semiparametric(stat, permuted, match, mean, var)
