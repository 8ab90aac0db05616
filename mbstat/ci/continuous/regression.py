"""Regression likelihood-ratio tests, as MXM's ``testIndReg`` / ``testIndLogistic`` /
``testIndMultinom`` (Tsamardinos, Borboudakis et al.; Lagani et al. 2017, section 3).

The target y is regressed on z with and without x: by least squares for a continuous y,
by logistic regression for a binary y and by multinomial logistic regression for a y of
more levels. The statistic is the likelihood ratio 2 (loglik1 - loglik0) of the maximum-
likelihood fits, with df = (columns x adds beyond z) times (1, or levels - 1 for the
multinomial), equal to statsmodels' (``OLS``: ``compare_lr_test``; ``Logit`` / ``MNLogit``:
2 (llf1 - llf0) and the difference of ``df_model``). Discrete x and z enter as
treatment-coded dummies (first declared level the reference); columns of x that z already
spans add no df, as ``df_diff`` counts the rank.

p-values: the logistic models' LR is referred to the chi-square (asymptotic). The least-
squares LR = n log(rss0 / rss1) is a monotone map of the F statistic, rss0 / rss1 = 1 +
F df / df2 with df2 = n - rank of [1, z, x], so its p-value is P(F(df, df2) >= F), exact
under Gaussian errors (the classical nested-model F test, e.g. Seber & Lee 2003, *Linear
Regression Analysis*, section 4.3; MXM's ``testIndReg`` uses this F test; statsmodels'
``compare_f_test``). The chi-square of the LR is only its large-n limit and rejects far
too often when df is not small against df2 (40 rows, a 20-level x: 33-38% at 0.05 on
noise), every time at saturation (df2 = 0, where rss1 = 0 and LR = inf). Where df2 <= 0
the full model fits every row: no test can be made, and the row is "skipped"
(independence assumed, p = 1, statistic 0), as the power rules of the tables' tests.

Batched: y's null model given z is fitted once per batch; each candidate then adds its
columns, orthogonalized against z (the same fit, better conditioned). Least squares is in
closed form (one projection for all candidates); the logistic fits run one Newton method
for all candidates of a batch at once (stacked designs, step halving).
"""
from __future__ import annotations

import numpy as np

from ... import _validation as v
from ...data.dataset import column_values, is_discrete
from ..chi2 import f_sf_logsf
from ..result import ASYMPTOTIC, NOTES, PERMUTATION, SKIPPED, results_table
from ._design import PERMUTATION_NOTE, PermutableTest, chi2_table, dummies
from .moments import WELL_POSED, column_moments

__all__ = ["RegressionLR", "MODELS", "fit_logit"]

#: ``model`` of the regression test: "auto" picks by the target's kind and levels.
MODELS = ("auto", "gaussian", "logistic", "multinomial")


def _unit(M):
    """The columns of M scaled to unit length (all-zero columns dropped): the span is the
    same, and the rank tolerances below no longer depend on the columns' units."""
    norms = np.sqrt(np.einsum("ij,ij->j", M, M))
    keep = norms > 0
    return M[:, keep] / norms[keep]


def _orthonormal(M, tol=1e-9):
    """An orthonormal basis (n, r) of the column span of M, whose columns have length at
    most 1 (an SVD; singular values below ``tol`` dropped). Callers scale their columns
    by :func:`_unit` first, so that a column's units (1e-12 or 1e8) never decide the
    rank: a tiny x or z keeps its column, and an x that z spans, up to rounding, adds
    none (statsmodels' ``df_diff`` of 0)."""
    if not M.shape[1]:
        return M
    u, s, _ = np.linalg.svd(M, full_matrices=False)
    return u[:, s > tol]


def block(dataset, cols) -> np.ndarray:
    """Design columns of a set of variables: continuous values, dummies of discrete ones."""
    parts = [dummies(dataset, j) if is_discrete(dataset, j) else column_values(dataset, [j])
             for j in cols]
    return np.column_stack(parts) if parts else np.empty((dataset.n_rows, 0))


def _logit_loglik(eta, Y):
    """Multinomial log-likelihood (K,) of linear predictors eta (K, n, m) of the classes
    1..m (class 0 the reference) for one-hot classes Y (n, m + 1), or (K, n, m + 1): one
    set of classes per fit."""
    full = np.concatenate([np.zeros(eta.shape[:2] + (1,)), eta], axis=2)
    fit = np.einsum("knm,knm->k", full, Y) if Y.ndim == 3 else np.einsum("knm,nm->k", full, Y)
    return fit - _logsumexp(full).sum(axis=1)


