"""Partial-correlation tests from sufficient statistics (mbstat.ci.continuous.moments): the shared
correlation matrix answers as the rows do (pivoted QR), as statsmodels' OLS residuals and
scipy's pearsonr do, at any offset and scale; constant and linear columns give p = 1;
na="pairwise" keeps test-wise deletion; Dask partitions merge R factors; the linear
Gaussian generator's blankets are the DAG's."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import mbstat
from mbstat import as_dataset, ci_test, ci_test_batch
from mbstat.ci.engine import CITester
from mbstat.ci.continuous.moments import column_moments
from mbstat.datasets import make_linear_gaussian


def _ols_partial(frame, x, y, z):
    """statsmodels: the correlation of the OLS residuals of x and y on [1, z] (pinv: the
    projection on the span of z where z is collinear)."""
    sm = pytest.importorskip("statsmodels.api")
    design = np.ones((len(frame), 1)) if not z else sm.add_constant(
        frame[list(z)].to_numpy(), has_constant="add")
    rx = sm.OLS(frame[x].to_numpy(), design).fit().resid
    ry = sm.OLS(frame[y].to_numpy(), design).fit().resid
    return float(np.corrcoef(rx, ry)[0, 1])


def _fisher(r, n, m):
    return math.sqrt(n - m - 3) * math.atanh(r)


def _frame(n=600, p=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    for j in range(1, p):  # a chain of dependences
        X[:, j] += 0.6 * X[:, j - 1]
    return pd.DataFrame(X, columns=[f"v{i}" for i in range(p)])


def _from_rows(data, test="fisher_z", **kw):
    tester = CITester(data, test, **kw)
    inner = getattr(tester.test_obj, "_from_rows", None)
    if inner is not None:
        tester.test_obj._from_rows = True
    return tester


@pytest.mark.parametrize("m", [0, 1, 2, 3, 5])
def test_fisher_z_equals_the_rows_and_statsmodels(m):
    frame = _frame()
    ds = as_dataset(frame)
    z = [f"v{i}" for i in range(1, m + 1)]
    xs = [f"v{i}" for i in range(m + 1, 9)]
    got = CITester(ds, "fisher_z").test_many(xs, "v0", z)
    rows = _from_rows(ds).test_many(xs, "v0", z)
    np.testing.assert_allclose(got.statistic, rows.statistic, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.log_pvalue, rows.log_pvalue, rtol=1e-10, atol=1e-12)
    ref = [_fisher(_ols_partial(frame, x, "v0", z), len(frame), m) for x in xs]
    np.testing.assert_allclose(got.statistic, ref, rtol=1e-10, atol=1e-12)
    # one test at a time, in another order, from another tester: the same bits
    single = CITester(ds, "fisher_z")
    again = [single.test(x, "v0", z).statistic for x in reversed(xs)][::-1]
    assert list(got.statistic) == again


def test_collinear_and_constant_z_are_projected_out():
    """A z column that is another's copy, a sum of two, or a constant adds nothing: the
    projection on the span of z (statsmodels' pinv), df as bnlearn (|z| columns)."""
    frame = _frame(400, 6, seed=2)
    frame["dup"] = frame["v1"]
    frame["sum"] = frame["v1"] + 2.0 * frame["v2"]
    frame["k"] = 7.0
    z = ["v1", "v2", "dup", "sum", "k"]
    for x in ("v3", "v4", "v5"):
        res = ci_test(frame, x, "v0", z, test="fisher_z")
        assert res.statistic == pytest.approx(
            _fisher(_ols_partial(frame, x, "v0", ["v1", "v2"]), 400, len(z)), rel=1e-10)


def test_ill_posed_tests_are_recomputed_from_the_rows():
    """Near-collinear z (pivot 1e-8 in correlation units) or an x almost linear in z: the
    correlation path declines, the pivoted QR answers as statsmodels does."""
    rng = np.random.default_rng(3)
    n = 500
    z1, z2, y = rng.normal(size=(3, n))
    frame = pd.DataFrame({"z1": z1, "z2": z1 + 1e-4 * z2, "y": y + z1,
                          "x": z1 - 2 * z2 + 1e-3 * (rng.normal(size=n) + 0.5 * y)})
    res = ci_test(frame, "x", "y", ["z1", "z2"], test="fisher_z")
    assert res.statistic == pytest.approx(
        _fisher(_ols_partial(frame, "x", "y", ["z1", "z2"]), n, 2), rel=1e-8)


OFFSETS = [1e6, 1e8, 1e10, 1e12]
SCALES = [1.0, 1e-2, 1e-5]


def test_fisher_z_at_any_offset_and_scale_issue_31():
    """Issue 31 item 1: x = 1e8 + 1e-5 s read as a constant (statistic 0, p = 1) where
    scipy's pearsonr gives p = 2.7e-86. Now fisher_z's r is pearsonr's at offsets 1e6 to
    1e12 and scales down to 1e-5 (given z: statsmodels'), to 1e-10 on the columns less
    their offset (an exact subtraction) and to 1e-3 on the raw columns, which pearsonr
    centres once by a rounded mean; where the offset swallows the signal (1e12 + 1e-5 s
    rounds to 1e12 on every row) the column is constant, scipy warns so, and p = 1."""
    rng = np.random.default_rng(0)
    s = rng.normal(size=500)
    d = pd.DataFrame({"x": 1e8 + 1e-5 * s, "y": s + rng.normal(size=500)})
    r = stats.pearsonr(d["x"] - 1e8, d["y"]).statistic  # x - 1e8 is exact (Sterbenz)
    res = ci_test(d, "x", "y", test="fisher_z")
    assert res.statistic == pytest.approx(_fisher(r, 500, 0), rel=1e-12)
    # pearsonr on x itself centres once, by a mean rounded to 1.5e-8 (a thousandth of the
    # signal): 4e-9 off the exact figure
    assert res.statistic == pytest.approx(
        _fisher(stats.pearsonr(d["x"], d["y"]).statistic, 500, 0), rel=1e-7)
    assert res.pvalue < 1e-80
    assert "x" in mbstat.iamb(d, "y", test="fisher_z").blanket
    zc = rng.normal(size=500)
    for off in OFFSETS:
        for scale in SCALES:
            frame = pd.DataFrame({"x": off + scale * (s + 0.3 * zc), "y": s + rng.normal(
                size=500), "z": zc})
            if frame["x"].nunique() == 1:
                with pytest.warns(stats.ConstantInputWarning):
                    stats.pearsonr(frame["x"], frame["y"])
                assert ci_test(frame, "x", "y", test="fisher_z").pvalue == 1
                continue
            shifted = frame.assign(x=frame["x"] - off)  # exact: OLS on 1e12 + s loses digits
            r = stats.pearsonr(shifted["x"], frame["y"]).statistic
            got = ci_test(frame, "x", "y", test="fisher_z").statistic
            assert got == pytest.approx(_fisher(r, 500, 0), rel=1e-10), (off, scale)
            with warnings.catch_warnings():  # NearConstantInputWarning at 1e10 / 1e-5
                warnings.simplefilter("ignore")
                r = stats.pearsonr(frame["x"], frame["y"]).statistic
            # pearsonr's single centring errs by about (ulp(off) / scale)^2 / 2 of r
            assert got == pytest.approx(_fisher(r, 500, 0), rel=1e-3), (off, scale)
            got = ci_test(frame, "y", "x", ["z"], test="fisher_z").statistic
            ref = _fisher(_ols_partial(shifted, "x", "y", ["z"]), 500, 1)
            assert got == pytest.approx(ref, rel=1e-9), (off, scale)


def test_constant_and_linear_columns_give_one_at_any_magnitude():
    rng = np.random.default_rng(5)
    n = 300
    frame = pd.DataFrame({"y": rng.normal(size=n), "z1": rng.normal(size=n),
                          "z2": rng.normal(size=n)})
    for c in (0.0, 0.1, 1e8 + 0.5, 1e12 / 3, -2.0**40):
        frame["c"] = c
        frame["lin"] = c + 3.0 * frame["z1"] - 0.5 * frame["z2"]
        for z in ([], ["z1"], ["z1", "z2"]):
            assert ci_test(frame, "c", "y", z, test="fisher_z").pvalue == 1
            assert ci_test(frame, "y", "c", z, test="fisher_z").pvalue == 1
        assert ci_test(frame, "lin", "y", ["z1", "z2"], test="fisher_z").pvalue == 1
        assert ci_test(frame, "y", "lin", ["z2", "z1"], test="fisher_z").pvalue == 1
        assert ci_test_batch(frame, ["lin", "c"], "y", ["z1", "z2"],
                             test="fisher_z").pvalue.tolist() == [1.0, 1.0]


def test_pairwise_deletion_is_per_test():
    """na="pairwise": each test on the rows complete for its own x, y and z, as dropping
    them by hand."""
    frame = _frame(500, 7, seed=4)
    rng = np.random.default_rng(4)
    for col, share in (("v2", 0.1), ("v4", 0.2), ("v5", 0.05)):
        frame.loc[rng.random(500) < share, col] = np.nan
    z = ["v1", "v2"]
    xs = ["v3", "v4", "v5", "v6"]
    batch = ci_test_batch(frame, xs, "v0", z, test="fisher_z", na="pairwise")
    for x, stat, n in zip(xs, batch.statistic, batch.n):
        sub = frame[["v0", x, *z]].dropna()
        assert n == len(sub)
        assert stat == pytest.approx(_fisher(_ols_partial(sub, x, "v0", z), n, 2), rel=1e-10)
    rows = _from_rows(frame, na="pairwise").test_many(xs, "v0", z)
    np.testing.assert_allclose(batch.statistic, rows.statistic, rtol=1e-10)


@pytest.mark.parametrize("test", ["spearman", "normal-scores"])
def test_rank_tests_equal_fisher_z_on_their_scores(test):
    frame = _frame(400, 6, seed=6)
    frame = np.exp(frame)  # monotone: the same ranks
    ranks = frame.rank()
    scores = ranks if test == "spearman" else pd.DataFrame(
        special.ndtri(ranks / (len(frame) + 1.0)), columns=frame.columns)
    factor = math.sqrt(1.06) if test == "spearman" else 1.0
    for z in ([], ["v1"], ["v1", "v2", "v3"]):
        got = ci_test_batch(frame, ["v4", "v5"], "v0", z, test=test)
        rows = _from_rows(frame, test).test_many(["v4", "v5"], "v0", z)
        if test == "spearman" and z:  # the latent partial correlation (#31; test_mixed_tests)
            np.testing.assert_allclose(got.statistic, rows.statistic, rtol=1e-10)
            continue
        ref = [_fisher(_ols_partial(scores, x, "v0", z), 400, len(z)) / factor
               for x in ("v4", "v5")]
        np.testing.assert_allclose(got.statistic, ref, rtol=1e-10)
        np.testing.assert_allclose(got.statistic, rows.statistic, rtol=1e-10)
    if test == "spearman":
        rho = stats.spearmanr(frame["v3"], frame["v0"]).statistic
        got = ci_test(frame, "v3", "v0", test=test).statistic
        assert got == pytest.approx(_fisher(rho, 400, 0) / factor, rel=1e-10)


def test_statistics_are_computed_once_per_data_set():
    ds = as_dataset(_frame(300, 6))
    first = column_moments(ds)
    for x in ("v2", "v3", "v4"):
        ci_test(ds, x, "v0", ["v1"], test="fisher_z")
    assert column_moments(ds) is first
    # the caller's data is never modified
    frame = _frame(300, 6)
    copy = frame.copy()
    ci_test_batch(frame, ["v2", "v3"], "v0", ["v1"], test="fisher_z")
    pd.testing.assert_frame_equal(frame, copy)


def test_partitions_equal_memory_at_any_offset():
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    frame = _frame(1200, 6, seed=7)
    frame["v3"] = 1e8 + 1e-5 * frame["v3"]
    frame["v4"] = 1e10 + frame["v4"]
    frame["k"] = 1e12 / 3
    holed = frame.copy()
    holed.loc[np.random.default_rng(7).random(1200) < 0.1, "v5"] = np.nan
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        for data, na in ((frame, "raise"), (holed, "pairwise")):
            parted = as_dataset(dd.from_pandas(data, npartitions=3), na=na)
            for z in ([], ["v1"], ["v1", "v2"]):
                xs = ["v3", "v4", "v5", "k"]
                got = ci_test_batch(parted, xs, "v0", z, test="fisher_z")
                ref = ci_test_batch(data, xs, "v0", z, test="fisher_z", na=na)
                np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-9, atol=1e-12)
                assert got.pvalue[-1] == 1.0
        r = stats.pearsonr(frame["v3"] - 1e8, frame["v0"]).statistic  # exact shift
        parted = as_dataset(dd.from_pandas(frame, npartitions=3))
        assert ci_test(parted, "v3", "v0", test="fisher_z").statistic == pytest.approx(
            _fisher(r, 1200, 0), rel=1e-10)


