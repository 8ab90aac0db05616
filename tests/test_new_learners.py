"""Tests of iamb_fdr, fast_iamb and the PC-based learners (mmpc, mmmb, hiton_pc, hiton_mb,
si_hiton_pc): exact with the d-separation oracle, evidence that is the decision, options."""
from __future__ import annotations

import importlib
import math

import numpy as np
import pandas as pd
import pytest

import mbstat
from test_evidence import _check as check_evidence
from mbstat.algorithms.learners import Run
from mbstat.bn import random_dag
from mbstat.ci.engine import CITester
from mbstat.datasets import load_network, sample_network
from test_hard_priors import _sizes

# the modules (mbstat.algorithms.iamb_fdr etc. are the public functions' names too)
FDR = importlib.import_module("mbstat.algorithms.iamb_fdr")
FAST = importlib.import_module("mbstat.algorithms.fast_iamb")
FBED = importlib.import_module("mbstat.algorithms.fbed")
PC = importlib.import_module("mbstat.algorithms.pc_based")

#: 100 DAGs of 8 to 14 nodes (1,124 nodes) for each of the 8 learners (200 took twice the time)
N_DAGS = 100
NEW = ["iamb_fdr", "fast_iamb", "fbed", "mmpc", "mmmb", "hiton_pc", "hiton_mb", "si_hiton_pc"]
PC_ONLY = {"mmpc", "hiton_pc", "si_hiton_pc"}
HEURISTIC = {"mmpc": "mmpc", "mmmb": "mmpc", "hiton_pc": "hiton", "hiton_mb": "hiton",
             "si_hiton_pc": "si_hiton"}


def small_dags(n_dags: int = N_DAGS):
    """``n_dags`` random DAGs of 8 to 14 nodes, alternately of the default density (about n
    arcs) and with <= 3 parents per node."""
    sizes = 8 + np.random.default_rng(7).integers(0, 7, size=n_dags)
    for i, n in enumerate(sizes):
        n = int(n)
        yield i, (random_dag(n, seed=i) if i % 2 == 0 else random_dag(n, max_parents=3, seed=i))


def _search(method, tester, target, nodes, memo):
    """The learner's search on a tester (no result assembly: fast); the PC-based ones share
    the other variables' TPC searches of one DAG through ``memo``."""
    run = Run(tester, target, [c for c in nodes if c != target], 0.0)
    if method == "iamb_fdr":
        return FDR._search(run)
    if method == "fast_iamb":
        return FAST._search(run)
    if method == "fbed":
        return FBED._search(run)
    search = PC._pc_search if method in PC_ONLY else PC._mb_search
    return search(run, HEURISTIC[method], max_k=None, memo=memo)


# ---------------------------------------------------------------------------
# d-separation oracle
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", NEW)
def test_oracle_random_dags_every_node(method):
    """Every node of 100 random DAGs: the true blanket (PC learners: the true parents and
    children); MB learners also report PC and spouses exactly."""
    checked = 0
    for i, net in small_dags():
        tester = CITester(net, "oracle")
        truth = net.markov_blankets()
        memo = {}
        for v in net.nodes:
            found = _search(method, tester, v, net.nodes, memo)
            want = net.parents_children(v) if method in PC_ONLY else truth[v]
            assert set(found.blanket) == want, (method, i, v, found.blanket, sorted(want))
            if method in ("mmmb", "hiton_mb"):
                pc = net.parents_children(v)
                assert set(found.parents_children) == pc, (method, i, v)
                assert set(found.spouses) == net.spouses(v) - pc, (method, i, v)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("method", NEW)
def test_oracle_public_api(method):
    """Through the front end (evidence assembled and checked), on larger DAGs."""
    func = getattr(mbstat, method)
    extra = {} if method in ("iamb_fdr", "fast_iamb", "fbed") else {"max_k": None}
    for seed in (3, 4):
        net = random_dag(20, seed=seed) if seed % 2 else random_dag(20, max_parents=3, seed=seed)
        for v in net.nodes[::3]:
            res = func(net, v, test="oracle", **extra)
            want = net.parents_children(v) if method in PC_ONLY else net.markov_blanket(v)
            assert set(res.blanket) == want, (method, seed, v)
            ev = res.evidence
            assert set(ev.index[ev["decision"] == "keep"]) == want
            assert (ev.loc[list(res.blanket), "pvalue"] == 0).all()


