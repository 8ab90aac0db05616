"""The holdout conditional randomization test (test="crt", issue 16): the part p-value and the
shuffles against hand computations, the held-out losses against scikit-learn, the level under
simulated nulls (Wilson interval), power, the samplers, the registry and the front ends."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from statsmodels.stats.proportion import proportion_confint

import mbstat
from mbstat.ci import crt_test, ppi_test
from mbstat.ci.models.crt import CRTEngine, _shuffles, cauchy_combination, rank_pvalue
from mbstat.data import as_dataset

#: A cheap classifier (liblinear: a few ms per fit on these data).
LOGIT = LogisticRegression(solver="liblinear")


def issue_data(seed, n=400, task="classification", effect=0.0, x_kind="z"):
    """Issue 16's designs: z ~ N(0, 1), x = 0.7 z + sqrt(0.51) e (or a category drawn from z);
    y from 2 z (+ effect * x)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    x = 0.7 * z + np.sqrt(0.51) * rng.normal(size=n)
    eta = 2 * z + effect * x
    y = eta + rng.normal(size=n) if task == "regression" else \
        (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    out = pd.DataFrame({"x": x, "z": z, "y": y})
    if x_kind == "category":
        out["x"] = pd.Categorical(np.where(x > 0.5, "hi", np.where(x < -0.5, "lo", "mid")))
    return out


# ------------------------------------------------------------- the pieces
def test_rank_pvalue_by_hand():
    null = np.array([1.0, 2.0, 3.0, 3.0, 5.0])
    assert rank_pvalue(0.5, null, 1.0) == pytest.approx(0 / 6)  # u = 1: (0 + 0 * 1) / 6
    assert rank_pvalue(0.5, null, 0.0) == pytest.approx(1 / 6)
    assert rank_pvalue(4.0, null, 0.0) == pytest.approx((4 + 1) / 6)
    # ties with T0 = 3: below 2, ties 2: (2 + (1 - u) * 3) / 6
    assert rank_pvalue(3.0, null, 0.5) == pytest.approx((2 + 1.5) / 6)
    assert rank_pvalue(9.0, null, 0.0) == pytest.approx(1.0)
    # every draw ties (a model that ignores x): uniform, not 1
    assert rank_pvalue(2.0, np.full(99, 2.0), 0.25) == pytest.approx(0.75)


def test_rank_pvalue_is_uniform_under_exchangeability():
    rng = np.random.default_rng(0)
    p = np.array([rank_pvalue(v[0], v[1:], rng.random())
                  for v in rng.integers(0, 4, size=(4000, 20)).astype(float)])  # many ties
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    assert np.mean(p <= 0.05) == pytest.approx(0.05, abs=0.015)


def test_cauchy_combination_matches_scipy():
    p = np.array([0.01, 0.2, 0.5, 0.9])
    t, pv, logp = cauchy_combination(p)
    assert t == pytest.approx(np.mean(np.tan((0.5 - p) * np.pi)))
    assert pv == pytest.approx(stats.cauchy.sf(t)) and logp == pytest.approx(np.log(pv))


def test_shuffles_stay_within_strata_and_are_uniform():
    stratum = np.array([0, 1, 0, 2, 1, 0, 0, 2, 1, 0])
    which = _shuffles(stratum, 3000, 7)
    assert which.shape == (3000, 10)
    assert (stratum[which] == stratum[None, :]).all()  # a row takes a value of its stratum
    assert all(sorted(w) == list(range(10)) for w in which[:50])  # each draw a permutation
    # row 0 (stratum 0, five rows) takes each row of its stratum 1/5 of the time
    counts = np.bincount(which[:, 0], minlength=10)[stratum == 0]
    assert stats.chisquare(counts).pvalue > 1e-3
    np.testing.assert_array_equal(_shuffles(stratum, 50, 3), _shuffles(stratum, 50, 3))


def test_held_out_losses_match_sklearn():
    """The observed loss and the draws' losses (tabulated path and row-by-row path) against
    scikit-learn's log_loss of the same fitted model."""
    df = issue_data(1, n=300, x_kind="category")
    ds = as_dataset(df)
    eng = CRTEngine(ds, 2, model=LOGIT, folds=2, repeats=1, B=7, seed=3)
    cols = np.concatenate([eng.groups[0], eng.groups[1]])
    X = np.ascontiguousarray(eng.X[:, cols])
    xpos = np.flatnonzero(np.isin(cols, eng.groups[0]))
    test = np.flatnonzero(eng.parts[0] == 0)
    train = np.flatnonzero(eng.parts[0] != 0)
    fitted = eng.learner.fit(X[train], eng.labels[train], 1, None)
    values = X[test][:, xpos]
    which = _shuffles(np.zeros(len(test), dtype=np.intp), 7, 11)
    observed, null = eng._losses(fitted, X[test], xpos, eng.y[test], (values, which), 5)
    model = fitted
    yt = eng.y[test]
    assert observed == pytest.approx(log_loss(yt, model.predict_proba(X[test]), labels=[0, 1],
                                              normalize=False), rel=1e-9)
    for b in range(7):
        Xb = X[test].copy()
        Xb[:, xpos] = values[which[b]]
        assert null[b] == pytest.approx(log_loss(yt, model.predict_proba(Xb), labels=[0, 1],
                                                 normalize=False), rel=1e-9)
    # the shuffles within one stratum, summed by the compiled kernel: the same stream
    _, fused = eng._losses(fitted, X[test], xpos, yt,
                           (values, np.zeros(len(test), dtype=np.intp)), 11)
    np.testing.assert_allclose(np.sort(fused), np.sort(null), rtol=1e-9)


# --------------------------------------------------------- level and power
def _rejections(scenario_seeds, **kw):
    p = np.array([crt_test(df, "x", "y", z=["z"], seed=s, **kw).pvalue
                  for s, df in scenario_seeds])
    return int(np.sum(p <= 0.05)), len(p)


def test_level_under_nulls_wilson():
    """x independent of y given z (continuous x: linear sampler; categorical x: logistic
    sampler): the rejection rate's Wilson interval must reach down to 0.05 or below."""
    for x_kind in ("z", "category"):
        k, n = _rejections([(s, issue_data(100 + s, n=300, x_kind=x_kind)) for s in range(60)],
                           model=LOGIT, repeats=1, B=99)
        lo, hi = proportion_confint(k, n, method="wilson")
        assert lo <= 0.05, (x_kind, k, n)


def test_power_on_the_issue_alternative():
    k, n = _rejections([(s, issue_data(500 + s, n=300, effect=1.0)) for s in range(12)],
                       model=LOGIT, repeats=2, B=199)
    assert k >= 10, k


def test_discrete_z_shuffles_within_strata_and_result():
    """A continuous x given a discrete z: held-out parts, x shuffled within the strata."""
    rng = np.random.default_rng(4)
    n = 600
    z = rng.integers(0, 3, n)
    x = rng.normal(size=n) + z  # x depends on z only
    y = (rng.random(n) < 0.1 + 0.35 * z).astype(int)
    df = pd.DataFrame({"x": x, "z": pd.Categorical(z), "y": y})
    r = crt_test(df, "x", "y", z=["z"], model=LOGIT, B=199, seed=1)
    assert r.part_pvalues.shape == (6,) and not r.part_pvalues.flags.writeable
    assert r.pvalue == pytest.approx(min(1.0, 6 * r.part_pvalues.min()))
    assert r.statistic == pytest.approx(r.part_pvalues.min())
    assert r.pvalue > 0.01  # the null holds
    dep = crt_test(df.assign(y=(rng.random(n) < 1 / (1 + np.exp(-3 * (x - z)))).astype(int)),
                   "x", "y", z=["z"], model=LOGIT, B=199, seed=1)
    assert dep.pvalue < 0.05


def discrete_null(seed, n=400, effect=0.0, classes=3):
    """x (3 levels) and y (``classes`` levels, or a number when 0) both depend on two
    discrete z columns (3 x 2 strata); y also on x with ``effect``."""
    rng = np.random.default_rng(seed)
    z1, z2 = rng.integers(0, 3, n), rng.integers(0, 2, n)
    x = (rng.random(n) < 0.2 + 0.25 * z1).astype(int) + (rng.random(n) < 0.3 + 0.4 * z2)
    eta = z1 - 1.0 + z2 + effect * (x == 2)
    if classes:
        y = np.minimum(classes - 1, (rng.random((n, 2)) < 1 / (1 + np.exp(-eta[:, None])))
                       .sum(axis=1))
    else:
        y = eta + rng.normal(size=n)
    return pd.DataFrame({"x": pd.Categorical(x), "z1": pd.Categorical(z1),
                         "z2": pd.Categorical(z2), "y": y})


def test_discrete_x_given_stratified_z_is_the_conditional_permutation_g2():
    """A discrete x given a discrete z with populated strata: one pass, no held-out parts
    (one p-value), the histogram model of y given (x, z) refitted for each permutation of y
    within the strata of z. Its statistic ranks as the conditional G^2 / 2 (scipy's
    log-likelihood chi2_contingency summed over the strata, by hand: the part due to z
    alone does not move) or, for a number y, the within-strata between-cells sum of
    squares; no model is fitted; same seed, same p-value; power."""
    from mbstat.ci.models.crt import histogram_reductions

    df = discrete_null(1)
    x, z1, z2, y = (df[c].cat.codes.to_numpy() if c != "y" else df[c].to_numpy()
                    for c in ("x", "z1", "z2", "y"))
    strata = z1 * 2 + z2
    joint = np.column_stack([x * 6 + strata, strata])
    red = histogram_reductions(joint, 3)(y)
    g2 = sum(stats.chi2_contingency(pd.crosstab(x[strata == s], y[strata == s]).to_numpy(),
                                    lambda_="log-likelihood", correction=False)[0]
             for s in range(6))
    assert red[0] - red[1] == pytest.approx(g2 / 2, rel=1e-10)
    v = df.assign(y=discrete_null(1, classes=0)["y"])["y"].to_numpy()
    red = histogram_reductions(joint, 0)(v)
    within = sum(float((g.groupby(x[strata == s]).agg(["mean", "size"]).pipe(
        lambda t: t["size"] * (t["mean"] - g.mean()) ** 2)).sum())
        for s in range(6) for g in [pd.Series(v[strata == s])])
    assert red[0] - red[1] == pytest.approx(within, rel=1e-10)
    ds = as_dataset(df)
    eng = CRTEngine(ds, 3, model=LOGIT, seed=3)
    out = eng.test_many([(0,)], (1, 2))
    assert out[0][4].shape == (1,) and eng.n_fits == 0
    again = CRTEngine(ds, 3, model=LOGIT, seed=3).test_many([(0,)], (1, 2))
    assert out[0][1] == again[0][1]
    r = crt_test(df, "x", "y", ["z1", "z2"], model=LOGIT, seed=3)
    assert r.part_pvalues.shape == (1,) and r.pvalue > 0.01
    dep = crt_test(discrete_null(1, effect=3.0), "x", "y", ["z1", "z2"], seed=3)
    assert dep.pvalue == pytest.approx(1 / 40)  # the early stop: 39 draws, none as extreme


def test_discrete_x_given_stratified_z_level_wilson():
    """The conditional permutation path's level: 400 nulls each of a 3-class and a number y
    (x and y both depend on z), Wilson 95% interval of the rejection rate at 0.05 reaching
    down to 0.05, and not trivially conservative."""
    for classes in (3, 0):
        p = np.array([crt_test(discrete_null(5000 + s, n=300, classes=classes), "x", "y",
                               ["z1", "z2"], model=LOGIT, seed=s).pvalue for s in range(400)])
        k = int(np.sum(p <= 0.05))
        lo, hi = proportion_confint(k, len(p), method="wilson")
        assert lo <= 0.05 and k >= 5, (classes, k)


# ------------------------------------------------------------ front ends
def test_front_ends_registry_seed_and_printout():
    df = issue_data(2, n=200, effect=1.0)
    r = crt_test(df, "x", "y", z=["z"], model=LOGIT, B=99, seed=5)
    assert r == crt_test(df, "x", "y", z=["z"], model=LOGIT, B=99, seed=5)  # same seed
    assert r.test == "crt" and r.B == 99 and r.repeats == 3 and r.folds == 2
    text = str(r)
    assert "Holdout conditional randomization test" in text and "seed 5" in text
    assert "Bonferroni" in text
    drawn = crt_test(df, "x", "y", z=["z"], model=LOGIT, B=19, repeats=1)
    assert isinstance(drawn.seed, int)
    assert crt_test(df, "x", "y", z=["z"], model=LOGIT, B=19, repeats=1,
                    seed=drawn.seed) == drawn
    via_ppi = ppi_test(df, "x", "y", z=["z"], model=LOGIT, test="crt", seed=5)
    assert via_ppi.test == "crt" and via_ppi.folds == 2
    c = mbstat.ci_test(df, "x", "y", z=["z"], test="crt", model=LOGIT, B=99, seed=5)
    assert c.pvalue == pytest.approx(r.pvalue)
    assert "crt" in mbstat.tests_table().index
    assert df.equals(issue_data(2, n=200, effect=1.0))  # the caller's data untouched


def test_bad_arguments_are_named():
    df = issue_data(3, n=100)
    with pytest.raises(ValueError, match="repeats"):
        crt_test(df, "x", "y", z=["z"], repeats=0)
    with pytest.raises(ValueError, match="B"):
        crt_test(df, "x", "y", z=["z"], B=0)
    mixed = df.assign(c=pd.Categorical(np.where(df.x > 0, "a", "b")))
    with pytest.raises(ValueError, match="mixed x"):
        crt_test(mixed, ["x", "c"], "y", z=["z"], model=LOGIT)


def test_ppfs_takes_the_crt():
    rng = np.random.default_rng(0)
    n = 400
    a, b, noise = rng.normal(size=(3, n))
    y = (a + b + 0.5 * rng.normal(size=n) > 0).astype(int)
    df = pd.DataFrame({"a": a, "b": b, "noise": noise, "y": y})
    r = mbstat.ppfs(df, "y", test="crt", model=LOGIT, K=0, B=99, seed=1)
    assert set(r.selected) == {"a", "b"}
    assert r.params["test"] == "crt" and r.folds == 2
    with pytest.raises(TypeError, match="test_size"):
        mbstat.ppfs(df, "y", test="crt", test_size=0.3)


# ------------------------------------------------------- audit regressions
def test_named_categorical_float_x_is_drawn_among_its_levels():
    """A float column named in ``categorical`` is a category for the model (one-hot for the
    tree, codes for XGBoost): its draws given a continuous z must be its encoded levels, not
    continuous values written into the encoded columns (which broke the level: 27% of nulls
    rejected at 0.05)."""
    rng = np.random.default_rng(0)
    n = 300
    z = rng.normal(size=n)
    x = np.round(np.clip(z + rng.normal(size=n), -1, 1)) + 0.5  # -0.5, 0.5, 1.5
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * z))).astype(int)
    ds = as_dataset(pd.DataFrame({"x": x, "z": z, "y": y}))
    for model in ("tree", "xgboost"):
        eng = CRTEngine(ds, 2, model=model, repeats=1, B=5, seed=1, categorical=(0,))
        cols = np.concatenate([eng.groups[0], eng.groups[1]])
        xpos = np.flatnonzero(np.isin(cols, eng.groups[0]))
        xblock = eng.X[:, cols][:, xpos]
        test = np.flatnonzero(eng.parts[0] == 0)
        values, which = eng._sampler((0,), (1,), xblock)((test), 20, np.random.default_rng(0))
        drawn = values[which].reshape(-1, xblock.shape[1])
        levels = {tuple(r) for r in np.unique(xblock, axis=0)}
        assert len(levels) == 3 and {tuple(r) for r in drawn} <= levels, model


