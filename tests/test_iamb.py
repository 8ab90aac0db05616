"""Tests of iamb and inter_iamb (Tsamardinos & Aliferis 2003; Pocock et al. 2012, Algorithm 1)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

import mbstat
from scipy import stats

from mbstat.algorithms.iamb import iamb, inter_iamb, search
from mbstat.bn import random_dag
from mbstat.ci.engine import CITester
from mbstat.data import as_dataset
from mbstat.datasets import load_network, sample_network
from mbstat.results import MBResult

# ---------------------------------------------------------------------------
# random DAGs for the oracle checks (shared with test_iamb_ip and test_mbor)
# ---------------------------------------------------------------------------

#: 100 DAGs (1,195 nodes; the 8 largest, 23 to 30 nodes, always in): the oracle runs cost
#: about the square of the size, so 200 took twice the time and added no kind of DAG
N_DAGS = 100


def oracle_dags(n_dags: int = N_DAGS):
    """``n_dags`` random DAGs of 2 to 30 nodes (mean about 11, the 8 largest always in),
    alternately of the default density (about n arcs) and with <= 3 parents per node."""
    sizes = 2 + np.random.default_rng(2024).binomial(28, 0.33, size=n_dags)
    sizes[:8] = 30 - np.arange(8)
    for i, n in enumerate(sizes):
        n = int(n)
        yield i, (random_dag(n, seed=i) if i % 2 == 0 else random_dag(n, max_parents=3, seed=i))


# ---------------------------------------------------------------------------
# d-separation oracle: the true Markov blanket of every node
# ---------------------------------------------------------------------------


def test_oracle_random_dags_every_node():
    """IAMB and Inter-IAMB return the true blanket of every node of 100 random DAGs (up to
    30 nodes).

    The search itself on one oracle tester per DAG, shared by both methods (no result
    assembly: fast); the public functions are checked on a subset below.
    """
    checked = 0
    for i, net in oracle_dags():
        tester = CITester(net, "oracle")
        truth = net.markov_blankets()
        for v in net.nodes:
            for method in ("iamb", "inter_iamb"):
                found = search(tester, v, [c for c in net.nodes if c != v], method)
                assert set(found) == truth[v], (method, i, v, sorted(found), sorted(truth[v]))
            checked += 1
    assert checked > 1000


def test_oracle_public_api():
    for i, net in oracle_dags(12):
        if i < 4:
            continue  # four of the largest are enough
        truth = net.markov_blankets()
        for v in net.nodes[::2]:
            for func in (iamb, inter_iamb):
                res = func(net, v, test="oracle")
                assert isinstance(res, MBResult)
                assert set(res.blanket) == truth[v], (func.__name__, i, v)


def test_oracle_with_candidates_restricts_the_search():
    net = load_network("asia")
    # without "either", xray's blanket among the rest: its causes tub and lung, and dysp
    # (either's other child, d-connected through it) with dysp's other parent bronc
    cands = [c for c in net.nodes if c not in ("xray", "either")]
    res = iamb(net, "xray", test="oracle", candidates=cands)
    assert set(res.blanket) == {"tub", "lung", "dysp", "bronc"}
    assert "either" not in res.pvalues.index
    assert res.n_candidates == len(cands)


# ---------------------------------------------------------------------------
# an independent reference: textbook IAMB on scipy's chi-square G2
# ---------------------------------------------------------------------------


def _g2(frame, x, y, z):
    """G2 statistic and bnlearn df (declared levels), counted with numpy from the codes."""
    codes = {c: frame[c].cat.codes.to_numpy() for c in [x, y, *z]}
    levels = {c: len(frame[c].cat.categories) for c in [x, y, *z]}
    _, stratum = np.unique(np.column_stack([codes[c] for c in z] or [np.zeros(len(frame))]),
                           axis=0, return_inverse=True)
    counts = np.zeros((stratum.max() + 1, levels[x], levels[y]))
    np.add.at(counts, (stratum.ravel(), codes[x], codes[y]), 1.0)
    expected = (counts.sum(2, keepdims=True) * counts.sum(1, keepdims=True)
                / counts.sum((1, 2), keepdims=True))
    nz = counts > 0
    g2 = 2.0 * np.sum(counts[nz] * np.log(counts[nz] / expected[nz]))
    df = (levels[x] - 1) * (levels[y] - 1) * np.prod([levels[c] for c in z])
    return g2, df


def _reference(frame, target, candidates, alpha, interleaved, bonferroni=False):
    """IAMB / Inter-IAMB written from the paper, one test at a time; returns the trace.
    ``bonferroni``: the strongest of the m remaining candidates enters at alpha / m."""

    def test(x, z):
        g2, df = _g2(frame, x, target, z)
        return stats.chi2.logsf(g2, df), g2

    def backward(blanket, trace):
        while blanket:
            scores = [test(x, [b for b in blanket if b != x]) for x in blanket]
            worst = max(range(len(blanket)), key=lambda i: (scores[i][0], -scores[i][1]))
            if scores[worst][0] <= np.log(alpha):
                return
            trace.append(("remove", blanket.pop(worst)))

    blanket, trace, seen = [], [], {frozenset()}
    while True:
        rest = [c for c in candidates if c not in blanket]
        if not rest:
            break
        scores = [test(x, blanket) for x in rest]
        best = min(range(len(rest)), key=lambda i: (scores[i][0], -scores[i][1]))
        if scores[best][0] > np.log(alpha / (len(rest) if bonferroni else 1)):
            break
        blanket.append(rest[best])
        trace.append(("add", rest[best]))
        if interleaved:
            backward(blanket, trace)
            if frozenset(blanket) in seen:
                break
            seen.add(frozenset(blanket))
    if not interleaved:
        backward(blanket, trace)
    return trace


@pytest.mark.parametrize("selection", ["none", "bonferroni"])
@pytest.mark.parametrize("method", [iamb, inter_iamb])
def test_matches_textbook_reference_step_by_step(method, selection):
    frame = sample_network("alarm", 1500, seed=11)
    cands_all = ["HYPOVOLEMIA", "LVFAILURE", "STROKEVOLUME", "LVEDVOLUME", "CVP", "PCWP",
                 "HISTORY", "CO", "HR", "BP", "TPR", "CATECHOL", "ERRLOWOUTPUT", "HRBP"]
    frame = frame[cands_all]
    for target in ("STROKEVOLUME", "CO", "LVEDVOLUME", "HR"):
        cands = [c for c in cands_all if c != target]
        # the reference computes the asymptotic chi-square p-value of every test
        res = method(frame, target, alpha=0.05, calibration="asymptotic", selection=selection)
        steps = list(zip(res.trace["action"], res.trace["feature"]))
        assert steps == _reference(frame, target, cands, 0.05, method is inter_iamb,
                                   selection == "bonferroni"), target


def test_ranks_by_log_pvalue_when_pvalues_underflow():
    """Both candidates have p = 0 in double precision; the stronger one must come first."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 20000)
    weak = np.where(rng.random(20000) < 0.1, 1 - y, y)  # p underflows too
    frame = pd.DataFrame({"weak": weak, "strong": y.copy(), "Y": y}).astype("category")
    batch = CITester(frame).test_many(["weak", "strong"], "Y")
    assert (batch.pvalue == 0).all()
    res = iamb(frame, "Y")
    assert res.trace["feature"].iloc[0] == "strong"
    assert res.blanket == ("strong",)  # "weak" is independent of Y given "strong"


