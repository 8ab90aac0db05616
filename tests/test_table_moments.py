"""Permutation moments of G2 and X2 without permuting (mbstat.ci.tables._table_moments)."""
import math

import numpy as np
import pytest
from scipy.special import gammaln

from mbstat.ci.tables._kernels import clogc_table
from mbstat.ci.tables._table_moments import (_NO_CACHE, _g2_moments, _x2_moments, cell_cache,
                                             table_moments)


def _f(n):
    return n * math.log(n) if n > 0 else 0.0


def _exact_two_columns(a, b1):
    """Exact mean and variance of G2 of an r x 2 table with row margins ``a`` and first
    column ``b1`` under the multiple hypergeometric law, by enumeration (a DP over rows:
    row i puts x_i in column 1 with weight C(a_i, x_i), sum x_i = b1)."""
    states = {0: (1.0, 0.0, 0.0)}  # column-1 total -> (weight, weight T, weight T^2)
    for ai in a:
        nxt = {}
        for s, (w, w1, w2) in states.items():
            for x in range(min(ai, b1 - s) + 1):
                c = math.exp(gammaln(ai + 1) - gammaln(x + 1) - gammaln(ai - x + 1))
                t = _f(x) + _f(ai - x)
                W, W1, W2 = nxt.get(s + x, (0.0, 0.0, 0.0))
                nxt[s + x] = (W + w * c, W1 + c * (w1 + w * t), W2 + c * (w2 + 2 * t * w1 + w * t * t))
        states = nxt
    w, w1, w2 = states[b1]
    n = sum(a)
    const = sum(map(_f, a)) + _f(b1) + _f(n - b1) - _f(n)
    return 2 * (w1 / w - const), 4 * (w2 / w - (w1 / w) ** 2)


def _random_margins(rng, r, n):
    a = np.bincount(rng.choice(r, n, p=rng.dirichlet(np.ones(r))), minlength=r)
    return a[a > 0].astype(np.int64)


def test_g2_moments_equal_exact_enumeration():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(60):
        r = int(rng.integers(2, 8))
        n = int(rng.integers(r + 2, 60 * r))
        a = _random_margins(rng, r, n)
        b1 = int(rng.integers(1, n))
        if len(a) < 2:
            continue
        mean, var = _exact_two_columns(list(a), b1)
        got = _g2_moments(a, np.array([b1, n - b1], dtype=np.int64), n, clogc_table(n),
                          *_NO_CACHE, False)
        assert got[0] == pytest.approx(mean, rel=1e-10, abs=1e-10)
        if got[1] >= 0:  # -1: left to the permutations (the bound failed)
            assert got[1] == pytest.approx(var, rel=1e-4, abs=1e-9)
            checked += 1
    assert checked >= 40


def _permuted(a, b, B, rng):
    """G2 and X2 of B tables drawn by permuting the column labels (a hand permutation)."""
    rows = np.repeat(np.arange(len(a)), a) * len(b)
    cols = np.repeat(np.arange(len(b)), b)
    n = len(rows)
    e = np.outer(a, b) / n
    g = np.empty(B)
    x = np.empty(B)
    for k in range(B):
        t = np.bincount(rows + rng.permutation(cols), minlength=len(a) * len(b)).reshape(
            len(a), len(b))
        g[k] = 2 * np.sum(np.where(t > 0, t * np.log(np.where(t > 0, t, 1) / e), 0.0))
        x[k] = np.sum((t - e) ** 2 / e)
    return g, x


@pytest.mark.parametrize("case", range(4))
def test_moments_agree_with_permutations(case):
    """r x c tables (r, c up to 5): the means within 4 standard errors of 4,000 hand
    permutations, the variances within 4 standard errors of their estimate."""
    rng = np.random.default_rng(100 + case)
    r, c = int(rng.integers(3, 6)), int(rng.integers(3, 6))
    n = int(rng.integers(2 * r * c, 12 * r * c))
    a, b = _random_margins(rng, r, n), _random_margins(rng, c, n)
    moments = np.zeros(6)
    assert table_moments(a, b, n, clogc_table(n), moments)
    B = 4000
    g, x = _permuted(a, b, B, rng)
    for k, sample in ((0, g), (1, x)):
        mean, var = moments[k], moments[2 + k]
        assert abs(sample.mean() - mean) < 4 * math.sqrt(var / B)
        m4 = np.mean((sample - sample.mean()) ** 4)
        se_var = math.sqrt(max(m4 - sample.var() ** 2, 1e-12) / B)
        assert abs(sample.var() - var) < 4 * se_var