def test_level_named_categorical_x_wilson():
    def data(s, n=200):
        rng = np.random.default_rng(s)
        z = rng.normal(size=n)
        x = np.round(np.clip(0.7 * z + 0.7 * rng.normal(size=n), -1, 1)) + 0.5
        y = (rng.random(n) < 1 / (1 + np.exp(-2 * z))).astype(int)
        return pd.DataFrame({"x": x, "z": z, "y": y})

    p = np.array([crt_test(data(s), "x", "y", z=["z"], model="tree", categorical=["x"],
                           B=49, repeats=1, seed=s).pvalue for s in range(80)])
    lo, hi = proportion_confint(int(np.sum(p <= 0.05)), len(p), method="wilson")
    assert lo <= 0.05, np.sum(p <= 0.05)


def test_calibration_is_monte_carlo_not_asymptotic():
    df = issue_data(6, n=120)
    r = crt_test(df, "x", "y", z=["z"], model=LOGIT, B=19, repeats=1, seed=1)
    assert r.calibration == "permutation"
    c = mbstat.ci_test(df, "x", "y", z=["z"], test="crt", model=LOGIT, B=19, repeats=1,
                       seed=1)
    assert c.calibration == "permutation" and c.pvalue == pytest.approx(r.pvalue)


class _ThreadLogit(LogisticRegression):
    """A logistic regression that records the thread of each fit (and takes its time)."""

    threads: set = set()

    def fit(self, X, y, sample_weight=None):
        import threading
        import time

        type(self).threads.add(threading.get_ident())
        time.sleep(0.05)
        return super().fit(X, y, sample_weight)


