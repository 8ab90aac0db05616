"""PPFS (Hassan et al., Algorithm 2): search logic, blanket recovery, aggregation, results."""
from __future__ import annotations

import dataclasses

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from mbstat.algorithms.ppfs import _aggregate, _vote, ppfs, search
from mbstat.bn import BayesianNetwork, random_dag
from mbstat.ci.engine import CITester
from mbstat.ci.models.estimators import xgboost_cuda_available
from mbstat.results.base import SelectionResult

SMALL_XGB = {"n_estimators": 20, "max_depth": 3}


def toy_network() -> BayesianNetwork:
    """S -> A -> T <- B, T -> C, T -> D <- S (S: a spouse that is also a grandparent);
    G -> H and I are unrelated. MB(T) = {A, B, C, D, S}."""
    half = np.array([0.5, 0.5])
    flip = lambda p: np.array([[p, 1 - p], [1 - p, p]])  # noqa: E731
    noisy_or = np.array([[[0.9, 0.1], [0.4, 0.6]], [[0.4, 0.6], [0.05, 0.95]]])
    parents = {"S": (), "A": ("S",), "B": (), "T": ("A", "B"), "C": ("T",), "D": ("T", "S"),
               "G": (), "H": ("G",), "I": ()}
    cpts = {"S": half, "A": flip(0.8), "B": half, "T": noisy_or, "C": flip(0.85),
            "D": noisy_or, "G": half, "H": flip(0.8), "I": half}
    return BayesianNetwork(name="toy", nodes=tuple(parents), parents=parents,
                           levels={v: ("no", "yes") for v in parents}, cpts=cpts)


def collider_network() -> BayesianNetwork:
    """T -> C <- S, T -> D, G -> H: S is a spouse of T independent of it on its own.
    MB(T) = {C, D, S}."""
    half = np.array([0.5, 0.5])
    flip = lambda p: np.array([[p, 1 - p], [1 - p, p]])  # noqa: E731
    both = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.2, 0.8], [0.5, 0.5]]])  # C | T, S
    parents = {"T": (), "S": (), "C": ("T", "S"), "D": ("T",), "G": (), "H": ("G",)}
    cpts = {"T": half, "S": half, "C": both, "D": flip(0.85), "G": half, "H": flip(0.8)}
    return BayesianNetwork(name="collider", nodes=tuple(parents), parents=parents,
                           levels={v: ("no", "yes") for v in parents}, cpts=cpts)


