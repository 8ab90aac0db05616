"""Compiled shuffles within strata for the holdout randomization test (imported on first use)."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _shuffle_strata(work, starts):  # pragma: no cover - compiled
    """Fisher-Yates within each stratum ``work[starts[s]:starts[s + 1]]``, in place."""
    for s in range(starts.shape[0] - 1):
        lo, hi = starts[s], starts[s + 1]
        for i in range(hi - 1, lo, -1):
            j = lo + np.random.randint(0, i - lo + 1)
            t = work[i]
            work[i] = work[j]
            work[j] = t


@njit(cache=True, nogil=True)
def shuffles_within(order, starts, B, seed):  # pragma: no cover - compiled
    """B shuffles of the rows 0..m-1 within strata: ``order`` lists the rows stratum by
    stratum, ``starts`` the strata's starts in it (and the end). Returns ``which`` (B, m):
    in shuffle b, row i takes the value of row ``which[b, i]``, a row of its own stratum
    (Fisher-Yates within each stratum; numba's generator seeded by ``seed``)."""
    np.random.seed(seed)
    m = order.shape[0]
    out = np.empty((B, m), np.int64)
    work = order.copy()
    for b in range(B):
        _shuffle_strata(work, starts)
        for i in range(m):
            out[b, order[i]] = work[i]
    return out


@njit(cache=True, nogil=True)
def shuffled_sums(order, starts, codes, table, B, seed, bound, stop):  # pragma: no cover
    """Sums over rows of ``table[codes[row's draw], row]`` for up to B shuffles within
    strata (as :func:`shuffles_within`, same stream): the held-out loss of each draw when
    the model's loss of every row is tabulated by x's value (``table`` (values, m)).
    Stops after the draw that is the ``stop``-th with a sum at most ``bound`` (``stop`` 0:
    never). Returns the sums and how many draws were made."""
    np.random.seed(seed)
    m = order.shape[0]
    out = np.zeros(B)
    work = order.copy()
    extreme = 0
    for b in range(B):
        _shuffle_strata(work, starts)
        total = 0.0
        for i in range(m):
            total += table[codes[work[i]], order[i]]
        out[b] = total
        if total <= bound:
            extreme += 1
            if extreme == stop:
                return out, b + 1
    return out, B


@njit(cache=True, nogil=True)
def _block_sum(a, lo, n):  # pragma: no cover - compiled
    """numpy's sum of ``a[lo:lo + n]`` for n <= 128: one running sum below 8 items, else
    eight (one per item modulo 8) combined pairwise, then the items left over."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def _pairwise_sum(a, lo, n):  # pragma: no cover - compiled
    """``a[lo:lo + n].sum()`` bit for bit as numpy sums a contiguous float64 row: its pairwise
    summation (:func:`_block_sum` up to 128 items; above, the first n2 = n // 2 rounded down
    to a multiple of 8 and the rest, each summed so, then added), without recursion."""
    los = np.empty(128, np.int64)
    ns = np.empty(128, np.int64)
    split = np.zeros(128, np.bool_)
    res = np.empty(128)
    los[0], ns[0], split[0] = lo, n, False
    sp, rp = 1, 0
    while sp:
        t = sp - 1
        if ns[t] <= 128:
            res[rp] = _block_sum(a, los[t], ns[t])
            rp += 1
            sp -= 1
        elif split[t]:  # both halves summed: left, then right, on the results' stack
            res[rp - 2] = res[rp - 2] + res[rp - 1]
            rp -= 1
            sp -= 1
        else:
            split[t] = True
            n2 = ns[t] // 2
            n2 -= n2 % 8
            los[sp], ns[sp], split[sp] = los[t] + n2, ns[t] - n2, False  # right, then left
            los[sp + 1], ns[sp + 1], split[sp + 1] = los[t], n2, False
            sp += 2
    return res[0]


@njit(cache=True, nogil=True)
def level_draw_sums(u, cum, table):  # pragma: no cover - compiled
    """Held-out loss sums of draws of a discrete x by inverse CDF: in draw b, row i takes the
    level ``#{g < levels - 1: u[b, i] > cum[i, g]}`` (``cum`` (m, levels) the cumulative
    probabilities, the last level what is left) and its loss ``table[level, i]``; each draw's
    sum as numpy's ``sum`` of the row (:func:`_pairwise_sum`). Returns (draws,)."""
    draws, m = u.shape
    last = cum.shape[1] - 1
    out = np.empty(draws)
    row = np.empty(m)
    for b in range(draws):
        for i in range(m):
            g = 0
            for h in range(last):
                if u[b, i] > cum[i, h]:
                    g += 1
            row[i] = table[g, i]
        out[b] = _pairwise_sum(row, 0, m)
    return out


@njit(cache=True, nogil=True)
def class_reductions(flat, y, n_classes, total, starts, logs, klass, log_n):  # pragma: no cover
    """The histogram models' in-sample log-likelihood ratios of classes ``y`` (G^2 / 2 per
    column, :func:`mbstat.ci.models.crt.histogram_reductions`), bit for bit as its numpy
    form computes them: ``flat`` (n, p) each row's cell key times ``n_classes`` (cells of
    column j from ``starts[j]``), ``logs[k]`` numpy's log of k, ``klass`` the log class
    counts, ``log_n`` log n. Per cell and class ``c (((log c - log cell) - klass) +
    log n)`` (0 for an empty one, as numpy's ``nan_to_num`` of 0 x -inf), summed over the
    classes one by one (fewer than 8: numpy's order), then over each column's cells as
    ``np.add.reduceat`` does (the first cell, plus the pairwise sum of the others)."""
    n, p = flat.shape
    counts = np.zeros(total * n_classes, np.int64)
    for i in range(n):
        yi = y[i]
        for j in range(p):
            counts[flat[i, j] + yi] += 1
    cell = np.empty(total)
    for t in range(total):
        size = 0
        for c in range(n_classes):
            size += counts[t * n_classes + c]
        row = 0.0
        for c in range(n_classes):
            k = counts[t * n_classes + c]
            if k:
                row += k * (((logs[k] - logs[size]) - klass[c]) + log_n)
            else:
                row += 0.0
        cell[t] = row
    out = np.empty(p)
    for j in range(p):
        lo = starts[j]
        hi = starts[j + 1] if j + 1 < p else total
        out[j] = cell[lo] if hi - lo == 1 else cell[lo] + _pairwise_sum(cell, lo + 1, hi - lo - 1)
    return out
