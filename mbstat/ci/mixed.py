"""The conditional Gaussian likelihood-ratio test ``mi-cg``, as bnlearn's.

A conditional Gaussian (CG) model (Lauritzen & Wermuth 1989) lets each continuous variable
be a linear regression on the continuous variables it depends on, with its own intercept,
slopes and residual variance in each configuration of the discrete ones. bnlearn's
``mi-cg`` test (src/tests/conditional.gaussian/cg.mutual.information.c, dispatched by
``c_micg_chisq`` in src/tests/patterns/ctest.c, bnlearn 5.2.1) compares the CG
log-likelihoods of two nested models; with z split into its discrete part zd (``L``
declared configurations, 1 when there is none) and its continuous part zc (``q`` columns):

* x, y continuous: y regressed on (x, zc) against y on zc, within the strata of zd;
  df = L. In a stratum where x is constant given zc, x adds nothing to the fit there
  (bnlearn's rank-deficient QR), and the other strata still carry the evidence.
* one discrete (``k`` levels), one continuous: the continuous one regressed on zc within
  the strata of (discrete, zd) against within those of zd; df = (k - 1) L (q + 2).
* both discrete, zc empty: the G2 test of x and y given zd (bnlearn df).
* both discrete, zc not empty: by the chain rule,
  I(x; y | zd, zc) = I(x; y | zd) + I(y; zc | x, zd) - I(y; zc | zd), the last two terms
  from the Gaussian log-likelihoods of zc (a multivariate Gaussian per stratum, fitted as
  a chain of regressions as bnlearn does). *Reading*: bnlearn's ``c_cmicg_unroll`` passes
  x alone as the strata of both chain-rule terms, so that the x terms cancel and its
  statistic is G2(x; y | zd) + 2n I(y; zc | zd); we use the chain rule above.
  df = (kx - 1)(ky - 1) L (1 + q (q + 3) / 2), the parameters of the CG model of
  (x, y, zc) given zd beyond those of its factorization under independence. This
  statistic is not the likelihood ratio of nested models, so its chi-square is an
  approximation (its level is measured in vignettes/mixed_tests.py).

Statistic ``2 (loglik1 - loglik0)``, as bnlearn, with bnlearn's residual standard errors
``sqrt(RSS / (n_s - p))`` (p coefficients in a stratum of n_s rows) in the Gaussian
densities, which is why it is not the deviance of maximum-likelihood fits. A singular
model (a residual standard error below sqrt(machine epsilon) or a stratum with no more
rows than coefficients) gives a statistic of 0, as bnlearn ("if the null model is
singular, the alternative model is even more singular").
"""
from __future__ import annotations

import numpy as np

from ._design import (MACHINE_TOL, PermutableTest, chi2_table, column_values, combine,
                      group_sums, grouped_residuals, grouped_rss, is_discrete, strata)

__all__ = ["ConditionalGaussian", "cg_loglik"]

_LOG_2PI = float(np.log(2.0 * np.pi))
#: A continuous x whose residual given zc has a sd below this share of its root mean
#: square in a stratum is constant there (rounding: about 1e-16).
_FLAT = 1e-12


def cg_loglik(rss, counts, p: int) -> np.ndarray:
    """bnlearn's ``c_fast_ccgloglik`` from the residual sums of squares ``rss`` (k, G) of k
    regressions within G strata of ``counts`` rows, each with ``p`` coefficients: the sum
    of the Gaussian log-densities with sd = sqrt(RSS / (n_s - p)); -inf where singular."""
    rss = np.atleast_2d(np.asarray(rss, dtype=np.float64))
    counts = np.asarray(counts, dtype=np.float64)
    used = counts > 0
    dof = counts - p
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = rss / dof
        terms = -0.5 * counts * (_LOG_2PI + np.log(s2)) - 0.5 * dof
        bad = used & ((dof <= 0) | ~(np.sqrt(s2) >= MACHINE_TOL))
        ll = np.where(used & ~bad, terms, 0.0).sum(axis=1)
    ll[bad.any(axis=1)] = -np.inf
    return ll


def _lr(ll1, ll0) -> np.ndarray:
    """2 (ll1 - ll0), 0 where either model is singular (bnlearn's rule)."""
    ok = np.isfinite(ll1) & np.isfinite(ll0)
    with np.errstate(invalid="ignore"):
        return np.where(ok, 2.0 * (ll1 - ll0), 0.0)


def _mvn_loglik(Zc, g, G) -> float:
    """Log-likelihood of the columns of Zc (n, q) as a Gaussian per stratum of g, by the
    chain rule: column i regressed on [1, columns after i] (as bnlearn's unrolled test)."""
    n, q = Zc.shape
    total = 0.0
    for i in range(q):  # a loop over the q conditioning columns
        D = np.column_stack([np.ones(n), Zc[:, i + 1:]])
        rss, counts = grouped_rss(Zc[:, i:i + 1], D, g, G)
        total += float(cg_loglik(rss, counts, D.shape[1])[0])
    return total


