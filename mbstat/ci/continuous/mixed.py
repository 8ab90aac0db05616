"""The conditional Gaussian likelihood-ratio test ``mi-cg``, after bnlearn's.

A conditional Gaussian (CG) model (Lauritzen & Wermuth 1989) lets each continuous variable
be a linear regression on the continuous variables it depends on, with its own intercept,
slopes and residual variance in each configuration of the discrete ones. bnlearn's
``mi-cg`` test (src/tests/conditional.gaussian/cg.mutual.information.c, dispatched by
``c_micg_chisq`` in src/tests/patterns/ctest.c, bnlearn 4.9 to 5.2.1) compares the CG
log-likelihoods of two nested models; with z split into its discrete part zd (``L``
declared configurations, 1 when there is none) and its continuous part zc (``q`` columns):

* x, y continuous: y regressed on (x, zc) against y on zc, within the strata of zd;
  df = L. In a stratum where x is constant given zc, x adds nothing to the fit there
  (bnlearn's rank-deficient QR), and the other strata still carry the evidence.
* one discrete (``k`` levels), one continuous: the continuous one regressed on zc within
  the strata of (discrete, zd) against within those of zd; df = (k - 1) L (q + 2).
* both discrete, zc empty: the G2 test of x and y given zd (bnlearn df).
* both discrete, zc not empty: **mbstat departs from bnlearn** (below). Within each
  configuration of zd, the pair (x, y) is regressed on zc by a multinomial logit over its
  ``kx ky`` cells, against the product of the logits of x alone and of y alone; the
  linear predictors are quadratic in zc (the log of a ratio of Gaussian densities with
  cell-specific means and covariances is quadratic, so that this is the conditional law
  of (x, y) given z in every CG model in which zc depends on x, y and zd, the discrete
  variables being parents of the continuous ones, as in bnlearn's CG networks). The
  product is the null family (the logits' interaction terms of x and y zero), so the
  statistic is the likelihood ratio of nested models, symmetric in x and y; df =
  (kx - 1)(ky - 1) L (1 + q (q + 3) / 2), the interaction coefficients per stratum.
  With q = 0 it is the G2 test above (the saturated multinomial per stratum). Like G2
  on sparse tables, its chi-square is liberal when the logits carry many parameters for
  the rows: on a CG network of clgaussian.test's structure, 100 samples of 1,000 rows,
  the d-separated discrete pairs given a continuous z (28 cases with the model right)
  rejected 7.4% at 0.05, from 1-5% with one continuous column to 16% at 27 df; 3 x 3
  levels given two continuous columns at 200 rows (24 df), 15% of 200 nulls. Where some
  stratum's rarest observed cell of (x, y) has fewer than
  :data:`EVENTS_PER_PARAMETER` (20) rows per coefficient of a logit (d = 1 + q (q + 3) /
  2), the statistic is therefore referred to its null law's moments, estimated by a
  parametric bootstrap: B data sets (x*, y*) drawn from the fitted null model (the
  product of the two logits, each stratum's fit), the statistic recomputed on each.
  ``correction="moments"`` (default) takes the p-value of the scaled chi-square a chi2_f
  with the replicates' mean and variance (a = var / (2 mean), f = 2 mean^2 / var,
  reported as df; Satterthwaite 1946), as the Gaussian configurations do with their
  exact moments; ``"bartlett"`` the chi-square on df at statistic * df / mean (a
  bootstrap Bartlett correction; Bartlett 1937, Rocke 1989, Biometrika 76: with B = 100
  as accurate as a bootstrap p-value with
  700). Why a parametric bootstrap: no permutation of x is exact given a continuous z,
  and the null family is the fitted product itself, so the draws follow the null that
  the statistic tests, to the error of the fit; why the Bartlett scaling rather than the
  bootstrap's p-value: a search compares p-values with alpha / m, far below 1 / B, and
  the scaled chi-square resolves them; why two moments by default: where the rarest
  cells hold a few rows, the statistic's null law is wider than a chi-square of the same
  mean (replicates' variance 1.2-1.3 times 2 mean^2 / df), and the mean alone left the
  tail liberal there. B = 800 / df within [50, 400] (the mean's relative
  Monte Carlo error near 5%), drawn in stages of :data:`BOOTSTRAP_STAGE` (10) and stopped
  after a stage once the scaled p-value is clear: at both ends of the mean's Monte Carlo
  interval (3 standard errors) at most 5e-8 or at least 0.25 (:data:`CLEAR`), so that no
  decision at a level between the two, a search's alpha / m included, can change with
  the remaining draws (a sequential Monte Carlo test in the manner of Besag & Clifford
  1991). Each replicate's fits start at the law it was drawn from. A column's draws are
  seeded by its own contents in canonical codes (with ``seed``, the strata and zc's
  columns in any order) and by the stage, so that the p-value depends neither on the
  order of the levels, of x and y or of zc's columns, nor on the batch: the target's
  fitted logit, its draws and their fits serve every candidate of a batch
  (:class:`PairBootstrap`). Why not permutations, as bnlearn's ``mc-mi-g``: permuting x
  within the strata of zd is exact only for a discrete z; given a continuous z the fitted
  null is the closest law to draw from.
  Measured at 0.05 (``benchmarks/level_audit.py``, seed 2026; the plain chi-square ->
  the default): 3 x 3 given two continuous columns at 200 rows (24 df), 13.8% -> 5.7%
  [4.6, 7.0] of 1,500 nulls; 2 x 4 skewed levels given a 3-level discrete and one
  continuous column at 1,000 rows (27 df), 26.4% -> 4.1% [3.3, 5.0] of 2,000; with rarer
  levels 78.4% -> 6.6% [5.2, 8.3] of 1,000, liberal: with 200 draws 5.8% [4.5, 7.4], and
  the bootstrap's own p-value 6.3% [5.0, 8.0], so the excess is mostly the parametric
  bootstrap's (it draws from a fitted null whose rarest cells rest on a few rows), not
  the Monte Carlo error of its draws (open); the mean alone rejects 8.7-9.0% there. The
  user guide's "Choosing a test" has the table. Cost (open):
  IAMB with mi-cg on every node of ``make_mixed_network(500)``, 14.6 s of CPU against
  14.9-15.1 s before the stages and the shared draws and 1.6 s for the plain chi-square
  (2 shared cores at load 5-17; the same blankets). The time is in the replicates' pair
  fits where the logit has near as many coefficients as rows (their Newton iterations
  crawl through quasi-separation). ``correction=None`` keeps the plain chi-square.

*Departure from bnlearn* (discrete x and y, a continuous z). bnlearn's
``c_cmicg_unroll`` passes x alone as the strata of both chain-rule terms, so that x
cancels: its statistic is G2(x; y | zd) + 2 [ll(zc | y, zd) - ll(zc | zd)] (the Gaussian
chain-rule log-likelihoods of zc), on df (kx - 1)(ky - 1) L + L' (ky - 1) q (q + 3) / 2
(L' = 0 when zd is empty). The second term measures y against zc, not x against y: on
bnlearn's ``clgaussian.test`` F and A given D (d-separated in its network) get 14,740
on 1 df, the dependence of D on A. An earlier mbstat used the chain rule
I(x; y | zd) + I(y; zc | x, zd) - I(y; zc | zd) with Gaussian terms, which is not a
likelihood ratio and can be negative (A and F given {G, D}, dependent through their
common child G, gave 0). Every other configuration equals bnlearn's statistic.

Statistic ``2 (loglik1 - loglik0)``, as bnlearn, with bnlearn's residual standard errors
``sqrt(RSS / (n_s - p))`` (p coefficients in a stratum of n_s rows) in the Gaussian
densities, which is why it is not the deviance of maximum-likelihood fits. A stratum with
no more rows than coefficients makes the fit singular: a statistic of 0, as bnlearn.

*Degenerate strata* (**departs from bnlearn**). A stratum whose residual standard error
is below sqrt(machine epsilon) (the response exactly linear in the regressors there: a
zero-inflated column, 0 in a level of a discrete one) is a point mass, whose Gaussian
log-likelihood is +inf, not -inf. bnlearn marks the whole fit singular and, where the null
model is, returns 0 (p = 1), so that a deterministic dependence read as independence and
the test was not symmetric. The two nested models are compared stratum by stratum
instead: where the null's stratum is a point mass, so are the alternative's within it
(they nest it), and that stratum carries no evidence: it adds 0 to the statistic, to its
null mean and variance and to the corrected df (with x and y continuous, the constant
n_s log(nu1 / nu0) + 1 that a flat x gives, below, so that the test stays symmetric);
bnlearn's plain df, which counts the declared configurations, is kept. Where only the
alternative's is (the added variable explains that stratum exactly), the dependence is
certain: statistic +inf, p = 0 (log p -inf); bnlearn 4.9 gives that given nothing
(zero-inflated x given its discrete y) and 0 (p = 1) given a continuous z. On 1,000 nulls with y constant in one of three
strata of zd (given zd and zc, 120 rows), mi-cg rejected 5.0% [3.8, 6.5] at 0.05 with a
continuous x, 3.8% [2.8, 5.2] with a 3-level one (tests/test_mixed_tests.py).

*Small samples* (``correction``). In the Gaussian configurations each residual sum of
squares is, under the null and given the design, sigma^2 chi2 on nu = n_s - p degrees of
freedom, sigma^2 common to a null stratum; the alternative's sums divided by the null's
are Dirichlet, so that the statistic's null mean and variance given the design are exact:
mean = sum over fits of +-(n h(nu) + nu), h(nu) = psi(nu / 2) + log(2 / nu), and
variance = sum of -+n^2 psi'(nu / 2), plus for the null fits and minus for the
alternative ones (E log chi2_nu = psi(nu / 2) + log 2, var log chi2_nu = psi'(nu / 2)).
``"moments"`` (default) takes the p-value of the scaled chi-square a chi2_f with that mean
and variance (a = var / (2 mean), f = 2 mean^2 / var, reported as df; Satterthwaite
1946); ``"bartlett"`` the chi-square on the parameters that the alternative adds in the
observed strata at statistic * df / mean (Bartlett 1937; Lawley 1956); ``None``
bnlearn's plain chi-square on bnlearn's df. The statistic is bnlearn's in every case but
the logit configuration, whose two corrections are the bootstrap Bartlett scaling above
(where its events per parameter are few) and ``None`` its plain chi-square.
"""
from __future__ import annotations

