"""Tests of mbor, pc_superset, sp_superset and mb_to_pc (Rodrigues de Morais & Aussem 2008)."""
from __future__ import annotations


import importlib
import itertools
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from mbstat.algorithms.iamb import inter_iamb
from mbstat.algorithms.mbor import Superset, _mbor, mb_to_pc, mbor, pc_superset, sp_superset
from mbstat.ci.engine import CITester
from mbstat.ci import DSeparationOracle
from mbstat.datasets import load_network, sample_network
from mbstat.results import MBResult
from test_iamb import oracle_dags

mbor_module = importlib.import_module("mbstat.algorithms.mbor")  # the name mbor is the function


# ---------------------------------------------------------------------------
# d-separation oracle
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("half", [0, 1])
def test_oracle_random_dags_every_node(half):
    """MBOR returns the true parents-and-children set and the true blanket of every node
    of 100 random DAGs (test_iamb.oracle_dags) (up to 30 nodes), with its default (exhaustive) max_k.

    The algorithm itself on one oracle tester per DAG, MBtoPC results shared between the
    targets of a DAG (a pure cache); the public function is checked on a subset below.
    """
    checked = 0
    for i, net in oracle_dags():
        if i % 2 != half:
            continue
        tester = CITester(net, "oracle")
        memo = {}
        for v in net.nodes:
            cands = [c for c in net.nodes if c != v]
            pc, sp, pcs, sps = _mbor(tester, v, cands, "inter_iamb", None, [], memo)
            assert set(pc) == net.parents_children(v), (i, v, sorted(pc))
            assert set(sp) == net.spouses(v) - net.parents_children(v), (i, v, sorted(sp))
            assert net.markov_blanket(v) <= set(pcs) | set(sps)
            checked += 1
    assert checked > 500


def test_oracle_public_api():
    for i, net in oracle_dags(14):
        if i < 8:
            continue  # the smaller ones (the first 8 are the largest)
        for v in net.nodes[::2]:
            res = mbor(net, v, test="oracle")
            assert isinstance(res, MBResult)
            assert set(res.parents_children) == net.parents_children(v)
            assert set(res.spouses) == net.markov_blanket(v) - net.parents_children(v)
            assert set(res.blanket) == net.markov_blanket(v)
            assert res.blanket == res.parents_children + res.spouses
            assert set(mb_to_pc(net, v, test="oracle").blanket) == net.parents_children(v)
            pcs = pc_superset(net, v, test="oracle")
            assert net.parents_children(v) <= set(pcs)
            sps = sp_superset(net, v, pcs, test="oracle")
            assert net.markov_blanket(v) <= set(pcs) | set(sps)
            for x, z in pcs.dsep.items():  # every recorded separating set separates
                assert len(z) <= 1 and net.d_separated(x, v, z)


def test_bounded_max_k_is_what_breaks_exactness():
    """max_k=3 (pyCausalFS's bound) misses separating sets of 4+ on a dense DAG node;
    the default exhaustive search does not."""
    net = dict(oracle_dags(8))[7]
    v = "X16"
    assert set(mbor(net, v, test="oracle").parents_children) == net.parents_children(v)
    bounded = mbor(net, v, test="oracle", max_k=3)
    assert set(bounded.parents_children) != net.parents_children(v)
    assert bounded.params["max_k"] == 3


# ---------------------------------------------------------------------------
# the OR condition (Phase II): a spurious independence hides Y from MBtoPC(T)
# ---------------------------------------------------------------------------


class _OracleWithExtra(DSeparationOracle):
    """The d-separation oracle plus independences declared by hand (an approximate
    deterministic relation makes T _||_ Y | {X, W} hold in the data)."""

    def __init__(self, dag, extra):
        super().__init__(dag)
        self.extra = {(frozenset(pair), frozenset(z)) for pair, z in extra}

    def batch(self, tester, xs, y, z):
        out = super().batch(tester, xs, y, z)
        names = tester.dataset.names
        zset = frozenset(names[j] for j in z)
        for i, xk in enumerate(xs):
            if len(xk) == 1 and (frozenset((names[xk[0]], names[y])), zset) in self.extra:
                out["statistic"][i] = out["mi"][i] = 0.0
                out["pvalue"][i], out["log_pvalue"][i] = 1.0, 0.0
        return out


