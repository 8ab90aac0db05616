"""Rank-based partial correlation tests, for monotone non-Gaussian relations: Spearman's
and the normal-scores (nonparanormal) test.

Every numeric column is replaced by its ranks (average ranks for ties) and Fisher's z test
of zero partial correlation runs on them (the rank partial correlation of Kendall 1942):
``z = sqrt((n - |z| - 3) / 1.06) atanh(r_s)``, two-sided normal p-value, the variance
1.06 / (n - 3) of atanh of Spearman's r under independence being that of Fieller,
Hartley & Pearson (1957, Biometrika 44), where Pearson's is 1 / (n - 3).

Given a non-empty z, Pearson's partial correlation of the ranks is zero under conditional
independence only when the ranks of x and y are linear in those of z, which fails even
for Gaussian data (x = z + e): that reading (``Spearman.latent_given_z = False``, as
ppcor's ``method="spearman"``) rejected 7.4% [5.4, 10.0] of 500 Gaussian nulls at 2,000
rows, and more as n grows. Given z, ``spearman`` therefore tests the partial correlation
of the latent Gaussian correlations Sigma = 2 sin(pi r_s / 6) of a Gaussian copula model
(Kruskal 1958; Harris & Drton 2013, JMLR 14, the "Spearman" rank PC algorithm), which is
zero under conditional independence in that model whatever the monotone marginal
transformations, with the variance of its atanh from its empirical influence function
(Spearman's rho is a U-statistic: Hoeffding 1948; the delta method in full through the
sine, the inverse of Sigma, the partial correlation and atanh), not 1 / n: (pi / 3)^2 / n for independent columns, other values
when x and y depend on z. An empty z keeps Fieller's test of r_s = 0 (no model needed).
The ``normal-scores`` test replaces each column by its van der Waerden scores
``Phi^-1(rank / (n + 1))`` instead, estimates of the latent Gaussian variables of the same
(nonparanormal) model (Liu, Lafferty & Wasserman 2009, JMLR 10; Harris & Drton 2013),
and runs Fisher's z on them (variance 1 / (n - |z| - 3)).
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np
from scipy import special, stats

from ...data import Dataset
from ..result import SKIPPED, as_matrix
from ._design import PermutableTest
from .gaussian import FisherZ, fisher_rescale
from .moments import ColumnMoments, column_moments

__all__ = ["FIELLER", "NormalScores", "Spearman"]

#: Fieller, Hartley & Pearson's (1957) variance factor of atanh(Spearman's r).
FIELLER = 1.06

_LOCK = threading.Lock()
_RANKED = weakref.WeakKeyDictionary()  # dataset -> {normal_scores: ranked Dataset}


class _Ranked:
    """The tester seen through ranks: what FisherZ reads (``dataset``, ``n``)."""

    def __init__(self, tester, dataset):
        self.dataset, self.n, self._tester = dataset, tester.n, tester

    def __getattr__(self, name):  # anything else FisherZ may read comes from the tester
        return getattr(self._tester, name)


def ranked_dataset(dataset, normal_scores: bool = False):
    """The Dataset with every column replaced by the ranks of its numeric values, or by
    their van der Waerden scores Phi^-1(rank / (n + 1)) (all continuous); missing values
    (NaN) stay missing."""

    values = np.asarray(dataset.numeric(), dtype=np.float64)
    ranks = stats.rankdata(values, axis=0, nan_policy="omit") if np.isnan(values).any() \
        else stats.rankdata(values, axis=0)
    if normal_scores:
        counts = (~np.isnan(values)).sum(axis=0)
        ranks = special.ndtri(ranks / (counts + 1.0))
    p = dataset.n_cols
    return Dataset(codes=np.zeros(dataset.codes.shape, dtype=np.uint8, order="F"),
                   levels=((),) * p, names=dataset.names, kinds=("continuous",) * p,
                   values=np.asfortranarray(ranks, dtype=np.float64))


class Spearman(PermutableTest):
    """Spearman's rank correlation test: Fieller's z for an empty z; given z, the latent
    partial correlation of a Gaussian copula from Spearman's correlations (Harris & Drton
    2013) with an influence-function variance (module docstring).

    Assumptions: an empty z, none beyond i.i.d. rows (a test of r_s = 0, i.e. of no
    monotone association; variance 1.06 / (n - 3)); given z, a Gaussian copula
    (nonparanormal) model: x, y and z are unknown monotone transformations of jointly
    Gaussian variables. Numeric columns (discrete ones with numeric levels are ranked by
    their values, ties averaged).

    ``calibration``, ``B`` and ``seed``: the normal approximation (default) or
    permutations (:class:`~mbstat.ci.continuous._design.PermutableTest`; exact for an empty z).

    The ranks are computed once per data set and shared by every test: a test costs
    O(|z|^3) for an empty z (the shared correlation matrix, :mod:`mbstat.ci.continuous.moments`) and
    O(n |z|^2) given z, with no sort: the grades, each column's tail positions and each
    pair's influence vector are per-data-set statistics (:class:`InfluenceMoments`; a
    constant column, or a test over rows with missing values, reads its rows as before).
    """

    name = "spearman"
    method = "Spearman's rank correlation test (latent partial correlation given z)"
    statistic_name = "z"
    kind = "continuous"
    joint_x = False

    def check(self, tester, columns) -> None:  # ranks need an order only: ordered categories pass
        tester.dataset.require_numeric(columns, self.name, ordinal=True)

    #: Whether columns become normal scores (else ranks), and the variance factor of
    #: atanh of their correlation.
    normal_scores = False
    variance_factor = FIELLER

    def ranks(self, tester):
        """The tester's data ranked (or as normal scores): computed once per data set and
        kept while it lives, so that every tester of the data set (each ``ci_test`` call,
        each learner of a search) shares the ranks and their correlation matrix."""
        ds = tester.dataset
        held = self.__dict__.get("_held")
        if held is not None and held[0] is ds:
            return held[1]
        with _LOCK:
            per = _RANKED.get(ds)
            if per is None:
                per = _RANKED[ds] = {}
        ranked = per.get(self.normal_scores)
        if ranked is None:
            ranked = per[self.normal_scores] = ranked_dataset(ds, self.normal_scores)
        self._held = (ds, ranked)
        return ranked

    #: True: given z, every test reads the rows (:func:`latent_partial`), not the
    #: per-data-set statistics of :class:`InfluenceMoments` (kept for comparison).
    _from_rows = False

    #: Given z, the latent partial correlation of Harris & Drton (2013) with its sandwich
    #: variance (False: Fisher's z on the ranks' partial correlation, the former reading,
    #: kept for comparison: liberal given z, 7-8% at 2,000 Gaussian rows).
    latent_given_z = True

    def max_conditioning(self, n: int):
        """n - 4, as :class:`~mbstat.ci.continuous.gaussian.FisherZ` whose correlations it
        reads."""
        return max(n - 4, 0)

    def asymptotic(self, tester, xs, y, z):
        """The results table with normal p-values."""
        ranked = self.ranks(tester)
        view = _Ranked(tester, ranked)
        fisher = self.__dict__.get("_fisher")
        if fisher is None:
            fisher = self._fisher = FisherZ()
            fisher.name = self.name  # its messages name this test
        table = fisher.batch(view, xs, y, z)
        out = as_matrix(table)
        if z and self.latent_given_z and not self.normal_scores:
            values = ranked.values
            todo = [t for t in range(len(xs)) if out[t, 5] != SKIPPED]
            n_rows = np.full(len(xs), float(len(values)))
            rho, kappa = np.full(len(xs), np.nan), np.full(len(xs), np.nan)
            fast = []
            if not self._from_rows and len(values) > len(z) + 4:
                grades = influence_moments(ranked)
                fast = [t for t in todo if grades.usable([xs[t][0], y, *z])
                        and not ranked.missing_columns[[xs[t][0], y, *z]].any()]
                if fast:  # the per-data-set statistics (InfluenceMoments)
                    rho[fast], kappa[fast] = grades.latent_batch(y, z, [xs[t][0] for t in fast])
            chosen = set(fast)
            for t in todo:
                if t in chosen:
                    continue
                sub = values[:, [xs[t][0], y, *z]]  # the test's complete rows, ranked
                keep = ~np.isnan(sub).any(axis=1)
                if not keep.all():
                    sub = stats.rankdata(sub[keep], axis=0)
                n_rows[t] = len(sub)
                latent = latent_partial(sub) if len(sub) > len(z) + 4 else None
                if latent is not None:
                    rho[t], kappa[t] = latent
            done = np.array([t for t in todo if not np.isnan(kappa[t])], dtype=np.intp)
            if len(done):
                r, kap = rho[done], kappa[done]
                stat = np.arctanh(r) * np.sqrt((n_rows[done] - len(z) - 3) / kap)
                log_p = np.minimum(stats.norm.logsf(np.abs(stat)) + np.log(2.0), 0.0)
                out[done, 0], out[done, 2], out[done, 3] = stat, np.exp(log_p), log_p
                out[done, 4] = -0.5 * np.log1p(-r * r)  # the latent Gaussian's
            for t in todo:
                if np.isnan(kappa[t]):
                    fisher_rescale(out[t:t + 1], 1.0 / np.sqrt(self.variance_factor))
        elif self.variance_factor != 1.0:
            fisher_rescale(out, 1.0 / np.sqrt(self.variance_factor))
        return table


def _tail_ends(col, order):
    """For each row i, how many rows rank strictly above it and how many at least as high
    (ties included) in ``order`` (the rows by decreasing rank): the tail sums of the
    influence functions weight the tied rows, row i itself among them, by one half (the
    mid-distribution function F(x-) + P(x) / 2), which keeps them odd under reversing a
    column's order (ranks n + 1 - R): with the tied rows counted whole, the statistic moved
    by about 1 / n when a variable's sign was flipped."""
    key = -col[order]
    return (np.searchsorted(key, -col, side="left"), np.searchsorted(key, -col, side="right"))