import zlib

import numpy as np
from scipy import special

from ...data.dataset import column_values, is_discrete
from ..chi2 import chi2_sf_logsf
from ..result import ASYMPTOTIC
from ._design import (MACHINE_TOL, PermutableTest, chi2_table, combine, group_sums,
                      grouped_residuals, grouped_rss, strata, stratum_moments)
from .regression import fit_logit

__all__ = ["ConditionalGaussian", "cg_loglik", "pair_logit_lr", "pair_logit_null_mean",
           "PairBootstrap", "CORRECTIONS"]

_LOG_2PI = float(np.log(2.0 * np.pi))
#: A continuous x whose residual given zc has a sd below this share of its root mean
#: square in a stratum is constant there (rounding: about 1e-16).
_FLAT = 1e-12
#: ``correction`` of mi-cg's chi-square: the null mean and variance (default), the mean
#: (Bartlett), or none (bnlearn's plain chi-square).
CORRECTIONS = ("moments", "bartlett", None)
_NOTES = {"moments": "Gaussian fits: p-value of the scaled chi-square a chi2_df with the "
                     "statistic's exact null mean and variance given the design",
          "bartlett": "Gaussian fits: p-value of the chi-square at statistic * df / mean, "
                      "mean the statistic's exact null mean given the design (Bartlett)"}
