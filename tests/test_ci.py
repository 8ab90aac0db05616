"""The CI-test engine, checked against scipy and against references computed here."""
import dataclasses
import decimal
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import mbstat
from mbstat import ci_test, ci_test_batch
from mbstat.backend import gpu_available, resolve_backend
from mbstat.ci.engine import CITester
from mbstat.ci import chi2
from mbstat.ci.chi2 import chi2_logsf
from mbstat.ci.continuous._design import strata
from mbstat.ci.continuous.mixed import g2_within
from mbstat.ci.tables import contingency, counting


def random_frame(n=500, levels=(3, 2, 4, 2), seed=0, dependent=True):
    rng = np.random.default_rng(seed)
    cols = {f"v{i}": rng.integers(0, r, n) for i, r in enumerate(levels)}
    if dependent:
        cols["v1"] = (cols["v0"] + (rng.random(n) < 0.3)) % levels[1]
    return pd.DataFrame(cols)


def reference(x, y, z_cols, rx, ry, rz_levels):
    """Per-stratum G2, X2 and both df, computed plainly, one stratum at a time."""
    g2 = x2 = df_adj = 0.0
    strata = {}
    for i, key in enumerate(zip(*z_cols)) if z_cols else enumerate([()] * len(x)):
        strata.setdefault(key, []).append(i)
    for rows in strata.values():
        table = np.zeros((rx, ry))
        np.add.at(table, (x[rows], y[rows]), 1)
        table = table[table.sum(1) > 0][:, table.sum(0) > 0]
        expected = np.outer(table.sum(1), table.sum(0)) / table.sum()
        nz = table > 0
        g2 += 2 * np.sum(table[nz] * np.log(table[nz] / expected[nz]))
        x2 += np.sum((table - expected) ** 2 / expected)
        df_adj += (table.shape[0] - 1) * (table.shape[1] - 1)
    df = (rx - 1) * (ry - 1) * int(np.prod(rz_levels))
    return g2, x2, df, max(df_adj, 1)


# ------------------------------------------------------------------ agreement
@pytest.mark.parametrize("seed", range(5))
def test_unconditional_equals_scipy(seed):
    df = random_frame(seed=seed, dependent=seed % 2 == 0)
    table = pd.crosstab(df.v0, df.v1).to_numpy()
    for test, lam in (("g2", "log-likelihood"), ("x2", None)):
        ref = stats.chi2_contingency(table, correction=False, lambda_=lam)
        res = ci_test(df, "v0", "v1", test=test)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert res.df == ref.dof
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
        assert res.log_pvalue == pytest.approx(math.log(ref.pvalue), rel=1e-9)
    # mutual information in nats = G2 / 2n
    g2 = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood").statistic
    assert mbstat.cond_mutual_info(df, "v0", "v1") == pytest.approx(g2 / (2 * len(df)))


def near_independent_table():
    """A 3 x 4 table of 40,000 rows with G2 ~ 1e-3, where the cell terms cancel: the frame,
    the table and its G2 computed exactly (50-digit decimals)."""
    table = np.round(np.outer([0.2, 0.3, 0.5], [0.1, 0.2, 0.3, 0.4]) * 40000).astype(int)
    table[0, 0] += 1
    table[2, 3] -= 1
    table[1, 2] += 1
    n, rows_sum, cols_sum = int(table.sum()), table.sum(1), table.sum(0)
    with decimal.localcontext(decimal.Context(prec=50)):
        exact = float(2 * sum(
            decimal.Decimal(int(c)) * (decimal.Decimal(int(c) * n)
                                       / int(rows_sum[i] * cols_sum[j])).ln()
            for (i, j), c in np.ndenumerate(table)))
    rows = np.repeat(np.arange(3), table.sum(1))
    cols = np.concatenate([np.repeat(np.arange(4), table[i]) for i in range(3)])
    return pd.DataFrame({"a": rows, "b": cols}), table, exact


def test_g2_is_exact_near_independence(monkeypatch):
    """Every CPU path keeps 12 digits of the exact G2; scipy's xlogy(c, c / e) keeps about 9."""
    df, table, exact = near_independent_table()
    scipy_g2 = stats.chi2_contingency(table, correction=False,
                                      lambda_="log-likelihood").statistic
    assert 1e-4 < exact < 1e-2
    assert scipy_g2 == pytest.approx(exact, rel=1e-8)
    rows = df["a"].to_numpy()
    assert ci_test(df, "a", "b").statistic == pytest.approx(exact, rel=1e-12, abs=0)
    conditional = ci_test(df.assign(c=0), "a", "b", ["c"]).statistic
    assert conditional == pytest.approx(exact, rel=1e-12, abs=0)
    batch = ci_test_batch(df.assign(c=0, d=rows), ["a", "d"], "b", ["c"])  # bitmap path
    np.testing.assert_allclose(batch.statistic, exact, rtol=1e-12)
    monkeypatch.setattr(contingency, "column_statistics", lambda *args: None)
    monkeypatch.setattr(counting, "_DENSE_FACTOR", 0)  # numpy: observed cells via unique()
    assert ci_test(df, "a", "b", backend="cpu").statistic == pytest.approx(exact, rel=1e-12, abs=0)
    monkeypatch.setattr(counting, "_DENSE_FACTOR", 10**9)
    tester = CITester(df)
    monkeypatch.setattr(tester, "xp", _NumpyProxy())  # numpy: dense bincount
    assert tester.test("a", "b").statistic == pytest.approx(exact, rel=1e-12, abs=0)