def test_or_condition_recovers_a_child_that_mb_to_pc_misses():
    # X -> T <- W, T -> Y; variables in the order T, Y, X, W
    dag = {"T": ("X", "W"), "Y": ("T",), "X": (), "W": ()}
    oracle = _OracleWithExtra(dag, [(("T", "Y"), ("X", "W"))])
    assert "Y" not in mb_to_pc(dag, "T", test=oracle).blanket  # T's own PC search misses Y
    assert "T" in mb_to_pc(dag, "Y", test=oracle).blanket  # but Y sees T
    res = mbor(dag, "T", test=oracle)
    assert set(res.parents_children) == {"X", "W", "Y"}
    added = res.trace[res.trace["action"] == "add (OR)"]
    assert list(added["feature"]) == ["Y"]
    assert set(mbor(dag, "T", test=DSeparationOracle(dag)).parents_children) == {"X", "W", "Y"}


# ---------------------------------------------------------------------------
# separating-set searches: nothing to separate, and the default bound
# ---------------------------------------------------------------------------


class _CountedCombinations:
    """itertools.combinations that counts the subsets it yields and stops a runaway
    enumeration (the code before issue 13.3 would walk 2^62 subsets here)."""

    def __init__(self, limit):
        self.n, self.limit = 0, limit

    def __call__(self, pool, k):
        for z in itertools.combinations(pool, k):
            self.n += 1
            if self.n > self.limit:
                raise AssertionError(f"more than {self.limit} subsets enumerated")
            yield z