def test_linear_gaussian_blankets_are_the_dags():
    df = make_linear_gaussian(30, 200, seed=3)
    again = make_linear_gaussian(30, 200, seed=3)
    pd.testing.assert_frame_equal(df, again)
    assert df.attrs == again.attrs
    parents = df.attrs["parents"]
    dsep = mbstat.bn.DSeparator(parents)
    for v in df.columns:
        found = mbstat.iamb(df, v, test="oracle", dag=parents).blanket
        assert tuple(sorted(found, key=lambda u: int(u[1:]))) == df.attrs["blankets"][v]
        rest = [u for u in df.columns if u != v and u not in df.attrs["blankets"][v]]
        assert all(dsep(v, u, df.attrs["blankets"][v]) for u in rest)
    with pytest.raises(ValueError, match="n_nodes"):
        make_linear_gaussian(0, 10)


def test_linear_gaussian_covariance_and_recovery():
    """At 20,000 rows fisher_z's IAMB finds every blanket of a small network."""
    df = make_linear_gaussian(12, 20000, seed=11)
    blankets = mbstat.blankets(df, method="iamb", test="fisher_z")
    found = {v: tuple(sorted(res.blanket, key=lambda u: int(u[1:])))
             for v, res in blankets.results.items()}
    assert found == df.attrs["blankets"]