@pytest.mark.parametrize("z", [["v2"], ["v2", "v3"]])
@pytest.mark.parametrize("seed", range(3))
def test_conditional_equals_per_stratum_reference(z, seed):
    df = random_frame(n=300, seed=seed)
    ds = mbstat.as_dataset(df)
    codes = {c: ds.codes[:, ds.index(c)].astype(int) for c in df.columns}
    card = dict(zip(ds.names, ds.cardinalities))
    g2, x2, df_bn, df_adj = reference(codes["v0"], codes["v1"], [codes[c] for c in z],
                                      card["v0"], card["v1"], [card[c] for c in z])
    assert ci_test(df, "v0", "v1", z, "g2").statistic == pytest.approx(g2, rel=1e-10)
    assert ci_test(df, "v0", "v1", z, "x2").statistic == pytest.approx(x2, rel=1e-10)
    res = ci_test(df, "v0", "v1", z, "g2", calibration="asymptotic")
    assert res.df == df_bn and res.calibration == "asymptotic"
    assert res.pvalue == pytest.approx(stats.chi2.sf(g2, df_bn), rel=1e-9)
    adj = ci_test(df, "v0", "v1", z, "x2-adf", min_per_cell=None)
    assert adj.df == df_adj
    assert adj.pvalue == pytest.approx(stats.chi2.sf(x2, df_adj), rel=1e-9)


def test_empty_levels_and_strata_count_in_bnlearn_df():
    df = random_frame(n=200)
    df["v0"] = pd.Categorical(df["v0"], categories=[0, 1, 2, 3, 4])  # two unused levels
    res = ci_test(df, "v0", "v1", ["v2"], calibration="asymptotic")
    assert res.df == (5 - 1) * (2 - 1) * 4
    assert ci_test(df, "v0", "v1", ["v2"], "g2-adf", min_per_cell=None).df <= (3 - 1) * (2 - 1) * 4


def test_joint_x_equals_combined_column():
    df = random_frame(n=400, seed=3)
    combined = df.assign(joint=df.v0 * 10 + df.v3)
    joint = ci_test(df, ["v0", "v3"], "v1", ["v2"], calibration="asymptotic")
    single = ci_test(combined, "joint", "v1", ["v2"], calibration="asymptotic")
    assert joint.statistic == pytest.approx(single.statistic, rel=1e-12)
    assert joint.x == ("v0", "v3")
    assert joint.df == (3 * 2 - 1) * (2 - 1) * 4


def test_batch_equals_single_tests():
    df = random_frame(n=400, seed=4, levels=(3, 2, 4, 2, 5))
    batch = ci_test_batch(df, ["v0", "v3", "v4", ["v0", "v4"]], "v1", ["v2"])
    for i, x in enumerate(["v0", "v3", "v4", ["v0", "v4"]]):
        single = ci_test(df, x, "v1", ["v2"])
        assert batch.statistic[i] == pytest.approx(single.statistic, rel=1e-12)
        assert batch.pvalue[i] == pytest.approx(single.pvalue, rel=1e-12)
        assert batch[i].df == single.df
    assert list(batch.to_frame().index) == ["v0", "v3", "v4", "{v0, v4}"]
    assert batch.to_frame().index.name == "x"