def regression_frame(seed: int, n: int = 400) -> pd.DataFrame:
    """y depends on x0, x1, x2 (nonlinearly) out of 20 independent features."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 20)), columns=[f"x{i}" for i in range(20)])
    df["y"] = 2 * df.x0 + 2 * np.sin(2 * df.x1) + df.x2 ** 2 + 0.5 * rng.normal(size=n)
    return df


# ------------------------------------------------------------- search logic
def oracle_screen(tester, alpha=0.05):
    """The spouse phase's screen with the tester's test: the members each candidate
    depends on given the target."""
    def screen(target, members, others):
        near = {}
        for m in members:
            hit = tester.test_many(others, m, (target,)).pvalue <= alpha
            for c in np.asarray(others, dtype=object)[hit]:
                near.setdefault(c, []).append(m)
        return {c: near[c] for c in others if c in near}
    return screen


def test_search_with_the_oracle_on_100_random_dags():
    """With a perfect CI test the paper's growth/shrink search (Algorithm 2, no spouse
    phase) returns the true blanket of every node whose blanket members are all marginally
    dependent on it. Growth conditions on the empty set, so a spouse d-separated from the
    target by the empty set never enters; the parents and children always do. With the
    spouse phase (ppfs(spouses=True), the default) the search returns the true blanket of
    every node of the first 50 DAGs (the spouse phase's tests cost 2.5x the search's),
    those with a spouse hidden from growth included."""
    exact = hidden = added = spousal = 0
    for seed in range(100):  # 100 DAGs of 2 to 30 nodes (1,752 targets)
        rng = np.random.default_rng(seed)
        dag = random_dag(int(rng.integers(2, 31)), seed=seed)
        tester = CITester(dag, "oracle")
        screen = oracle_screen(tester)
        for target in dag.nodes:
            cands = [v for v in dag.nodes if v != target]
            blanket, grow, shrink, trace = search(tester, target, cands, 0.05)
            mb = dag.markov_blanket(target)
            assert set(shrink) == {c for c in cands if not dag.d_separated(c, target)}
            if all(not dag.d_separated(m, target) for m in mb):
                assert set(blanket) == mb, (seed, target)
                exact += 1
            else:
                assert dag.parents_children(target) <= set(blanket), (seed, target)
                hidden += 1
            if seed >= 50:
                continue
            blanket, _, given, trace = search(tester, target, cands, 0.05, screen)
            assert set(blanket) == mb and set(blanket) <= set(given), (seed, target)
            added += sum(1 for phase, action, _, _ in trace
                         if phase == "spouse" and action == "add")
            spousal += mb != set(d for d in mb if not dag.d_separated(d, target))
    assert exact > 900 and hidden > 500  # 1,000 and 752
    assert spousal > 250 and added >= spousal


def test_spouse_phase_finds_a_spouse_that_growth_cannot_see():
    """A spouse independent of the target on its own (S in T -> C <- S) never passes
    growth (Eq. 5), so Algorithm 2 (spouses=False) misses it; the spouse phase screens it
    (S depends on C given T), tests it given C and given the blanket, and keeps it."""
    bn = collider_network()
    df = bn.sample(1000, seed=3)
    kw = dict(K=0, seed=0, model_params=SMALL_XGB)
    paper = ppfs(df, "T", spouses=False, **kw)
    assert set(paper.selected) == {"C", "D"} and paper.params["spouses"] is False
    assert "spouses = FALSE" in paper.call and "spouse" not in set(paper.trace["phase"])
    res = ppfs(df, "T", **kw)
    assert set(res.selected) == bn.markov_blanket("T") == {"C", "D", "S"}
    spouse = res.trace[res.trace["phase"] == "spouse"]
    assert spouse.set_index("feature").loc["S", "action"] == "add"
    assert res.importance.loc["S", "grow"] < -np.log(0.05) < res.importance.loc["S", "shrink"]
    assert "spouse" in set(res.tests["phase"]) and res.pvalues.loc["S", "selected"]
    with pytest.raises(TypeError, match="spouses must be True or False"):
        ppfs(df, "T", spouses="yes", **kw)


def test_aggregation_equations_6_to_8():
    blankets = (("a", "b"), ("a", "c", "d"), ("a", "b"), ())
    freq, z = _aggregate(blankets, [1, 2, 3, 4])
    assert freq.to_dict() == {"a": 3, "b": 2, "c": 1, "d": 1}
    np.testing.assert_allclose(z.to_numpy(), [2.5, 5 / 3, 2.5, 0.0])
    assert z.index.name == "fold" and freq.index.name == "feature"
    assert int(np.argmax(z.to_numpy())) == 0  # ties: the first fold


# --------------------------------------------------------------- recovery
@pytest.mark.parametrize("model, params", [("tree", None), ("xgboost", SMALL_XGB)])
def test_recovers_the_blanket_of_a_sampled_network(model, params):
    bn = toy_network()
    df = bn.sample(1500, seed=0)
    res = ppfs(df, "T", test="ppi", B=10, K=0, model=model, model_params=params, seed=0)
    assert set(res.selected) == bn.markov_blanket("T") == {"A", "B", "C", "D", "S"}
    assert res.task == "classification" and res.chosen_fold is None


def test_recovers_three_of_twenty_in_a_regression():
    res = ppfs(regression_frame(1), "y", test="ppi", B=10, K=0, model="tree", seed=1)
    assert set(res.selected) == {"x0", "x1", "x2"} and res.task == "regression"


def test_aggregation_drops_a_rare_false_positive():
    # without aggregation this seed keeps two noise features (x15, x18)
    df = regression_frame(10)
    single = ppfs(df, "y", test="ppi", B=10, K=0, model_params=SMALL_XGB, seed=10)
    assert set(single.selected) == {"x0", "x1", "x2", "x15", "x18"}
    res = ppfs(df, "y", test="ppi", B=10, K=5, model_params=SMALL_XGB, seed=10, n_jobs=2,
               merge="paper")
    assert set(res.selected) == {"x0", "x1", "x2"}
    assert len(res.fold_blankets) == 5 and res.zscores.loc[res.chosen_fold] == 5
    assert res.frequency[["x0", "x1", "x2"]].tolist() == [5, 5, 5]
    vote = ppfs(df, "y", test="ppi", B=10, K=5, model_params=SMALL_XGB, seed=10, n_jobs=2)
    assert vote.fold_blankets == res.fold_blankets and vote.chosen_fold is None
    assert set(vote.selected) == {f for f, c in res.frequency.items() if c >= 3}
    assert vote.importance.loc[list(vote.selected), "folds"].min() >= 3 and vote.votes == 3


def test_mixed_categorical_and_continuous_features():
    rng = np.random.default_rng(2)
    n = 600
    colour = rng.choice(["red", "green", "blue"], size=n)
    df = pd.DataFrame({"colour": colour, "u": rng.normal(size=n), "v": rng.normal(size=n),
                       "k": rng.integers(0, 4, size=n)})
    score = pd.Series(colour).map({"red": 1.5, "green": -1.5, "blue": 0.0}) + 1.5 * df.u
    df["y"] = np.where(score + 0.5 * rng.normal(size=n) > 0, "yes", "no")
    for model, params in (("xgboost", SMALL_XGB), ("tree", None)):
        res = ppfs(df, "y", test="ppi", B=10, K=0, model=model, model_params=params, seed=0)
        assert set(res.selected) == {"colour", "u"}, model


# ---------------------------------------------------------------- results
@pytest.fixture(scope="module")
def wdbc_result():
    from mbstat.datasets import load_wdbc

    return ppfs(load_wdbc(), "class", test="ppi", B=5, K=3, model="tree", seed=0,
                merge="paper")


def test_result_object(wdbc_result):
    res = wdbc_result
    assert isinstance(res, SelectionResult) and res.method == "ppfs"
    assert res.blanket == res.selected and len(res) == len(res.selected) > 0
    assert repr(res).startswith("<PPFSResult ppfs: class <- {")
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.selected = ()
    with pytest.raises(TypeError):
        res.params["alpha"] = 0.1
    imp = res.importance
    assert imp.index.name == "feature" and len(imp) == 30
    assert list(imp.columns) == ["grow", "shrink", "pvalue", "increase", "folds",
                                 "selected"]
    assert set(imp.index[imp["selected"]]) == set(res.selected)
    assert imp["selected"].iloc[:len(res.selected)].all()  # selected first
    assert (imp.loc[list(res.selected), "pvalue"] <= 0.05).all()
    assert res.fold_blankets[list(res.zscores.index).index(res.chosen_fold)] == res.selected
    assert res.zscores.idxmax() == res.chosen_fold
    assert res.fold_importance.shape == (30, 3)
    assert {"fold", "phase", "x", "z", "pvalue"} <= set(res.tests.columns)
    assert res.tests.index.name == "test" and len(res.tests) == res.n_tests
    assert list(res.trace.columns[:4]) == ["fold", "phase", "action", "feature"]
    assert res.n_fits >= 3 * 30 * 5 and res.device == "cpu"
    text = str(res.summary())
    for part in ("predictive permutation feature selection", 'target = "class"',
                 "Aggregation:  3 folds; blanket of fold", "the paper's Eqs. 6-8",
                 "Fold blankets (z: the paper's Eqs. 6-8):",
                 "PPI tests (5 splits each, test size 0.2",
                 "Signif. codes", "decision tree (fully grown) on cpu"):
        assert part in text
    for kind in ("importance", "folds"):
        assert isinstance(res.plot(kind=kind), matplotlib.axes.Axes)
    with pytest.raises(ValueError, match="kind must be one of"):
        res.plot(kind="trace")


def test_vote_by_hand():
    """The vote keeps the features in at least m fold blankets; its importance columns are
    the medians over the folds (a shrink score over the folds that ran a shrink test)."""
    cands = ["a", "b", "c", "d"]

    def fold(grow, shrink, blanket):
        imp = pd.DataFrame({"grow": grow, "shrink": shrink, "pvalue": np.exp(-np.array(grow)),
                            "increase": [0.1, 0.2, 0.3, 0.4],
                            "selected": [c in blanket for c in cands]},
                           index=pd.Index(cands, name="feature"))
        return {"importance": imp, "blanket": blanket}

    folds = [fold([5, 4, 1, 0.5], [6, 3, np.nan, np.nan], ["a", "b"]),
             fold([7, 2, 4, 0.1], [8, np.nan, 0.5, np.nan], ["a"]),
             fold([6, 5, 3, 0.2], [7, 4, 4, np.nan], ["a", "b", "c"])]
    counts = pd.Series([3, 2, 1, 0], index=cands)
    imp, selected = _vote(folds, cands, counts, 2)
    assert selected == ("a", "b")
    assert imp.loc["a", "grow"] == 6 and imp.loc["a", "shrink"] == 7
    assert imp.loc["b", "shrink"] == 3.5 and imp.loc["c", "shrink"] == 2.25
    assert np.isnan(imp.loc["d", "shrink"]) and imp.loc["d", "grow"] == 0.2
    assert list(imp.index) == ["a", "b", "c", "d"]
    assert _vote(folds, cands, counts, 3)[1] == ("a",)


def test_merge_option_is_checked_and_reported():
    df = regression_frame(4, n=300)
    kw = dict(test="ppi", B=5, K=4, model="tree", seed=2)
    vote = ppfs(df, "y", **kw)
    assert vote.merge == "vote" and vote.votes == 3 and vote.chosen_fold is None
    text = str(vote.summary())
    assert "majority vote: the features in at least 3 of the 4 fold blankets" in text
    assert "E[false members] <= 1.33 x one fold's" in text
    assert all(f"{vote.frequency[f]}/4" in text for f in vote.selected)
    share = ppfs(df, "y", merge=0.25, **kw)
    assert share.votes == 1
    assert set(share.selected) == set().union(*map(set, share.fold_blankets))
    assert set(vote.selected) <= set(share.selected)
    assert vote.pvalues.index.equals(vote.importance.index)
    with pytest.raises(ValueError, match="merge must be one of"):
        ppfs(df, "y", merge="union", **kw)
    with pytest.raises(ValueError, match="merge must be in"):
        ppfs(df, "y", merge=0.0, **kw)
    with pytest.raises(TypeError, match="merge must be"):
        ppfs(df, "y", merge=True, **kw)


@pytest.mark.parametrize("test", ["crt", "loco", "ppi"])
def test_reports_name_the_test_from_the_test_object(test):
    """summary() names the test and its settings as the test object does (issue 27)."""
    from mbstat.ci import CRTTest, LOCOTest, PPITest

    df = regression_frame(6, n=200)
    res = ppfs(df, "y", test=test, model="tree", K=0, seed=1, candidates=["x0", "x5"],
               **({"B": 99} if test == "crt" else {"B": 5} if test == "ppi" else {}))
    cls = {"crt": CRTTest, "loco": LOCOTest, "ppi": PPITest}[test]
    made = cls(model="tree", **({"B": 99} if test == "crt" else {"B": 5} if test == "ppi"
                                else {}))
    text = str(res.summary())
    assert f"{made.label}s ({made.settings_text()}, alpha = 0.05)" in text
    assert made.increase_note in text
    others = {"crt": "holdout randomization", "loco": "LOCO", "ppi": "PPI test"}
    assert not any(others[t] in text for t in others if t != test)


def test_same_seed_same_result_whatever_the_workers():
    df = regression_frame(3, n=250)
    kw = dict(test="ppi", B=6, K=3, model="tree", seed=11)
    one = ppfs(df, "y", **kw)
    threads = ppfs(df, "y", n_jobs=2, **kw)
    assert one.selected == threads.selected
    pd.testing.assert_frame_equal(one.importance, threads.importance)
    pd.testing.assert_series_equal(one.zscores, threads.zscores)
    other = ppfs(df, "y", **{**kw, "seed": 12})
    assert not one.fold_importance.equals(other.fold_importance)


def test_idle_fold_workers_lend_themselves_without_changing_the_crt_result():
    """With the CRT on threads, a worker with no fold left lends itself to the folds still
    running (their waves of parts take it): never more workers at once than n_jobs, and the
    result of one worker, log and blanket, bit for bit (issue 27)."""
    import threading

    from mbstat.algorithms.ppfs import _Spare
    from mbstat.ci.models import crt
    from mbstat.datasets import sample_network

    spare = _Spare(folds=5, workers=2, jobs=1)
    spare.start()
    spare.start()
    for _ in range(3):
        spare.finish()
        assert spare() == 0  # a fold still to start takes the idle worker
        spare.start()
    assert spare() == 0  # the last two folds running on the two workers
    spare.finish()
    assert spare() == 1  # one fold left: the idle worker is lent to it
    spare = _Spare(folds=3, workers=3, jobs=2)
    for _ in range(3):
        spare.start()
    spare.finish()
    assert spare() == 1  # one worker's 2 threads shared by the 2 folds still running
    data = sample_network("alarm", 900, seed=4)
    lock, now, most, lent = threading.Lock(), [0], [0], []
    part, jobs = crt._part_pvalue, crt.CRTEngine._jobs

    def counted(f):
        def run(*a, **k):
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            try:
                return f(*a, **k)
            finally:
                with lock:
                    now[0] -= 1
        return run

    crt._part_pvalue = counted(part)
    crt.CRTEngine._jobs = lambda self: lent.append(jobs(self)) or lent[-1]
    try:
        both = ppfs(data, "HR", seed=2, n_jobs=2, progress=False)
    finally:
        crt._part_pvalue, crt.CRTEngine._jobs = part, jobs
    one = ppfs(data, "HR", seed=2, n_jobs=1, progress=False)
    assert max(lent) == 2 and most[0] <= 2
    assert one.selected == both.selected
    pd.testing.assert_frame_equal(one.tests, both.tests)


def test_candidates_and_caller_data_untouched():
    df = regression_frame(5, n=200)
    copy = df.copy()
    res = ppfs(df, "y", test="ppi", B=5, K=0, model="tree", candidates=["x0", "x3", "x4"],
               seed=0)
    pd.testing.assert_frame_equal(df, copy)
    assert set(res.importance.index) == {"x0", "x3", "x4"} and res.n_candidates == 3


@pytest.mark.parametrize("kwargs, error, match", [
    ({"K": -1}, ValueError, "K must be >= 0"),
    ({"K": 150}, ValueError, "K = 150 folds need at least 300 rows"),
    ({"alpha": 1.5}, ValueError, "alpha must be in"),
    ({"B": 3}, ValueError, "B must be >= 5"),
    ({"test_size": 0}, ValueError, "test_size must be in"),
    ({"model": "svm"}, ValueError, "model must be one of"),
    ({"candidates": ["y", "x1"]}, ValueError, "candidates include the target"),
    ({"candidates": []}, ValueError, "at least one"),
    ({"task": "classification"}, ValueError, "regression target"),
])
def test_bad_input(kwargs, error, match):
    df = regression_frame(0, n=200)
    with pytest.raises(error, match=match):
        ppfs(df, "y", **{"test": "ppi", "B": 5, "K": 0, "model": "tree", **kwargs})


@pytest.mark.gpu
def test_ppfs_on_the_gpu():
    if not xgboost_cuda_available():
        pytest.skip("needs a CUDA build of XGBoost, CuPy and a GPU")
    res = ppfs(regression_frame(1, n=2000), "y", test="ppi", B=10, K=0, model_params=SMALL_XGB,
               seed=1, device="cuda")
    assert res.device.startswith("cuda")
    assert set(res.selected) == {"x0", "x1", "x2"}


# ---------------------------------------------------------------- vignette
def test_vignette_quick(tmp_path, run_vignette):
    out = run_vignette("ppfs_uci.py")
    for part in ("Downstream performance", "WDBC", "Wine", "diabetes", "PPFS", "IAMB",
                 "Features kept"):
        assert part in out
    assert (tmp_path / "ppfs_uci.png").stat().st_size > 10_000
    assert (tmp_path / "ppfs_wdbc_importance.png").stat().st_size > 10_000


def test_auto_task_is_the_same_for_a_frame_and_its_float_array():
    """Whole-number float labels are classes, as in scikit-learn's type_of_target."""
    from mbstat.datasets import load_wine

    wine = load_wine()
    frame = ppfs(wine, "class", test="ppi", B=5, K=2, model="tree", seed=0)
    array = ppfs(wine.to_numpy(), 13, test="ppi", B=5, K=2, model="tree", seed=0)
    assert frame.task == array.task == "classification"
    assert array.selected == tuple(f"V{list(wine.columns).index(f) + 1}" for f in frame.selected)


