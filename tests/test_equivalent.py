"""SES and TIE*: several Markov boundaries, their equivalence classes and the evidence."""
import itertools
import pickle
import random

import matplotlib
import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat.bn.random_networks import random_dag
from mbstat.ci.engine import CITester
from mbstat.ci.oracles.deterministic import DeterministicOracle
from mbstat.datasets import load_network, sample_network
from mbstat.results import EquivalentResult

matplotlib.use("Agg")


def duplicated_dag(n_nodes, seed, n_copies=3):
    """A random DAG with ``n_copies`` nodes copied under a new name (a child that is a
    relabeling of its one parent); (network, parents with copies, groups)."""
    net = random_dag(n_nodes, seed=seed, max_parents=3)
    parents = {v: tuple(net.parents[v]) for v in net.nodes}
    rng = random.Random(seed)
    groups = []
    for i, s in enumerate(rng.sample(list(net.nodes), n_copies)):
        parents[f"{s}_c{i}"] = (s,)
        groups.append((s, f"{s}_c{i}"))
    return net, parents, groups


def true_sets(net, groups, target, kind):
    base = net.markov_blanket(target) if kind == "mb" else net.parents_children(target)
    alt = {a: g for g in groups for a in g}
    return {frozenset(c) for c in itertools.product(*[alt.get(x, (x,)) for x in sorted(base)])}


def brute_force_boundaries(oracle, variables, target):
    """Every minimal set M with target _||_ rest | M under the oracle (a direct reading of
    the definition, independent of the graph)."""
    names = [v for v in variables if v != target]
    tester = CITester({v: () for v in variables}, oracle)
    found = []
    for k in range(len(names) + 1):
        for m in itertools.combinations(names, k):
            if any(set(b) <= set(m) for b in found):
                continue
            rest = [v for v in names if v not in m]
            if not rest or all(tester.test_many(rest, target, m).independent):
                found.append(m)
    return {frozenset(b) for b in found}


# ------------------------------------------------------------------ the oracle
def test_deterministic_oracle_reads_copies():
    parents = {"A": (), "T": ("A",), "A2": ("A",), "B": ("T",)}
    oracle = DeterministicOracle.from_groups(parents, [("A", "A2")])
    t = CITester(parents, oracle)
    assert t.test("A", "T", ("A2",)).independent  # the copy stands for A
    assert t.test("A2", "T", ("A",)).independent
    assert not t.test("A", "T").independent and not t.test("A2", "T").independent
    assert not t.test("A", "B", ()).independent and t.test("A", "B", ("T",)).independent
    assert t.test_name == "oracle"
    with pytest.raises(ValueError, match="not nodes"):
        DeterministicOracle(parents, {"Z": [["A"]]})


@pytest.mark.parametrize("seed", range(3))
def test_true_boundaries_match_the_definition(seed):
    """The truth the exactness tests use (the graph's blanket, members replaced by their
    copies) equals the minimal blankets read off the oracle by brute force."""
    net, parents, groups = duplicated_dag(7, seed, n_copies=2)
    oracle = DeterministicOracle.from_groups(parents, groups)
    sources = {g[0] for g in groups}
    for t in net.nodes:
        if t not in sources:
            assert brute_force_boundaries(oracle, list(parents), t) == \
                true_sets(net, groups, t, "mb")


@pytest.mark.parametrize("seed", range(6))
def test_exact_with_the_oracle(seed):
    """TIE*: the set of boundaries is the set of true Markov boundaries; SES (with the
    symmetry correction) the set of true parents-and-children sets."""
    net, parents, groups = duplicated_dag(12, seed)
    oracle = DeterministicOracle.from_groups(parents, groups)
    sources = {g[0] for g in groups}
    for t in net.nodes:
        if t in sources:
            continue
        res = mbstat.tie(parents, t, test=oracle)
        want = true_sets(net, groups, t, "mb")
        assert {frozenset(b) for b in res.boundaries} == want, (seed, t)
        assert res.n_boundaries == len(want) and res.complete
        res = mbstat.ses(parents, t, test=oracle, max_k=None, symmetry="and")
        want = true_sets(net, groups, t, "pc")
        assert {frozenset(b) for b in res.boundaries} == want, (seed, t)
        assert res.n_boundaries == len(want)