# ---------------------------------------------------------------------------
# behaviour on data
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alarm():
    return sample_network("alarm", 5000, seed=7)


def test_each_forward_step_is_one_batch(alarm):
    res = iamb(alarm, "CO")
    grow = res.tests[res.tests["phase"] == "grow"]
    adds = (res.trace["action"] == "add").sum()
    # one conditioning set per forward step: the blanket before each addition, and the last
    assert grow["z"].nunique() == adds + 1
    assert grow.groupby("z").size().max() == 36  # every candidate at the first step


def test_iamb_grows_then_shrinks_while_inter_iamb_interleaves(alarm):
    phases = iamb(alarm, "HR").tests["phase"].tolist()
    phases = [p for p in phases if p != "report"]
    first_shrink = phases.index("shrink")
    assert set(phases[first_shrink:]) == {"shrink"}
    inter = inter_iamb(alarm, "HR").tests["phase"].tolist()
    grow_after_shrink = [i for i in range(1, len(inter))
                         if inter[i] == "grow" and inter[i - 1] == "shrink"]
    assert grow_after_shrink


def test_large_sample_finds_most_of_the_blanket(alarm):
    net = load_network("alarm")
    hits = total = found = 0
    for v in ("CO", "LVFAILURE", "PCWP", "VENTLUNG", "MINVOL"):
        res = iamb(alarm, v)
        truth = net.markov_blanket(v)
        hits += len(truth & set(res.blanket))
        total += len(truth)
        found += len(res.blanket)
    assert hits / total > 0.7 and hits / found > 0.85  # 13 / 18 and 13 / 15 at this seed