@pytest.mark.parametrize("y, task", [
    ([0.0, 1.0, 2.0] * 10, "classification"),
    ([0.0, 1.0] * 15, "classification"),
    ([0.0, 0.5, 1.0] * 10, "regression"),        # not whole numbers
    (list(range(30)), "regression"),              # whole but mostly distinct (> 50% of > 20)
    (list(range(10)) * 3, "classification"),
])
def test_infer_task_follows_scikit_learn(y, task):
    from mbstat.ci.models.estimators import infer_task

    assert infer_task(np.asarray(y, dtype=float)) == task


def test_whole_number_float_target_with_many_values_stays_a_regression():
    df = regression_frame(0, n=200)
    df["y"] = np.round(df["y"] * 100)  # whole numbers, nearly all distinct
    assert ppfs(df, "y", test="ppi", B=5, K=0, model="tree", seed=0).task == "regression"


def test_defaults_are_the_crt_and_the_vote():
    """ppfs's defaults (issue 27): the calibrated CRT and the majority vote over K = 5 folds;
    the vote's p-value table gives, per candidate, the median over the folds of its deciding
    tests' statistics."""
    df = regression_frame(7, n=300)
    res = ppfs(df, "y", seed=0, candidates=["x0", "x1", "x5", "x6"], model_params=SMALL_XGB)
    assert res.test == "crt" and res.params["test"] == "crt" and res.merge == "vote"
    assert res.votes == 3 and res.chosen_fold is None and len(res.fold_blankets) == 5
    assert {"x0", "x1"} <= set(res.selected) <= {"x0", "x1", "x5", "x6"}
    table, log = res.pvalues, res.tests
    log = log[log["phase"].isin(["grow", "shrink", "spouse"])].drop_duplicates(
        ["fold", "x"], keep="last")
    for feature in table.index:
        assert table.loc[feature, "statistic"] == pytest.approx(
            log.loc[log["x"] == feature, "statistic"].median())
    assert "holdout randomization tests" in str(res.summary())


