"""Tests of mbstat.bn: BIF parsing, structure queries, d-separation, sampling."""
from __future__ import annotations

import gzip
import itertools
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbstat.bn import (
    BayesianNetwork,
    DSeparator,
    blanket_scores,
    d_separated,
    from_edges,
    random_dag,
    read_bif,
)

NETWORK_DIR = Path(__file__).resolve().parents[1] / "mbstat" / "data" / "networks"

# nodes, arcs, free parameters (bnlearn's counts), max in-degree
SIZES = {
    "asia": (8, 8, 18, 2),
    "alarm": (37, 46, 509, 4),
    "insurance": (27, 52, 1008, 3),
    "hailfinder": (56, 66, 2656, 4),
    "barley": (48, 84, 114005, 4),
    "cancer": (5, 4, 10, 2),
    "earthquake": (5, 4, 10, 2),
    "survey": (6, 6, 21, 2),
}


@pytest.fixture(scope="module")
def networks():
    return {name: read_bif(NETWORK_DIR / f"{name}.bif.gz") for name in SIZES}


@pytest.fixture(scope="module")
def asia(networks):
    return networks["asia"]


# ---------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------


def moral_ancestral_dsep(parents, x, y, z):
    """d-separation by the moralized ancestral graph criterion (Lauritzen)."""
    x, y, z = set(x), set(y), set(z)
    anc, stack = set(), list(x | y | z)
    while stack:
        v = stack.pop()
        if v not in anc:
            anc.add(v)
            stack.extend(parents[v])
    adj = {v: set() for v in anc}
    for v in anc:
        ps = list(parents[v])
        for p in ps:
            adj[v].add(p)
            adj[p].add(v)
        for a, b in itertools.combinations(ps, 2):
            adj[a].add(b)
            adj[b].add(a)
    seen, stack = set(x), list(x)
    while stack:
        for w in adj[stack.pop()]:
            if w in z or w in seen:
                continue
            if w in y:
                return False
            seen.add(w)
            stack.append(w)
    return True


def exact_marginals(net):
    """Marginal of every node by enumerating the full joint (small networks)."""
    cards = [len(net.levels[v]) for v in net.nodes]
    pos = {v: i for i, v in enumerate(net.nodes)}
    out = {v: np.zeros(len(net.levels[v])) for v in net.nodes}
    for states in itertools.product(*(range(k) for k in cards)):
        p = 1.0
        for v in net.nodes:
            p *= net.cpts[v][tuple(states[pos[q]] for q in net.parents[v]) + (states[pos[v]],)]
        for v in net.nodes:
            out[v][states[pos[v]]] += p
    return out


# ---------------------------------------------------------------------------
# BIF parsing of the shipped networks
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SIZES))
def test_shipped_network_sizes(networks, name):
    net = networks[name]
    n_nodes, n_arcs, n_params, max_in = SIZES[name]
    assert net.name == name
    assert len(net.nodes) == n_nodes
    assert net.n_arcs == n_arcs == len(net.edges)
    assert net.n_parameters == n_params
    assert max(len(p) for p in net.parents.values()) == max_in
    assert repr(net) == f"<BayesianNetwork {name}: {n_nodes} nodes, {n_arcs} arcs>"


@pytest.mark.parametrize("name", sorted(SIZES))
def test_shipped_network_consistency(networks, name):
    net = networks[name]
    text = gzip.decompress((NETWORK_DIR / f"{name}.bif.gz").read_bytes()).decode()
    assert text.count("variable ") == len(net.nodes)
    seen = set()
    for v in net.nodes:  # topological order
        assert set(net.parents[v]) <= seen
        seen.add(v)
        cpt = net.cpts[v]
        shape = tuple(len(net.levels[p]) for p in net.parents[v]) + (len(net.levels[v]),)
        assert cpt.shape == shape
        np.testing.assert_allclose(cpt.sum(axis=-1), 1.0, rtol=0, atol=1e-6)
        assert (cpt >= 0).all()
        assert not cpt.flags.writeable


def test_asia_cpt_values_and_axes(asia):
    assert asia.levels["asia"] == ("yes", "no")
    np.testing.assert_array_equal(asia.cpts["asia"], [0.01, 0.99])
    # probability ( dysp | bronc, either ): (no, yes) 0.7, 0.3
    assert asia.parents["dysp"] == ("bronc", "either")
    np.testing.assert_array_equal(asia.cpts["dysp"][1, 0], [0.7, 0.3])
    np.testing.assert_array_equal(asia.cpts["dysp"][0, 1], [0.8, 0.2])
    # probability ( either | lung, tub ): (no, no) 0.0, 1.0
    np.testing.assert_array_equal(asia.cpts["either"][1, 1], [0.0, 1.0])


