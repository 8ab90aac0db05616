"""random_state of the scikit-learn selector: it seeds a randomized method (rgs, ppfs,
wfsdms) or the stability resamples; an explicit seed wins, and a RandomState is drawn from
only where its draw is used, so the state's later draws do not depend on the selector."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from mbstat.sklearn import MarkovBlanketSelector


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (300, 5))
    return X, X[:, 0] ^ (rng.random(300) < 0.1)


def untouched(state: np.random.RandomState, seed: int) -> bool:
    """Whether ``state`` gives the draws of a fresh RandomState(seed) (none were taken)."""
    return state.randint(0, 2**31 - 1, 4).tolist() == \
        np.random.RandomState(seed).randint(0, 2**31 - 1, 4).tolist()


@pytest.mark.parametrize("method, params, stab", [
    ("rgs", {"k": 20, "seed": 5}, None),          # the method's seed given
    ("iamb", {}, None),                          # a method without a seed
    ("iamb", {}, {"R": 3, "seed": 2}),           # the resamples' seed given
])
def test_a_random_state_is_not_drawn_where_its_draw_is_not_used(xy, method, params, stab):
    state = np.random.RandomState(11)
    MarkovBlanketSelector(method, params=params, stability=stab, random_state=state).fit(*xy)
    assert untouched(state, 11)


def test_a_random_state_is_drawn_once_where_used(xy):
    state = np.random.RandomState(11)
    sel = MarkovBlanketSelector("rgs", params={"k": 20}, random_state=state).fit(*xy)
    assert sel.result_.params["seed"] == np.random.RandomState(11).randint(0, 2**31 - 1)
    fresh = np.random.RandomState(11)
    fresh.randint(0, 2**31 - 1)
    assert state.randint(0, 2**31 - 1) == fresh.randint(0, 2**31 - 1)  # exactly one draw


@pytest.mark.parametrize("method, params", [("rgs", {"k": 20}),
                                            ("wfsdms", {"cv": 3, "max_features": 3})])
def test_same_random_state_same_selection_and_explicit_seed_wins(xy, method, params):
    runs = [MarkovBlanketSelector(method, params=params, random_state=state).fit(*xy)
            for state in (4, 4, np.random.RandomState(4), np.random.RandomState(4))]
    assert runs[0].result_ == runs[1].result_ and runs[2].result_ == runs[3].result_
    assert runs[0].result_.params["seed"] == 4
    for r in runs[1:]:
        assert list(r.get_support()) == list(runs[0].get_support())
    given = MarkovBlanketSelector(method, params={**params, "seed": 9},
                                  random_state=np.random.RandomState(4)).fit(*xy)
    assert given.result_.params["seed"] == 9


def test_with_stability_params_seed_is_the_method_s_and_random_state_the_resamples(xy):
    sel = MarkovBlanketSelector("rgs", params={"k": 20, "seed": 5}, stability=3,
                                random_state=7).fit(*xy)  # was a TypeError (seed twice)
    res = sel.result_
    assert res.seed == 7 and "learner_args = c(seed = 5)" in res.call
    again = MarkovBlanketSelector("rgs", params={"k": 20, "seed": 5}, stability=3,
                                  random_state=7).fit(*xy)
    assert again.result_ == res
    with pytest.raises(ValueError, match="seed is given twice"):
        MarkovBlanketSelector("rgs", params={"k": 20, "seed": 5},
                              stability={"R": 3, "learner_args": {"seed": 6}}).fit(*xy)


def test_clone_and_get_params_keep_random_state():
    sel = MarkovBlanketSelector("rgs", params={"k": 20}, random_state=3, stability=5)
    twin = clone(sel)
    assert twin.get_params() == sel.get_params() and twin is not sel
    assert twin.set_params(random_state=4).random_state == 4 and sel.random_state == 3


def test_randomized_selector_passes_estimator_checks():
    sel = MarkovBlanketSelector("rgs", params={"k": 20}, random_state=0)
    results = check_estimator(sel, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]
    assert failed == []