def _logsumexp(a):
    """log(sum(exp(a))) over the last (short: the classes) axis, shifted by the maximum;
    elementwise over the classes, which is faster than a reduction along a short axis."""
    cols = [a[..., i] for i in range(a.shape[-1])]
    top = cols[0]
    for c in cols[1:]:
        top = np.maximum(top, c)
    total = np.exp(cols[0] - top)
    for c in cols[1:]:
        total += np.exp(c - top)
    return top + np.log(total)


def _newton_step(H, grad):
    """H^-1 grad for a stack of information matrices H (K, p, p): Cholesky solves where
    every H is positive definite (the usual case), else the pseudo-inverse (a rank-
    deficient design, a class that does not occur)."""
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        return np.einsum("kij,kj->ki", np.linalg.pinv(H, hermitian=True), grad)
    half = np.linalg.solve(L, grad[..., None])
    return np.linalg.solve(L.transpose(0, 2, 1), half)[..., 0]


def fit_logit(X, Y, B0=None, maxiter=100, tol=1e-10):
    """Maximum-likelihood (multinomial) logistic fits of K designs at once.

    Parameters
    ----------
    X : ndarray (K, n, d)
        K stacked designs (an intercept column included by the caller).
    Y : ndarray (n, m + 1) or (K, n, m + 1)
        One-hot classes, class 0 the reference: shared by the K fits, or one set per fit
        (a parametric bootstrap's replicates on one design).
    B0 : ndarray (K, d, m), optional
        Starting coefficients (default zeros).

    Returns
    -------
    (loglik (K,), coefficients (K, d, m), iterations)
        Newton-Raphson with step halving; stops when no log-likelihood gains more than
        ``tol`` (relative), as statsmodels' ``newton``.
    """
    K, n, d = X.shape
    m = Y.shape[-1] - 1
    B = np.zeros((K, d, m)) if B0 is None else np.array(B0, dtype=np.float64)
    ll = _logit_loglik(X @ B, Y)
    active = np.ones(K, dtype=bool)
    it = 0
    for it in range(1, maxiter + 1):  # Newton iterations (a handful), all candidates at once
        idx = np.flatnonzero(active)
        Xa, Ba = X[idx], B[idx]
        Ya = Y[idx] if Y.ndim == 3 else Y
        eta = Xa @ Ba
        full = np.concatenate([np.zeros(eta.shape[:2] + (1,)), eta], axis=2)
        P = np.exp(full - _logsumexp(full)[..., None])[..., 1:]
        Xt = Xa.transpose(0, 2, 1)
        grad = (Xt @ (Ya[..., 1:] - P)).reshape(len(idx), d * m)
        # the information X' (diag(p) - p p') X, blocks (a, j), (b, l): two batched
        # products, -(X p)'(X p) and, on the diagonal blocks j = l, X' diag(p_j) X
        XP = (Xa[..., :, None] * P[..., None, :]).reshape(len(idx), n, d * m)
        H = -(XP.transpose(0, 2, 1) @ XP).reshape(len(idx), d, m, d, m)
        diag = (Xt @ XP).reshape(len(idx), d, d, m)
        for j in range(m):
            H[:, :, j, :, j] += diag[..., j]
        H = H.reshape(len(idx), d * m, d * m)
        step = _newton_step(H, grad)
        step = step.reshape(len(idx), d, m)
        t = np.ones(len(idx))
        new_ll = _logit_loglik(Xa @ (Ba + step), Ya)
        for _ in range(40):  # step halving where the log-likelihood fell
            worse = ~(new_ll >= ll[idx] - 1e-12 * np.abs(ll[idx]))
            if not worse.any():
                break
            t[worse] /= 2
            new_ll[worse] = _logit_loglik(Xa[worse] @ (Ba[worse] + t[worse, None, None]
                                                     * step[worse]),
                                          Ya[worse] if Ya.ndim == 3 else Ya)
        gain = new_ll - ll[idx]
        ok = new_ll >= ll[idx] - 1e-12 * np.abs(ll[idx])
        B[idx[ok]] = Ba[ok] + t[ok, None, None] * step[ok]
        ll[idx[ok]] = new_ll[ok]
        done = (~ok) | (np.abs(gain) <= tol * np.maximum(1.0, np.abs(ll[idx])))
        active[idx[done]] = False
        if not active.any():
            break
    return ll, B, it


#: The htest note of a skipped least-squares test (no residual degrees of freedom).
SATURATED_NOTE = ("the full least-squares model has as many parameters as rows (no residual "
                  "degrees of freedom for the F test): test not performed, independence assumed")