@pytest.mark.parametrize("z", [(), ("v2",), ("v2", "v3")])
def test_dense_sparse_and_compiled_paths_agree(z, monkeypatch):
    df = random_frame(n=300, seed=5, levels=(3, 2, 4, 3, 6))
    xs = ["v0", "v4", ["v0", "v4"]]
    compiled = ci_test_batch(df, xs, "v1", z)
    tester = CITester(df)
    monkeypatch.setattr(counting, "_DENSE_FACTOR", 0)  # every table through unique()
    sparse = CITester(df).test_many(xs, "v1", z)
    monkeypatch.setattr(counting, "_DENSE_FACTOR", 10**9)
    monkeypatch.setattr(tester, "xp", _NumpyProxy())  # numpy bincount path, not numba
    dense = tester.test_many(xs, "v1", z)
    for other in (sparse, dense):
        np.testing.assert_allclose(other.statistic, compiled.statistic, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(other.pvalue, compiled.pvalue, rtol=1e-9, atol=1e-300)
    for test in ("x2-adf",):
        a = ci_test_batch(df, xs, "v1", z, test)
        monkeypatch.setattr(counting, "_DENSE_FACTOR", 0)
        b = ci_test_batch(df, xs, "v1", z, test)
        np.testing.assert_allclose(a.statistic, b.statistic, rtol=1e-10, atol=1e-9)
        np.testing.assert_array_equal(a.df, b.df)


@pytest.mark.parametrize("levels, z", [
    ((3, 2, 4, 3, 6), ()), ((3, 2, 4, 3, 6), ("v2",)), ((3, 2, 4, 3, 6), ("v2", "v3")),
    ((2, 3, 2, 2, 1), ("v2", "v3")),  # a one-level candidate
    ((5, 3, 3, 2, 4), ("v2", "v3", "v4")),  # sparse strata, cells > rows / 4: one table copy
])
@pytest.mark.parametrize("n", [37, 1000, 4099])
def test_bitmap_and_scatter_kernels_agree(levels, z, n, monkeypatch):
    """The bitmap kernel as dispatched, the same kernel forced on every table (cells built
    from the bitmaps or from the rows; all cells heavy, all light, mixed) and the scatter
    kernel count the same tables."""
    from mbstat.ci.tables import _kernels

    df = random_frame(n=n, seed=n, levels=levels)
    df["v0"] = pd.Categorical(df["v0"], categories=range(levels[0] + 1))  # an unused level
    xs = [x for x in ("v0", "v4") if x not in z]
    calls = hybrid_calls(monkeypatch)
    bits = ci_test_batch(df, xs, "v1", z, "g2-adf", min_per_cell=None)
    assert calls or math.prod(levels[int(v[1])] for v in ("v1", *z)) > _kernels.FEW_CELLS
    others = []
    monkeypatch.setattr(_kernels, "HYBRID_MIN_BATCH", 1)  # the hybrid kernel for every table
    for setup_cells, heavy_rows in itertools.product((0, 10**9), (0.0, 1e9, 0.4)):
        monkeypatch.setattr(_kernels, "BITMAP_SETUP_CELLS", setup_cells)  # rows, bitmaps
        monkeypatch.setattr(_kernels, "HEAVY_ROWS_PER_WORD", heavy_rows)  # heavy, light, mixed
        others.append(ci_test_batch(df, xs, "v1", z, "g2-adf", min_per_cell=None))
    monkeypatch.setattr(_kernels, "HYBRID_MIN_BATCH", 10**9)  # scatter kernel, codes in place
    monkeypatch.setattr(_kernels, "FEW_CELLS", -1)
    others.append(ci_test_batch(df, xs, "v1", z, "g2-adf", min_per_cell=None))
    monkeypatch.setattr(contingency, "column_statistics", lambda *args: None)  # strata object
    others.append(ci_test_batch(df, xs, "v1", z, "g2-adf", min_per_cell=None))
    for other in others:
        np.testing.assert_allclose(other.statistic, bits.statistic, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(other.df, bits.df)
    for x, stat in zip(xs, bits.statistic):  # and both equal the plain reference
        cols = [df[c].cat.codes.to_numpy() if hasattr(df[c], "cat") else df[c].to_numpy()
                for c in (x, "v1", *z)]
        g2 = reference(cols[0], cols[1], cols[2:], cols[0].max() + 1, cols[1].max() + 1, [])[0]
        assert stat == pytest.approx(g2, rel=1e-10, abs=1e-10)


def test_threaded_batches_equal_one_thread(monkeypatch):
    """Candidates split across threads (bitmap and scatter kernels) give the same numbers."""
    from mbstat.ci.tables import _kernels

    rng = np.random.default_rng(5)
    df = pd.DataFrame(rng.integers(0, 3, (3000, 14)), columns=[f"v{i}" for i in range(14)])
    xs = [f"v{i}" for i in range(3, 14)]
    for z in ((), ("v2",), ("v1", "v2")):
        serial = ci_test_batch(df, xs, "v0", z)
        with monkeypatch.context() as m:
            m.setattr(_kernels, "_threads", lambda: 4)
            m.setattr(_kernels, "PARALLEL_MIN_WORK", 0)
            m.setattr(_kernels, "CELL_MIN_SHARE", 1)
            m.setattr(_kernels, "SCATTER_MIN_SHARE", 1)
            threaded = ci_test_batch(df, xs, "v0", z)
            m.setattr(_kernels, "HYBRID_MIN_BATCH", 10**9)  # the scatter kernel
            m.setattr(_kernels, "FEW_CELLS", -1)
            scattered = ci_test_batch(df, xs, "v0", z)
        np.testing.assert_array_equal(threaded.statistic, serial.statistic)
        np.testing.assert_allclose(scattered.statistic, serial.statistic, rtol=1e-12)


def test_bitmaps_are_skipped_where_they_do_not_apply(monkeypatch):
    df = random_frame(n=200, seed=1, levels=(3, 2, 20, 2))
    ds = mbstat.as_dataset(df)
    assert ds.level_bits.shape == (4, 16, 4)  # at most BIT_LEVELS levels, ceil(200 / 64) words
    calls = hybrid_calls(monkeypatch)
    counting.column_statistics(ds, np.array([0]), 1, (2,))  # 20 levels > 16: scatter
    assert not calls
    counting.column_statistics(ds, np.array([0]), 1, (3,))
    assert len(calls) == 1


@pytest.mark.parametrize("n", [1, 63, 64, 200, 1000])
def test_level_bitmaps_mark_each_rows_level(n):
    """Both ways of building the bitmaps (comparisons for few levels, one bit per row for
    many) against a plain numpy reference; levels past BIT_LEVELS are left out."""
    from mbstat.ci.tables import _kernels

    rng = np.random.default_rng(n)
    cards = np.array([1, 2, 3, 8, 9, 16, 20])
    codes = np.asfortranarray(np.stack([rng.integers(0, c, n) for c in cards], axis=1)
                              .astype(np.uint8))
    bits = _kernels.level_bits(codes, 16, cards)
    rows = np.arange(n)
    for c, card in enumerate(cards):
        for level in range(16):
            expected = np.zeros(bits.shape[2], np.uint64)
            for r in rows[codes[:, c] == level]:
                expected[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
            np.testing.assert_array_equal(bits[c, level], expected, err_msg=f"{c}, {level}")


def hybrid_calls(monkeypatch) -> list:
    """Record the calls of the hybrid (level-bitmap) kernel."""
    from mbstat.ci.tables import _kernels

    calls = []
    real = _kernels.cell_statistics

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(_kernels, "cell_statistics", spy)
    return calls


class _NumpyProxy:
    """numpy under another identity, to force the array-module (CuPy-style) path."""

    def __getattr__(self, name):
        return getattr(np, name)


def test_tables_of_more_declared_cells_than_int64_indexes():
    """2**62 declared cells (unused categories): counted by observed values, same result."""
    rng = np.random.default_rng(0)
    codes = {v: rng.integers(0, 3, 50) for v in "ABY"}
    declared = pd.DataFrame({v: pd.Categorical.from_codes(c, pd.RangeIndex(2**22 if v == "Y"
                                                                           else 2**20))
                             for v, c in codes.items()})
    res = ci_test(declared, ["A", "B"], "Y", test="g2-adf", min_per_cell=None)
    plain = ci_test(pd.DataFrame(codes), ["A", "B"], "Y", test="g2-adf", min_per_cell=None)
    assert res.statistic == pytest.approx(plain.statistic, rel=1e-12) and res.df == plain.df
    bnlearn = ci_test(declared, ["A", "B"], "Y", calibration="asymptotic")
    assert bnlearn.df == pytest.approx((2**40 - 1) * (2**22 - 1))
    assert ci_test(declared, ["A", "B"], "Y").calibration == "semiparametric"
    assert ci_test(declared, ["A", "B"], "Y", test="g2-adf").skipped


def test_more_cells_than_rows_counts_observed_configurations_only():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 6, (60, 6)), columns=list("abcdef"))
    res = ci_test(df, "a", "b", ["c", "d", "e", "f"], "g2-adf", min_per_cell=None)
    assert res.df >= 1 and 0 <= res.pvalue <= 1
    ds = mbstat.as_dataset(df)
    codes = [ds.codes[:, j].astype(int) for j in range(6)]
    g2, _, _, df_adj = reference(codes[0], codes[1], codes[2:], 6, 6, [6] * 4)
    assert res.statistic == pytest.approx(g2, rel=1e-10)
    assert res.df == df_adj


# ------------------------------------------------------------------ properties
tables = st.integers(min_value=0, max_value=2**32 - 1).flatmap(
    lambda seed: st.tuples(st.just(seed), st.integers(2, 4), st.integers(2, 4), st.integers(1, 3),
                           st.integers(20, 120))
)


@settings(max_examples=40, deadline=None)
@given(tables, st.sampled_from(["g2", "x2", "g2-adf", "x2-adf"]))
def test_properties(params, test):
    seed, rx, ry, rz, n = params
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.integers(0, rx, n), "y": rng.integers(0, ry, n),
                       "z": rng.integers(0, rz, n)})
    args = {"min_per_cell": None} if test.endswith("-adf") else {"calibration": "asymptotic"}
    res = ci_test(df, "x", "y", ["z"], test, **args)
    assert res.statistic >= 0
    assert res.df >= 1
    assert 0 <= res.pvalue <= 1
    # relabelling levels and shuffling rows change nothing
    relabel = df.assign(x=(rx - 1) - df.x, y=df.y.map(lambda v: f"L{(v + 1) % ry}"))
    shuffled = relabel.sample(frac=1.0, random_state=seed % 1000)
    other = ci_test(shuffled, "x", "y", ["z"], test, **args)
    assert other.statistic == pytest.approx(res.statistic, rel=1e-9, abs=1e-9)
    assert other.df == res.df
    # symmetric in x and y
    swapped = ci_test(df, "y", "x", ["z"], test, **args)
    assert swapped.statistic == pytest.approx(res.statistic, rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------ log p-values
def test_chi2_logsf_matches_scipy_where_scipy_is_finite():
    x = np.linspace(1, 1400, 300)
    for df in (1, 4, 30, 200):
        expected = stats.chi2.logsf(x, df)
        np.testing.assert_allclose(chi2_logsf(x, df), expected, rtol=1e-9)


def test_chi2_logsf_near_one_keeps_the_digits_of_the_lower_tail():
    """Above p = 0.5, log p = log1p(-cdf): exact where log(sf) has lost digits near 1."""
    from scipy import special

    for df in (1, 3, 30, 500):
        x = np.concatenate([[0.0, 1e-12, 1e-6], np.linspace(1e-3, 0.4, 50) * df])
        expected = np.log1p(-special.chdtr(df, x))
        assert np.all(special.chdtrc(df, x) > 0.5)
        np.testing.assert_allclose(chi2_logsf(x, df), expected, rtol=1e-12, atol=1e-300)
    assert chi2_logsf(1e-12, 3) != 0.0  # log(sf) rounds this to 0


def test_chi2_pvalues_are_scipys_chdtrc_digit_for_digit():
    """The compiled pass calls scipy's own C chdtrc: the same p-values, to the last bit."""
    from scipy import special

    rng = np.random.default_rng(2)
    df = np.concatenate([rng.integers(1, 400, 500).astype(float), [1.0, 2.0, 7.0, 3.0]])
    x = np.concatenate([rng.random(500) * 800, [0.0, 1e-300, 1e5, np.nan]])
    p, log_p = contingency.chi2_sf_logsf(x, df)
    np.testing.assert_array_equal(p, special.chdtrc(df, x))
    assert np.isnan(log_p[-1]) and log_p[-2] < -4e4
    p1, log_p1 = contingency.chi2_sf_logsf(3.0, 2.0)  # scalars in, scalars out
    assert np.ndim(p1) == 0 and p1 == special.chdtrc(2.0, 3.0) and log_p1 == -1.5


def test_chi2_logsf_above_one_half_at_large_df():
    """log1p(-cdf) keeps its digits at any df (a truncated power series lost them above
    df ~ 5e4); where p is in (0.5, 0.98), log(p) itself is exact enough to compare."""
    for df in (10.0, 1e3, 1e5, 1e6, 3e6):
        x = df - np.linspace(0.0, 2.0, 9) * np.sqrt(2 * df)
        p, log_p = contingency.chi2_sf_logsf(x, np.full_like(x, df))
        upper = (p > 0.5) & (p < 0.99)
        assert upper.sum() >= 6
        np.testing.assert_allclose(log_p[upper], np.log(p[upper]), rtol=1e-12)


def test_chdtrc_with_another_signature_is_refused(monkeypatch):
    from scipy.special import cython_special

    assert chi2._cython_special_address("chdtrc") == chi2.CHI2[0]
    one_argument = cython_special.__pyx_capi__["ellipk"]  # double (double, int)
    monkeypatch.setattr(cython_special, "__pyx_capi__", {"chdtrc": one_argument})
    with pytest.raises(ImportError, match="chdtrc has an unexpected signature"):
        chi2._cython_special_address("chdtrc")


def test_one_level_candidate_has_nothing_to_test():
    df = random_frame(n=200, levels=(1, 3, 2))
    for test in ("g2", "x2", "g2-adf"):
        res = ci_test(df, "v0", "v1", ["v2"], test)
        assert res.statistic == 0.0 and res.pvalue == 1.0 and res.log_pvalue == 0.0
        assert res.df == 0.0  # bnlearn 4.9's mi-adf too (tests/test_adf_zero_df.py)


def test_chi2_logsf_continued_fraction_and_far_tail():
    a = np.array([0.5, 2.0, 15.0, 100.0])
    x = np.array([300.0, 400.0, 500.0, 600.0])
    from scipy import special

    log_q = np.empty_like(x)
    chi2.log_gammaincc(a, x, log_q)
    np.testing.assert_allclose(log_q, np.log(special.gammaincc(a, x)), rtol=1e-10)
    far = chi2_logsf(np.array([5e3, 1e5, 1e7]), np.array([3, 3, 50]))
    assert np.all(np.isfinite(far)) and np.all(np.diff(far) < 0)
    # leading-order check: log Q(a, x) ~ (a - 1) log x - x - lgamma(a)
    lead = (1.5 - 1) * np.log(2500.0) - 2500.0 - math.lgamma(1.5)
    assert far[0] == pytest.approx(lead, rel=1e-3)


def test_ranking_survives_underflow():
    rng = np.random.default_rng(1)
    n = 20000
    a = rng.integers(0, 3, n)
    df = pd.DataFrame({"y": a, "strong": a, "weaker": np.where(rng.random(n) < 0.9, a, 0)})
    batch = ci_test_batch(df, ["weaker", "strong"], "y")
    assert batch.pvalue[0] == 0 and batch.pvalue[1] == 0
    assert batch.log_pvalue[1] < batch.log_pvalue[0] < -1000


# ------------------------------------------------------------------ other tests
def test_monte_carlo_permutation_test():
    df = random_frame(n=150, seed=2, dependent=False)
    asym = ci_test(df, "v0", "v3", ["v2"])
    mc = ci_test(df, "v0", "v3", ["v2"], "mc-g2", B=999, seed=3)
    assert mc.statistic == pytest.approx(asym.statistic)
    assert mc.pvalue >= 1 / 1000
    # independent reference: 2,000 permutations of v0 within the strata of v2 by hand, G2
    # by plain per-stratum tables; the two Monte Carlo estimates of one permutation p-value
    # differ by at most 4 standard errors (their sampling error, B = 999 and 2,000)
    rng = np.random.default_rng(0)
    x, y, z = (df[c].to_numpy() for c in ("v0", "v3", "v2"))
    observed = reference(x, y, [z], 3, 2, [4])[0]
    perm = x.copy()
    exceed = 0
    for _ in range(2000):  # permutations of x within each stratum of z
        for level in range(4):
            rows = np.flatnonzero(z == level)
            perm[rows] = x[rng.permutation(rows)]
        exceed += reference(perm, y, [z], 3, 2, [4])[0] >= observed * (1 - 1e-9)
    ref = (1 + exceed) / 2001
    se = np.sqrt(ref * (1 - ref) * (1 / 1000 + 1 / 2001))
    assert abs(mc.pvalue - ref) <= 4 * se, (mc.pvalue, ref)
    again = ci_test(df, "v0", "v3", ["v2"], "mc-g2", B=999, seed=3)
    assert again.pvalue == mc.pvalue
    dep = ci_test(random_frame(n=150, seed=2), "v0", "v1", ["v2"], "mc-x2", B=199, seed=1)
    assert dep.pvalue == pytest.approx(1 / 200)


def test_monte_carlo_does_not_depend_on_test_order():
    df = random_frame(n=120, seed=7, dependent=False)
    t1 = CITester(df, "mc-g2", B=200, seed=5)
    t2 = CITester(df, "mc-g2", B=200, seed=5)
    a = [t1.test("v0", "v3", ["v2"]).pvalue, t1.test("v1", "v3").pvalue]
    b = [t2.test("v1", "v3").pvalue, t2.test("v0", "v3", ["v2"]).pvalue]
    assert a == b[::-1]


def test_fisher_z_against_precision_matrix():
    rng = np.random.default_rng(0)
    n = 400
    z1, z2 = rng.normal(size=n), rng.normal(size=n)
    x = z1 + 0.5 * rng.normal(size=n)
    y = z1 - z2 + 0.2 * x + rng.normal(size=n)
    df = pd.DataFrame({"x": x, "y": y, "z1": z1, "z2": z2})
    res = ci_test(df, "x", "y", ["z1", "z2"], "fisher_z")
    prec = np.linalg.inv(np.cov(df.to_numpy().T))
    r = -prec[0, 1] / math.sqrt(prec[0, 0] * prec[1, 1])
    zstat = math.sqrt(n - 2 - 3) * math.atanh(r)
    assert res.statistic == pytest.approx(zstat, rel=1e-9)
    assert res.pvalue == pytest.approx(2 * stats.norm.sf(abs(zstat)), rel=1e-9)
    assert math.isnan(res.df)
    with pytest.raises(ValueError, match="single variables"):
        ci_test(df, ["x", "z2"], "y", test="fisher_z")


def test_fisher_z_takes_numbers_not_codes():
    """Integer columns enter with their values (not level codes); columns of labels are
    refused."""
    rng = np.random.default_rng(3)
    a = rng.choice([0, 1, 100], 300)
    c = a / 50 + rng.normal(size=300)
    df = pd.DataFrame({"a": a, "c": c, "s": rng.choice(["u", "v"], 300)})
    r = np.corrcoef(a, c)[0, 1]
    expected = math.sqrt(300 - 3) * math.atanh(r)
    assert ci_test(df, "a", "c", test="fisher_z").statistic == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match=r"columns \['s'\] have non-numeric levels"):
        ci_test(df, "s", "c", test="fisher_z")


