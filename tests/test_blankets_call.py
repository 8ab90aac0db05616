"""The call line of a BlanketCollection, built from the arguments (not by editing the first
target's call): awkward target names, values resolved alike or per target, data as passed."""
from __future__ import annotations

import pytest

import mbstat
import mbstat.datasets
from mbstat.datasets import load_network


@pytest.fixture(scope="module")
def asia():
    return mbstat.datasets.sample_network("asia", 300, seed=0)


def test_a_target_named_like_an_argument_value_or_with_quotes(asia):
    """Targets named "bonferroni" (the selection's value) and 'say "hi"': the old line
    replaced every '"bonferroni"' of the first target's call by <each target>."""
    data = asia.rename(columns={"lung": "bonferroni", "bronc": 'say "hi"'})
    coll = mbstat.blankets(data, ["bonferroni", 'say "hi"'], selection="bonferroni")
    call = ('iamb(data = <DataFrame 300 x 8>, target = <each target>, test = "g2", '
            'alpha = 0.05, selection = "bonferroni")')
    assert coll.call == call
    assert f"Call:     {call}" in str(coll.summary())
    assert coll["bonferroni"].call.startswith(
        'iamb(data = <Dataset 300 x 8>, target = "bonferroni", selection = "bonferroni"')
    tie = mbstat.blankets(asia.rename(columns={"lung": "iamb_fdr"}), ["iamb_fdr"], method="tie")
    assert tie.call.startswith('tie(data = <DataFrame 300 x 8>, target = <each target>, '
                               'test = "g2", alpha = 0.05, base = "iamb_fdr", ')


def test_a_value_drawn_per_target_shows_as_passed(asia):
    """rgs draws a seed per target when none is given: the collection's line shows none (the
    first target's would replay that target only); a seed passed shows as passed."""
    drawn = mbstat.blankets(asia, ["lung", "bronc"], method="rgs", k=50)
    seeds = {t: r.params["seed"] for t, r in drawn.results.items()}
    assert seeds["lung"] != seeds["bronc"] and "seed" not in drawn.call
    assert f"seed = {seeds['lung']}" in drawn["lung"].call
    assert drawn.call == ('rgs(data = <DataFrame 300 x 8>, target = <each target>, test = "g2", '
                          'alpha = 0.05, m = 1, min_per_cell = 1, selection = "bonferroni", '
                          'k = 50)')
    fixed = mbstat.blankets(asia, ["lung", "bronc"], method="rgs", k=50, seed=7)
    assert fixed.call.endswith("k = 50, seed = 7)")


def test_oracle_data_and_test_arguments_as_passed(asia):
    dag = load_network("asia")
    coll = mbstat.blankets(asia, ["lung"], test="oracle", dag=dag)
    assert coll.call == ('iamb(data = <DataFrame 300 x 8>, target = <each target>, '
                         'test = "oracle", alpha = 0.05, selection = "bonferroni", '
                         'dag = <BayesianNetwork asia: 8 nodes, 8 arcs>)')
    on_dag = mbstat.blankets(dag, ["lung", "tub"], test="oracle", alpha=0.01)
    assert on_dag.call == ('iamb(data = <BayesianNetwork>, target = <each target>, '
                           'test = "oracle", alpha = 0.01, selection = "bonferroni")')