def test_n_jobs_runs_the_parts_at_once_and_changes_nothing():
    """n_jobs fits and tests the parts at once (XGBoost gets cpu_count // n_jobs threads per
    fit, so fits one at a time were slower with n_jobs > 1); the p-values are the same for
    any n_jobs and worker kind, and for an engine sent to a process (pickled)."""
    import pickle

    df = issue_data(7, n=200, effect=0.5)
    _ThreadLogit.threads = set()
    r = crt_test(df, "x", "y", z=["z"], model=_ThreadLogit(solver="liblinear"), B=19, seed=2,
                 n_jobs=2, parallel="threads")
    assert len(_ThreadLogit.threads) >= 2  # fits at once (each wave's pool has its threads)
    for kw in ({"n_jobs": 1}, {"n_jobs": 2, "parallel": "processes"}):
        assert crt_test(df, "x", "y", z=["z"], model=LOGIT, B=19, seed=2, **kw) == \
            crt_test(df, "x", "y", z=["z"], model=LOGIT, B=19, seed=2, n_jobs=2,
                     parallel="threads")
    eng = CRTEngine(as_dataset(df), 2, model=LOGIT, B=19, seed=4, repeats=1)
    ticks = []
    eng.progress = ticks.append
    first = eng.test_many([(0,)], (1,))
    again = pickle.loads(pickle.dumps(eng)).test_many([(0,)], (1,))
    assert ticks == [1] and first[0][1] == again[0][1]
    np.testing.assert_array_equal(first[0][4], again[0][4])
    assert r.model.startswith("_ThreadLogit")


