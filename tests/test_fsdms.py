"""FSDMS and WFSDMS (Liu, Tang & Zeng 2015): Algorithms 1-3, CorrAL, results, bad input."""

import dataclasses
import sys

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from mbstat.algorithms.fsdms import fsdms, wfsdms  # noqa: E402
from mbstat.backend import gpu_available  # noqa: E402
from mbstat.datasets import make_corral  # noqa: E402
from mbstat.dependency import dependency  # noqa: E402
from mbstat.results.fsdms import FSDMSResult, WFSDMSResult  # noqa: E402

CORE = ("A0", "A1", "B0", "B1")


# ---------------------------------------------------------------------------
# The paper's synthetic experiment (Table I)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["corral", "corral46", "corral47"])
@pytest.mark.parametrize("seed", [0, 1])
def test_corral_first_four(kind, seed):
    res = fsdms(make_corral(kind, seed=seed), "class")
    assert res.sequence[:4] == CORE
    assert "R" not in res.sequence[:4]
    assert res.selected == CORE  # the shortest prefix with D(P) = D(F) = 1
    if kind == "corral":
        assert res.A1 == CORE and res.B2 == () and res.C3 == ("I", "R")
    else:
        # exact copies A0_0 .. B1_0 leave no feature strongly relevant in the data
        assert res.A1 == () and res.B2 == ()


def test_corral_hand_computed_steps():
    """Gains and dependencies of Algorithm 3 on CorrAL, worked out by hand."""
    res = fsdms(make_corral("corral", seed=0), "class", full=True)
    r = res.ranking
    # step 1: D({a}) = 0 and D(F) - D(F - a) = 1 - 5/8 for each of A0..B1
    # step 2: D({A0, A1}) = 1/4 and D(F - A0) - D({B0, B1, I, R}) = 5/8 - 1/4
    np.testing.assert_allclose(r["gain"], [3 / 8, 5 / 8, 5 / 8, 3 / 8, 0, 0])
    np.testing.assert_allclose(r["dependency"], [0, 1 / 4, 5 / 8, 1, 1, 1])
    np.testing.assert_allclose(r["remaining"], [5 / 8, 1 / 4, 0, 0, 0, 0])
    np.testing.assert_allclose(r["margin"], r["dependency"] - r["remaining"])
    assert list(r["set"]) == ["A1"] * 4 + ["C3"] * 2


@pytest.mark.parametrize("perm_seed", range(4))
def test_corral_robust_to_column_order(perm_seed):
    df = make_corral("corral", seed=3)
    cols = list(np.random.default_rng(perm_seed).permutation(df.columns[:-1]))
    res = fsdms(df[cols + ["class"]], "class")
    assert set(res.sequence[:4]) == set(CORE)


# ---------------------------------------------------------------------------
# Algorithms 1-3 against brute force, and Theorem 4
# ---------------------------------------------------------------------------


def strongly_relevant(df, a, feats, y):
    """Definition 2 on the empirical distribution: P(Y | a, S) != P(Y | S) somewhere."""
    rest = [f for f in feats if f != a]
    groups = df.groupby(rest) if rest else [((), df)]
    for _, g in groups:
        table = pd.crosstab(g[a], g[y], normalize="index")
        if (table.max(axis=0) - table.min(axis=0)).max() > 1e-12:
            return True
    return False


def random_table(seed, n, d, theta):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, d))
    y = (x[:, 0] & x[:, 1]) | (rng.random(n) < 0.15)
    df = pd.DataFrame(x, columns=[f"X{j}" for j in range(d)])
    if d > 3:
        df["X3"] = df["X0"]  # an exact copy: X0 stops being strongly relevant
    if theta is not None:
        df["X2"] = rng.normal(size=n) + 2.0 * y
    df["y"] = y.astype(int)
    return df


