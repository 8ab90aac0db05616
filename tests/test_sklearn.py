"""The scikit-learn selector: estimator checks, pipelines, feature names."""
import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import CategoricalNB
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

from mbstat.datasets import load_network
from mbstat.sklearn import MarkovBlanketSelector


def test_passes_scikit_learn_estimator_checks():
    results = check_estimator(MarkovBlanketSelector(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]
    assert failed == []


def test_stability_selector_passes_estimator_checks_through_random_state():
    # stability=R drew new resamples per fit, so fit_transform and fit + transform kept
    # different columns (check_transformer_general failed); random_state (set to 0 by the
    # checks, as for any randomized estimator) now seeds the resamples
    results = check_estimator(MarkovBlanketSelector(stability=5), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]
    assert failed == []
    X = np.random.default_rng(0).integers(0, 2, (200, 4))
    y = X[:, 0] ^ (np.random.default_rng(1).random(200) < 0.1)
    a = MarkovBlanketSelector(stability=5, random_state=7).fit(X, y).result_
    assert a.seed == 7 and a == MarkovBlanketSelector(stability=5, random_state=7).fit(X, y).result_
    given = MarkovBlanketSelector(stability={"R": 5, "seed": 3}, random_state=7).fit(X, y)
    assert given.result_.seed == 3  # the dict's seed takes precedence


@pytest.mark.parametrize("method, params", [("rgs", {"k": 20}), ("ppfs", {"K": 2})])
def test_random_state_seeds_a_randomized_learner(method, params):
    # random_state was passed only with stability: ppfs and rgs drew a new seed per fit
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (300, 5))
    y = X[:, 0] ^ (rng.random(300) < 0.1)

    def seed(result):
        return result.seed if method == "ppfs" else result.params["seed"]

    a = MarkovBlanketSelector(method, params=params, random_state=3).fit(X, y)
    b = MarkovBlanketSelector(method, params=params, random_state=3).fit(X, y)
    assert seed(a.result_) == 3 and a.result_ == b.result_
    assert list(a.get_support()) == list(b.get_support())
    drawn = [seed(MarkovBlanketSelector(method, params=params).fit(X, y).result_)
             for _ in range(2)]
    assert drawn[0] != drawn[1]  # None: each fit draws its own, as before
    given = MarkovBlanketSelector(method, params={**params, "seed": 5}, random_state=3)
    assert seed(given.fit(X, y).result_) == 5  # params' seed takes precedence
    state = MarkovBlanketSelector(method, params=params,
                                  random_state=np.random.RandomState(1)).fit(X, y)
    assert seed(state.result_) == np.random.RandomState(1).randint(0, 2**31 - 1)


@pytest.fixture(scope="module")
def asia():
    frame = load_network("asia").sample(20000, seed=2)
    return frame.drop(columns="dysp"), frame["dysp"]


def test_selects_the_blanket_from_a_dataframe(asia):
    X, y = asia
    sel = MarkovBlanketSelector(alpha=0.01).fit(X, y)
    assert sorted(sel.get_feature_names_out()) == ["bronc", "either"]
    assert sel.get_support().dtype == bool and sel.get_support().sum() == 2
    out = sel.transform(X)
    assert list(out.columns) == list(sel.get_feature_names_out())
    assert "Markov blanket" in str(sel.result_.summary())


def test_pipeline_and_cross_validation(asia):
    X, y = asia
    codes = X.apply(lambda c: c.cat.codes)
    pipe = make_pipeline(MarkovBlanketSelector(alpha=0.01), CategoricalNB())
    scores = cross_val_score(pipe, codes.to_numpy(), y.cat.codes.to_numpy(), cv=3)
    assert scores.mean() > 0.8


def test_float_features_are_binned_automatically():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 1] + 0.3 * rng.normal(size=600) > 0).astype(int)
    sel = MarkovBlanketSelector().fit(X, y)
    assert sel.get_feature_names_out().tolist() == ["x1"]
    with pytest.raises(ValueError, match="continuous.*discretize="):
        MarkovBlanketSelector(discretize=None, test="g2").fit(X, y)
    # unbinned, the default test="auto" runs the conditional Gaussian test on the mix
    sel = MarkovBlanketSelector(discretize=None).fit(X, y)
    assert sel.result_.test == "mi-cg" and "x1" in sel.get_feature_names_out().tolist()


def test_bad_method():
    with pytest.raises(ValueError, match="method must be one of"):
        MarkovBlanketSelector(method="magic").fit(np.zeros((4, 2), dtype=int), [0, 1, 0, 1])


def test_integer_column_labels_and_the_targets_name():
    """Labels that are not strings (read as str(label) by the learners) still map back to
    their columns; y's name names the target, unless a column of X already has it."""
    import pandas as pd

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, (600, 3))
    y = np.where(rng.random(600) < 0.8, codes[:, 0], codes[:, 1])
    sel = MarkovBlanketSelector().fit(pd.DataFrame(codes, columns=[0, 1, 2]),
                                      pd.Series(y, name="cls"))
    np.testing.assert_array_equal(sel.support_, [True, True, False])
    assert sel.result_.target == "cls"
    clash = pd.DataFrame(codes, columns=["__target__", "b", "c"])
    sel = MarkovBlanketSelector().fit(clash, y)
    np.testing.assert_array_equal(sel.support_, [True, True, False])
    assert sel.result_.target == "__target___"