@pytest.mark.parametrize("kw", [{}, {"K": 4}, {"merge": "paper"}, {"K": 1}])
def test_pvalues_log_pvalue_is_the_log_of_pvalue(kw):
    """log_pvalue was -(median shrink score over the folds that ran a shrink test), pvalue
    the median over all folds: b showed p 0.395 with log p -0.0. Both now summarize the
    same deciding tests, one per fold (an even K: the mean of the middle two p-values)."""
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(150, 3)), columns=list("abc"))
    X["y"] = (X.a > 0).astype(int)
    res = ppfs(X, "y", seed=0, progress=False, **kw)
    table = res.pvalues
    np.testing.assert_allclose(table["log_pvalue"], np.log(table["pvalue"]), rtol=1e-12)
    if kw == {}:
        assert table.loc["b", "pvalue"] == pytest.approx(0.39537, abs=1e-5)
        assert table.loc["b", "log_pvalue"] == pytest.approx(np.log(0.39537), abs=1e-4)


def test_log_median_keeps_the_precision_of_underflowing_pvalues():
    from mbstat.results.ppfs import _log_median

    assert _log_median([-3.0, np.nan, -1.0, -2.0]) == -2.0
    assert _log_median([-1.0, -3.0]) == pytest.approx(np.log((np.exp(-1) + np.exp(-3)) / 2))
    # p = e^-800 and e^-801 underflow to 0; the log of their mean does not
    assert _log_median([-800.0, -801.0]) == pytest.approx(
        -800 + np.log((1 + np.exp(-1)) / 2), rel=1e-15)
    assert np.isnan(_log_median([np.nan]))
