"""CI tests for mixed and non-Gaussian data (issue #19): mi-cg, reg-lr, spearman, rcot and
test="auto", each against an independent reference and with its level measured."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint
from threadpoolctl import threadpool_limits

import mbstat
from mbstat import ci_test, ci_test_batch
from mbstat.ci.engine import CITester
from mbstat.ci.continuous.kernel import hbe_sf_logsf
from mbstat.ci.registry import choose_test
from mbstat.datasets import make_mixed_network


def mixed_frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    d1 = rng.integers(0, 2, n)
    d2 = rng.integers(0, 3, n)
    c1 = rng.normal(size=n) + d1
    c2 = 0.5 * c1 + rng.normal(size=n) + 0.7 * (d2 == 1)
    c3 = rng.normal(size=n) - c2 * (d1 == 1)
    d3 = (rng.random(n) < 1 / (1 + np.exp(-c1))).astype(int)
    cat = lambda a, p: pd.Categorical.from_codes(a, [f"{p}{i}" for i in range(a.max() + 1)])
    return pd.DataFrame({"d1": cat(d1, "a"), "d2": cat(d2, "b"), "d3": cat(d3, "c"),
                         "c1": c1, "c2": c2, "c3": c3})


# ------------------------------------------------------------------ mi-cg by hand
def _loglik(resp, design, groups):
    """Conditional Gaussian log-likelihood as bnlearn's c_fast_ccgloglik: per stratum a
    least-squares fit, sd = sqrt(RSS / (n_s - p)), summed normal log-densities."""
    total = 0.0
    for g in np.unique(groups):
        rows = groups == g
        X, y = design[rows], resp[rows]
        beta = np.linalg.lstsq(X, y, rcond=None)[0]
        r = y - X @ beta
        sd = np.sqrt(r @ r / (rows.sum() - X.shape[1]))
        total += stats.norm.logpdf(y, X @ beta, sd).sum()
    return total


def _codes(df, cols):
    if not cols:
        return np.zeros(len(df), dtype=int)
    return df[cols].apply(lambda s: s.cat.codes).astype(str).agg("-".join, axis=1).to_numpy()


def _design(df, cols):
    return np.column_stack([np.ones(len(df))] + [df[c].to_numpy() for c in cols])


def test_mi_cg_equals_hand_computation_continuous_pair():
    df = mixed_frame()
    res = ci_test_batch(df, ["c1", "c3"], "c2", ["d1", "d2"], test="mi-cg", correction=None)
    g = _codes(df, ["d1", "d2"])
    for i, x in enumerate(["c1", "c3"]):
        ll1 = _loglik(df.c2.to_numpy(), _design(df, [x]), g)
        ll0 = _loglik(df.c2.to_numpy(), _design(df, []), g)
        assert res.statistic[i] == pytest.approx(2 * (ll1 - ll0), rel=1e-10)
        assert res.df[i] == 6  # one slope per configuration of (d1, d2)
    # continuous z too; symmetric in x and y
    r = ci_test(df, "c1", "c3", ["d1", "c2"], test="mi-cg")
    g = _codes(df, ["d1"])
    ll1 = _loglik(df.c3.to_numpy(), _design(df, ["c2", "c1"]), g)
    ll0 = _loglik(df.c3.to_numpy(), _design(df, ["c2"]), g)
    assert r.statistic == pytest.approx(2 * (ll1 - ll0), rel=1e-10)
    assert ci_test(df, "c3", "c1", ["d1", "c2"], test="mi-cg").statistic == \
        pytest.approx(r.statistic, rel=1e-10)
    plain = ci_test(df, "c1", "c3", ["d1", "c2"], test="mi-cg", correction=None)
    assert plain.df == 2 and plain.pvalue == pytest.approx(stats.chi2.sf(r.statistic, 2), rel=1e-9)


@pytest.mark.parametrize("x, y", [("d2", "c3"), ("c3", "d2")])
def test_mi_cg_equals_hand_computation_discrete_and_continuous(x, y):
    df = mixed_frame()
    r = ci_test(df, x, y, ["d1", "c1"], test="mi-cg", correction=None)
    cont, disc = ("c3", "d2")
    ll1 = _loglik(df[cont].to_numpy(), _design(df, ["c1"]), _codes(df, [disc, "d1"]))
    ll0 = _loglik(df[cont].to_numpy(), _design(df, ["c1"]), _codes(df, ["d1"]))
    assert r.statistic == pytest.approx(2 * (ll1 - ll0), rel=1e-10)
    assert r.df == (3 - 1) * 2 * (1 + 2)  # bnlearn: (levels - 1) * L * (q + 2)


def test_mi_cg_discrete_pair_is_g2_or_the_pair_logit():
    df = mixed_frame()
    # z discrete: the G2 test (sum of per-stratum G2 from scipy)
    r = ci_test(df, "d2", "d3", ["d1"], test="mi-cg")
    g2 = sum(stats.chi2_contingency(pd.crosstab(s.d2, s.d3), lambda_="log-likelihood",
                                    correction=False)[0] for _, s in df.groupby("d1",
                                                                              observed=True))
    assert r.statistic == pytest.approx(g2, rel=1e-9) and r.df == 2 * 1 * 2
    assert r.statistic == pytest.approx(ci_test(df, "d2", "d3", ["d1"], test="g2",
                                                calibration="asymptotic").statistic)
    # a continuous z: the pair's multinomial logit on [1, c1, c1^2] within d1 against the
    # product of those of d2 and d3 (statsmodels' MNLogit by hand, per stratum)
    r = ci_test(df, "d2", "d3", ["d1", "c1"], test="mi-cg")
    hand = 0.0
    for _, s in df.groupby("d1", observed=True):
        c = (s.c1 - s.c1.mean()) / s.c1.std(ddof=0)
        F = np.column_stack([np.ones(len(s)), c, c ** 2])
        fit = lambda codes: sm.MNLogit(codes, F).fit(method="newton", disp=0).llf
        a, b = s.d2.cat.codes.to_numpy(), s.d3.cat.codes.to_numpy()
        hand += 2 * (fit(a * 2 + b) - fit(a) - fit(b))
    assert r.statistic == pytest.approx(hand, rel=1e-6)
    # df of the pair logit's interaction (the plain chi-square's); the default reports the
    # scaled chi-square's f from the bootstrap's two moments
    plain = ci_test(df, "d2", "d3", ["d1", "c1"], test="mi-cg", correction=None)
    assert plain.df == 2 * 1 * 2 * (1 + 1 * 4 / 2) and plain.statistic == r.statistic


def test_mi_cg_singular_model_is_independence():
    df = mixed_frame(40)
    df["c4"] = np.round(df.c1, 0) * 0 + 1.0  # constant: zero residual variance
    for x, y in [("c4", "c2"), ("c2", "c4"), ("c4", "d2"), ("d2", "c4")]:
        r = ci_test(df, x, y, ["d1"], test="mi-cg")
        assert r.statistic == 0 and r.pvalue == 1, (x, y)


def test_mi_cg_does_not_depend_on_the_units_of_x_or_zc():
    # x (the regressor of y) at 1e-9 was taken for a constant (statistic 0) and a zc at
    # 1e-12 was dropped from the design (not conditioned on); a constant 1e8 x is singular
    df = mixed_frame(300, 2)
    ref = ci_test(df, "c1", "c3", ["c2", "d1"], test="mi-cg")
    assert ref.statistic > 0
    for col, scale in [("c1", 1e-9), ("c2", 1e-12), ("c2", 1e9)]:
        scaled = df.assign(**{col: df[col] * scale})
        r = ci_test(scaled, "c1", "c3", ["c2", "d1"], test="mi-cg")
        assert r.statistic == pytest.approx(ref.statistic, rel=1e-8), (col, scale)
    r = ci_test(df.assign(c1=1e8), "c1", "c3", ["c2", "d1"], test="mi-cg")
    assert r.statistic == 0 and r.pvalue == 1


def test_mi_cg_x_constant_in_one_stratum_keeps_the_other_strata():
    # a zero-inflated x (0 in stratum d = 0) made the whole test singular: statistic 0,
    # p = 1 (was 0 against 34.2 here); bnlearn's QR fits the rank-deficient stratum
    # (lstsq below, residual sd on n_s - p - 1) and the other stratum carries the evidence
    rng = np.random.default_rng(5)
    n = 400
    d, z = rng.integers(0, 2, n), rng.normal(size=n)
    x = np.where(d == 0, 0.0, rng.normal(size=n) + z)
    y = z + 0.4 * x + rng.normal(size=n)
    df = pd.DataFrame({"x": x, "y": y, "z": z, "d": pd.Categorical(d)})
    r = ci_test(df, "x", "y", ["z", "d"], test="mi-cg")
    hand = 2 * (_loglik(y, _design(df, ["z", "x"]), d) - _loglik(y, _design(df, ["z"]), d))
    assert r.statistic == pytest.approx(hand, rel=1e-9) and r.pvalue < 1e-6


def _zero_inflated(n=500, seed=1):
    rng = np.random.default_rng(seed)
    buy = rng.random(n) < 0.5
    return pd.DataFrame({"amount": np.where(buy, rng.lognormal(3, 1, n), 0.0),
                         "buy": pd.Categorical(np.where(buy, "yes", "no")),
                         "other": rng.normal(size=n)})


@pytest.mark.parametrize("correction", ["moments", "bartlett", None])
def test_mi_cg_a_point_mass_explained_exactly_is_certain_dependence(correction):
    # amount = 0 whenever buy == "no": the alternative's stratum is a point mass that the
    # null's is not. It read as a singular fit, statistic 0 and p = 1 in both orders (bnlearn
    # 4.9 gives Inf, p = 0 given nothing and p = 1 given a continuous z); reg-lr 1.3e-152
    df = _zero_inflated()
    for x, y, z in [("amount", "buy", []), ("buy", "amount", []),
                    ("amount", "buy", ["other"]), ("buy", "amount", ["other"])]:
        r = ci_test(df, x, y, z, test="mi-cg", correction=correction)
        assert r.statistic == np.inf and r.pvalue == 0 and r.log_pvalue == -np.inf, (x, y, z)
    assert list(mbstat.iamb(df, "buy").blanket) == ["amount"]
    # y an exact linear function of x in one stratum of zd (neither constant there)
    rng = np.random.default_rng(3)
    d = rng.integers(0, 2, 200)
    x = rng.normal(size=200)
    e = pd.DataFrame({"x": x, "y": np.where(d == 0, 1 + 2 * x, rng.normal(size=200)),
                      "d": pd.Categorical(d)})
    assert ci_test(e, "x", "y", ["d"], test="mi-cg").pvalue == 0
    assert ci_test(e, "y", "x", ["d"], test="mi-cg").pvalue == 0


def test_mi_cg_a_point_mass_in_both_models_carries_no_evidence_and_is_symmetric():
    # x constant in stratum zd = 0 and y = 2x + noise: mi-cg(x, y | zd) regressed y on a flat
    # x there (bnlearn's QR), p = 7.9e-115, but mi-cg(y, x | zd) found x's null fit a point
    # mass and read the whole test as singular: p = 1
    rng = np.random.default_rng(9)
    n = 300
    zd = rng.integers(0, 3, n)
    x = np.where(zd == 0, 1.0, rng.normal(size=n))
    df = pd.DataFrame({"x": x, "y": 2 * x + 0.5 * rng.normal(size=n),
                       "zd": pd.Categorical(zd.astype(str))})
    for correction in ("moments", "bartlett", None):
        a = ci_test(df, "x", "y", ["zd"], test="mi-cg", correction=correction)
        b = ci_test(df, "y", "x", ["zd"], test="mi-cg", correction=correction)
        assert a.statistic == pytest.approx(b.statistic, rel=1e-12) and a.df == b.df
        assert a.log_pvalue == pytest.approx(b.log_pvalue, rel=1e-10) and a.pvalue < 1e-100
    # the point-mass stratum adds the flat constant n log(nu1 / nu0) + 1 (nu0 = n_s - 1),
    # the other strata their bnlearn statistic (hand computation, as above)
    n0 = (zd == 0).sum()
    rest = zd != 0
    hand = 2 * (_loglik(x[rest], _design(df[rest], ["y"]), zd[rest])
                - _loglik(x[rest], _design(df[rest], []), zd[rest]))
    assert b.statistic == pytest.approx(hand + n0 * np.log((n0 - 2) / (n0 - 1)) + 1, rel=1e-10)
    # a discrete x, a continuous y constant in a stratum of zd: that stratum adds 0
    rng = np.random.default_rng(4)
    zd = rng.integers(0, 3, n)
    e = pd.DataFrame({"x": pd.Categorical(rng.integers(0, 2, n)), "zd": pd.Categorical(zd),
                      "y": np.where(zd == 0, 5.0, rng.normal(size=n))})
    for x, y in [("x", "y"), ("y", "x")]:
        r = ci_test(e, x, y, ["zd"], test="mi-cg", correction=None)
        sub = ci_test(e[zd != 0], x, y, ["zd"], test="mi-cg", correction=None)
        assert r.statistic == pytest.approx(sub.statistic, rel=1e-12) and 0 < r.pvalue < 1


@pytest.mark.parametrize("kind", ["c", pytest.param("d", marks=pytest.mark.slow)])
def test_mi_cg_level_where_y_is_a_point_mass_in_one_stratum(kind):
    # y = 0 in stratum zd = 0 (a point mass in both models: no evidence there), Gaussian in
    # the others; x independent, continuous or 3 levels; 1,000 tests (40 data sets, 25
    # candidates each: independent given y). Measured: continuous 4.9% [3.7, 6.4], discrete
    # 5.5% [4.2, 7.1] (2.0 s and 18 s at load 6)
    rejected = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = 120
        zd, zc = rng.integers(0, 3, n), rng.normal(size=n)
        cand = {f"x{i}": rng.normal(size=n) if kind == "c" else
                pd.Categorical(rng.integers(0, 3, n)) for i in range(25)}
        df = pd.DataFrame({"y": np.where(zd == 0, 0.0, zc + rng.normal(size=n)),
                           "zd": pd.Categorical(zd), "zc": zc, **cand})
        rejected.extend(ci_test_batch(df, list(cand), "y", ["zd", "zc"],
                                      test="mi-cg").pvalue <= 0.05)
    lo, hi = proportion_confint(sum(rejected), len(rejected), 0.05, method="wilson")
    assert lo <= 0.05 <= hi, np.mean(rejected)


# ------------------------------------------------------------------ reg-lr vs statsmodels
def _sm_design(df, cols):
    parts = [np.ones((len(df), 1))]
    for c in cols:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            parts.append(pd.get_dummies(df[c], drop_first=True).to_numpy(float))
        else:
            parts.append(df[[c]].to_numpy(float))
    return np.column_stack(parts)


@pytest.mark.parametrize("seed", [0, 1])
def test_reg_lr_equals_statsmodels(seed):
    df = mixed_frame(300, seed)
    rng = np.random.default_rng(seed + 10)
    df["y3"] = pd.Categorical(np.argmax(np.column_stack(
        [np.zeros(300), df.c1, -df.c2]) + rng.gumbel(size=(300, 3)), axis=1))
    z = ["c1", "d2"]
    xs = ["c2", "d1", ["c3", "d1"]]
    for y, fit in [("c3", "ols"), ("d3", "logit"), ("y3", "mnlogit")]:
        cands = [x for x in xs if y not in np.atleast_1d(x)]
        res = ci_test_batch(df, cands, y, z, test="reg-lr")
        for i, x in enumerate(cands):
            x = list(np.atleast_1d(x))
            if fit == "ols":
                r0 = sm.OLS(df[y].to_numpy(), _sm_design(df, z)).fit()
                r1 = sm.OLS(df[y].to_numpy(), _sm_design(df, z + x)).fit()
                lr, _, df_diff = r1.compare_lr_test(r0)
                p_ref = r1.compare_f_test(r0)[1]  # the F test: exact under Gaussian errors
            else:
                model = sm.Logit if fit == "logit" else sm.MNLogit
                codes = df[y].cat.codes.to_numpy()
                r0 = model(codes, _sm_design(df, z)).fit(disp=0, tol=1e-12, maxiter=200)
                r1 = model(codes, _sm_design(df, z + x)).fit(disp=0, tol=1e-12, maxiter=200)
                lr = 2 * (r1.llf - r0.llf)
                df_diff = np.sum(r1.df_model) - np.sum(r0.df_model)
                p_ref = stats.chi2.sf(lr, df_diff)
            assert res.statistic[i] == pytest.approx(lr, abs=1e-8), (y, x)
            assert res.df[i] == df_diff
            assert res.pvalue[i] == pytest.approx(p_ref, rel=1e-6, abs=1e-300)


def _f_reference(y, X0, X1):
    r0, r1 = sm.OLS(y, X0).fit(), sm.OLS(y, X1).fit()
    return r1.compare_f_test(r0)[1]


@pytest.mark.parametrize("n, m, levels", [(8, 0, 0), (12, 2, 0), (40, 1, 20), (40, 0, 39),
                                          (150, 3, 0), (200, 2, 30), (1000, 5, 0)])
def test_reg_lr_gaussian_pvalue_is_the_f_test(n, m, levels):
    # LR = n log(rss0 / rss1) is a monotone map of F: its exact p-value under Gaussian
    # errors is statsmodels' compare_f_test, at any n (the chi-square of LR: 38% rejections
    # of noise at 40 rows with a 20-level x); both paths (cross-products, rows)
    rng = np.random.default_rng(n + m + levels)
    Z = rng.normal(size=(n, m))
    cols = {f"z{j}": Z[:, j] for j in range(m)}
    if levels:
        codes = np.arange(n) % levels  # every level observed
        rng.shuffle(codes)
        cols["x"] = pd.Categorical(codes, categories=range(levels))
        X = (codes[:, None] == np.arange(1, levels)[None, :]).astype(float)
    else:
        X = (0.3 * Z.sum(axis=1) + rng.normal(size=n))[:, None]
        cols["x"] = X[:, 0]
    for signal in (0.0, 0.4):
        y = Z.sum(axis=1) + signal * X.sum(axis=1) + rng.normal(size=n)
        df = pd.DataFrame({**cols, "y": y})
        X0 = np.column_stack([np.ones(n), Z])
        ref = _f_reference(y, X0, np.column_stack([X0, X]))
        r = ci_test(df, "x", "y", [f"z{j}" for j in range(m)], test="reg-lr")
        assert r.pvalue == pytest.approx(ref, rel=1e-10, abs=1e-300), (n, m, levels, signal)
        assert r.log_pvalue == pytest.approx(np.log(ref), rel=1e-10)
        lr = sm.OLS(y, np.column_stack([X0, X])).fit().compare_lr_test(sm.OLS(y, X0).fit())[0]
        assert r.statistic == pytest.approx(lr, rel=1e-9) and not r.skipped


def test_reg_lr_gaussian_log_pvalue_where_p_underflows():
    # a strong signal: p below the doubles (0), log p finite from the incomplete beta's
    # continued fraction; equal to log(fdtrc) where that is still a double
    rng = np.random.default_rng(5)
    n = 3000
    x = rng.normal(size=n)
    for slope, underflow in [(0.5, False), (2.0, True)]:
        y = slope * x + rng.normal(size=n)
        r = ci_test(pd.DataFrame({"x": x, "y": y}), "x", "y", test="reg-lr")
        rss0 = np.sum((y - y.mean()) ** 2)
        rss1 = sm.OLS(y, sm.add_constant(x)).fit().ssr
        f = (rss0 - rss1) / (rss1 / (n - 2))
        if underflow:
            assert r.pvalue == 0 and np.isfinite(r.log_pvalue) and r.log_pvalue < -745
            # log I_x(a, b) to leading order: a log x + b log(1 - x) - log(a B(a, b)) + ...
            x_ = rss1 / rss0
            rough = ((n - 2) / 2 * np.log(x_) + 0.5 * np.log1p(-x_)
                     - np.log((n - 2) / 2) - special.betaln((n - 2) / 2, 0.5))
            assert r.log_pvalue == pytest.approx(rough, rel=1e-3)
        else:
            assert r.log_pvalue == pytest.approx(np.log(special.fdtrc(1, n - 2, f)), rel=1e-9)


def test_f_sf_logsf_equals_mpmath_in_the_far_tail():
    # log I_x(df2 / 2, df1 / 2) against mpmath's 50-digit incomplete beta, from p ~ 1e-200
    # (log(p) of scipy's betainc) to p ~ 1e-4000 (the continued fraction) and p near 1
    mpmath = pytest.importorskip("mpmath")
    from mbstat.ci.chi2 import f_sf_logsf
    mpmath.mp.dps = 50
    for df1, df2, left in [(1, 10, 1e-40), (1, 500, 1e-3), (3, 1000, 0.3), (20, 19, 1e-200),
                           (5, 3000, 0.5), (40, 7, 1e-300), (1, 5, 0.999999)]:
        p, log_p = f_sf_logsf(left, 1 - left, df1, df2)
        ref = mpmath.betainc(df2 / 2, df1 / 2, 0, left, regularized=True)
        assert log_p == pytest.approx(float(mpmath.log(ref)), rel=1e-12), (df1, df2, left)
        assert p == pytest.approx(float(ref), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("n, levels, m", [(3, 0, 1), (40, 40, 0), (10, 5, 5)])
def test_reg_lr_gaussian_saturated_is_skipped(n, levels, m):
    # the full model fits every row (n = rank of [1, z, x]): rss1 = 0 and LR = inf on pure
    # noise, p = 0 under the chi-square; no residual df for the F test: skipped, p = 1
    rng = np.random.default_rng(n)
    df = pd.DataFrame(rng.normal(size=(n, m)), columns=[f"z{j}" for j in range(m)])
    df["x"] = (pd.Categorical(np.arange(n) % levels) if levels else rng.normal(size=n))
    df["y"] = rng.normal(size=n)
    r = ci_test(df, "x", "y", list(df.columns[:m]), test="reg-lr")
    assert r.skipped and r.pvalue == 1 and r.log_pvalue == 0 and r.statistic == 0
    assert r.independent
    assert "no residual degrees of freedom" in str(r)


@pytest.mark.slow
def test_reg_lr_gaussian_level_many_levels():
    # 2,000 noise data sets of 40 rows, x of 20 levels (df 19 against df2 20): the Wilson
    # interval of the F p-value's rejection rate at 0.05 holds 0.05 (the chi-square of LR
    # rejected 33% of these; measured: 4.55% [3.72, 5.55], 5 s on 2 busy cores)
    rng = np.random.default_rng(11)
    reps, n, levels = 2000, 40, 20
    codes = np.arange(n) % levels
    rejected = 0
    for _ in range(reps):
        rng.shuffle(codes)
        data = pd.DataFrame({"x": pd.Categorical(codes), "y": rng.normal(size=n)})
        rejected += ci_test(data, "x", "y", test="reg-lr").pvalue <= 0.05
    lo, hi = proportion_confint(rejected, reps, alpha=0.05, method="wilson")
    assert lo <= 0.05 <= hi, rejected / reps


def test_reg_lr_collinear_candidate_adds_nothing_and_is_not_symmetric():
    df = mixed_frame(200)
    df["c1_copy"] = 2 * df.c1 + 1
    r = ci_test(df, "c1_copy", "c3", ["c1"], test="reg-lr")
    assert r.df == 0 and r.statistic == 0 and r.pvalue == 1
    t = CITester(df, "reg-lr")
    a, b = t.test("c1", "d3", ["d1"]), t.test("d3", "c1", ["d1"])  # logistic, then OLS
    assert t.n_cache_hits == 0 and a.statistic != pytest.approx(b.statistic, rel=1e-6)
    with pytest.raises(ValueError, match="model must be one of"):
        ci_test(df, "c1", "c3", test="reg-lr", model="probit")
    with pytest.raises(ValueError, match="needs a discrete y"):
        ci_test(df, "c1", "c3", test="reg-lr", model="logistic")


def test_reg_lr_rank_does_not_depend_on_the_columns_units():
    # the LR is invariant to the scale of x and z: a 1e-12-scaled x or z keeps its column
    # (was dropped: p = 1, or z not conditioned on), a constant 1e8 x adds none (was a
    # rounding-noise column tested with df 1)
    rng = np.random.default_rng(3)
    n = 200
    z = rng.normal(size=n)
    x = 0.6 * z + rng.normal(size=n)
    y = z + 0.2 * x + rng.normal(size=n)
    X0 = sm.add_constant(z[:, None])
    ref = sm.OLS(y, np.column_stack([X0, x])).fit().compare_lr_test(sm.OLS(y, X0).fit())
    for xs, zs in [(1e-12, 1.0), (1.0, 1e-12), (1e8, 1e8)]:
        df = pd.DataFrame({"x": xs * x, "y": y, "z": zs * z})
        r = ci_test(df, "x", "y", ["z"], test="reg-lr")
        assert r.df == 1 and r.statistic == pytest.approx(ref[0], rel=1e-8), (xs, zs)
    df = pd.DataFrame({"x": np.full(n, 1e8), "y": y, "z": z})
    r = ci_test(df, "x", "y", ["z"], test="reg-lr")
    assert r.df == 0 and r.statistic == 0 and r.pvalue == 1


# ------------------------------------------------------------------ spearman, rcot
def _ranks_residual(df, cols, z):
    R = df.rank()
    D = np.column_stack([np.ones(len(df))] + [R[c] for c in z])
    return [R[c] - D @ np.linalg.lstsq(D, R[c], rcond=None)[0] for c in cols]


def test_spearman_is_fisher_z_on_ranks_with_fiellers_variance():
    rng = np.random.default_rng(4)
    n = 300
    z = rng.standard_t(3, n)
    df = pd.DataFrame({"z": z, "x": np.exp(z) + rng.standard_t(3, n),
                       "y": z ** 3 + rng.standard_t(3, n)})
    r0 = ci_test(df, "x", "y", test="spearman")
    rho = stats.spearmanr(df.x, df.y).statistic
    assert r0.statistic == pytest.approx(np.sqrt((n - 3) / 1.06) * np.arctanh(rho), rel=1e-10)
    r1 = ci_test(df, "x", "y", ["z"], test="spearman")
    assert r1.pvalue == pytest.approx(2 * stats.norm.sf(abs(r1.statistic)), rel=1e-9)
    # given z: the latent partial correlation of Harris & Drton (2013) from scipy's
    # Spearman matrix, and its variance against the jackknife's (an independent estimate
    # of the same asymptotic variance; leave-one-out by scipy)
    rho, kappa = _latent_by_hand(df[["x", "y", "z"]].to_numpy())
    loo = [_latent_by_hand(np.delete(df[["x", "y", "z"]].to_numpy(), i, axis=0))[0]
           for i in range(n)]
    jackknife = (n - 1) * np.var(np.arctanh(loo)) * n  # n var(atanh rho)
    assert kappa == pytest.approx(jackknife, rel=0.1)
    assert r1.statistic == pytest.approx(np.arctanh(rho) * np.sqrt((n - 4) / kappa), rel=1e-9)
    old = ci_test(df, "x", "y", ["z"], test=Spearman_ranks())  # the former reading
    ex, ey = _ranks_residual(df, ["x", "y"], ["z"])
    r_old = np.corrcoef(ex, ey)[0, 1]
    assert old.statistic == pytest.approx(np.sqrt((n - 4) / 1.06) * np.arctanh(r_old),
                                          rel=1e-9)


def Spearman_ranks():
    """spearman's former reading given z: Fisher's z on the ranks' partial correlation."""
    from mbstat.ci.continuous.rank import Spearman

    test = Spearman()
    test.latent_given_z = False
    return test