# ---------------------------------------------------------------------------
# BIF syntax
# ---------------------------------------------------------------------------

SMALL_BIF = """
// a comment line
network "tiny net" {   // trailing comment
  property "software = hand written" ;
}
/* a block
   comment */
variable A { type discrete [ 2 ] { a0, a1 }; property "position = (1, 2)" ; }
variable "B" {
  type discrete[3]{b0 b1 b2};
}
variable C {
  type discrete [ 2 ] { c0, c1 };
}
probability ( A ) { table 0.3, 0.7 ; }
probability(B|A){
  (a0)   0.2,0.3 , 0.5;
  default 0.1, 0.1, 0.8;
}
probability ( C | A, B ) {
  table 0.1 0.2 0.3 0.4 0.5 0.6
        0.9 0.8 0.7 0.6 0.5 0.4 ;
}
"""


def write(tmp_path, text, name="net.bif", compress=False):
    path = tmp_path / name
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def test_bif_syntax_variants(tmp_path):
    net = read_bif(write(tmp_path, SMALL_BIF))
    assert net.name == "tiny net"
    assert net.nodes == ("A", "B", "C")
    assert net.levels["B"] == ("b0", "b1", "b2")
    assert net.parents["C"] == ("A", "B")
    np.testing.assert_array_equal(net.cpts["B"], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    # table: node slowest, last parent fastest (BIF 0.15 / JavaBayes / pgmpy)
    np.testing.assert_allclose(net.cpts["C"][0, 0], [0.1, 0.9])
    np.testing.assert_allclose(net.cpts["C"][0, 2], [0.3, 0.7])
    np.testing.assert_allclose(net.cpts["C"][1, 0], [0.4, 0.6])
    np.testing.assert_allclose(net.cpts["C"][1, 2], [0.6, 0.4])


def test_bif_gzip_and_name(tmp_path):
    plain = read_bif(write(tmp_path, SMALL_BIF))
    packed = read_bif(write(tmp_path, SMALL_BIF, "x.bif.gz", compress=True))
    assert packed == plain
    unnamed = SMALL_BIF.replace('"tiny net"', "unknown")
    assert read_bif(write(tmp_path, unnamed, "mynet.bif.gz", compress=True)).name == "mynet"
    assert read_bif(write(tmp_path, unnamed), name="given").name == "given"


def test_bif_old_header_without_bar(tmp_path):
    text = """network "dog" { }
    variable "light-on" { type discrete[2] { "true" "false" }; }
    variable "family-out" { type discrete[2] { "true" "false" }; }
    probability ( "family-out" ) { table 0.15 0.85 ; }
    probability ( "light-on" "family-out" ) { table 0.6 0.05 0.4 0.95 ; }
    """
    net = read_bif(write(tmp_path, text))
    assert net.nodes == ("family-out", "light-on")
    assert net.parents["light-on"] == ("family-out",)
    np.testing.assert_allclose(net.cpts["light-on"], [[0.6, 0.4], [0.05, 0.95]])


def test_bif_renormalizes_small_rounding(tmp_path):
    text = SMALL_BIF.replace("table 0.3, 0.7", "table 0.3, 0.7005")
    net = read_bif(write(tmp_path, text))
    np.testing.assert_allclose(net.cpts["A"], [0.3 / 1.0005, 0.7005 / 1.0005])
    assert net.cpts["A"].sum() == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(
    "old, new, match",
    [
        ("table 0.3, 0.7", "table 0.3, 0.8", "node 'A'"),
        ("table 0.3, 0.7", "table 0.3, 0.2, 0.5", "node 'A'.*expected 2"),
        ("default 0.1, 0.1, 0.8;", "", "node 'B'.*no default"),
        ("(a0)", "(zz)", "'zz' is not a state of parent 'A'"),
        ("probability(B|A)", "probability(B|D)", "undeclared variable 'D'"),
        ("{b0 b1 b2}", "{b0 b1}", "declares 3 states but lists 2"),
        ("table 0.3, 0.7 ;", "table 0.3, 0.7 ", "line"),
        ("table 0.3, 0.7", "table 0.3, x", "line 15: .*found 'x'"),
        ("table 0.3, 0.7", "table -0.3, 1.3", "negative"),
    ],
)
def test_bif_errors(tmp_path, old, new, match):
    text = SMALL_BIF.replace(old, new)
    assert text != SMALL_BIF
    with pytest.raises(ValueError, match=match):
        read_bif(write(tmp_path, text))


def test_bif_cycle_and_missing_block(tmp_path):
    cyc = """network x {}
    variable A { type discrete [2] {0, 1}; }
    variable B { type discrete [2] {0, 1}; }
    probability (A | B) { (0) 0.5, 0.5; (1) 0.5, 0.5; }
    probability (B | A) { (0) 0.5, 0.5; (1) 0.5, 0.5; }
    """
    with pytest.raises(ValueError, match="cycle"):
        read_bif(write(tmp_path, cyc))
    with pytest.raises(ValueError, match="no probability block"):
        read_bif(write(tmp_path, cyc.split("probability (B")[0]))


# ---------------------------------------------------------------------------
# structure
# ---------------------------------------------------------------------------


def test_asia_structure(asia):
    assert asia.markov_blanket("either") == {"tub", "lung", "xray", "dysp", "bronc"}
    assert asia.markov_blanket("smoke") == {"lung", "bronc"}
    assert asia.markov_blanket("asia") == {"tub"}
    assert asia.markov_blanket("tub") == {"asia", "either", "lung"}
    assert asia.children("smoke") == ("lung", "bronc")
    assert asia.children("dysp") == ()
    assert asia.spouses("bronc") == {"either"}
    assert asia.spouses("lung") == {"tub"}
    assert asia.parents_children("either") == {"lung", "tub", "xray", "dysp"}
    assert set(asia.edges) == {
        ("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc"), ("tub", "either"),
        ("lung", "either"), ("either", "xray"), ("either", "dysp"), ("bronc", "dysp"),
    }
    mbs = asia.markov_blankets()
    assert list(mbs) == list(asia.nodes)
    assert all(isinstance(mb, frozenset) for mb in mbs.values())
    with pytest.raises(ValueError, match="'nope' is not a node of network 'asia'"):
        asia.markov_blanket("nope")


@pytest.mark.parametrize("seed", range(40))
def test_markov_blanket_separates_the_rest(seed):
    net = random_dag(12, edge_prob=0.3, seed=seed)
    for v in net.nodes:
        mb = net.markov_blanket(v)
        # symmetry of the Markov blanket relation in a DAG
        assert all(v in net.markov_blanket(w) for w in mb)
        rest = set(net.nodes) - mb - {v}
        if rest:
            assert net.d_separated(v, rest, mb)
        # every member is needed (the blanket is a boundary in the graph)
        for w in mb:
            assert not net.d_separated(v, w, mb - {w})


def test_network_is_immutable_and_copies_inputs():
    cpt_b = np.array([[0.9, 0.1], [0.2, 0.8]])
    cpts = {"a": np.array([0.5, 0.5]), "b": cpt_b}
    parents = {"a": (), "b": ["a"]}
    net = BayesianNetwork("t", ("a", "b"), parents, {"a": ("0", "1"), "b": ("0", "1")}, cpts)
    cpt_b[0, 0] = 0.0  # the caller keeps ownership of its arrays
    parents["b"].append("zzz")
    assert net.cpts["b"][0, 0] == 0.9
    assert net.parents["b"] == ("a",)
    assert cpts["b"] is cpt_b and cpts["b"].flags.writeable
    with pytest.raises(TypeError):
        net.parents["a"] = ("b",)
    with pytest.raises(TypeError):
        net.cpts["a"] = np.array([1.0, 0.0])
    with pytest.raises(ValueError):
        net.cpts["a"][0] = 1.0
    with pytest.raises(AttributeError):
        net.name = "other"


def test_network_validation():
    lv = {"a": ("0", "1"), "b": ("0", "1")}
    good = {"a": np.array([0.5, 0.5]), "b": np.array([[0.9, 0.1], [0.2, 0.8]])}
    with pytest.raises(ValueError, match="topological order"):
        BayesianNetwork("t", ("b", "a"), {"a": (), "b": ("a",)}, lv, good)
    with pytest.raises(ValueError, match=r"cpts\['b'\] must have shape \(2, 2\)"):
        BayesianNetwork("t", ("a", "b"), {"a": (), "b": ("a",)}, lv,
                        {"a": good["a"], "b": np.array([0.5, 0.5])})
    with pytest.raises(ValueError, match=r"cpts\['b'\]: rows must sum to 1"):
        BayesianNetwork("t", ("a", "b"), {"a": (), "b": ("a",)}, lv,
                        {"a": good["a"], "b": np.array([[0.9, 0.2], [0.2, 0.8]])})
    with pytest.raises(ValueError, match=r"parents\['b'\]: unknown node 'c'"):
        BayesianNetwork("t", ("a", "b"), {"a": (), "b": ("c",)}, lv, good)
    with pytest.raises(ValueError, match="missing the states of node 'b'"):
        BayesianNetwork("t", ("a", "b"), {"a": (), "b": ("a",)}, {"a": ("0", "1")}, good)


def test_pickle_and_equality(networks):
    for net in networks.values():
        back = pickle.loads(pickle.dumps(net))
        assert back == net and hash(back) == hash(net)
        assert back.markov_blankets() == net.markov_blankets()
    assert networks["asia"] != networks["cancer"]


def test_pickles_from_before_the_package_split_load(networks):
    """mbstat.bn was one module: its pickles name the class mbstat.bn.BayesianNetwork."""
    net = networks["asia"]
    now = pickle.dumps(net, protocol=2)  # protocol 2 writes the class path as text
    here = f"c{type(net).__module__}\nBayesianNetwork\n".encode()
    assert here in now
    before = now.replace(here, b"cmbstat.bn\nBayesianNetwork\n")
    assert pickle.loads(before) == net
    # and the public names stay where users import them
    import mbstat.bn

    assert set(mbstat.bn.__all__) == {"BayesianNetwork", "DSeparator", "blanket_scores",
                                      "d_separated", "from_edges", "random_dag", "read_bif"}
    assert d_separated(net, "asia", "smoke") and not d_separated(net, "asia", "dysp")


# ---------------------------------------------------------------------------
# d-separation
# ---------------------------------------------------------------------------


def test_textbook_d_separation():
    chain = {"a": (), "b": ("a",), "c": ("b",)}
    assert not d_separated(chain, "a", "c")
    assert d_separated(chain, "a", "c", "b")
    fork = {"b": (), "a": ("b",), "c": ("b",)}
    assert not d_separated(fork, "a", "c")
    assert d_separated(fork, "a", "c", ["b"])
    collider = {"a": (), "c": (), "b": ("a", "c"), "d": ("b",)}
    assert d_separated(collider, "a", "c")
    assert not d_separated(collider, "a", "c", "b")
    assert not d_separated(collider, "a", "c", "d")  # observed descendant opens it
    assert d_separated(collider, "a", "c", set())
    # M-structure: conditioning on the collider opens a trail through a spouse
    m = {"x": (), "u1": (), "u2": (), "y": ("u2",), "c": ("u1", "u2"), "t": ("x", "u1")}
    assert d_separated(m, "x", "y")
    assert d_separated(m, "x", "y", "c")
    assert not d_separated(m, "x", "y", ["t", "c"])
    assert d_separated(m, "x", "y", ["t", "c", "u1"])


def test_d_separation_sets_and_errors(asia):
    assert asia.d_separated({"asia", "tub"}, {"smoke", "bronc"}, ())
    assert not asia.d_separated({"asia", "tub"}, {"smoke", "bronc"}, "dysp")
    # either is a collider (tub -> either <- lung): observing it opens asia..smoke
    assert not asia.d_separated(frozenset({"asia"}), ["xray", "dysp"], ["either"])
    assert asia.d_separated(frozenset({"asia"}), ["xray", "dysp"], ["either", "smoke"])
    assert asia.d_separated([], "xray")  # empty x: trivially separated
    with pytest.raises(ValueError, match="disjoint"):
        asia.d_separated("asia", "tub", ["asia"])
    with pytest.raises(ValueError, match="z: unknown node 'nope'"):
        asia.d_separated("asia", "tub", ["nope"])
    with pytest.raises(ValueError, match="cycle"):
        d_separated({1: (2,), 2: (1,)}, 1, 2)
    with pytest.raises(TypeError, match="dag must be a mapping"):
        d_separated([("a", "b")], "a", "b")
    # int node names, parents given as lists, root nodes implied by parents
    assert d_separated({2: [0, 1]}, 0, 1)
    assert not d_separated({2: [0, 1]}, 0, 1, 2)


def test_d_separated_module_function_matches_method(asia):
    dag = {v: list(ps) for v, ps in asia.parents.items()}
    sep = DSeparator(dag)
    nodes = list(asia.nodes)
    for x, y in itertools.combinations(nodes, 2):
        rest = [v for v in nodes if v not in (x, y)]
        for k in range(3):
            for z in itertools.combinations(rest, k):
                expected = moral_ancestral_dsep(asia.parents, {x}, {y}, set(z))
                assert asia.d_separated(x, y, z) == expected
                assert d_separated(dag, x, y, z) == expected
                assert d_separated(asia, x, y, z) == expected
                assert sep(y, x, z) == expected


# 100 random DAGs of 2 to 30 nodes, 35 queries each (200 took twice the time); d-separation
# is also checked exhaustively on asia and on every node of 40 seeded DAGs above
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 30),
    p=st.floats(0.0, 0.5),
    seed=st.integers(0, 2**32 - 1),
)
def test_d_separation_matches_moral_graph(n, p, seed):
    dag = random_dag(n, edge_prob=p, seed=seed)
    rng = np.random.default_rng(seed)
    nodes = np.array(dag.nodes)
    for _ in range(15):
        perm = rng.permutation(nodes)
        nx = rng.integers(1, min(3, n - 1) + 1)
        ny = rng.integers(1, min(3, n - nx) + 1)
        nz = rng.integers(0, n - nx - ny + 1)
        x, y = set(perm[:nx]), set(perm[nx:nx + ny])
        z = set(perm[nx + ny:nx + ny + nz])
        assert dag.d_separated(x, y, z) == moral_ancestral_dsep(dag.parents, x, y, z)
    sep = DSeparator(dag.parents)
    for _ in range(5):  # one reachability pass answers every single-node query
        perm = rng.permutation(nodes)
        y, z = perm[0], set(perm[1:1 + rng.integers(0, n - 1)])
        connected = set(sep.connected(y, z))
        for x in set(nodes) - z - {y}:
            assert (x not in connected) == moral_ancestral_dsep(dag.parents, {x}, {y}, z)
        assert connected.isdisjoint(z | {y})
    with pytest.raises(ValueError, match="y: unknown node 'nope'"):
        sep.connected("nope")
    with pytest.raises(ValueError, match="y and z must be disjoint"):
        sep.connected(nodes[0], [nodes[0]])


