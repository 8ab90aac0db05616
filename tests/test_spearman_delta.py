"""``spearman`` given z: the variance of atanh of the latent partial correlation (Harris &
Drton 2013) by the delta method in full (the terms in rho and atanh's derivative), checked
against an independent estimate, the jackknife of atanh(rho) over the rows (re-ranked)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbstat
from mbstat.ci.continuous.rank import InfluenceMoments, latent_partial


def _latent_rho(R):
    r = np.corrcoef(R, rowvar=False)
    S = 2.0 * np.sin(np.pi * r / 6.0)
    np.fill_diagonal(S, 1.0)
    W = np.linalg.inv(S)
    return -W[0, 1] / np.sqrt(W[0, 0] * W[1, 1])


def _copula(n, partial, seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    e1 = rng.normal(size=n)
    e2 = partial * e1 + np.sqrt(1 - partial ** 2) * rng.normal(size=n)
    return np.c_[np.exp(z + e1), (z + e2) ** 3, z]  # monotone margins


@pytest.mark.parametrize("partial", [0.0, 0.5, 0.9])
def test_influence_variance_matches_the_jackknife(partial):
    X = _copula(300, partial, seed=11)
    n = len(X)
    rho, kappa = latent_partial(stats.rankdata(X, axis=0))
    loo = np.array([np.arctanh(_latent_rho(stats.rankdata(np.delete(X, i, axis=0), axis=0)))
                    for i in range(n)])
    jack_sd = np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
    assert np.sqrt(kappa / n) == pytest.approx(jack_sd, rel=0.15)
    # the restricted variance (the rho terms dropped) was twice the sd at 0.9


def test_fast_path_equals_rows_path():
    X = _copula(250, 0.8, seed=3)
    X = np.c_[X, np.random.default_rng(4).normal(size=250)]
    R = stats.rankdata(X, axis=0)
    rho_b, kappa_b = InfluenceMoments(R).latent_batch(1, [2], [0, 3])
    for t, x in enumerate([0, 3]):
        rho, kappa = latent_partial(R[:, [x, 1, 2]])
        assert rho_b[t] == pytest.approx(rho, rel=1e-10)
        assert kappa_b[t] == pytest.approx(kappa, rel=1e-10)


def test_statistic_at_strong_dependence():
    """At partial rho 0.9 (200 rows) the statistic is atanh(rho) / its sd: about 17 (the
    simulated mean of atanh(rho) over its simulated sd, 300 data sets: 16.0); the restricted
    variance gave about 9."""
    d = pd.DataFrame(_copula(200, 0.9, seed=5), columns=["x", "y", "z"])
    r = mbstat.ci_test(d, "x", "y", ("z",), test="spearman")
    assert 12.0 < r.statistic < 22.0


@pytest.mark.parametrize("seed", [3, 4])
def test_statistic_is_odd_in_a_sign_flip(seed):
    """Reversing x's order (x -> -x) flips the statistic's sign and keeps its size exactly:
    the influence functions' tails weight tied rows (row i among them) by one half."""
    rng = np.random.default_rng(seed)
    n = 300
    z = rng.normal(size=n)
    x = z + rng.normal(size=n)
    y = 0.1 * x + z + rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "y": y, "z": z})
    a = mbstat.ci_test(frame, "x", "y", ["z"], test="spearman")
    b = mbstat.ci_test(frame.assign(x=-x), "x", "y", ["z"], test="spearman")
    assert b.statistic == pytest.approx(-a.statistic, rel=1e-12)
    assert b.pvalue == pytest.approx(a.pvalue, rel=1e-12)
