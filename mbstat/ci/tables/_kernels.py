"""Compiled (numba) counting kernels for the CPU backend.

One pass over the rows per candidate fills its table; the statistics are
computed from the table in the same call, with no temporary arrays. Large
batches are split across threads. :mod:`._cuda` is the GPU twin; the numpy path
in :mod:`.counting` computes the same numbers for the tables neither kernel takes.
"""
from __future__ import annotations

import math
import os
import threading
from functools import lru_cache

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from ..._bitmaps import BIT_LEVELS, level_bits  # noqa: F401 (Dataset.level_bits; tests)
from ..._progress import interruptible
from ..chi2 import _lentz, _log_q, _sf_logsf
from ._linked import Callee, addresses
from ._table_moments import CACHE_ENTRIES, CACHE_KEYS, G2_MOMENTS, TABLE_MOMENTS, cell_cache


@intrinsic
def _popcount(typingctx, word):  # pragma: no cover - compiled
    """Number of set bits of a uint64 (the CPU's popcnt, vectorized by LLVM where it can)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _trailing_zeros(typingctx, word):  # pragma: no cover - compiled
    """Position of the lowest set bit of a non-zero uint64 (the CPU's tzcnt)."""

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, True))

    return types.uint64(types.uint64), codegen


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


#: Codes of the ``calibration`` column (positions in :data:`mbstat.ci.result.CALIBRATIONS`).
ASYMPTOTIC = 0.0
SEMIPARAMETRIC = 1.0
EXACT = 3.0
SKIPPED = 4.0
#: A stratum takes the chi-square's moments (see :func:`_stratum_kind`) only where every
#: expected count is at least this (Cochran's rule for the chi-square approximation).
DENSE_EXPECTED = 5.0
#: The calibration's moments of the strata not permuted: G2 and X2 means, their variances,
#: then their shifts (the values of strata whose statistics are constant under the law).
MOMENTS = 6


@njit(cache=True, nogil=True)
def finish_tests(stats, rx, ry, rz_declared, rows, column, adjusted, min_per_cell, trust_min,
                 max_bias, chi2):  # pragma: no cover - compiled
    """The results (k, 6) of contingency tests from their tables' statistics ``stats``
    (k, 4: G2, X2, adjusted df, cells): statistic (``stats[:, column]``), df, p-value,
    log p-value, mutual information (G2 / 2n) and the calibration code; and the number of
    tests coded SEMIPARAMETRIC. ``rows`` holds each test's rows (k,), or one count for
    all (1,) (test-wise deletion gives each test its own).

    df is bnlearn's (|X| - 1)(|Y| - 1) prod |Z|, or the adjusted df; a df of 0 (a
    one-level X, or every stratum with one non-empty row or column: G2 = X2 = 0) has
    nothing to test (statistic 0, df 0, p 1, as bnlearn 4.9's ``mi-adf``/``x2-adf``). With ``min_per_cell`` >= 0, tests with
    fewer rows than that many per cell are skipped (statistic 0, p 1, mi 0; code
    SKIPPED). With ``trust_min`` >= 0, the other tests whose chi-square approximation
    cannot be trusted get the code SEMIPARAMETRIC (their p-value is the asymptotic one,
    for the caller to replace): fewer than ``trust_min`` rows per cell of the full table
    (declared levels), or a small-sample bias of G2 above ``max_bias`` standard
    deviations of the chi-square, the bias estimated as Williams (1976) does for tables
    of equal margins: df (1 + 1/|X|)(1 + 1/|Y|) / (6 m), m rows per cell.
    """
    k = stats.shape[0]
    out = np.empty((k, 6))
    flagged = 0
    for i in range(k):
        n = rows[i] if rows.shape[0] == k else rows[0]
        declared = (rx[i] - 1.0) * ((ry - 1.0) * rz_declared)
        if adjusted:
            df = stats[i, 2]
        else:
            df = declared
        statistic = stats[i, column]
        if df > 0.0:
            p, log_p = _sf_logsf(df, statistic, chi2)
        else:
            df, statistic, p, log_p = 0.0, 0.0, 1.0, 0.0
        mi = stats[i, 0] / (2.0 * n)
        code = ASYMPTOTIC
        cells = rx[i] * ry * rz_declared
        if min_per_cell >= 0.0 and n < min_per_cell * cells:
            statistic, p, log_p, mi, code = 0.0, 1.0, 0.0, 0.0, SKIPPED
        elif trust_min >= 0.0 and df > 0.0 and declared > 0.0:
            per_cell = n / cells
            bias = declared * (1.0 + 1.0 / rx[i]) * (1.0 + 1.0 / ry) / (6.0 * per_cell)
            if per_cell < trust_min or bias > max_bias * math.sqrt(2.0 * declared):
                code = SEMIPARAMETRIC
                flagged += 1
        out[i, 0] = statistic
        out[i, 1] = df
        out[i, 2] = p
        out[i, 3] = log_p
        out[i, 4] = mi
        out[i, 5] = code
    return out, flagged


@njit(cache=True, nogil=True)
def _score(table, rz, rxm, ry, out):  # pragma: no cover - compiled
    """G2, X2, adjusted df and observed cells of one flat (rz, rxm, ry) table.

    With m = n_x+ n_+y and the stratum's total t, a cell's expected count is m / t, so
    log(c / e) = log1p((c t - m) / m) (log((c t) / m) where c / e is far from 1) and
    (c - e)^2 / e = (c t - m)^2 / (m t), where c t - m is an exact integer (as a float
    below 9e7 rows): no rounded expected count, no cancellation near independence
    (more digits than scipy's xlogy(c, c / e)).
    """
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
        x2s = 0.0
        for a in range(rxm):
            if nxz[a] == 0:
                continue
            for b in range(ry):
                if nyz[b] == 0:
                    continue
                m = nxz[a] * nyz[b]
                c = table[off + a * ry + b]
                if c > 0:
                    d = np.float64(c * nz - m)
                    if abs(d) < 0.25 * m:  # near independence: log1p keeps every digit
                        g2 += c * math.log1p(d / m)
                    else:  # log is 2.5 times faster, and as exact away from 1
                        g2 += c * math.log(np.float64(c * nz) / m)
                    x2s += d * d / m
                    cells += 1
                else:  # (0 - m)^2 / m
                    x2s += m
        x2 += x2s / nz
    out[0] = max(2.0 * g2, 0.0)
    out[1] = max(x2, 0.0)
    out[2] = df_adj
    out[3] = cells


@njit(cache=True, nogil=True)
def _scatter(counts, base, xcode, ry, cells, four):  # pragma: no cover - compiled
    """Add each row to cell base[r] + xcode[r] * ry of ``counts``.

    With ``four``, rows go round-robin to four copies of the table (laid end to
    end), so that repeated cells do not serialize on one counter; unsigned index
    arithmetic spares numba's negative-index checks (together about 2x faster).
    """
    n = base.shape[0]
    ury = np.uint64(ry)
    if not four:
        for r in range(n):
            counts[np.uint64(base[r]) + np.uint64(xcode[r]) * ury] += np.uint32(1)
        return
    c1 = np.uint64(cells)
    c2 = np.uint64(2 * cells)
    c3 = np.uint64(3 * cells)
    m = n - n % 4
    for r in range(0, m, 4):
        counts[np.uint64(base[r]) + np.uint64(xcode[r]) * ury] += np.uint32(1)
        counts[c1 + np.uint64(base[r + 1]) + np.uint64(xcode[r + 1]) * ury] += np.uint32(1)
        counts[c2 + np.uint64(base[r + 2]) + np.uint64(xcode[r + 2]) * ury] += np.uint32(1)
        counts[c3 + np.uint64(base[r + 3]) + np.uint64(xcode[r + 3]) * ury] += np.uint32(1)
    for r in range(m, n):
        counts[np.uint64(base[r]) + np.uint64(xcode[r]) * ury] += np.uint32(1)


@njit(cache=True, nogil=True)
def _strata_codes(zsrc, zrows, zcards, n):  # pragma: no cover - compiled
    """The stratum of every row (int32, mixed radix of the rows ``zrows`` of ``zsrc``, first
    slowest; cells < 2**31, the callers check) and the number of strata."""
    base = np.zeros(n, np.int32)
    rz = 1
    for j in range(zrows.shape[0]):  # column by column: vectorizes, no chain across rows
        card = np.int32(zcards[j])
        rz *= zcards[j]
        zcol = zsrc[zrows[j]]
        for r in range(n):
            base[r] = base[r] * card + np.int32(zcol[r])
    return base, rz


@njit(cache=True, nogil=True)
def _subset_statistics(codes, subsets, cards, y, zsrc, zrows, zcards,
                       rxm, ry):  # pragma: no cover - compiled
    """Statistics of the k tables X_i x y | z, X_i the joint variable of columns subsets[i].

    ``codes`` is the (p, n) code matrix; joint codes are formed on the fly,
    column by column, in one scratch row. The strata's columns are the rows
    ``zrows`` of ``zsrc`` (the code matrix itself, or compressed strata codes), read
    in place. Returns (k, 4): G2, X2, adjusted df, observed cells.
    """
    k, s = subsets.shape
    n = codes.shape[1]
    base, rz = _strata_codes(zsrc, zrows, zcards, n)
    width = np.int32(rxm * ry)
    for r in range(n):
        base[r] = base[r] * width + np.int32(y[r])
    out = np.zeros((k, 4))
    cells = rz * rxm * ry
    four = 4 * cells <= n  # four table copies pay while they are small against the rows
    counts = np.zeros(4 * cells if four else cells, np.uint32)
    table = np.zeros(cells, np.int64)
    joint = np.zeros(n if s > 1 else 0, np.int64)
    for i in range(k):
        counts[:] = 0
        if s == 1:
            _scatter(counts, base, codes[subsets[i, 0]], ry, cells, four)
        else:
            joint[:] = 0
            for j in range(s):
                col = subsets[i, j]
                card = cards[col]
                for r in range(n):
                    joint[r] = joint[r] * card + codes[col, r]
            _scatter(counts, base, joint, ry, cells, four)
        if four:
            for c in range(cells):
                table[c] = (counts[c] + counts[cells + c]) + (counts[2 * cells + c]
                                                              + counts[3 * cells + c])
        else:
            for c in range(cells):
                table[c] = counts[c]
        _score(table, rz, rxm, ry, out[i])
    return out