# ---------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------


def test_sample_frequencies_match_exact_marginals(asia):
    n = 100_000
    df = asia.sample(n, seed=2024)
    exact = exact_marginals(asia)
    for v in asia.nodes:
        freq = df[v].value_counts(normalize=True).reindex(asia.levels[v]).to_numpy()
        se = np.sqrt(exact[v] * (1 - exact[v]) / n)
        assert np.all(np.abs(freq - exact[v]) <= 5 * se + 1e-12), v
    # either = tub or lung is deterministic in the CPT: it must hold on every row
    either = (df["tub"] == "yes") | (df["lung"] == "yes")
    assert ((df["either"] == "yes") == either).all()


def test_sample_conditionals_match_cpts(networks):
    """Multi-parent, multi-state nodes: the mixed-radix configuration indexing."""
    net = networks["alarm"]
    n = 60_000
    df = net.sample(n, seed=7)
    codes = {v: df[v].cat.codes.to_numpy() for v in net.nodes}
    checked = 0
    for v in net.nodes:
        ps = net.parents[v]
        if len(ps) < 2:
            continue
        keys = pd.MultiIndex.from_arrays([codes[p] for p in ps] + [codes[v]])
        counts = pd.Series(1, index=keys).groupby(level=list(range(len(ps) + 1))).sum()
        for config in {k[:-1] for k in counts.index}:
            row = counts.loc[config]  # counts of v's states in this configuration
            total = row.sum()
            if total < 2000:
                continue
            freq = np.zeros(len(net.levels[v]))
            freq[row.index.to_numpy()] = row.to_numpy() / total
            p = net.cpts[v][config]
            assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / total) + 1e-12)
            checked += 1
    assert checked >= 10


