"""Permutation moments of G2 and Pearson's X2 of one stratum, without permuting.

Permuting x within a stratum of z (y fixed) draws the stratum's r x c table from its law
with both margins fixed (the multiple hypergeometric law of Fisher's exact test, R's
``r2dtable``). The semiparametric calibration needs only the mean and variance of the
statistics under that law, which B = 100 permutations estimated at O(B N) a stratum. Here
they are computed at O(cells x support + cells x DEGREE^2) a stratum from the law's
factorial moments, products of the margins' falling factorials (x^(p) = x (x - 1) ...
(x - p + 1); a, b the row and column margins, N the stratum's rows):

    E[n_ij^(p) n_kl^(q)] = a_i^(p) a_k^(q) b_j^(p) b_l^(q) / N^(p+q)    (i != k, j != l)
    E[n_ij^(p) n_il^(q)] = a_i^(p+q) b_j^(p) b_l^(q) / N^(p+q)           (one row)

and each cell's own law, Hypergeometric(N, a_i, b_j).

* **X2** = N sum n_ij^2 / (a_i b_j) - N is quadratic in the counts: its mean
  N (r - 1)(c - 1) / (N - 1) (Haldane 1940) and variance (Dawson 1954) are exact, from the
  moments up to order 4, every sum over pairs of cells a product of sums over rows and
  columns: O(r + c).
* **G2** = 2 (T - sum f(a_i) - sum f(b_j) + f(N)), T = sum f(n_ij), f(n) = n log n. Its
  mean is exact: a sum over each cell's law. For the variance T is written sum h_ij(n_ij)
  plus a constant, h_ij(n) = f(n) - (1 + log e_ij) n (e_ij = a_i b_j / N): the part removed
  is additive in rows and columns, so its sum is fixed by the margins, and h is flat at
  e_ij, so the cells' covariances are small beside their variances. Each cell's variance
  of h is exact (its law); the covariances of distinct cells are those of g_ij, the
  polynomial of degree :data:`DEGREE` nearest to h_ij in mean square under the cell's law
  (exact where the cell can take at most DEGREE + 1 values, as in every sparse table), in
  the binomial basis C(n, p), whose pairs' moments factorize as above: O(cells DEGREE^2).
  The error of the covariances is sum over c != c' of 2 Cov(r_c, g_c') + Cov(r_c, r_c')
  (r = h - g). Under this law E[C(n_c', p) | n_c] is a polynomial of degree p in n_c for
  any two cells (label the N items by row, permute the column labels: given n_ij = n, the
  column-j labels outside row i fall uniformly on the other rows' items, the other labels
  uniformly on what is left, so a p-set of row-k items lies in cell (k, l) with
  probability (a_i - n)^(p) b_l^(p) / (a_i^(p) (N - b_j)^(p)) (k = i),
  (N - a_i - b_j + n)^(p) b_l^(p) / ((N - a_i)^(p) (N - b_j)^(p)) or
  (b_j - n)^(p) / (N - a_i)^(p) (l = j); checked by enumeration in
  ``tests/test_table_moments.py``). So r_c, orthogonal to the polynomials of its cell's
  degree d_c, has no covariance with g_c' where d_c' <= d_c, and the error is at most
  (sum_c sd(r_c))^2 - sum_c Var(r_c) + 2 sum_c sd(r_c) sum_{d_c' > d_c} sd(g_c') plus the
  rounding defect of each fit's orthogonality (:func:`_defect`) times sum_c sd(g_c). The
  smaller of that and Cauchy-Schwarz's plain 2 sum_c sd(r_c) (sd(T) + max_c sd(h_c) +
  sd(r_c)), with the rounding of the sums (bounded by their terms' magnitudes), must stay
  below :data:`TOLERANCE` of the variance. (The plain bound grows with the cells' number
  faster than the variance and refused every large sparse stratum: a 6 x 67 table of
  5,000 rows, whose variance 699.6 here and 692.8 +- 6.9 from 20,000 permutations, was
  permuted.) A cell whose
  law spans more than DEGREE + 1 values takes the lowest degree that fits its (flat) h
  within :data:`FLAT_FIT`: a large cell's high-degree coefficients in the binomial basis
  only add rounding. Where the bound still fails, a stratum with two x or two y levels
  takes G2's exact moments from its enumerated tables (at most :data:`ENUMERATE_MAX`,
  :func:`_two_line_g2`); any other is left to the permutations.
* A stratum whose statistics do not vary under the law (one row per x or per y level,
  or another point mass) adds its values as **shifts**, not moments: the calibration
  fits its law to the random part alone and subtracts the shift from the statistic.
  ``tests/test_table_moments.py`` checks the moments against exact enumeration and
  against permutations.

A cell's part (its law, E h, Var h and the projection) depends on (N, a_i, b_j) alone; the
calibration's kernels keep a cache of it per thread (:func:`cell_cache`), read back bit for
bit where the same cell comes again (in the strata of a search, 64-93% of the cells), so
that a stratum costs its sums over rows and columns. Those sums' factors x^(p+q) /
(x^(p) x^(q)) are formed once per line (:func:`_line_factors`), in the same order of
operations as before: the moments are the same bits with or without the cache.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from ._linked import Callee

__all__ = ["DEGREE", "ENUMERATE_MAX", "FLAT_FIT", "TOLERANCE", "cell_cache", "table_moments"]

#: The degree of the polynomials whose covariances stand for the cells' (h_ij above).
DEGREE = 6
#: The bound on the variance's error (projection and rounding), as a share of the
#: variance, below which the moments are used (else the stratum is permuted). The
#: Cauchy-Schwarz bound is a worst case over every function of the other cells, loose by
#: about three orders here: against exact enumeration (60 random r x 2 tables, up to 60
#: rows per row level) the error measured is below 4e-5 of the variance where the bound
#: allowed 10%. 25% keeps the strata whose bound is the size of the sampling error of a
#: variance from B = 100 permutations (14%) or less.
TOLERANCE = 0.25


@njit(cache=True, nogil=True)
def _falling(x, m):  # pragma: no cover - compiled
    """x^(m) = x (x - 1) ... (x - m + 1), 0 where x < m (integers)."""
    out = 1.0
    for t in range(m):
        out *= x - t
    return out


@njit(cache=True, nogil=True)
def _margin_pairs(m, p, q):  # pragma: no cover - compiled
    """X2's sums over one margin ``m`` (rows or columns) for the orders (p, q): (sum over
    i != k of m_i^(p) m_k^(q) / (m_i m_k), sum over i of m_i^(p+q) / m_i^2)."""
    sp = 0.0
    sq = 0.0
    spq = 0.0
    line = 0.0
    for i in range(m.shape[0]):
        x = _falling(m[i], p) / m[i]
        y = _falling(m[i], q) / m[i]
        sp += x
        sq += y
        spq += x * y
        line += _falling(m[i], p + q) / (m[i] * m[i])
    return sp * sq - spq, line


@njit(cache=True, nogil=True)
def _x2_moments(a, b, big_n):  # pragma: no cover - compiled
    """Exact (mean, variance) of X2 under the law with margins a (r,), b (c,) (all > 0)."""
    r = a.shape[0]
    c = b.shape[0]
    n = float(big_n)
    mean = n * (r - 1.0) * (c - 1.0) / (n - 1.0)
    # S = X2 + N = sum w n^2, w = N / (a b); n^2 = n^(2) + n^(1); n^4 = n^(4) + 6 n^(3)
    # + 7 n^(2) + n^(1). E[S^2] by pairs of cells: the same cell, one row, one column,
    # neither, each a product of sums over rows and columns.
    same = 0.0
    for m, coef in ((4, 1.0), (3, 6.0), (2, 7.0), (1, 1.0)):
        if big_n < m:
            continue
        sa = 0.0
        for i in range(r):
            sa += _falling(a[i], m) / (a[i] * a[i])
        sb = 0.0
        for j in range(c):
            sb += _falling(b[j], m) / (b[j] * b[j])
        same += coef * n * n / _falling(big_n, m) * sa * sb
    pairs = 0.0
    for p in range(1, 3):
        for q in range(1, 3):
            if big_n < p + q:
                continue
            k = n * n / _falling(big_n, p + q)
            two_a, a_row = _margin_pairs(a, p, q)
            two_b, b_col = _margin_pairs(b, p, q)
            pairs += k * (a_row * two_b + b_col * two_a + two_a * two_b)
    es = mean + n
    return mean, max(same + pairs - es * es, 0.0)


@njit(cache=True, nogil=True)
def _cell_law(a, b, big_n, weights):  # pragma: no cover - compiled
    """The law of one cell, Hypergeometric(N, a, b), normalized into ``weights`` over the
    part lo..lo + m - 1 of its support where the pmf exceeds 1e-17 of the mode's (the
    law is unimodal: the ratio recursions run out from the mode and stop there; what is
    cut holds less than 1e-14 of the mass); returns (lo, m)."""
    low = max(0, a + b - big_n)
    hi = min(a, b)
    mode = min(max((a + 1) * (b + 1) // (big_n + 2), low), hi)
    base = big_n - a - b
    lo = mode
    w_lo = 1.0
    w = 1.0
    for k in range(mode, low, -1):  # pmf(k - 1) / pmf(k), down to 1e-17 of the mode
        w = w * (k * (base + k + 0.0)) / ((a - k + 1.0) * (b - k + 1.0))
        if w < 1e-17:
            break
        lo = k - 1
        w_lo = w
    weights[0] = w_lo
    total = w_lo
    m = 1
    for k in range(lo, hi):  # pmf(k + 1) / pmf(k), up to 1e-17 of the mode past it
        x = weights[k - lo] * ((a - k) * (b - k + 0.0)) / ((k + 1.0) * (base + k + 1.0))
        if k >= mode and x < 1e-17:
            break
        weights[k + 1 - lo] = x
        total += x
        m += 1
    for i in range(m):
        weights[i] /= total
    return lo, m


@njit(cache=True, nogil=True)
def _solve(gram, rhs, size, beta):  # pragma: no cover - compiled
    """beta[:size] solving gram[:size, :size] beta = rhs[:size] (Gaussian elimination with
    partial pivoting, in place; a singular pivot leaves its coefficient 0)."""
    for col in range(size):
        piv = col
        for row in range(col + 1, size):
            if abs(gram[row, col]) > abs(gram[piv, col]):
                piv = row
        if piv != col:
            for k in range(size):
                gram[col, k], gram[piv, k] = gram[piv, k], gram[col, k]
            rhs[col], rhs[piv] = rhs[piv], rhs[col]
        if gram[col, col] == 0.0:
            continue
        for row in range(col + 1, size):
            f = gram[row, col] / gram[col, col]
            if f != 0.0:
                for k in range(col, size):
                    gram[row, k] -= f * gram[col, k]
                rhs[row] -= f * rhs[col]
    for col in range(size - 1, -1, -1):
        x = rhs[col]
        for k in range(col + 1, size):
            x -= gram[col, k] * beta[k]
        beta[col] = x / gram[col, col] if gram[col, col] != 0.0 else 0.0


@njit(cache=True, nogil=True)
def _binomials(x, top, out):  # pragma: no cover - compiled
    """C(x, p) for p = 0..top into ``out`` (0 where p > x)."""
    out[0] = 1.0
    for p in range(top):
        out[p + 1] = out[p] * (x - p) / (p + 1.0) if x > p else 0.0


#: p! S(k, p) (Stirling numbers of the second kind): n^k = sum_p STIRLING[k, p] C(n, p).
STIRLING = np.array([[1, 0, 0, 0, 0, 0, 0],
                     [0, 1, 0, 0, 0, 0, 0],
                     [0, 1, 2, 0, 0, 0, 0],
                     [0, 1, 6, 6, 0, 0, 0],
                     [0, 1, 14, 36, 24, 0, 0],
                     [0, 1, 30, 150, 240, 120, 0],
                     [0, 1, 62, 540, 1560, 1800, 720]], dtype=np.float64)
#: C(u, v) for u, v <= DEGREE.
PASCAL = np.array([[math.comb(u, v) for v in range(DEGREE + 1)] for u in range(DEGREE + 1)],
                  dtype=np.float64)


@njit(cache=True, nogil=True)
def _projection(lo, m, weights, values, e, sd, out, gram, rhs, beta, moments, neg,
                mono, d):  # pragma: no cover - compiled
    """The polynomial of degree ``d`` (at most min(DEGREE, m - 1)) nearest to ``values`` (a
    cell's h on lo..lo + m - 1) in mean square under the cell's law ``weights``, in the binomial
    basis: ``out[p]`` (p = 0..d), h(n) ~ sum_p out[p] C(n, p); exact (an interpolation)
    where the law has at most DEGREE + 1 points. The fit is made in t = (n - e) / sd;
    ``gram``, ``beta``, ``neg`` and ``mono`` are work space; ``rhs`` is left holding the
    residual r's E[r t^u] and ``moments`` (2 DEGREE + 1,) the law's E[t^s], for
    :func:`_defect`. Returns (d, the residual's mean square)."""
    size = d + 1
    gram[:size, :size] = 0.0
    rhs[:size] = 0.0
    moments[:] = 0.0  # sum_k w_k t_k^s
    for k in range(m):
        t = (lo + k - e) / sd
        tu = weights[k]
        for u in range(2 * size - 1):
            if u < size:
                rhs[u] += tu * values[k]
            moments[u] += tu
            tu *= t
    for u in range(size):
        for v in range(size):
            gram[u, v] = moments[u + v]
    _solve(gram, rhs, size, beta)
    residual = 0.0
    rhs[:size] = 0.0  # now E[r t^u], r the residual (0 for an exact least-squares fit)
    for k in range(m):
        t = (lo + k - e) / sd
        fit = 0.0
        tp = 1.0
        for u in range(size):
            fit += beta[u] * tp
            tp *= t
        r = values[k] - fit
        residual += weights[k] * r * r
        tu = weights[k] * r
        for u in range(size):
            rhs[u] += tu
            tu *= t
    # t^u = ((n - e) / sd)^u = sum_v C(u, v) n^v (-e)^(u - v) / sd^u; then n^v in C(n, p)
    neg[0] = 1.0  # (-e)^k
    for k in range(1, size):
        neg[k] = neg[k - 1] * -e
    mono[:size] = 0.0
    scale = 1.0
    for u in range(size):
        for v in range(u + 1):
            mono[v] += beta[u] * scale * PASCAL[u, v] * neg[u - v]
        scale /= sd
    for p in range(size):
        out[p] = 0.0
    for v in range(size):
        for p in range(v + 1):
            out[p] += mono[v] * STIRLING[v, p]
    return d, residual


@njit(cache=True, nogil=True)
def _defect(moments, gram, v, x, d):  # pragma: no cover - compiled
    """The sd of the projection, onto the polynomials of degree ``d``, of the residual left
    by :func:`_projection` (``v``: its E[r t^u], ``moments`` the law's sums of w t^s, as
    that call left them): sqrt(v' M^-1 v), M the law's Gram matrix in t. 0 for an exact
    least-squares fit; rounding leaves it tiny. ``gram``, ``x``: work space."""
    size = d + 1
    for u in range(size):
        for w in range(size):
            gram[u, w] = moments[u + w]
    rhs = v[:size].copy()
    _solve(gram, rhs, size, x)
    out = 0.0
    for u in range(size):
        out += v[u] * x[u]
    return math.sqrt(max(out, 0.0))


@njit(cache=True, nogil=True)
def _line_factors(margins, size, sig):  # pragma: no cover - compiled
    """sig[i, p, q] = x^(p+q) / (x^(p) x^(q)) of each line's margin x = ``margins[i]`` for
    p, q < ``size`` where x >= p + q (else left as it is: never read), as the product over
    t < q of (x - p - t) / (x - t), one factor a step."""
    for i in range(margins.shape[0]):
        x = margins[i]
        for p in range(size):
            s = 1.0
            sig[i, p, 0] = 1.0
            for q in range(1, size):
                if x < p + q:
                    break
                t = q - 1
                s *= (x - p - t) / (x - t + 0.0)
                sig[i, p, q] = s


@njit(cache=True, nogil=True)
def _line_pairs(lines, within, margins, sig, p, q):  # pragma: no cover - compiled
    """The pairs of distinct cells within one line (a row or a column), for the degrees
    (p, q): (sum of the lines' products of sums, its magnitude, sum over lines of
    sig(p, q) (product - ``within``, the line's cells' own products)), sig =
    x^(p+q) / (x^(p) x^(q)) of the line's margin x (0 where x < p + q; ``sig`` from
    :func:`_line_factors`)."""
    sq = 0.0
    magnitude = 0.0
    same = 0.0
    for i in range(lines.shape[0]):
        x = lines[i, p] * lines[i, q]
        sq += x
        magnitude += abs(x)
        if margins[i] < p + q:
            continue
        same += sig[i, p, q] * (x - within[i, p, q])
    return sq, magnitude, same


#: A cell whose law spans more than DEGREE + 1 values (no interpolation) takes the lowest
#: degree whose projection's residual sd is at most this (G2 / 2's units): a large cell's
#: h is flat and nearly quadratic, and its degree-DEGREE coefficients in the binomial
#: basis (C(n, p) ~ n^p / p!) would only add rounding (the bound's first term) that
#: refuses the stratum; the residual kept is within the bound's second term.
FLAT_FIT = 1e-6
#: The cells' cache: 2**CACHE_BITS slots (direct-mapped) of what :func:`_cell` finds.
CACHE_BITS = 15
#: A cell's entry: E h + (1 + log e) e, Var h, the projection's residual sd, its degree
#: d (-1: a point mass, no projection), the residual's own projection's sd (its rounding
#: defect: 0 for an exact least-squares fit), then its DEGREE + 1 coefficients.
CELL_WIDTH = 5 + DEGREE + 1
#: Margins at least this large are not cached (the key packs N, a_i, b_j in 21 bits each).
CACHE_LIMIT = 1 << 21
#: The strata's section of the cache: 2**STRATUM_BITS slots (direct-mapped) of what
#: :func:`_table_moments` finds for a stratum of at most STRATUM_MARGINS levels in all.
STRATUM_BITS = 14
STRATUM_MARGINS = 16
#: A stratum's key: N, r, c, then its r + c margins (zeros after them).
STRATUM_KEY = 3 + STRATUM_MARGINS


def cell_cache():
    """An empty cache for :func:`_table_moments`: (keys, entries), int64 (2**CACHE_BITS +
    2**STRATUM_BITS * STRATUM_KEY,) and float64 (2**CACHE_BITS + 2**STRATUM_BITS,
    :data:`CELL_WIDTH`). Their first 2**CACHE_BITS slots hold the cells' laws
    (:func:`_g2_moments`): what a cell contributes depends on N, a_i and b_j alone (its
    law, its h, its projection); the rest the strata's moments, which depend on N and the
    margins alone (in a search the same strata come back: 69% of the strata of default
    ``mbor`` over insurance). A cell or stratum met again, in another stratum or another
    test, is read back bit for bit (its key compared in full); a slot is overwritten by
    the next one that maps to it. One per thread (the kernels write to it)."""
    cells = 1 << CACHE_BITS
    strata = 1 << STRATUM_BITS
    return (np.zeros(cells + strata * STRATUM_KEY, np.int64),
            np.empty((cells + strata, CELL_WIDTH)))


@njit(cache=True, nogil=True)
def _cell(ai, bj, big_n, clogc, weights, values, out, coef, gram, rhs, beta, moments, neg,
          mono, flat):  # pragma: no cover - compiled
    """What cell (i, j) of margins ``ai``, ``bj`` contributes, into ``out``
    (:data:`CELL_WIDTH`): E h + (1 + log e) e (e = ai bj / N), Var h (both exact, from the
    cell's law Hypergeometric(N, ai, bj)), then where the law has two points or more the
    residual sd and degree of h's projection (:func:`_projection`) and its coefficients
    in the binomial basis (degree -1 for a point mass); with ``flat``, a law of more than
    DEGREE + 1 values takes the lowest degree that fits h within :data:`FLAT_FIT`.
    ``weights``, ``values`` (at least min(ai, bj) + 1), ``coef`` ... ``mono``: work
    space."""
    lo, m = _cell_law(ai, bj, big_n, weights)
    e = ai * (bj / float(big_n))
    slope = 1.0 + math.log(e)
    mu = 0.0
    mean_n = 0.0
    for k in range(m):
        values[k] = clogc[lo + k] - slope * (lo + k)
        mu += weights[k] * values[k]
        mean_n += weights[k] * (lo + k)
    v = 0.0
    vn = 0.0
    for k in range(m):
        v += weights[k] * (values[k] - mu) ** 2
        vn += weights[k] * (lo + k - mean_n) ** 2
    out[0] = mu + slope * e
    out[1] = v
    out[2] = 0.0
    out[3] = -1.0
    if m < 2:
        return  # a point mass: no covariance
    sd = max(math.sqrt(vn), 0.5)
    d = min(DEGREE, m - 1)
    if flat and m - 1 > DEGREE:  # wide support: the lowest degree fitting h within FLAT_FIT
        for low in range(1, DEGREE):
            _, fit = _projection(lo, m, weights, values, mean_n, sd, coef, gram, rhs, beta,
                                 moments, neg, mono, low)
            if fit <= FLAT_FIT * FLAT_FIT:
                d = low
                break
    d, residual = _projection(lo, m, weights, values, mean_n, sd, coef, gram, rhs, beta,
                              moments, neg, mono, d)
    out[2] = math.sqrt(max(residual, 0.0))
    out[3] = d
    out[4] = _defect(moments, gram, rhs, neg, d)
    for p in range(d + 1):
        out[5 + p] = coef[p]


@njit(cache=True, nogil=True)
def _g2_moments(a, b, big_n, clogc, keys, entries, flat):  # pragma: no cover - compiled
    """(mean, variance) of G2 under the law with margins a (r,), b (c,) (all > 0), or
    (mean, -1) where the rounding or projection bound fails (see the module docstring).
    Each cell's law is read from the cache ``keys``, ``entries`` (:func:`cell_cache`;
    empty arrays: none) where it was met before, else formed and stored there."""
    r = a.shape[0]
    c = b.shape[0]
    n_big = float(big_n)
    top = min(a.max(), b.max())
    weights = np.empty(top + 1)
    values = np.empty(top + 1)
    size = DEGREE + 1
    # binomial moments E[C(n_ij, p)] = al[i, p] be[j, p], al = C(a_i, p) / sqrt(C(N, p))
    scale = np.empty(size)
    _binomials(big_n, DEGREE, scale)
    for p in range(size):
        scale[p] = 1.0 / math.sqrt(scale[p]) if scale[p] > 0.0 else 0.0
    al = np.empty((r, size))
    be = np.empty((c, size))
    for i in range(r):
        _binomials(a[i], DEGREE, al[i])
        for p in range(size):
            al[i, p] *= scale[p]
    for j in range(c):
        _binomials(b[j], DEGREE, be[j])
        for p in range(size):
            be[j, p] *= scale[p]
    # T = sum f(n_ij) = sum h_ij(n_ij) + const, h_ij(n) = f(n) - (1 + log e_ij) n: the
    # removed part is additive in rows and columns (its sum is fixed by the margins), and
    # h is flat at e_ij, so the pairs' covariances stay small beside the cells' variances.
    # Per cell (:func:`_cell`): E h and Var h exactly from its law, and w[i, j, p] =
    # g_ij(p) E[C(n_ij, p)] with g the centred projection of h (the pairs' covariances are
    # those of the projections; their error is bounded by the residuals, see the module
    # docstring)
    w = np.zeros((r, c, size))
    degree = np.zeros((r, c), np.int64)  # each cell's polynomial degree (w is 0 above it)
    coef = np.zeros(size)
    gram = np.empty((size, size))
    rhs = np.empty(size)
    beta = np.empty(size)
    work = np.empty(2 * DEGREE + 1)
    neg = np.empty(size)
    mono = np.empty(size)
    own = np.empty(CELL_WIDTH)  # a cell not cached
    slots = keys.shape[0]  # the cells' section, or none (an empty cache)
    shift_bits = np.uint64(64 - CACHE_BITS)
    cached = slots >= 1 << CACHE_BITS and big_n < CACHE_LIMIT
    used = 1  # the highest degree any cell needs, plus one
    e_t = 0.0
    var_sum = 0.0
    sd_h = 0.0
    sd_res = 0.0
    var_res = 0.0
    spread_sum = 0.0
    defect_sum = 0.0
    by_degree = np.zeros((size, 2))  # per degree: sum of sd(r), of sd(h) + sd(r)
    for i in range(r):
        for j in range(c):
            cell = own
            if cached and a[i] < CACHE_LIMIT and b[j] < CACHE_LIMIT:
                key = (big_n << 42) | (a[i] << 21) | b[j]  # > 0: N >= 2
                slot = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15))
                                >> shift_bits)
                cell = entries[slot]
                if keys[slot] != key:
                    keys[slot] = 0  # no entry while it is formed (an error leaves none)
                    _cell(a[i], b[j], big_n, clogc, weights, values, cell, coef, gram, rhs,
                          beta, work, neg, mono, flat)
                    keys[slot] = key
            else:
                _cell(a[i], b[j], big_n, clogc, weights, values, cell, coef, gram, rhs, beta,
                      work, neg, mono, flat)
            e_t += cell[0]
            var_sum += cell[1]
            sd_h = max(sd_h, math.sqrt(cell[1]))
            d = np.int64(cell[3])
            if d < 0:
                continue  # a point mass: no covariance
            sd_res += cell[2]
            var_res += cell[2] * cell[2]
            spread = math.sqrt(cell[1]) + cell[2]  # sd(g) <= sd(h) + sd(r)
            by_degree[d, 0] += cell[2]
            by_degree[d, 1] += spread
            spread_sum += spread
            defect_sum += cell[4]
            used = max(used, d + 1)
            degree[i, j] = d
            shift = 0.0
            for p in range(d + 1):
                w[i, j, p] = cell[5 + p] * al[i, p] * be[j, p]
                shift += w[i, j, p]
            w[i, j, 0] -= shift  # centred: E[g(n)] = 0
    size = used
    # sums over cells, rows and columns, each cell's products only up to its own degree
    # (a sparse stratum's cells mostly take two values: degree 1): O(sum_c (d_c + 1)^2)
    rows = np.zeros((r, size))
    cols = np.zeros((c, size))
    total = np.zeros(size)
    cell_sum = np.zeros((size, size))
    cell_abs = np.zeros((size, size))
    row_within = np.zeros((r, size, size))
    col_within = np.zeros((c, size, size))
    for i in range(r):
        for j in range(c):
            top = degree[i, j] + 1
            for p in range(top):
                x = w[i, j, p]
                rows[i, p] += x
                cols[j, p] += x
                total[p] += x
                for q in range(top):
                    xy = x * w[i, j, q]
                    cell_sum[p, q] += xy
                    cell_abs[p, q] += abs(xy)
                    row_within[i, p, q] += xy
                    col_within[j, p, q] += xy
    row_sig = np.empty((r, size, size))
    col_sig = np.empty((c, size, size))
    _line_factors(a, size, row_sig)
    _line_factors(b, size, col_sig)
    pairs = 0.0
    magnitude = 0.0
    for p in range(size):
        rho = 1.0  # N^(p+q) / (N^(p) N^(q)) inverted, one factor a step
        for q in range(size):
            if p + q > big_n:
                continue
            if q > 0:
                t = q - 1
                rho *= (n_big - t) / (n_big - p - t)
            row_sq, row_abs, same_row = _line_pairs(rows, row_within, a, row_sig, p, q)
            col_sq, col_abs, same_col = _line_pairs(cols, col_within, b, col_sig, p, q)
            apart = total[p] * total[q] - row_sq - col_sq + cell_sum[p, q]
            pairs += rho * (apart + same_row + same_col)
            magnitude += rho * (abs(total[p] * total[q])
                                + 3.0 * (row_abs + col_abs + cell_abs[p, q]))
    var_t = var_sum + pairs
    const = -clogc[big_n]
    for i in range(r):
        const += clogc[a[i]]
    for j in range(c):
        const += clogc[b[j]]
    # the error of the pairs' covariances: sum over c of Cov(r_c, H - h_c) + Cov(G - g_c,
    # r_c) (r = h - g, H = sum h, G = sum g), at most sum_c sd(r_c) (sd(H) + sd(G) +
    # sd(h_c) + sd(g_c)) <= 2 sum_c sd(r_c) (sd(H) + sd(r_c) + max_c sd(h_c)), sd(H) taken
    # from the variance found (an error within the tolerance moves it by less than 1%)
    sd_t = math.sqrt(max(var_t, 0.0))
    # the tighter bound: E[C(n_c', p) | n_c] is a polynomial of degree p in n_c for any
    # two cells of the law (see the module docstring), so r_c, orthogonal to the
    # polynomials of degree d_c, has no covariance with g_c' where d_c' <= d_c (up to its
    # rounding defect); what is left is bounded by the residuals' own pairs, the pairs
    # with a cell of higher degree and the defects
    higher = 0.0
    cross = 0.0
    for d in range(size - 1, -1, -1):
        cross += by_degree[d, 0] * higher
        higher += by_degree[d, 1]
    tight = (sd_res * sd_res - var_res) + 2.0 * cross + 2.0 * defect_sum * spread_sum
    error = 16.0 * 2.220446049250313e-16 * magnitude + min(
        2.0 * sd_res * (sd_t + sd_res + sd_h), max(tight, 0.0))
    if not (error <= TOLERANCE * var_t or error <= 1e-12):  # 1e-12: a point mass
        return 2.0 * (e_t - const), -1.0
    return 2.0 * (e_t - const), max(4.0 * var_t, 0.0)