def test_fisher_z_constant_at_any_magnitude_is_a_constant():
    """A constant column is constant whatever its value: 0.1, 1e8 + 0.5 or 1e12 / 3 less
    their mean is rounding (about 1e-16 of the value), not variation. Before, its
    correlation with y was that noise: x = 0.1 against 1000 independent N(0, 1) y's
    (n = 200) was rejected at 0.05 51 times (Wilson 95% [0.039, 0.066], smallest p 1.6e-4),
    a uniform p-value; now every one reads as the exact constant 0 does (r = 0, p = 1), on the
    in-memory and the pairwise-deletion paths, as x or as y, with or without z; and an x
    that is an exact linear function of z is constant given z. scipy's pearsonr is the
    reference for "constant" (its ConstantInputWarning); a column 1e8 + N(0, 1) is not
    constant and keeps scipy's correlation."""
    rng = np.random.default_rng(7)
    n, k = 200, 240
    values = rng.choice([0.1, 0.3, 7.3, 1e8 + 0.5, 1e12 / 3, 2**0.5 * 1e9], k) \
        * rng.integers(1, 50, k)
    frame = pd.DataFrame({f"c{i}": np.full(n, v) for i, v in enumerate(values)})
    frame["y"], frame["z"] = rng.normal(size=n), rng.normal(size=n)
    frame["zero"] = 0.0
    frame["lin"] = 3 * frame["z"] + 1e8
    frame["far"] = 1e8 + rng.normal(size=n) + 0.3 * frame["y"]
    with pytest.warns(stats.ConstantInputWarning):
        stats.pearsonr(frame["c0"], frame["y"])
    cols = [f"c{i}" for i in range(k)]
    holed = frame.copy()
    holed.loc[:4, "z"] = np.nan
    for data, na in ((frame, "drop"), (holed, "pairwise")):
        for z in ([], ["z"]):
            batch = ci_test_batch(data, cols + ["zero"], "y", z, test="fisher_z", na=na)
            assert (batch.statistic == 0).all() and (batch.pvalue == 1).all()
        assert ci_test(data, "y", "c3", ["z"], test="fisher_z", na=na).pvalue == 1
        assert ci_test(data, "lin", "y", ["z"], test="fisher_z", na=na).pvalue == 1
    ys = pd.DataFrame(rng.normal(size=(n, 100)), columns=[f"y{i}" for i in range(100)])
    ys["c"] = 0.1
    assert all(ci_test(ys, "c", f"y{i}", test="fisher_z").pvalue == 1 for i in range(100))
    r = stats.pearsonr(frame["far"], frame["y"]).statistic
    assert ci_test(frame, "far", "y", test="fisher_z").statistic == pytest.approx(
        math.sqrt(n - 3) * math.atanh(r), rel=1e-9)


