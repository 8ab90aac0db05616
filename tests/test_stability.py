"""stability() and arc_strengths(): frequencies against a hand loop over the same resamples,
the Meinshausen-Buhlmann threshold by hand, Wilson intervals against statsmodels, the same
result for any n_jobs, arguments refused before any resample runs, frozen results."""
from __future__ import annotations

import dataclasses
import importlib
import pickle

import joblib
import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat.datasets import sample_network

from mbstat.results.stability import mb_bound, mb_threshold, wilson_interval

stab = importlib.import_module("mbstat.stability")  # mbstat.stability is the function

FAST = {"calibration": "asymptotic"}  # plain chi-square p-values: fast and deterministic


@pytest.fixture(scope="module")
def alarm():
    return sample_network("alarm", 1000, seed=3)


@pytest.fixture(scope="module")
def hr(alarm):
    return mbstat.stability(alarm, "HR", R=30, seed=11, **FAST)


def hand_rows(seed, r, n, size, replace):
    """Resample r's rows as the docstring of mbstat.stability states the scheme."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r, 0)))
    rows = rng.integers(0, n, size=size) if replace else rng.choice(n, size=size,
                                                                     replace=False)
    return np.sort(rows)


@pytest.mark.parametrize("resample", ["subsample", "bootstrap"])
def test_frequencies_equal_a_hand_loop_over_the_same_resamples(alarm, resample):
    res = mbstat.stability(alarm, "HR", R=12, seed=5, resample=resample, **FAST)
    n = len(alarm)
    size = n if resample == "bootstrap" else n // 2
    assert res.size == size and res.n_rows == n
    counts = pd.Series(0, index=list(res.candidates))
    for r in range(12):
        rows = hand_rows(5, r, n, size, resample == "bootstrap")
        np.testing.assert_array_equal(res.resample_rows(r), rows)
        # the learner on a DataFrame of those rows, encoded afresh (same categories)
        found = mbstat.iamb(alarm.iloc[rows].reset_index(drop=True), "HR", **FAST).selected
        assert set(found) == set(res.selections.columns[res.selections.loc[r]])
        counts[list(found)] += 1
    table = res.table
    np.testing.assert_allclose(table["frequency"], (counts / 12)[table.index])
    assert (table["count"] == counts[table.index]).all()
    full = mbstat.iamb(alarm, "HR", **FAST).selected
    assert set(table.index[table["full"]]) == set(full)


def test_wilson_interval_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    k = np.array([0, 1, 7, 15, 29, 30])
    lower, upper = wilson_interval(k, 30)
    ref = proportion_confint(k, 30, alpha=0.05, method="wilson")
    np.testing.assert_allclose(lower, ref[0], atol=1e-12)
    np.testing.assert_allclose(upper, ref[1], atol=1e-12)


def test_meinshausen_buhlmann_threshold_by_hand(hr):
    sel = hr.selections.to_numpy()
    q = sel.sum() / 30  # mean selected per resample
    p = 36  # ALARM's 37 variables but the target
    assert hr.q == pytest.approx(q) and hr.n_candidates == p
    pi = 0.5 * (1 + q ** 2 / (p * 1.0))  # E[V] <= q^2 / ((2 pi - 1) p) = 1
    assert hr.rule == "pfer" and hr.pfer == 1.0
    assert hr.threshold == pytest.approx(pi)
    assert q ** 2 / ((2 * hr.threshold - 1) * p) == pytest.approx(1.0)
    assert hr.bound == pytest.approx(1.0)
    freq = sel.mean(axis=0)
    assert set(hr.selected) == {c for c, f in zip(hr.candidates, freq) if f >= pi}
    assert mb_threshold(2.0, 20, 0.5) == pytest.approx(0.5 * (1 + 4 / 10))
    assert mb_bound(2.0, 20, 0.7) == pytest.approx(4 / (0.4 * 20))
    assert mb_bound(2.0, 20, 0.5) == np.inf


def test_frequency_cut_and_pfer_options(alarm, hr):
    cut = mbstat.stability(alarm, "HR", R=30, seed=11, threshold=0.5, **FAST)
    assert cut.rule == "frequency" and cut.threshold == 0.5 and cut.pfer is None
    assert cut.selections.equals(hr.selections)  # the same resamples
    assert set(cut.selected) == set(cut.frequency[cut.frequency >= 0.5].index)
    loose = mbstat.stability(alarm, "HR", R=30, seed=11, pfer=4, **FAST)
    assert loose.threshold == pytest.approx(0.5 * (1 + hr.q ** 2 / (36 * 4)))
    assert set(hr.selected) <= set(loose.selected)
    with pytest.warns(UserWarning, match="no frequency threshold bounds"):
        tight = mbstat.stability(alarm, "HR", R=30, seed=11, pfer=0.01, **FAST)
    assert tight.threshold == 1.0 and set(tight.selected) == set(
        tight.frequency[tight.frequency == 1].index)
    assert "Note: no frequency threshold" in str(tight.summary())


def test_same_result_for_any_n_jobs_and_backend(alarm, hr):
    two = mbstat.stability(alarm, "HR", R=30, seed=11, n_jobs=2, **FAST)
    assert two == hr and two.selections.equals(hr.selections)
    three = mbstat.stability(alarm, "HR", R=30, seed=11, n_jobs=3, **FAST)  # other chunks
    assert three == hr
    with joblib.parallel_config(backend="threading"):  # the caller's backend is used
        assert mbstat.stability(alarm, "HR", R=30, seed=11, n_jobs=2, **FAST) == hr
    # the first resamples of a longer run are the shorter run's
    longer = mbstat.stability(alarm, "HR", R=40, seed=11, **FAST)
    assert longer.selections.iloc[:30].equals(hr.selections)


def test_same_result_on_a_dask_cluster(alarm, hr):
    distributed = pytest.importorskip("distributed", reason="dask is an optional extra")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        with joblib.parallel_config(backend="dask"):
            res = mbstat.stability(alarm, "HR", R=30, seed=11, n_jobs=2, **FAST)
        assert client.status == "running"
    assert res == hr


def test_randomized_learner_gets_a_seed_per_resample(alarm):
    args = dict(R=6, seed=2, m=1, k=30, **FAST)
    one = mbstat.stability(alarm, "HR", "rgs", **args)
    two = mbstat.stability(alarm, "HR", "rgs", n_jobs=2, **args)
    assert one == two
    assert one.full.params["seed"] == stab.learner_seed(2, None)
    # the full-data run's seed is no resample's and does not depend on R (it was resample
    # R's: a run with R = 6 had as full-data seed the seventh resample's of a longer run)
    longer = mbstat.stability(alarm, "HR", "rgs", **{**args, "R": 7})
    assert longer.full.params["seed"] == one.full.params["seed"]
    assert one.full.params["seed"] not in {stab.learner_seed(2, r) for r in range(7)}
    fixed = mbstat.stability(alarm, "HR", "rgs", learner_args={"seed": 4}, **args)
    assert fixed.full.params["seed"] == 4


def test_seed_none_is_recorded_and_reproduces(alarm):
    res = mbstat.stability(alarm, "HR", R=5, **FAST)
    assert isinstance(res.seed, int) and res.seed >= 0
    again = mbstat.stability(alarm, "HR", R=5, seed=res.seed, **FAST)
    assert again.selections.equals(res.selections)
    assert f"seed = {res.seed}" in str(res.summary())


def test_bad_arguments_refused_before_any_resample_runs(alarm, monkeypatch):
    drawn = []
    monkeypatch.setattr(stab, "resample_rows", lambda *a: drawn.append(a))
    monkeypatch.setattr(stab, "_run_resamples", lambda *a, **k: drawn.append(a))
    with pytest.raises(ValueError, match="alpha must be in"):
        mbstat.stability(alarm, "HR", alpha=2)
    with pytest.raises(TypeError, match="bogus"):
        mbstat.stability(alarm, "HR", bogus=1)
    with pytest.raises(ValueError, match="max_k"):
        mbstat.stability(alarm, "HR", "mbor", max_k=-1)
    with pytest.raises(ValueError, match="unknown variable 'nope'"):
        mbstat.stability(alarm, "nope")
    with pytest.raises(ValueError, match="method must be one of"):
        mbstat.stability(alarm, "HR", "lasso")
    for bad, match in (({"R": 1}, "R must be >= 2"), ({"resample": "jackknife"}, "resample"),
                       ({"fraction": 1.0}, "fraction"), ({"threshold": 0}, "threshold"),
                       ({"pfer": 0}, "pfer"), ({"threshold": 0.6, "pfer": 1}, "not both"),
                       ({"seed": -1}, "seed"), ({"n_jobs": 0}, "n_jobs"),
                       ({"fraction": 0.0001}, "rows per subsample")):
        with pytest.raises(ValueError, match=match):
            mbstat.stability(alarm, "HR", **bad, **FAST)
    with pytest.raises(TypeError, match="BayesianNetwork"):
        mbstat.stability(mbstat.datasets.load_network("asia"), "lung")
    assert drawn == []


def test_the_callers_data_is_not_modified(alarm):
    before = alarm.copy()
    mbstat.stability(alarm, alarm["HR"].rename("hr2"), R=3, seed=1, candidates=["CO", "HRBP"],
                     threshold=0.5, **FAST)
    pd.testing.assert_frame_equal(alarm, before)


def test_parents_children_and_spouse_frequencies(alarm):
    res = mbstat.stability(alarm, "HR", "mbor", R=6, seed=1, threshold=0.5, **FAST)
    table = res.table
    assert {"pc", "spouse"} <= set(table.columns)
    # MB = PC + spouses, disjoint: the two frequencies add up to the blanket's
    np.testing.assert_allclose(table["pc"] + table["spouse"], table["frequency"])
    assert "pc" not in mbstat.stability(alarm, "HR", R=3, seed=1, **FAST).table


def test_frozen_result_summary_and_plot(hr):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    with pytest.raises(dataclasses.FrozenInstanceError):
        hr.threshold = 0.1
    sel = hr.selections
    sel.iloc[:, :] = False
    assert hr.selections.to_numpy().any()  # a copy was handed out
    assert pickle.loads(pickle.dumps(hr)) == hr
    table = hr.table
    assert table.index.name == "feature"
    assert list(table.columns[:6]) == ["frequency", "lower", "upper", "count", "full", "stable"]
    assert table["frequency"].is_monotonic_decreasing
    text = str(hr.summary())
    assert text.startswith("Stability of the Markov blanket: iamb, 30 resamples")
    for piece in ("R = 30 subsamples of 500 rows without replacement, seed = 11",
                  "Meinshausen & Buhlmann 2010", "Stable blanket of HR:", "95% interval"):
        assert piece in text
    assert repr(hr).startswith("<StabilityResult iamb: HR <- {")
    ax = hr.plot(top=10)
    assert isinstance(ax, Axes) and len(ax.patches) == 10
    assert any(abs(line.get_ydata()[0] - hr.threshold) < 1e-12 for line in ax.get_lines())
    matplotlib.pyplot.close("all")


def test_arc_strengths_against_the_per_target_runs():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    data = sample_network("asia", 1000, seed=1)
    arcs = mbstat.arc_strengths(data, R=15, seed=4, threshold=0.5, **FAST)
    assert list(arcs) == list(data.columns)
    alone = mbstat.stability(data, "lung", R=15, seed=4, threshold=0.5, **FAST)
    assert arcs["lung"].selections.equals(alone.selections)
    table = arcs.strength
    row = table[(table["from"] == "tub") & (table["to"] == "lung")].iloc[0]
    tub_in_lung = arcs["lung"].selections["tub"].to_numpy()
    lung_in_tub = arcs["tub"].selections["lung"].to_numpy()
    assert row["from_in_to"] == tub_in_lung.mean()
    assert row["to_in_from"] == lung_in_tub.mean()
    assert row["strength"] == (tub_in_lung & lung_in_tub).mean()
    assert row["either"] == (tub_in_lung | lung_in_tub).mean()
    assert len(table) == 8 * 7 // 2 and table.index.name == "pair"
    assert (table["strength"] <= table[["from_in_to", "to_in_from"]].min(axis=1)).all()
    assert arcs.matrix.loc["lung", "tub"] == tub_in_lung.mean()
    assert (arcs.averaged(0.5)["strength"] >= 0.5).all()
    assert "Markov blanket arc strengths: iamb" in str(arcs.summary())
    via_blankets = mbstat.blankets(data, R=15, seed=4, threshold=0.5, **FAST)
    assert via_blankets == arcs
    for kind in ("and", "directed"):
        assert isinstance(arcs.plot(kind=kind), Axes)
    matplotlib.pyplot.close("all")


def test_sklearn_selector_keeps_the_stable_blanket(alarm):
    from mbstat.sklearn import MarkovBlanketSelector

    X, y = alarm.drop(columns="HR"), alarm["HR"]
    sel = MarkovBlanketSelector(params=FAST, stability={"R": 10, "seed": 3}).fit(X, y)
    res = mbstat.stability(alarm, "HR", R=10, seed=3, **FAST)
    assert set(X.columns[sel.get_support()]) == set(res.selected)
    assert MarkovBlanketSelector(params=FAST, stability=5).fit(X, y).result_.R == 5
    with pytest.raises(TypeError, match="stability must be"):
        MarkovBlanketSelector(stability=2.5).fit(X, y)


def test_command_line_stability(tmp_path, alarm, capsys):
    from mbstat.cli import main

    path = tmp_path / "alarm.csv"
    alarm.to_csv(path, index=False)
    plot, out = tmp_path / "freq.png", tmp_path / "freq.csv"
    rc = main(["select", str(path), "--target", "HR", "--stability", "8", "--seed", "1",
               "--param", "calibration='asymptotic'", "--plot", str(plot), "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "Inclusion frequencies" in text and "seed = 1" in text
    assert plot.stat().st_size > 0
    assert pd.read_csv(out, index_col="feature")["count"].max() <= 8
    assert main(["select", str(path), "--target", "HR", "--pfer", "2"]) == 2
    assert "--pfer needs --stability R" in capsys.readouterr().err
    assert main(["select", str(path), "--target", "HR", "--stability", "1"]) == 2
    assert "--stability must be >= 2" in capsys.readouterr().err


def test_a_target_constant_in_some_resamples():
    import warnings

    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.integers(0, 2, 60), "z": rng.integers(0, 2, 60)})
    data["y"] = np.where(np.arange(60) < 2, "b", "a")  # 2 rows of 'b': many subsamples lack it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning per resample
        res = mbstat.stability(data, "y", R=20, seed=0, threshold=0.5, **FAST)
    lacking = sum(len(set(data["y"].iloc[res.resample_rows(r)])) == 1 for r in range(20))
    assert lacking > 0
    assert f"Note: y is constant in {lacking} resample" in str(res.summary())
    assert not res.selections[[bool(len(set(data["y"].iloc[res.resample_rows(r)])) == 1)
                               for r in range(20)]].to_numpy().any()


def test_vignette_quick(run_vignette, tmp_path):
    out = run_vignette("stability.py", timeout=240)
    assert "Goal: the stable blanket's precision above the single run's" in out
    assert "Mean inclusion frequency of true members" in out
    for name in ("stability_quick_frequencies.png", "stability_quick_goal.csv"):
        assert (tmp_path / name).stat().st_size > 0
    goal = pd.read_csv(tmp_path / "stability_quick_goal.csv")
    assert len(goal) == 3 and set(goal["rule"]) == {"subsample, PFER <= 1",
                                                    "subsample, freq >= 0.5",
                                                    "bootstrap, freq >= 0.5"}


def test_ctrl_c_stops_every_resample_and_keeps_those_done(monkeypatch):
    from mbstat.ci.engine import CITester

    module = importlib.import_module("mbstat.stability")
    data = sample_network("asia", 500, seed=1)
    taken, stop_in = [], []
    original_take, original_test = module._take_rows, CITester.test_many

    def take(*args):  # counts the resamples begun
        taken.append(1)
        return original_take(*args)

    def interrupted(self, *args, **kwargs):  # Ctrl-C inside a resample's search
        if len(taken) in stop_in:
            raise KeyboardInterrupt
        return original_test(self, *args, **kwargs)

    monkeypatch.setattr(module, "_take_rows", take)
    monkeypatch.setattr(CITester, "test_many", interrupted)
    stop_in.append(3)
    with pytest.warns(UserWarning, match="interrupted after 2 of 20 resamples"):
        res = mbstat.stability(data, "lung", R=20, seed=1, threshold=0.5, **FAST)
    assert len(taken) == 3  # it did not go on with the other resamples
    assert res.R == 2 and not res.complete and len(res.selections) == 2
    assert "interrupted (Ctrl-C) after 2 of 20 resamples" in str(res.summary())
    stop_in.clear()
    done = mbstat.stability(data, "lung", R=20, seed=1, threshold=0.5, **FAST)
    pd.testing.assert_frame_equal(res.selections, done.selections.iloc[:2])  # the same two
    taken.clear()
    stop_in.append(1)
    with pytest.raises(KeyboardInterrupt):  # before any resample finished: nothing to keep
        mbstat.stability(data, "lung", R=20, seed=1, threshold=0.5, **FAST)


def test_wilson_interval_is_exact_at_the_ends():
    from mbstat.results.stability import wilson_interval
    lower, upper = wilson_interval([0, 15, 30], 30)
    assert lower[0] == 0.0 and upper[2] == 1.0 and 0 < lower[1] < 0.5 < upper[1] < 1