def test_sample_format_and_determinism(asia):
    a = asia.sample(500, seed=3)
    b = asia.sample(500, seed=3)
    c = asia.sample(500, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert list(a.columns) == list(asia.nodes)
    for v in asia.nodes:
        assert isinstance(a[v].dtype, pd.CategoricalDtype)
        assert tuple(a[v].cat.categories) == asia.levels[v]
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    pd.testing.assert_frame_equal(asia.sample(50, seed=g1), asia.sample(50, seed=g2))
    empty = asia.sample(0, seed=1)
    assert empty.shape == (0, 8)
    with pytest.raises(ValueError, match="n must be >= 0"):
        asia.sample(-1)
    with pytest.raises(TypeError, match="n must be an integer"):
        asia.sample(2.5)


def test_sample_keeps_unused_levels_and_skips_impossible_states():
    net = BayesianNetwork(
        "z", ("a", "b"), {"a": (), "b": ("a",)},
        {"a": ("x", "y", "never"), "b": ("u", "v")},
        {"a": np.array([0.5, 0.5, 0.0]), "b": np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])},
    )
    df = net.sample(20_000, seed=0)
    assert tuple(df["a"].cat.categories) == ("x", "y", "never")
    assert (df["a"] != "never").all()
    assert ((df["a"] == "x") == (df["b"] == "u")).all()