@pytest.mark.gpu
def test_gpu_moments_equal_cpu():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # pragma: no cover - no device
        pytest.skip("no CUDA device")
    frame = _frame(20000, 12, seed=8)
    ds = as_dataset(frame)
    cpu = column_moments(ds)
    gpu = column_moments(ds, cupy)
    z = np.array([1, 2, 3])
    xs = np.arange(4, 12)
    np.testing.assert_allclose(gpu.partial(0, xs, z)[0], cpu.partial(0, xs, z)[0], rtol=1e-10)
    got = CITester(ds, "fisher_z", backend="gpu").test_many(list(frame.columns[4:]), "v0",
                                                            ["v1", "v2", "v3"])
    ref = CITester(ds, "fisher_z").test_many(list(frame.columns[4:]), "v0", ["v1", "v2", "v3"])
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-10)


def test_p_values_equal_scipys_normal_tail_far_out():
    """The compiled table's log p-value is log 2 + scipy's log_ndtr(-|z|) (log1p(-erf)
    near p = 1, where that sum cancels), past the underflow of the p-value (|z| up to 10^3)
    too."""
    from mbstat.ci.continuous.gaussian import fisher_table

    r = np.array([0.0, 1e-9, 0.3, -0.7, 0.99, 0.999999, -1.0 + 1e-15, 1.0])
    n = np.full(len(r), 2e4)
    out = np.empty((len(r), 6))
    fisher_table(r, n, 2, out)
    with np.errstate(divide="ignore"):
        stat = np.sqrt(2e4 - 5) * np.arctanh(r)
    with np.errstate(divide="ignore"):
        ref = np.minimum(np.log(2.0) + special.log_ndtr(-np.abs(stat)), 0.0)
    ref[:2] = np.log1p(-special.erf(np.abs(stat[:2]) / np.sqrt(2.0)))
    np.testing.assert_allclose(out[:, 0], stat, rtol=1e-15)
    np.testing.assert_allclose(out[:-1, 3], ref[:-1], rtol=1e-13)
    assert out[-1, 3] == -np.inf and out[-1, 2] == 0.0
    np.testing.assert_allclose(out[:, 2], np.exp(ref), rtol=1e-12)
    np.testing.assert_allclose(out[:-1, 4], -0.5 * np.log1p(-r[:-1] ** 2), rtol=1e-15)
    with pytest.raises(ValueError, match=r"more than \|z\| \+ 3 = 5 rows; got 5"):
        ci_test(_frame(5, 4), "v0", "v1", ["v2", "v3"], test="fisher_z")


