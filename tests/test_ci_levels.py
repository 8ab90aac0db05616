"""The discrete CI tests hold their level on sparse tables (issue #13, item 1)."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from mbstat import ci_test, ci_test_batch
from mbstat.ci.engine import CITester
from mbstat.ci import PermutationTest
from mbstat.ci.tables.contingency import ContingencyTest, semiparametric
from mbstat.datasets import sample_network


def issue_frame(seed=0, n=3000, levels=300):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"z": rng.integers(0, levels, n), "x": rng.integers(0, 2, n),
                         "y": rng.integers(0, 3, n)})


def replicates(k, n, levels, seed=0, effect=0.0):
    """k independent (x_i, y_i) pairs beside one z, all independent (with ``effect`` > 0,
    y_i copies x_i with that probability): k tests of x_i against y_i given z."""
    rng = np.random.default_rng(seed)
    cols = {"z": rng.integers(0, levels, n)}
    for i in range(k):
        x, y = rng.integers(0, 2, n), rng.integers(0, 3, n)
        cols[f"x{i}"], cols[f"y{i}"] = x, np.where(rng.random(n) < effect, x, y)
    return pd.DataFrame(cols)


def rejections(frame, k, test, **args):
    tester = CITester(frame, test, **args)
    res = [tester.test(f"x{i}", f"y{i}", ["z"]) for i in range(k)]
    return sum(r.pvalue <= 0.05 and not r.skipped for r in res), res


def test_issue_case_is_not_rejected_and_says_how():
    df = issue_frame()
    res = ci_test(df, "x", "y", z=["z"])  # 6.7e-06 before: the asymptotic chi-square
    assert res.pvalue > 0.05 and res.calibration == "semiparametric" and not res.skipped
    assert res.df == pytest.approx(res.statistic, rel=0.2)  # df from permutations, not 600
    assert "semiparametric" in str(res) and "note:" in str(res)
    adf = ci_test(df, "x", "y", z=["z"], test="g2-adf")  # 1.9e-08 before
    assert adf.skipped and adf.pvalue == 1.0 and adf.calibration == "skipped"
    assert adf.independent
    x2 = ci_test(df, "x", "y", z=["z"], test="x2")
    assert x2.calibration == "semiparametric" and x2.pvalue > 0.05
    forced = ci_test(df, "x", "y", z=["z"], calibration="asymptotic")  # bnlearn's "mi"
    assert forced.pvalue < 1e-4 and forced.df == 600 and forced.calibration == "asymptotic"


@pytest.mark.parametrize("n, levels, over", [(3000, 300, 50), (6000, 100, 6)])  # 1.67, 10 a cell
def test_defaults_hold_their_level_on_sparse_tables(n, levels, over):
    k = 60
    frame = replicates(k, n, levels, seed=n)
    for test in ("g2", "x2"):
        hits, res = rejections(frame, k, test)
        lo, _ = proportion_confint(hits, k, alpha=0.05, method="wilson")
        assert lo <= 0.05 and hits <= 7, (test, hits)
        assert {r.calibration for r in res} == {"semiparametric"}
    asymptotic, _ = rejections(frame, k, "g2", calibration="asymptotic")
    assert asymptotic >= over  # what the default avoids (bnlearn's "mi": 100% and about 13%)


def test_dependence_is_still_detected():
    k = 10
    frame = replicates(k, 3000, 300, seed=1, effect=0.3)
    for test in ("g2", "x2", "sp-g2"):
        hits, res = rejections(frame, k, test)
        assert hits == k, test
        assert max(r.pvalue for r in res) < 1e-3


def test_dense_tables_keep_the_asymptotic_chi_square():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.integers(0, 3, (5000, 4)), columns=list("abcd"))
    res = ci_test(df, "a", "b", ["c", "d"])
    assert res.calibration == "asymptotic" and res.df == 4 * 9
    assert res.pvalue == pytest.approx(stats.chi2.sf(res.statistic, 36), rel=1e-9)


def test_permutation_calibrations_are_deterministic_and_symmetric():
    df = issue_frame(seed=4)
    t1, t2 = CITester(df, "g2"), CITester(df, "g2")
    a = t1.test("x", "y", ["z"])
    b = t2.test("y", "x", ["z"])  # asked the other way round, on a fresh tester
    assert (a.df, a.pvalue) == (b.df, b.pvalue)
    again = ci_test(df, "x", "y", ["z"], "sp-g2")
    assert (again.df, again.pvalue) == (a.df, a.pvalue)  # sp-g2 is what g2 switched to
    other = ci_test(df, "x", "y", ["z"], "sp-g2", seed=1)  # the moments are computed, not
    assert (other.df, other.pvalue) == (a.df, a.pvalue)  # drawn: no seed moves them
    mc = ci_test(df, "x", "y", ["z"], "mc-g2", B=199)
    assert mc.calibration == "permutation" and mc.df == 600
    assert mc.pvalue * 200 == pytest.approx(round(mc.pvalue * 200))


def test_semiparametric_df_estimates_the_permutation_mean():
    # X2's mean under permutations within strata is known exactly:
    # sum over strata of N / (N - 1) (rows - 1)(columns - 1)
    df = issue_frame(seed=2, n=1200, levels=100)
    res = ci_test(df, "x", "y", ["z"], "sp-x2", B=2000)
    exact = 0.0
    for _, part in df.groupby("z"):
        n = len(part)
        if n > 1:
            exact += n / (n - 1) * (part.x.nunique() - 1) * (part.y.nunique() - 1)
    assert res.df == pytest.approx(exact, rel=0.02)


def test_insurance_adf_follows_bnlearn_power_rule():
    # bnlearn: mi-adf assumes independence below 5 rows per cell of the full table
    # (G2 = 0, df 359, p = 1 on this query; 434.67, p = 0.0038 before)
    d = sample_network("insurance", 5000, seed=1)
    z = ["SocioEcon", "GoodStudent", "RiskAversion", "MakeModel", "RuggedAuto"]
    res = ci_test(d, "Mileage", "Age", z, test="g2-adf")
    assert (res.statistic, res.df, res.pvalue, res.calibration) == (0.0, 359.0, 1.0, "skipped")
    assert ci_test(d, "Mileage", "Age", z, test="g2-adf", min_per_cell=None).pvalue < 0.01
    assert ci_test(d, "Mileage", "Age", z).calibration == "semiparametric"


def test_calibration_is_reported_in_batch_log_and_printout():
    rng = np.random.default_rng(5)
    df = issue_frame(seed=5, levels=2).assign(id=rng.integers(0, 500, 3000),
                                              w=lambda f: f.z)
    tester = CITester(df, "g2")
    batch = tester.test_many(["x", "id"], "y", ["z"])  # 12 cells; 3,000 cells
    assert list(batch.calibration) == ["asymptotic", "semiparametric"]
    assert batch[1].calibration == "semiparametric" and not batch.skipped.any()
    with pytest.raises(ValueError, match="read-only"):
        batch.calibration[0] = "skipped"
    text = str(batch)
    assert "calibration" in text and "note (semiparametric)" in text
    log = tester.log
    assert list(log["calibration"]) == ["asymptotic", "semiparametric"]
    assert tester.calibrations == {"asymptotic": 1, "semiparametric": 1}
    assert list(batch.to_frame()["calibration"]) == ["asymptotic", "semiparametric"]
    # a copy of z: constant within every stratum, nothing to permute (df 0, p 1)
    same = tester.test("w", "y", ["z"])
    assert (same.df, same.pvalue) == (4.0, 1.0) and same.calibration == "asymptotic"
    skipped = CITester(issue_frame(), "g2-adf").test("x", "y", ["z"])
    assert "power rule" in str(skipped) and skipped.calibration == "skipped"


def test_semiparametric_fits_the_mean_or_the_mean_and_variance():
    perm = stats.chi2.rvs(50, size=4000, random_state=0)
    df, p, log_p = semiparametric(60.0, perm, "mean")  # bnlearn's sp-mi: df = mean
    assert df == pytest.approx(perm.mean()) and p == pytest.approx(stats.chi2.sf(60, df))
    assert log_p == pytest.approx(math.log(p))
    df2, p2, _ = semiparametric(60.0, perm)  # a chi-square's variance: about the same p
    assert df2 == df and p2 == pytest.approx(p, rel=0.1)
    # 3 chi2(50) has mean 150 and variance 900: the mean alone reads it as chi2(150)
    scaled = 3 * perm
    assert semiparametric(180.0, scaled)[1] == pytest.approx(stats.chi2.sf(60, 50), rel=0.1)
    assert semiparametric(180.0, scaled, "mean")[1] < 0.5 * stats.chi2.sf(60, 50)
    assert semiparametric(5.0, np.zeros(10)) == (0.0, 1.0, 0.0)  # nothing varies


def test_test_objects_check_their_arguments():
    with pytest.raises(ValueError, match="B must be >= 1"):
        PermutationTest(B=0)
    with pytest.raises(ValueError, match="calibration must be one of"):
        ContingencyTest(calibration="exact")
    with pytest.raises(ValueError, match="statistic must be one of"):
        ContingencyTest(statistic="g3")
    with pytest.raises(ValueError, match="min_per_cell must be >= 0"):
        ContingencyTest(min_per_cell=-1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        ContingencyTest(seed=1.5)
    with pytest.raises(TypeError, match="seeded by its columns' contents.*got a Generator"):
        ContingencyTest(seed=np.random.default_rng(0))  # a stream would tie p to test order
    with pytest.raises(ValueError, match="match must be one of"):
        ContingencyTest(match="median")
    with pytest.raises(ValueError, match="B must be >= 2"):  # a variance needs two
        ContingencyTest(B=1)
    assert ContingencyTest(B=1, match="mean").B == 1
    with pytest.raises(ValueError, match="B must be >= 1"):  # in the engine too
        CITester(issue_frame(), "mc-g2", B=0)


def test_every_discrete_test_is_registered_with_its_calibration():
    df = issue_frame(seed=6, n=500, levels=20)
    expect = {"g2": "semiparametric", "x2": "semiparametric", "g2-adf": "skipped",
              "x2-adf": "skipped", "sp-g2": "semiparametric", "sp-x2": "semiparametric",
              "mc-g2": "permutation", "mc-x2": "permutation"}
    for test, calibration in expect.items():
        args = {"B": 99} if test.startswith("mc-") else {}
        assert ci_test(df, "x", "y", ["z"], test, **args).calibration == calibration, test
    batch = ci_test_batch(df, ["x"], "y", [], "g2")  # 500 rows, 6 cells: asymptotic
    assert list(batch.calibration) == ["asymptotic"]
    assert math.isfinite(batch.df[0])


def test_vignette_quick(run_vignette):
    out = run_vignette("sparse_levels.py", timeout=180)
    assert "Rejection rates under the null" in out
    assert "defaults within the level (every Wilson interval reaches 0.05):" in out
    assert "Power: y copies x" in out
    for name in ("g2 (default)", "g2-adf", "mc-g2", "sp-g2", "x2 (default)", "x2-adf"):
        assert name in out


def test_permutations_ignore_column_order_and_names():
    """The semiparametric and permutation p-values are seeded by the columns' contents."""
    df = issue_frame(seed=3, n=1500, levels=150)
    moved = df[["y", "z", "x"]].rename(columns={"x": "a", "y": "b", "z": "c"})
    for test, args in (("g2", {}), ("mc-g2", {"B": 199})):
        one = ci_test(df, "x", "y", ["z"], test, **args)
        two = ci_test(moved, "a", "b", ["c"], test, **args)
        assert one.calibration == two.calibration != "asymptotic"
        assert one.pvalue == two.pvalue and one.df == two.df