_LOGIT_NOTE = {"moments": "; discrete x and y given a continuous z with few rows per "
                           "coefficient: the scaled chi-square with the mean and variance of a "
                           "parametric bootstrap of the fitted null",
               "bartlett": "; discrete x and y given a continuous z with few rows per "
                           "coefficient: chi-square at statistic * df / mean, mean by a "
                           "parametric bootstrap of the fitted null (Rocke 1989)"}


#: Fits from per-stratum moments (:class:`~mbstat.ci.continuous._design.StratumMoments`, computed once
#: per data set and strata) where they are well posed; False reads the rows for every test
#: (the former path, kept for comparison).
USE_MOMENTS = True


def _lazy(make):
    """``make()`` computed on the first call, then kept."""
    box = []
    return lambda: box[0] if box else box.append(make()) or box[0]


def _stratified_rss(ds, targets, zc, disc, design, groups):
    """Residual sums of squares (k, G) of the columns ``targets`` on [1, zc] within the
    strata of the discrete columns ``disc`` and the strata's counts (G): from the
    per-stratum moments where they are well posed, else from the rows (``design()`` the
    design [1, zc], ``groups()`` the strata codes and their number)."""
    mom = stratum_moments(ds, disc) if USE_MOMENTS else None
    if mom is not None:
        _, _, oo, ok = mom.residual_parts(None, targets, zc)
        if ok:
            return oo.T, mom.counts, mom.g
    g, G = groups()
    return (*grouped_rss(column_values(ds, targets), design(), g, G), g)


def cg_loglik(rss, counts, p: int) -> np.ndarray:
    """bnlearn's ``c_fast_ccgloglik`` from the residual sums of squares ``rss`` (k, G) of k
    regressions within G strata of ``counts`` rows, each with ``p`` coefficients: the sum
    of the Gaussian log-densities with sd = sqrt(RSS / (n_s - p)); -inf where singular (a
    stratum's residual sd below MACHINE_TOL, or no more rows than coefficients). The test
    compares its terms stratum by stratum instead (module docstring, *Degenerate strata*)."""
    terms, few, point = _cg_terms(rss, counts, p)
    ll = terms.sum(axis=1)
    ll[few | point.any(axis=1)] = -np.inf
    return ll


def null_moments(counts, p: int) -> np.ndarray:
    """Sums over the strata of ``counts`` rows with more rows than the ``p`` coefficients of
    ``n h(nu) + nu`` and ``n^2 psi'(nu / 2)`` (nu = n - p, h(nu) = psi(nu / 2) + log(2 / nu)):
    a fit's share of the null mean and variance of the statistic (module docstring)."""
    counts = np.asarray(counts, dtype=np.float64)
    counts = counts[counts > p]
    nu = counts - p
    return np.array([np.sum(counts * (special.digamma(nu / 2.0) + np.log(2.0 / nu)) + nu),
                     np.sum(counts ** 2 * special.polygamma(1, nu / 2.0))])


def _cg_terms(rss, counts, p: int):
    """:func:`cg_loglik`'s terms stratum by stratum: the log-likelihoods (k, G) (0 where a
    stratum is empty, singular or degenerate), ``few`` (k,) where an observed stratum has no
    more rows than coefficients, and ``point`` (k, G) where a stratum's residual sd is below
    MACHINE_TOL (a point mass: its log-likelihood is +inf, not -inf)."""
    rss = np.atleast_2d(np.asarray(rss, dtype=np.float64))
    counts = np.asarray(counts, dtype=np.float64)
    used = counts > 0
    dof = counts - p
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = rss / dof
        terms = -0.5 * counts * (_LOG_2PI + np.log(s2)) - 0.5 * dof
        few = used & (dof <= 0)
        point = used & ~few & ~(np.sqrt(s2) >= MACHINE_TOL)
        terms = np.where(used & ~few & ~point, terms, 0.0)
    return terms, np.broadcast_to(few, rss.shape).any(axis=1), point


def _nested_lr(rss1, counts1, p1: int, rss0, counts0, p0: int, parent=None, none_ll=0.0):
    """2 (ll1 - ll0) of nested CG fits, stratum by stratum (module docstring, *Degenerate
    strata*): ``rss1`` (k, G1) and ``rss0`` (k or 1, G0) the residual sums of squares of the
    alternative's and the null's strata, ``parent()`` (G1,) the null stratum of each
    alternative one (None: the same strata). A null stratum with a point mass carries no
    evidence (its alternative strata, nesting it, are point masses too): its terms are 0, or
    ``none_ll`` (G1,) for the alternative's; an alternative point mass in a null stratum
    that is not one is a certain dependence: +inf; a stratum with no more rows than
    coefficients makes the fit singular: 0 (bnlearn's rule). Returns the statistics (k,),
    the null's point masses (k or 1, G0) and the alternative strata within them (k, G1)."""
    t1, few1, point1 = _cg_terms(rss1, counts1, p1)
    t0, few0, point0 = _cg_terms(rss0, counts0, p0)
    none1 = np.zeros(t1.shape, dtype=bool)
    if point0.any():
        none1 = np.broadcast_to(point0 if parent is None else point0[:, parent()], t1.shape)
        t1 = np.where(none1, none_ll, t1)
    stat = 2.0 * (t1.sum(axis=1) - t0.sum(axis=1))
    stat = np.where((point1 & ~none1).any(axis=1), np.inf, stat)
    return np.where(few1 | few0, 0.0, stat), point0, none1