def test_x2_moments_are_haldane_and_dawson():
    """X2's mean N (r - 1)(c - 1) / (N - 1) (Haldane 1940); the variance against
    enumeration of every table of a small 2 x 3 law."""
    a, b = np.array([3, 4], dtype=np.int64), np.array([2, 2, 3], dtype=np.int64)
    mean, var = _x2_moments(a, b, 7)
    assert mean == pytest.approx(7 * 1 * 2 / 6)
    # enumerate: row 0 takes x_j of column j, sum 3
    vals, probs = [], []
    for x0 in range(3):
        for x1 in range(3):
            x2 = 3 - x0 - x1
            if not 0 <= x2 <= 3:
                continue
            t = np.array([[x0, x1, x2], [2 - x0, 2 - x1, 3 - x2]])
            if (t < 0).any():
                continue
            w = math.comb(2, x0) * math.comb(2, x1) * math.comb(3, x2)
            e = np.outer(a, b) / 7
            vals.append(np.sum((t - e) ** 2 / e))
            probs.append(w)
    p = np.array(probs) / sum(probs)
    v = np.array(vals)
    assert mean == pytest.approx(float(p @ v))
    assert var == pytest.approx(float(p @ (v - p @ v) ** 2))


def _g2_x2(table):
    """G2 and X2 of a two-way table, by numpy."""
    t = np.asarray(table, dtype=float)
    e = np.outer(t.sum(1), t.sum(0)) / t.sum()
    pos = t > 0
    return 2.0 * float(np.sum(t[pos] * np.log(t[pos] / e[pos]))), float(np.sum((t - e) ** 2 / e))


@pytest.mark.parametrize("a, b", [([1, 1, 1], [2, 1]), ([1, 1, 1, 1, 1], [3, 2]),
                                  ([4, 2], [1, 1, 1, 1, 1, 1]), ([1] * 7, [2, 2, 3])])
def test_one_row_per_level_is_a_shift(a, b):
    """A stratum with one row per x (or per y) level has one table up to the order of its
    lines, so G2 and X2 are the same in every permutation: G2 = 2 (N log N - sum b log b)
    (or with a), X2 = N (c - 1) (or r - 1). They are added as shifts (moments[4:6]), the
    value of every table with those margins, and nothing to the means and variances."""
    a, b = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
    n = int(a.sum())
    moments = np.zeros(6)
    assert table_moments(a, b, n, clogc_table(n), moments)
    assert not moments[:4].any()
    table = np.zeros((len(a), len(b)), dtype=int)  # one table with these margins
    left = b.copy()
    for i, ai in enumerate(a):
        for _ in range(ai):
            j = int(np.argmax(left))
            table[i, j] += 1
            left[j] -= 1
    np.testing.assert_allclose(moments[4:], _g2_x2(table), rtol=1e-12, atol=1e-12)


def test_moments_must_have_room_for_the_shifts():
    with pytest.raises(ValueError, match=r"moments must be a float64 array of shape \(6,\)"):
        table_moments(np.array([2, 3]), np.array([3, 2]), 5, clogc_table(5), np.zeros(4))