def _latent_by_hand(values):
    """(rho, kappa) of the latent partial correlation of columns 0 and 1 given the others:
    Sigma = 2 sin(pi r_s / 6) from scipy's spearmanr, rho from its inverse, and kappa from
    mbstat's influence functions (checked against the jackknife by the caller)."""
    from mbstat.ci.continuous.rank import latent_partial

    r = stats.spearmanr(values).statistic
    S = 2 * np.sin(np.pi * r / 6)
    W = np.linalg.inv(S)
    rho = -W[0, 1] / np.sqrt(W[0, 0] * W[1, 1])
    mine = latent_partial(stats.rankdata(values, axis=0))
    assert mine[0] == pytest.approx(rho, rel=1e-10)
    return rho, mine[1]


def test_spearman_given_z_holds_its_level_where_the_ranks_partial_correlation_did_not():
    """Gaussian x = z + e, y = z + e at 100,000 rows: the ranks' partial correlation is
    not zero there (the former test's statistic about 2.3 sqrt(n / 20,000), a drift
    that makes every large sample a rejection); the latent partial correlation is."""
    rng = np.random.default_rng(0)
    n = 100000
    z = rng.normal(size=n)
    df = pd.DataFrame({"x": z + rng.normal(size=n), "y": z + rng.normal(size=n), "z": z})
    assert ci_test(df, "x", "y", ["z"], test=Spearman_ranks()).pvalue < 1e-3
    assert ci_test(df, "x", "y", ["z"], test="spearman").pvalue > 0.05


