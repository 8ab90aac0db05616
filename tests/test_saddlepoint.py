"""Tests whose permuted strata are all 2 x 2 take the tail of their exact permutation law
(:func:`mbstat.ci.tables._kernels.two_by_two_tail`): enumerated (convolved) while it has few
values, else the Lugannani-Rice saddlepoint approximation. Checked against the exact tail
convolved from scipy's hypergeometric laws (1-4 strata, one with a chi-square part: the
dense strata), down to p = 1e-6 and in the far tail (log p where p underflows); the
saddlepoint beats the scaled chi-square on laws of many strata; batched, single and
swapped tests give the same p-values. The level in the far tail is measured in
benchmarks/calibration_tail.py (20,000 nulls)."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mbstat import ci_test, ci_test_batch
from mbstat.ci.result import EXACT, SEMIPARAMETRIC
from mbstat.ci.tables.counting import _kernels

K = _kernels()


def _law(r1, c1, big_n, column):
    """G2 (column 0) or X2 (1) of a 2 x 2 stratum over its hypergeometric support (by hand,
    scipy's pmf)."""
    cells = np.arange(max(0, r1 + c1 - big_n), min(r1, c1) + 1)
    values = []
    for a in cells:
        table = np.array([[a, r1 - a], [c1 - a, big_n - r1 - c1 + a]], dtype=float)
        expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / big_n
        if column == 0:
            pos = table > 0
            values.append(2.0 * np.sum(table[pos] * np.log(table[pos] / expected[pos])))
        else:
            values.append(np.sum((table - expected) ** 2 / expected))
    return np.array(values), stats.hypergeom(big_n, r1, c1).pmf(cells)


def _convolved(margins, column):
    values, probs = np.zeros(1), np.ones(1)
    for r1, c1, big_n in margins:
        v, p = _law(r1, c1, big_n, column)
        values = (values[:, None] + v[None, :]).ravel()
        probs = (probs[:, None] * p[None, :]).ravel()
    return values, probs


def _kernel_laws(margins, column):
    m = np.array([[r1, n - r1, c1, n - c1, n] for r1, c1, n in margins], dtype=np.int64)
    g, x, prob, first = K._two_by_two_laws(m, K.clogc_table(int(m[:, 4].max())))
    used = first[-1]  # the arrays are laid out for min(r1, c1) + 1 values a stratum
    return (g if column == 0 else x)[:used], prob[:used], first, m


def _exact(s, values, probs, mean=0.0, var=0.0):
    """P(S >= s): the discrete law alone, or plus a scaled chi-square of mean, var."""
    if var == 0.0:
        return probs[values >= s - 1e-9].sum()
    scale = var / (2.0 * mean)
    return probs @ stats.chi2.sf(np.maximum(s - values, 0.0) / scale, 2.0 * mean ** 2 / var)


def _at_levels(values, probs, mean=0.0, var=0.0, levels=(0.5, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5,
                                                           1e-6)):
    """Statistics whose exact tail is nearest each level (values of the law; a grid beside a
    chi-square part) and those tails."""
    grid = np.unique(np.round(values, 9))
    if var > 0.0:
        grid = np.linspace(grid.min(), grid.max() + 60.0, 600)
    tails = np.array([_exact(s, values, probs, mean, var) for s in grid])
    at = [int(np.argmin(np.abs(np.log(tails) - math.log(level)))) for level in levels]
    return grid[at], tails[at]


MARGINS = {"one": [(3, 7, 20)], "two": [(20, 30, 60), (15, 20, 40)],
           "three": [(10, 12, 30), (8, 9, 25), (12, 15, 35)],
           "four": [(3, 3, 8), (4, 5, 9), (5, 7, 13), (6, 6, 12)]}


@pytest.mark.parametrize("column", [0, 1], ids=["g2", "x2"])
@pytest.mark.parametrize("name", MARGINS)
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "with-dense"])
def test_enumerated_tail_is_the_exact_one(name, column, dense):
    """1-4 sparse strata (and beside a dense part, a scaled chi-square of mean 3.1 and
    variance 6): the enumerated tail equals scipy's convolution from p = 0.5 to 1e-6,
    coded EXACT alone and SEMIPARAMETRIC beside the chi-square."""
    mean, var = (3.1, 6.0) if dense else (0.0, 0.0)
    values, probs = _convolved(MARGINS[name], column)
    val, prob, first, margins = _kernel_laws(MARGINS[name], column)
    for s, tail in zip(*_at_levels(values, probs, mean, var)):
        log_p, code = K.two_by_two_tail(s, val, prob, first, mean, var, margins)
        assert math.isclose(math.exp(log_p), tail, rel_tol=1e-9), (s, tail)
        assert code == (K.SEMIPARAMETRIC if dense else K.EXACT)
    assert (K.EXACT, K.SEMIPARAMETRIC) == (EXACT, SEMIPARAMETRIC)  # the kernels' codes