def check_against_brute_force(df, alpha, theta):
    feats = [c for c in df.columns if c != "y"]
    res = fsdms(df, "y", alpha=alpha, theta=theta, full=True)

    def dep(cols):  # D(empty) = 0 (Theorem 2); dependency() refuses an empty set
        return dependency(df, list(cols), "y", theta=theta) if cols else 0.0

    full = dep(feats)
    minus = {a: dep([f for f in feats if f != a]) for a in feats}
    a1 = tuple(a for a in feats if full > minus[a])
    b2 = tuple(b for b in feats if b not in a1 and all(
        minus[m] > dep([f for f in feats if f not in (m, b)]) for m in feats if m != b))
    assert res.A1 == a1
    assert res.B2 == b2
    assert set(res.C3) == set(feats) - set(a1) - set(b2)
    # Theorem 4: every member of A1 is strongly relevant (Definition 2, discrete data)
    for a in res.A1 if theta is None else ():
        assert strongly_relevant(df, a, feats, "y")
    # Algorithm 3: A1, then B2, then C3; each step the best gain, recomputed from scratch
    order = {"A1": 0, "B2": 1, "C3": 2}
    assert list(res.ranking["set"].map(order)) == sorted(res.ranking["set"].map(order))
    chosen = []
    for _, row in res.ranking.iterrows():
        cands = [f for f in getattr(res, row["set"]) if f not in chosen]
        gains = {a: (dep(chosen + [a]) - dep(chosen))
                 + alpha * (dep([f for f in feats if f not in chosen])
                            - dep([f for f in feats if f not in chosen + [a]]))
                 for a in cands}
        assert row["gain"] == pytest.approx(gains[row["feature"]], abs=1e-12)
        assert row["gain"] == pytest.approx(max(gains.values()), abs=1e-12)
        chosen.append(row["feature"])
        assert row["dependency"] == pytest.approx(dep(chosen), abs=1e-12)
    return res


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(12, 60), d=st.integers(2, 5),
       alpha=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_discrete_algorithms_match_brute_force(seed, n, d, alpha):
    df = random_table(seed, n, d, None)
    if df["y"].nunique() < 2:
        return
    check_against_brute_force(df, alpha, None)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(12, 50), d=st.integers(3, 5),
       theta=st.sampled_from([0.1, 0.3, 0.6]))
def test_numerical_algorithms_match_brute_force(seed, n, d, theta):
    df = random_table(seed, n, d, theta)
    if df["y"].nunique() < 2:
        return
    check_against_brute_force(df, 1.0, theta)


def test_strongly_relevant_found_with_copy():
    """X1 is needed and unique; X0 has an exact copy X3, so only X1 is in A1."""
    df = random_table(7, 400, 5, None)
    res = check_against_brute_force(df, 1.0, None)
    assert res.A1 == ("X1",)


def test_numerical_wine_feature_subset():
    from mbstat.datasets import load_wine

    wine = load_wine()
    feats = ["alcohol", "flavanoids", "color_intensity", "proline", "hue"]
    res = fsdms(wine, "class", theta=0.14, candidates=feats, full=True)
    assert set(res.sequence) == set(feats)
    assert res.dependency_all == dependency(wine, feats, "class", theta=0.14)
    assert res.theta == 0.14 and "Definition 9" in str(res.summary())


# ---------------------------------------------------------------------------
# Options, determinism, data hygiene
# ---------------------------------------------------------------------------


def test_k_and_default_rule():
    df = make_corral("corral", seed=0)
    assert fsdms(df, "class", k=2).selected == ("A0", "A1")
    assert fsdms(df, "class", k=0).selected == ()
    res = fsdms(df, "class")
    assert res.params["k"] == 4 and "shortest prefix" in res.rule


def test_deterministic_and_data_untouched():
    df = make_corral("corral47", seed=2)
    before = df.copy()
    a, b = fsdms(df, "class"), fsdms(df, "class")
    assert a.sequence == b.sequence
    pd.testing.assert_frame_equal(a.ranking, b.ranking)
    pd.testing.assert_frame_equal(df, before)