def test_normal_scores_is_fisher_z_on_van_der_waerden_scores():
    rng = np.random.default_rng(6)
    n = 250
    z = rng.normal(size=n)
    df = pd.DataFrame({"z": np.exp(z), "x": (z + rng.normal(size=n)) ** 3,
                       "y": z + 0.3 * rng.normal(size=n)})
    scores = pd.DataFrame(stats.norm.ppf(df.rank() / (n + 1)), columns=df.columns)
    D = np.column_stack([np.ones(n), scores.z])
    ex, ey = (scores[c] - D @ np.linalg.lstsq(D, scores[c], rcond=None)[0] for c in "xy")
    rho = np.corrcoef(ex, ey)[0, 1]
    r = ci_test(df, "x", "y", ["z"], test="normal-scores")
    assert r.statistic == pytest.approx(np.sqrt(n - 4) * np.arctanh(rho), rel=1e-9)


def test_hbe_is_exact_for_equal_weights_and_rcot_is_reproducible():
    x = np.array([0.5, 3.0, 12.0, 40.0])
    p, log_p = hbe_sf_logsf(np.ones((4, 7)), x)
    np.testing.assert_allclose(p, stats.chi2.sf(x, 7), rtol=1e-10)
    np.testing.assert_allclose(log_p, stats.chi2.logsf(x, 7), rtol=1e-10)
    rng = np.random.default_rng(5)
    n = 400
    z = rng.normal(size=n)
    x = z + rng.normal(size=n)
    df = pd.DataFrame({"z": z, "x": x, "y": x ** 2 + rng.normal(size=n),
                       "w": rng.normal(size=n)})
    a = ci_test_batch(df, ["y", "w"], "x", ["z"], test="rcot")
    b = ci_test_batch(df[["w", "y", "x", "z"]], ["w", "y"], "x", ["z"], test="rcot")
    assert a.statistic[0] == pytest.approx(b.statistic[1], rel=1e-10)  # the same features
    assert a.pvalue[1] == pytest.approx(b.pvalue[0], rel=1e-10)
    # a non-monotone dependence: rcot sees it, spearman does not
    assert a.pvalue[0] < 1e-4
    assert ci_test(df, "y", "x", ["z"], test="spearman").pvalue > 1e-4
    perm = ci_test(df, "y", "x", ["z"], test="rcot", calibration="permutation", B=99)
    assert perm.calibration == "permutation" and perm.pvalue == pytest.approx(0.01)