def test_same_input_same_result_and_input_untouched(alarm):
    before = alarm.copy()
    a = iamb(alarm, "HR")
    b = iamb(alarm, "HR")
    assert a.blanket == b.blanket and a.trace.equals(b.trace)
    pd.testing.assert_frame_equal(alarm, before)


def test_accepts_dataset_array_and_positions(alarm):
    ds = as_dataset(alarm)
    pos = ds.names.index("HR")
    by_name = iamb(alarm, "HR").blanket
    assert iamb(ds, pos).blanket == by_name
    codes = pd.DataFrame(ds.codes.astype(int), columns=ds.names)
    assert iamb(codes, "HR").blanket == by_name


def test_result_reports(alarm):
    res = inter_iamb(alarm, "LVFAILURE", alpha=0.01)
    assert res.method == "inter_iamb" and res.alpha == 0.01 and res.params["alpha"] == 0.01
    text = str(res.summary())
    assert "Inter-IAMB" in text and 'target = "LVFAILURE"' in text
    assert res.pvalues.index.name == "feature"
    assert res.pvalues["selected"].sum() == len(res.blanket)
    assert res.plot().get_title() and res.plot(kind="trace").get_title()
    assert res.n_tests == (res.tests["phase"] != "report").sum()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"alpha": 0}, ValueError, "alpha"),
    ({"alpha": 1.5}, ValueError, "alpha"),
    ({"alpha": "0.05"}, TypeError, "alpha"),
    ({"test": "nope"}, ValueError, "test"),
    ({"candidates": ["HR", "CO"]}, ValueError, "target"),
    ({"candidates": ["NOPE"]}, ValueError, "candidates"),
])
def test_bad_arguments(alarm, kwargs, error, match):
    with pytest.raises(error, match=match):
        iamb(alarm, "HR", **kwargs)
    with pytest.raises(error, match=match):
        inter_iamb(alarm, "HR", **kwargs)


def test_bad_target(alarm):
    with pytest.raises(ValueError, match="target"):
        iamb(alarm, "NOPE")
    with pytest.raises(TypeError, match=r"target must be .*got list of 3 items"):
        iamb(alarm, ["HR", "CO", "BP"])


@pytest.mark.parametrize("method", ["iamb", "inter_iamb", "iamb_ip", "gs_m", "rgs", "mbor"])
def test_constant_target_has_an_empty_blanket(alarm, method):
    """As bnlearn: a constant target has an empty blanket, with a warning and a note."""
    const = alarm.assign(K=pd.Categorical(["a"] * len(alarm)))
    with pytest.warns(UserWarning, match="'K' is constant"):
        res = getattr(mbstat, method)(const, "K")
    assert res.blanket == () and res.n_tests == 0
    assert "constant" in str(res.summary())
    assert (res.evidence["phase"] == "constant target").all()
    # and it no longer breaks a run over every variable
    coll = mbstat.blankets(const[["K", "HR", "CO"]], method="iamb")
    assert coll["K"].blanket == ()