def test_logistic_draws_follow_sklearn_probabilities_in_b_by_m_memory():
    """x discrete given a continuous z: the draws of a held-out row follow the probabilities
    of scikit-learn's multinomial logistic regression of x on z (chi-square), and drawing
    takes memory of the order of B x m (not B x m x levels: 30 levels here)."""
    import tracemalloc

    rng = np.random.default_rng(8)
    n, G = 600, 30
    z = rng.normal(size=n)
    x = np.clip(np.round(4 * z + 3 * rng.normal(size=n)) + 15, 0, G - 1).astype(int)
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    df = pd.DataFrame({"x": pd.Categorical(x, categories=range(G)), "z": z, "y": y})
    eng = CRTEngine(as_dataset(df), 2, model="tree", repeats=1, B=5, seed=1)
    cols = np.concatenate([eng.groups[0], eng.groups[1]])
    xblock = eng.X[:, cols][:, np.flatnonzero(np.isin(cols, eng.groups[0]))]
    draw = eng._sampler((0,), (1,), xblock)
    test = np.flatnonzero(eng.parts[0] == 0)
    B = 400
    tracemalloc.start()
    values, which = draw(test, B, np.random.default_rng(0))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 24 * B * len(test), peak / (B * len(test))  # 45 bytes before, 17 now
    ref = LogisticRegression(C=100.0, max_iter=1000).fit((z[:, None] - z.mean()) / z.std(), x)
    row = test[0]
    prob = ref.predict_proba(((z[row] - z.mean()) / z.std()).reshape(1, 1))[0]
    _, more = draw(np.array([row]), 20000, np.random.default_rng(1))
    label = {tuple(xblock[i]): x[i] for i in range(n)}  # the model's row of each level of x
    drawn = np.array([label[tuple(values[w])] for w in more[:, 0]])
    counts = np.bincount(drawn, minlength=G)[ref.classes_]
    expected = prob * counts.sum()
    keep = expected >= 5
    stat = ((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    assert stats.chi2.sf(stat, keep.sum() - 1) > 1e-3


def test_binary_float_x_is_drawn_among_its_values():
    """A 0/1 x stored as floats (a continuous column) given a continuous z is drawn among
    its two values, as an integer x is: the linear model's draws left the support and
    rejected 38% of 60 nulls at 0.05 with XGBoost. Same p-values as the integer column."""
    def data(s, n=300, kind=float):
        rng = np.random.default_rng(s)
        z = rng.normal(size=n)
        x = (rng.random(n) < 1 / (1 + np.exp(-3 * z))).astype(kind)
        y = (rng.random(n) < 1 / (1 + np.exp(-2 * z))).astype(int)
        return pd.DataFrame({"x": x, "z": z, "y": y})

    kw = dict(model="xgboost", model_params={"n_estimators": 30}, B=49, repeats=1)
    p = np.array([crt_test(data(s), "x", "y", z=["z"], seed=s, **kw).pvalue for s in range(60)])
    lo, _ = proportion_confint(int(np.sum(p <= 0.05)), len(p), method="wilson")
    assert lo <= 0.05, np.sum(p <= 0.05)
    assert crt_test(data(1, kind=int), "x", "y", z=["z"], seed=1, **kw).pvalue == \
        pytest.approx(p[1])
    mixed = data(2).assign(w=np.random.default_rng(2).normal(size=300))
    with pytest.raises(ValueError, match="mixed x"):
        crt_test(mixed, ["x", "w"], "y", z=["z"], model=LOGIT)


def test_ppi_test_passes_B_to_the_crt_and_refuses_it_for_loco():
    df = issue_data(5, n=120)
    r = ppi_test(df, "x", "y", z=["z"], model=LOGIT, test="crt", B=19, seed=1)
    assert r.B == 19 and r == crt_test(df, "x", "y", z=["z"], model=LOGIT, B=19, seed=1)
    assert ppi_test(df, "x", "y", z=["z"], model=LOGIT, test="crt", seed=1).B == 1000
    with pytest.raises(TypeError, match="folds"):
        ppi_test(df, "x", "y", z=["z"], model=LOGIT, test="loco", B=19)
    assert ppi_test(df, "x", "y", z=["z"], model="tree", seed=1).B == 30


@pytest.mark.gpu
@pytest.mark.parametrize("test", [crt_test, mbstat.ci.loco_test])
def test_xgboost_on_the_gpu(test):
    """The CRT and LOCO with XGBoost trained on the GPU (early stopping included): the device
    is recorded, and the alternative is rejected and the null kept on both devices (their
    boosters differ in rounding, so the p-values are compared by their decisions)."""
    from mbstat.ci.models.estimators import xgboost_cuda_available

    if not xgboost_cuda_available():
        pytest.skip("needs a CUDA build of XGBoost, CuPy and a GPU")
    for effect, bound in ((1.0, 0.01), (0.0, 0.001)):  # rejected at 0.01; kept at 0.001
        df = issue_data(3, n=2000, task="regression", effect=effect)
        res = {d: test(df, "x", "y", ["z"], seed=0, device=d) for d in ("cuda", "cpu")}
        assert res["cuda"].device.startswith("cuda") and res["cpu"].device == "cpu"
        assert all((r.pvalue <= bound) == (effect > 0) for r in res.values())


# ------------------------------------------- issue 27: cheaper draws, early stop, labels
def test_sequential_pvalue_by_hand():
    """The part p-value with the early stop (crt.sequential_pvalue): 1 / (early + 1) when none
    of the first ``early`` draws is as extreme as the data; else the Besag-Clifford or rank
    p-value plus 1 / (early + 1); without the early stop, those alone."""
    from mbstat.ci.models.crt import SEQUENTIAL_EXTREMES, early_draws, sequential_pvalue

    assert SEQUENTIAL_EXTREMES == 10
    assert early_draws(0.05, 6) == 239 and early_draws(0.01, 6) == 1199
    assert early_draws(0.05, 2) == 79
    null = np.arange(2.0, 12.0)  # every draw's loss above the data's 1.0
    assert sequential_pvalue(1.0, null, 0.3, early=4) == pytest.approx(1 / 5)
    # one draw as extreme within the first 4: the rank p-value (1 + (1 - u)) / 11 + 1/5
    null[2] = 0.5
    assert sequential_pvalue(1.0, null, 0.3, early=4) == pytest.approx((1 + 0.7) / 11 + 0.2)
    assert sequential_pvalue(1.0, null, 0.3, early=0) == pytest.approx((1 + 0.7) / 11)
    # the 10th extreme draw is the 20th draw: Besag & Clifford's 10 / 20 (+ 1/5)
    null = np.full(30, 5.0)
    null[1:20:2] = 0.5
    assert sequential_pvalue(1.0, null, 0.3, early=0) == pytest.approx(10 / 20)
    assert sequential_pvalue(1.0, null, 0.3, early=4) == pytest.approx(10 / 20 + 1 / 5)
    # ties count as extreme (a model that ignores x never stops early)
    assert sequential_pvalue(1.0, np.full(30, 1.0), 0.3, early=4) == pytest.approx(1.0)


def test_sequential_pvalue_is_valid_under_exchangeability():
    """Under H0 the data's loss and the draws' are exchangeable: P(p <= t) <= t at every t
    (the early stop happens with probability exactly 1 / (early + 1)); checked on 20,000
    exchangeable samples against the binomial's 99.9% bound."""
    from mbstat.ci.models.crt import sequential_pvalue

    rng = np.random.default_rng(1)
    early, B, reps = 19, 199, 20_000
    sample = rng.normal(size=(reps, B + 1))
    u = rng.random(reps)
    p = np.array([sequential_pvalue(v[0], v[1:], w, early) for v, w in zip(sample, u)])
    stopped = np.mean(np.isclose(p, 1 / (early + 1), rtol=1e-12, atol=0))
    assert stopped == pytest.approx(1 / (early + 1), abs=4 * np.sqrt(0.05 * 0.95 / reps))
    for t in (0.05, 0.06, 0.1, 0.2, 0.5):
        k = int(np.sum(p <= t))
        assert k <= stats.binom.ppf(0.999, reps, t), (t, k / reps)


def test_shuffled_predictions_equal_predicting_the_shuffled_rows():
    """Given a discrete (or empty) z, a shuffle of x within the strata of z gives row i the
    model's prediction of the row whose x it takes (z is equal within a stratum): the
    draws' losses computed by shuffling the predictions equal scikit-learn's log-loss of the
    shuffled rows predicted again."""
    from mbstat.ci.models.crt import _shuffle_chunk, _strata_order

    rng = np.random.default_rng(4)
    n = 300
    z = rng.integers(0, 3, size=n)
    x = 0.5 * z + rng.normal(size=n)  # continuous x: many values, not tabulated
    y = (rng.random(n) < 1 / (1 + np.exp(-(z - 1 + x)))).astype(int)
    ds = as_dataset(pd.DataFrame({"x": x, "z": pd.Categorical(z), "y": y}))
    eng = CRTEngine(ds, 2, model=LOGIT, folds=2, repeats=1, B=7, seed=3)
    cols = np.concatenate([eng.groups[0], eng.groups[1]])
    X = np.ascontiguousarray(eng.X[:, cols])
    xpos = np.flatnonzero(np.isin(cols, eng.groups[0]))
    test, train = np.flatnonzero(eng.parts[0] == 0), np.flatnonzero(eng.parts[0] != 0)
    fitted = eng.learner.fit(X[train], eng.labels[train], 1, None)
    strata = eng._levels((1,))[1][test]
    values = X[test][:, xpos]
    observed, null = eng._losses(fitted, X[test], xpos, eng.y[test], (values, strata), 5)
    which = _shuffle_chunk(*_strata_order(strata), 5, 0, 7)  # the draws it made
    assert (strata[which] == strata[None, :]).all()
    yt = eng.y[test]
    assert observed == pytest.approx(log_loss(yt, fitted.predict_proba(X[test]),
                                              labels=[0, 1], normalize=False), rel=1e-9)
    for b in range(7):
        Xb = X[test].copy()
        Xb[:, xpos] = values[which[b]]
        assert null[b] == pytest.approx(log_loss(yt, fitted.predict_proba(Xb), labels=[0, 1],
                                                 normalize=False), rel=1e-9)


def test_draws_are_shared_by_every_x_given_the_same_z():
    """One set of draws per conditioning set: two copies of a null column, tested given the
    same z, get the same draws and so the same part p-values up to the tie-breaking uniform
    of the rank p-value (at most 1 / (B + 1)); a strong column stops early in every part:
    p = 6 / 240 at alpha 0.05."""
    rng = np.random.default_rng(6)
    n = 400
    df = pd.DataFrame({"x": rng.normal(size=n), "w": rng.normal(size=n)})
    df["copy"] = df["x"]
    df["s"] = df["w"] + 0.3 * rng.normal(size=n)
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-3 * df["w"]))).astype(int)
    ds = as_dataset(df)
    eng = CRTEngine(ds, 4, model=LOGIT, seed=2)
    a, b = eng.test_many([(0,), (2,)], (3,))
    np.testing.assert_allclose(a[4], b[4], rtol=0, atol=1 / 1001)
    assert eng.early == 239
    fits = eng.n_fits
    strong, = eng.test_many([(1,)], (3,))
    # its first part reaches the least p-value a part can take: the others are not drawn
    assert strong[4][0] == pytest.approx(1 / 240) and np.isnan(strong[4][1:]).all()
    assert strong[1] == pytest.approx(6 / 240) and eng.n_fits == fits + 1
    # at alpha 0.01 the early stop needs 1,199 draws, more than B = 1000: none
    eng.set_level(0.01)
    assert eng.early == 0
    assert eng.test_many([(1,)], (3,))[0][1] < 0.01


