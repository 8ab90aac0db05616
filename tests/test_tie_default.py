"""TIE*'s default output on principle (Statnikov et al. 2013): all and only the Markov
boundaries of the target in V. Where a variable D alone determines the target, {D} is a
Markov blanket inside the graph's blanket, which is then not minimal: not a Markov
boundary, and not among TIE*'s boundaries (the nine deterministic hailfinder nodes)."""
import pytest

import mbstat
from mbstat.ci.oracles.deterministic import DeterministicOracle
from mbstat.datasets import load_network

#: hailfinder's relabelings and a function of Scenario (their 0/1 tables).
RELATIONS = {"AreaMeso_ALS": [["CombVerMo"]], "CombVerMo": [["AreaMeso_ALS"]],
             "ScnRelPlFcst": [["Scenario"]], "Scenario": [["ScnRelPlFcst"]],
             "ScenRelAMCIN": [["Scenario"]]}


@pytest.fixture(scope="module")
def hail():
    net = load_network("hailfinder")
    parents = {v: tuple(net.parents[v]) for v in net.nodes}
    return net, parents, DeterministicOracle(net, RELATIONS)


def _blanket(parents, oracle, target, m) -> bool:
    """T independent of every other variable given m (the definition of a blanket)."""
    rest = [v for v in parents if v != target and v not in m]
    return bool(mbstat.ci_test_batch(parents, rest, target, tuple(m), test=oracle)
                .independent.all())


@pytest.mark.parametrize("target, determining", [("CombVerMo", "AreaMeso_ALS"),
                                                 ("ScnRelPlFcst", "Scenario"),
                                                 ("ScenRelAMCIN", "Scenario")])
def test_graph_blanket_is_not_a_boundary(hail, target, determining):
    net, parents, oracle = hail
    mb = set(net.markov_blanket(target))
    assert determining in mb and len(mb) > 1
    assert _blanket(parents, oracle, target, mb)  # a Markov blanket ...
    assert _blanket(parents, oracle, target, {determining})  # ... holding a smaller one
    res = mbstat.tie(parents, target, test=oracle, progress=False)
    found = {frozenset(b) for b in res.boundaries}
    assert frozenset([determining]) in found
    assert frozenset(mb) not in found  # only Markov boundaries (minimal blankets)
    for b in found:  # each reported set is a blanket, and minimal: no member can go
        assert _blanket(parents, oracle, target, b)
        assert not any(_blanket(parents, oracle, target, b - {v}) for v in b)