#: Batches smaller than :data:`HYBRID_MIN_BATCH` go to the bitmap kernel while their
#: query has at most this many (z, y) cells: a cell costs about n / 64 words (1 ns each),
#: the scatter kernel about n rows (1.25 ns each; 6 + 0.3 per cell against 25
#: microseconds, one candidate, ALARM, 20,000 rows).
FEW_CELLS = 64


@njit(cache=True, nogil=True)
def _and_count(a, b):  # pragma: no cover - compiled
    acc = np.uint64(0)
    for w in range(a.shape[0]):
        acc += _popcount(a[w] & b[w])
    return acc


@njit(cache=True, nogil=True)
def _count_cell(table, xbits, mask, c, total, rx, rxm, ry):  # pragma: no cover - compiled
    """Fill cell c = z * |Y| + y of the flat (z, x, y) table: x = 0..rx-2 by popcounts of
    X's level bitmaps ``xbits`` against the cell's row ``mask``, the last x as the rest."""
    s = c // ry
    b = c - s * ry
    rest = total
    for a in range(rx - 1):
        got = np.int64(_and_count(xbits[a], mask))
        table[(s * rxm + a) * ry + b] = got
        rest -= got
    table[(s * rxm + rx - 1) * ry + b] = rest


@njit(cache=True, nogil=True)
def _classify_cells(ncell, limit):  # pragma: no cover - compiled
    """Heavy cells (more than ``limit`` rows) of a query: each cell's index among them
    (-1 for light cells), the heavy cells in order, and the rows of the light ones."""
    heavy = np.full(ncell.shape[0], -1, np.int64)
    n_heavy = 0
    n_light = 0
    for c in range(ncell.shape[0]):
        if ncell[c] > limit:
            heavy[c] = n_heavy
            n_heavy += 1
        else:
            n_light += ncell[c]
    heavy_cells = np.empty(n_heavy, np.int64)
    for c in range(ncell.shape[0]):
        if heavy[c] >= 0:
            heavy_cells[heavy[c]] = c
    return heavy, heavy_cells, n_light


@njit(cache=True, nogil=True)
def _bitmap_cells(bits, cards, yi, zcols, rxm, limit):  # pragma: no cover - compiled
    """The (z, y) cells of a query for :func:`_cell_statistics`, from the level bitmaps.

    Each cell's row bitmap is the AND of its levels' bitmaps (strata first, in mixed
    radix, first z slowest); cells of more than ``limit`` rows keep their bitmap
    (heavy), the rows of the others are listed in row order with their table offsets
    (light), read off the bitmaps by trailing-zero counts. Cheaper than
    :func:`_hybrid_cells`'s pass over the rows while the cells are few. Returns
    (ncell, heavy_cells, masks, light_rows, light_base, rz).
    """
    words = bits.shape[2]
    ry = cards[yi]
    rz = 1
    for j in range(zcols.shape[0]):
        rz *= cards[zcols[j]]
    strata = np.empty((rz, words), np.uint64)
    strata[0, :] = ~np.uint64(0)
    filled = 1
    for j in range(zcols.shape[0]):
        col = zcols[j]
        card = cards[col]
        for s in range(filled - 1, -1, -1):  # descending: strata[s] is read before overwritten
            for lv in range(card - 1, -1, -1):
                target = strata[s * card + lv]
                src = strata[s]
                lvbits = bits[col, lv]
                for w in range(words):
                    target[w] = src[w] & lvbits[w]
        filled *= card
    n_cells = rz * ry
    cell_bits = np.empty((n_cells, words), np.uint64)
    ncell = np.zeros(n_cells, np.int64)
    for s in range(rz):
        for b in range(ry):
            c = s * ry + b
            ybits = bits[yi, b]
            acc = np.uint64(0)
            for w in range(words):
                m = strata[s, w] & ybits[w]
                cell_bits[c, w] = m
                acc += _popcount(m)
            ncell[c] = acc
    heavy, heavy_cells, n_light = _classify_cells(ncell, limit)
    masks = np.empty((heavy_cells.shape[0], words), np.uint64)
    light_rows = np.empty(n_light, np.int64)
    light_base = np.empty(n_light, np.int64)
    rows = np.empty(n_light, np.int64)  # light rows cell by cell, then put in row order
    bases = np.empty(n_light, np.int64)
    starts = np.zeros(words + 1, np.int64)  # light rows per word, then where each word starts
    j = 0
    for c in range(n_cells):
        if heavy[c] >= 0:
            for w in range(words):  # a loop: a slice assignment compiles numba's message
                masks[heavy[c], w] = cell_bits[c, w]
        elif ncell[c] > 0:
            s = c // ry
            base = s * rxm * ry + (c - s * ry)
            for w in range(words):
                m = cell_bits[c, w]
                while m:
                    rows[j] = (w << 6) + np.int64(_trailing_zeros(m))
                    bases[j] = base
                    starts[w + 1] += 1
                    j += 1
                    m &= m - np.uint64(1)
    for w in range(words):
        starts[w + 1] += starts[w]
    for i in range(n_light):  # row order: consecutive rows rarely hit the same counter
        w = rows[i] >> 6
        light_rows[starts[w]] = rows[i]
        light_base[starts[w]] = bases[i]
        starts[w] += 1
    return ncell, heavy_cells, masks, light_rows, light_base, rz


@njit(cache=True, nogil=True)
def _cell_statistics(codes, bits, xcols, cards, ry, rxm, rz, ncell, heavy_cells, masks,
                     light_rows, light_base):  # pragma: no cover - compiled
    """Statistics of the tables X_i x Y | Z for single columns X_i, given the query's cells.

    Cell ``heavy_cells[h]`` (= z * |Y| + y) is counted by popcounts of X's level bitmaps
    against its row bitmap ``masks[h]``, the last level of X as the cell's rest; the
    rows ``light_rows`` of the other cells are scattered to ``light_base + x * |Y|``.
    Returns (k, 4) like :func:`_subset_statistics`.
    """
    k = xcols.shape[0]
    out = np.zeros((k, 4))
    table = np.zeros(rz * rxm * ry, np.int64)
    ury = np.uint64(ry)
    for i in range(k):
        col = xcols[i]
        rx = cards[col]
        xc = codes[col]
        table[:] = 0
        for j in range(light_rows.shape[0]):
            table[np.uint64(light_base[j]) + np.uint64(xc[light_rows[j]]) * ury] += 1
        for h in range(heavy_cells.shape[0]):
            c = heavy_cells[h]
            if ncell[c] > 0:
                _count_cell(table, bits[col], masks[h], c, ncell[c], rx, rxm, ry)
        _score(table, rz, rxm, ry, out[i])
    return out


#: A (z, y) cell is counted by popcounts when it holds more than this many rows per
#: popcount pass ((|X| - 1) passes of n / 64 words); lighter cells by scattering their rows.
HEAVY_ROWS_PER_WORD = 0.2
#: Building a query's cells (20-40 microseconds from the bitmaps, 60-90 from the rows)
#: against 6-9 microseconds per candidate counted, 14-27 scattered (ALARM, 20,000 rows,
#: |Z| = 3): smaller batches of larger tables go to the scatter kernel.
HYBRID_MIN_BATCH = 8
#: Queries with at most this many (z, y) cells build them from the level bitmaps (one
#: AND pass of n / 64 words per cell), more from one pass over the rows.
BITMAP_SETUP_CELLS = 192
#: Each thread takes at least this many candidates (on 16 cores, splitting 33 candidates
#: 16 ways cost more than it saved); the scatter kernel's threads also repeat its setup.
CELL_MIN_SHARE = 4
SCATTER_MIN_SHARE = 4