# ------------------------------------------------------------------ test="auto"
def test_auto_chooses_from_the_kinds_and_says_why():
    assert choose_test(["discrete", "discrete"])[0] == "g2"
    assert choose_test(["continuous"])[0] == "fisher_z"
    assert choose_test(["continuous", "discrete"])[0] == "mi-cg"
    df = make_mixed_network(2000, seed=1)
    t = CITester(df)
    assert t.test_name == "mi-cg" and "mixes discrete and continuous" in t.test_reason
    assert CITester(df[["A", "B", "C"]]).test_name == "g2"
    assert CITester(df[["E", "F"]]).test_name == "fisher_z"
    assert CITester(df, "g2", discretize=3).test_reason is None
    assert CITester(df, discretize=3).test_name == "g2"
    res = mbstat.iamb(df, "G")
    assert res.test == "mi-cg" and any("chose 'mi-cg'" in note for note in res.notes)
    # auto's g2 (the old default): no note of the choice
    assert not any("chose '" in note for note in mbstat.iamb(df[["A", "B", "C"]], "A").notes)
    assert {"C", "F", "I", "J"} <= set(res.selected)  # G's parents and children
    assert "auto" in mbstat.tests_table().index
    assert {"data", "arguments", "assumptions"} <= set(mbstat.tests_table().columns)