def test_a_two_line_stratum_failing_the_bound_is_enumerated():
    """Two x levels, one rare, beside a common y level: (6, 487) x (14, 21, 458), a cell of
    wide support whose projected variance fails its bound. Its tables are enumerated (28):
    mean and variance as scipy's multivariate hypergeometric law gives them."""
    from scipy.stats import multivariate_hypergeom

    a, b = np.array([6, 487]), np.array([14, 21, 458])
    moments = np.zeros(6)
    assert table_moments(a, b, 493, clogc_table(493), moments)
    vals, probs = [], []
    for n0 in range(7):
        for n1 in range(7 - n0):
            comp = np.array([n0, n1, 6 - n0 - n1])
            probs.append(multivariate_hypergeom.pmf(comp, b, 6))
            vals.append(_g2_x2(np.array([comp, b - comp]))[0])
    p, v = np.array(probs), np.array(vals)
    assert p.sum() == pytest.approx(1.0)
    assert moments[0] == pytest.approx(float(p @ v), rel=1e-10)
    assert moments[2] == pytest.approx(float(p @ (v - p @ v) ** 2), rel=1e-9)


def test_counted_table_serves_a_stratum_that_is_a_point_mass():
    """Strata 2 x 2 beside one of one row per x level: the counted table serves the test
    (nothing shuffled), the point mass a shift, G2 = 2 (4 log 4 - 4 log 2), and the numbers
    are permutation_statistics' on the sorted rows."""
    from mbstat.ci.tables import _kernels as K

    rng = np.random.default_rng(3)
    z = np.repeat([0, 1, 2], [30, 30, 4])
    x = np.concatenate([rng.integers(0, 2, 60), [0, 1, 2, 3]])
    y = np.concatenate([rng.integers(0, 2, 60), [0, 1, 1, 0]])
    clogc = K.clogc_table(len(x))
    tail = np.array([np.nan, 0.0, 0.0, 0.0])
    out, moments, done, found = K._table_null(x, y, z, 4, 2, 3, 20, np.uint64(5), 20.0, clogc,
                                              tail, K._addresses(), *cell_cache())
    assert done
    setup = K.permutation_setup(x, y, z, 4, 2, 3)
    ref, ref_moments = K.permutation_statistics(*setup, 20, np.uint64(5), 20.0, clogc,
                                                K._addresses(), *cell_cache())
    np.testing.assert_allclose(moments, ref_moments, rtol=1e-12)
    assert moments[2] > 0.0  # the 2 x 2 strata's exact moments
    assert moments[4] == pytest.approx(8.0 * math.log(2.0), rel=1e-12)
    assert moments[5] == pytest.approx(4.0)
    assert not out[1:].any()  # nothing drawn


def _random_strata(rng, k=300):
    """Up to ``k`` random strata (a, b, N) of 2-6 x 2-4 observed levels."""
    strata = []
    for _ in range(k):
        r, c = int(rng.integers(2, 7)), int(rng.integers(2, 5))
        n = int(rng.integers(r * c, 8 * r * c))
        a, b = _random_margins(rng, r, n), _random_margins(rng, c, n)
        if len(a) > 1 and len(b) > 1:
            strata.append((a, b, n))
    return strata


def test_cached_cells_give_the_same_bits():
    """A cell's law, h and projection depend on (N, a_i, b_j) alone: strata formed with the
    cells' cache (cold, then warm, many cells sharing slots) give bit for bit the moments
    formed without it, whatever the order the strata come in."""
    strata = _random_strata(np.random.default_rng(11))
    clogc = clogc_table(max(n for *_, n in strata))
    plain = [_g2_moments(a, b, n, clogc, *_NO_CACHE, False) for a, b, n in strata]
    cache = cell_cache()
    for order in (range(len(strata)), reversed(range(len(strata)))):
        for k in order:
            a, b, n = strata[k]
            assert _g2_moments(a, b, n, clogc, *cache, False) == plain[k]
    assert np.count_nonzero(cache[0]) > 100  # cells were cached (and read back above)