def test_candidates_is_the_argument_features_its_deprecated_alias():
    """fsdms and wfsdms take ``candidates=`` as every other learner does (the same checks as
    iamb's); ``features=`` still works, with a FutureWarning naming candidates= that points
    at the caller's line; both together are refused."""
    import warnings

    from mbstat import iamb

    df = make_corral("corral", seed=0)
    chosen = ["A0", "A1", "B0", "I"]
    new = fsdms(df, "class", candidates=chosen, full=True)
    assert set(new.sequence) == set(chosen) and new.n_candidates == 4
    with pytest.warns(FutureWarning, match=r"features= is deprecated.*use candidates=") as rec:
        old = fsdms(df, "class", features=chosen, full=True)
    assert rec[0].filename == __file__
    assert old.sequence == new.sequence
    pd.testing.assert_frame_equal(old.ranking, new.ranking)
    for bad, message in (([], "candidates must name at least one"),
                         (["class"], "candidates include the target"),
                         (["nope"], "candidates: unknown variable 'nope'")):
        for learner in (iamb, fsdms):
            with pytest.raises(ValueError, match=message):
                learner(df, "class", candidates=bad)
    for learner in (fsdms, wfsdms):
        with pytest.raises(TypeError, match=r"candidates= only; features= is its deprecated"):
            learner(df, "class", candidates=chosen, features=chosen)
    w_new = wfsdms(df, "class", candidates=chosen, cv=3, seed=0)
    with pytest.warns(FutureWarning, match="wfsdms\\(\\): features= is deprecated"):
        w_old = wfsdms(df, "class", features=chosen, cv=3, seed=0)
    assert w_old.selected == w_new.selected and set(w_new.fsdms.sequence) == set(chosen)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name: no warning, also inside wfsdms
        wfsdms(df, "class", candidates=chosen, cv=3, seed=0, ranking=fsdms(df, "class"))


def test_bad_input():
    df = make_corral("corral", seed=0)
    num = df.assign(I=df["I"] + 0.5)
    with pytest.raises(ValueError, match="theta"):
        fsdms(df, "class", theta=0)
    with pytest.raises(ValueError, match="theta"):
        fsdms(df, "class", theta=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        fsdms(df, "class", alpha=-0.1)
    with pytest.raises(ValueError, match="alpha"):
        fsdms(df, "class", alpha=float("inf"))
    with pytest.raises(ValueError, match=r"theta=0\.14"):
        fsdms(num, "class")  # a continuous column and no theta: say what to pass
    with pytest.raises(ValueError, match="single class"):
        fsdms(df.assign(**{"class": 0}), "class")
    with pytest.raises(ValueError, match="k must be"):
        fsdms(df, "class", k=7)
    with pytest.raises(ValueError, match="at least one"):
        fsdms(df, "class", candidates=[])
    with pytest.raises(ValueError, match="cv must be"):
        wfsdms(df, "class", cv=1)
    with pytest.raises(TypeError, match="estimator"):
        wfsdms(df, "class", estimator="svm")


# ---------------------------------------------------------------------------
# Results and WFSDMS
# ---------------------------------------------------------------------------


def test_result_printing_and_plot():
    res = fsdms(make_corral("corral", seed=0), "class")
    assert isinstance(res, FSDMSResult)
    assert repr(res).startswith("<FSDMSResult fsdms: class <- {A0, A1, B0, B1} (4 of 6)")
    text = str(res.summary())
    for part in ("FSDMS", "Definition 7", "strongly relevant", "Ranking", "Selected: 4"):
        assert part in text
    assert res.ranking.index.name == "rank"
    ax = res.plot()
    assert ax.get_xlabel() == "rank"
    before = res.alpha
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'alpha'"):
        res.alpha = 2.0  # frozen
    assert res.alpha == before


def test_wfsdms_corral():
    from sklearn.tree import DecisionTreeClassifier

    res = wfsdms(make_corral("corral", seed=0), "class",
                 estimator=DecisionTreeClassifier(random_state=0), cv=5, seed=0)
    assert isinstance(res, WFSDMSResult)
    assert res.selected == CORE and res.best_k == 4
    assert res.accuracy == 1.0
    assert res.scores.index.name == "n_features" and len(res.scores) == 6
    assert res.accuracy_all == res.scores["accuracy"].iloc[-1]
    assert res.scores["accuracy"].iloc[:3].max() < 1.0
    assert "Best: the first 4 features" in str(res.summary())
    assert res.plot().get_ylabel() == "cross-validated accuracy"
    again = wfsdms(make_corral("corral", seed=0), "class", cv=5, seed=0, max_features=3)
    assert len(again.scores) == 3


@pytest.mark.parametrize("kwargs, error, match", [
    ({"estimator": LinearRegression()}, TypeError,
     r"estimator must be a scikit-learn classifier .*LinearRegression"),
    ({"estimator": LinearRegression}, TypeError,
     r"estimator must be an estimator object, not the class LinearRegression"),
    ({"estimator": make_pipeline(StandardScaler(), LinearRegression())}, TypeError,
     "estimator must be a scikit-learn classifier"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs must be an integer; got float 1.5"),
    ({"n_jobs": 0}, ValueError, r"n_jobs must be a positive number of workers or -1"),
    ({"n_jobs": -2}, ValueError, r"n_jobs must be"),
    ({"cv": 5000}, ValueError,
     r"cv = 5000 folds .* 1024 rows and its largest class has 576: use cv <= 576"),
    ({"cv": 577}, ValueError, r"cv = 577 folds"),
])
def test_wfsdms_names_the_bad_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        wfsdms(make_corral("corral", seed=0), "class", **{"cv": 3, **kwargs})


def test_wfsdms_accepts_classifier_pipelines_and_n_jobs():
    corral = make_corral("corral", seed=0)
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    base = wfsdms(corral, "class", estimator=pipe, cv=3, seed=0, max_features=2)
    assert np.isfinite(base.scores["accuracy"]).all()
    for n_jobs in (None, -1, 2):
        res = wfsdms(corral, "class", cv=3, seed=0, max_features=2, n_jobs=n_jobs,
                     ranking=base.fsdms)
        assert np.isfinite(res.scores["accuracy"]).all()


def test_fsdms_data_without_candidates_is_refused():
    corral = make_corral("corral", seed=0)
    with pytest.raises(ValueError, match="no candidate variables besides the target 'class'"):
        fsdms(corral[["class"]], "class")


# ---------------------------------------------------------------------------
# Vignettes (quick mode) and GPU
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, expect", [
    ("fsdms_corral.py", ["CorrAL-47", "FSDMS", "greedy MI", "R"]),
    ("fsdms_uci.py", ["wine", "wdbc", "SVM", "all features"]),
])
def test_vignette_quick(tmp_path, run_vignette, name, expect):
    out = run_vignette(name, timeout=120)
    for word in expect:
        assert word in out
    assert list(tmp_path.glob("*.png"))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("theta", [None, 0.14])