def _parent(g1, G1: int, g0) -> np.ndarray:
    """The stratum in ``g0`` of each of the ``G1`` strata ``g1`` (codes per row) nested in it."""
    out = np.zeros(G1, dtype=np.intp)
    out[g1] = g0
    return out


def _stratified_moments(counts0, counts1, p: int, point0, none1):
    """Null means and variances (k, 2) and added parameters (k,) of k statistics of a
    continuous column within the strata of (discrete, zd) against those of zd, less the
    strata without evidence (``point0`` (k, G0) and ``none1`` (k, G1) from
    :func:`_nested_lr`)."""
    k = none1.shape[0]
    point0 = np.broadcast_to(point0, (k, len(counts0)))
    moments = np.tile((null_moments(counts0, p) - null_moments(counts1, p)) * [1, -1], (k, 1))
    added = np.full(k, (len(counts1) - len(counts0)) * (p + 1.0))
    for i in np.flatnonzero(point0.any(axis=1)):
        c0, c1 = np.where(point0[i], 0.0, counts0), np.where(none1[i], 0.0, counts1)
        moments[i] = (null_moments(c0, p) - null_moments(c1, p)) * [1, -1]
        added[i] -= (none1[i].sum() - point0[i].sum()) * (p + 1.0)
    return moments, added


def _quadratic_basis(Zc) -> np.ndarray:
    """An orthonormal basis of [1, zc, the products zc_i zc_j (i <= j)] over the rows of
    Zc (columns centred and scaled first, so that units never decide the rank; singular
    values below 1e-9 of the largest dropped)."""
    n, q = Zc.shape
    sd = Zc.std(axis=0)
    Zs = (Zc - Zc.mean(axis=0))[:, sd > 0] / sd[sd > 0]
    iu, ju = np.triu_indices(Zs.shape[1])
    M = np.column_stack([np.ones(n), Zs, Zs[:, iu] * Zs[:, ju]])
    u, s, _ = np.linalg.svd(M / np.sqrt(n), full_matrices=False)
    return u[:, s > 1e-9 * s[0]] * np.sqrt(n)


def _multinomial_loglik(F, codes) -> float:
    """Maximized log-likelihood of the multinomial logit of ``codes`` on the design F
    (classes that do not occur dropped: their fitted probability is 0)."""

    observed = np.unique(codes)
    if len(observed) < 2:
        return 0.0
    Y = (codes[:, None] == observed[None, :]).astype(np.float64)
    return float(fit_logit(F[None], Y)[0][0])


#: Draws of the parametric bootstrap whose moments refer the pair logit's statistic (module
#: docstring): B = 800 / df within [50, 400], so that the mean's relative Monte Carlo error,
#: about sqrt(2 r / (df B)) (r, the replicates' variance over a chi-square's, near 1.2), is
#: near 5% (400 / df, 7%, failed the oracle test on a CG network:
#: tests/test_mi_cg_networks.py). A floor of 20 draws let the variance's error (about 28% at
#: 30 draws) through to the two-moment p-value: 12% [7.0, 19.8] of 100 nulls with rarer
#: levels (benchmarks/mixed_tests.py --scenarios rarer).
BOOTSTRAP_B = (800, 50, 400)
#: The pair logit keeps its plain chi-square where every stratum's rarest observed cell of
#: (x, y) has at least this many rows per coefficient of a logit on [1, zc, zc zc'].
EVENTS_PER_PARAMETER = 20


def bootstrap_draws(df: float) -> int:
    """The bootstrap's B for a statistic of ``df`` degrees of freedom (:data:`BOOTSTRAP_B`)."""
    total, low, high = BOOTSTRAP_B
    return int(min(max(np.ceil(total / max(df, 1.0)), low), high))


def few_events(cx, ky: int, cy, g, d: int) -> bool:
    """Whether some stratum of ``g`` has an observed cell of (x, y) with fewer than
    :data:`EVENTS_PER_PARAMETER` rows per coefficient (``d``) of a logit: where the pair
    logit's chi-square is liberal (module docstring)."""
    cells = np.unique(g.astype(np.int64) * (int(cx.max()) + 1) * ky
                      + cx.astype(np.int64) * ky + cy, return_counts=True)[1]
    return bool(cells.min() < EVENTS_PER_PARAMETER * d)
#: Replicates fitted together (memory: about 10 B n d floats per chunk).
_CHUNK = 50
#: The bootstrap draws its replicates in stages of this many (each column's draws seeded by
#: its contents and the stage), at least one stage.
BOOTSTRAP_STAGE = 10
#: The sequential bootstrap stops once the Bartlett-scaled p-value at both ends of the null
#: mean's Monte Carlo interval (:data:`CLEAR_Z` standard errors) is at most CLEAR[0] (a
#: dependence that no search's level, down to alpha / m for a million candidates at
#: 0.05, misses) or at least CLEAR[1] (an independence at every level up to 0.25).
CLEAR = (5e-8, 0.25)
CLEAR_Z = 3.0