def test_far_tail_log_p_is_finite_and_exact():
    """A statistic at the law's top: p = the product of the strata's top probabilities
    (1e-76 here), exact in log space; beside a chi-square part far out (p below 1e-300)
    the log p stays finite and equals log-sum-exp of scipy's chi2.logsf."""
    margins = [(20, 20, 40)] * 3
    values, probs = _convolved(margins, 0)
    val, prob, first, margins = _kernel_laws(margins, 0)
    top = values.max()
    log_p, code = K.two_by_two_tail(top, val, prob, first, 0.0, 0.0, margins)
    expected = 3.0 * math.log(2.0 * stats.hypergeom(40, 20, 20).pmf(20))
    assert code == K.EXACT and math.isclose(log_p, expected, rel_tol=1e-9)
    mean, var = 4.0, 9.0
    scale = var / (2.0 * mean)
    s = top + 700.0  # p near 1e-150: scipy's chi2.logsf is exact there
    log_p, _ = K.two_by_two_tail(s, val, prob, first, mean, var, margins)
    terms = np.log(probs) + stats.chi2.logsf((s - values) / scale, 2.0 * mean ** 2 / var)
    assert math.isclose(log_p, np.logaddexp.reduce(terms), rel_tol=1e-9)
    s = top + 1500.0  # p below 1e-300: still finite, and the saddlepoint agrees
    log_p, _ = K.two_by_two_tail(s, val, prob, first, mean, var, margins)
    assert np.isfinite(log_p) and log_p < -700
    assert math.isclose(K.saddlepoint_tail(s, val, prob, first, mean, var), log_p,
                        rel_tol=1e-3)


def _many_strata(seed, h):
    rng = np.random.default_rng(seed)
    margins = []
    for _ in range(h):
        big_n = int(rng.integers(2, 14))
        margins.append((int(rng.integers(1, big_n)), int(rng.integers(1, big_n)), big_n))
    return margins


def _grid_law(margins, column, grid=1e-5):
    """The convolved law on a grid (atoms within 1e-5 merged, masses below 1e-16 dropped)."""
    values, probs = np.zeros(1, dtype=np.int64), np.ones(1)
    for r1, c1, big_n in margins:
        v, p = _law(r1, c1, big_n, column)
        values = (values[:, None] + np.round(v / grid).astype(np.int64)[None, :]).ravel()
        values, where = np.unique(values, return_inverse=True)
        probs = np.bincount(where, weights=(probs[:, None] * p[None, :]).ravel())
        keep = probs > 1e-16
        values, probs = values[keep], probs[keep]
    return values * grid, probs


@pytest.mark.parametrize("column", [0, 1], ids=["g2", "x2"])
def test_saddlepoint_beats_the_scaled_chi_square(column):
    """Laws of 15 sparse strata (too many values to enumerate: the saddlepoint is what
    two_by_two_tail returns): the Lugannani-Rice tail is within 5% of the exact one from
    p = 1e-2 to 1e-6 (2% on these laws), closer than the scaled chi-square at every level,
    which is off by over 20% at 1e-6 (25% to 150% here: c chi2(k) matches two moments,
    not the skewness)."""
    for seed in (2, 5):
        margins = _many_strata(seed, 15)
        values, probs = _grid_law(margins, column)
        tails = np.cumsum(probs[::-1])[::-1]
        mean = probs @ values
        var = probs @ (values - mean) ** 2
        val, prob, first, margins = _kernel_laws(margins, column)
        for level in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
            i = int(np.argmin(np.abs(np.log(tails) - math.log(level))))
            s, exact = values[i], tails[i]
            log_p, code = K.two_by_two_tail(s, val, prob, first, 0.0, 0.0, margins)
            assert code == K.SEMIPARAMETRIC  # past EXACT_MAX_ATOMS: the saddlepoint
            error = abs(math.exp(log_p) / exact - 1.0)
            assert error < 0.05, (seed, level, error)
            scale = var / (2.0 * mean)
            scaled = abs(stats.chi2.sf(s / scale, mean / scale) / exact - 1.0)
            assert error < scaled, (seed, level, error, scaled)
            if level == 1e-6:
                assert scaled > 0.2, (seed, scaled)


def test_saddlepoint_falls_back_near_the_mean():
    """Within SADDLE_MIN_W of the mean (and below it) the saddlepoint returns NaN: the
    caller keeps the scaled chi-square."""
    val, prob, first, margins = _kernel_laws(_many_strata(2, 15), 0)
    mean = prob @ val
    assert math.isnan(K.saddlepoint_tail(mean - 1.0, val, prob, first, 0.0, 0.0))
    assert math.isnan(K.saddlepoint_tail(mean + 1e-3, val, prob, first, 0.0, 0.0))


def _sparse_frame(seed, n=400, k=12):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"x{j}": (rng.random(n) < rng.uniform(0.01, 0.2)).astype(int)
                          for j in range(k)})
    frame["y"] = (rng.random(n) < 0.3).astype(int)
    for j in range(4):
        frame[f"z{j}"] = rng.integers(0, 2, n)
    return frame.astype("category")