def test_id_like_columns_are_not_significant():
    """No permutation moves the statistic of an ID-like column: p = 1, not a scale collapsed
    to rounding noise (p = 1e-104 before); IAMB then keeps the true blanket."""
    rejected = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        df = pd.DataFrame({"x": rng.integers(0, 2, 300), "id": np.arange(300),
                           "z": rng.integers(0, 3, 300)})
        res = ci_test(df, "x", "id", ["z"])
        assert res.calibration == "semiparametric" and 0.0 <= res.pvalue <= 1.0
        rejected += res.pvalue <= 0.05
    assert rejected == 0
    from mbstat import iamb
    from mbstat.datasets import sample_network

    data = sample_network("alarm", 2000, seed=1)
    with_id = data.assign(id=np.arange(2000))
    assert set(iamb(with_id, "CO").blanket) == set(iamb(data, "CO").blanket) != set()


# ------------------------------------------------------------------ mixed and continuous tests
def _discrete_pair_nulls(k, n, seed):
    """k null data sets as one frame: x_i and y_i of 3 levels, each a multinomial logit of
    its own in the same two continuous z columns, independent given them."""
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(k):
        Z = rng.normal(size=(n, 2))
        for name in ("x", "y"):
            eta = Z @ rng.normal(scale=0.8, size=(2, 3))
            P = np.exp(eta - eta.max(axis=1, keepdims=True))
            P /= P.sum(axis=1, keepdims=True)
            cols[f"{name}{i}"] = pd.Categorical((rng.random((n, 1)) > P.cumsum(axis=1))
                                                .sum(axis=1).clip(0, 2))
        cols[f"a{i}"], cols[f"b{i}"] = Z[:, 0], Z[:, 1]
    return pd.DataFrame(cols)