def _canonical(codes) -> np.ndarray:
    """``codes`` renumbered by each level's first appearance down the rows (the order of a
    column's declared levels then never reaches the draws)."""
    levels, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    rank = np.empty(len(levels), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(levels))
    return rank[inverse.ravel()]


def _logit_fit(F, codes, k: int):
    """The multinomial logit of ``codes`` (0..k-1) on the design F: fitted class
    probabilities (n, k) and linear predictors' coefficients (d, k) against class 0 (a
    class that does not occur: probability 0, never drawn; its coefficients 0, unused)."""

    observed = np.unique(codes)
    P = np.zeros((len(codes), k))
    coef = np.zeros((F.shape[1], k))
    if len(observed) < 2:
        P[:, observed] = 1.0
        return P, coef
    Y = (codes[:, None] == observed[None, :]).astype(np.float64)
    fitted = fit_logit(F[None], Y)[1][0]
    eta = np.column_stack([np.zeros(len(codes)), F @ fitted])
    eta -= eta.max(axis=1, keepdims=True)
    e = np.exp(eta)
    P[:, observed] = e / e.sum(axis=1, keepdims=True)
    coef[:, observed] = np.column_stack([np.zeros(F.shape[1]), fitted])
    return P, coef - coef[:, :1]


def _replicate_logliks(F, codes, start) -> np.ndarray:
    """Maximized log-likelihoods (R,) of the multinomial logits of each row of ``codes``
    (R, n) on the design F, fitted together by the set of classes that occur (the
    others' fitted probability is 0: the supremum of the likelihood), each fit started at
    the coefficients ``start`` (d, k) of the law the codes were drawn from (a few Newton
    steps then reach the replicate's maximum)."""

    R, n = codes.shape
    k = start.shape[1]
    present = np.zeros((R, k), dtype=bool)
    present[np.repeat(np.arange(R), n), codes.ravel()] = True
    out = np.zeros(R)
    masks, which = np.unique(present, axis=0, return_inverse=True)
    for g, mask in enumerate(masks):
        classes = np.flatnonzero(mask)
        if len(classes) < 2:
            continue  # one class: log-likelihood 0
        rows = np.flatnonzero(which.ravel() == g)
        B0 = start[:, classes[1:]] - start[:, classes[:1]]  # against the first class
        for first in range(0, len(rows), _CHUNK):
            part = rows[first:first + _CHUNK]
            Y = (codes[part][..., None] == classes).astype(np.float64)
            X = np.broadcast_to(F, (len(part),) + F.shape)
            out[part] = fit_logit(X, Y, np.broadcast_to(B0, (len(part),) + B0.shape))[0]
    return out


def _draw(rng, P, B: int) -> np.ndarray:
    """B draws (B, n) of a class per row from the probabilities P (n, k)."""
    cdf = np.cumsum(P, axis=1)
    u = rng.random((B, P.shape[0]))
    return np.minimum((u[..., None] > cdf[None]).sum(axis=2), P.shape[1] - 1)


def _crc(a) -> int:
    return zlib.crc32(np.ascontiguousarray(a).tobytes())


class PairBootstrap:
    """The parametric bootstrap of :func:`pair_logit_lr` under its fitted null for one set
    of strata ``g`` and continuous columns ``Zc`` (a batch's z), shared by the batch's
    candidates: each stratum's basis [1, zc, zc zc'] once, and per column (x or y) its
    fitted logit in each stratum, its draws and their own fits once (the target's serve
    every candidate). A column's draws are seeded by its own contents in canonical codes
    (with ``seed``, the strata and zc's columns in any order) and by the stage, so that the
    replicates depend on neither the order of the levels, nor that of x and y or of zc's
    columns, nor the candidates tested before; replicates come in stages of
    :data:`BOOTSTRAP_STAGE` (module docstring)."""

    def __init__(self, g, Zc, seed: int = 0):
        g = _canonical(g)
        order = np.argsort(g, kind="stable")
        bounds = np.cumsum(np.bincount(g))[:-1]
        self.strata = [idx for idx in np.split(order, bounds) if len(idx) >= 2]
        self.F = [_quadratic_basis(Zc[idx]) for idx in self.strata]
        self.key = [int(seed), _crc(g), *sorted(_crc(Zc[:, j]) for j in range(Zc.shape[1]))]
        self.columns = {}

    def _column(self, codes, role: int = 0):
        c = _canonical(codes)
        word = (_crc(c), role)
        if word not in self.columns:
            k = int(c.max()) + 1
            self.columns[word] = {"k": k, "stages": {},
                                  "fits": [_logit_fit(F, c[idx], k)
                                           for F, idx in zip(self.F, self.strata)]}
        return word, self.columns[word]

    def _stage(self, word, column, s: int):
        """The draws (one (R, n_s) array per stratum) of stage ``s`` and the column's own
        maximized log-likelihoods on them (R,), summed over the strata."""
        if s not in column["stages"]:
            rng = np.random.default_rng([*self.key, *word, s])
            draws = [_draw(rng, P, BOOTSTRAP_STAGE) for P, _ in column["fits"]]
            own = sum(_replicate_logliks(F, d, coef)
                      for F, d, (_, coef) in zip(self.F, draws, column["fits"]))
            column["stages"][s] = (draws, own)
        return column["stages"][s]

    def replicates(self, cx, cy, s: int) -> np.ndarray:
        """The statistic on the :data:`BOOTSTRAP_STAGE` data sets of stage ``s`` (R,)."""
        wx, X = self._column(cx)
        # a y identical to x (in canonical codes) is drawn apart from it, under the null
        wy, Y = self._column(cy, role=int(_crc(_canonical(cy)) == wx[0]))
        (dx, llx), (dy, lly) = self._stage(wx, X, s), self._stage(wy, Y, s)
        ky = Y["k"]
        pair = 0.0
        for F, a, b, (_, bx), (_, by) in zip(self.F, dx, dy, X["fits"], Y["fits"]):
            start = (bx[:, :, None] + by[:, None, :]).reshape(F.shape[1], X["k"] * ky)
            pair = pair + _replicate_logliks(F, a * ky + b, start)  # the product law's
        return np.maximum(2.0 * (pair - llx - lly), 0.0)

    def null_moments(self, cx, cy, statistic: float, df: float, B: int,
                     correction: str = "moments"):
        """The bootstrap null mean and variance of the statistic of (x, y) and the draws
        they took: stages of :data:`BOOTSTRAP_STAGE` replicates up to ``B``, stopped once
        the p-value of ``correction`` is clear (:func:`_clear`)."""
        reps = np.empty(0)
        for s in range(int(np.ceil(B / BOOTSTRAP_STAGE))):
            reps = np.concatenate([reps, self.replicates(cx, cy, s)])
            if _clear(statistic, df, reps, correction):
                break
        return float(reps.mean()), float(reps.var(ddof=1)), len(reps)