# ------------------------------------------------------------------ levels
def _null_blocks(kind, k, n, seed):
    """k independent null data sets (x_i independent of y_i given z_i), as one frame."""
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(k):
        zc = rng.normal(size=n)
        zd = rng.integers(0, 2, n)
        if kind == "mi-cg":  # y continuous, x discrete; z mixed
            cols[f"x{i}"] = pd.Categorical((rng.random(n) < 0.3 + 0.4 * zd).astype(int))
            cols[f"y{i}"] = zc * (1 + zd) + rng.normal(size=n)
        elif kind == "reg-lr":  # y binary, x continuous; z mixed
            cols[f"x{i}"] = zc + rng.normal(size=n)
            cols[f"y{i}"] = pd.Categorical((rng.random(n) < 1 / (1 + np.exp(-zc - zd)))
                                           .astype(int))
        elif kind == "normal-scores":  # a Gaussian copula, monotone transformations
            cols[f"x{i}"] = np.exp(zc + rng.normal(size=n))
            cols[f"y{i}"] = (zc + rng.normal(size=n)) ** 3
        else:  # heavy tails, y independent of (x, z)
            cols[f"x{i}"] = zc + rng.standard_t(3, n)
            cols[f"y{i}"] = rng.standard_t(3, n)
        cols[f"zc{i}"] = zc
        cols[f"zd{i}"] = pd.Categorical(zd)
    return pd.DataFrame(cols)


