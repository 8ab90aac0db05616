"""One contingency test in one compiled call: counted, scored and given its p-value (#25).

:meth:`CITester.test <mbstat.ci.engine.CITester.test>` and the searches' shrink phases ask
one question at a time, about a random (x, y, z): nothing of the query is shared with
the one before. :func:`single_test` counts the table of one column x against y given z,
scores it (:func:`~mbstat.ci.tables._kernels._score`) and forms its results row
(:func:`~mbstat.ci.tables._kernels.finish_tests`) in one call, the same numbers as the
batch kernels (the counts are exact integers, scored by the same code).

The table is counted from the data's level bitmaps (:func:`_tree_table`): the rows of
each stratum of z are the AND of its levels' bitmaps, built down a tree over z's
variables (a branch whose rows are empty is cut), and the cells of a stratum are counted
by popcounts against y's and x's level bitmaps, x's last level as the rest. Its cost is
the tree's non-empty nodes times n / 64 words, against one scatter of n rows
(:func:`_scatter_table`), the fallback where the tree's bound is larger or a column has
more levels than the bitmaps hold. ALARM, 20,000 rows (313 words), |Z| = 0..3: about
3, 5, 10 and 20 microseconds counted, 0.3-0.4 times the batch kernels' single-candidate
paths (``benchmarks/ci_throughput.py``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import _popcount, _score, finish_tests

__all__ = ["TREE_WORDS_PER_ROW", "single_test"]

#: The tree counts a table while its bound (internal nodes plus the strata's cells, each
#: n / 64 words) stays within this many words per row; beyond, one scatter of the rows.
TREE_WORDS_PER_ROW = 16


@njit(cache=True, nogil=True)
def _cells(s, ybits, xbits, words, rx, ry, o, table):  # pragma: no cover - compiled
    """Fill the cells (x, y) of one stratum (row bitmap ``s``) of the flat (z, x, y)
    ``table`` at offset ``o``: per level of y one pass over the words, popcounts of x's
    levels but the last (the rest of the cell's rows)."""
    for b in range(ry):
        yb = ybits[b]
        if rx == 2:  # one accumulator per level: a single vectorized pass
            c = np.uint64(0)
            g0 = np.uint64(0)
            x0 = xbits[0]
            for w in range(words):
                t = s[w] & yb[w]
                c += _popcount(t)
                g0 += _popcount(t & x0[w])
            table[o + b] = np.int64(g0)
            table[o + ry + b] = np.int64(c - g0)
        elif rx == 3:
            c = np.uint64(0)
            g0 = np.uint64(0)
            g1 = np.uint64(0)
            x0 = xbits[0]
            x1 = xbits[1]
            for w in range(words):
                t = s[w] & yb[w]
                c += _popcount(t)
                g0 += _popcount(t & x0[w])
                g1 += _popcount(t & x1[w])
            table[o + b] = np.int64(g0)
            table[o + ry + b] = np.int64(g1)
            table[o + 2 * ry + b] = np.int64(c - g0 - g1)
        else:
            c = np.uint64(0)
            for w in range(words):
                c += _popcount(s[w] & yb[w])
            rest = np.int64(c)
            if rest == 0:
                continue
            for a in range(rx - 1):
                xa = xbits[a]
                got = np.uint64(0)
                for w in range(words):
                    got += _popcount(s[w] & yb[w] & xa[w])
                table[o + a * ry + b] = np.int64(got)
                rest -= np.int64(got)
            table[o + (rx - 1) * ry + b] = rest


@njit(cache=True, nogil=True)
def _tree_table(bits, n, x, y, zcols, cards, table):  # pragma: no cover - compiled
    """Count the flat (z, x, y) ``table`` (zeroed; z in mixed radix, first slowest) from
    the level bitmaps ``bits`` (p, levels, words) of n rows: depth first down z's
    variables, each node the AND of its parent's rows and a level's bitmap (empty nodes
    cut), each stratum's cells by :func:`_cells`."""
    m = zcols.shape[0]
    words = bits.shape[2]
    rx = cards[x]
    ry = cards[y]
    stride = np.empty(max(m, 1), np.int64)
    s = rx * ry
    for j in range(m - 1, -1, -1):
        stride[j] = s
        s *= cards[zcols[j]]
    buf = np.empty((m + 1, words), np.uint64)
    for w in range(words):
        buf[0, w] = ~np.uint64(0)
    tail = n - (words - 1) * 64
    if tail < 64:  # the rows past n are no stratum's
        buf[0, words - 1] = (np.uint64(1) << np.uint64(tail)) - np.uint64(1)
    if m == 0:
        _cells(buf[0], bits[y], bits[x], words, rx, ry, 0, table)
        return
    off = np.zeros(m + 1, np.int64)
    level = np.full(m + 1, -1, np.int64)
    d = 0
    while d >= 0:
        level[d] += 1
        v = zcols[d]
        lv_at = level[d]
        if lv_at >= cards[v]:
            d -= 1
            continue
        parent = buf[d]
        child = buf[d + 1]
        lv = bits[v, lv_at]
        c = np.uint64(0)
        for w in range(words):
            t = parent[w] & lv[w]
            child[w] = t
            c += _popcount(t)
        if c == 0:
            continue
        o = off[d] + lv_at * stride[d]
        if d == m - 1:
            _cells(child, bits[y], bits[x], words, rx, ry, o, table)
        else:
            off[d + 1] = o
            level[d + 1] = -1
            d += 1


@njit(cache=True, nogil=True)
def _scatter_table(codes, x, y, zcols, cards, table):  # pragma: no cover - compiled
    """Count the flat (z, x, y) ``table`` (zeroed) from the codes (p, n): the cells' codes
    column by column (vectorized), then one scatter of the rows into four copies of the
    table while they are small against the rows (repeated cells do not serialize)."""
    n = codes.shape[1]
    cells = table.shape[0]
    cell = np.zeros(n, np.int32)
    for j in range(zcols.shape[0]):
        card = np.int32(cards[zcols[j]])
        zc = codes[zcols[j]]
        for r in range(n):
            cell[r] = cell[r] * card + np.int32(zc[r])
    xc = codes[x]
    yc = codes[y]
    width = np.int32(cards[x] * cards[y])
    ry = np.int32(cards[y])
    for r in range(n):
        cell[r] = cell[r] * width + np.int32(xc[r]) * ry + np.int32(yc[r])
    if 4 * cells > n:
        for r in range(n):
            table[np.uint64(cell[r])] += 1
        return
    counts = np.zeros(4 * cells, np.uint32)
    c1 = np.uint64(cells)
    c2 = np.uint64(2 * cells)
    c3 = np.uint64(3 * cells)
    top = n - n % 4
    for r in range(0, top, 4):
        counts[np.uint64(cell[r])] += np.uint32(1)
        counts[c1 + np.uint64(cell[r + 1])] += np.uint32(1)
        counts[c2 + np.uint64(cell[r + 2])] += np.uint32(1)
        counts[c3 + np.uint64(cell[r + 3])] += np.uint32(1)
    for r in range(top, n):
        counts[np.uint64(cell[r])] += np.uint32(1)
    for c in range(cells):
        table[c] = np.int64(counts[c]) + counts[cells + c] + counts[2 * cells + c] \
            + counts[3 * cells + c]


@njit(cache=True, nogil=True)
def single_test(codes, bits, x, y, zcols, cards, rows, column, adjusted, min_per_cell,
                trust_min, max_bias, chi2):  # pragma: no cover - compiled
    """The results row (1, 6) of the test of column x against y given the columns
    ``zcols`` (int64) of the code matrix ``codes`` (p, n), and 1 where "auto" flagged it
    for calibration (as :func:`~mbstat.ci.tables._kernels.finish_tests`, whose arguments
    follow ``cards``); -1 (and an empty row) where the table has more cells than the
    rows fill densely (4 n, as :func:`~mbstat.ci.tables.counting._compiled_fits`), for
    the caller's general path. ``bits`` are the level bitmaps (p, levels, words), or
    (p, 0, 0) where the data has none."""
    n = codes.shape[1]
    rx = cards[x]
    ry = cards[y]
    rz = 1
    top = max(rx, ry)
    internal = 0
    for j in range(zcols.shape[0]):
        card = cards[zcols[j]]
        rz *= card
        top = max(top, card)
        internal += rz
    cells = rz * rx * ry
    if cells > 4 * n or cells >= 2**31 or n >= 2**32:
        return np.empty((0, 6)), -1
    table = np.zeros(cells, np.int64)
    words = bits.shape[2]
    if (top <= bits.shape[1] and words > 0
            and (internal + rz * ry) * words <= TREE_WORDS_PER_ROW * n):
        _tree_table(bits, n, x, y, zcols, cards, table)
    else:
        _scatter_table(codes, x, y, zcols, cards, table)
    stats = np.zeros((1, 4))
    _score(table, rz, rx, ry, stats[0])
    rxs = np.empty(1)
    rxs[0] = rx
    return finish_tests(stats, rxs, float(ry), float(rz), rows, column, adjusted,
                        min_per_cell, trust_min, max_bias, chi2)