def bootstrap_pvalue(statistic, df, mean, var, correction: str = "moments"):
    """The pair logit's p-value and log p-value from its bootstrap null mean (and
    variance): ``"bartlett"``, the chi-square on df at statistic * df / mean (Bartlett 1937,
    Rocke 1989); ``"moments"``, the scaled chi-square a chi2_f with that mean and variance
    (a = var / (2 mean), f = 2 mean^2 / var; Satterthwaite 1946), as the Gaussian
    configurations' exact moments. Also the df of the chi-square used."""
    statistic, df, mean, var = (np.atleast_1d(np.asarray(v, dtype=np.float64))
                                for v in (statistic, df, mean, var))
    if correction == "moments":
        f = np.where(var > 0, 2.0 * mean ** 2 / np.where(var > 0, var, 1.0), df)
        scaled = statistic * f / mean
    else:
        f, scaled = df, statistic * df / mean
    p, log_p = chi2_sf_logsf(scaled, np.ascontiguousarray(f))
    return p, log_p, f


def _clear(statistic: float, df: float, reps, correction: str = "moments") -> bool:
    """Whether the bootstrap p-value (:func:`bootstrap_pvalue`) is settled with the
    replicates ``reps`` drawn so far: at the ends of the mean's Monte Carlo interval
    (:data:`CLEAR_Z` standard errors, the replicates' dispersion held) both p-values are
    at least ``CLEAR[1]`` or both at most ``CLEAR[0]``, so that no level between those two
    can see another decision with the remaining draws (module docstring)."""
    mean, var = reps.mean(), reps.var(ddof=1) if len(reps) > 1 else 0.0
    if len(reps) < 2 or not mean > 0:
        return False  # no spread yet, or a statistic the draws never move (plain chi-square)
    se = np.sqrt(var / len(reps))
    ends = np.array([max(mean - CLEAR_Z * se, 1e-12), mean + CLEAR_Z * se])
    p = bootstrap_pvalue(np.full(2, statistic), np.full(2, float(df)), ends,
                         var * (ends / mean) ** 2, correction)[0]
    return bool(p[0] >= CLEAR[1] or p[1] <= CLEAR[0])


def pair_logit_null_mean(cx, cy, g, Zc, B: int, seed: int = 0) -> float:
    """The mean of :func:`pair_logit_lr` over ``B`` (rounded up to whole stages) data sets
    drawn from the fitted null model (the product of the logits of x and of y on [1, zc,
    zc zc'] in each stratum of ``g``): the parametric bootstrap estimate of the statistic's
    null mean, from which its Bartlett scaling (Rocke 1989); :class:`PairBootstrap`'s
    draws, without the early stop."""
    boot = PairBootstrap(g, Zc, seed)
    stages = int(np.ceil(B / BOOTSTRAP_STAGE))
    return float(np.concatenate([boot.replicates(cx, cy, s) for s in range(stages)]).mean())


def pair_logit_lr(cx, kx: int, cy, ky: int, g, G: int, Zc) -> float:
    """Twice the log-likelihood ratio of the multinomial logit of the pair (x, y) on
    [1, zc, zc zc'] within each stratum of ``g`` against the product of the logits of x
    and of y alone (codes ``cx``, ``cy`` of ``kx`` and ``ky`` levels). With no column in
    Zc it is the G2 test of x and y given the strata."""
    order = np.argsort(g, kind="stable")
    bounds = np.cumsum(np.bincount(g, minlength=G))[:-1]
    pair = cx.astype(np.int64) * ky + cy
    total = 0.0
    for idx in np.split(order, bounds):  # one set of fits per configuration of zd
        if len(idx) < 2:
            continue
        F = _quadratic_basis(Zc[idx])
        total += 2.0 * (_multinomial_loglik(F, pair[idx]) - _multinomial_loglik(F, cx[idx])
                        - _multinomial_loglik(F, cy[idx]))
    return max(total, 0.0)