@pytest.mark.parametrize("test", ["mi-cg", "reg-lr", "spearman", "normal-scores", "rcot"])
def test_level_at_n200(test):
    """200 null data sets at n = 200: the Wilson 95% interval of the rejection rate at 0.05
    must cover 0.05 (the full table, 500 nulls at n = 200 and 2,000 with power, is in
    vignettes/mixed_tests.py)."""
    k = 200
    df = _null_blocks(test, k, 200, seed=19)
    z = (lambda i: [f"zc{i}"]) if test in ("spearman", "normal-scores", "rcot") else \
        (lambda i: [f"zc{i}", f"zd{i}"])
    # mi-cg: a tester per data set (over the whole frame, mi-cg's stratum moments take the
    # cross-products of all 400 continuous columns for each data set's strata: 4x the
    # time, same p-values); the others share one
    tester = None if test == "mi-cg" else CITester(df, test)
    with threadpool_limits(1):  # many small factorizations: one BLAS thread is faster
        p = np.array([(tester or CITester(df[[f"x{i}", f"y{i}", *z(i)]], test))
                      .test(f"x{i}", f"y{i}", z(i)).pvalue for i in range(k)])
    rejected = int((p <= 0.05).sum())
    low, high = proportion_confint(rejected, k, 0.05, method="wilson")
    assert low <= 0.05 <= high, (test, rejected)