def test_gpu_matches_cpu(theta):
    from mbstat.datasets import load_wine

    df = make_corral("corral47", seed=0) if theta is None else load_wine()
    target = "class"
    cpu = fsdms(df, target, theta=theta, backend="cpu")
    gpu = fsdms(df, target, theta=theta, backend="gpu")
    assert gpu.backend == "cupy"
    pd.testing.assert_frame_equal(cpu.ranking, gpu.ranking)


def test_near_unique_column_warned_and_result_unchanged():
    """An independent ID-like column (300 levels, 500 rows) determines the class in the
    rough-set measure: fsdms ranks it first (the measure's property, kept) and says why."""
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame(rng.integers(0, 2, (n, 3)), columns=["x1", "x2", "x3"])
    df["id"] = rng.integers(0, 300, n)
    df["y"] = (df["x1"] + df["x2"] + (rng.random(n) < 0.1)) % 2
    with pytest.warns(UserWarning, match=r"fewer than 5 rows per value on 500 rows: 'id' "
                                         r"\(\d+ values\)\. A near-unique column"):
        res = fsdms(df, "y")
    assert res.sequence[0] == "id"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = fsdms(df.drop(columns="id"), "y")
        fsdms(make_corral("corral", seed=0), "class")
    assert "id" not in quiet.sequence


# ---------------------------------------------------------------------------
# Wide data: the early stop and the close-pairs engine give the paper's answers
# ---------------------------------------------------------------------------