def test_sample_large_cardinality(networks):
    net = networks["barley"]
    df = net.sample(2000, seed=1)
    assert df.shape == (2000, 48)
    for v in net.nodes:
        assert df[v].cat.codes.min() >= 0


# ---------------------------------------------------------------------------
# random networks
# ---------------------------------------------------------------------------


def test_from_edges():
    net = from_edges([("b", "c"), ("a", "c"), ("c", "d")], nodes=["a", "b", "c", "d", "e"],
                     levels={"a": 2, "b": 3, "c": ("lo", "hi"), "d": 2, "e": 4}, seed=1)
    assert net.name == "random"
    assert net.nodes == ("a", "b", "c", "d", "e")
    assert net.parents["c"] == ("a", "b")
    assert net.cpts["c"].shape == (2, 3, 2)
    assert net.levels["c"] == ("lo", "hi") and net.levels["e"] == ("0", "1", "2", "3")
    np.testing.assert_allclose(net.cpts["c"].sum(-1), 1.0)
    assert from_edges([("a", "b")], seed=1) == from_edges([("a", "b")], seed=1)
    with pytest.raises(ValueError, match="cycle"):
        from_edges([("a", "b"), ("b", "c"), ("c", "a")])
    with pytest.raises(ValueError, match="self-loop"):
        from_edges([("a", "a")])
    with pytest.raises(ValueError, match="not in nodes"):
        from_edges([("a", "b")], nodes=["a"])
    with pytest.raises(ValueError, match="repeated arcs"):
        from_edges([("a", "b"), ("a", "b")])