class ConditionalGaussian(PermutableTest):
    """Conditional Gaussian likelihood-ratio test (bnlearn's ``mi-cg``).

    Assumptions: within each configuration of the discrete variables, each continuous
    variable is Gaussian and linear in the continuous ones (a CG network); the chi-square
    holds when every stratum has many more rows than coefficients. Any mix of discrete and
    continuous x, y and z; x is one variable. See the module docstring for the statistic
    and df in each case.

    ``calibration``, ``B`` and ``seed``: the chi-square (default) or permutations
    (:class:`~mbstat.ci._design.PermutableTest`).
    """

    name = "mi-cg"
    method = "Conditional Gaussian likelihood-ratio test (mi-cg)"
    statistic_name = "mi-cg"
    kind = "mixed"
    joint_x = False
    symmetric = True

    def check(self, tester, columns) -> None:
        pass  # any kinds

    def asymptotic(self, tester, xs, y, z):
        """The results table with chi-square p-values."""
        ds = tester.dataset
        n = tester.n
        zd = [j for j in z if is_discrete(ds, j)]
        zc = [j for j in z if not is_discrete(ds, j)]
        g0, G0, L = strata(ds, zd)
        D = np.column_stack([np.ones(n), column_values(ds, zc)])
        p, q = D.shape[1], len(zc)
        cols = [xk[0] for xk in xs]
        stat = np.zeros(len(cols))
        df = np.zeros(len(cols))
        disc = np.array([is_discrete(ds, j) for j in cols], dtype=bool)
        cont_pos, disc_pos = np.flatnonzero(~disc), np.flatnonzero(disc)
        if not is_discrete(ds, y):
            yv = column_values(ds, [y])
            if len(cont_pos):  # y on (x, zc) vs on zc: partial out zc within strata
                X = column_values(ds, [cols[i] for i in cont_pos])
                E, counts = grouped_residuals(np.column_stack([yv, X]), D, g0, G0)
                sums = group_sums(np.column_stack([E[:, :1] ** 2, E[:, :1] * E[:, 1:],
                                                   E[:, 1:] ** 2, X ** 2]), g0, G0)
                k = len(cont_pos)
                syy, sxy, sxx = sums[:, 0], sums[:, 1:k + 1], sums[:, k + 1:2 * k + 1]
                raw = sums[:, 2 * k + 1:]  # x's own scale in each stratum
                # x constant given zc in a stratum (its residual sd below 1e-12 of its
                # root mean square there, whatever x's units): a rank-deficient design
                # there, fitted as bnlearn's c_qr does (x adds nothing to the fit, the
                # residual sd still divides by n_s - p - 1); the other strata still count
                flat = sxx <= _FLAT ** 2 * raw
                with np.errstate(divide="ignore", invalid="ignore"):
                    rss1 = syy[:, None] - np.where(flat, 0.0, sxy ** 2 / sxx)
                ll0 = cg_loglik(syy, counts, p)
                ll1 = cg_loglik(np.maximum(rss1, 0.0).T, counts, p + 1)
                stat[cont_pos] = _lr(ll1, ll0)
                df[cont_pos] = L
            if len(disc_pos):  # y on zc within strata of (x, zd) vs of zd
                rss0, counts0 = grouped_rss(yv, D, g0, G0)
                ll0 = cg_loglik(rss0, counts0, p)
                for i in disc_pos:  # one stratified fit per discrete candidate
                    g1, G1 = combine(ds.codes[:, cols[i]], ds.level_counts[cols[i]], g0, G0)
                    rss1, counts1 = grouped_rss(yv, D, g1, G1)
                    stat[i] = _lr(cg_loglik(rss1, counts1, p), ll0)[0]
                    df[i] = (ds.level_counts[cols[i]] - 1) * L * (q + 2)
        else:
            ky = ds.level_counts[y]
            if len(cont_pos):  # each x on zc within strata of (y, zd) vs of zd
                X = column_values(ds, [cols[i] for i in cont_pos])
                gy, Gy = combine(ds.codes[:, y], ky, g0, G0)
                rss0, counts0 = grouped_rss(X, D, g0, G0)
                rss1, counts1 = grouped_rss(X, D, gy, Gy)
                stat[cont_pos] = _lr(cg_loglik(rss1, counts1, p), cg_loglik(rss0, counts0, p))
                df[cont_pos] = (ky - 1) * L * (q + 2)
            if len(disc_pos):
                from .contingency import ContingencyTest

                g2 = ContingencyTest("g2", "bnlearn", calibration="asymptotic").batch(
                    tester, [xs[i] for i in disc_pos], y, tuple(zd))
                stat[disc_pos] = g2["statistic"]
                kx = np.array([ds.level_counts[cols[i]] for i in disc_pos], dtype=np.float64)
                df[disc_pos] = (kx - 1) * (ky - 1) * L
                if q:
                    Zc = column_values(ds, zc)
                    gy, Gy = combine(ds.codes[:, y], ky, g0, G0)
                    base = _mvn_loglik(Zc, gy, Gy) - _mvn_loglik(Zc, g0, G0)
                    for j, i in enumerate(disc_pos):  # I(y; zc | x, zd) per candidate
                        x = cols[i]
                        gx, Gx = combine(ds.codes[:, x], ds.level_counts[x], g0, G0)
                        gxy, Gxy = combine(ds.codes[:, x], ds.level_counts[x], gy, Gy)
                        extra = _mvn_loglik(Zc, gxy, Gxy) - _mvn_loglik(Zc, gx, Gx) - base
                        stat[i] = stat[i] + 2.0 * extra if np.isfinite(extra) else 0.0
                    df[disc_pos] *= 1 + q * (q + 3) / 2
        return chi2_table(stat, df, n)