# ------------------------------------------------------------------ permutation calibration
def _rss(y, X):
    r = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return r @ r


def _hand_permutation_p(statistic, df, x, zd, B, seed):
    """(1 + #{T(perm) >= T(observed)}) / (B + 1), x's rows permuted within the strata of zd
    by numpy; T a statistic of x (any increasing function of the test's)."""
    rng = np.random.default_rng(seed)
    values = df[x].cat.codes.to_numpy() if isinstance(df[x].dtype, pd.CategoricalDtype) \
        else df[x].to_numpy()
    observed = statistic(values)
    perm = values.copy()
    exceed = 0
    for _ in range(B):  # one permutation within each stratum
        for level in np.unique(zd):
            rows = np.flatnonzero(zd == level)
            perm[rows] = values[rng.permutation(rows)]
        exceed += statistic(perm) >= observed - 1e-9 * abs(observed)
    return (1 + exceed) / (B + 1)


def _hand_statistics(df, zd):
    """Statistics by hand for the permutation test below (functions of x's values)."""
    y = df.y.to_numpy()
    one = np.ones(len(df))
    dz = np.column_stack([one, zd == 1, zd == 2]).astype(float)
    ranks_y = stats.rankdata(y)
    return {("mi-cg", "x"): lambda v: _loglik(y, one[:, None], v * 3 + zd),
            ("mi-cg", "w"): lambda v: _loglik(y, np.column_stack([one, v]), zd),
            ("reg-lr", "x"): lambda v: -_rss(y, np.column_stack([dz, v])),
            ("reg-lr", "w"): lambda v: -_rss(y, np.column_stack([dz, v])),
            ("spearman", "w"): lambda v: abs(np.corrcoef(stats.rankdata(v), ranks_y)[0, 1])}


def test_permutation_calibration_agrees_refuses_continuous_z_and_is_reproducible():
    rng = np.random.default_rng(8)
    n = 300
    zd = rng.integers(0, 3, n)
    x = rng.random(n) < 0.3 + 0.2 * zd
    df = pd.DataFrame({"x": pd.Categorical(x.astype(int)), "zd": pd.Categorical(zd),
                       "y": zd + rng.normal(size=n) + 0.25 * x, "w": rng.normal(size=n),
                       "zc": rng.normal(size=n)})
    hand = _hand_statistics(df, zd)
    for test, xs, z in [("mi-cg", ["x", "w"], ["zd"]), ("reg-lr", ["x", "w"], ["zd"]),
                        ("spearman", ["w"], [])]:
        a = ci_test_batch(df, xs, "y", z, test=test)
        b = ci_test_batch(df, xs, "y", z, test=test, calibration="permutation", B=199)
        assert (b.calibration == "permutation").all()
        assert np.all(b.pvalue >= 1 / 200)
        for i, x in enumerate(xs):  # against 1,000 permutations by hand (independent code)
            ref = _hand_permutation_p(hand[test, x], df, x, zd, 1000, seed=i)
            # two Monte Carlo estimates of one p-value (B = 199 and 1,000): 4 standard errors
            se = np.sqrt(max(ref, 1 / 200) * (1 - ref) * (1 / 200 + 1 / 1001))
            assert abs(b.pvalue[i] - ref) <= 4 * se, (test, x, b.pvalue[i], ref)
        c = ci_test_batch(df[df.columns[::-1]], xs[::-1], "y", z, test=test,
                          calibration="permutation", B=199)
        np.testing.assert_array_equal(c.pvalue[::-1], b.pvalue)  # any order, any batch
        d = ci_test(df, xs[-1], "y", z, test=test, calibration="permutation", B=199)
        assert d.pvalue == b.pvalue[-1]
    with pytest.raises(ValueError, match="continuous columns \\['zc'\\]"):
        ci_test(df, "x", "y", ["zc"], test="mi-cg", calibration="permutation")


def test_auto_warns_when_a_many_level_integer_column_makes_mi_cg_singular():
    # an integer column is discrete: 150+ levels in 300 rows made every mi-cg test of it
    # singular, read as independence (p = 1) without a word
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.integers(0, 200, 300), "y": rng.normal(size=300),
                       "z": rng.normal(size=300)})
    df["y"] += df.x / 50
    with pytest.warns(UserWarning, match=r"'x' \(\d+ levels.*read as independence"):
        r = ci_test(df, "x", "y", ["z"])
    assert r.test == "mi-cg" and r.pvalue == 1
    r = ci_test(df.astype({"x": float}), "x", "y", ["z"])  # as the warning advises
    assert r.test == "fisher_z" and r.pvalue < 1e-6
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci_test(mixed_frame(), "c1", "c2", ["d1"])  # common levels: no warning