def test_mi_cg_discrete_pair_given_continuous_z_holds_its_level():
    """#31 item 3: 3 x 3 levels given two continuous columns at 120 rows (24 df, 2.5 rows
    per coefficient of the pair's logit): the plain chi-square (the former default,
    ``correction=None``) rejects 14 of these 60 nulls, the bootstrap Bartlett scaling at
    most 6 (P = 0.92 at a level of 5%, 0.24 at 10%: 60 nulls detect a doubled level)."""
    k = 60
    df = _discrete_pair_nulls(k, 120, seed=3)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        plain, fixed = (CITester(df, "mi-cg", correction=c) for c in (None, "moments"))
        p0 = np.array([plain.test(f"x{i}", f"y{i}", [f"a{i}", f"b{i}"]).pvalue
                       for i in range(k)])
        p1 = np.array([fixed.test(f"x{i}", f"y{i}", [f"a{i}", f"b{i}"]).pvalue
                       for i in range(k)])
    assert (p1 >= p0).all()  # the bootstrap mean exceeds the df here: only a scaling down
    assert int((p1 <= 0.05).sum()) <= 6 < int((p0 <= 0.05).sum()), (p0, p1)


def test_a_rare_level_keeps_a_dense_stratum_off_the_chi_square_moments():
    # ALARM (2,000 rows, CO = LOW): 366 rows, 41 per cell, but a y level of 2 rows (least
    # expected count 0.05). Williams' expansion put G2's null mean at 10.45 where the law's
    # is 3.08, and the p-value at 0.986 against the permutations' 0.19: now the exact moments
    counts = np.array([[304, 41, 1], [7, 2, 0], [9, 1, 1]])
    x, y = np.nonzero(counts)
    reps = counts[x, y]
    df = pd.DataFrame({"x": pd.Categorical(np.repeat(x, reps)),
                       "y": pd.Categorical(np.repeat(y, reps))})
    r = ci_test(df, "x", "y", [], calibration="semiparametric")
    moments = np.zeros(6)
    from mbstat.ci.tables._kernels import clogc_table
    from mbstat.ci.tables._table_moments import table_moments

    assert table_moments(counts.sum(1), counts.sum(0), 366, clogc_table(367), moments)
    assert r.df == pytest.approx(moments[0], rel=1e-9)  # df shows the null mean
    assert 0.1 < r.pvalue < 0.3
    mc = ci_test(df, "x", "y", [], test="mc-g2", B=2000, seed=1).pvalue
    assert abs(r.pvalue - mc) < 0.06