@njit(cache=True, nogil=True)
def _hybrid_cells(codes, words, cards, yi, zcols, rxm, limit):  # pragma: no cover
    """The (z, y) cells of a query for :func:`_cell_statistics`, rows grouped once.

    Heavy cells (more than ``limit`` rows) get a row bitmap; the rows of light cells
    are listed with their table offsets. Skewed data (most rows in a few cells) thus
    costs each candidate a few popcount passes plus a fraction of the rows. Returns
    (ncell, heavy_cells, masks, light_rows, light_base, rz).
    """
    n = codes.shape[1]
    ry = cards[yi]
    cell, rz = _strata_codes(codes, zcols, cards[zcols], n)
    yc = codes[yi]
    nry = np.int32(ry)
    for r in range(n):
        cell[r] = cell[r] * nry + np.int32(yc[r])
    n_cells = rz * ry
    ncell = np.zeros(n_cells, np.int64)
    for r in range(n):
        ncell[np.uint64(cell[r])] += 1
    heavy, heavy_cells, n_light = _classify_cells(ncell, limit)
    masks = np.zeros((heavy_cells.shape[0], words), np.uint64)
    light_rows = np.empty(n_light, np.int64)
    light_base = np.empty(n_light, np.int64)
    width = rxm * ry
    j = 0
    for r in range(n):
        c = cell[r]
        h = heavy[c]
        if h >= 0:
            masks[h, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
        else:
            light_rows[j] = r
            s = c // ry
            light_base[j] = s * width + (c - s * ry)
            j += 1
    return ncell, heavy_cells, masks, light_rows, light_base, rz


#: Below this many row visits (candidates x rows x members) threads cost more than they save.
PARALLEL_MIN_WORK = 1 << 18
_pool = None


@lru_cache(maxsize=1)
def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _split(kernel, items, work, min_share=1):
    """Run ``kernel(items)``, the batch dealt round-robin to a small pool of threads when
    ``work`` (row visits) is worth it and each thread gets ``min_share`` items or more: the
    kernels release the GIL, and plain threads (unlike numba's parallel layer) are safe
    when the caller runs its own threads, e.g. ``blankets(n_jobs=...)``. A Ctrl-C during a
    compiled call is raised as a KeyboardInterrupt (:func:`interruptible`)."""
    global _pool
    if work < PARALLEL_MIN_WORK or items.shape[0] < 2 * min_share or _threads() < 2:
        return interruptible(kernel, items)
    workers = min(_threads(), items.shape[0] // min_share)
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(max_workers=_threads(), thread_name_prefix="mbstat-count")
    parts = [items[k::workers] for k in range(workers)]  # dealt, not cut: neighbours in a
    # batch cost alike (a column's levels, a stratum's sparseness), so contiguous shares
    # are uneven (hailfinder, 5,000 rows, iamb over every node: 2.03 -> 1.80 s on 2 cores)
    futures = [_pool.submit(kernel, part) for part in parts[1:]]
    first = interruptible(kernel, parts[0])  # the calling thread takes a share too
    out = np.empty((items.shape[0], *first.shape[1:]), dtype=first.dtype)
    out[::workers] = first
    for k, future in enumerate(futures, 1):
        out[k::workers] = future.result()
    return out


def subset_statistics(codes, subsets, cards, y, zsrc, zrows, zcards, rxm, ry):
    """Statistics of the tables X_i x y | z for the column subsets X_i (rows of ``subsets``),
    z's columns being the rows ``zrows`` of ``zsrc``.

    Returns an array (k, 4): G2, X2, adjusted df, observed cells.
    """
    if subsets.shape[0] < 2 * SCATTER_MIN_SHARE:  # one thread: no closure, no pool
        return _subset_statistics(codes, subsets, cards, y, zsrc, zrows, zcards, rxm, ry)
    return _split(lambda part: _subset_statistics(codes, part, cards, y, zsrc, zrows, zcards,
                                                  rxm, ry),
                  subsets, subsets.size * codes.shape[1], min_share=SCATTER_MIN_SHARE)


def _query_cells(codes, bits, cards, yi, zcols, rxm, limit, from_bits):
    """The setup of :func:`_cell_statistics`: from the level bitmaps or from the rows
    (chosen here, not in compiled code, so that only the kernel used is compiled)."""
    if from_bits:
        return _bitmap_cells(bits, cards, yi, zcols, rxm, limit)
    return _hybrid_cells(codes, bits.shape[2], cards, yi, zcols, rxm, limit)


@njit(cache=True, nogil=True)
def _bitmap_statistics(codes, bits, xcols, cards, yi, zcols, rxm,
                       limit):  # pragma: no cover - compiled
    """:func:`_cell_statistics` after :func:`_bitmap_cells`, in one compiled call."""
    ncell, heavy_cells, masks, light_rows, light_base, rz = _bitmap_cells(
        bits, cards, yi, zcols, rxm, limit)
    return _cell_statistics(codes, bits, xcols, cards, cards[yi], rxm, rz, ncell, heavy_cells,
                            masks, light_rows, light_base)


@njit(cache=True, nogil=True)
def _hybrid_statistics(codes, bits, xcols, cards, yi, zcols, rxm,
                       limit):  # pragma: no cover - compiled
    """:func:`_cell_statistics` after :func:`_hybrid_cells`, in one compiled call."""
    ncell, heavy_cells, masks, light_rows, light_base, rz = _hybrid_cells(
        codes, bits.shape[2], cards, yi, zcols, rxm, limit)
    return _cell_statistics(codes, bits, xcols, cards, cards[yi], rxm, rz, ncell, heavy_cells,
                            masks, light_rows, light_base)



def cell_statistics(codes, bits, xcols, cards, yi, zcols, rxm, n_cells):
    """Statistics of the tables X_i x Y | Z for single columns X_i (an int64 array) by
    popcounts of level bitmaps: the query's ``n_cells`` (z, y) cells are built once
    (heavy ones as row bitmaps, light ones as row lists; from the level bitmaps while
    they number at most :data:`BITMAP_SETUP_CELLS`, else by one pass over the rows),
    then the candidates are counted, split across threads where that pays. Returns
    (k, 4)."""
    ry = int(cards[yi])
    words = bits.shape[2]
    limit = (rxm - 1) * words * HEAVY_ROWS_PER_WORD
    from_bits = n_cells <= BITMAP_SETUP_CELLS
    if len(xcols) < 2 * CELL_MIN_SHARE or _threads() < 2:  # one thread: one call
        kernel = _bitmap_statistics if from_bits else _hybrid_statistics
        return kernel(codes, bits, xcols, cards, yi, zcols, rxm, limit)
    ncell, heavy_cells, masks, light_rows, light_base, rz = _query_cells(
        codes, bits, cards, yi, zcols, rxm, limit, from_bits)
    work = len(xcols) * (len(light_rows) + (rxm - 1) * len(heavy_cells) * words // 4)
    return _split(lambda part: _cell_statistics(codes, bits, part, cards, ry, rxm, rz, ncell,
                                                heavy_cells, masks, light_rows, light_base),
                  xcols, work, min_share=CELL_MIN_SHARE)


# ------------------------------------------------------------ permutation null
@njit(cache=True, nogil=True)
def _next_random(state):  # pragma: no cover - compiled
    """splitmix64: the next state and its 64-bit output (a full-period generator that
    passes BigCrush; each test seeds its own, so results do not depend on test order)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _permuted_sums(xid, which, group_first, groups, group_scale, inv_row, dclogc,
                   cnt):  # pragma: no cover - compiled
    """Sums over the cells of the strata ``which`` of c log c (G2) and of c^2 N_z / (n_x n_y)
    (X2), for rows in (stratum, y) order with x ids ``xid`` (one id per (stratum, x)
    level), group by group: each row raises its cell's count c by one, adding
    (c+1) log(c+1) - c log c (``dclogc[c]``) and (2c + 1) / n_x; then the counters are
    cleared."""
    g = 0.0
    x = 0.0
    for s in which:
        for k in range(group_first[s], group_first[s + 1]):
            a, b = groups[k], groups[k + 1]
            xg = 0.0
            for i in range(a, b):
                j = xid[i]
                c = cnt[j]
                g += dclogc[c]
                xg += (2 * c + 1) * inv_row[j]
                cnt[j] = c + 1
            x += xg * group_scale[k]
            for i in range(a, b):
                cnt[xid[i]] = 0
    return g, x


@njit(cache=True, nogil=True)
def content_seeds(words):  # pragma: no cover - compiled
    """One uint64 seed per row of ``words`` (k, m) uint64: splitmix64 folded over the row's
    words (each word xor-ed into the state, then mixed), so that a seed depends on every
    word and on their order; a few nanoseconds a test, the same on every platform."""
    k, m = words.shape
    out = np.empty(k, np.uint64)
    for t in range(k):
        state = np.uint64(0)
        for j in range(m):
            _, state = _next_random(state ^ words[t, j])
        out[t] = state
    return out


@njit(cache=True, nogil=True)
def _hypergeometric_weights(r1, c1, big_n, weights):  # pragma: no cover - compiled
    """The cumulative weights (unnormalized) of :func:`_hypergeometric_pmf`, in place;
    returns (lo, number of support points)."""
    lo, m = _hypergeometric_pmf(r1, c1, big_n, weights)
    for i in range(1, m):
        weights[i] += weights[i - 1]
    return lo, m


@njit(cache=True, nogil=True)
def _hypergeometric_pmf(r1, c1, big_n, weights):  # pragma: no cover - compiled
    """The weights (unnormalized) of cell (1, 1) of a 2 x 2 table with both
    margins fixed, written to ``weights`` (at least min(r1, c1) + 1 long), over its support
    lo..hi: the law Hypergeometric(N, r1, c1) of the number of a stratum's c1 rows of the
    first y level that hold the first x level, when the x codes are permuted. Returns
    (lo, number of support points). The pmf ratio recursion runs out from the mode
    (weight 1), so no weight overflows and no log-gamma is needed; far tails underflow to 0
    (never drawn); each to full relative precision, however small (the tails' sums need
    them); :func:`_hypergeometric_weights` sums them (two functions, not a flag argument,
    whose constant values numba would compile separately)."""
    lo = max(0, r1 + c1 - big_n)
    hi = min(r1, c1)
    m = hi - lo + 1
    mode = min(max((r1 + 1) * (c1 + 1) // (big_n + 2), lo), hi)
    base = big_n - r1 - c1
    weights[mode - lo] = 1.0
    for k in range(mode, hi):  # pmf(k + 1) / pmf(k)
        weights[k + 1 - lo] = (weights[k - lo] * ((r1 - k) * (c1 - k + 0.0))
                               / ((k + 1.0) * (base + k + 1.0)))
    for k in range(mode, lo, -1):  # pmf(k - 1) / pmf(k)
        weights[k - 1 - lo] = (weights[k - lo] * (k * (base + k + 0.0))
                               / ((r1 - k + 1.0) * (c1 - k + 1.0)))
    return lo, m


@njit(cache=True, nogil=True)
def _inverse_cdf(cum, first, m, rnd):  # pragma: no cover - compiled
    """The support index drawn by inverse transform from the cumulative weights
    ``cum[first:first + m]`` with the 64-bit random word ``rnd``: the first index whose
    cumulative weight exceeds u times the total, u = the word's top 53 bits / 2**53 in
    [0, 1) (binary search; an index of weight 0 is never returned)."""
    u = np.float64(rnd >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    target = u * cum[first + m - 1]
    a = 0
    b = m - 1  # the answer lies in [a, b]: cum[first + b] = total > target (u < 1)
    while a < b:
        mid = (a + b) // 2
        if cum[first + mid] > target:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True, nogil=True)
def clogc_table(n):  # pragma: no cover - compiled
    """c log c for c = 0..n + 1 (0 log 0 = 0): formed once per batch of tests."""
    clogc = np.zeros(n + 2)
    for c in range(2, n + 2):
        clogc[c] = c * math.log(c)
    return clogc


@njit(cache=True, nogil=True)
def _dense_stratum(big_n, r, c, min_x, min_y, dense_min):  # pragma: no cover - compiled
    """Whether a stratum of N = ``big_n`` rows, ``r`` x ``c`` observed levels and least
    margins ``min_x``, ``min_y`` takes the chi-square's moments (:func:`_stratum_kind`):
    with ``dense_min`` > 0, at ``dense_min`` rows per cell or more and every expected
    count at least :data:`DENSE_EXPECTED`."""
    return (dense_min > 0.0 and big_n >= dense_min * r * c
            and min_x * min_y >= DENSE_EXPECTED * big_n)


@njit(cache=True, nogil=True)
def _stratum_kind(big_n, r, c, inv_x, inv_y, min_x, min_y, dense_min,
                  moments):  # pragma: no cover - compiled
    """Whether a stratum of N = ``big_n`` rows, ``r`` x levels and ``c`` y levels (the sums
    of the inverses of its margins ``inv_x``, ``inv_y``, its least margins ``min_x``,
    ``min_y``) is permuted: not where (r - 1)(c - 1) = 0 (its statistic is 0 in every
    permutation), nor, with ``dense_min`` > 0, at ``dense_min`` rows per cell or more and
    every expected count at least :data:`DENSE_EXPECTED`, whose chi-square moments are
    added to ``moments`` instead: mean (r - 1)(c - 1) for G2 plus Williams' (1976)
    correction from the margins, N / (N - 1) (r - 1)(c - 1) for X2 (exact), variance
    2 (r - 1)(c - 1). Williams' expansion needs every expected count moderate: a rare
    level in a dense stratum (ALARM: margins (346, 9, 11) x (320, 44, 2), 41 rows per cell,
    least expected count 0.05) put its G2 mean at 10.45 where the law's is 3.08."""
    df = (r - 1.0) * (c - 1.0)
    if df == 0.0:
        return False
    if _dense_stratum(big_n, r, c, min_x, min_y, dense_min):
        moments[0] += df + (big_n * inv_x - 1.0) * (big_n * inv_y - 1.0) / (6.0 * big_n)
        moments[1] += big_n / (big_n - 1.0) * df
        moments[2] += 2.0 * df
        moments[3] += 2.0 * df
        return False
    return True


@njit(cache=True, nogil=True)
def _two_by_two(margins):  # pragma: no cover - compiled
    """The draws' tables of the 2 x 2 strata of ``margins`` (h, 5: n1+, n2+, n+1, n+2, N;
    level 1 the lower code): their cumulative weights laid end to end (``cum``), each
    one's start (``first``, h + 1) and lowest n11 (``low``), and N / (n_x+ n_+y) of its
    four cells (``inv``, h x 4: 11, 12, 21, 22) for X2."""
    h = margins.shape[0]
    span = 0
    for i in range(h):
        span += min(margins[i, 0], margins[i, 2]) + 1
    cum = np.empty(span)
    first = np.zeros(h + 1, np.int64)
    low = np.empty(h, np.int64)
    inv = np.empty((h, 4))
    for i in range(h):
        r1, r2, c1, c2, big_n = (margins[i, 0], margins[i, 1], margins[i, 2], margins[i, 3],
                                 margins[i, 4])
        low[i], m = _hypergeometric_weights(r1, c1, big_n, cum[first[i]:])
        first[i + 1] = first[i] + m
        inv[i, 0] = big_n / (r1 * c1)
        inv[i, 1] = big_n / (r1 * c2)
        inv[i, 2] = big_n / (r2 * c1)
        inv[i, 3] = big_n / (r2 * c2)
    return cum, first, low, inv


@njit(cache=True, nogil=True)
def _cell_sums(a, margins, inv, clogc):  # pragma: no cover - compiled
    """The sums over the cells of a 2 x 2 table of c log c (G2) and c^2 N / (n_x n_y) (X2),
    from its cell n11 = ``a``, its ``margins`` (n1+, n2+, n+1, n+2, N) and ``inv``
    (N / (n_x n_y) of the cells 11, 12, 21, 22)."""
    c12 = margins[0] - a
    c21 = margins[2] - a
    c22 = margins[1] - c21
    return (clogc[a] + clogc[c12] + clogc[c21] + clogc[c22],
            a * a * inv[0] + c12 * c12 * inv[1] + c21 * c21 * inv[2] + c22 * c22 * inv[3])


@njit(cache=True, nogil=True)
def _two_by_two_laws(margins, clogc):  # pragma: no cover - compiled
    """The exact null laws of the 2 x 2 strata of ``margins`` (h, 5, see :func:`_two_by_two`):
    each one's G2 and X2 over its hypergeometric support (``g``, ``x``) and their
    probabilities (``prob``), laid end to end, stratum i at ``first[i]:first[i + 1]``."""
    cum, first, low, inv = _two_by_two(margins)
    g_val = np.empty(cum.shape[0])
    x_val = np.empty(cum.shape[0])
    prob = np.empty(cum.shape[0])
    for h in range(margins.shape[0]):
        r1, r2, c1, c2, big_n = (margins[h, 0], margins[h, 1], margins[h, 2], margins[h, 3],
                                 margins[h, 4])
        const = clogc[r1] + clogc[r2] + clogc[c1] + clogc[c2] - clogc[big_n]
        _hypergeometric_pmf(r1, c1, big_n, prob[first[h]:])  # not differences
        total = cum[first[h + 1] - 1]
        for i in range(first[h], first[h + 1]):
            prob[i] /= total
            g, x = _cell_sums(low[h] + i - first[h], margins[h], inv[h], clogc)
            g_val[i] = 2.0 * (g - const)
            x_val[i] = x - big_n
    return g_val, x_val, prob, first


@njit(cache=True, nogil=True)
def _two_by_two_moments(margins, clogc, moments):  # pragma: no cover - compiled
    """Add to ``moments`` (G2 and X2 means, then variances) the exact null moments of the
    2 x 2 strata of ``margins`` (h, 5, see :func:`_two_by_two`): sums over each one's
    hypergeometric support (:func:`_two_by_two_laws`), what B permutations estimate (the
    semiparametric calibration needs no more)."""
    g_val, x_val, prob, first = _two_by_two_laws(margins, clogc)
    for h in range(margins.shape[0]):
        for c in range(2):
            val = g_val if c == 0 else x_val
            mean = 0.0
            for i in range(first[h], first[h + 1]):
                mean += prob[i] * val[i]
            var = 0.0
            for i in range(first[h], first[h + 1]):
                var += prob[i] * (val[i] - mean) ** 2
            moments[c] += mean
            moments[2 + c] += var


#: The saddlepoint tail (:func:`saddlepoint_tail`) serves statistics at least this many
#: of its w (the signed root of the likelihood ratio) above the null mean; nearer the mean
#: its 1/u - 1/w term cancels, and the scaled chi-square is as good there.
SADDLE_MIN_W = 0.5


@njit(cache=True, nogil=True)
def _cumulants(t, val, prob, first, top, scale, shape):  # pragma: no cover - compiled
    """K(t), K'(t), K''(t) of a sum of independent discrete variables (stratum i takes
    ``val[first[i]:first[i + 1]]`` with ``prob``, its largest value ``top[i]``) plus a
    scaled chi-square ``scale`` chi2(``shape``) (none when shape is 0). Each stratum's
    sum of p e^{t v} is formed as e^{t top} times a sum of terms at most 1 (t >= 0)."""
    k0 = 0.0
    k1 = 0.0
    k2 = 0.0
    for h in range(first.shape[0] - 1):
        a = 0.0
        b = 0.0
        c = 0.0
        for i in range(first[h], first[h + 1]):
            d = val[i] - top[h]
            e = prob[i] * math.exp(t * d)
            a += e
            b += e * d
            c += e * d * d
        m = b / a
        k0 += t * top[h] + math.log(a)
        k1 += top[h] + m
        k2 += max(c / a - m * m, 0.0)
    if shape > 0.0:
        q = 1.0 - 2.0 * scale * t
        k0 -= 0.5 * shape * math.log(q)
        k1 += shape * scale / q
        k2 += 2.0 * shape * scale * scale / (q * q)
    return k0, k1, k2


@njit(cache=True, nogil=True)
def _log_upper_normal(w, u):  # pragma: no cover - compiled
    """log(1 - Phi(w) + phi(w) (1/u - 1/w)), the Lugannani-Rice tail, accurate for large w:
    there 1 - Phi(w) = phi(w) R(w), R the Mills ratio, from its continued fraction (Lentz;
    1 / (w + 1 / (w + 2 / (w + ...))), fast for w >= 5; :func:`~mbstat.ci.chi2._lentz`). NaN where the tail is not in (0, 1]."""
    log_phi = -0.5 * w * w - 0.9189385332046728  # log(1 / sqrt(2 pi))
    if w < 5.0:
        p = 0.5 * math.erfc(w / math.sqrt(2.0)) + math.exp(log_phi) * (1.0 / u - 1.0 / w)
        if p <= 0.0 or p > 1.0:
            return np.nan
        return math.log(p)
    f = w
    c = w
    d = 0.0
    for k in range(1, 200):  # f = w + 1 / (w + 2 / (w + ...)) (every term positive)
        c, d, delta = _lentz(float(k), w, c, d)
        f *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    bracket = 1.0 / f + 1.0 / u - 1.0 / w
    if bracket <= 0.0:
        return np.nan
    return log_phi + math.log(bracket)


#: The exact law of the 2 x 2 strata (:func:`exact_tail`) is enumerated while it has at most
#: this many distinct values (atoms merged after each stratum); past that, the saddlepoint.
EXACT_MAX_ATOMS = 4096
#: ... and is begun only where :func:`_atoms_bound` allows at most this many. Values of
#: different strata may coincide, so the bound is loose (12 strata of 2 to 7 rows: 20,736
#: against 79 values), but an enumeration begun in vain costs its sorts: at 65,536, IAMB
#: at 20,000 wide features took 3.6 s against 1.8 s (the level is the same, see
#: benchmarks/calibration_tail.py).
EXACT_MAX_BOUND = 4096


@njit(cache=True, nogil=True)
def _log_chi2_sf(x, scale, shape):  # pragma: no cover - compiled
    """log P(scale chi2(shape) >= x): the regularized upper incomplete gamma Q(shape/2,
    x/(2 scale)), by its series (as 1 - P) below a + 1, its continued fraction above
    (:func:`_log_q`, finite however small Q is)."""
    if x <= 0.0:
        return 0.0
    a = 0.5 * shape
    xx = 0.5 * x / scale
    if xx >= a + 1.0:
        return _log_q(a, xx)
    term = 1.0 / a
    total = term
    for k in range(1, 1000):
        term *= xx / (a + k)
        total += term
        if term < total * 1e-17:
            break
    return math.log1p(-math.exp(a * math.log(xx) - xx - math.lgamma(a) + math.log(total)))


@njit(cache=True, nogil=True)
def _convolved(val, prob, first, max_atoms):  # pragma: no cover - compiled
    """The law of the sum of independent discrete variables (stratum i takes
    ``val[first[i]:first[i + 1]]`` with ``prob``): its values (sorted) and probabilities,
    values within 1e-9 (relative) of each other merged after each stratum; empty arrays
    once it has more than ``max_atoms`` values."""
    values = np.zeros(1)
    probs = np.ones(1)
    for j in range(first.shape[0] - 1):
        m = first[j + 1] - first[j]
        if values.shape[0] * m > 8 * max_atoms:
            return np.zeros(0), np.zeros(0)
        sums = np.empty(values.shape[0] * m)
        mass = np.empty(values.shape[0] * m)
        for a in range(values.shape[0]):
            for i in range(m):
                sums[a * m + i] = values[a] + val[first[j] + i]
                mass[a * m + i] = probs[a] * prob[first[j] + i]
        order = np.argsort(sums)
        values = np.empty(sums.shape[0])
        probs = np.empty(sums.shape[0])
        n = 0
        for o in order:
            if n > 0 and sums[o] - values[n - 1] <= 1e-9 * max(1.0, abs(sums[o])):
                probs[n - 1] += mass[o]
            else:
                values[n] = sums[o]
                probs[n] = mass[o]
                n += 1
        if n > max_atoms:
            return np.zeros(0), np.zeros(0)
        values = values[:n]
        probs = probs[:n]
    return values, probs


@njit(cache=True, nogil=True)
def _atoms_bound(margins, val, first):  # pragma: no cover - compiled
    """An upper bound on log(number of values) of the sum of the 2 x 2 strata's statistics
    (stratum i takes ``val[first[i]:first[i + 1]]``): strata of one law (the same margins
    up to swapping levels or transposing) count as one class; k strata of a law of m
    distinct values (a symmetric law, r1 = r2 or c1 = c2, takes each value twice) sum to
    at most C(k + m - 1, m - 1) values."""
    h = margins.shape[0]
    keys = np.empty(h)  # float64 holding integers below 2**53 (strata of up to 200,000
    # rows; a permuted stratum has fewer than 4 dense_min): exact, sorted as the integers
    # are, by the one argsort that :func:`_convolved` compiles too
    for j in range(h):
        big_n = margins[j, 4]
        r = min(margins[j, 0], margins[j, 1])
        c = min(margins[j, 2], margins[j, 3])
        keys[j] = (min(r, c) * (big_n + 1) + max(r, c)) * (big_n + 1) + big_n
    order = np.argsort(keys)
    bound = 0.0
    k = 0
    for i in range(h):
        j = order[i]
        k += 1
        if i + 1 == h or keys[order[i + 1]] != keys[j]:
            m = 0
            for a in range(first[j], first[j + 1]):  # distinct values (within 1e-9)
                seen = False
                for b in range(first[j], a):
                    seen = seen or abs(val[a] - val[b]) <= 1e-9 * max(1.0, abs(val[a]))
                m += 0 if seen else 1
            bound += math.lgamma(k + m) - math.lgamma(m) - math.lgamma(k + 1.0)
            k = 0
    return bound


@njit(cache=True, nogil=True)
def exact_tail(s, val, prob, first, mean, var, max_atoms):  # pragma: no cover - compiled
    """log P(S >= s), S as in :func:`saddlepoint_tail`, from the enumerated law of the
    discrete part (:func:`_convolved`): the sum of the probabilities of its values at
    least s (within 1e-7 relative: the statistic was summed in another order), or, with a
    scaled chi-square part of ``mean`` and ``var`` (continuous: no tolerance), the sum over
    the values a of P(a) P(c chi2(k) >= s - a) (log-sum-exp). NaN where the law has more than
    ``max_atoms`` values or the tail underflows."""
    values, probs = _convolved(val, prob, first, max_atoms)
    if values.shape[0] == 0:
        return np.nan
    cut = s - 1e-7 * max(1.0, abs(s))
    if not (var > 0.0 and mean > 0.0):
        p = 0.0
        for a in range(values.shape[0]):
            if values[a] >= cut:
                p += probs[a]
        return math.log(min(p, 1.0)) if p > 0.0 else np.nan
    scale = var / (2.0 * mean)
    shape = 2.0 * mean * mean / var
    terms = np.empty(values.shape[0])
    top = -np.inf
    for a in range(values.shape[0]):
        terms[a] = (math.log(probs[a]) + _log_chi2_sf(s - values[a], scale, shape)
                    if probs[a] > 0.0 else -np.inf)
        top = max(top, terms[a])
    if top == -np.inf:
        return np.nan
    total = 0.0
    for a in range(values.shape[0]):
        total += math.exp(terms[a] - top)
    return min(top + math.log(total), 0.0)


@njit(cache=True, nogil=True)
def two_by_two_tail(s, val, prob, first, mean, var, margins):  # pragma: no cover
    """(log p, calibration code) of the statistic ``s`` whose permuted strata are all 2 x 2
    (laws as in :func:`saddlepoint_tail`; ``margins`` as in :func:`_two_by_two`), the
    other strata's part of null ``mean`` and ``var`` a scaled chi-square: the enumerated
    tail (:func:`exact_tail`), EXACT where there is no other part (the permutation p-value
    itself, B -> infinity), SEMIPARAMETRIC beside a chi-square part; where the law has more
    than :data:`EXACT_MAX_ATOMS` values (or may have more than :data:`EXACT_MAX_BOUND`,
    :func:`_atoms_bound`: not begun) the saddlepoint tail (SEMIPARAMETRIC); NaN where
    neither applies (the caller keeps the scaled chi-square)."""
    log_p = np.nan
    if _atoms_bound(margins, val, first) <= math.log(EXACT_MAX_BOUND):
        log_p = exact_tail(s, val, prob, first, mean, var, EXACT_MAX_ATOMS)
    if log_p == log_p:
        return log_p, EXACT if not (var > 0.0 and mean > 0.0) else SEMIPARAMETRIC
    return saddlepoint_tail(s, val, prob, first, mean, var), SEMIPARAMETRIC


@njit(cache=True, nogil=True)
def saddlepoint_tail(s, val, prob, first, mean, var):  # pragma: no cover - compiled
    """log P(S >= s) for S the sum of independent discrete variables (stratum i takes
    ``val[first[i]:first[i + 1]]`` with probabilities ``prob``) plus an independent
    part of null ``mean`` and variance ``var``, a scaled chi-square c chi2(k) with those
    moments (as :func:`~mbstat.ci.tables.contingency.semiparametric`; none where var is 0).

    The Lugannani-Rice approximation (Daniels 1987; Butler 2007, eq. 1.21): with K the
    cumulant generating function of S and t the root of K'(t) = s (safeguarded Newton in a
    bracket), w = sqrt(2 (t s - K(t))), u = t sqrt(K''(t)),
    P(S >= s) ~ 1 - Phi(w) + phi(w) (1/u - 1/w). A statistic at the largest value the
    discrete part can take (nothing dense) gets its exact tail, the product of the strata's
    probabilities of their largest values. NaN (the caller falls back) below
    :data:`SADDLE_MIN_W` or where the approximation breaks down (a tail outside (0, 1])."""
    h = first.shape[0] - 1
    top = np.empty(h)
    mu = mean
    v2 = var
    for j in range(h):
        top[j] = -np.inf
        m = 0.0
        for i in range(first[j], first[j + 1]):
            top[j] = max(top[j], val[i])
            m += prob[i] * val[i]
        mu += m
        for i in range(first[j], first[j + 1]):
            v2 += prob[i] * (val[i] - m) ** 2
    scale = 0.0
    shape = 0.0
    if var > 0.0 and mean > 0.0:
        scale = var / (2.0 * mean)
        shape = 2.0 * mean * mean / var
    tol = 1e-9 * max(1.0, abs(s))
    if not v2 > 0.0 or not s > mu + tol:
        return np.nan
    if shape == 0.0:
        high = 0.0
        for j in range(h):
            high += top[j]
        if s >= high - tol * (h + 1):  # at the top: exact
            log_p = 0.0
            for j in range(h):
                pj = 0.0
                for i in range(first[j], first[j + 1]):
                    if val[i] >= top[j] - tol:
                        pj += prob[i]
                log_p += math.log(pj)
            return log_p
    lo = 0.0
    hi = np.inf
    if shape > 0.0:
        hi = 1.0 / (2.0 * scale)
    else:
        hi = 1.0 / math.sqrt(v2)
        for _ in range(200):  # K' rises to the top value: a bracket by doubling
            if _cumulants(hi, val, prob, first, top, scale, shape)[1] > s:
                break
            lo = hi
            hi *= 2.0
    t = min((s - mu) / v2, 0.5 * (lo + hi))
    for _ in range(200):
        k0, k1, k2 = _cumulants(t, val, prob, first, top, scale, shape)
        if k1 > s:
            hi = t
        else:
            lo = t
        if abs(k1 - s) <= 1e-12 * max(1.0, s) or hi - lo <= 1e-15 * hi:
            break
        step = t - (k1 - s) / k2 if k2 > 0.0 else -1.0
        t = step if lo < step < hi else 0.5 * (lo + hi)
    k0, k1, k2 = _cumulants(t, val, prob, first, top, scale, shape)
    w2 = 2.0 * (t * s - k0)
    if not w2 > SADDLE_MIN_W * SADDLE_MIN_W or not k2 > 0.0:
        return np.nan
    return _log_upper_normal(math.sqrt(w2), t * math.sqrt(k2))


@njit(cache=True, nogil=True)
def _permute(out, seed, which, two, margins, clogc, strata, work, shuffled, group_first,
             groups, group_scale, inv_row, cnt, part_const, part_n):  # pragma: no cover
    """Fill ``out[1:]`` (B, 2) with G2 and X2 of B permutations of the strata ``which``:
    those flagged in ``two`` (2 x 2, ``margins`` in order, see :func:`_two_by_two`) drawn
    as one hypergeometric cell each, the others (``shuffled``, their rows in ``work``)
    shuffled by Fisher-Yates and counted by :func:`_permuted_sums`; ``part_const`` and
    ``part_n`` are the permuted strata's constants of G2 and X2. One splitmix64 stream
    seeded by ``seed`` serves the strata in order: one word per 2 x 2 stratum, one per row
    after the first of the others."""
    cum, first, low, inv = _two_by_two(margins)
    dclogc = clogc[1:] - clogc[:-1]
    state = np.uint64(seed)
    for b in range(1, out.shape[0]):
        g = 0.0
        x = 0.0
        h = 0
        for w in range(which.shape[0]):
            if two[w]:  # one hypergeometric cell, the table from the margins
                state, rnd = _next_random(state)
                a = low[h] + _inverse_cdf(cum, first[h], first[h + 1] - first[h], rnd)
                gh, xh = _cell_sums(a, margins[h], inv[h], clogc)
                g += gh
                x += xh
                h += 1
                continue
            st = which[w]
            lo = strata[st]
            for i in range(strata[st + 1] - 1, lo, -1):  # Fisher-Yates within the stratum
                state, rnd = _next_random(state)
                width = np.uint64(i - lo + 1)
                j = lo + np.int64(((rnd >> np.uint64(32)) * width) >> np.uint64(32))
                t = work[i]
                work[i] = work[j]
                work[j] = t
        if shuffled.shape[0]:
            gs, xs = _permuted_sums(work, shuffled, group_first, groups, group_scale, inv_row,
                                    dclogc, cnt)
            g += gs
            x += xs
        out[b, 0] = max(2.0 * (g - part_const), 0.0)
        out[b, 1] = max(x - part_n, 0.0)


@njit(cache=True, nogil=True)
def permutation_statistics(xid, groups, group_n, group_stratum, strata, stratum_n, row_n,
                           n_ids, id_code, B, seed, dense_min, clogc, addrs, keys,
                           entries):  # pragma: no cover - compiled
    """G2 and X2 of the observed table and of B tables with x permuted within the strata
    of z, margins fixed: (out (B + 1, 2), moments (:data:`MOMENTS`,)).

    ``out[0]`` is the observed table's; ``out[1:]`` the permuted sums over the strata
    that are permuted, and ``moments`` the null mean of G2 and X2, their variances and
    their shifts (:data:`MOMENTS`) of the others, which need no permutation
    (:func:`_stratum_kind`): strata of one x level or one y level, and with ``dense_min``
    > 0, strata of at least ``dense_min`` rows per (non-empty) cell, where the chi-square
    holds, and strata whose exact moments are known (:func:`_table_moments`: a constant
    stratum adds a shift).

    The rows come sorted by (stratum, y): ``groups`` holds the starts of the (stratum, y)
    groups (and the end), ``group_n`` their sizes and ``group_stratum`` their stratum,
    ``strata`` the starts of the strata (and the end), ``stratum_n`` their sizes. ``xid``
    numbers the (stratum, x) levels 0..n_ids-1 in order, ``row_n`` their sizes and
    ``id_code`` their x codes. ``clogc``: :func:`clogc_table` of at least the largest
    stratum.

    A permutation of x within a stratum, y fixed, draws the stratum's table from its law
    with both margins fixed (the law of R's ``r2dtable``, Patefield 1981). A permuted
    stratum whose table is 2 x 2 (two x and two y levels) is therefore drawn as one cell,
    n11 ~ Hypergeometric(N, n1+, n+1), by inverse transform from its cumulative weights
    (:func:`_hypergeometric_weights`, formed once): O(log N) a permutation. The other
    permuted strata shuffle ``xid`` (Fisher-Yates) and count the cells group by group with
    one scratch counter per id: O(rows) a permutation (:func:`_permute`). With
    ``dense_min`` > 0 (the semiparametric calibration, which needs only the moments) the
    2 x 2 strata add their exact moments (:func:`_two_by_two_moments`) and are not drawn.
    ``addrs``: the callees' addresses (:data:`CALLEES`); ``keys``, ``entries``: the cells'
    cache of :func:`~mbstat.ci.tables._table_moments._g2_moments`.
    """
    n = xid.shape[0]
    n_strata = stratum_n.shape[0]
    dclogc = clogc[1:] - clogc[:-1]
    inv_row = 1.0 / row_n
    group_scale = np.empty(group_n.shape[0])
    group_first = np.zeros(n_strata + 1, np.int64)  # the groups of stratum s: a range
    for k in range(group_n.shape[0]):
        group_scale[k] = stratum_n[group_stratum[k]] / group_n[k]
        group_first[group_stratum[k] + 1] = k + 1
    id_first = np.zeros(n_strata + 1, np.int64)  # the ids of stratum s: a range
    for st in range(n_strata):
        id_first[st + 1] = xid[strata[st + 1] - 1] + 1
        for i in range(strata[st], strata[st + 1]):
            id_first[st + 1] = max(id_first[st + 1], xid[i] + 1)
    # per stratum: G2's constant (margins), its class and, for the unpermuted, the moments
    const = np.zeros(n_strata)
    permuted = np.zeros(n_strata, np.bool_)
    moments = np.zeros(MOMENTS)
    for st in range(n_strata):
        inv_x = 0.0
        min_x = stratum_n[st]
        for j in range(id_first[st], id_first[st + 1]):
            const[st] += clogc[row_n[j]]
            inv_x += 1.0 / row_n[j]
            min_x = min(min_x, row_n[j])
        inv_y = 0.0
        min_y = stratum_n[st]
        for k in range(group_first[st], group_first[st + 1]):
            const[st] += clogc[group_n[k]]
            inv_y += 1.0 / group_n[k]
            min_y = min(min_y, group_n[k])
        const[st] -= clogc[stratum_n[st]]
        r = id_first[st + 1] - id_first[st]
        c = group_first[st + 1] - group_first[st]
        permuted[st] = _stratum_kind(stratum_n[st], r, c, inv_x, inv_y, min_x, min_y,
                                     dense_min, moments)
        if permuted[st] and dense_min > 0.0 and (r != 2 or c != 2):  # exact moments
            permuted[st] = not _CALL_TABLE_MOMENTS(addrs[_TABLE_MOMENTS])(
                row_n[id_first[st]:id_first[st + 1]],
                group_n[group_first[st]:group_first[st + 1]], stratum_n[st], clogc, moments,
                addrs[_G2_MOMENTS], keys, entries)
    which = np.flatnonzero(permuted)
    two = np.zeros(which.shape[0], np.bool_)  # the 2 x 2 permuted strata are drawn
    margins = np.empty((which.shape[0], 5), np.int64)
    h = 0
    for w in range(which.shape[0]):
        st = which[w]
        i1, k1 = id_first[st], group_first[st]
        if id_first[st + 1] - i1 != 2 or group_first[st + 1] - k1 != 2:
            continue
        two[w] = True
        lower = i1 if id_code[i1] < id_code[i1 + 1] else i1 + 1  # level 1: the lower code
        margins[h, 0], margins[h, 1] = row_n[lower], row_n[2 * i1 + 1 - lower]
        margins[h, 2], margins[h, 3] = group_n[k1], group_n[k1 + 1]
        margins[h, 4] = stratum_n[st]
        h += 1
    if dense_min > 0.0 and h > 0:  # semiparametric: the 2 x 2 strata's exact moments
        _CALL_TWO_BY_TWO_MOMENTS(addrs[_TWO_BY_TWO_MOMENTS])(margins[:h], clogc, moments)
        which = which[~two]
        two = two[~two]
        h = 0
    cnt = np.zeros(n_ids, np.int64)
    out = np.empty((B + 1, 2))
    g, x = _permuted_sums(xid, np.arange(n_strata), group_first, groups, group_scale, inv_row,
                          dclogc, cnt)
    out[0, 0] = max(2.0 * (g - const.sum()), 0.0)
    out[0, 1] = max(x - n, 0.0)
    part_const = 0.0
    part_n = 0.0
    for st in which:
        part_const += const[st]
        part_n += stratum_n[st]
    _CALL_PERMUTE(addrs[_PERMUTE])(out, seed, which, two, margins[:h], clogc, strata,
                                   xid.copy(), which[~two], group_first, groups, group_scale,
                                   inv_row, cnt, part_const, part_n)
    return out, moments


@njit(cache=True, nogil=True)
def _stratum_margins(table, off, rx, ry, nx, ny):  # pragma: no cover - compiled
    """The x and y margins of the stratum at ``table[off:off + rx * ry]`` into ``nx``,
    ``ny``."""
    nx[:] = 0
    ny[:] = 0
    for a in range(rx):
        for b in range(ry):
            c = table[off + a * ry + b]
            nx[a] += c
            ny[b] += c


@njit(cache=True, nogil=True)
def _table_drawable(table, rz, rx, ry, nx, ny, dense_min):  # pragma: no cover - compiled
    """Whether :func:`_table_null` can serve the counted ``table`` (z, x, y), checked from
    the margins before any statistic is formed: always with ``dense_min`` > 0 (a stratum
    larger than 2 x 2 takes the chi-square's or its exact moments; one whose exact
    moments fail their bound is found in :func:`_table_null`), else (the Monte Carlo
    calibration) where no permuted stratum is larger than 2 x 2. ``nx``, ``ny``: work
    space (rx,), (ry,)."""
    if dense_min > 0.0:
        return True
    cells = rx * ry
    for s in range(rz):
        _stratum_margins(table, s * cells, rx, ry, nx, ny)
        r = 0
        for a in range(rx):
            r += nx[a] > 0
        c_levels = 0
        for b in range(ry):
            c_levels += ny[b] > 0
        if r >= 2 and c_levels >= 2 and (r != 2 or c_levels != 2):
            return False
    return True


@njit(cache=True, nogil=True)
def _table_null(x, y, z, rx, ry, rz, B, seed, dense_min, clogc, tail, addrs, keys,
                entries):  # pragma: no cover - compiled
    """:func:`permutation_statistics` from the counted table (z, x, y) alone, no sorting,
    where every permuted stratum is 2 x 2 (the common case of sparse binary data); the
    same statistics and the same draws. Returns (out, moments, done, found): ``done``
    False (and nothing computed) where a permuted stratum is larger: it needs its rows
    shuffled.

    ``tail`` (4,): the statistic s, its column (0 G2, 1 X2) and the null mean and variance
    of strata not among the rows (a data set in partitions). With ``dense_min`` > 0 and s
    not NaN, ``found`` (2,) is (log P(S >= s), calibration code) under the permutations, S
    the sum of the 2 x 2 strata's exact laws and of a scaled chi-square with the other
    strata's moments (:func:`two_by_two_tail`); else (no permuted stratum: the scaled
    chi-square alone) NaN. ``addrs``: the callees' addresses (:data:`CALLEES`); ``keys``,
    ``entries``: the cells' cache (:func:`permutation_statistics`)."""
    n = x.shape[0]
    cells = rx * ry
    table = np.zeros(rz * cells, np.int64)
    for r in range(n):
        table[(np.int64(z[r]) * rx + np.int64(x[r])) * ry + np.int64(y[r])] += 1
    nx = np.zeros(rx, np.int64)
    ny = np.zeros(ry, np.int64)
    moments = np.zeros(MOMENTS)
    margins = np.empty((rz, 5), np.int64)
    which = np.empty(rz, np.int64)
    out = np.empty((B + 1, 2))
    h = 0
    if not _table_drawable(table, rz, rx, ry, nx, ny, dense_min):
        return out, moments, False, np.full(2, np.nan)
    g = 0.0
    xs = 0.0
    part_const = 0.0
    part_n = 0.0
    for s in range(rz):
        off = s * cells
        _stratum_margins(table, off, rx, ry, nx, ny)
        big_n = np.int64(0)  # int64 from the start: a literal 0 would make numba compile
        r = np.int64(0)  # the callees once more for it while it types the loop
        inv_x = 0.0
        const = 0.0
        a1 = -1
        x_low = np.int64(1) << 62
        for a in range(rx):
            if nx[a] > 0:
                big_n += nx[a]
                r += 1
                inv_x += 1.0 / nx[a]
                const += clogc[nx[a]]
                x_low = min(x_low, nx[a])
                if a1 < 0:
                    a1 = a
        if big_n == 0:
            continue
        c_levels = np.int64(0)
        inv_y = 0.0
        b1 = -1
        y_low = np.int64(1) << 62
        for b in range(ry):
            if ny[b] > 0:
                c_levels += 1
                inv_y += 1.0 / ny[b]
                const += clogc[ny[b]]
                y_low = min(y_low, ny[b])
                if b1 < 0:
                    b1 = b
        const -= clogc[big_n]
        for a in range(rx):  # the observed statistics, as _permuted_sums forms them
            for b in range(ry):
                c = table[off + a * ry + b]
                if c > 0:
                    g += clogc[c]
                    xs += c * c * (big_n / (nx[a] * ny[b]))
        g -= const
        xs -= big_n
        if not _stratum_kind(big_n, r, c_levels, inv_x, inv_y, x_low, y_low, dense_min,
                             moments):
            continue
        if r != 2 or c_levels != 2:
            if dense_min > 0.0 and _CALL_TABLE_MOMENTS(addrs[_TABLE_MOMENTS])(
                    nx[nx > 0], ny[ny > 0], big_n, clogc, moments, addrs[_G2_MOMENTS], keys,
                    entries):
                continue  # exact moments, nothing to draw
            return out, moments, False, np.full(2, np.nan)
        margins[h, 0], margins[h, 2], margins[h, 4] = nx[a1], ny[b1], big_n
        margins[h, 1], margins[h, 3] = big_n - nx[a1], big_n - ny[b1]
        which[h] = s
        part_const += const
        part_n += big_n
        h += 1
    out[0, 0] = max(2.0 * g, 0.0)
    out[0, 1] = max(xs, 0.0)
    found = np.full(2, np.nan)
    if dense_min > 0.0 and h > 0 and tail[0] == tail[0]:  # the tail of the whole law
        column = np.int64(tail[1])
        g_val, x_val, prob, first = _two_by_two_laws(margins[:h], clogc)
        found[0], found[1] = _CALL_TWO_BY_TWO_TAIL(addrs[_TWO_BY_TWO_TAIL])(
            tail[0] - moments[4 + column], g_val if column == 0 else x_val, prob, first,
            moments[column] + tail[2], moments[2 + column] + tail[3], margins[:h])
    if dense_min > 0.0:  # semiparametric: exact moments, nothing to draw
        _CALL_TWO_BY_TWO_MOMENTS(addrs[_TWO_BY_TWO_MOMENTS])(margins[:h], clogc, moments)
        h = 0
        part_const = 0.0
        part_n = 0.0
    none = np.zeros(0, np.int64)
    _CALL_PERMUTE(addrs[_PERMUTE])(out, seed, which[:h], np.ones(h, np.bool_), margins[:h],
                                   clogc, none, none, none, none, none, np.zeros(0),
                                   np.zeros(0), none, part_const, part_n)
    return out, moments, True, found


@njit(cache=True, nogil=True)
def _counting_order(keys, n_keys, order):  # pragma: no cover - compiled
    """Reorder ``order`` stably by ``keys[order]`` (values in [0, n_keys))."""
    start = np.zeros(n_keys + 1, np.int64)
    for i in range(order.shape[0]):
        start[keys[order[i]] + 1] += 1
    for k in range(n_keys):
        start[k + 1] += start[k]
    out = np.empty_like(order)
    for i in range(order.shape[0]):
        r = order[i]
        out[start[keys[r]]] = r
        start[keys[r]] += 1
    return out


@njit(cache=True, nogil=True)
def permutation_setup(x, y, z, rx, ry, rz):  # pragma: no cover - compiled
    """The arguments of :func:`permutation_statistics` for codes x in [0, rx), y in
    [0, ry), z in [0, rz) (n,): rows sorted by (z, y) (two counting sorts), the starts of
    the (z, y) groups and of the strata, the (stratum, x) ids of the sorted rows, their
    sizes, number and x codes."""
    n = x.shape[0]
    order = _counting_order(z, rz, _counting_order(y, ry, np.arange(n)))
    groups = np.empty(n + 1, np.int64)
    strata = np.empty(n + 1, np.int64)
    n_groups = 0
    n_strata = 0
    xid = np.empty(n, np.int64)
    slot = np.full(rx, -1, np.int64)  # id of level x in the current stratum
    row_n = np.zeros(n, np.int64)
    id_code = np.empty(n, np.int64)  # the x code of each id
    n_ids = 0
    s0 = 0
    for i in range(n):
        r = order[i]
        if i == 0 or z[r] != z[order[i - 1]]:
            for j in range(s0, i):  # forget the previous stratum's levels
                slot[x[order[j]]] = -1
            s0 = i
            strata[n_strata] = i
            n_strata += 1
            groups[n_groups] = i
            n_groups += 1
        elif y[r] != y[order[i - 1]]:
            groups[n_groups] = i
            n_groups += 1
        if slot[x[r]] < 0:
            slot[x[r]] = n_ids
            id_code[n_ids] = x[r]
            n_ids += 1
        xid[i] = slot[x[r]]
        row_n[xid[i]] += 1
    groups[n_groups] = n
    strata[n_strata] = n
    groups = groups[: n_groups + 1].copy()
    strata = strata[: n_strata + 1].copy()
    group_n = np.empty(n_groups, np.int64)
    group_stratum = np.empty(n_groups, np.int64)
    s = 0
    for k in range(n_groups):
        group_n[k] = groups[k + 1] - groups[k]
        while strata[s + 1] <= groups[k]:
            s += 1
        group_stratum[k] = s
    stratum_n = np.empty(n_strata, np.int64)
    for s in range(n_strata):
        stratum_n[s] = strata[s + 1] - strata[s]
    return (xid, groups, group_n, group_stratum, strata, stratum_n, row_n[:n_ids].copy(), n_ids,
            id_code[:n_ids].copy())


# ------------------------------------------- tables over some rows: test-wise deletion, partitions
@njit(cache=True, nogil=True)
def _count_rows(table, codes, miss, subset, cards, base, ry):  # pragma: no cover - compiled
    """Add to ``table`` the rows r with ``base[r]`` >= 0 (y and z observed: the offset of
    the row's (z, y) cell) whose columns ``subset`` are observed (``miss`` (p, n), or
    (0, 0) when every cell is); returns how many rows were counted."""
    n = base.shape[0]
    check = miss.shape[0] > 0
    s = subset.shape[0]
    ury = np.uint64(ry)
    counted = 0
    for r in range(n):
        b = base[r]
        if b < 0:
            continue
        xc = np.uint64(0)
        ok = True
        for j in range(s):
            col = subset[j]
            if check and miss[col, r]:
                ok = False
                break
            xc = xc * np.uint64(cards[col]) + np.uint64(codes[col, r])
        if ok:
            table[np.uint64(b) + xc * ury] += 1
            counted += 1
    return counted


@njit(cache=True, nogil=True)
def masked_statistics(codes, miss, subsets, cards, base, rz, rxm, ry):  # pragma: no cover
    """Statistics (k, 5: G2, X2, adjusted df, cells, rows) of the tables X_i x Y | Z over
    the rows complete for the test's own columns (test-wise deletion): ``base`` is the
    (z, y) cell offset of each row, -1 where y or z is missing; rows where a column of
    X_i is missing (``miss`` (p, n)) are left out too. One pass over the rows a candidate."""
    k = subsets.shape[0]
    cells = rz * rxm * ry
    table = np.zeros(cells, np.int64)
    out = np.zeros((k, 5))
    for i in range(k):
        table[:] = 0
        out[i, 4] = _count_rows(table, codes, miss, subsets[i], cards, base, ry)
        _score(table, rz, rxm, ry, out[i, :4])
    return out


@njit(cache=True, nogil=True)
def declared_base(codes, miss, cards, yi, zcols, rxm, ry):  # pragma: no cover - compiled
    """The (z, y) cell offset of each row over the declared strata of the columns ``zcols``
    (mixed radix, first slowest), -1 where y or a column of z is missing."""
    n = codes.shape[1]
    base = np.zeros(n, np.int64)
    for j in range(zcols.shape[0]):  # column by column: vectorizes
        card = cards[zcols[j]]
        col = codes[zcols[j]]
        for r in range(n):
            base[r] = base[r] * card + col[r]
    width = rxm * ry
    yc = codes[yi]
    for r in range(n):
        base[r] = base[r] * width + yc[r]
    if miss.shape[0] > 0:
        for r in range(n):
            lost = miss[yi, r]
            for j in range(zcols.shape[0]):
                lost |= miss[zcols[j], r]
            if lost:
                base[r] = -1
    return base


@njit(cache=True, nogil=True)
def count_tables(codes, miss, subsets, cards, base, cells, ry):  # pragma: no cover - compiled
    """The tables (k, cells) of :func:`masked_statistics`, counted but not scored (a
    partition's share, summed over the partitions by the caller). Single columns of
    complete rows go through :func:`_scatter` (four counter copies), as in memory."""
    k, s = subsets.shape
    n = base.shape[0]
    tables = np.zeros((k, cells), np.int64)
    complete = miss.shape[0] == 0 and s == 1
    for r in range(n if complete else 0):
        if base[r] < 0:
            complete = False
            break
    if not complete:
        for i in range(k):
            _count_rows(tables[i], codes, miss, subsets[i], cards, base, ry)
        return tables
    four = 4 * cells <= n
    counts = np.zeros(4 * cells if four else cells, np.uint32)
    for i in range(k):
        counts[:] = 0
        _scatter(counts, base, codes[subsets[i, 0]], ry, cells, four)
        for c in range(cells):
            tables[i, c] = counts[c]
            if four:
                tables[i, c] += (counts[cells + c] + counts[2 * cells + c]
                                 + counts[3 * cells + c])
    return tables


@njit(cache=True, nogil=True)
def score_tables(tables, rz, rxm, ry):  # pragma: no cover - compiled
    """Statistics (k, 5: G2, X2, adjusted df, cells, rows) of counted tables (k, cells)."""
    k = tables.shape[0]
    out = np.zeros((k, 5))
    for i in range(k):
        _score(tables[i], rz, rxm, ry, out[i, :4])
        out[i, 4] = tables[i].sum()
    return out


@njit(cache=True, nogil=True)
def _one_null_linked(x, y, z, B, seed, dense_min, clogc, tail, addrs, keys,
                     entries):  # pragma: no cover - compiled
    """:func:`_one_null`, its callees called through ``addrs`` (:data:`CALLEES`), the cells'
    cache ``keys``, ``entries``."""
    rx = np.int64(x.max()) + 1
    ry = np.int64(y.max()) + 1
    rz = np.int64(z.max()) + 1
    if rz * rx * ry <= 4 * x.shape[0] + 256:
        out, moments, done, found = _CALL_TABLE_NULL(addrs[_TABLE_NULL])(
            x, y, z, rx, ry, rz, B, seed, dense_min, clogc, tail, addrs, keys, entries)
        if done:
            return out, moments, found
    setup = permutation_setup(x, y, z, rx, ry, rz)
    out, moments = _CALL_PERMUTATION_STATISTICS(addrs[_PERMUTATION_STATISTICS])(
        setup[0], setup[1], setup[2], setup[3], setup[4], setup[5], setup[6], setup[7],
        setup[8], B, seed, dense_min, clogc, addrs, keys, entries)
    return out, moments, np.full(2, np.nan)


def _one_null(x, y, z, B, seed, dense_min, clogc, tail):
    """:func:`permutation_statistics` of one test, codes x, y, z (n,): from its counted
    table alone (:func:`_table_null`) where that table is small and every permuted stratum
    2 x 2, else from its rows sorted by :func:`permutation_setup` (the same numbers).
    Returns (out, moments, found), ``found`` :func:`_table_null`'s (log p, code), NaN where
    a permuted stratum is larger than 2 x 2. The codes are passed as int64 (one compiled
    version whatever their dtype)."""
    x, y, z = (np.ascontiguousarray(v, dtype=np.int64) for v in (x, y, z))
    return _one_null_linked(x, y, z, int(B), np.uint64(seed), float(dense_min),
                            np.ascontiguousarray(clogc, dtype=np.float64),
                            np.ascontiguousarray(tail, dtype=np.float64), _addresses(),
                            *_cell_cache())


@njit(cache=True, nogil=True)
def _put(out, moments, log_tails, t, result):  # pragma: no cover - compiled
    """Store :func:`_one_null`'s ``result`` as test ``t`` of the three outputs, element by
    element: an array assigned to a slice makes numba compile its shape-mismatch message
    (string formatting, a few seconds of the first call), a loop does not."""
    null, mom, found = result
    for b in range(null.shape[0]):
        out[t, b, 0] = null[b, 0]
        out[t, b, 1] = null[b, 1]
    for j in range(MOMENTS):
        moments[t, j] = mom[j]
    log_tails[t, 0] = found[0]
    log_tails[t, 1] = found[1]


@njit(cache=True, nogil=True)
def _permutation_nulls(data, starts, tests, seeds, B, dense_min, tails, addrs, keys,
                       entries):  # pragma: no cover - compiled
    """:func:`permutation_nulls`, its callees called through ``addrs``."""
    k = tests.shape[0]
    out = np.zeros((k, B + 1, 2))
    moments = np.zeros((k, MOMENTS))
    log_tails = np.full((k, 2), np.nan)
    longest = 0
    for c in range(starts.shape[0] - 1):
        longest = max(longest, starts[c + 1] - starts[c])
    clogc = clogc_table(longest)
    one_null = _CALL_ONE_NULL(addrs[_ONE_NULL])
    for t in range(k):
        cx, cy, cz = tests[t, 0], tests[t, 1], tests[t, 2]
        if starts[cx + 1] == starts[cx]:
            continue
        _put(out, moments, log_tails, t, one_null(
            data[starts[cx]:starts[cx + 1]], data[starts[cy]:starts[cy + 1]],
            data[starts[cz]:starts[cz + 1]], B, seeds[t], dense_min, clogc, tails[t], addrs,
            keys, entries))
    return out, moments, log_tails


def permutation_nulls(data, starts, tests, seeds, B, dense_min, tails):
    """:func:`permutation_setup` and :func:`permutation_statistics` of many tests in one call
    (no Python between tests): column c is ``data[starts[c]:starts[c + 1]]`` (int64), test t
    permutes column ``tests[t, 0]`` (x) within the strata ``tests[t, 2]`` against
    ``tests[t, 1]`` (y), seeded by ``seeds[t]``, its saddlepoint tail asked by ``tails[t]``
    (see :func:`_table_null`). Returns the (k, B + 1, 2) statistics, the (k, 6) moments and
    the (k, 2) tails (log p, code), test by test as
    :func:`~mbstat.ci.tables.counting.permutation_null`."""
    return _permutation_nulls(data, starts, tests, seeds, B, dense_min, tails, _addresses(),
                              *_cell_cache())


@njit(cache=True, nogil=True)
def _int64_copy(v):  # pragma: no cover - compiled
    """``v`` (1-D, any integer dtype and layout) as a new C-contiguous int64 array."""
    out = np.empty(v.shape[0], np.int64)
    for r in range(v.shape[0]):
        out[r] = v[r]
    return out


@njit(cache=True, nogil=True)
def _column_nulls(codes, xcols, yi, z, swap, seeds, B, dense_min, tails, addrs, keys,
                  entries):  # pragma: no cover - compiled
    """:func:`column_nulls`, its callees called through ``addrs``."""
    k = xcols.shape[0]
    out = np.zeros((k, B + 1, 2))
    moments = np.zeros((k, MOMENTS))
    log_tails = np.full((k, 2), np.nan)
    if codes.shape[0] == 0:
        return out, moments, log_tails
    # x, y and z as int64 (exact copies): the callee compiles once for every dtype and
    # layout of the code matrix, and is shared with permutation_nulls
    y = _int64_copy(codes[:, yi])
    z = _int64_copy(z)
    clogc = clogc_table(codes.shape[0])
    one_null = _CALL_ONE_NULL(addrs[_ONE_NULL])
    for t in range(k):
        x = _int64_copy(codes[:, xcols[t]])
        first, second = (y, x) if swap[t] else (x, y)
        _put(out, moments, log_tails, t, one_null(first, second, z, B, seeds[t], dense_min,
                                                  clogc, tails[t], addrs, keys, entries))
    return out, moments, log_tails


def column_nulls(codes, xcols, yi, z, swap, seeds, B, dense_min, tails):
    """:func:`permutation_nulls` of tests of one column x each, read in place from the code
    matrix ``codes`` (n, p): test t permutes column ``xcols[t]`` against column ``yi`` within
    the strata ``z`` (n,), or, where ``swap[t]``, column ``yi`` against ``xcols[t]`` (the
    same test, its two variables in content order), seeded by ``seeds[t]``."""
    return _column_nulls(codes, xcols, yi, z, swap, seeds, B, dense_min, tails, _addresses(),
                         *_cell_cache())


# ------------------------------------------- the calibration's kernels, called by address
# (see mbstat.ci.tables._linked): each compiled once, alone, not re-optimized in every caller
_I64 = types.Array(types.int64, 1, "C")
_F64 = types.Array(types.float64, 1, "C")
_F64_2 = types.Array(types.float64, 2, "C")
_I64_2 = types.Array(types.int64, 2, "C")
_ANY_I64 = types.Array(types.int64, 1, "A")
_ANY_I64_2 = types.Array(types.int64, 2, "A")
_i8, _u8, _f8 = types.int64, types.uint64, types.float64
ONE_NULL = Callee(_one_null_linked, types.Tuple((_F64_2, _F64, _F64))(
    _I64, _I64, _I64, _i8, _u8, _f8, _F64, _F64, _I64, CACHE_KEYS, CACHE_ENTRIES))
TABLE_NULL = Callee(_table_null, types.Tuple((_F64_2, _F64, types.boolean, _F64))(
    _I64, _I64, _I64, _i8, _i8, _i8, _i8, _u8, _f8, _F64, _F64, _I64, CACHE_KEYS,
    CACHE_ENTRIES))
PERMUTATION_STATISTICS = Callee(permutation_statistics, types.Tuple((_F64_2, _F64))(
    _I64, _I64, _I64, _I64, _I64, _I64, _I64, _i8, _I64, _i8, _u8, _f8, _F64, _I64,
    CACHE_KEYS, CACHE_ENTRIES))
TWO_BY_TWO_TAIL = Callee(two_by_two_tail, types.UniTuple(_f8, 2)(
    _f8, _F64, _F64, _I64, _f8, _f8, _ANY_I64_2))
PERMUTE = Callee(_permute, types.none(
    _F64_2, _u8, _I64, types.Array(types.boolean, 1, "C"), _I64_2, _F64, _I64, _I64, _I64,
    _I64, _I64, _F64, _F64, _I64, _f8, _f8))
TWO_BY_TWO_MOMENTS = Callee(_two_by_two_moments, types.none(_I64_2, _F64, _F64))
#: The kernels called by address, in the order of their slots in ``addrs``.
CALLEES = (ONE_NULL, TABLE_NULL, PERMUTATION_STATISTICS, TABLE_MOMENTS, TWO_BY_TWO_TAIL,
           PERMUTE, TWO_BY_TWO_MOMENTS, G2_MOMENTS)
(_ONE_NULL, _TABLE_NULL, _PERMUTATION_STATISTICS, _TABLE_MOMENTS, _TWO_BY_TWO_TAIL, _PERMUTE,
 _TWO_BY_TWO_MOMENTS, _G2_MOMENTS) = range(len(CALLEES))
# what the kernels call (a global name each: numba reads no attribute of a Python object)
(_CALL_ONE_NULL, _CALL_TABLE_NULL, _CALL_PERMUTATION_STATISTICS, _CALL_TABLE_MOMENTS,
 _CALL_TWO_BY_TWO_TAIL, _CALL_PERMUTE, _CALL_TWO_BY_TWO_MOMENTS, _) = (c.call for c in CALLEES)
_ADDRESSES = []


_LOCAL = threading.local()
_GENERATION = [0]


def _cell_cache():
    """This thread's cache of the cells' laws for the calibration's moments
    (:func:`~mbstat.ci.tables._table_moments.cell_cache`, kept from call to call: what a
    cell holds depends on its margins alone, so the numbers are those formed afresh)."""
    cache = getattr(_LOCAL, "cache", None)
    if cache is None or _LOCAL.generation != _GENERATION[0]:
        cache = _LOCAL.cache = cell_cache()
        _LOCAL.generation = _GENERATION[0]
    return cache


def reset_cell_caches() -> None:
    """Empty every thread's cache of the cells' laws (each forms a new one on its next
    call): for benchmarks that time a search from a cold start; results never depend on
    it."""
    _GENERATION[0] += 1


def _addresses() -> np.ndarray:
    """The int64 addresses of :data:`CALLEES` (compiled or loaded on the first call)."""
    if not _ADDRESSES:
        _ADDRESSES.append(addresses(CALLEES))
    return _ADDRESSES[0]