#: The most tables :func:`_two_line_g2` enumerates (about a millisecond): beyond, the
#: stratum is permuted.
ENUMERATE_MAX = 4096


@njit(cache=True, nogil=True)
def _log_choose(n, k):  # pragma: no cover - compiled
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@njit(cache=True, nogil=True)
def _two_line_g2(a, b, big_n, clogc):  # pragma: no cover - compiled
    """Exact (mean, variance) of G2 of a stratum with two x levels or two y levels, by
    enumerating its tables: the line of the smaller margin m (the other is the margins
    less it) draws its c cells from the other margin b as a multivariate hypergeometric,
    P(n) = prod_j C(b_j, n_j) / C(N, m); (NaN, -1) where the bound prod_{j < c} (min(b_j,
    m) + 1) on its number of tables exceeds :data:`ENUMERATE_MAX` (the stratum is then
    permuted). Serves the strata whose projected variance fails its bound
    (:func:`_g2_moments`): one cell of wide support, as the large cell of a stratum with
    one common and one rare level."""
    if a.shape[0] == 2:
        m = min(a[0], a[1])
        line = b
    else:
        m = min(b[0], b[1])
        line = a
    c = line.shape[0]
    bound = 1.0
    for j in range(c - 1):
        bound *= min(line[j], m) + 1.0
        if bound > ENUMERATE_MAX:
            return np.nan, -1.0
    cap = np.zeros(c + 1, np.int64)  # cap[j]: what columns j.. can take
    for j in range(c - 1, -1, -1):
        cap[j] = cap[j + 1] + line[j]
    log_c = np.empty((c, m + 1))  # log C(line[j], n) for the counts n a column can take
    for j in range(c):
        for n in range(min(line[j], m) + 1):
            log_c[j, n] = _log_choose(line[j], n)
    const = clogc[big_n] - clogc[m] - clogc[big_n - m]
    for j in range(c):
        const -= clogc[line[j]]
    log_total = _log_choose(big_n, m)
    ref = c - 1.0  # the chi-square's mean: the sums are taken about it
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    cur = np.zeros(c, np.int64)
    top = np.zeros(c, np.int64)
    rem = np.zeros(c, np.int64)
    rem[0] = m
    cur[0] = max(0, m - cap[1])
    top[0] = min(line[0], m)
    j = 0
    while True:
        if j < c - 1:
            if cur[j] > top[j]:
                if j == 0:
                    break
                j -= 1
                cur[j] += 1
                continue
            rem[j + 1] = rem[j] - cur[j]
            j += 1
            if j < c - 1:
                cur[j] = max(0, rem[j] - cap[j + 1])
                top[j] = min(line[j], rem[j])
            continue
        cur[j] = rem[j]  # the last column takes the rest (within its margin by the bounds)
        log_p = -log_total
        g = const
        for k in range(c):
            log_p += log_c[k, cur[k]]
            g += clogc[cur[k]] + clogc[line[k] - cur[k]]
        p = math.exp(log_p)
        d = 2.0 * g - ref
        s0 += p
        s1 += p * d
        s2 += p * d * d
        j -= 1
        cur[j] += 1
    mean = s1 / s0
    return ref + mean, max(s2 / s0 - mean * mean, 0.0)