@pytest.mark.parametrize("method", ["mmpc", "hiton_pc", "si_hiton_pc"])
def test_symmetry_options_bracket_the_pc_set(method):
    """With the oracle "and" is exact; "none" (TPC) and "or" only add to it."""
    func = getattr(mbstat, method)
    for seed in (0, 1, 2):
        net = random_dag(14, seed=seed)
        for v in net.nodes:
            pc = net.parents_children(v)
            exact = set(func(net, v, test="oracle", max_k=None).blanket)
            assert exact == pc
            for symmetry in ("none", "or"):
                res = func(net, v, test="oracle", max_k=None, symmetry=symmetry)
                assert set(res.blanket) >= pc, (method, symmetry, seed, v)


@pytest.mark.parametrize("method", ["mmpc", "hiton_pc", "si_hiton_pc", "mmmb", "hiton_mb"])
def test_symmetry_keeps_a_neighbour_separated_only_by_its_copy(method):
    """A -> B -> C with B2 a relabeling of B: B's own search conditions on B2, which
    determines B, so every test of B given B2 has statistic 0 and cannot reject. That is
    no evidence that C is not B's neighbour: the symmetry correction keeps B in PC(C) and
    says why (before: PC(C) was empty)."""
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, 1 - a)
    c = np.where(rng.random(n) < 0.8, b, 1 - b)
    frame = pd.DataFrame({"A": a, "B": b, "B2": 1 - b, "C": c, "N": rng.integers(0, 2, n)})
    res = getattr(mbstat, method)(frame, "C")
    assert res.blanket == ("B",)
    note = next(x for x in res.notes if "symmetry correction kept B (given {B2})" in x)
    assert "determines one of the pair" in note and "functional relation" in note
    assert getattr(mbstat, method)(frame, "C", symmetry="none").blanket == ("B",)


def test_symmetry_does_not_demand_the_entry_level_twice():
    """X enters TPC(T) at alpha / m; in X's own search T is dependent at alpha but its entry
    is refused at alpha / m (W, X's strong neighbour, entered first). A refused entry is no
    evidence of independence: removals are decided at alpha, so X stays in PC(T)."""
    rng = np.random.default_rng(2)
    n = 600
    w = rng.integers(0, 3, n)
    x = np.where(rng.random(n) < 0.7, w % 2, rng.integers(0, 2, n))
    t = np.where(rng.random(n) < 0.14, x, rng.integers(0, 2, n))
    frame = pd.DataFrame({"T": t, "X": x, "W": w,
                          **{f"N{j}": rng.integers(0, 2, n) for j in range(8)}})
    own = mbstat.mmpc(frame, "X", calibration="asymptotic").evidence.loc["T"]
    assert own["decision"] == "exclude" and own["phase"] == "entry"
    assert own["pvalue"] < 0.05 and own["criterion"] < 0
    assert mbstat.mmpc(frame, "T", calibration="asymptotic").blanket == ("X",)


def test_oracle_with_candidates_restricts_the_search():
    """Among asia without "either": xray's blanket is tub, lung, dysp and bronc (see
    test_iamb); every learner searches within candidates u {target}."""
    net = load_network("asia")
    cands = [c for c in net.nodes if c not in ("xray", "either")]
    want = {"tub", "lung", "dysp", "bronc"}
    for method in ("iamb_fdr", "fast_iamb", "mmmb", "hiton_mb"):
        res = getattr(mbstat, method)(net, "xray", test="oracle", candidates=cands)
        assert set(res.blanket) == want, method
        assert "either" not in set(res.tests["x"]) | set(res.tests["y"])


# Evidence on data: every learner, the new ones among them, in tests/test_evidence.py.


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alarm():
    return sample_network("alarm", 5000, seed=7)


@pytest.fixture(scope="module")
def hr_runs(alarm):
    """Each learner's first run for HR on ``alarm`` (made once, read by two tests), and the
    data as it was before."""
    before = alarm.copy(deep=True)
    return {method: getattr(mbstat, method)(alarm, "HR") for method in NEW}, before