def test_constant_strata_shift_the_statistic_and_keep_the_level():
    """Strata of one row per x level contribute the same G2 to every permutation (a
    constant K); fitting the scaled chi-square to K + R, R the random part, gave it K's mean
    but only R's variance: a near-normal law with too light a tail. Here 100 strata of 3
    rows (x = 0, 1, 2 once each, K ~ 200) beside one stratum of 200 rows (x, y binary: R
    about chi2(1)), 400 nulls: the old fit rejected 3.0% [1.7, 5.2] at 0.01 and 6.25% at
    0.05; with K subtracted from the statistic (the law fitted to R alone), each Wilson
    interval holds its level (0.75% and 4.75% with this seed)."""
    rng = np.random.default_rng(1)
    z = np.r_[np.repeat(np.arange(100), 3), np.full(200, 100)]
    p = []
    for _ in range(400):
        x_const = rng.permuted(np.tile([0, 1, 2], (100, 1)), axis=1).ravel()
        x = np.r_[x_const, rng.integers(0, 2, 200)]
        y = rng.integers(0, 2, 500)
        df = pd.DataFrame({"x": x, "y": y, "z": z}).astype("category")
        r = ci_test(df, "x", "y", ["z"], test="g2")
        assert r.calibration == "semiparametric"
        p.append(r.pvalue)
    p = np.array(p)
    for level in (0.01, 0.05):
        lo, hi = proportion_confint(int((p < level).sum()), len(p), alpha=0.05,
                                    method="wilson")
        assert lo <= level <= hi, (level, (p < level).mean())
