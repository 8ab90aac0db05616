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
by popcounts against y's and x's level bitmaps, x's last level as the rest of the cell.
Its cost is the tree's non-empty nodes times n / 64 words; where its bound exceeds
:data:`TREE_WORDS_PER_ROW` words per row, or a column has more levels than the bitmaps
hold, the caller's batch path (one scatter of the rows) counts instead. ALARM, 20,000
rows (313 words), |Z| = 0..3: 0.3-0.4 times the batch kernels' time for one candidate
(``benchmarks/ci_throughput.py``). Counting a node of few rows from its listed rows
and the codes instead of its subtree was tried (#25: taken where c rows times its
variables left plus 2 times K words is below the subtree's passes): K = 4, 16 and 64
measured |Z| = 3 at 0.81x, 0.92x and 0.99x the tree's speed (``--against``, load 0.9-1.9);
a popcount pass over a word costs less than a row's scattered code reads.

Compiled once, alone: the tree is inlined, ``finish_tests`` called by address in the
version the batch path compiles (:mod:`~mbstat.ci.tables._linked`). The call's own cost
counts at this size: its row is written into an array the caller made and a plain int
returned (a returned array is boxed with its dtype unpickled, ~1.5 us a call), and its
constants travel as two arrays (:func:`single_args`), five arguments to type a call.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from ..chi2 import CHI2
from ._kernels import _popcount, _score, finish_tests
from ._linked import Callee

__all__ = ["FINISH", "TREE_WORDS_PER_ROW", "single_args", "single_test"]

#: The tree counts a table while its bound (internal nodes plus the strata's cells, each
#: n / 64 words) stays within this many words per row; beyond, one scatter of the rows.
TREE_WORDS_PER_ROW = 16
#: Where the cardinalities start in :func:`single_test`'s ``consts`` (after the addresses).
_CARDS = 3


@njit(cache=True, nogil=True, inline="always")
def _tree_table(bits, n, x, y, zcols, cards, table):  # pragma: no cover - compiled
    """Count the flat (z, x, y) ``table`` (zeroed; z in mixed radix, first slowest) from
    the level bitmaps ``bits`` (p, levels, words) of n rows: depth first down z's
    variables, each node the AND of its parent's rows and a level's bitmap (empty nodes
    cut); at a stratum, per level of y one pass over the words, popcounts of x's levels
    but the last (the rest of the cell's rows). Inlined in :func:`single_test` (one
    compiled copy)."""
    m = zcols.shape[0]
    words = bits.shape[2]
    rx = cards[x]
    ry = cards[y]
    stride = np.empty(m + 1, np.int64)
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
    off = np.zeros(m + 1, np.int64)
    level = np.full(m + 1, -1, np.int64)
    ybits = bits[y]
    xbits = bits[x]
    d = 0
    while d >= 0:
        if d == m:  # a stratum (the root where z is empty): its cells
            st = buf[m]
            o = off[m]
            for b in range(ry):
                yb = ybits[b]
                if rx == 2:  # one accumulator per level: a single vectorized pass
                    c = np.uint64(0)
                    g0 = np.uint64(0)
                    x0 = xbits[0]
                    for w in range(words):
                        t = st[w] & yb[w]
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
                        t = st[w] & yb[w]
                        c += _popcount(t)
                        g0 += _popcount(t & x0[w])
                        g1 += _popcount(t & x1[w])
                    table[o + b] = np.int64(g0)
                    table[o + ry + b] = np.int64(g1)
                    table[o + 2 * ry + b] = np.int64(c - g0 - g1)
                else:
                    c = np.uint64(0)
                    for w in range(words):
                        c += _popcount(st[w] & yb[w])
                    rest = np.int64(c)
                    if rest == 0:
                        continue
                    for a in range(rx - 1):
                        xa = xbits[a]
                        got = np.uint64(0)
                        for w in range(words):
                            got += _popcount(st[w] & yb[w] & xa[w])
                        table[o + a * ry + b] = np.int64(got)
                        rest -= np.int64(got)
                    table[o + (rx - 1) * ry + b] = rest
            d -= 1
            continue
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
        off[d + 1] = off[d] + lv_at * stride[d]
        level[d + 1] = -1
        d += 1


@njit(cache=True, nogil=True)
def single_test(bits, cols, consts, params, out):  # pragma: no cover - compiled
    """Test column ``cols[0]`` (x) against ``cols[1]`` (y) given the columns ``cols[2:]``
    (z), counted from the level bitmaps ``bits`` (p, levels, words): its results row
    written into ``out`` (1, 6), and 1 returned where "auto" flagged it for calibration
    (else 0): :func:`~mbstat.ci.tables._kernels.finish_tests` of its statistics. -1 (and
    ``out`` untouched) where the batch path counts instead: more cells than the rows fill
    densely (4 n, as :func:`~mbstat.ci.tables.counting._compiled_fits`), a column of more
    levels than the bitmaps hold, or a tree of more than :data:`TREE_WORDS_PER_ROW` words
    per row. ``consts`` (int64) and ``params`` (float64): the data set's and the test's
    constants (:func:`single_args`). The row is written in place and a plain int
    returned: a returned array costs the call more than the test's arithmetic (boxing
    it unpickles its dtype each time)."""
    n = np.int64(params[5])
    cards = consts[_CARDS:]
    x = cols[0]
    y = cols[1]
    zcols = cols[2:]
    rx = cards[x]
    ry = cards[y]
    rz = np.int64(1)  # not a literal: _score would compile a second version for it
    top = max(rx, ry)
    internal = 0
    for j in range(zcols.shape[0]):
        card = cards[zcols[j]]
        rz *= card
        top = max(top, card)
        internal += rz
    cells = rz * rx * ry
    words = bits.shape[2]
    if (cells > 4 * n or cells >= 2**31 or n >= 2**32 or top > bits.shape[1]
            or (internal + rz * ry) * words > TREE_WORDS_PER_ROW * n):
        return -1
    table = np.zeros(cells, np.int64)
    _tree_table(bits, n, x, y, zcols, cards, table)
    stats = np.zeros((1, 4))
    _score(table, rz, rx, ry, stats[0])
    rxs = np.empty(1)
    rxs[0] = rx
    rows = np.empty(1)
    rows[0] = params[5]
    res, flagged = _CALL_FINISH(consts[2])(stats, rxs, float(ry), float(rz), rows,
                                           int(params[0]), params[1] != 0.0, params[2],
                                           params[3], params[4], (consts[0], consts[1]))
    for k in range(6):
        out[0, k] = res[0, k]
    return flagged


_F64 = types.Array(types.float64, 1, "C")
_F64_2 = types.Array(types.float64, 2, "C")
#: :func:`~mbstat.ci.tables._kernels.finish_tests` called by address
#: (:mod:`~mbstat.ci.tables._linked`), in the version the batch path calls (one compiled
#: copy for both, not re-optimized inside :func:`single_test`).
FINISH = Callee(finish_tests, types.Tuple((_F64_2, types.int64))(
    _F64_2, _F64, types.float64, types.float64, _F64, types.int64, types.boolean,
    types.float64, types.float64, types.float64, types.UniTuple(types.int64, 2)))
_CALL_FINISH = FINISH.call


def single_args(cards: np.ndarray, n_rows: int, column: int, adjusted: bool,
                min_per_cell: float, trust_min: float,
                max_bias: float) -> tuple[np.ndarray, np.ndarray]:
    """The constant arguments ``consts, params`` of :func:`single_test`, made once per data
    set and test (two arrays to type per call, not six): ``consts`` (int64) the addresses
    of the chi-square's C functions (:data:`~mbstat.ci.chi2.CHI2`) and :data:`FINISH`'s
    (compiled or loaded on the first call in a process), then the columns' levels
    ``cards``; ``params`` (float64) the statistic's column (0 G2, 1 X2), adjusted df,
    min_per_cell, trust_min, max_bias and the rows."""
    consts = np.concatenate([np.array([*CHI2, FINISH.address()], dtype=np.int64),
                             np.asarray(cards, dtype=np.int64)])
    params = np.array([column, float(adjusted), min_per_cell, trust_min, max_bias,
                       float(n_rows)])
    return consts, params