def test_a_full_store_starts_again_with_the_same_answers():
    """Wide data keep a bounded number of rows of the correlation matrix: when the store
    is full it starts again (a new one: readers of the old keep theirs; one query's rows
    always fit); answers equal the rows path."""
    from mbstat.ci.continuous.moments import ColumnMoments, partial_from_rows, standardize

    values = _frame(300, 40, seed=9).to_numpy()
    cm = ColumnMoments(values)
    cm.block, cm._cap = 4, 8
    cm.state = (np.zeros((8, 40)), np.full(40, -1, dtype=np.int64))
    u, unit, floor, _, _ = standardize(values)
    rng = np.random.default_rng(9)
    for _ in range(30):
        cols = rng.choice(40, 6, replace=False)
        y, z, xs = int(cols[0]), cols[1:3], cols[3:]
        got = cm.partial(y, xs, z)[0]
        ref = partial_from_rows(u, unit, floor, y, xs, z)
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-13)
    assert (cm.state[1] >= 0).sum() <= 12  # at most one query's blocks past the bound


def test_crossproducts_for_least_squares():
    """The centred cross-products that a least-squares fit needs (reg-lr's Gaussian branch,
    mi-cg without a discrete z) come from the shared statistics: numpy's covariance times
    n - 1, and the slopes of statsmodels' OLS."""
    sm = pytest.importorskip("statsmodels.api")
    frame = _frame(500, 5, seed=10) + 1e6
    ds = as_dataset(frame)
    cm = column_moments(ds)
    cross = cm.crossproducts([0, 1, 2], [0, 1, 2, 3, 4])
    np.testing.assert_allclose(cross, np.cov(frame.to_numpy().T - 1e6)[:3] * 499, rtol=1e-12)
    np.testing.assert_allclose(cm.mean, frame.mean().to_numpy(), rtol=1e-15)
    zz = cm.crossproducts([1, 2], [1, 2])
    zy = cm.crossproducts([1, 2], [0])[:, 0]
    fit = sm.OLS(frame["v0"] - 1e6, sm.add_constant(frame[["v1", "v2"]] - 1e6)).fit()
    np.testing.assert_allclose(np.linalg.solve(zz, zy), fit.params.to_numpy()[1:], rtol=1e-10)