@njit(cache=True, nogil=True)
def _stratum_moments(a, b, big_n, clogc, g2_address, keys, entries,
                     found):  # pragma: no cover - compiled
    """What :func:`_table_moments` adds for one stratum, into ``found`` (7,): its kind (0
    nothing: permuted; 1 moments; 2 a shift), then G2 and X2 means, their variances, their
    shifts."""
    found[:] = 0.0
    if a.max() == 1 or b.max() == 1:  # one row per x (or y) level: every cell 0 or 1,
        # G2 = 2 (N log N - sum of the margins' n log n) and X2 = N (levels of the other
        # variable - 1) in every permutation: a shift
        g = clogc[big_n]
        for i in range(a.shape[0]):
            g -= clogc[a[i]]
        for j in range(b.shape[0]):
            g -= clogc[b[j]]
        found[0] = 2.0
        found[5] = 2.0 * g
        found[6] = big_n * ((b.shape[0] if a.max() == 1 else a.shape[0]) - 1.0)
        return
    g_mean, g_var = _CALL_G2_MOMENTS(g2_address)(a, b, big_n, clogc, keys, entries, False)
    x_mean, x_var = _x2_moments(a, b, big_n)
    if g_var < 0.0 and (a.shape[0] == 2 or b.shape[0] == 2):  # the bound failed: exact
        g_mean, g_var = _two_line_g2(a, b, big_n, clogc)  # where there are few tables
    if g_var < 0.0:  # else flat cells at their lowest degree (formed afresh, not cached)
        g_mean, g_var = _CALL_G2_MOMENTS(g2_address)(a, b, big_n, clogc, keys[:0],
                                                     entries[:0], True)
    if g_var < 0.0:
        return  # the bound failed: the stratum is permuted
    g_point = g_var <= 1e-9 * max(1.0, g_mean)  # a point mass, up to rounding
    x_point = x_var <= 1e-9 * max(1.0, x_mean)
    if g_point and x_point:
        found[0] = 2.0  # both a point mass: a shift
        found[5] = g_mean
        found[6] = x_mean
        return
    if g_point or x_point:
        return  # one statistic a point mass, the other not: left to the permutations
    found[0] = 1.0
    found[1] = g_mean
    found[2] = x_mean
    found[3] = g_var
    found[4] = x_var