def test_cached_strata_give_the_same_bits():
    """A stratum's moments depend on N and its margins alone: read back from the cache's
    strata section (cold, then warm, then with two slots only, so that strata overwrite
    each other and a stale slot must not be mistaken for another stratum), they are bit
    for bit those formed without a cache, shifts and refusals included."""
    from mbstat.ci.tables import _table_moments as tm

    strata = [(np.array([1, 1, 1]), np.array([2, 1]), 3),  # a shift
              (np.array([6, 487]), np.array([14, 21, 458]), 493),  # enumerated
              *_random_strata(np.random.default_rng(12))]
    clogc = clogc_table(max(n for *_, n in strata))

    def run(cache):
        out = []
        for a, b, n in strata:
            moments = np.zeros(6)
            out.append((table_moments(a, b, n, clogc, moments, cache), moments.tobytes()))
        return out

    plain = run(None)
    cache = cell_cache()
    assert run(cache) == plain and run(cache) == plain
    assert np.count_nonzero(cache[0][1 << tm.CACHE_BITS:]) > 100  # strata were cached
    keys, entries = cell_cache()
    cells = 1 << tm.CACHE_BITS  # the strata's section cut to two slots
    small = (keys[:cells + 2 * tm.STRATUM_KEY].copy(), entries[:cells + 2].copy())
    assert run(small) == plain and run(small) == plain
    assert np.count_nonzero(small[0][cells:]) > 2


def test_conditional_factorial_moments_are_polynomials_of_the_degree():
    """The lemma the variance's error bound rests on: under the law with both margins
    fixed, E[C(n_kl, p) | n_00 = n] is a polynomial of degree p in n, for a cell in the
    same row, the same column or neither; every table of a 3 x 3 law enumerated (margins
    (3, 3, 2) x (4, 2, 2), n_00 taking four values), checked against the closed forms of
    the module docstring."""
    import itertools
    from collections import defaultdict

    a, b = (3, 3, 2), (4, 2, 2)
    rows = np.repeat(np.arange(3), a)
    labels = np.repeat(np.arange(3), b)
    big_n = len(rows)
    sums = defaultdict(lambda: np.zeros(2))
    for perm in set(itertools.permutations(labels)):
        t = np.zeros((3, 3), int)
        np.add.at(t, (rows, np.array(perm)), 1)
        for (k, l) in ((0, 1), (1, 0), (1, 1), (2, 2)):
            for p in (1, 2, 3):
                sums[k, l, p, t[0, 0]] += (math.comb(t[k, l], p), 1)

    def falling(x, p):
        return math.prod(x - s for s in range(p))

    support = sorted({key[3] for key in sums})
    assert len(support) == 4
    for (k, l, p, n), (total, count) in sums.items():
        if k == 0:
            form = falling(a[0] - n, p) * falling(b[l], p) / falling(big_n - b[0], p)
        elif l == 0:
            form = falling(b[0] - n, p) * falling(a[k], p) / falling(big_n - a[0], p)
        else:
            form = (falling(big_n - a[0] - b[0] + n, p) * falling(a[k], p) * falling(b[l], p)
                    / (falling(big_n - a[0], p) * falling(big_n - b[0], p)))
        assert total / count == pytest.approx(form / math.factorial(p), rel=1e-12)


def test_a_large_sparse_stratum_takes_its_moments_not_permutations():
    """6 x 67 levels, 5,000 rows, 12 rows per cell, least expected count 0.9 (as barley's
    variables): the plain Cauchy-Schwarz bound refused such strata (they were permuted);
    the bound from the polynomial conditional moments accepts, and the moments agree with
    4,000 permutations (within 4 standard errors)."""
    rng = np.random.default_rng(21)
    a = np.array([147, 420, 690, 910, 1233, 1600], dtype=np.int64)
    b = np.bincount(rng.choice(67, 5000 - 67 * 30, p=rng.dirichlet(np.ones(67) * 2)),
                    minlength=67).astype(np.int64) + 30
    n = int(a.sum())
    assert b.sum() == n
    moments = np.zeros(6)
    assert table_moments(a, b, n, clogc_table(n), moments)
    B = 4000
    g, _ = _permuted(a, b, B, rng)
    mean, var = moments[0], moments[2]
    assert abs(g.mean() - mean) < 4 * math.sqrt(var / B)
    m4 = np.mean((g - g.mean()) ** 4)
    assert abs(g.var() - var) < 4 * math.sqrt((m4 - g.var() ** 2) / B)