def test_batch_prints_like_r():
    df = random_frame(n=300, seed=4)
    text = str(ci_test_batch(df, ["v0", "v2"], "v1", ["v3"]))
    assert "\tMutual Information (G2) test of conditional independence" in text
    assert "data:  x ~ v1 | v3, 2 candidates" in text
    rows = [line.split() for line in text.splitlines() if line.startswith(("v0", "v2"))]
    for row, x in zip(rows, ["v0", "v2"]):
        res = ci_test(df, x, "v1", ["v3"])
        assert row[:3] == [x, f"{res.statistic:.5g}", f"{res.df:.6g}"]
    with pytest.raises(TypeError, match="x must be a column name or position, or a list"):
        ci_test(df, 4.0, "v1")


def test_oracle_answers_d_separation():
    from mbstat.bn import from_edges

    net = from_edges([("a", "b"), ("b", "c"), ("d", "c")], seed=0)
    assert ci_test(net, "a", "c", ["b"], "oracle").independent
    assert not ci_test(net, "a", "c", test="oracle").independent
    assert ci_test(net, "a", "d", test="oracle").independent
    assert not ci_test(net, "a", "d", ["c"], test="oracle").independent
    assert not ci_test(net, ["a", "d"], "c", ["b"], test="oracle").independent


def test_oracles_refuse_variables_they_do_not_know():
    from mbstat.ci.oracles.exact import ExactOracle

    df = pd.DataFrame({"a": [0, 1], "b": [1, 0], "c": [0, 0]})
    with pytest.raises(ValueError, match=r"the oracle's DAG has no nodes \['c'\]"):
        CITester(df, "oracle", dag={"a": (), "b": ("a",)}).test("a", "c")
    exact = ExactOracle(np.full((2, 2), 0.25), names=["a", "b"])
    with pytest.raises(ValueError, match=r"the oracle's table has no variables \['c'\]"):
        CITester(df, exact).test("b", "a", ["c"])
    assert CITester(df, exact).test("a", "b").independent