def test_random_dag_properties():
    a = random_dag(30, edge_prob=0.2, seed=11)
    b = random_dag(30, edge_prob=0.2, seed=11)
    assert a == b
    assert a != random_dag(30, edge_prob=0.2, seed=12)
    assert sorted(a.nodes, key=lambda s: int(s[1:])) == [f"X{i}" for i in range(1, 31)]
    capped = random_dag(30, max_parents=2, seed=3)
    assert max(len(p) for p in capped.parents.values()) <= 2
    both = random_dag(30, edge_prob=0.9, max_parents=3, seed=3)
    assert max(len(p) for p in both.parents.values()) == 3
    assert random_dag(10, edge_prob=0.0, seed=0).n_arcs == 0
    assert random_dag(6, edge_prob=1.0, seed=0).n_arcs == 15
    assert random_dag(1, seed=0).nodes == ("X1",)
    with pytest.raises(ValueError, match="edge_prob must be in"):
        random_dag(5, edge_prob=1.5)
    with pytest.raises(ValueError, match="n_nodes must be >= 1"):
        random_dag(0)


def test_blanket_scores():
    s = blanket_scores(["a", "b", "x"], ("a", "b", "c", "d"))
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == 0.5
    assert s["F1"] == pytest.approx(2 * 2 / (3 + 4)) and (s["FP"], s["FN"]) == (1, 2)
    assert blanket_scores([], ["a"]) == {"precision": 1.0, "recall": 0.0, "F1": 0.0,
                                         "FP": 0, "FN": 1}
    assert blanket_scores([], [])["F1"] == 1.0 and blanket_scores(["a"], ["b"])["F1"] == 0.0
    with pytest.raises(TypeError, match="found must be an iterable of nodes"):
        blanket_scores("ab", ["a"])
    found = ["a"]
    blanket_scores(found, {"a"})
    assert found == ["a"]