class ConditionalGaussian(PermutableTest):
    """Conditional Gaussian likelihood-ratio test (after bnlearn's ``mi-cg``).

    Assumptions: within each configuration of the discrete variables, each continuous
    variable is Gaussian and linear in the continuous ones (a CG network); the chi-square
    holds when every stratum has many more rows than coefficients. Any mix of discrete and
    continuous x, y and z; x is one variable. See the module docstring for the statistic
    and df in each case, and for where it departs from bnlearn (discrete x and y given a
    continuous z).

    Parameters
    ----------
    correction : {"moments", "bartlett", None}
        "moments" (default): the p-value of a scaled chi-square with the statistic's exact
        null mean and variance in the Gaussian configurations, and with its parametric
        bootstrap's mean and variance for the pair logit (discrete x and y, a continuous
        z) where its events per parameter are few; "bartlett": the chi-square of the
        statistic scaled to its null mean (exact, or the bootstrap's); None: the plain
        chi-square on bnlearn's df (module docstring).
    calibration, B, seed
        The chi-square (default) or permutations
        (:class:`~mbstat.ci.continuous._design.PermutableTest`).
    """

    name = "mi-cg"
    method = "Conditional Gaussian likelihood-ratio test (mi-cg)"
    statistic_name = "mi-cg"
    kind = "mixed"
    joint_x = False
    symmetric = True
    own_arguments = ("correction",)

    def __init__(self, correction="moments", calibration="asymptotic", B=1000, seed=None):
        super().__init__(calibration, B, seed)
        if correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
        self.correction = correction
        if correction is not None:
            self.notes = {**self.notes, ASYMPTOTIC: _NOTES[correction] + _LOGIT_NOTE[correction]}

    def check(self, tester, columns) -> None:
        pass  # any kinds

    def asymptotic(self, tester, xs, y, z):
        """The results table with chi-square p-values (small-sample corrected by default)."""
        ds = tester.dataset
        n = tester.n
        zd = [j for j in z if is_discrete(ds, j)]
        zc = [j for j in z if not is_discrete(ds, j)]
        L = int(np.prod([ds.level_counts[j] for j in zd], dtype=np.float64))
        zd_strata = _lazy(lambda: strata(ds, zd)[:2])  # the rows path's strata of zd
        design = lambda: np.column_stack([np.ones(n), column_values(ds, zc)])  # rows path
        p, q = 1 + len(zc), len(zc)
        cols = [xk[0] for xk in xs]
        stat = np.zeros(len(cols))
        df = np.zeros(len(cols))
        # the exact null mean of each Gaussian statistic and the parameters it adds in
        # the observed strata (nan: no Gaussian fit, the plain chi-square)
        moments = np.full((len(cols), 2), np.nan)
        added = np.zeros(len(cols))
        boot = np.full((len(cols), 2), np.nan)  # the pair logit's bootstrap mean, variance
        disc = np.array([is_discrete(ds, j) for j in cols], dtype=bool)
        cont_pos, disc_pos = np.flatnonzero(~disc), np.flatnonzero(disc)
        if not is_discrete(ds, y):
            if len(cont_pos):  # y on (x, zc) vs on zc: partial out zc within strata
                xcols = [cols[i] for i in cont_pos]
                mom = stratum_moments(ds, zd) if USE_MOMENTS else None
                parts = mom.residual_parts(y, xcols, zc) if mom is not None else None
                if parts is not None and parts[3]:  # from the per-stratum moments
                    syy, sxy, sxx, _ = parts
                    raw, counts = mom.raw_squares(xcols), mom.counts
                else:  # from the rows
                    X = column_values(ds, xcols)
                    g0, G0 = zd_strata()
                    E, counts = grouped_residuals(np.column_stack([column_values(ds, [y]), X]),
                                                  design(), g0, G0)
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
                # y's residual a point mass in a stratum: no evidence there, the constant
                # that a flat x gives (x and y swapped: the test stays symmetric)
                nu0 = np.asarray(counts, dtype=np.float64) - p
                with np.errstate(divide="ignore", invalid="ignore"):
                    flat_ll = 0.5 * ((nu0 + p) * np.log((nu0 - 1.0) / nu0) + 1.0)
                stat[cont_pos], point0, _ = _nested_lr(np.maximum(rss1, 0.0).T, counts, p + 1,
                                                       syy, counts, p, none_ll=flat_ll)
                df[cont_pos] = L
                moments[cont_pos], added[cont_pos] = _continuous_pair_moments(
                    counts, p, flat | point0.T)
            if len(disc_pos):  # y on zc within strata of (x, zd) vs of zd
                rss0, counts0, g0 = _stratified_rss(ds, [y], zc, zd, design, zd_strata)
                for i in disc_pos:  # one stratified fit per discrete candidate
                    x_strata = lambda x=cols[i]: combine(ds.codes[:, x], ds.level_counts[x],
                                                         *zd_strata())
                    rss1, counts1, g1 = _stratified_rss(ds, [y], zc, [cols[i], *zd], design,
                                                        x_strata)
                    s, point0, none1 = _nested_lr(rss1, counts1, p, rss0, counts0, p,
                                                  lambda: _parent(g1, len(counts1), g0))
                    stat[i] = s[0]
                    df[i] = (ds.level_counts[cols[i]] - 1) * L * (q + 2)
                    m, a = _stratified_moments(counts0, counts1, p, point0, none1)
                    moments[i], added[i] = m[0], a[0]
        else:
            ky = ds.level_counts[y]
            if len(cont_pos):  # each x on zc within strata of (y, zd) vs of zd
                xcols = [cols[i] for i in cont_pos]
                y_strata = lambda: combine(ds.codes[:, y], ky, *zd_strata())
                rss0, counts0, g0 = _stratified_rss(ds, xcols, zc, zd, design, zd_strata)
                rss1, counts1, g1 = _stratified_rss(ds, xcols, zc, [y, *zd], design, y_strata)
                stat[cont_pos], point0, none1 = _nested_lr(
                    rss1, counts1, p, rss0, counts0, p, lambda: _parent(g1, len(counts1), g0))
                df[cont_pos] = (ky - 1) * L * (q + 2)
                moments[cont_pos], added[cont_pos] = _stratified_moments(counts0, counts1, p,
                                                                         point0, none1)
            if len(disc_pos):
                kx = np.array([ds.level_counts[cols[i]] for i in disc_pos], dtype=np.float64)
                df[disc_pos] = (kx - 1) * (ky - 1) * L * (1 + q * (q + 3) / 2)
                if q:  # the pair's logit against the product of the two (module docstring)
                    Zc = column_values(ds, zc)
                    cy = ds.codes[:, y]
                    g, G = zd_strata()
                    bootstrap = _lazy(lambda: PairBootstrap(g, Zc, self.seed))  # y's, shared
                    for i in disc_pos:  # one set of fits per candidate
                        x = cols[i]
                        cx = ds.codes[:, x]
                        stat[i] = pair_logit_lr(cx, ds.level_counts[x], cy, ky, g, G, Zc)
                        if self.correction is not None and stat[i] > 0 and \
                                few_events(cx, ky, cy, g, 1 + q * (q + 3) // 2):
                            boot[i] = bootstrap().null_moments(
                                cx, cy, stat[i], df[i], bootstrap_draws(df[i]),
                                self.correction)[:2]
                else:  # all discrete: the G2 statistic within the strata of zd
                    g, G = zd_strata()
                    cy = ds.codes[:, y]
                    for i in disc_pos:
                        x = cols[i]
                        stat[i] = g2_within(ds.codes[:, x], ds.level_counts[x], cy, ky, g, G)
        table = chi2_table(stat, df, n)
        if self.correction is not None:
            table = _bartlett(table, stat, moments, added, self.correction)
            table = _bootstrap_bartlett(table, stat, df, boot, self.correction)
        certain = np.isinf(stat)  # a point mass explained exactly: p = 0, log p = -inf
        table["pvalue"][certain], table["log_pvalue"][certain] = 0.0, -np.inf
        return table


def g2_within(cx, kx: int, cy, ky: int, g, G: int) -> float:
    """G2 = 2 sum n_xyz log(n_xyz n_z / (n_xz n_yz)) of x against y within the strata g."""
    code = (np.asarray(g, dtype=np.int64) * kx + cx) * ky + cy
    n = np.bincount(code, minlength=G * kx * ky).reshape(G, kx, ky).astype(np.float64)
    margins = n.sum(axis=2, keepdims=True) * n.sum(axis=1, keepdims=True)  # n_xz n_yz
    joint = n * n.sum(axis=(1, 2), keepdims=True)  # n_xyz n_z
    seen = n > 0
    return float(2.0 * np.sum(n[seen] * np.log(joint[seen] / margins[seen])))


def _continuous_pair_moments(counts, p: int, flat):
    """Null means and variances (k, 2) and added parameters (k,) of the statistics of k
    continuous x against a continuous y within strata of ``counts`` rows (``flat`` (G, k):
    x constant given zc in a stratum, where the statistic is the constant
    n log(nu1 / nu0) + 1)."""
    counts = np.asarray(counts, dtype=np.float64)
    used = counts > p + 1
    n = counts[used][:, None]
    flat = flat[used]
    nu0, nu1 = n - p, n - p - 1
    h = lambda nu: special.digamma(nu / 2.0) + np.log(2.0 / nu)
    mean = np.where(flat, n * np.log(nu1 / nu0), n * (h(nu0) - h(nu1))) + 1.0
    var = np.where(flat, 0.0, n ** 2 * (special.polygamma(1, nu1 / 2.0)
                                        - special.polygamma(1, nu0 / 2.0)))
    return (np.column_stack([mean.sum(axis=0), var.sum(axis=0)]),
            (~flat).sum(axis=0).astype(float))


def _bootstrap_bartlett(table, stat, df, boot, correction):
    """``table`` with the pair logit's p-values from its bootstrap null mean and variance
    ``boot`` (k, 2) (nan: the plain chi-square) by :func:`bootstrap_pvalue`; under
    ``"moments"`` the df reported is the scaled chi-square's f."""

    mean, var = boot[:, 0], boot[:, 1]
    use = np.isfinite(mean) & (mean > 0) & (stat > 0) & (df > 0)
    if use.any():
        p, log_p, f = bootstrap_pvalue(stat[use], df[use], mean[use],
                                       np.nan_to_num(var[use]), correction)
        table["pvalue"][use], table["log_pvalue"][use] = p, log_p
        table["df"][use] = f
    return table


def _bartlett(table, stat, moments, added, correction):
    """``table`` with the Gaussian statistics' p-values corrected: ``"bartlett"``, the
    chi-square on ``added`` df (the parameters the alternative adds in the observed strata)
    at stat * added / mean; ``"moments"``, the scaled chi-square a chi2_f with the null mean
    and variance (a = var / (2 mean), f = 2 mean^2 / var; Satterthwaite 1946)."""

    mean, var = moments[:, 0], moments[:, 1]
    use = np.isfinite(mean) & (mean > 0) & (added > 0) & (stat > 0) & (var > 0)
    if not use.any():
        return table
    if correction == "moments":
        f = 2.0 * mean[use] ** 2 / var[use]
        scaled = stat[use] * 2.0 * mean[use] / var[use]
    else:
        f = added[use]
        scaled = stat[use] * f / mean[use]
    p, log_p = chi2_sf_logsf(scaled, np.ascontiguousarray(f))
    table["pvalue"][use], table["log_pvalue"][use], table["df"][use] = p, log_p, f
    return table