def test_given_nothing_all_columns_share_one_histogram_model_pass():
    """z empty: the statistic is the histogram model's in-sample loss reduction, G^2 / 2 for
    classes (scipy's log-likelihood chi2_contingency) and the between-bins sum of squares for
    a regression (by hand); the permutation p-values are uniform under H0 (exact) and the
    early stop gives a clear member 1 / 40 at alpha 0.05. (The sequential p-values are
    valid, not uniform: Besag-Clifford's 10 / draws and the early stop's shift.)"""
    from mbstat.ci.models.crt import histogram_reductions

    rng = np.random.default_rng(3)
    n = 300
    cells = rng.integers(0, 4, size=(n, 3))
    cells[:, 2] = 0  # one cell: no reduction
    y = rng.integers(0, 3, size=n)
    red = histogram_reductions(cells, 3)(y)
    for j in range(2):
        tab = pd.crosstab(cells[:, j], y).to_numpy()
        g2 = stats.chi2_contingency(tab, lambda_="log-likelihood", correction=False)[0]
        assert red[j] == pytest.approx(g2 / 2, rel=1e-10)
    assert red[2] == pytest.approx(0.0, abs=1e-9)
    v = rng.normal(size=n)
    red = histogram_reductions(cells, 0)(v)
    for j in range(2):
        means = pd.Series(v).groupby(cells[:, j]).agg(["mean", "size"])
        assert red[j] == pytest.approx(float((means["size"] * (means["mean"] - v.mean()) ** 2)
                                             .sum()), rel=1e-10)
    # level: 40 null columns x 50 data sets, p uniform; a strong column: 1 / 40
    p = []
    for seed in range(50):
        r = np.random.default_rng(100 + seed)
        df = pd.DataFrame(r.normal(size=(200, 40)), columns=[f"c{j}" for j in range(40)])
        df["y"] = r.integers(0, 2, size=200)
        eng = CRTEngine(as_dataset(df), 40, model=LOGIT, seed=seed)
        p += [o[1] for o in eng.test_many([(j,) for j in range(40)], ())]
    p = np.array(p)
    for t in (0.025, 0.05, 0.1, 0.3):  # valid at every level (binomial 99.9% bound)
        k = int(np.sum(p <= t))
        assert k <= stats.binom.ppf(0.999, len(p), t), (t, k / len(p))
    assert np.mean(p <= 0.05) > 0.02  # not trivially conservative
    df = issue_data(9, n=300, effect=3.0)
    res = crt_test(df, "x", "y", seed=1)
    assert res.pvalue == pytest.approx(1 / 40) and len(res.part_pvalues) == 1


def test_level_with_the_early_stop_wilson():
    """The early stop active (B = 300 > 79 draws for 2 parts at alpha 0.05): the rejection
    rate of 80 nulls (x depends on z, linear sampler) has a Wilson interval reaching 0.05."""
    k, n = _rejections([(s, issue_data(700 + s, n=300)) for s in range(80)],
                       model=LOGIT, repeats=1, B=300)
    lo, hi = proportion_confint(k, n, method="wilson")
    assert lo <= 0.05, (k, n)


def test_ppfs_summary_names_the_crt_from_the_test_object():
    from mbstat.ci.models.crt import CRTTest

    df = issue_data(3, n=300, effect=2.0)
    res = mbstat.ppfs(df, "y", test="crt", model=LOGIT, K=0, B=99, seed=1)
    text = str(res.summary())
    test = CRTTest(model=LOGIT, B=99)
    assert f"holdout randomization tests ({test.settings_text()}" in text
    assert "3 splits into 2 parts each, up to 99 draws of x given z per part" in text
    assert "LOCO" not in text and test.increase_note in text
    assert res.test_label == CRTTest.label


