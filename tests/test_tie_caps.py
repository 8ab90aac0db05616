"""TIE*'s caps (max_runs, max_boundaries, max_removed): a cap that stops the enumeration
while IGS still has removal sets to try marks the result incomplete, with a note naming
the cap and how to raise it; the boundaries found are then a subset of the full set
(known here: a D-separation oracle on a random DAG with copied nodes)."""
import pytest

import mbstat
from mbstat.ci.oracles.deterministic import DeterministicOracle

from test_equivalent import _copied, duplicated_dag, true_sets


@pytest.fixture(scope="module")
def case():
    """The first target (seeds 0.., 12 nodes, 3 copies) with at least 4 true boundaries."""
    for seed in range(10):
        net, parents, groups = duplicated_dag(12, seed)
        oracle = DeterministicOracle.from_groups(parents, groups)
        sources = {g[0] for g in groups}
        for t in net.nodes:
            if t not in sources:
                want = true_sets(net, groups, t, "mb")
                if len(want) >= 4:
                    return parents, oracle, t, want
    raise AssertionError("no target with 4 boundaries")


def _sets(res):
    return {frozenset(b) for b in res.boundaries}


def test_uncapped_is_complete(case):
    parents, oracle, t, want = case
    res = mbstat.tie(parents, t, test=oracle, progress=False)
    assert _sets(res) == want and res.complete
    assert not any("stopped early" in n for n in res.notes)
    assert "incomplete" not in str(res.summary())


@pytest.mark.parametrize("cap, name", [({"max_runs": 1}, "max_runs"),
                                       ({"max_boundaries": 2}, "max_boundaries"),
                                       ({"max_removed": 1}, "max_removed")])
def test_a_cap_that_stops_early_is_incomplete(case, cap, name):
    parents, oracle, t, want = case
    res = mbstat.tie(parents, t, test=oracle, progress=False, **cap)
    assert _sets(res) <= want
    if _sets(res) == want and name == "max_removed":
        pytest.skip("every boundary is one swap away here")
    assert _sets(res) < want
    assert not res.complete
    note = [n for n in res.notes if "stopped early" in n]
    assert len(note) == 1 and f"raise {name}" in note[0], res.notes
    assert "incomplete" in str(res.summary())


def test_a_cap_not_reached_keeps_complete(case):
    parents, oracle, t, want = case
    full = mbstat.tie(parents, t, test=oracle, progress=False)
    n_runs = len(full.boundary_tests)
    res = mbstat.tie(parents, t, test=oracle, progress=False, max_runs=n_runs,
                     max_boundaries=len(want) + 1)
    assert _sets(res) == want and res.complete


def test_asia_copies_max_runs():
    """The audit's case (asia with a copied and a recoded column, g2): max_runs = 3 finds
    fewer boundaries than the full run, marked incomplete."""
    data = _copied(3000)
    full = mbstat.tie(data, "either", test="g2", progress=False)
    part = mbstat.tie(data, "either", test="g2", progress=False, max_runs=3)
    assert full.complete and not part.complete
    assert part.n_boundaries < full.n_boundaries
    assert set(map(frozenset, part.boundaries)) <= set(map(frozenset, full.boundaries))
    assert any("max_runs = 3" in n for n in part.notes)
