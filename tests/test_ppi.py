"""The predictive permutation independence (PPI) test: Algorithm 1 of Hassan et al."""
from __future__ import annotations

import dataclasses
import itertools
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbstat
from mbstat import ci_test
from mbstat.ci.result import CIResult
from mbstat.ci.engine import CITester
from mbstat.ci.models.ppi import PPITest, ppi_test, wilcoxon_greater
from mbstat.ci.models.estimators import make_model, xgboost_cuda_available

SMALL_XGB = {"n_estimators": 20, "max_depth": 3}


def frame(n=300, seed=0):
    """y depends on a and b; c is noise; r is a regression target of a and c."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["y"] = (df.a + df.b + 0.5 * rng.normal(size=n) > 0).astype(int)
    df["r"] = 2 * df.a + np.sin(2 * df.c) + 0.3 * rng.normal(size=n)
    return df


# ------------------------------------------------------------------ results
def test_result_is_a_frozen_ciresult_with_the_paired_risks():
    df = frame()
    res = ppi_test(df.drop(columns="r"), "a", "y", model="tree", B=10, seed=1)
    assert isinstance(res, CIResult)
    assert res.test == "ppi" and res.statistic_name == "V"
    assert (res.x, res.y, res.z, res.n) == (("a",), "y", (), 300)
    assert res.risk.shape == res.risk_permuted.shape == (10,)
    assert not res.risk.flags.writeable
    # a dependent x: permuting it raises the risk on every split, so V is maximal
    assert res.statistic == 10 * 11 / 2
    assert res.pvalue == pytest.approx(2.0 ** -10)
    assert res.log_pvalue == pytest.approx(-10 * np.log(2))
    assert not res.independent
    assert res.increase == pytest.approx(np.mean(res.risk_permuted - res.risk))
    assert np.isnan(res.mi) and res.calibration == "exact"  # a model-based test: no MI
    assert res.task == "classification" and res.device == "cpu" and res.B == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.pvalue = 0.5
    text = str(res)
    for part in ("Predictive permutation independence test", "data:  a ~ y", "V = 55",
                 "p-value = 0.0009766", "log-loss", "decision tree"):
        assert part in text
    assert "risk_permuted" not in repr(res)
    ax = res.plot()
    assert isinstance(ax, matplotlib.axes.Axes)


def test_regression_uses_squared_error_and_conditioning_set():
    df = frame()
    res = ppi_test(df.drop(columns="y"), "c", "r", z=["a"], model="tree", B=10, seed=2)
    assert res.task == "regression" and "squared error" in str(res)
    assert res.z == ("a",) and "c ~ r | a" in str(res)
    assert res.pvalue < 0.01
    null = ppi_test(df.drop(columns="y"), "b", "r", z=["a", "c"], model="tree", B=10, seed=2)
    assert null.pvalue > 0.05


def test_xgboost_records_the_device_that_ran():
    df = frame()
    res = ppi_test(df.drop(columns="r"), "a", "y", B=5, seed=0, device="cpu",
                   model_params=SMALL_XGB)
    assert res.device == "cpu"
    assert res.model.startswith("xgboost (20 rounds, depth 3")
    assert res.pvalue == pytest.approx(2.0 ** -5)


def test_model_that_ignores_x_gives_p_one():
    df = frame()
    df["const"] = 1.0
    res = ppi_test(df.drop(columns="r"), "const", "y", z=["a"], model="tree", B=8, seed=0)
    np.testing.assert_array_equal(res.risk, res.risk_permuted)
    assert res.pvalue == 1.0 and res.statistic == 8 * 9 / 4


def _null_pvalues(task, n_seeds=250, n=200):
    out = []
    for s in range(n_seeds):
        rng = np.random.default_rng(10_000 + s)
        z, x = rng.normal(size=n), rng.normal(size=n)
        y = z + rng.normal(size=n)
        if task == "classification":
            y = (y > 0).astype(int)
        df = pd.DataFrame({"x": x, "z": z, "y": y})
        out.append(ppi_test(df, "x", "y", z=["z"], model="tree", B=10, seed=s).pvalue)
    return np.array(out)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_null_pvalues_are_roughly_uniform(task):
    # x independent of everything: permuting it is an exact symmetry, so the
    # p-values are close to uniform, yet over-dispersed because the B splits
    # share rows (over 1000 seeds at B = 10: KS distance 0.09-0.10, 6.6-6.9%
    # below 0.05). Hence loose bounds: KS distance < 0.2 over 250 seeds (a
    # broken test, e.g. p always small or always 1, is at 0.5 or more).
    p = _null_pvalues(task)
    assert stats.kstest(p, "uniform").statistic < 0.2
    assert 0.4 < np.median(p) < 0.65
    assert np.mean(p <= 0.05) < 0.12


def test_same_seed_same_result_and_workers_do_not_change_it():
    df = frame().drop(columns="r")
    one = ppi_test(df, "b", "y", z=["a", "c"], model="tree", B=10, seed=3)
    again = ppi_test(df, "b", "y", z=["a", "c"], model="tree", B=10, seed=3)
    threads = ppi_test(df, "b", "y", z=["a", "c"], model="tree", B=10, seed=3, n_jobs=2,
                       parallel="threads")
    np.testing.assert_array_equal(one.risk, again.risk)
    np.testing.assert_array_equal(one.risk_permuted, threads.risk_permuted)
    assert one.pvalue == threads.pvalue
    other = ppi_test(df, "b", "y", z=["a", "c"], model="tree", B=10, seed=4)
    assert not np.array_equal(one.risk, other.risk)


def test_estimator_is_cloned_not_mutated_and_processes_agree():
    from sklearn.linear_model import LogisticRegression

    est = LogisticRegression(C=0.5)
    before = est.get_params()
    df = frame().drop(columns="r")
    one = ppi_test(df, "a", "y", model=est, B=6, seed=0)
    two = ppi_test(df, "a", "y", model=est, B=6, seed=0, n_jobs=2, parallel="processes")
    assert est.get_params() == before and not hasattr(est, "coef_")
    assert one.model == "LogisticRegression" and one.pvalue == pytest.approx(2.0 ** -6)
    np.testing.assert_allclose(one.risk_permuted, two.risk_permuted)


def test_joint_x_and_categorical_features():
    rng = np.random.default_rng(5)
    n = 400
    colour = rng.choice(["red", "green", "blue", "grey"], size=n)
    effect = pd.Series(colour).map({"red": 2.0, "green": -2.0, "blue": 0.0, "grey": 0.5})
    df = pd.DataFrame({"colour": pd.Categorical(colour), "u": rng.normal(size=n),
                       "flag": rng.random(n) < 0.5})
    df["y"] = effect.to_numpy() + df.u + 0.5 * rng.normal(size=n)
    for model, params in (("xgboost", SMALL_XGB), ("tree", None)):
        res = ppi_test(df, "colour", "y", z=["u"], model=model, B=8, seed=1,
                       model_params=params)
        assert res.pvalue < 0.01, model
        joint = ppi_test(df, ["colour", "flag"], "y", model=model, B=8, seed=1,
                         model_params=params)
        assert joint.x == ("colour", "flag") and joint.pvalue < 0.01


def test_as_a_citest_in_the_engine():
    df = frame().drop(columns="y")
    tester = CITester(df, PPITest(model="tree", B=10, seed=7))
    batch = tester.test_many(["a", "b", "c"], "r")
    assert not batch.independent[0] and not batch.independent[2]
    # the engine's tests are ppi_test's: same seed, same splits, same p-values
    for x, z in (("b", []), ("c", ["a"])):
        one = ppi_test(df, x, "r", z=z, model="tree", B=10, seed=7)
        res = tester.test(x, "r", z)
        assert (res.pvalue, res.statistic) == (one.pvalue, one.statistic)
        assert res.increase == pytest.approx(one.increase) and np.isnan(res.mi)
        assert res == CIResult(one.batch)  # a PPIResult is a CIResult row plus the risks
    assert len(tester.log) == 4 and set(tester.log["z"]) == {"", "a"}
    assert list(tester.log.columns[3:9]) == ["statistic", "df", "pvalue", "log_pvalue", "mi",
                                             "increase"]
    assert batch.increase.shape == (3,) and (tester.log["calibration"] == "exact").all()


def test_registered_and_asked_by_name_through_ci_test():
    df = frame().drop(columns="y")
    res = ci_test(df, "c", "r", z=["a"], test="ppi", model="tree", B=10, seed=7)
    one = ppi_test(df, "c", "r", z=["a"], model="tree", B=10, seed=7)
    assert (res.test, res.pvalue, res.increase) == ("ppi", one.pvalue, one.increase)
    assert "ppi" in mbstat.tests_table().index
    # not symmetric: the target is y, so (x, y) and (y, x) are different tests
    tester = CITester(df, "ppi", model="tree", B=10, seed=7)
    tester.test("a", "r")
    tester.test("r", "a")
    assert tester.n_tests == 2


def test_results_pickle_and_compare_equal():
    import pickle

    res = ppi_test(frame().drop(columns="r"), "a", "y", model="tree", B=6, seed=1)
    again = pickle.loads(pickle.dumps(res))
    assert again == res and hash(again) == hash(res)  # NaN df and mi compare equal
    assert not again.risk.flags.writeable and repr(again) == repr(res)
    other = ppi_test(frame().drop(columns="r"), "a", "y", model="tree", B=6, seed=2)
    assert other != res


def test_indicator_tree_grows_the_gini_classification_tree():
    """The "tree" learner fits DecisionTreeRegressor on class indicators: its class
    probabilities are DecisionTreeClassifier's (Gini impurity = summed indicator
    variance), up to rare floating-point ties between equally good splits."""
    from sklearn.datasets import load_breast_cancer, load_wine
    from sklearn.tree import DecisionTreeClassifier

    same = total = 0
    for X, y in (load_breast_cancer(return_X_y=True), load_wine(return_X_y=True)):
        X = X.astype(np.float32)
        k = len(np.unique(y))
        learner = make_model("tree", "classification", k)
        assert learner.indicator_tree
        rng = np.random.default_rng(0)
        for seed in range(15):
            rows = rng.permutation(len(y))
            tr, te = rows[: int(0.8 * len(y))], rows[int(0.8 * len(y)):]
            cols = rng.choice(X.shape[1], size=int(rng.integers(1, X.shape[1] + 1)),
                              replace=False)
            Xtr, Xte = np.ascontiguousarray(X[tr][:, cols]), np.ascontiguousarray(X[te][:, cols])
            ours = learner.predict(learner.fit(Xtr, learner.training_labels(y[tr]), seed), Xte)
            ref = DecisionTreeClassifier(random_state=seed).fit(Xtr, y[tr]).predict_proba(Xte)
            same += np.allclose(ours, ref)
            total += 1
    assert same >= total - 1


# -------------------------------------------------------------- statistic
def test_wilcoxon_matches_scipy_and_the_sign_flip_distribution():
    rng = np.random.default_rng(0)
    for n in (5, 9, 20, 45):
        a = rng.normal(size=n)
        b = a + rng.normal(0.4, 1, size=n)
        V, p, logp = wilcoxon_greater(a, b)
        ref = stats.wilcoxon(b - a, alternative="greater", method="exact")
        assert V == ref.statistic and p == pytest.approx(ref.pvalue, rel=1e-9)
        assert logp == pytest.approx(np.log(ref.pvalue), rel=1e-9)
    # ties and zeros (zsplit): brute force over the sign flips of the nonzero differences
    d = np.array([0.0, 0.3, -0.3, 0.5, 0.5, -1.0, 0.0, 2.0, 0.3])
    V, p, _ = wilcoxon_greater(np.zeros_like(d), d)
    r = stats.rankdata(np.abs(d))
    zero, nz = d == 0, d != 0
    assert V == r[d > 0].sum() + r[zero].sum() / 2
    sums = [r[nz] @ np.array(s) for s in itertools.product([0, 1], repeat=int(nz.sum()))]
    assert p == pytest.approx(np.mean(np.array(sums) >= r[d > 0].sum() - 1e-9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.wilcoxon(d, alternative="greater", zero_method="zsplit")
    assert V == ref.statistic
    # large B: normal approximation, accurate log p where p underflows
    V, p, logp = wilcoxon_greater(np.zeros(3000), np.arange(1.0, 3001.0))
    assert p == 0.0 and -1200 < logp < -1000
    assert wilcoxon_greater(np.ones(7), np.ones(7))[1:] == (1.0, 0.0)


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, error, match", [
    ({"B": 4}, ValueError, "B must be >= 5"),
    ({"B": 10.0}, TypeError, "B must be an integer"),
    ({"test_size": 0.0}, ValueError, "test_size must be in"),
    ({"test_size": 1.0}, ValueError, "test_size must be in"),
    ({"test_size": 1.5}, ValueError, "test_size must be in"),
    ({"model": "forest"}, ValueError, "model must be one of"),
    ({"model": object()}, TypeError, "without fit and predict"),
    ({"task": "survival"}, ValueError, "task must be one of"),
    ({"n_jobs": 0}, ValueError, "n_jobs must be >= 1 or -1"),
    ({"device": "tpu"}, ValueError, "device must be one of"),
    ({"model_params": {"max_depht": 3}, "model": "tree"}, TypeError, "model_params"),
    ({"model_params": {"random_state": 3}}, TypeError, "seed="),
    ({"seed": -1}, ValueError, "seed must be >= 0"),
])
def test_bad_arguments(kwargs, error, match):
    df = frame().drop(columns="r")
    args = {"model": "tree", "B": 5, **kwargs}
    with pytest.raises(error, match=match):
        ppi_test(df, "a", "y", **args)


def test_bad_models_and_targets():
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.svm import SVC

    df = frame()
    with pytest.raises(TypeError, match="not the class"):
        ppi_test(df, "a", "y", model=LogisticRegression)
    with pytest.raises(TypeError, match="predict_proba"):
        ppi_test(df, "a", "y", model=SVC(), B=5)
    with pytest.raises(ValueError, match="continuous .* a regression target"):
        ppi_test(df, "a", "r", task="classification", model="tree", B=5)
    one_class = df.assign(y=1)
    with pytest.raises(ValueError, match="single class"):
        ppi_test(one_class, "a", "y", model="tree", B=5)
    with pytest.raises(ValueError, match="numeric target"):
        ppi_test(df.assign(y=df.y.map({0: "no", 1: "yes"})), "a", "y", task="regression",
                 model="tree", B=5)
    with pytest.raises(ValueError, match="constant"):
        ppi_test(df.assign(r=1.5), "a", "r", model="tree", B=5)
    with pytest.raises(ValueError, match="disjoint"):
        ppi_test(df, "a", "y", z=["a"], model="tree", B=5)
    with pytest.raises(ValueError, match="target 'y' cannot be in x or z"):
        ppi_test(df, "y", "y", model="tree", B=5)
    with pytest.raises(ValueError, match="each part needs at least 2"):
        ppi_test(df.iloc[:4], "a", "r", model="tree", B=5, test_size=0.2)
    with pytest.raises(TypeError, match="model_params cannot be given"):
        ppi_test(df, "a", "r", model=LinearRegression(), model_params={"x": 1})


def test_cuda_request_without_a_gpu_is_refused():
    if xgboost_cuda_available():
        pytest.skip("a GPU answers here")
    with pytest.raises(RuntimeError, match="device='cuda'"):
        ppi_test(frame(), "a", "y", device="cuda", B=5)
    with pytest.raises(ValueError, match="needs model='xgboost'"):
        make_model("tree", "classification", 2, device="cuda")


@pytest.mark.gpu
def test_xgboost_on_the_gpu():
    if not xgboost_cuda_available():
        pytest.skip("needs a CUDA build of XGBoost, CuPy and a GPU")
    df = frame(n=2000)
    gpu = ppi_test(df.drop(columns="r"), "a", "y", B=10, seed=0, device="cuda",
                   model_params=SMALL_XGB)
    cpu = ppi_test(df.drop(columns="r"), "a", "y", B=10, seed=0, device="cpu",
                   model_params=SMALL_XGB)
    assert gpu.device.startswith("cuda") and cpu.device == "cpu"
    assert gpu.pvalue < 0.01
    np.testing.assert_allclose(gpu.risk, cpu.risk, rtol=0.05)


@pytest.mark.parametrize("metric", [None, "auc", ["logloss", "auc"], "error"])
def test_early_stopping_keeps_the_rounds_xgboost_would(metric):
    """The early-stopped booster has the rounds xgb.train's own early stopping keeps on the
    same validation rows (the last metric decides, maximized for auc-like metrics: with
    eval_metric='auc' the lowest AUC was kept, i.e. one round)."""
    import xgboost as xgb

    from mbstat.ci.models.estimators import make_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=1500) > 0).astype(np.float32)
    extra = {} if metric is None else {"eval_metric": metric}
    learner = make_model("xgboost", "classification", 2, device="cpu", params={
        "n_estimators": 60, "early_stopping_rounds": 5, "learning_rate": 0.1, **extra})
    booster = learner.fit(X, y, 7)
    order = np.random.default_rng(7).permutation(1500)
    valid, train = order[:300], order[300:]
    params = {"tree_method": "hist", "max_depth": 4, "max_bin": 64, "learning_rate": 0.1,
              "objective": "binary:logistic", "seed": 7, "nthread": 1, **extra}
    ref = xgb.train(params, xgb.DMatrix(X[train], label=y[train]), 60,
                    evals=[(xgb.DMatrix(X[valid], label=y[valid]), "valid")],
                    early_stopping_rounds=5, verbose_eval=False)
    assert booster.num_boosted_rounds() == ref.best_iteration + 1