def spearman_influence(R) -> tuple:
    """Spearman's correlations (p, p) of the columns of the ranks R (n, p) and their
    empirical influence functions (n, p, p): for columns a, b with centred grades
    u = (R_a - (n + 1) / 2) / n, v likewise,
    IF_i = 12 [u_i v_i + mean_j w_a,ij v_j + mean_j w_b,ij u_j] - 3 r, w_a,ij = 1{R_a,j > R_a,i}
    + 1{R_a,j = R_a,i} / 2 (:func:`_tail_ends`)
    (the von Mises derivative of 12 E[(F_a(A) - 1/2)(F_b(B) - 1/2)]; Hoeffding 1948),
    centred over the rows."""
    n, p = R.shape
    U = (R - (n + 1.0) / 2.0) / n
    r = np.corrcoef(R, rowvar=False)
    # tail[a][:, b]: mean over the rows j of u_b,j weighted 1{R_a,j > R_a,i} + 1{= R_a,i}/2
    tail = np.empty((p, n, p))
    for a in range(p):
        order = np.argsort(-R[:, a], kind="stable")
        cum = np.vstack([np.zeros((1, p)), np.cumsum(U[order], axis=0)])
        above, upto = _tail_ends(R[:, a], order)
        tail[a] = (cum[above] + cum[upto]) / (2.0 * n)
    IF = 12.0 * (U[:, :, None] * U[:, None, :] + tail.transpose(1, 0, 2)
                 + tail.transpose(1, 2, 0)) - 3.0 * r
    IF -= IF.mean(axis=0)
    return r, IF