def test_target_as_values_like_scikit_learn(alarm):
    """iamb(X, y): the data holds the features, the target comes as a Series or an array."""
    X, y = alarm.drop(columns="HR"), alarm["HR"]
    by_name = iamb(alarm, "HR")
    by_series = iamb(X, y)
    assert by_series.blanket == by_name.blanket and by_series.target == "HR"
    by_array = iamb(X, y.to_numpy())  # labels without the categorical's declared levels
    assert by_array.blanket == iamb(X.assign(y=y.to_numpy()), "y").blanket
    assert by_array.target == "y"
    assert list(X.columns) == [c for c in alarm.columns if c != "HR"]  # caller's frame untouched
    with pytest.raises(ValueError, match="4999 values but data has 5000 rows"):
        iamb(X, y.iloc[1:].to_numpy())
    with pytest.raises(ValueError, match="index does not match"):
        iamb(X, y.set_axis(y.index + 1))
    # an array of features has no index: a Series target (say, after train_test_split, its
    # index shuffled) is matched by position, as scikit-learn does
    shuffled = alarm.sample(frac=1.0, random_state=0)
    codes = shuffled.drop(columns="HR").apply(lambda c: c.cat.codes).to_numpy()
    by_position = iamb(codes, shuffled["HR"])
    assert by_position.blanket == iamb(codes, shuffled["HR"].reset_index(drop=True)).blanket


def test_custom_rule_drives_both_phases():
    """The decision rule is the only thing IAMB-IP changes: check the loops honour it."""
    net = load_network("asia")
    tester = CITester(net, "oracle")
    calls = []

    def never(xs, res):
        calls.append(list(xs))
        return np.zeros(len(xs), bool), (np.arange(len(xs), dtype=float),)

    assert search(tester, "either", [c for c in net.nodes if c != "either"], rule=never) == []
    assert len(calls) == 1 and len(calls[0]) == 7
    cands = [c for c in net.nodes if c != "either"]
    assert set(search(CITester(net, "oracle"), "either", cands)) == net.markov_blanket("either")


@pytest.mark.parametrize("learner", [iamb, inter_iamb])
def test_data_without_candidates_is_refused(alarm, learner):
    # not an empty "(0 of 0)" blanket: candidates=[] is refused, and so is data with no candidate
    with pytest.raises(ValueError, match="no candidate variables besides the target 'HR'"):
        learner(alarm[["HR"]], "HR")
    with pytest.raises(ValueError, match="candidates must name at least one variable"):
        learner(alarm, "HR", candidates=[])


def test_target_values_named_like_a_column_or_reordered(alarm):
    with pytest.raises(ValueError, match="target is named 'HR' like a column of data"):
        iamb(alarm, alarm["HR"])
    X, y = alarm.drop(columns="HR"), alarm["HR"]
    shuffled = y.sample(frac=1.0, random_state=0)  # the same labels in another order
    assert iamb(X, shuffled).blanket == iamb(alarm, "HR").blanket


def test_fisher_z_caps_the_growth_at_what_its_rows_allow():
    """10 rows, 29 continuous candidates, alpha 0.5: fisher_z needs more than |z| + 3 rows,
    so the growth stops at |z| = 6 (max_sx) with a note, rather than fail mid-search."""
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(10, 30)),
                         columns=[f"c{i}" for i in range(30)])
    res = mbstat.iamb(frame, "c0", selection="none", alpha=0.5, progress=False)
    assert 0 < len(res.blanket) <= 7
    assert "can condition on at most 6 variables with 10 rows" in str(res.summary())
    sizes = res.tests["z"].map(lambda z: len(z.split(", ")) if z else 0)
    assert sizes.max() == 6
