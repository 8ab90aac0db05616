"""spearman given z from per-data-set statistics (mbstat.ci.continuous.rank.InfluenceMoments):
the latent partial correlation and its influence-function variance equal the per-test
computation from the rows (latent_partial, itself checked against scipy and the jackknife in
test_mixed_tests) to 1e-10, with ties, at any |z|, in batches, through a small pair cache;
constant columns keep the rows path."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbstat
from mbstat import as_dataset
from mbstat.ci.continuous import rank
from mbstat.ci.continuous.rank import Spearman, influence_moments, latent_partial, ranked_dataset
from mbstat.ci.engine import CITester


def _frame(n=300, p=8, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    for j in range(1, p):
        X[:, j] += 0.7 * X[:, j - 1]
    X = np.exp(X)  # monotone: the copula is Gaussian
    if ties:
        X[:, ::2] = np.round(X[:, ::2], 1)
    return pd.DataFrame(X, columns=[f"v{i}" for i in range(p)])


def _tester(frame, rows: bool):
    test = Spearman()
    test._from_rows = rows
    return CITester(frame, test)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("m", [1, 2, 4])
def test_latent_batch_equals_latent_partial_from_the_rows(m, ties):
    frame = _frame(ties=ties, seed=m)
    ranked = ranked_dataset(as_dataset(frame))
    grades = influence_moments(ranked)
    y, z, xs = 0, list(range(1, m + 1)), list(range(m + 1, 8))
    rho, kappa = grades.latent_batch(y, z, xs)
    for t, x in enumerate(xs):
        ref = latent_partial(stats.rankdata(frame.to_numpy()[:, [x, y, *z]], axis=0))
        assert rho[t] == pytest.approx(ref[0], rel=1e-10, abs=1e-13)
        assert kappa[t] == pytest.approx(ref[1], rel=1e-10)


@pytest.mark.parametrize("ties", [False, True])
def test_spearman_tests_equal_the_rows_path(ties, monkeypatch):
    frame = _frame(ties=ties)
    monkeypatch.setattr(rank, "INFLUENCE_CACHE", 0)  # the smallest pair cache: evictions
    fast, rows = _tester(frame, False), _tester(frame, True)
    names = list(frame.columns)
    for m in range(0, 5):
        z = names[1:m + 1]
        a = fast.test_many(names[m + 1:], "v0", z)
        b = rows.test_many(names[m + 1:], "v0", z)
        for col in ("statistic", "pvalue", "log_pvalue", "mi"):
            np.testing.assert_allclose(getattr(a, col), getattr(b, col), rtol=1e-10, atol=1e-300)


def test_constant_columns_keep_the_rows_path():
    frame = _frame(n=200)
    frame["k"] = 3.0  # a constant column: its correlations are undefined, the rows decide
    fast = CITester(frame, Spearman())
    test = Spearman()
    test._from_rows = True
    rows = CITester(frame, test)
    for x, z in (("k", ["v1"]), ("v3", ["k", "v1"]), ("v6", ["v1", "v2"])):
        a, b = fast.test(x, "v0", z), rows.test(x, "v0", z)
        assert a.statistic == pytest.approx(b.statistic, rel=1e-10, abs=1e-12)
        assert a.pvalue == pytest.approx(b.pvalue, rel=1e-10, abs=1e-300)


def test_the_statistics_are_made_once_per_data_set():
    frame = _frame(n=200)
    ds = as_dataset(frame)
    a, b = CITester(ds, "spearman"), CITester(ds, "spearman")
    a.test("v3", "v0", ["v1"])
    ranked = a.test_obj.ranks(a)
    assert influence_moments(ranked) is influence_moments(b.test_obj.ranks(b))
    assert b.test("v3", "v0", ["v1"]).statistic == a.test("v3", "v0", ["v1"]).statistic


@pytest.mark.parametrize("test", ["spearman", "normal-scores", "fisher_z"])
def test_too_few_rows_names_the_test_asked(test):
    """The rank tests read fisher_z's partial correlations; a refusal names the test the
    caller asked for."""
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(4, 4)), columns=list("abcd"))
    with pytest.raises(ValueError, match=rf"^{test} needs more than \|z\| \+ 3 = 5 rows"):
        mbstat.ci_test(frame, "a", "b", ["c", "d"], test=test)