@pytest.mark.parametrize("model", ["xgboost", "tree"])
def test_tree_models_read_the_draws_from_their_split_intervals(model, monkeypatch):
    """A tree model's prediction moves only when x crosses one of its split points: the
    draws' losses read from one prediction per interval equal those of predicting every
    drawn row (the same draws, the table switched off), for XGBoost (x < t goes left) and a
    scikit-learn tree (x <= t)."""
    import mbstat.ci.models.crt as crt

    df = issue_data(8, n=400, task="regression", effect=1.0)
    ds = as_dataset(df)
    eng = CRTEngine(ds, 2, model=model, folds=2, repeats=1, B=300, seed=3,
                    model_params={"n_estimators": 30} if model == "xgboost" else None)
    cols = np.concatenate([eng.groups[0], eng.groups[1]])
    X = np.ascontiguousarray(eng.X[:, cols])
    xpos = np.flatnonzero(np.isin(cols, eng.groups[0]))
    test, train = np.flatnonzero(eng.parts[0] == 0), np.flatnonzero(eng.parts[0] != 0)
    fitted = eng.learner.fit(X[train], eng.labels[train], 1, None)
    points, _ = crt._split_points(eng.learner, fitted, int(xpos[0]))
    assert 1 < len(points) < 300
    drawn = eng._sampler((0,), (1,), X[:, xpos])(test, 300, np.random.default_rng(0))
    assert len(drawn) == 3  # the linear sampler: fitted + shuffled residuals
    args = (eng.learner, eng.task, 300, fitted, X[test], xpos, eng.y[test], drawn, 9)
    fast = crt._held_out_losses(*args)
    monkeypatch.setattr(crt, "_INTERVALS", 0)
    slow = crt._held_out_losses(*args)
    assert fast[0] == slow[0] and len(fast[1]) == len(slow[1]) == 300
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-9)


@pytest.mark.parametrize("model", ["xgboost", "tree", LOGIT])
@pytest.mark.parametrize("discrete_z", [False, True])
def test_value_losses_equal_predicting_every_row_at_every_value(model, discrete_z):
    """The tabulated losses of a few-valued x (each held-out row predicted at each value,
    the rows whose x already holds the value read from the observed prediction, each
    distinct row predicted once: a discrete z repeats rows; the distinct rows of the columns
    a tree splits on) equal, bit for bit, predicting all m (values + 1) rows (issue 27)."""
    if model == "xgboost":
        pytest.importorskip("xgboost")
    from mbstat.ci.models.crt import _value_losses
    from mbstat.ci.models.estimators import per_sample_loss

    rng = np.random.default_rng(11)
    n = 400
    z = rng.integers(0, 2, size=n).astype(float) if discrete_z else rng.normal(size=n)
    x = rng.integers(0, 3, size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(z + x - 1)))).astype(int)
    ds = as_dataset(pd.DataFrame({"x": pd.Categorical(x), "z": z, "y": y}))
    eng = CRTEngine(ds, 2, model=model, folds=2, repeats=1, B=7, seed=3)
    cols = np.concatenate([eng.groups[0], eng.groups[1]])
    X = np.ascontiguousarray(eng.X[:, cols])
    xpos = np.flatnonzero(np.isin(cols, eng.groups[0]))
    test, train = np.flatnonzero(eng.parts[0] == 0), np.flatnonzero(eng.parts[0] != 0)
    types = [eng.types[c] for c in cols]
    fitted = eng.learner.fit(X[train], eng.labels[train], 1, types if "c" in types else None)
    Xt, yt = X[test], eng.y[test]
    uniq = np.unique(X[:, xpos], axis=0)
    assert len(uniq) == 3
    Xu = np.repeat(Xt[None], len(uniq) + 1, axis=0)
    Xu[1:, :, xpos] = uniq[:, None, :]
    every = per_sample_loss(eng.learner.predict(fitted, Xu.reshape(-1, Xt.shape[1])),
                            np.tile(yt, len(uniq) + 1), "classification").reshape(-1, len(yt))
    assert np.array_equal(_value_losses(eng.learner, "classification", fitted, Xt, xpos, yt,
                                        uniq), every)
    # values that some rows' x does not hold (the rows each value moves, predicted)
    assert np.array_equal(_value_losses(eng.learner, "classification", fitted, Xt, xpos, yt,
                                        uniq[1:]), every[[0, 2, 3]])


def test_compiled_level_draws_sum_as_numpy():
    """The draws of a discrete x summed in one compiled pass (``_LevelDraws.sums``) equal,
    bit for bit, reading the levels (``which``) and summing the gathered losses with numpy
    (its pairwise summation), for any slice of draws and row counts around numpy's blocks."""
    from mbstat.ci.models._shuffle import _pairwise_sum
    from mbstat.ci.models.crt import _LevelDraws

    rng = np.random.default_rng(5)
    for n in [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 257, 1000, 4099]:
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-4, 4, n)
        assert _pairwise_sum(a, 0, n) == a.sum()
    for m, G in [(1, 2), (9, 3), (130, 2), (841, 4)]:
        cum = np.cumsum(rng.dirichlet(np.ones(G), size=m), axis=1)
        table = rng.exponential(size=(G, m))
        draws = _LevelDraws(cum, 300, 17)
        which = np.asarray(draws)
        ref = np.take(table.ravel(), which * m + np.arange(m)).sum(axis=1)
        for lo, size in [(0, 32), (0, 300), (5, 60), (224, 15), (239, 61), (290, 40)]:
            assert np.array_equal(draws.sums(lo, size, table), ref[lo:lo + size])


def test_stopping_at_a_clear_part_changes_no_p_value():
    """A test stops at its first part that reaches the least p-value a part can take (the
    early stop's 1 / (early + 1)): the test's p-value is then J / (early + 1) whatever the
    other parts, so each p-value equals the one that draws every part (``staged=False``), on
    nulls and alternatives, discrete and continuous x, and the parts drawn are the first
    parts of the full run, the same."""
    from mbstat.datasets import sample_network

    alarm = as_dataset(sample_network("alarm", 600, seed=3))
    hr = alarm.index("HR")
    queries = [(alarm, hr, [(alarm.index(c),) for c in ("CO", "HREKG", "BP", "TPR")],
                tuple(alarm.index(c) for c in ("HRSAT", "HRBP", "CATECHOL", "STROKEVOLUME",
                                               "ERRLOWOUTPUT", "PVSAT", "SAO2", "ARTCO2",
                                               "MINVOL")))]  # strata too many: models
    for seed, effect in ((1, 0.0), (3, 1.0), (4, 2.0), (5, 2.0)):
        ds = as_dataset(issue_data(seed, n=300, effect=effect))
        queries.append((ds, 2, [(0,)], (1,)))
    clear = 0
    for ds, y, xs, z in queries:
        staged, full = CRTEngine(ds, y, seed=5), CRTEngine(ds, y, seed=5)
        full.staged = False
        for a, b in zip(staged.test_many(xs, z), full.test_many(xs, z)):
            assert a[1] == b[1] and a[0] == b[0]
            drawn = np.isfinite(a[4])
            np.testing.assert_array_equal(a[4][drawn], b[4][:drawn.sum()])
            clear += not drawn.all()
        assert staged.n_fits <= full.n_fits == 6 * len({tuple(sorted(set(x) | set(z)))
                                                        for x in xs})
    assert clear >= 2  # the stop was met