def test_ses_without_symmetry_is_mxm_superset():
    """MXM's SES (no symmetry correction) returns MMPC-bar's sets: each holds a true
    parents-and-children set (with the oracle, no member is missed)."""
    for seed in range(5):
        net, parents, groups = duplicated_dag(12, seed)
        oracle = DeterministicOracle.from_groups(parents, groups)
        for t in net.nodes:
            if t in {g[0] for g in groups}:
                continue
            got = mbstat.ses(parents, t, test=oracle, max_k=None).boundaries
            want = true_sets(net, groups, t, "pc")
            assert all(any(w <= set(b) for w in want) for b in got)


def test_tie_with_mmmb_base_and_checks():
    net, parents, groups = duplicated_dag(12, 1)
    oracle = DeterministicOracle.from_groups(parents, groups)
    t = next(v for v in net.nodes if len(true_sets(net, groups, v, "mb")) > 1)
    a = mbstat.tie(parents, t, test=oracle, base="inter_iamb")
    b = mbstat.tie(parents, t, test=oracle)
    assert {frozenset(x) for x in a.boundaries} == {frozenset(x) for x in b.boundaries}
    # mmmb's symmetry correction drops a member whose copy is present (the copy
    # separates it from everything): its first boundary misses the copied members
    m = mbstat.tie(parents, t, test=oracle, base="mmmb", base_args={"max_k": None})
    assert "base = \"mmmb\"" in m.call and "TIE*, base mmmb" in m.title
    assert set(m.blanket) < set().union(*b.boundaries)
    with pytest.raises(ValueError, match="base must name a CI learner"):
        mbstat.tie(parents, t, test=oracle, base="ses")
    with pytest.raises(TypeError, match="base_args"):
        mbstat.tie(parents, t, test=oracle, base_args={"bogus": 1})
    with pytest.raises(ValueError, match="max_boundaries"):
        mbstat.ses(parents, t, test=oracle, max_boundaries=0)


# ------------------------------------------------------------------ SES as MXM reads it
def test_ses_queue_and_equivalence_test():
    """A hand-traced run of MXM's InternalSES: A enters first (column order among equal
    p-values), A2 is tested given {A} (IdentifyEquivalence, the subsets with the last
    added), found independent and, by identifyTheEquivalent, A given {A2} is independent
    too: A2 joins A's queue; the signatures are expand.grid of the queues."""
    parents = {"A": (), "B": (), "T": ("A", "B"), "A2": ("A",), "B2": ("B",), "C": ("T",)}
    oracle = DeterministicOracle.from_groups(parents, [("A", "A2"), ("B", "B2")])
    res = mbstat.ses(parents, "T", test=oracle)
    assert res.classes == (("A", "A2"), ("B", "B2"), ("C",))
    assert res.blanket == ("A", "B", "C")
    assert res.n_boundaries == 4
    assert res.boundaries == (("A", "B", "C"), ("A2", "B", "C"), ("A", "B2", "C"),
                              ("A2", "B2", "C"))
    eq = res.equivalences.set_index("member")
    assert eq.loc["A2", "stands_for"] == "A" and eq.loc["A2", "x"] == "A"
    assert eq.loc["A2", "z"] == "A2" and eq.loc["A2", "pvalue"] == 1.0
    assert res.equivalent == {"A": ("A2",), "B": ("B2",), "C": ()}
    ev = res.evidence
    assert ev.loc["A2", "decision"] == "exclude" and ev.loc["A2", "z"] == "A"
    assert not res.unique


def test_ses_identify_equivalence_visits_in_column_order():
    """IdentifyEquivalence.R visits the selected and remaining variables in column order,
    each given the subsets of the selected ones as they stand when it is visited (line
    14): R (a remaining parent of T, column before S1) is tested given {S1, S2} before S1
    (S1 -> S2 -> T: independent given the last added S2) leaves; then S1 leaves, and no
    queue takes it (S2 is not independent of T given S1)."""
    from mbstat.algorithms.learners import Run
    from mbstat.algorithms.ses import _SES

    parents = {"R": (), "S1": (), "S2": ("S1",), "T": ("R", "S2")}
    tester = CITester(parents, "oracle", dag=parents)
    run = Run(tester, "T", ["R", "S1", "S2"], 0.0)
    s = _SES(run, "T", run.candidates, 3, record=True)
    for x in ("R", "S1", "S2"):
        s.update(x, tester.test(x, "T"))
    s.selected, s.remaining, s.last = ["S1", "S2"], ["R"], "S2"
    s.identify_equivalence()
    log = tester.log
    asked = list(zip(log["x"], log["z"]))
    assert asked.index(("R", "S1, S2")) < asked.index(("S1", "S2"))
    assert s.selected == ["S2"] and s.remaining == ["R"]
    assert s.queues["S2"] == ["S2"] and not s.equivalences