def close_table(seed, n, d, levels):
    """Few rows, features with few ones and copies: many pairs of samples at distance 0, 1
    and 2, so that every branch of the close-pairs engine is used."""
    rng = np.random.default_rng(seed)
    x = (rng.random((n, d)) < 0.2) * rng.integers(1, levels, size=(n, d))
    x[:, 1] = x[:, 0]
    if d > 4:
        x[:, 4] = np.where(rng.random(n) < 0.1, 1 - np.minimum(x[:, 3], 1), x[:, 3])
    y = ((x[:, 0] > 0) ^ (x[:, 2] > 0)) | (rng.random(n) < 0.1)
    df = pd.DataFrame(x, columns=[f"X{j}" for j in range(d)])
    df["y"] = y.astype(int)
    return df


@pytest.mark.filterwarnings("ignore:fsdms. features with fewer")  # few rows per value here
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(8, 40), d=st.integers(3, 9),
       levels=st.sampled_from([2, 3]), alpha=st.sampled_from([0.0, 1.0, 2.0]))
def test_close_pairs_engine_equals_the_papers_loop(seed, n, d, levels, alpha):
    """Algorithms 1-3 through close pairs of samples (the wide-data engine) against the
    paper's loops (the column-state engine): the same sets, the same full ranking."""
    mod = sys.modules["mbstat.algorithms.fsdms"]  # the module (the package exports the function)

    df = close_table(seed, n, d, levels)
    if df["y"].nunique() < 2:
        return
    out = {}
    for pairs in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(mod, "_PAIRS", pairs)
            out[pairs] = fsdms(df, "y", alpha=alpha, full=True)
    a, b = out[False], out[True]
    assert (a.A1, a.B2, a.C3) == (b.A1, b.B2, b.C3)
    pd.testing.assert_frame_equal(a.ranking, b.ranking)
    assert a.selected == b.selected


def test_close_pairs_engine_against_brute_force(monkeypatch):
    mod = sys.modules["mbstat.algorithms.fsdms"]  # the module (the package exports the function)

    monkeypatch.setattr(mod, "_PAIRS", True)
    for seed in range(4):
        df = close_table(seed, 30, 6, 3)
        check_against_brute_force(df, 1.0, None)


def test_early_stop_is_the_prefix_of_the_full_ranking():
    df = make_corral("corral47", seed=0)
    short, full = fsdms(df, "class"), fsdms(df, "class", full=True)
    steps = len(short.ranking)
    assert steps < len(full.ranking) == 47
    pd.testing.assert_frame_equal(short.ranking, full.ranking.iloc[:steps])
    assert short.selected == full.selected
    assert short.ranking["dependency"].iloc[-1] == short.dependency_all
    assert "full=True" in short.stopped and full.stopped == ""
    assert "Ranking: ranked" in str(short.summary())
    assert fsdms(df, "class", k=20).ranking.shape[0] == 20  # k steps at least
    assert short.complete and full.complete


def test_wide_binary_fsdms_uses_pairs_and_finds_members():
    from mbstat.datasets import make_wide_binary

    df = make_wide_binary(300, 400, seed=2)
    res = fsdms(df, "y")
    assert len(res.sequence) < 400 and res.A1 == res.B2 == ()
    assert res.ranking["dependency"].iloc[-1] == res.dependency_all


def test_fsdms_interrupt_returns_the_ranking_so_far(monkeypatch):
    from mbstat.dependency import _DiscreteEngine

    calls = {"n": 0}
    count_add = _DiscreteEngine.count_add

    def interrupted(self, *args):
        calls["n"] += 1
        if calls["n"] > 3:
            raise KeyboardInterrupt
        return count_add(self, *args)

    monkeypatch.setattr(_DiscreteEngine, "count_add", interrupted)
    res = fsdms(make_corral("corral47", seed=0), "class", full=True)
    assert len(res.ranking) == 3 and not res.complete
    assert "interrupted" in res.stopped
    assert "interrupted (KeyboardInterrupt) after 3 steps of 47" in str(res.summary())


def test_wfsdms_records_the_seed_it_drew():
    # seed=None draws a seed, recorded and printed: the run replays with it
    data = make_corral("corral", seed=0)
    first = wfsdms(data, "class", cv=5)
    seed = first.params["seed"]
    assert isinstance(seed, int) and f"seed = {seed}" in str(first.summary())
    again = wfsdms(data, "class", cv=5, seed=seed)
    pd.testing.assert_frame_equal(first.scores, again.scores)