def test_a_batch_mixing_ill_posed_and_plain_candidates():
    """Candidates the correlations cannot answer (x almost linear in z) are recomputed from
    the rows; the others in the same batch keep their answers (before the fix, their rows
    of the table were refilled from the statistic column: r = z read as r, p = 0)."""
    rng = np.random.default_rng(12)
    n = 400
    frame = _frame(n, 5, seed=12)
    frame["near"] = frame["v1"] + 1e-3 * rng.normal(size=n) + 1e-4 * frame["v0"]
    xs = ["v2", "near", "v3", "v4"]
    batch = ci_test_batch(frame, xs, "v0", ["v1"], test="fisher_z")
    for x, stat in zip(xs, batch.statistic):
        assert stat == pytest.approx(_fisher(_ols_partial(frame, x, "v0", ["v1"]), n, 1),
                                     rel=1e-9)
        assert stat == ci_test(frame, x, "v0", ["v1"], test="fisher_z").statistic


def test_compiled_gram_rows_equal_the_blas_product(monkeypatch):
    """The rows of the correlation matrix from the compiled chunked loop (small products)
    equal the BLAS product (large ones) to rounding, whatever the order of the queries."""
    from mbstat.ci.continuous import moments

    frame = _frame(2500, 41, seed=3)  # 41 columns: a partial block; 2,500 rows: 3 chunks
    ds = as_dataset(frame)
    compiled = moments.ColumnMoments(ds.numeric())
    compiled.rows([40, 3])
    compiled.rows(range(41))
    monkeypatch.setattr(moments, "SMALL_GEMM", 0)
    blas = moments.ColumnMoments(ds.numeric())
    blas.rows(range(41))
    a = compiled.state[0][compiled.state[1]]
    b = blas.state[0][blas.state[1]]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)
    u = compiled.columns(range(41))
    np.testing.assert_allclose(a, u.T @ u, rtol=0, atol=1e-14)
    assert np.allclose(np.diag(a), 1.0, atol=1e-14)