def test_wide_data_spouse_step_stops_when_nothing_is_left(monkeypatch):
    """Issue 13.3: 2,000 rows x 1,000 binary features, a target on 5 of them. Phase III
    has no spouse candidate, yet the search walked every subset of its 62-variable pool
    (past 150 s); it now returns at once, and each search is bounded by MAX_SUBSETS."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 2, (2000, 1000))
    df = pd.DataFrame(values, columns=[f"V{i}" for i in range(1000)])
    df["T"] = (values[:, :5].sum(axis=1) >= 3).astype(int)
    counted = _CountedCombinations(limit=200_000)
    monkeypatch.setattr(mbor_module, "combinations", counted)
    res = mbor(df, "T")
    assert {"V0", "V1", "V2", "V3", "V4"} <= set(res.blanket)
    assert len(res.params["pcs"]) + len(res.params["sps"]) > 20  # a wide pool in Phase III
    assert counted.n < 1000 and res.n_tests < 30_000
    # every search ended before the bound (T is a function of V0..V4: that note only)
    assert all(n.startswith("Note: deterministic") for n in res.notes), res.notes


def test_separate_with_nothing_to_separate_examines_no_subset(monkeypatch):
    counted = _CountedCombinations(limit=10)
    monkeypatch.setattr(mbor_module, "combinations", counted)
    tester = CITester(load_network("asia"), "oracle")
    pool = list(tester.dataset.names[1:])
    assert mbor_module._separate(tester, tester.dataset.names[0], [], pool, None, "t") == {}
    assert counted.n == 0


def test_default_bound_on_separating_sets_warns_and_notes(monkeypatch):
    """No subset separates a child from its parent: MBtoPC's search ends at the default
    bound (here lowered to 20 subsets of an 8-member blanket: sizes 0 and 1, 9 subsets),
    with a warning and a note; an explicit max_k searches exactly that far, silently."""
    rng = np.random.default_rng(1)
    t = rng.integers(0, 2, 3000)
    kids = {f"C{i}": t ^ (rng.random(3000) < 0.25) for i in range(8)}
    df = pd.DataFrame({"T": t, **kids}).astype(int)
    monkeypatch.setattr(mbor_module, "MAX_SUBSETS", 20)
    counted = _CountedCombinations(limit=10_000)
    monkeypatch.setattr(mbor_module, "combinations", counted)
    with pytest.warns(UserWarning, match=r"up to 1 of the 8 variables"):
        res = mb_to_pc(df, "T")
    assert set(res.blanket) == set(kids)
    assert counted.n == 1 + 8
    assert len(res.notes) == 1 and "Pass max_k" in res.notes[0]
    counted.n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explicit = mb_to_pc(df, "T", max_k=2)
    assert set(explicit.blanket) == set(kids)
    assert counted.n == 1 + 8 + 28 and not explicit.notes


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alarm():
    return sample_network("alarm", 5000, seed=1)


def test_alarm_hr_is_recovered_with_pc_and_spouses(alarm):
    net = load_network("alarm")
    res = mbor(alarm, "HR")
    assert set(res.parents_children) == net.parents_children("HR")
    assert set(res.spouses) == net.spouses("HR")
    assert res.params["pcs"] and set(res.params["pcs"]) >= set(res.parents_children)
    text = str(res.summary())
    assert "Parents and children:" in text and "Spouses:" in text and "MBOR" in text


def test_fewer_false_negatives_than_inter_iamb_on_large_blankets(alarm):
    """The paper's Fig. 1 claim, at one seed: on nodes with more than 4 blanket members
    MBOR misses fewer of them than Inter-IAMB."""
    net = load_network("alarm")
    large = [v for v in net.nodes if len(net.markov_blanket(v)) > 4]
    fn_mbor = sum(len(net.markov_blanket(v) - set(mbor(alarm, v).blanket)) for v in large)
    fn_inter = sum(len(net.markov_blanket(v) - set(inter_iamb(alarm, v).blanket))
                   for v in large)
    assert fn_mbor < fn_inter


def test_phases_logged_and_small_conditioning_sets_in_phase_one(alarm):
    res = mbor(alarm, "CO")
    log = res.tests
    assert {"pcs", "sps", "correct_mb"} <= set(log["phase"])
    size = log["z"].map(lambda z: 0 if z == "" else len(z.split(", ")))
    assert size[log["phase"] == "pcs"].max() <= 1
    assert size[log["phase"] == "sps"].max() <= 2
    assert res.n_tests == (log["phase"] != "report").sum()


def test_deterministic_and_input_untouched(alarm):
    before = alarm.copy()
    a, b = mbor(alarm, "LVFAILURE"), mbor(alarm, "LVFAILURE")
    assert a.blanket == b.blanket and a.trace.equals(b.trace)
    pd.testing.assert_frame_equal(alarm, before)
    assert mbor(alarm, "LVFAILURE", correct_mb="iamb").params["correct_mb"] == "iamb"


def test_supersets_from_data(alarm):
    pcs = pc_superset(alarm, "HR")
    assert isinstance(pcs, Superset) and pcs.kind == "PCS" and "Superset PCS of HR" in repr(pcs)
    assert set(pcs.features).isdisjoint(pcs.dsep)
    assert set(pcs.features) | set(pcs.dsep) == set(alarm.columns) - {"HR"}
    sps = sp_superset(alarm, "HR", pcs)
    assert sps.kind == "SPS" and set(sps).isdisjoint(pcs)
    plain = sp_superset(alarm, "HR", list(pcs.features), dict(pcs.dsep))
    assert plain.features == sps.features
    assert sp_superset(alarm, "HR").features == sps.features
    with pytest.raises(TypeError):
        pcs.dsep["HR"] = ()


@pytest.mark.parametrize("func, kwargs, error, match", [
    (mbor, {"correct_mb": "gs"}, ValueError, "correct_mb must be"),
    (mbor, {"max_k": -1}, ValueError, "max_k must be >= 0"),
    (mbor, {"max_k": 1.5}, TypeError, "max_k must be an integer"),
    (mbor, {"alpha": 0}, ValueError, "alpha"),
    (mb_to_pc, {"correct_mb": len}, ValueError, "correct_mb must be"),
    (sp_superset, {"pcs": ["CO"]}, TypeError, "dsep"),
    (sp_superset, {"pcs": ["CO"], "dsep": {"BP": ()}}, ValueError, "no separating set"),
    (sp_superset, {"pcs": "CO"}, TypeError, "pcs must be"),
    (sp_superset, {"dsep": {"BP": ()}}, ValueError, "dsep is given without pcs"),
    (pc_superset, {"candidates": ["HR"]}, ValueError, "target"),
])
def test_bad_arguments(alarm, func, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(alarm, "HR", **kwargs)


def test_sp_superset_rejects_another_targets_pcs(alarm):
    with pytest.raises(ValueError, match="pc_superset of 'HR'"):
        sp_superset(alarm, "HR", pc_superset(alarm, "CO"))


def test_vignette_quick(tmp_path, run_vignette):
    out = run_vignette("iamb_mbor_networks.py", timeout=120)
    for word in ("iamb", "inter_iamb", "mbor", "<= 4", "> 4", "F1", "FN"):
        assert word in out
    pngs = list(tmp_path.glob("*.png"))
    assert pngs and all(p.stat().st_size > 1000 for p in pngs)
