"""Compiled (numba) counting kernels for the CPU backend.

One pass over the rows per candidate fills its table; the statistics are
computed from the table in the same call, with no temporary arrays. Large
batches are split across threads. :mod:`._cuda` is the GPU twin; the numpy path
in :mod:`.counting` computes the same numbers for the tables neither kernel takes.
"""
from __future__ import annotations

import math
import os

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def mixed_radix(cols, cards):  # pragma: no cover - compiled
    """One int64 code per column of ``cols`` (m, n): sum_j cols[j] * prod(cards[j+1:])."""
    m, n = cols.shape
    out = np.zeros(n, np.int64)
    for j in range(m):  # column by column: vectorizes, no dependency chain across rows
        card = cards[j]
        for r in range(n):
            out[r] = out[r] * card + cols[j, r]
    return out


@njit(cache=True, nogil=True)
def _score(table, rz, rxm, ry, out):  # pragma: no cover - compiled
    """G2, X2, adjusted df and observed cells of one flat (rz, rxm, ry) table."""
    g2 = 0.0
    x2 = 0.0
    df_adj = 0.0
    cells = 0
    nxz = np.zeros(rxm, np.int64)
    nyz = np.zeros(ry, np.int64)
    for s in range(rz):
        off = s * rxm * ry
        nxz[:] = 0
        nyz[:] = 0
        nz = 0
        for a in range(rxm):
            for b in range(ry):
                c = table[off + a * ry + b]
                nxz[a] += c
                nyz[b] += c
                nz += c
        if nz == 0:
            continue
        rows = 0
        cols = 0
        for a in range(rxm):
            if nxz[a] > 0:
                rows += 1
        for b in range(ry):
            if nyz[b] > 0:
                cols += 1
        df_adj += max(rows - 1, 0) * max(cols - 1, 0)
        for a in range(rxm):
            if nxz[a] == 0:
                continue
            for b in range(ry):
                if nyz[b] == 0:
                    continue
                e = nxz[a] * nyz[b] / nz
                c = table[off + a * ry + b]
                if c > 0:
                    g2 += c * math.log(c / e)
                    cells += 1
                x2 += (c - e) * (c - e) / e
    out[0] = max(2.0 * g2, 0.0)
    out[1] = max(x2, 0.0)
    out[2] = df_adj
    out[3] = cells


@njit(cache=True, nogil=True)
def _subset_statistics(codes, subsets, cards, y, zcols, zcards, rxm, ry):  # pragma: no cover
    """Statistics of the k tables X_i x y | z, X_i the joint variable of columns subsets[i].

    ``codes`` is the (p, n) code matrix; joint codes are formed on the fly,
    column by column, in one scratch row. Returns (k, 4): G2, X2, adjusted
    df, observed cells.
    """
    k, s = subsets.shape
    n = codes.shape[1]
    m = zcols.shape[0]
    rz = 1
    base = np.zeros(n, np.int64)
    for j in range(m):  # column by column: vectorizes, no dependency chain across rows
        card = zcards[j]
        rz *= card
        for r in range(n):
            base[r] = base[r] * card + zcols[j, r]
    width = rxm * ry
    for r in range(n):
        base[r] = base[r] * width + y[r]
    out = np.zeros((k, 4))
    table = np.zeros(rz * rxm * ry, np.int64)
    joint = np.zeros(n, np.int64)
    for i in range(k):
        table[:] = 0
        if s == 1:
            col = subsets[i, 0]
            for r in range(n):
                table[base[r] + codes[col, r] * ry] += 1
        else:
            joint[:] = 0
            for j in range(s):
                col = subsets[i, j]
                card = cards[col]
                for r in range(n):
                    joint[r] = joint[r] * card + codes[col, r]
            for r in range(n):
                table[base[r] + joint[r] * ry] += 1
        _score(table, rz, rxm, ry, out[i])
    return out


#: Below this many row visits (candidates x rows x members) threads cost more than they save.
PARALLEL_MIN_WORK = 1 << 18
_pool = None


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def subset_statistics(codes, subsets, cards, y, zcols, zcards, rxm, ry):
    """Statistics of the tables X_i x y | z for the column subsets X_i (rows of ``subsets``).

    Returns an array (k, 4): G2, X2, adjusted df, observed cells. Large
    batches are split across a small pool of threads: the kernel releases the
    GIL, and plain threads (unlike numba's parallel layer) are safe when the
    caller runs its own threads, e.g. ``blankets(n_jobs=...)``.
    """
    global _pool
    args = (cards, y, zcols, zcards, rxm, ry)
    workers = min(_threads(), subsets.shape[0])
    if workers < 2 or subsets.size * codes.shape[1] < PARALLEL_MIN_WORK:
        return _subset_statistics(codes, subsets, *args)
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(max_workers=_threads(), thread_name_prefix="mbstat-count")
    parts = np.array_split(subsets, workers)
    futures = [_pool.submit(_subset_statistics, codes, part, *args) for part in parts]
    return np.concatenate([f.result() for f in futures])
