"""Many targets at once: correctness, symmetry, parallel backends."""
import joblib
import pickle

import pandas as pd
import pytest

import mbstat
from mbstat.datasets import load_network


@pytest.fixture(scope="module")
def asia():
    return load_network("asia")


def test_oracle_blankets_are_the_true_ones(asia):
    coll = mbstat.blankets(asia, test="oracle")
    assert {t: set(r.selected) for t, r in coll.results.items()} == {
        t: set(mb) for t, mb in asia.markov_blankets().items()}
    assert coll.symmetric and coll.asymmetric_pairs().empty
    adj = coll.adjacency
    assert adj.index.name == "target" and adj.columns.name == "feature"
    assert adj.loc["either", "xray"] and not adj.loc["asia", "xray"]
    assert (adj.values == adj.values.T).all()


def test_large_sample_recovers_the_identifiable_blankets(asia):
    """At 100,000 rows every blanket is right except where 'either' (a deterministic OR of
    tub and lung) breaks faithfulness: there the data cannot show tub/lung/asia/smoke links."""
    data = asia.sample(100_000, seed=4)
    coll = mbstat.blankets(data, alpha=0.01)
    truth = asia.markov_blankets()
    for target in ("bronc", "dysp", "xray"):
        assert set(coll[target].selected) == set(truth[target]), target
    text = str(coll.summary())
    assert "Markov blankets: iamb" in text and "Symmetry:" in text


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_parallel_backends_give_the_same_blankets(asia, backend):
    data = asia.sample(5000, seed=1)
    serial = mbstat.blankets(data, ["either", "dysp", "smoke"], alpha=0.01)
    with joblib.parallel_config(backend=backend):
        parallel = mbstat.blankets(data, ["either", "dysp", "smoke"], alpha=0.01, n_jobs=2)
    assert {t: r.selected for t, r in parallel.results.items()} == {
        t: r.selected for t, r in serial.results.items()}
    assert parallel.n_tests == serial.n_tests


def test_collection_is_frozen_and_picklable(asia):
    coll = mbstat.blankets(asia, ["asia", "tub"], test="oracle")
    with pytest.raises(TypeError):
        coll.results["x"] = None
    again = pickle.loads(pickle.dumps(coll))
    assert again["tub"].selected == coll["tub"].selected
    assert repr(coll).startswith("<BlanketCollection iamb: 2 targets")


def test_bad_arguments(asia):
    with pytest.raises(ValueError, match="method must be one of"):
        mbstat.blankets(asia, method="nope", test="oracle")
    with pytest.raises(ValueError, match="targets: unknown variable 'nope'"):
        mbstat.blankets(asia, ["nope"], test="oracle")
    with pytest.raises(ValueError, match="n_jobs"):
        mbstat.blankets(asia, test="oracle", n_jobs=0)


@pytest.mark.parametrize("targets, error, match", [
    ([1.0], TypeError, "targets must be a column name or position; got 1.0"),
    ([True], TypeError, "targets must be a column name or position; got True"),
    ([99], ValueError, "targets: position 99 is out of range for 8 columns"),
    ([-1], ValueError, "targets: position -1 is out of range for 8 columns"),
    ([], ValueError, "targets must name at least one variable"),
    (["dysp", 7], ValueError, "targets names the same variable twice"),
])
def test_bad_targets_are_refused_as_a_learner_refuses_target(asia, targets, error, match):
    data = asia.sample(300, seed=0)
    with pytest.raises(error, match=match):
        mbstat.blankets(data, targets)
    with pytest.raises(error, match=match):  # a BayesianNetwork with the oracle: the same
        mbstat.blankets(asia, targets, test="oracle")
    if targets and not isinstance(targets[0], str):  # as one learner checks its target
        with pytest.raises(error, match=match.replace("targets", "target", 1)):
            mbstat.iamb(data, targets[0])


def test_targets_by_name_and_position(asia):
    coll = mbstat.blankets(asia, [7, "tub"], test="oracle")
    assert list(coll) == ["dysp", "tub"]
    assert list(mbstat.blankets(asia, 1, test="oracle")) == ["tub"]


def test_collections_compare_by_value_and_hash(asia):
    # as every result: equal to a rerun and to its unpickled copy (the seconds taken are not
    # part of the value), and hashable
    data = mbstat.datasets.sample_network("asia", 2000, seed=3)
    coll = mbstat.blankets(data, ["lung", "either"])
    assert coll == mbstat.blankets(data, ["lung", "either"])
    assert coll == pickle.loads(pickle.dumps(coll))
    assert coll != mbstat.blankets(data, ["lung"])
    assert hash(coll) == hash(pickle.loads(pickle.dumps(coll)))


def test_asymmetric_pairs_numbered_and_call_shows_the_data_as_passed():
    # asymmetric_pairs() had an unnamed 0-based index; the summary's call showed the
    # Dataset the learners got, not the caller's DataFrame
    data = mbstat.datasets.sample_network("asia", 300, seed=0)
    coll = mbstat.blankets(data, alpha=0.05)
    pairs = coll.asymmetric_pairs()
    assert len(pairs) == 4 and pairs.index.equals(pd.RangeIndex(1, 5, name="pair"))
    assert set(zip(pairs["in_blanket_of"], pairs["missing_from_blanket_of"])) == {
        (x, t) for t, r in coll.results.items() for x in r.selected
        if t not in coll[x].selected}
    call = ('iamb(data = <DataFrame 300 x 8>, target = <each target>, test = "g2", alpha = 0.05, '
            'selection = "bonferroni")')
    assert f"Call:     {call}" in str(coll.summary()) and coll.call.startswith(call)
    assert mbstat.blankets(data, ["lung"], test="oracle", dag=load_network("asia")).call \
        .startswith("iamb(data = <DataFrame 300 x 8>")
    assert mbstat.blankets(load_network("asia"), ["lung"], test="oracle").asymmetric_pairs() \
        .index.name == "pair"
