"""The distribution tails of :mod:`mbstat.ci.chi2` (chi-square and F): the one modified Lentz
step on continued fractions of known value, the p-values and their logs against scipy over
grids from p = 1 - 1e-9 down to 1e-300 and df up to 1e6, and against mpmath where the
p-value underflows or scipy's incomplete beta loses its digits."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from mbstat.ci.chi2 import _lentz, chi2_sf_logsf, f_sf_logsf

#: Upper-tail probabilities of the grids: the far tail to 1e-300, the middle, and near 1.
TARGETS = np.concatenate([np.geomspace(1e-300, 0.5, 120), np.linspace(0.5, 1 - 1e-9, 20)])


@pytest.mark.parametrize("b0, an, bn, value", [(1.0, 1.0, 2.0, math.sqrt(2.0)),
                                                (1.0, 1.0, 1.0, (1 + math.sqrt(5.0)) / 2),
                                                (0.0, -1.0, 3.0, (math.sqrt(5.0) - 3) / 2)])
def test_one_lentz_step_evaluates_periodic_fractions(b0, an, bn, value):
    """b0 + an / (bn + an / (bn + ...)): sqrt(2), the golden ratio, (sqrt 5 - 3) / 2, with
    the Lentz start f0 = b0 (1e-300 for b0 = 0), d0 = 0, and the compiled step."""
    f = c = b0 if b0 != 0 else 1e-300
    d = 0.0
    for _ in range(100):
        c, d, delta = _lentz(an, bn, c, d)
        f *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    assert f == pytest.approx(value, rel=4e-16)


@pytest.mark.parametrize("df", [1, 2, 3, 7.5, 30, 200, 1e3, 1e4, 1e5, 1e6])
def test_chi2_tail_matches_scipy_down_to_1e300(df):
    """p is scipy's chdtrc digit for digit; log p is log1p(-cdf) above 0.5 and log(p) below,
    within 1e-14 (the continued fraction below 1e-260). At df 1e5-1e6 the continued
    fraction's prefix -x/2 + (df/2) log(x/2) - lgamma(df/2) cancels ~1e6 to ~700: within
    2e-12 there (1e-13 to 4e-13 against mpmath's 40 digits)."""
    x = stats.chi2.isf(TARGETS, df)
    p, log_p = chi2_sf_logsf(x, np.full_like(x, df))
    sf = stats.chi2.sf(x, df)
    np.testing.assert_array_equal(p, sf)
    with np.errstate(divide="ignore"):
        ref = np.where(sf > 0.5, np.log1p(-stats.chi2.cdf(x, df)), stats.chi2.logsf(x, df))
    assert np.isfinite(ref).all() and sf.min() < 1.1e-300
    np.testing.assert_allclose(log_p, ref, rtol=1e-14 if df <= 1e4 else 2e-12, atol=0)


def _f_grid(d1, d2):
    """(left, explained) of an F test at the grid's tail probabilities where scipy's
    inverse is finite, explained formed as 1 - left as reg-lr's sums of squares would."""
    a, b = 0.5 * d2, 0.5 * d1
    with np.errstate(all="ignore"):
        left = special.betaincinv(a, b, TARGETS)
    left = left[np.isfinite(left) & (left > 0) & (left < 1)]
    return left, 1.0 - left


@pytest.mark.parametrize("d1", [1, 2, 5, 40, 300])
@pytest.mark.parametrize("d2", [1, 3, 10, 100, 1e3, 1e5])
def test_f_tail_matches_scipy(d1, d2):
    """p is scipy's betainc(df2 / 2, df1 / 2, left) digit for digit; log p is within 1e-14 of
    log1p(-betainc(df1 / 2, df2 / 2, explained)) above 0.5 and log(p) from 1e-260 to 0.5, and
    within 1e-11 of scipy.stats.f.logsf at F formed from the same sums (F's own rounding)."""
    left, explained = _f_grid(d1, d2)
    assert len(left) >= 20
    a, b = 0.5 * d2, 0.5 * d1
    p, log_p = f_sf_logsf(left, explained, np.full_like(left, d1), np.full_like(left, d2))
    np.testing.assert_array_equal(p, special.betainc(a, b, left))
    high, middle = p > 0.5, (p >= 1e-260) & (p <= 0.5)
    np.testing.assert_allclose(log_p[high], np.log1p(-special.betainc(b, a, explained[high])),
                               rtol=1e-14, atol=0)
    np.testing.assert_allclose(log_p[middle], np.log(p[middle]), rtol=1e-14, atol=0)
    with np.errstate(over="ignore"):
        F = (explained / d1) / (left / d2)
    ref = stats.f.logsf(F, d1, d2)
    keep = (middle | high) & np.isfinite(F)
    np.testing.assert_allclose(log_p[keep], ref[keep], rtol=1e-11 if d2 < 1e5 else 5e-11,
                               atol=1e-14)


@pytest.mark.parametrize("d1, d2, rtol", [(40, 100, 1e-14), (2, 3, 1e-14), (1, 10, 1e-14),
                                          (300, 1e3, 1e-14), (1, 1e5, 2e-12)])
def test_f_far_tail_matches_mpmath(d1, d2, rtol):
    """Below 1e-260 the continued fraction against mpmath's 50-digit incomplete beta (scipy's
    log(betainc) is 2.6e-4 off at df (40, 100) near p = 1e-280; ours within 2.2e-16); at df2
    1e5 the prefix's cancellation leaves ~1e-13."""
    mpmath = pytest.importorskip("mpmath")
    a, b = 0.5 * d2, 0.5 * d1
    with np.errstate(all="ignore"):
        left = special.betaincinv(a, b, np.geomspace(1e-300, 1e-262, 8))
    left = left[np.isfinite(left) & (left > 0)]
    assert len(left) >= 4
    p, log_p = f_sf_logsf(left, 1.0 - left, np.full_like(left, d1), np.full_like(left, d2))
    with mpmath.workdps(50):
        ref = [float(mpmath.log(mpmath.betainc(a, b, 0, mpmath.mpf(float(x)),
                                               regularized=True))) for x in left]
    np.testing.assert_allclose(log_p, ref, rtol=rtol, atol=0)


@pytest.mark.parametrize("df, x", [(1, 2e3), (3, 5e3), (50, 1e4), (1e3, 1e5)])
def test_chi2_beyond_double_matches_mpmath(df, x):
    """Where p underflows (scipy's logsf is -inf) log Q(df/2, x/2) stays finite and right."""
    mpmath = pytest.importorskip("mpmath")
    p, log_p = chi2_sf_logsf(x, df)
    assert p == 0.0 and np.isneginf(stats.chi2.logsf(x, df))
    with mpmath.workdps(40):
        ref = float(mpmath.log(mpmath.gammainc(df / 2, x / 2, mpmath.inf, regularized=True)))
    assert log_p == pytest.approx(ref, rel=1e-14)


def test_f_below_double_is_the_leading_term_of_the_series():
    """I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) (1 + O(x)) (its hypergeometric series, DLMF
    section 8.17): at x = 1e-300 and 1e-200 (p underflows) the log is the leading term's."""
    left = np.array([1e-300, 1e-200])
    p, log_p = f_sf_logsf(left, 1.0 - left, 3.0, 50.0)
    a, b = 25.0, 1.5
    lead = a * np.log(left) - math.log(a) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    assert (p == 0).all()
    np.testing.assert_allclose(log_p, lead, rtol=1e-15, atol=0)