@pytest.mark.parametrize("method", NEW)
def test_deterministic_and_input_untouched(alarm, hr_runs, method):
    runs, before = hr_runs
    a = runs[method]
    b = getattr(mbstat, method)(alarm, "HR")
    assert a.blanket == b.blanket and a.n_tests == b.n_tests
    pd.testing.assert_frame_equal(a.evidence, b.evidence)
    pd.testing.assert_frame_equal(alarm, before)


def test_large_sample_recovers_hr(hr_runs):
    """HR's blanket in alarm: CO, HRBP, HREK, HRSA, CATECHOL (parent) and its spouse SV."""
    net = load_network("alarm")
    want = net.markov_blanket("HR")
    runs, _ = hr_runs
    for method in ("iamb_fdr", "mmmb", "hiton_mb"):
        found = set(runs[method].blanket)
        assert len(found & want) >= len(want) - 1 and len(found - want) <= 1, (method, found)
    for method in ("mmpc", "hiton_pc", "si_hiton_pc"):
        assert set(runs[method].blanket) <= want


def test_fdr_thresholds_and_criterion():
    """log(m c(m) / i): Benjamini-Yekutieli by default, Benjamini-Hochberg on request; the
    criterion shown is min(1, p m c(m) / rank)."""
    thr = FDR.log_thresholds(4, "by")
    c = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert np.allclose(np.exp(thr), [4 * c, 2 * c, 4 * c / 3, c])
    assert np.allclose(np.exp(FDR.log_thresholds(4, "bh")), [4, 2, 4 / 3, 1])
    data = sample_network("alarm", 2000, seed=3)
    by = mbstat.iamb_fdr(data, "BP")
    bh = mbstat.iamb_fdr(data, "BP", fdr="bh")
    assert by.params["fdr"] == "by" and "fdr = \"bh\"" in bh.call
    ev = by.evidence
    assert (ev["criterion"] >= np.minimum(1, ev["pvalue"]) - 1e-12).all()
    assert (ev["criterion"] <= 1).all()


def test_fdr_controls_false_positives_beside_iamb():
    """At the same alpha the FDR-controlled blanket is no larger than IAMB's on average."""
    data = sample_network("insurance", 1000, seed=2)
    net = load_network("insurance")
    sizes = {"iamb": 0, "iamb_fdr": 0}
    fps = dict(sizes)
    for v in net.nodes[::3]:
        for method in sizes:
            found = set(getattr(mbstat, method)(data, v).blanket)
            sizes[method] += len(found)
            fps[method] += len(found - net.markov_blanket(v))
    assert sizes["iamb_fdr"] <= sizes["iamb"] and fps["iamb_fdr"] <= fps["iamb"]


def test_fast_iamb_adds_several_per_round_and_fewer_batches(alarm):
    """One growing batch per round, several additions from it (speculative)."""
    for rule in (5, None):
        res = mbstat.fast_iamb(alarm, "HR", min_per_cell=rule)
        trace = res.trace
        adds = int((trace["action"] == "add").sum())
        assert list(trace["action"][:2]) == ["add", "add"]
        rounds = res.tests.loc[res.tests["phase"] == "grow", "z"].nunique()
        assert rounds < adds


def test_fast_iamb_shrink_undoes_the_later_of_two_equivalent_additions():
    """B and its relabeling B2 enter in one speculative step (equal p-values: B first, in
    column order). The shrink tests the latest addition first: B2 given B is independent
    and leaves, so the established member stays (bnlearn's blanket order removed B)."""
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, 1 - a)
    c = np.where(rng.random(n) < 0.8, b, 1 - b)
    frame = pd.DataFrame({"A": a, "B": b, "B2": 1 - b, "C": c})
    res = mbstat.fast_iamb(frame, "C")
    trace = res.trace
    assert list(trace["feature"][:2]) == ["B", "B2"]
    removed = trace.loc[trace["action"] == "remove", "feature"]
    assert list(removed) == ["A", "B2"]  # latest first: A (explained by B), then B2
    assert res.blanket == ("B",)