@pytest.mark.parametrize("test", ["g2", "x2"])
def test_batch_single_and_swapped_agree(test):
    """The tails of a batch (one-column path, read in place) equal those of single tests, of
    x and y swapped and of two-column x sets (the gathered path); an independent check of
    one exact p-value by scipy's convolution."""
    frame = _sparse_frame(3)
    xs = [f"x{j}" for j in range(12)]
    z = ["z0", "z1", "z2", "z3"]
    batch = ci_test_batch(frame, xs, "y", z, test=test)
    codes = batch.calibration
    assert {"exact"} <= set(codes)
    for j, x in enumerate(xs):
        one = ci_test(frame, x, "y", z, test=test)
        assert (one.pvalue, one.calibration) == (batch.table[j, 2], codes[j])
        swapped = ci_test(frame, "y", x, z, test=test)  # the statistic to the last bits
        assert math.isclose(one.pvalue, swapped.pvalue, rel_tol=1e-9)
        assert one.calibration == swapped.calibration
    j = int(np.flatnonzero(codes == "exact")[0])
    column = 0 if test == "g2" else 1
    margins = []
    for _, part in frame.groupby(z, observed=True):
        table = pd.crosstab(part[xs[j]], part["y"]).to_numpy()
        if table.shape == (2, 2):
            margins.append((int(table[0].sum()), int(table[:, 0].sum()), int(table.sum())))
    values, probs = _convolved(margins, column)
    assert math.isclose(batch.table[j, 2], _exact(batch.table[j, 0], values, probs),
                        rel_tol=1e-9)
    pair = ci_test_batch(frame, [("x0", "x1"), ("x2", "x3")], "y", ["z0"], test=test)
    for i, (a, b) in enumerate([("x0", "x1"), ("x2", "x3")]):
        assert pair.table[i, 2] == ci_test(frame, [a, b], "y", ["z0"], test=test).pvalue


def test_partitioned_equals_memory():
    """A data set in partitions (Dask) gathers the sparse strata's rows and passes the dense
    strata's moments: the same tails and codes as in memory (exact, and enumerated or
    saddlepoint beside a dense stratum)."""
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from mbstat import as_dataset

    rng = np.random.default_rng(8)
    n = 1200
    frame = _sparse_frame(8, n=n, k=6)
    frame["d"] = pd.Categorical(np.where(rng.random(n) < 0.9, 0, rng.integers(1, 3, n)))
    small = np.flatnonzero(frame["d"].to_numpy() != 0)  # rows of the small strata of d
    rare = np.zeros(n, dtype=int)
    rare[small[::len(small) // 6][:6]] = 1  # 6 ones in sparse strata alone: exact
    frame["rare"] = pd.Categorical(rare)
    xs = [f"x{j}" for j in range(6)] + ["rare"]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        parted = as_dataset(dd.from_pandas(frame, npartitions=3))
        mem = as_dataset(frame)
        seen = set()
        for z in (["z0", "z1", "z2", "z3", "d"], ["d"]):  # all sparse; one dense stratum
            for x in xs:
                got = ci_test(parted, x, "y", z, test="sp-g2")
                ref = ci_test(mem, x, "y", z, test="sp-g2")
                assert got.calibration == ref.calibration
                assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
                seen.add(ref.calibration)
    assert {"exact", "semiparametric"} <= seen


@pytest.mark.parametrize("test", ["g2", "x2"])
def test_many_strata_of_one_symmetric_law_are_enumerated(test):
    """100 blocks of 4 rows, x and y 2/2 in each (a blocked design): each stratum's G2 or X2
    takes 2 values (a symmetric law: cells 0 and 2 give the same one), so the sum takes 101
    (a lattice: the saddlepoint's tail was 22-36% low at 1e-2 to 1e-6) and is enumerated:
    P(S >= s) = P(Binomial(100, 1/3) >= the blocks at the top), scipy's binom."""
    blocks = 100
    rng = np.random.default_rng(5)
    y = np.concatenate([rng.permutation([0, 0, 1, 1]) for _ in range(blocks)])
    x = y.copy()
    for b in range(50, blocks):  # one (0, 1) pair swapped: cell (1, 1) = 1, statistic 0
        part = slice(4 * b, 4 * b + 4)
        ones, zeros = np.flatnonzero(y[part] == 1), np.flatnonzero(y[part] == 0)
        x[4 * b + ones[0]], x[4 * b + zeros[0]] = 0, 1
    frame = pd.DataFrame({"x": x, "y": y, "z": np.repeat(np.arange(blocks), 4)})
    res = ci_test(frame.astype("category"), "x", "y", ["z"], test=test)
    assert res.calibration == "exact"
    assert math.isclose(res.pvalue, stats.binom(blocks, 1 / 3).sf(49), rel_tol=1e-9)