# ------------------------------------------------------------------ data
def _copied(n=3000, seed=0):
    data = sample_network("asia", n, seed=seed)
    data = data.copy()
    data["lung_copy"] = data["lung"]
    recode = {"yes": "pos", "no": "neg"}
    data["tub_recoded"] = data["tub"].map(recode).astype("category")
    return data


def test_data_relabelings_found_and_said():
    data = _copied()
    before = data.copy()
    for fn in (mbstat.tie, mbstat.ses):
        res = fn(data, "either", test="g2")
        assert isinstance(res, EquivalentResult)
        sets = {frozenset(b) for b in res.boundaries}
        assert sets == {frozenset(s) for s in [("lung", "tub"), ("lung_copy", "tub"),
                                              ("lung", "tub_recoded"),
                                              ("lung_copy", "tub_recoded")]}, fn
        det = res.deterministic
        # the tables' rows are numbered in a named index (was an unnamed 0-based one)
        assert det.index.equals(pd.RangeIndex(1, len(det) + 1, name="relation"))
        eq = res.equivalences
        assert len(eq) and eq.index.equals(pd.RangeIndex(1, len(eq) + 1, name="equivalence"))
        assert res.boundary_tests.index.name == "run"
        pairs = set(zip(det["variable"], det["given"]))
        assert ("lung_copy", "lung") in pairs and ("tub", "tub_recoded") in pairs
        assert (det["ratio"] == 0).all()
        text = str(res.summary())
        assert "Equivalence classes" in text and "Markov boundaries: 4" in text
        assert "need not be unique" in text and "lung_copy" in text
        assert res == fn(data, "either", test="g2")  # same data, same result
        assert pickle.loads(pickle.dumps(res)) == res
    pd.testing.assert_frame_equal(data, before)


def test_continuous_copy_fisher_z():
    rng = np.random.default_rng(0)
    n = 2000
    a, b = rng.normal(size=n), rng.normal(size=n)
    t = a + b + rng.normal(size=n)
    data = pd.DataFrame({"a": a, "b": b, "a_scaled": 3 * a - 1, "t": t,
                         "noise": rng.normal(size=n)})
    res = mbstat.tie(data, "t")
    assert {frozenset(x) for x in res.boundaries} == {frozenset("ab"),
                                                      frozenset(["a_scaled", "b"])}
    assert res.deterministic["measure"].eq("variance").all() and len(res.deterministic)


@pytest.mark.slow
def test_hailfinder_relabelings():
    """CombVerMo and AreaMeso_ALS are relabelings of each other. For SubjVertMo (a parent
    of CombVerMo) TIE* reports the graph's blanket and the one with AreaMeso_ALS in
    CombVerMo's place; for CombVerMo itself, AreaMeso_ALS alone is the boundary (it
    determines it), and without it TIE* finds boundaries holding CombVerMo's parents."""
    data = sample_network("hailfinder", 5000, seed=1)
    net = load_network("hailfinder")
    res = mbstat.tie(data, "SubjVertMo")
    mb = set(net.markov_blanket("SubjVertMo"))
    sets = {frozenset(b) for b in res.boundaries}
    assert frozenset(mb) in sets
    assert frozenset(mb - {"CombVerMo"} | {"AreaMeso_ALS"}) in sets
    assert any({"CombVerMo", "AreaMeso_ALS"} <= set(c) for c in res.classes)
    assert "need not be unique" in str(res.summary())
    own = mbstat.tie(data, "CombVerMo")  # the paper's TIE*: the relabeling, named
    assert own.boundaries == (("AreaMeso_ALS",),) and own.determining == ("AreaMeso_ALS",)
    assert own.reduced_boundaries == () and "without_determining=True" in str(own.summary())
    own = mbstat.tie(data, "CombVerMo", without_determining=True)
    parents = set(net.parents["CombVerMo"])
    assert own.reduced_boundaries and all(parents <= set(b) for b in own.reduced_boundaries)
    assert "alone determines CombVerMo" in str(own.summary())