def test_power_rule_skips_and_counts():
    df = random_frame(n=40, levels=(4, 4, 4, 4))
    tester = CITester(df, "g2", min_per_cell=5)
    res = tester.test("v0", "v1", ["v2"])
    assert res.skipped and res.independent and res.pvalue == 1.0 and res.statistic == 0
    assert res.mi == 0.0 and res.log_pvalue == 0.0
    assert tester.n_skipped == 1
    assert "power rule" in str(res)
    assert not CITester(df, "g2").test("v0", "v1", ["v2"]).skipped


# ------------------------------------------------------------------ engine
def test_cache_and_log():
    df = random_frame()
    tester = CITester(df, "g2", alpha=0.01)
    first = tester.test("v0", "v1", ["v2"], phase="grow")
    again = tester.test("v1", "v0", ["v2"], phase="shrink")  # symmetric: cached
    assert again.statistic == first.statistic
    assert tester.n_tests == 1 and tester.n_cache_hits == 1
    tester.test_many(["v0", "v3"], "v1", ["v2"], phase="grow")
    assert tester.n_tests == 2 and tester.n_cache_hits == 2
    log = tester.log
    assert list(log.columns) == ["x", "y", "z", "statistic", "df", "pvalue", "log_pvalue", "mi",
                                 "independent", "skipped", "calibration", "phase"]
    assert (log["calibration"] == "asymptotic").all()
    assert log.index.name == "test" and list(log.index) == [1, 2]
    assert log.loc[1, "z"] == "v2" and log.loc[1, "phase"] == "grow"
    assert log.loc[1, "independent"] == (first.pvalue > 0.01)