@njit(cache=True, nogil=True)
def _table_moments(a, b, big_n, clogc, moments, g2_address, keys,
                   entries):  # pragma: no cover - compiled
    """:func:`table_moments`, :func:`_g2_moments` called through its address ``g2_address``
    (:data:`G2_MOMENTS`: compiled once, not again inside every caller) with the cache
    ``keys``, ``entries`` (:func:`cell_cache`; a stratum met before is read back)."""
    r = a.shape[0]
    c = b.shape[0]
    cells = 1 << CACHE_BITS
    found = np.empty(7)
    n_slots = max(keys.shape[0] - cells, 0) // STRATUM_KEY  # the strata's section
    if n_slots > 0 and r + c <= STRATUM_MARGINS:
        h = np.uint64(big_n) * np.uint64(0x9E3779B97F4A7C15)
        for i in range(r):
            h = (h ^ np.uint64(a[i] + 1)) * np.uint64(0x100000001B3)
        h = (h ^ np.uint64(0xFF)) * np.uint64(0x100000001B3)  # the two lines apart
        for j in range(c):
            h = (h ^ np.uint64(b[j] + 1)) * np.uint64(0x100000001B3)
        slot = np.int64(((h * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32))
                        % np.uint64(n_slots))
        key = keys[cells + slot * STRATUM_KEY:cells + (slot + 1) * STRATUM_KEY]
        row = entries[cells + slot]
        same = key[0] == big_n and key[1] == r and key[2] == c
        if same:
            for i in range(r):
                same = same and key[3 + i] == a[i]
            for j in range(c):
                same = same and key[3 + r + j] == b[j]
        if same:
            for k in range(7):
                found[k] = row[k]
        else:
            key[0] = 0  # no entry while it is formed (an error leaves none)
            _stratum_moments(a, b, big_n, clogc, g2_address, keys, entries, found)
            for k in range(7):
                row[k] = found[k]
            key[1] = r
            key[2] = c
            for i in range(r):
                key[3 + i] = a[i]
            for j in range(c):
                key[3 + r + j] = b[j]
            key[0] = big_n
    else:
        _stratum_moments(a, b, big_n, clogc, g2_address, keys, entries, found)
    kind = found[0]
    if kind == 1.0:
        for k in range(4):
            moments[k] += found[1 + k]
    elif kind == 2.0:
        moments[4] += found[5]
        moments[5] += found[6]
    return kind != 0.0