# ------------------------------------------------------------------ the common front end
@pytest.mark.parametrize("name", ["ses", "tie"])
def test_common_arguments(name):
    data = _copied(1500)
    fn = getattr(mbstat, name)
    res = fn(data, "either", test="g2", whitelist=["asia"], blacklist=["lung_copy"])
    assert "asia" in res.blanket and all("asia" in b for b in res.boundaries)
    assert all("lung_copy" not in b for b in res.boundaries)
    holed = data.copy()
    holed.loc[holed.index[::17], "smoke"] = np.nan
    part = fn(holed, "either", test="g2", na="pairwise")
    assert "n" in part.tests.columns
    capped = fn(data, "either", test="g2", max_sx=1)
    z = capped.tests["z"].map(lambda v: len(v.split(", ")) if v else 0)
    assert (z <= 1).all()
    assert name in mbstat.LEARNERS and mbstat.LEARNERS[name].result is EquivalentResult


@pytest.mark.parametrize("name", ["ses", "tie"])
def test_progress_and_ctrl_c(monkeypatch, capsys, name):
    data = sample_network("alarm", 1000, seed=0)
    fn = getattr(mbstat, name)
    full = fn(data, "HR", test="g2", progress=True)
    assert f"{name}: blanket of HR" in capsys.readouterr().err
    calls = {"n": 0}
    answer = CITester._answer

    def interrupted(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] >= 4:
            raise KeyboardInterrupt
        return answer(self, *args, **kwargs)

    monkeypatch.setattr(CITester, "_answer", interrupted)
    part = fn(data, "HR", test="g2")
    assert not part.complete and part.n_tests < full.n_tests
    assert any("interrupted (KeyboardInterrupt)" in note for note in part.notes)
    assert (part.evidence.loc[list(part.blanket), "decision"] == "keep").all()
    assert "incomplete" in str(part.summary())


def test_plots_return_axes():
    res = mbstat.tie(_copied(1500), "either", test="g2")
    for kind in ("boundaries", "pvalues", "trace"):
        ax = res.plot(kind=kind)
        assert isinstance(ax, matplotlib.axes.Axes)
    with pytest.raises(ValueError, match="kind"):
        res.plot(kind="nope")


# ------------------------------------------------------------------ every learner's note
def test_every_learner_says_a_deterministic_relation_it_saw():
    """A learner whose deciding tests met a relabeling (G2 exactly 0 given the other one)
    says so under its summary; data without one gets no such note."""
    data = _copied(2000)
    for name in ("iamb", "mmpc", "iamb_fdr"):
        res = mbstat.METHODS[name](data, "either", test="g2")
        text = str(res.summary())
        assert "deterministic" in text and "need not be unique" in text, name
    plain = mbstat.iamb(sample_network("asia", 2000, seed=0), "smoke", test="g2")
    assert not any("deterministic" in n for n in plain.notes)


def test_fisher_z_batch_with_an_x_linear_in_z():
    """A batch holding an x exactly linear in z (ill posed: decided from the rows) leaves
    the other candidates' statistics alone: each equals the Fisher z of the residual
    correlation (numpy least squares), as in a batch of its own."""
    rng = np.random.default_rng(0)
    n = 2000
    a, b = rng.normal(size=n), rng.normal(size=n)
    data = pd.DataFrame({"a": a, "b": b, "a_scaled": 3 * a - 1, "t": a + b + rng.normal(size=n),
                         "noise": rng.normal(size=n)})
    batch = CITester(data, "fisher_z").test_many(["a", "b", "noise"], "t", ("a_scaled",))
    design = np.column_stack([np.ones(n), data["a_scaled"]])

    def resid(v):
        return v - design @ np.linalg.lstsq(design, v, rcond=None)[0]

    rt = resid(data["t"].to_numpy())
    for i, x in enumerate(["b", "noise"], start=1):
        r = np.corrcoef(resid(data[x].to_numpy()), rt)[0, 1]
        assert batch.statistic[i] == pytest.approx(np.sqrt(n - 4) * np.arctanh(r), rel=1e-8)
    assert batch.statistic[0] == 0 and batch.independent[0]