def test_result_is_frozen_and_prints_like_htest():
    res = ci_test(random_frame(), "v0", "v1", ["v2", "v3"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.pvalue = 0.5
    text = str(res)
    assert "Mutual Information (G2) test" in text
    assert "data:  v0 ~ v1 | v2 + v3" in text
    assert "G2 = " in text and "df = 16" in text and "p-value" in text
    assert "alternative hypothesis: x and y are dependent given z" in text


def test_batch_arrays_are_read_only_and_match_single_tests():
    df = random_frame()
    tester = CITester(df)
    first = tester.test("v2", "v1", ["v3"])  # cached, then served inside the batch
    batch = tester.test_many(["v0", "v2"], "v1", ["v3"])
    for name in ("statistic", "df", "pvalue", "log_pvalue", "mi", "skipped"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(batch, name)[0] = 0
    assert batch[1] == first and tester.n_cache_hits == 1
    assert batch[0] == tester.test("v0", "v1", ["v3"])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"x": "v0", "y": "v1", "z": ["v0"]}, ValueError, "overlaps z"),
        ({"x": "v0", "y": "v1", "z": ["v1"]}, ValueError, "also in z"),
        ({"x": "v0", "y": "v0"}, ValueError, "overlaps y"),
        ({"x": "v0", "y": "v1", "alpha": 1.5}, ValueError, r"alpha must be in \(0.0, 1.0\)"),
        ({"x": "v0", "y": "v1", "alpha": 0}, ValueError, "alpha must be"),
        ({"x": "v0", "y": "v1", "test": "bogus"}, ValueError, "test must be one of"),
        ({"x": "v0", "y": "v1", "test": "g2-adf", "B": 10}, TypeError, "does not accept \\['B'\\]"),
        ({"x": "v0", "y": "v1", "test": "g2", "calibration": "exact"}, ValueError,
         "calibration must be one of"),
        ({"x": "v0", "y": "v1", "test": "mc-g2", "B": 0}, ValueError, "B must be >= 1"),
        ({"x": "v0", "y": "nope"}, ValueError, "y: unknown variable 'nope'"),
        ({"x": "v0", "y": "v1", "backend": "tpu"}, ValueError, "backend must be one of"),
        ({"x": "v0", "y": "v1", "test": "oracle"}, ValueError, "needs dag="),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        ci_test(random_frame(), **kwargs)


def test_batch_needs_candidates():
    with pytest.raises(ValueError, match="at least one candidate"):
        ci_test_batch(random_frame(), [], "v1")


def test_backend_selection_without_gpu():
    if gpu_available():
        pytest.skip("a GPU is present")
    assert resolve_backend("auto").name == "numpy"
    with pytest.raises(RuntimeError, match="backend='gpu' needs CuPy and a CUDA device"):
        ci_test(random_frame(), "v0", "v1", backend="gpu")
    with pytest.raises(RuntimeError):
        mbstat.set_backend("gpu")
    assert mbstat.get_backend() == "auto"


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_g2_is_exact_near_independence():
    df, _, exact = near_independent_table()
    batch = ci_test_batch(df.assign(c=0, d=df["a"]), ["a", "d"], "b", ["c"], backend="gpu")
    np.testing.assert_allclose(batch.statistic, exact, rtol=1e-12)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("z", [(), ("v2",), ("v2", "v3")])
def test_gpu_matches_cpu(z):
    df = random_frame(n=5000, seed=9, levels=(3, 2, 4, 3, 6))
    xs = ["v0", "v4", ["v0", "v4"]]
    for test, args in (("g2", {}), ("x2-adf", {"min_per_cell": None})):
        cpu = ci_test_batch(df, xs, "v1", z, test, backend="cpu", **args)
        gpu = ci_test_batch(df, xs, "v1", z, test, backend="gpu", **args)
        np.testing.assert_allclose(gpu.statistic, cpu.statistic, rtol=1e-9)
        np.testing.assert_array_equal(gpu.df, cpu.df)
        np.testing.assert_array_equal(gpu.calibration, cpu.calibration)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("case", ["shared", "global", "sparse", "uint16", "large"])
def test_gpu_kernels_match_cpu(case):
    """Each way the CUDA kernels count: shared-memory and global histograms, joint x,
    tables with more cells than rows (materialized path), 16-bit codes, many rows."""
    n, levels, z = 20_000, (3, 2, 4, 3, 6, 40, 40), ("v2", "v3")
    if case == "global":  # 40 * 40 strata * 3 * 2 cells > the shared-memory limit
        z = ("v5", "v6")
    elif case == "sparse":
        n, z = 2_000, ("v5", "v6")
    elif case == "uint16":
        levels = (3, 2, 4, 3, 6, 300, 2)
        z = ("v5",)
    elif case == "large":
        n = 300_000
    df = random_frame(n=n, seed=3, levels=levels)
    xs = ["v0", "v4", ["v0", "v4"], ["v0", "v2" if "v2" not in z else "v6"]]
    for args in ({"calibration": "asymptotic"}, {}):  # the kernels; then as calibrated
        cpu = ci_test_batch(df, xs, "v1", z, "g2", backend="cpu", **args)
        gpu = ci_test_batch(df, xs, "v1", z, "g2", backend="gpu", **args)
        for field in ("statistic", "df", "pvalue"):
            np.testing.assert_allclose(getattr(gpu, field), getattr(cpu, field), rtol=1e-9)
        np.testing.assert_array_equal(gpu.calibration, cpu.calibration)
    adf_cpu = ci_test_batch(df, xs, "v1", z, "x2-adf", backend="cpu", min_per_cell=None)
    adf_gpu = ci_test_batch(df, xs, "v1", z, "x2-adf", backend="gpu", min_per_cell=None)
    np.testing.assert_allclose(adf_gpu.statistic, adf_cpu.statistic, rtol=1e-9)
    np.testing.assert_array_equal(adf_gpu.df, adf_cpu.df)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_auto_backend_counts_small_data_on_the_cpu():
    from mbstat.backend import AUTO_GPU_MIN_ROWS

    assert resolve_backend("auto", AUTO_GPU_MIN_ROWS - 1).name == "numpy"
    assert resolve_backend("auto", AUTO_GPU_MIN_ROWS).name == "cupy"
    assert resolve_backend("gpu", 10).name == "cupy"


def test_single_level_variable_is_independent_not_nan():
    df = pd.DataFrame({"a": [0, 1, 0, 1, 1, 0], "b": [1] * 6, "c": [0, 1, 1, 0, 1, 0]})
    res = ci_test(df, "a", "b")
    assert res.df == 0 and res.pvalue == 1.0 and res.log_pvalue == 0.0 and res.independent
    batch = ci_test_batch(df, ["a", "b"], "c")
    assert np.isfinite(batch.pvalue).all()


# ------------------------------------------------------------------ one interface
def test_a_result_is_a_row_of_a_batch():
    from mbstat.ci.result import CIBatch, CIResult

    assert [f.name for f in dataclasses.fields(CIResult)] == ["batch"]  # no fields repeated
    df = random_frame()
    batch = ci_test_batch(df, ["v0", "v3"], "v1", ["v2"])
    row = batch[1]
    assert isinstance(row.batch, CIBatch) and len(row.batch) == 1
    assert batch[-1] == row and list(batch) == [batch[0], batch[1]]
    with pytest.raises(IndexError):
        batch[2]
    for name in batch.columns:
        if name != "calibration":
            assert getattr(row, name) == getattr(batch, name)[1]
    assert (row.y, row.z, row.test, row.n, row.alpha) == ("v1", ("v2",), "g2", 500, 0.05)
    taken = batch.take([1])
    assert taken[0] == row and taken.xs == (("v3",),)
    assert repr(batch).startswith("CIBatch(test='g2', y='v1'")


def test_one_rule_decides_independence_everywhere():
    from mbstat.ci.result import decide
    from mbstat.ci.result import SKIPPED

    df = random_frame(n=100, levels=(4, 4, 4, 4))
    tester = CITester(df, "g2-adf", alpha=0.2)  # 100 rows: 6.25 a cell, 1.6 given v2
    batch = tester.test_many(["v0", "v3"], "v1", [])
    full = tester.test_many(["v0", "v3"], "v1", ["v2"])
    assert full.skipped.all() and full.independent.all() and not batch.skipped.any()
    log = tester.log
    expect = decide(log["pvalue"].to_numpy(), np.where(log["skipped"], SKIPPED, 0), 0.2)
    np.testing.assert_array_equal(log["independent"], expect)
    np.testing.assert_array_equal(batch.independent, [r.independent for r in batch])
    assert decide(0.01, SKIPPED, 0.05) and not decide(0.01, 0, 0.05) and decide(0.5, 0, 0.05)
    with pytest.raises(ValueError, match="no alpha"):
        decide(0.5, 0, None)


def test_custom_tests_return_one_table():
    from mbstat.ci.protocol import CITest
    from mbstat.ci.result import results_table

    class Half(CITest):
        name, kind = "half", "discrete"

        def batch(self, tester, xs, y, z):
            return results_table(len(xs), statistic=1.0, df=1.0, pvalue=0.5,
                                 log_pvalue=np.log(0.5), mi=0.0)

    class Legacy(Half):  # the dict of arrays of earlier versions is still read
        def batch(self, tester, xs, y, z):
            k = len(xs)
            return {"statistic": np.ones(k), "df": np.ones(k), "pvalue": np.full(k, 0.01),
                    "log_pvalue": np.full(k, np.log(0.01)), "mi": np.zeros(k),
                    "skipped": np.array([True] + [False] * (k - 1))}

    class Wrong(Half):
        def batch(self, tester, xs, y, z):
            return results_table(len(xs) + 1)

    df = random_frame()
    res = CITester(df, Half()).test("v0", "v1")
    assert (res.pvalue, res.calibration, res.independent) == (0.5, "asymptotic", True)
    legacy = CITester(df, Legacy()).test_many(["v0", "v2"], "v1")
    assert list(legacy.calibration) == ["skipped", "asymptotic"]
    assert list(legacy.independent) == [True, False]
    with pytest.raises(ValueError, match="returned a table of shape"):
        CITester(df, Wrong()).test("v0", "v1")


def test_exact_oracle_and_ppi_are_registered():
    from mbstat.ci import ExactOracle
    from mbstat.ci.oracles.exact import parity_table

    assert {"ppi", "exact", "oracle", "sp-g2", "sp-x2"} <= set(mbstat.TESTS)
    oracle = ExactOracle(parity_table(2, n_distractors=1), names=["Y", "A", "B", "D"])
    assert ci_test(oracle, "Y", "A", test="exact").independent
    res = ci_test(oracle, ["A", "B"], "Y", test="exact")
    assert not res.independent and res.calibration == "oracle"
    from mbstat.datasets import load_network

    net = load_network("asia")
    assert ci_test(net, "asia", "smoke", test="exact").independent
    with pytest.raises(ValueError, match="needs table="):
        ci_test(random_frame(), "v0", "v1", test="exact")


def test_ci_layer_imports_nothing_above_it():
    import ast
    from pathlib import Path

    for path in Path(mbstat.ci.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = ("." * node.level) + (node.module or "")
                assert not any(part in target.split(".") for part in ("results", "algorithms")), (
                    path.name, target)


def test_fisher_z_printout_is_two_sided_with_the_partial_correlation():
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=200), rng.normal(size=200)
    frame = pd.DataFrame({"x": x, "y": 0.3 * x + z + rng.normal(size=200), "z": z})
    text = str(mbstat.ci_test(frame, "x", "y", ["z"], test="fisher_z"))
    assert "alternative hypothesis: true partial correlation is not equal to 0" in text
    rx = x - np.polyval(np.polyfit(z, x, 1), z)
    ry = frame["y"] - np.polyval(np.polyfit(z, frame["y"], 1), z)
    r = abs(np.corrcoef(rx, ry)[0, 1])
    assert f"absolute partial correlation: {r:.6g}" in text


def test_mi_cg_all_discrete_statistic_is_the_contingency_g2():
    """mi-cg of discrete x and y given discrete z (no continuous column) computes G2 in its
    own family (``g2_within``); it equals the contingency family's G2, and the same p-value."""
    rng = np.random.default_rng(5)
    n = 600
    frame = pd.DataFrame({"x": rng.integers(0, 3, n), "y": rng.integers(0, 2, n),
                          "z": rng.integers(0, 4, n)}).astype("category")
    frame["x"] = np.where(rng.random(n) < 0.3, frame["y"].astype(int), frame["x"].astype(int))
    frame["x"] = frame["x"].astype("category")
    ds = mbstat.as_dataset(frame)
    g, G, _ = strata(ds, [2])
    own = g2_within(ds.codes[:, 0], ds.level_counts[0], ds.codes[:, 1], ds.level_counts[1], g, G)
    g2 = mbstat.ci_test(frame, "x", "y", ["z"], test="g2", calibration="asymptotic")
    assert own == pytest.approx(g2.statistic, rel=1e-12)
    cg = mbstat.ci_test(frame, "x", "y", ["z"], test="mi-cg")
    assert cg.statistic == pytest.approx(g2.statistic, rel=1e-12)