def f_table(stat, explained, left, df1, df2, n):
    """A results table of least-squares LR statistics ``stat`` with the F test's p-values
    (:func:`f_sf_logsf`); ``mi`` = stat / 2n. Rows with df1 = 0 (x adds nothing) get p = 1;
    rows with df2 <= 0 (saturated: the full model fits every row) are skipped: statistic 0,
    p = 1, independence assumed."""
    stat = np.asarray(stat, dtype=np.float64)
    df1 = np.asarray(df1, dtype=np.float64)
    df2 = np.asarray(df2, dtype=np.float64)
    ok = (df1 > 0) & (df2 > 0) & (stat > 0)
    p, log_p = np.ones(len(stat)), np.zeros(len(stat))
    if ok.any():
        p[ok], log_p[ok] = f_sf_logsf(left[ok], explained[ok], df1[ok], df2[ok])
    saturated = (df1 > 0) & (df2 <= 0)
    stat = np.where(saturated, 0.0, np.maximum(stat, 0.0))
    return results_table(len(stat), statistic=stat, df=df1, pvalue=p, log_pvalue=log_p,
                         mi=stat / (2.0 * max(n, 1)),
                         calibration=np.where(saturated, SKIPPED, ASYMPTOTIC))


#: The Gaussian branch from the data set's correlation matrix (:mod:`mbstat.ci.continuous.moments`,
#: computed once and shared) where x, y and z are continuous and the fit well posed; False
#: reads the rows for every test (the former path, kept for comparison).
USE_MOMENTS = True


def _gaussian_from_moments(ds, xs, y, z, n):
    """The Gaussian branch's statistics and ranks from the correlations of [y, z, x] (the
    cross-products of the normal equations, in correlation units): n log(rss0 / rss1) with
    rss1 / rss0 = 1 - s_xy' S_xx^-1 s_xy / s_yy, S the residual correlations of [y, x] given
    z (a Schur complement); returns (statistics, ranks, rss1 / rss0, 1 - rss1 / rss0, df2),
    df2 = n - 1 - |z| - ranks. None where a column is discrete or constant, the data keep
    missing cells, or a pivot of z or x, y's residual given z or given (z, x) is below
    :data:`~mbstat.ci.continuous.moments.WELL_POSED` (the rows answer there, with the rank rules)."""

    xcols = sorted({j for xk in xs for j in xk})
    cols = [y, *z, *xcols]
    if ds.missing is not None or any(is_discrete(ds, j) for j in cols) or \
            len(set(cols)) < len(cols):
        return None
    mom = column_moments(ds)
    if mom.n != n or np.any(mom.unit[cols] == 0):
        return None
    store, slot = mom.rows(cols)
    R = store[slot[cols]][:, cols]
    m = len(z)
    w = [0, *range(m + 1, len(cols))]  # y, then the candidates' columns
    S = R[np.ix_(w, w)]
    if m:
        zz = R[1:m + 1, 1:m + 1]
        try:
            L = np.linalg.cholesky(zz)
        except np.linalg.LinAlgError:
            return None
        if np.min(np.diag(L)) ** 2 < WELL_POSED:
            return None
        half = np.linalg.solve(L, R[1:m + 1][:, w])
        S = S - half.T @ half
    if S[0, 0] < WELL_POSED:
        return None
    where = {j: i + 1 for i, j in enumerate(xcols)}
    stat, lefts, gains = (np.zeros(len(xs)) for _ in range(3))
    for c, xk in enumerate(xs):  # one small solve per candidate (its own columns)
        idx = [where[j] for j in xk]
        try:
            Lx = np.linalg.cholesky(S[np.ix_(idx, idx)])
        except np.linalg.LinAlgError:
            return None
        if np.min(np.diag(Lx)) ** 2 < WELL_POSED:
            return None
        u = np.linalg.solve(Lx, S[idx, 0])
        gains[c] = float(u @ u) / S[0, 0]
        lefts[c] = 1.0 - gains[c]
        if lefts[c] < WELL_POSED:
            return None
        stat[c] = -n * np.log(lefts[c])
    ranks = np.array([len(xk) for xk in xs], dtype=np.float64)
    return stat, ranks, lefts, gains, n - 1.0 - m - ranks


