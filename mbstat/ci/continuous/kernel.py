"""RCoT: the randomized conditional correlation test (Strobl, Zhang & Visweswaran 2019,
J. Causal Inference 7, "Approximate kernel-based conditional independence tests for fast
non-parametric causal discovery", Algorithm 2 and the R package RCIT's ``RCoT``).

x, y and z are standardized and mapped to random Fourier features of the Gaussian kernel
(Rahimi & Recht 2007; 5 for x and y, for z 100 as RCIT up to 200 rows and n / 2
above, at most 1,000; bandwidth the median distance among the first 500 rows, as RCIT,
for z's features times n^(-1/(d_z + 4)), Scott's rate); the features of x and y are
residualized on those of z by least squares (RCIT: ridge 1e-10), and the statistic is
``n ||C_xy.z||_F^2``, the squared Frobenius norm of the residual cross-covariance. Under
conditional independence (and when z's features capture E[f(x) | z] and E[f(y) | z]) it
is a weighted sum of chi-square(1) variables, weights the eigenvalues of the covariance of
the products of residual features, each product divided by sqrt(1 - h_ii), h_ii the
leverage of row i on z's features (unbiased under homoscedastic errors, as HC2; RCIT
does not correct); the p-value is from the Hall-Buckley-Eagleson three-moment
approximation (Buckley & Eagleson 1988; RCIT's ``approx="hbe"``), or, with
``calibration="permutation"``, from B permutations of the rows of x's residual features
(RCIT's ``approx="perm"``).

Cost O(n (f_z^2 + K f^2)) for K candidates: suited to large n, where kernel tests of
O(n^2) or O(n^3) are not.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np

from ... import _validation as v
from ..chi2 import chi2_sf_logsf
from ..protocol import CITest
from ..result import ASYMPTOTIC, NOTES, PERMUTATION, results_table

__all__ = ["RCoT", "hbe_sf_logsf"]

#: The most random features of z that ``num_f="auto"`` takes (cost O(n num_f^2) per test).
MAX_FEATURES = 1000


#: The warning where ``num_f="auto"`` stops growing: z's features then miss more of
#: E[f(x) | z] than the statistic's scale allows as n grows (#31: non-linear nulls at
#: 5,000 rows, 7.3% [4.9, 10.9] of 300 rejected at 0.05 with 1,000 features and z's
#: shrunk bandwidth; 18% [11.7, 26.7] of 100 before it, #31).
CAPPED_FEATURES = ("rcot: {n} rows, num_f='auto' capped at {cap} random features of z; where "
                   "x or y depends on z non-linearly, the features' misfit of E[f(x) | z] "
                   "makes the test liberal as n grows (7% of such nulls rejected at 0.05 "
                   "with 5,000 rows). Pass num_f= up to n / 2 (cost O(n num_f^2) per test), "
                   "or subsample the rows")


def auto_features(n: int) -> int:
    """``num_f="auto"``: max(100, n / 2), at most :data:`MAX_FEATURES`."""
    return int(min(max(100, n // 2), MAX_FEATURES))


#: MASS::ginv's tolerance (sqrt of the double epsilon), relative to the largest eigenvalue.
_GINV_TOL = float(np.sqrt(np.finfo(np.float64).eps))


def hbe_sf_logsf(weights, x):
    """P(sum_i w_i chi2_1 > x) by the Hall-Buckley-Eagleson approximation (a chi-square
    matching the first three cumulants), and its log; weights (k, m), x (k,)."""
    w = np.asarray(weights, dtype=np.float64)
    k1 = w.sum(axis=-1)
    k2 = 2.0 * (w ** 2).sum(axis=-1)
    k3 = 8.0 * (w ** 3).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = 8.0 * k2 ** 3 / k3 ** 2
        q = np.sqrt(2.0 * nu) * (np.asarray(x) - k1) / np.sqrt(k2) + nu
    bad = ~np.isfinite(q) | ~np.isfinite(nu) | (nu <= 0)
    q = np.where(bad, 0.0, np.maximum(q, 0.0))
    nu = np.where(bad, 1.0, nu)
    p, log_p = chi2_sf_logsf(np.ascontiguousarray(q), np.ascontiguousarray(nu))
    return np.where(bad, 1.0, p), np.where(bad, 0.0, log_p)


def _standardize(M):
    M = np.asarray(M, dtype=np.float64)
    sd = M.std(axis=0, ddof=1)
    return (M - M.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _seed_words(values) -> int:
    return zlib.crc32(np.ascontiguousarray(values).tobytes())


class RCoT(CITest):
    """Randomized conditional correlation test (Strobl et al. 2019), random Fourier
    features of the Gaussian kernel.

    Parameters
    ----------
    num_f : int or "auto"
        Random features of z: "auto" (default) ``max(100, n / 2)`` up to
        :data:`MAX_FEATURES` (100 up to 200 rows, as RCIT; 1,000 from 2,000 rows). The
        features must absorb E[f(x) | z] and E[f(y) | z]: the statistic is n times a
        squared covariance, so their misfit must vanish faster than n^(-1/2). Their span is
        set by the bandwidth more than by their count: with RCIT's median bandwidth the
        kept directions (eigenvalues of their Gram matrix above sqrt(eps) of the largest)
        were about 10 at any n and num_f (one z), and non-linear nulls (x = z^2 + e, y =
        cos(2 z) + e; ``benchmarks/level_audit.py``) were rejected 6.2% [5.5, 6.9] of
        4,000 at 200 rows and 9.4% [7.7, 11.4] of 1,000 at 2,000 (26 of 100 with 100 features);
        the bandwidth shrunk by n^(-1/(d_z + 4)) (Scott 1992's rate, the median of a
        standard normal pair's distance being near Scott's unit) spans 17 at 200 rows and
        about 30 at 2,000, and with the leverage correction of the weights (without it,
        Gaussian nulls at 200 rows were rejected 6.10% [5.13, 7.24] of 2,000) the level is
        4.97% [4.34, 5.69] of 4,000 non-linear and 4.80% [3.95, 5.83] of 2,000 Gaussian
        nulls at 200 rows, 5.90% [4.60, 7.54] of 1,000 non-linear nulls at 2,000 rows. Cost
        O(n num_f^2) per test.
    num_f2 : int
        Random features of x and of y (default 5, as RCIT).
    calibration : {"asymptotic", "permutation"}
        Hall-Buckley-Eagleson approximation of the weighted chi-square null (default) or B
        permutations of x's residual features.
    B : int
        Permutations (default 1000).
    seed : int
        Seed of the random features and permutations (default 0), mixed with the contents
        of the test's columns (the same data give the same p-value in any order).

    Assumptions: numeric x, y, z; any (non-linear, non-Gaussian) dependence of x on y given
    z that the Gaussian kernel's features of x and y reveal; the features of z must be rich
    enough to absorb E[f(x) | z] (the level depends on it: measured in
    vignettes/mixed_tests.py). Rows i.i.d.; x is one variable.
    """

    name = "rcot"
    method = "Randomized conditional correlation test (RCoT)"
    statistic_name = "Sta"
    kind = "continuous"
    joint_x = False
    notes = {**NOTES, PERMUTATION: "p-value from permutations of the rows of x's residual "
                                   "random features (Monte Carlo)"}

    def __init__(self, num_f="auto", num_f2=5, calibration="asymptotic", B=1000, seed=None):
        self.num_f = num_f if isinstance(num_f, str) and num_f == "auto" else \
            v.check_int("num_f", num_f, low=1)
        self.num_f2 = v.check_int("num_f2", num_f2, low=1)
        self.calibration = v.check_choice("calibration", calibration,
                                          ("asymptotic", "permutation"))
        self.B = v.check_int("B", B, low=1)
        self.seed = v.check_content_seed(seed)

    def __repr__(self) -> str:
        return (f"RCoT(num_f={self.num_f!r}, num_f2={self.num_f2!r}, "
                f"calibration={self.calibration!r}, B={self.B!r}, seed={self.seed!r})")

    def check(self, tester, columns) -> None:
        tester.dataset.require_numeric(columns, self.name)

    def features(self, M, num, shrink=False):
        """Standardized random Fourier features (n, num) of the columns of M (n, d);
        ``shrink``: bandwidth the median distance times n^(-1/(d + 4)) (z's features)."""
        M = _standardize(M)
        rng = np.random.default_rng([self.seed, _seed_words(M)])
        head = M[:500]
        diff = np.sqrt(((head[:, None, :] - head[None, :, :]) ** 2).sum(axis=2))
        sigma = np.median(diff[np.triu_indices(len(head), 1)]) if len(head) > 1 else 1.0
        sigma = sigma if np.isfinite(sigma) and sigma > 0 else 1.0
        if shrink:  # Scott's rate (Scott 1992, normal reference rule): the span grows with n
            sigma *= len(M) ** (-1.0 / (M.shape[1] + 4))
        W = rng.standard_normal((M.shape[1], num)) / sigma
        b = rng.uniform(0.0, 2.0 * np.pi, num)
        return _standardize(np.sqrt(2.0) * np.cos(M @ W + b))

    def batch(self, tester, xs, y, z):
        if any(len(xk) != 1 for xk in xs):
            raise ValueError("test 'rcot' takes single variables as x, not sets")
        values = tester.dataset.numeric()
        n = tester.n
        f = self.num_f2
        fy = self.features(values[:, [y]], f)
        fx = np.concatenate([self.features(values[:, [xk[0]]], f) for xk in xs], axis=1)
        if z:
            # least squares on z's features, as RCIT's ginv(Czz + 1e-10 I): directions of
            # Czz below sqrt(eps) of its largest eigenvalue (MASS::ginv's tol) dropped;
            # an orthonormal basis of the rest from Czz's eigenvectors (O(n f^2) in one
            # product, where an SVD of the features costs several times more)
            num = auto_features(n) if self.num_f == "auto" else self.num_f
            if self.num_f == "auto" and n // 2 > MAX_FEATURES:
                warnings.warn(CAPPED_FEATURES.format(n=n, cap=MAX_FEATURES), RuntimeWarning,
                              stacklevel=2)
            fz = self.features(values[:, list(z)], num, shrink=True)
            w, V = np.linalg.eigh(fz.T @ fz)
            keep = w > _GINV_TOL * w[-1]
            q = fz @ (V[:, keep] / np.sqrt(w[keep]))
            rx = fx - q @ (q.T @ fx)
            ry = fy - q @ (q.T @ fy)
            # 1 - h_ii, the residual-maker's diagonal: E[rx_i^2 ry_i^2] = m_ii^2 s_x^2 s_y^2
            # where Var(sum_i rx_i ry_i) = sum_i m_ii s_x^2 s_y^2 (homoscedastic errors)
            m = np.clip(1.0 - (q ** 2).sum(axis=1), _GINV_TOL, None)
        else:
            rx, ry = fx, fy
            m = None
        k = len(xs)
        rx3 = rx.reshape(n, k, f)
        cxy = np.einsum("nka,nb->kab", rx3, ry) / (n - 1)
        stat = n * (cxy ** 2).sum(axis=(1, 2))
        if self.calibration == "asymptotic":
            prods = (rx3[:, :, :, None] * ry[:, None, None, :]).reshape(n, k, f * f)
            if m is not None:  # leverage-corrected products (as HC2, MacKinnon & White 1985)
                prods = prods / np.sqrt(m)[:, None, None]
            cov = np.einsum("nka,nkb->kab", prods, prods) / n
            weights = np.clip(np.linalg.eigvalsh(cov), 0.0, None)
            p, log_p = hbe_sf_logsf(weights, stat)
            calibration = ASYMPTOTIC
        else:
            rng = np.random.default_rng([self.seed, _seed_words(rx), _seed_words(ry)])
            exceed = np.zeros(k)
            for _ in range(self.B):  # permutations of the rows of x's residual features
                perm = rng.permutation(n)
                cb = np.einsum("nka,nb->kab", rx3[perm], ry) / (n - 1)
                exceed += n * (cb ** 2).sum(axis=(1, 2)) >= stat
            p = (1.0 + exceed) / (self.B + 1.0)
            log_p = np.log(p)
            calibration = PERMUTATION
        return results_table(k, statistic=stat, df=np.nan, pvalue=p, log_pvalue=log_p,
                             mi=np.nan, calibration=calibration)