def latent_partial(R):
    """(rho, kappa): the latent partial correlation of columns 0 and 1 of the ranks R (n,
    2 + |z|) given the others (Harris & Drton 2013, section 3: the latent correlations
    Sigma = 2 sin(pi r_s / 6) of a Gaussian copula, Kruskal 1958, and their partial
    correlation) and its variance factor kappa = mean(IF^2), IF atanh(rho)'s empirical
    influence function (the delta method through the sine, the inverse of Sigma, rho =
    -W_01 / sqrt(W_00 W_11) with all its terms, and atanh; Spearman's rho's influence
    from :func:`spearman_influence`; van der Vaart 1998, Asymptotic Statistics, Theorem
    3.1 and section 20.1): atanh(rho) has variance about kappa / n (kappa = (pi / 3)^2 =
    1.097 for independent columns, more when x and y depend on z: 1.2-1.3 for x = z + e,
    y = z + e; 1.4-1.5 at partial rho 0.9), matching the jackknife and simulation at
    partial rho 0, 0.5 and 0.9. None where Sigma is not positive definite or kappa is not
    positive."""
    n, p = R.shape
    r, IF = spearman_influence(R)
    S = 2.0 * np.sin(np.pi * r / 6.0)
    np.fill_diagonal(S, 1.0)
    try:
        np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        return None
    W = np.linalg.inv(S)
    s = np.sqrt(W[0, 0] * W[1, 1])
    rho = float(np.clip(-W[0, 1] / s, -1 + 1e-15, 1 - 1e-15))
    dS = (np.pi / 3.0) * np.cos(np.pi * r / 6.0) * IF  # (n, p, p)
    dS[:, np.arange(p), np.arange(p)] = 0.0  # the diagonal stays 1
    dW = -np.einsum("ka,iab,bl->ikl", W, dS, W)
    # atanh(rho)'s influence function, the delta method in full: rho = -W_01 / s gives
    # d rho = -dW_01 / s - (rho / 2)(dW_00 / W_00 + dW_11 / W_11), and atanh's derivative
    # 1 / (1 - rho^2). At rho = 0 both the terms in rho and the factor vanish (the null
    # variance); away from it the first term alone overstated the sd of atanh(rho) (2.18 /
    # sqrt(n) against 1.12 simulated at partial rho 0.9, 500 rows: half the statistic)
    drho = (-dW[:, 0, 1] / s - 0.5 * rho * (dW[:, 0, 0] / W[0, 0] + dW[:, 1, 1] / W[1, 1])) \
        / (1.0 - rho * rho)
    kappa = float(np.mean(drho ** 2))
    return (rho, kappa) if kappa > 0 else None