class RegressionLR(PermutableTest):
    """Regression likelihood-ratio test (MXM's testIndReg / testIndLogistic /
    testIndMultinom): y's regression on z with and without x.

    Parameters
    ----------
    model : {"auto", "gaussian", "logistic", "multinomial"}
        The regression of y: "auto" (default) is Gaussian least squares for a continuous y,
        logistic for a discrete y of 2 levels and multinomial logistic above.
    calibration, B, seed
        The parametric null (default: the F law of the least-squares LR, exact under
        Gaussian errors; the chi-square of the logistic models' LR) or permutations
        (:class:`~mbstat.ci.continuous._design.PermutableTest`).

    Assumptions: the regression model of y given z is correctly specified (linear predictor
    in the continuous columns and the dummies; Gaussian errors of constant variance for a
    continuous y). x and z may be of any kinds and x a set of variables. The least-squares
    p-value is exact at any n with residual degrees of freedom (n > rank of [1, z, x];
    skipped otherwise); the logistic models' chi-square holds for large n relative to the
    parameters (events per parameter); not symmetric in x and y.
    """

    name = "reg-lr"
    method = "Regression likelihood-ratio test"
    statistic_name = "LR"
    kind = "mixed"
    joint_x = True
    symmetric = False
    own_arguments = ("model",)
    notes = {**NOTES, PERMUTATION: PERMUTATION_NOTE, SKIPPED: SATURATED_NOTE}

    def __init__(self, model="auto", calibration="asymptotic", B=1000, seed=None):
        super().__init__(calibration, B, seed)
        self.model = v.check_choice("model", model, MODELS)

    def check(self, tester, columns) -> None:
        pass  # any kinds

    def _model(self, dataset, y) -> str:
        if self.model != "auto":
            if self.model == "gaussian" and is_discrete(dataset, y):
                dataset.require_numeric([y], f"{self.name} (model='gaussian')")
            if self.model != "gaussian" and not is_discrete(dataset, y):
                raise ValueError(f"test {self.name!r} with model={self.model!r} needs a "
                                 f"discrete y; {dataset.names[y]!r} is continuous")
            return self.model
        if not is_discrete(dataset, y):
            return "gaussian"
        return "logistic" if dataset.level_counts[y] <= 2 else "multinomial"

    def asymptotic(self, tester, xs, y, z):
        """The results table: F p-values of the least-squares LR, chi-square ones of the
        logistic models' LR."""
        ds = tester.dataset
        n = tester.n
        model = self._model(ds, y)
        if model == "gaussian" and USE_MOMENTS:
            fast = _gaussian_from_moments(ds, xs, y, z, n)
            if fast is not None:
                stat, ranks, lefts, gains, df2 = fast
                return f_table(stat, gains, lefts, ranks, df2, n)
        Qz = _orthonormal(_unit(np.column_stack([np.ones(n), block(ds, z)])))
        # each candidate's columns with z partialled out, as an orthonormal basis
        bases = []
        for xk in xs:  # one small projection per candidate (its own columns)
            X = _unit(block(ds, xk))
            bases.append(_orthonormal(X - Qz @ (Qz.T @ X)))
        ranks = np.array([b.shape[1] for b in bases], dtype=np.float64)
        if model == "gaussian":
            yv = column_values(ds, [y])[:, 0]
            e = yv - Qz @ (Qz.T @ yv)
            rss0 = float(e @ e)
            # both sums of squares directly (not one as rss0 minus the other): the F
            # p-value's two tails need rss1 / rss0 and explained / rss0 to full precision
            coefs = [b.T @ e for b in bases]  # each basis' projection of e, once
            explained = np.array([float(np.sum(c ** 2)) for c in coefs])
            rss1 = np.array([float(np.sum((e - b @ c) ** 2)) for b, c in zip(bases, coefs)])
            with np.errstate(divide="ignore", invalid="ignore"):
                stat = np.where(ranks > 0, n * (np.log(rss0) - np.log(rss1)), 0.0)
                left, gain = rss1 / rss0, explained / rss0
            stat[np.isnan(stat)] = 0.0
            df2 = n - Qz.shape[1] - ranks
            return f_table(stat, gain, left, ranks, df2, n)
        codes = ds.codes[:, y].astype(np.intp)
        observed = np.flatnonzero(np.bincount(codes, minlength=ds.level_counts[y]))
        Y = (codes[:, None] == observed[None, :]).astype(np.float64)
        m = Y.shape[1] - 1
        if m < 1:  # y constant: nothing to explain
            return chi2_table(np.zeros(len(xs)), ranks * 0, n)
        ll0, B0, _ = fit_logit(Qz[None], Y)
        stat = np.zeros(len(xs))
        for r in np.unique(ranks).astype(int):  # candidates of r columns, fitted together
            pos = np.flatnonzero(ranks == r)
            if r == 0:
                continue
            X = np.stack([np.column_stack([Qz, bases[i]]) for i in pos])
            start = np.concatenate([np.broadcast_to(B0, (len(pos),) + B0.shape[1:]),
                                    np.zeros((len(pos), r, m))], axis=1)
            ll1, _, _ = fit_logit(X, Y, start)
            stat[pos] = 2.0 * (ll1 - ll0[0])
        return chi2_table(stat, ranks * m, n)