def test_the_lean_path_equals_the_general_path():
    """A batch of names (the engine's lean path, FisherZ's one compiled call) and the same
    batch by positions through the general path give the same tables, cache, counts and
    log; repeated, partly cached, duplicated and mixed batches too."""
    frame = _frame(500, 8, seed=5)
    frame["flat"] = 2.0 * frame["v1"] - frame["v2"] + 3.0  # linear in z: p = 1
    names = list(frame.columns)
    lean, general = CITester(frame, "fisher_z"), CITester(frame, "fisher_z")
    queries = [(["v3", "v4", "v5"], "v0", ("v1", "v2")),
               (["v4", "v6", "v7", "flat"], "v0", ("v1", "v2")),  # v4 cached
               (["v3", "v4"], "v0", ("v1", "v2")),  # all cached
               (["v0", "v5"], "v3", ()),  # symmetric hits: v3 ~ v0 given ()
               (["v5", "v5", "v6"], "v7", ("v0",)),  # a duplicate
               (["v2", "v3"], "v1", ("v0", "v4", "v5"))]
    for xs, y, z in queries:
        a = lean.test_many(xs, y, z, phase="p")
        b = general.test_many([(names.index(x),) for x in xs], names.index(y),
                              tuple(names.index(v) for v in z), phase="p")
        np.testing.assert_array_equal(a.table, b.table)
        assert a.xs == b.xs and a.y == b.y and a.z == b.z
        assert [r.independent for r in a] == list(b.independent)
        assert [r.x for r in a] == [b[i].x for i in range(len(b))]
    assert (lean.n_tests, lean.n_cache_hits) == (general.n_tests, general.n_cache_hits)
    pd.testing.assert_frame_equal(lean.log, general.log)
    flat = lean.test("flat", "v0", ("v1", "v2"))
    assert flat.statistic == 0.0 and flat.pvalue == 1.0
    with pytest.raises(ValueError, match="overlaps z"):
        lean.test_many(["v3", "v1"], "v0", ("v1",))
    with pytest.raises(ValueError, match="overlaps y"):
        lean.test_many(["v3", "v0"], "v0", ())
    assert len(lean.test_many([], "v0", ())) == 0
    assert len(lean.test_many(iter(["v3", "v4"]), "v0", ())) == 2


def test_fisher_z_lean_call_equals_its_general_path(monkeypatch):
    """FisherZ's one compiled call for the common case gives the table of its general
    path (rows of the correlation matrix asked for, ill-posed candidates redone)."""
    from mbstat.ci.continuous.gaussian import FisherZ

    frame = _frame(700, 9, seed=8)
    xs = [f"v{i}" for i in range(4, 9)]
    lean = ci_test_batch(frame, xs, "v0", ["v1", "v2", "v3"], test="fisher_z")
    monkeypatch.setattr(FisherZ, "_lean", lambda self, *args: None)
    general = ci_test_batch(frame, xs, "v0", ["v1", "v2", "v3"], test="fisher_z")
    np.testing.assert_array_equal(lean.table, general.table)