def test_a_model_that_never_split_on_a_removed_column_is_its_refit():
    """The shrink phase refits only what a removal changes: an XGBoost model of a part that
    never split on the removed column is the model a refit without it gives (the same trees:
    the same predictions, bit for bit), so the engine carries it over; the tests' p-values
    are those of engines that refit everything."""
    from mbstat.ci.models.crt import _xgboost_splits
    from mbstat.datasets import sample_network

    ds = as_dataset(sample_network("alarm", 800, seed=1))
    names = ["TPR", "MINVOLSET", "VENTMACH", "VENTLUNG", "MINVOL", "PVSAT", "SAO2", "ARTCO2",
             "CATECHOL", "HRBP", "HREKG", "HRSAT", "CO", "BP"]
    big = tuple(sorted(ds.index(c) for c in names))
    eng = CRTEngine(ds, ds.index("HR"), seed=3)
    X = eng.X[:, np.concatenate([eng.groups[c] for c in big])]
    part = eng.parts[0]
    fitted = eng.learner.fit(X[part != 0], eng.labels[part != 0], int(eng.fit_seeds[0, 0]))
    used = set(_xgboost_splits(fitted)[0].tolist())
    unused = [j for j, c in enumerate(big) if j not in used]
    assert unused  # columns it never split on
    keep = [j for j in range(len(big)) if j != unused[0]]
    refit = eng.learner.fit(X[part != 0][:, keep], eng.labels[part != 0],
                            int(eng.fit_seeds[0, 0]))
    np.testing.assert_array_equal(fitted.inplace_predict(X), refit.inplace_predict(X[:, keep]))
    # a shrink: each member given the rest, removing the last tested, carried and refitted
    xs = [(big[j],) for j in unused[:2]]
    carried, refitted = CRTEngine(ds, ds.index("HR"), seed=3), CRTEngine(ds, ds.index("HR"),
                                                                         seed=3)
    refitted._carried = lambda features, key: None
    for engine in (carried, refitted):
        blanket = list(big)
        engine.out = []
        for x in xs:
            engine.out += engine.test_many([x], tuple(c for c in blanket if c != x[0]))
            blanket.remove(x[0])
        engine.out += engine.test_many([(big[keep[0]],)], tuple(c for c in blanket
                                                                 if c != big[keep[0]]))
    for a, b in zip(carried.out, refitted.out):
        assert a[1] == b[1] and a[0] == b[0]
    assert carried.n_fits < refitted.n_fits


# ------------------------------------------------- issue 27: the shrink phase's cost
def _alarm_blanket(n=800, seed=1):
    from mbstat.datasets import sample_network

    ds = as_dataset(sample_network("alarm", n, seed=seed))
    names = ["TPR", "MINVOLSET", "VENTMACH", "VENTLUNG", "MINVOL", "PVSAT", "SAO2", "ARTCO2",
             "CATECHOL", "HRBP", "HREKG", "HRSAT", "CO", "BP"]
    return ds, tuple(sorted(ds.index(c) for c in names))


def test_a_fit_on_the_distinct_rows_weighted_is_the_fit_on_every_row():
    """XGBoost on the distinct rows of (X, y) weighted by their counts minimizes the same
    objective with the same gradient sums: on discrete data (ALARM) the same rounds and the
    same predictions up to float32 rounding, on a tenth to a half of the rows; rows all
    distinct (continuous data) are fitted as they are, bit for bit."""
    from mbstat.ci.models.estimators import distinct_rows

    ds, big = _alarm_blanket()
    eng = CRTEngine(ds, ds.index("HR"), seed=3)
    for cols in (big, big[:5]):
        X = eng.X[:, np.concatenate([eng.groups[c] for c in cols])]
        types = [eng.types[c] for c in cols]
        train = eng.parts[0] != 0
        shares = len(distinct_rows(np.column_stack([X[train], eng.labels[train]]))[0]) / \
            train.sum()
        assert shares < 0.75
        for seed in (1, 2):
            every = eng.learner.fit(X[train], eng.labels[train], seed, types)
            weighted = eng.learner.fit(X[train], eng.labels[train], seed, types, True)
            assert every.num_boosted_rounds() == weighted.num_boosted_rounds()
            np.testing.assert_allclose(weighted.inplace_predict(X), every.inplace_predict(X),
                                       rtol=0, atol=1e-6)
    cont = CRTEngine(as_dataset(issue_data(3, n=300)), 2, seed=1)
    plain = cont.learner.fit(cont.X, cont.labels, 5)
    np.testing.assert_array_equal(cont.learner.fit(cont.X, cont.labels, 5, None, True)
                                  .inplace_predict(cont.X), plain.inplace_predict(cont.X))


def test_distinct_rows_group_as_numpy_unique(monkeypatch):
    """The hashed distinct rows are np.unique's (axis 0) in another order, with their counts
    and each row's index; rows that collide in the hash fall back to np.unique's bytes."""
    from mbstat.ci.models import estimators
    from mbstat.ci.models.estimators import distinct_rows, weighted_rows

    rng = np.random.default_rng(0)
    for collide in (False, True):
        if collide:  # every multiplier 1: rows with the same words in any order collide
            monkeypatch.setattr(estimators, "_HASH", np.ones(4096, dtype=np.uint64))
        for dtype in (np.float32, np.float64):
            X = rng.integers(0, 3, size=(500, 6)).astype(dtype)
            rows, counts, inverse = distinct_rows(X)
            ref = np.unique(X, axis=0, return_counts=True)
            assert len(rows) == len(ref[0])
            np.testing.assert_array_equal(rows[inverse], X)
            np.testing.assert_array_equal(np.sort(counts), np.sort(ref[1]))
            assert len(weighted_rows(X)[0]) == len(rows)