def test_permutation_batches_keep_the_ranks_of_the_callers_data(monkeypatch):
    # the permuted statistics replaced spearman's cached ranks by those of the last
    # permuted data set, so every later batch re-ranked all the columns of the data
    import mbstat.ci.continuous.rank as rank

    widths = []
    original = rank.ranked_dataset
    monkeypatch.setattr(rank, "ranked_dataset",
                        lambda ds, ns=False: widths.append(ds.n_cols) or original(ds, ns))
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(100, 8)), columns=[f"c{i}" for i in range(8)])
    df["d"] = pd.Categorical(rng.integers(0, 2, 100))
    t = CITester(df, "spearman", calibration="permutation", B=5)
    t.test_many(["c1", "c2"], "c0", ["d"])
    t.test_many(["c4", "c5"], "c3", ["d"])
    assert widths.count(df.shape[1]) == 1  # the full data ranked once


def test_rcot_features_of_z_grow_with_n():
    """#31 item 6: x = z^2 + e, y = cos(2 z) + e (independent given z) at 5,000 rows: with
    RCIT's median bandwidth z's features spanned about 10 directions at any n and num_f (100
    or 1,000 features), whose misfit of E[f(x) | z] the statistic read as dependence (p =
    4.5e-6 with 100); the bandwidth shrunk at Scott's rate n^(-1/5) spans enough of them,
    even with RCIT's 100 features."""
    from mbstat.ci.continuous.kernel import MAX_FEATURES, auto_features

    assert [auto_features(n) for n in (50, 200, 600, 2000, 5000)] == [100, 100, 300, 1000,
                                                                      1000]
    assert auto_features(10 ** 7) == MAX_FEATURES
    rng = np.random.default_rng(1)
    n = 5000
    z = rng.normal(size=n)
    df = pd.DataFrame({"x": z ** 2 + 0.5 * rng.normal(size=n),
                       "y": np.cos(2 * z) + 0.5 * rng.normal(size=n), "z": z})
    with threadpool_limits(1):
        assert ci_test(df, "x", "y", ["z"], test="rcot", num_f=100).pvalue > 0.05
    with pytest.raises(ValueError, match="num_f"):
        ci_test(df, "x", "y", ["z"], test="rcot", num_f=0)


def test_rcot_level_on_nonlinear_nulls_at_2000_rows():
    """The level audit's non-linear nulls (x = z^2 + e, y = cos(2 z) + e, e ~ N(0, 0.25))
    at 2,000 rows, RCIT's 100 features of z: with RCIT's median bandwidth z's features
    spanned about 10 directions at any n and 26 of these 100 nulls ([18.4, 35.4]) were
    rejected at 0.05 (9.4% of 1,000 with num_f="auto"; now 7 of 100); the Wilson 95%
    interval of 100 must now cover 0.05 (a test with level 0.05 fails it with probability
    about 0.05; the seed is fixed)."""
    k, n = 100, 2000
    p = np.empty(k)
    with threadpool_limits(1):
        for i in range(k):
            rng = np.random.default_rng([2026, i])
            z = rng.normal(size=n)
            df = pd.DataFrame({"x": z ** 2 + 0.5 * rng.normal(size=n),
                               "y": np.cos(2 * z) + 0.5 * rng.normal(size=n), "z": z})
            p[i] = ci_test(df, "x", "y", ["z"], test="rcot", num_f=100).pvalue
    rejected = int((p <= 0.05).sum())
    low, high = proportion_confint(rejected, k, 0.05, method="wilson")
    assert low <= 0.05 <= high, rejected


def test_mi_cg_pair_logit_bootstrap_is_order_free_and_seeded():
    """#31 item 3: the discrete pair given continuous z, few rows per coefficient: the
    bootstrap-scaled p-value is the same with x and y swapped, z's columns swapped, the
    levels' order reversed and the columns reordered, and above the plain chi-square's
    (the bootstrap null mean exceeds the df here); another seed moves it."""
    from mbstat.ci.continuous.mixed import few_events

    rng = np.random.default_rng(11)
    n = 150
    a, b = rng.normal(size=n), rng.normal(size=n)
    x = (rng.random(n) < 1 / (1 + np.exp(-a))).astype(int) + (rng.random(n) < 0.3)
    y = (rng.random(n) < 1 / (1 + np.exp(-b))).astype(int) + (rng.random(n) < 0.3)
    df = pd.DataFrame({"x": pd.Categorical(x), "y": pd.Categorical(y), "a": a, "b": b})
    assert few_events(x, 3, y, np.zeros(n, dtype=int), 6)
    r = ci_test(df, "x", "y", ["a", "b"], test="mi-cg")
    plain = ci_test(df, "x", "y", ["a", "b"], test="mi-cg", correction=None)
    assert r.statistic == plain.statistic and r.pvalue > plain.pvalue
    flipped = df.assign(x=df.x.cat.reorder_categories([2, 1, 0]),
                        y=df.y.cat.rename_categories(["u", "v", "w"]))[["b", "y", "a", "x"]]
    for other in (ci_test(df, "y", "x", ["b", "a"], test="mi-cg"),
                  ci_test(flipped, "x", "y", ["a", "b"], test="mi-cg"),
                  ci_test(flipped, "y", "x", ["b", "a"], test="mi-cg")):
        # the same draws: equal to the logit fits' convergence, which a near-separated
        # cell (3 rows) slows (1e-4 of the statistic, 0.5% of p); other draws move p
        # by about 20%
        assert other.statistic == pytest.approx(r.statistic, rel=1e-3)
        assert other.pvalue == pytest.approx(r.pvalue, rel=1e-2)
    other_seed = ci_test(df, "x", "y", ["a", "b"], test="mi-cg", seed=1)
    # other draws: beyond the 1% that the fits' convergence allows above (0.063 against
    # 0.059 with the two moments and 50 draws)
    assert abs(other_seed.pvalue / r.pvalue - 1) > 0.02