def table_moments(a, b, big_n, clogc, moments, cache=None) -> bool:
    """Add the exact null mean and variance of G2 and X2 of one stratum (margins ``a``,
    ``b``, positive int64, N = ``big_n``) to ``moments`` (6,): G2 and X2 means, their
    variances, then G2 and X2 **shifts**, the values of a stratum whose statistics do not
    vary under the law (one row per x or per y level, or any other point mass): a constant
    is not a random part, so it is kept out of the fitted law's moments (a scaled
    chi-square fitted to constant + random part has the mean of both but only the random
    part's variance: nearly normal, too light a tail) and subtracted from the statistic
    instead. False (nothing added) where the bound on the error of G2's variance exceeds
    :data:`TOLERANCE` of it (see the module docstring). ``cache``: the cells' cache
    (:func:`cell_cache`), or None. The kernels call the compiled :func:`_table_moments`
    (:data:`TABLE_MOMENTS`)."""
    keys, entries = _NO_CACHE if cache is None else cache
    if not (isinstance(moments, np.ndarray) and moments.shape == (6,)
            and moments.dtype == np.float64):
        raise ValueError("moments must be a float64 array of shape (6,): G2 and X2 means, "
                         f"variances and shifts; got {getattr(moments, 'shape', moments)!r}")
    return bool(_table_moments(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64),
                               int(big_n), np.ascontiguousarray(clogc, dtype=np.float64),
                               moments, G2_MOMENTS.address(), keys, entries))


#: No cache (empty arrays: every cell formed).
_NO_CACHE = (np.zeros(0, np.int64), np.empty((0, CELL_WIDTH)))


_ANY_I64 = types.Array(types.int64, 1, "A")
_F64 = types.Array(types.float64, 1, "C")
#: The cells' cache's types (:func:`cell_cache`).
CACHE_KEYS = types.Array(types.int64, 1, "C")
CACHE_ENTRIES = types.Array(types.float64, 2, "C")
#: :func:`_g2_moments`, called by address.
G2_MOMENTS = Callee(_g2_moments, types.UniTuple(types.float64, 2)(
    _ANY_I64, _ANY_I64, types.int64, _F64, CACHE_KEYS, CACHE_ENTRIES, types.boolean))
_CALL_G2_MOMENTS = G2_MOMENTS.call
#: :func:`_table_moments`, called by address by the calibration's kernels.
TABLE_MOMENTS = Callee(_table_moments, types.boolean(_ANY_I64, _ANY_I64, types.int64, _F64,
                                                     _F64, types.int64, CACHE_KEYS,
                                                     CACHE_ENTRIES))