def test_within_strata_order_is_lexsort():
    """The shuffle within strata of the histogram pass: one argsort of stratum + key orders
    as np.lexsort, keys that coincide after rounding included."""
    from mbstat.ci.models.crt import _within_strata

    rng = np.random.default_rng(2)
    for trial in range(200):
        n = int(rng.integers(1, 2000))
        strata = np.sort(rng.integers(0, int(rng.integers(1, 300)), n))
        key = rng.random(n)
        if trial % 2:
            key[: n // 2] = np.round(key[: n // 2], 2)  # ties within and across strata
        np.testing.assert_array_equal(_within_strata(strata, key), np.lexsort((key, strata)))


def test_boosting_through_the_c_functions_is_boosting_through_the_methods(monkeypatch):
    """The early-stopped fit's rounds go straight to XGBoost's C functions after the first;
    the same boosters, bit for bit, as through Booster.update and Booster.eval."""
    from mbstat.ci.models import estimators

    ds, big = _alarm_blanket(400)
    eng = CRTEngine(ds, ds.index("HR"), seed=3)
    X = eng.X[:, np.concatenate([eng.groups[c] for c in big])]
    types = [eng.types[c] for c in big]
    fast = eng.learner.fit(X, eng.labels, 4, types)
    monkeypatch.setattr(estimators, "_boosting_calls", lambda b, dtrain, dvalid: (
        lambda i: b.update(dtrain, i), lambda i: b.eval(dvalid, "valid")))
    slow = eng.learner.fit(X, eng.labels, 4, types)
    assert fast.num_boosted_rounds() == slow.num_boosted_rounds()
    np.testing.assert_array_equal(fast.inplace_predict(X), slow.inplace_predict(X))


def test_a_part_whose_model_never_splits_on_x_is_p_one_without_drawing():
    """A tree model that never splits on x predicts alike whatever x: every draw ties the
    data, the part stops at the 10th draw with p = 1 and no increase; _part_pvalue says so
    without drawing, as the draws themselves do."""
    from mbstat.ci.models.crt import (_held_out_losses, _ignores, _part_pvalue,
                                      sequential_pvalue)

    df = issue_data(5, n=300)
    ds = as_dataset(df)
    for model in ("xgboost", "tree"):
        params = {"max_depth": 1, "n_estimators": 2} if model == "xgboost" else \
            {"max_depth": 1}
        eng = CRTEngine(ds, 2, model=model, seed=1, model_params=params)
        train, test = eng.parts[0] != 0, eng.parts[0] == 0
        fitted = eng.learner.fit(eng.X[train], eng.labels[train], 1)
        assert _ignores(eng.learner, fitted, np.array([0]))  # depth 1: z alone is split
        drawn = eng._sampler((0,), (1,), eng.X[:, [0]])(np.flatnonzero(test), 200,
                                                         np.random.default_rng(0))
        args = (eng.learner, eng.task, 200, fitted, eng.X[test], np.array([0]),
                eng.y[test], drawn, 3)
        observed, null = _held_out_losses(*args)
        assert len(null) == 10 and sequential_pvalue(observed, null, 0.5, 0) == 1.0
        assert abs(null.mean() - observed) <= 1e-12 * observed
        assert _part_pvalue(*args, 0.5) == (1.0, 0.0)


def test_a_shrink_is_the_same_whatever_n_jobs():
    """A shrink (each member given the rest, removals refitted or carried, fits on the
    distinct rows) gives the same p-values and increases, and keeps the same models, with
    the parts in waves of 2 as one at a time: a wave's models after the part that ends a
    test are dropped."""
    ds, big = _alarm_blanket(600, seed=2)
    engines = [CRTEngine(ds, ds.index("HR"), seed=5, n_jobs=j, parallel="threads")
               for j in (1, 2)]
    outs = []
    for eng in engines:
        blanket, out = list(big), []
        for x in big[:6]:
            res = eng.test_many([(x,)], tuple(c for c in blanket if c != x))[0]
            out.append(res)
            if res[1] > 0.05:
                blanket.remove(x)
        outs.append(out)
    for a, b in zip(*outs):
        assert a[:4] == b[:4]
        np.testing.assert_array_equal(a[4], b[4])
    assert [sorted(m) for m in engines[0]._models.values()] == \
        [sorted(m) for m in engines[1]._models.values()]


def test_xgboost_settings_are_loco_s_at_eta_half_unless_overridden():
    """The CRT's XGBoost (issue 27): LOCO's early-stopped settings at eta 0.5, and
    ``model_params`` still overrides them."""
    from mbstat.ci.models.crt import CRT_XGBOOST
    from mbstat.ci.models.loco import LOCO_XGBOOST

    assert dict(CRT_XGBOOST) == {**LOCO_XGBOOST, "learning_rate": 0.5}
    ds = as_dataset(issue_data(1, n=120))
    eng = CRTEngine(ds, ds.index("y"), seed=0)
    assert eng.learner.params["learning_rate"] == 0.5
    assert eng.learner.params["early_stopping_rounds"] == LOCO_XGBOOST["early_stopping_rounds"]
    assert "eta 0.5" in eng.learner.label
    other = CRTEngine(ds, ds.index("y"), seed=0, model_params={"learning_rate": 0.3})
    assert other.learner.params["learning_rate"] == 0.3


def test_compiled_class_reductions_equal_numpy_bit_for_bit():
    """The histogram models' G^2 / 2 per column for 2-7 classes (compiled) equal, bit for bit,
    the numpy form (bincount of cells x classes, the log terms with nan_to_num, reduceat over
    each column's cells), empty cells and absent classes included; and G^2 / 2 itself
    (scipy's likelihood-ratio chi-square of the column's table) to rounding."""
    from mbstat.ci.models.crt import _class_reduction, histogram_reductions

    def numpy_form(cells, k, y):  # the numpy path that serves 8 classes or more
        sizes = cells.max(axis=0) + 1
        starts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.intp)
        return _class_reduction(cells + starts, starts, int(sizes.sum()), k)(y)

    rng = np.random.default_rng(3)
    for trial in range(60):
        n, p, k = int(rng.integers(2, 1500)), int(rng.integers(1, 12)), int(rng.integers(2, 8))
        cells = np.column_stack([rng.integers(0, int(rng.integers(1, 25)), n) for _ in range(p)])
        y = rng.integers(0, 2 if trial % 4 == 0 else k, n)
        reduction = histogram_reductions(cells, k)
        for _ in range(3):
            yy = rng.permutation(y)
            assert np.array_equal(reduction(yy).view(np.int64),
                                  numpy_form(cells, k, yy).view(np.int64))
    table = pd.crosstab(cells[:, 0], y).to_numpy()
    g2 = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")[0]
    np.testing.assert_allclose(reduction(y)[0], g2 / 2, rtol=1e-9)


def test_design_rows_equal_numpy_unique_of_the_rows_bytes():
    """The sampler's distinct rows of a 0/1 design (with x's codes as a last column, or
    without), found from the rows' packed bits, are np.unique's of the rows' bytes: the same
    rows, order, counts and index (``weighted_rows``); other designs take that path."""
    from mbstat.ci.models.crt import _design_rows
    from mbstat.ci.models.estimators import weighted_rows

    rng = np.random.default_rng(9)
    for trial in range(120):
        n, p = int(rng.integers(1, 1500)), int(rng.integers(1, 70))
        design = (rng.random((n, p)) < rng.random()).astype(np.float64)
        design[:, 0] = 1.0
        if trial % 6 == 0:
            design[:, -1] = rng.normal(size=n)  # a continuous z column
        code = rng.integers(0, int(rng.integers(1, 300)), n)
        for got, ref in [(_design_rows(design), weighted_rows(design)),
                         (_design_rows(design, code),
                          weighted_rows(np.column_stack([design, code])))]:
            for a, b in zip(got, ref):
                assert a.dtype == b.dtype and np.array_equal(a, b)