#: The influence vectors kept per ranked data set (bytes), least recently used dropped.
INFLUENCE_CACHE = 256 * 2**20

_GRADES = weakref.WeakKeyDictionary()  # ranked dataset -> InfluenceMoments


def influence_moments(ranked) -> "InfluenceMoments":
    """The :class:`InfluenceMoments` of a ranked data set, made once and kept while it
    lives (shared by every test of a search)."""
    with _LOCK:
        hit = _GRADES.get(ranked)
        if hit is None:
            hit = _GRADES[ranked] = InfluenceMoments(ranked.values, ranked)
    return hit


class InfluenceMoments:
    """What :func:`latent_partial` reads from the rows, computed once per data set: the
    centred grades ``U = (R - (n + 1) / 2) / n`` of every column, per column the order of
    its rows and the position of each row's tail (rows ranked at least as high), and per
    pair of columns (a, b) its centred influence vector

        g_ab,i = u_a,i u_b,i + T_ab(i) + T_ba(i) - mean,   T_ab(i) = mean_j 1{R_a,j >= R_a,i} u_b,j

    (:func:`spearman_influence`'s IF = 12 g: the constant -3 r drops with the centring),
    made when a test first needs it and kept (the most recent, up to
    :data:`INFLUENCE_CACHE` bytes). A test of x and y given z then costs O(n q^2) for its
    q (q - 1) / 2 pairs (q = |z| + 2; the pairs of y and z are shared by every candidate of
    a step and every step of a search) and no sort: rho's influence function is the
    combination sum_{a<b} (W_0a W_1b + W_0b W_1a) c_ab 12 g_ab / s, c_ab = (pi / 3)
    cos(pi r_ab / 6), W the inverse of Sigma and s = sqrt(W_00 W_11), and kappa the mean
    of its square. Spearman's correlations r come from the ranks' correlation matrix
    (:mod:`mbstat.ci.continuous.moments`), shared with the test of an empty z."""

    def __init__(self, ranks: np.ndarray, dataset=None):
        ranks = np.asarray(ranks, dtype=np.float64)
        self._dataset = None if dataset is None else weakref.ref(dataset)
        self.n, self.p = ranks.shape
        self._ranks = ranks
        self.grades = np.asfortranarray((ranks - (self.n + 1.0) / 2.0) / self.n)
        self._spread = (ranks.max(axis=0) > ranks.min(axis=0) if self.n  # non-constant
                        else np.zeros(self.p, dtype=bool))
        self._tails: dict = {}
        self._pairs: OrderedDict = OrderedDict()
        self._cap = max(16, INFLUENCE_CACHE // (8 * max(self.n, 1)))
        self._lock = threading.Lock()
        self._moments = None

    def usable(self, cols) -> bool:
        """Whether no column of ``cols`` is constant (there the rows decide, as before)."""
        return bool(self._spread[list(cols)].all())

    def _tail(self, a: int):
        """(order of column a's rows by decreasing rank, each row's two tail ends in it:
        :func:`_tail_ends`)."""
        hit = self._tails.get(a)
        if hit is None:
            col = self._ranks[:, a]
            order = np.argsort(-col, kind="stable")
            hit = self._tails[a] = (order, *_tail_ends(col, order))
        return hit

    def pair(self, a: int, b: int) -> np.ndarray:
        """The centred influence vector g_ab (n,) of columns a and b (a != b)."""
        key = (a, b) if a < b else (b, a)
        hit = self._pairs.get(key)
        if hit is not None:
            return hit
        a, b = key
        u = self.grades
        n = float(self.n)
        g = u[:, a] * u[:, b]
        for (order, above, upto), col in ((self._tail(a), b), (self._tail(b), a)):
            cum = np.concatenate([[0.0], np.cumsum(u[order, col])])
            g += (cum[above] + cum[upto]) / (2.0 * n)
        g -= g.mean()
        with self._lock:
            self._pairs[key] = g
            while len(self._pairs) > self._cap:
                self._pairs.popitem(last=False)
        return g

    def correlations(self, cols) -> np.ndarray:
        """Spearman's correlations (q, q) of the columns ``cols``."""
        if self._moments is None:  # the ranked data set's own (shared with fisher_z on it)
            ds = None if self._dataset is None else self._dataset()
            self._moments = ColumnMoments(self._ranks) if ds is None else column_moments(ds)
        store, slot = self._moments.rows(cols)
        r = store[slot[list(cols)]][:, list(cols)]
        np.fill_diagonal(r, 1.0)
        return r

    def latent_batch(self, y: int, z, xs):
        """``(rho, kappa)`` arrays (k,) of :func:`latent_partial` for the candidates ``xs``
        against y given z (NaN where it gives None), from these statistics (equal to it to
        rounding): Sigma's inverses for all candidates at once, and rho's influence
        functions (n, k) as one product with the pairs of y and z shared by every
        candidate, plus each candidate's own pairs."""
        base = [int(y), *map(int, z)]
        xs = [int(x) for x in xs]
        q, k, b = len(base) + 1, len(xs), len(base)
        r = self.correlations(base + xs)  # rows: base, then the candidates
        sig = 2.0 * np.sin(np.pi * r / 6.0)
        S = np.empty((k, q, q))
        S[:, 1:, 1:] = sig[:b, :b]
        S[:, 0, 1:] = S[:, 1:, 0] = sig[b:, :b]
        S[:, np.arange(q), np.arange(q)] = 1.0
        ok = np.ones(k, dtype=bool)
        try:
            np.linalg.cholesky(S)
        except np.linalg.LinAlgError:  # find the candidates whose Sigma is not positive definite
            for t in range(k):
                try:
                    np.linalg.cholesky(S[t])
                except np.linalg.LinAlgError:
                    ok[t] = False
                    S[t] = np.eye(q)
        W = np.linalg.inv(S)
        s = np.sqrt(W[:, 0, 0] * W[:, 1, 1])
        rho = np.clip(-W[:, 0, 1] / s, -1 + 1e-15, 1 - 1e-15)
        cb = (np.pi / 3.0) * np.cos(np.pi * r / 6.0)
        C = np.empty((k, q, q))
        C[:, 1:, 1:] = cb[:b, :b]
        C[:, 0, 1:] = C[:, 1:, 0] = cb[b:, :b]
        # atanh(rho)'s influence per pair (a, b): (W_0a W_1b + W_0b W_1a) / s
        # + rho (W_0a W_0b / W_00 + W_1a W_1b / W_11), times 1 / (1 - rho^2)
        # (:func:`latent_partial`'s full delta method)
        w0, w1 = W[:, 0, :], W[:, 1, :]
        coef = ((w0[:, :, None] * w1[:, None, :] + w1[:, :, None] * w0[:, None, :])
                / s[:, None, None]
                + rho[:, None, None] * (w0[:, :, None] * w0[:, None, :] / W[:, 0, 0, None, None]
                                        + w1[:, :, None] * w1[:, None, :]
                                        / W[:, 1, 1, None, None])) \
            * C * (12.0 / (1.0 - rho * rho))[:, None, None]
        ia, ib = np.triu_indices(b, 1)  # the pairs of y and z, shared
        if len(ia):
            G = np.empty((len(ia), self.n))
            for t, (i, j) in enumerate(zip(ia.tolist(), ib.tolist())):
                G[t] = self.pair(base[i], base[j])
            # (k, n): rho's influence functions (einsum: no BLAS threads to wait for)
            drho = np.einsum("kp,pn->kn", coef[:, ia + 1, ib + 1], G)
        else:
            drho = np.zeros((k, self.n))
        scratch = np.empty(self.n)
        for t, x in enumerate(xs):  # each candidate's own pairs (x, y), (x, z_j)
            row = drho[t]
            for j, v in enumerate(base):
                row += np.multiply(self.pair(x, v), coef[t, 0, j + 1], out=scratch)
        kappa = np.einsum("ij,ij->i", drho, drho) / self.n
        bad = ~ok | ~(kappa > 0)
        rho[bad], kappa[bad] = np.nan, np.nan
        return rho, kappa


class NormalScores(Spearman):
    """Normal-scores (nonparanormal) partial correlation test: Fisher's z on the van der
    Waerden scores Phi^-1(rank / (n + 1)) of every column.

    Assumptions: a Gaussian copula (nonparanormal) model, i.e. x, y and z are unknown
    monotone transformations of jointly Gaussian variables (as ``spearman`` given z, more
    efficient there: van der Waerden scores are fully efficient at the Gaussian). Numeric
    columns (discrete ones ranked by their values, ties averaged; many ties break the
    copula model).
    """

    name = "normal-scores"
    method = "Normal-scores partial correlation test (Fisher's z on van der Waerden scores)"
    normal_scores = True
    variance_factor = 1.0