def test_fast_iamb_data_rule_stops_the_growth():
    """With few rows the rows-per-cell rule stops the speculative growth and says so."""
    data = sample_network("alarm", 300, seed=1)
    res = mbstat.fast_iamb(data, "HR", min_per_cell=50)
    assert any("rows per cell" in note for note in res.notes)
    free = mbstat.fast_iamb(data, "HR", min_per_cell=None)
    assert not any("rows per cell" in note for note in free.notes)
    assert len(res.blanket) <= len(free.blanket)
    check_evidence(res)


@pytest.mark.parametrize("method", ["mmpc", "hiton_mb"])
def test_max_k_caps_the_conditioning_sets(alarm, method):
    func = getattr(mbstat, method)
    res = func(alarm, "HR", max_k=1)
    assert res.tests["z"].map(lambda z: len([v for v in z.split(", ") if v])).max() <= (
        2 if method == "hiton_mb" else 1)  # spouse tests add X to a separating set
    assert any("capped at max_k = 1" in note for note in res.notes)
    assert res.params["max_k"] == 1
    net = random_dag(10, seed=0)
    assert not func(net, "X5", test="oracle", max_k=None).notes


@pytest.mark.parametrize("func, kwargs, error, match", [
    (mbstat.mmpc, {"max_k": -1}, ValueError, "max_k"),
    (mbstat.hiton_mb, {"max_k": 1.5}, TypeError, "max_k"),
    (mbstat.si_hiton_pc, {"symmetry": "xor"}, ValueError, "symmetry"),
    (mbstat.iamb_fdr, {"fdr": "holm"}, ValueError, "fdr"),
    (mbstat.fast_iamb, {"min_per_cell": -1}, ValueError, "min_per_cell"),
    (mbstat.fast_iamb, {"min_per_cell": math.inf}, ValueError, "min_per_cell"),
    (mbstat.mmmb, {"maxk": 2}, TypeError, "maxk"),
])
def test_bad_arguments(alarm, func, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(alarm, "HR", **kwargs)


def test_learner_table_rows():
    table = mbstat.learners_table()
    for name in NEW:
        assert table.loc[name, "kind"] == "CI-test learner"
    assert table.loc["mmpc", "arguments"] == "max_k, symmetry, selection"
    assert table.loc["iamb_fdr", "arguments"] == "fdr, start"
    assert table.loc["fast_iamb", "arguments"] == "selection, min_per_cell, start"
    assert "Parameters" in mbstat.mmpc.__doc__ and "symmetry" in mbstat.hiton_pc.__doc__


# ---------------------------------------------------------------------------
# hard priors and max_sx (bnlearn's learn.mb options), as tests/test_hard_priors.py
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", NEW)
def test_oracle_with_whitelisted_true_members_stays_exact(method):
    extra = {} if method in ("iamb_fdr", "fast_iamb", "fbed") else {"max_k": None}
    for seed in range(8):
        net = random_dag(10, max_parents=3, seed=seed)
        for v in net.nodes[::3]:
            truth = set(net.parents_children(v) if method in PC_ONLY else net.markov_blanket(v))
            white = sorted(truth)[:1]
            res = getattr(mbstat, method)(net, v, test="oracle", whitelist=white or None,
                                          **extra)
            assert set(res.blanket) == truth, (seed, v)


@pytest.mark.parametrize("method", NEW)
def test_max_sx_caps_every_test_with_the_oracle(method):
    net = load_network("alarm")
    for v in ("HR", "CO", "BP"):
        res = getattr(mbstat, method)(net, v, test="oracle", max_sx=1)
        assert _sizes(res.tests).max() <= 1


@pytest.mark.parametrize("method", ["iamb_fdr", "fast_iamb"])
def test_start_is_where_the_search_begins(method):
    data = sample_network("alarm", 2000, seed=3)
    res = getattr(mbstat, method)(data, "HR", start=["KINKEDTUBE"])
    assert res.tests.iloc[0]["z"] == "KINKEDTUBE" or "KINKEDTUBE" in res.tests.iloc[0]["x"]
    assert "KINKEDTUBE" not in res.blanket
    assert res.evidence.loc["KINKEDTUBE", "decision"] == "exclude"
