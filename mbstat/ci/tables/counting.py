"""Counting contingency tables in batches: compiled kernels, numpy or CuPy.

Which path counts the tables X_i x Y | Z of a batch:

* CPU, single-column candidates (:func:`column_statistics`): the hybrid kernel
  (popcounts of the data's level bitmaps for heavy (z, y) cells, scattered rows for
  light ones) for batches of eight or more and for small queries, else the scatter
  kernel, both reading the codes in place;
* CPU otherwise: the scatter kernel of :mod:`._kernels` (joint codes on the fly);
* GPU: the CUDA kernels of :mod:`._cuda`;
* data that keeps missing cells (``na="pairwise"``, test-wise deletion):
  :func:`masked_statistics`, the rows complete for each test's own columns;
* a data set in partitions on a Dask cluster (:class:`~mbstat.data.PartitionedDataset`):
  :func:`partitioned_statistics`, each partition's tables counted by the same compiled
  kernel (:func:`~mbstat.ci.tables._kernels.count_tables`) over declared strata, summed, then
  scored as in memory;
* tables with more cells than the rows fill densely: mixed-radix codes
  ``((z * |X| + x) * |Y| + y)`` in int64, offset by ``candidate * cells``, through
  one ``unique`` (observed configurations only) on numpy or CuPy.

Nothing here loops over rows or strata in Python.
"""
from __future__ import annotations

import math
import zlib
from typing import NamedTuple

import numpy as np

__all__ = ["Strata", "by_size", "cell_base", "column_statistics", "joint_code", "make_strata",
           "masked_statistics", "merge_moments", "partitioned_calibration",
           "partitioned_moments",
           "partitioned_statistics", "permutation_null", "stratum_code", "subset_statistics",
           "table_statistics", "to_numpy"]

#: Largest code we let a mixed-radix product reach before compressing.
_CODE_LIMIT = 2**40
#: Dense counting while cells per table <= this many times the rows.
_DENSE_FACTOR = 4

#: The semiparametric calibration permutes only the strata of fewer than this many rows per
#: (non-empty) cell, or with an expected count below ``_kernels.DENSE_EXPECTED``; the others
#: follow the chi-square (df with Williams' correction, var 2 df) and are added to the
#: permuted part: most rows of skewed data are in a few dense strata (ALARM: 90% of the rows
#: of the tests IAMB calibrates at 20,000 rows).
DENSE_STRATUM = 20.0


_KERNELS = None


def _kernels():
    """The compiled kernels (numba is imported on first use, not with mbstat; a global,
    not an import statement, on every later call)."""
    global _KERNELS
    if _KERNELS is None:
        from . import _kernels as kernels  # deferred: 0.3 s of numba set-up, on first count

        _KERNELS = kernels
    return _KERNELS


def _cuda():
    """The CUDA kernels of the CuPy backend."""
    from . import _cuda as kernels  # deferred: the CuPy backend's kernels, on a GPU only

    return kernels


def _compiled_fits(n: int, cells: int) -> bool:
    """Whether the compiled kernels (numba, CUDA) take tables of ``cells`` cells over ``n``
    rows: few enough cells to count densely, within their int32 cell codes and uint32
    counters."""
    return cells <= _DENSE_FACTOR * n and cells < 2**31 and n < 2**32


def _is_cupy(xp) -> bool:
    return getattr(xp, "__name__", "") == "cupy"


def to_numpy(a):
    """A host numpy array from a numpy or CuPy array."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


def compress(code, xp):
    """Renumber codes to 0..(observed configurations - 1)."""
    uniq, inv = xp.unique(code, return_inverse=True)
    return inv.reshape(code.shape).astype(xp.int64), int(uniq.shape[0])


def joint_code(columns, cards, xp, n_rows: int):
    """One code for the joint configuration of several columns.

    Parameters
    ----------
    columns : sequence of int arrays, each shape (n,) (or (k, n) for a batch)
    cards : sequence of int, declared number of levels of each column

    Returns
    -------
    code : int64 array, values in [0, card)
    card : int
        Number of code values in use: the product of the declared levels, or
        the number of observed configurations once that product exceeds the
        rows (so tables never have more strata than observations).
    """
    if len(columns) == 0:
        return xp.zeros(n_rows, dtype=xp.int64), 1
    if len(columns) == 1:  # no arithmetic needed: keep the compact dtype
        code, card = columns[0], int(cards[0])
    elif xp is np and columns[0].ndim == 1 and np.prod(np.asarray(cards, float)) <= _CODE_LIMIT:
        card = int(np.prod(np.asarray(cards, dtype=np.int64)))
        code = _kernels().mixed_radix(np.stack(columns), np.asarray(cards, dtype=np.int64))
    else:
        code = xp.zeros(columns[0].shape, dtype=xp.int64)
        card = 1
        for col, r in zip(columns, cards):
            if card * int(r) > _CODE_LIMIT:
                code, card = compress(code, xp)
            code = code * int(r) + col.astype(xp.int64)
            card *= int(r)
    if card > n_rows and code.ndim == 1:
        code, card = compress(code, xp)
    return code, card


class Strata(NamedTuple):
    """The strata of a conditioning set: columns (m, n) and their number of codes.

    While the product of the levels stays at most the rows, ``cols`` are the
    raw columns (codes are formed on the fly by the kernels); beyond that they
    are replaced by one column of observed-configuration codes.
    """

    cols: object
    cards: np.ndarray  # int64 levels of each column of ``cols``
    count: int  # number of strata codes: the product of ``cards``
    declared: float  # product of the declared levels (bnlearn's df counts them all)


def make_strata(columns, cards, xp, n_rows: int) -> Strata:
    """Strata of the conditioning columns (a 2-D array (m, n), possibly m = 0)."""
    cards = np.asarray(cards, dtype=np.int64)
    declared = float(math.prod(cards.tolist()))  # exact Python ints: no overflow
    if declared > n_rows:
        code, card = joint_code(list(columns), cards, xp, n_rows)
        return Strata(code[None, :], np.array([card], dtype=np.int64), card, declared)
    return Strata(columns, cards, int(declared), declared)


def stratum_code(strata: Strata, xp, n_rows: int):
    """int64 stratum codes (n,) in [0, strata.count)."""
    code, _ = joint_code(list(strata.cols), strata.cards, xp, n_rows)
    return code.astype(xp.int64)


def column_statistics(dataset, xcols, yi: int, zkey: tuple):
    """Statistics (k, 4) of the tables X_i x Y | Z for single columns X_i (an int64 array)
    on the CPU, straight from the data's codes (no strata object), or None where the
    compiled kernels do not take the tables (more cells than the rows fill densely).

    Batches of ``HYBRID_MIN_BATCH`` candidates or more, and smaller ones while the
    query has at most ``FEW_CELLS`` (z, y) cells, go to the hybrid kernel (level
    bitmaps; columns of at most ``BIT_LEVELS`` levels): the query's cells are built
    once, heavy ones counted by popcounts, the rows of light ones scattered. Fewer
    candidates of larger queries are cheaper to scatter: the scatter kernel reads z's
    columns in place.
    """
    kernels = _kernels()
    counts = dataset.level_counts
    rxm = counts[xcols[0]] if len(xcols) == 1 else int(dataset.cardinalities[xcols].max())
    ry = counts[yi]
    strata = math.prod(counts[j] for j in zkey)
    if not _compiled_fits(dataset.n_rows, strata * rxm * ry):
        return None
    codes, cards = dataset.codes.T, dataset.cardinalities
    zcols = np.array(zkey, dtype=np.int64)
    bits = dataset.level_bits
    if ((len(xcols) >= kernels.HYBRID_MIN_BATCH or ry * strata <= kernels.FEW_CELLS)
            and bits is not None and max(rxm, ry, *(counts[j] for j in zkey)) <= bits.shape[1]):
        return kernels.cell_statistics(codes, bits, xcols, cards, yi, zcols, rxm, ry * strata)
    return kernels.subset_statistics(codes, xcols[:, None], cards, codes[yi], codes, zcols,
                                     cards[zcols], rxm, ry)


def subset_statistics(codes, subsets, cards, y, ry: int, strata: Strata, xp):
    """Statistics (k, 4: G2, X2, adjusted df, cells) of the tables X_i x Y | Z, X_i the
    joint variable of columns ``subsets[i]`` of the code matrix ``codes`` (p, n).

    Compiled kernels (numba on the CPU, CUDA with CuPy) form the joint codes on
    the fly; where they do not apply (tables with more cells than rows allow
    dense counting, other array modules) the joint codes are materialized in
    chunks for :func:`table_statistics`.
    """
    subsets = np.asarray(subsets, dtype=np.int64)
    k, size = subsets.shape
    n = codes.shape[1]
    cards = np.asarray(cards, dtype=np.int64)
    member_cards = cards[subsets]
    rx = member_cards[:, 0] if size == 1 else np.prod(member_cards, axis=1)
    rxm = int(rx.max())
    cells = strata.count * rxm * ry
    if _compiled_fits(n, cells) and (xp is np or _is_cupy(xp)):
        if xp is np:
            return _kernels().subset_statistics(codes, subsets, cards, y, strata.cols,
                                                np.arange(len(strata.cards)), strata.cards,
                                                rxm, ry)
        return _cuda().subset_statistics(codes, subsets, cards, y, strata.cols, strata.cards,
                                         rxm, ry)
    chunk = max(1, (1 << 23) // max(n, 1))
    parts = []
    for start in range(0, k, chunk):
        block = subsets[start : start + chunk]
        rows = [codes[block[:, j]] for j in range(size)]
        code, card = joint_code(rows, member_cards[start : start + chunk].max(axis=0), xp, n)
        parts.append(table_statistics(code, np.full(len(block), card), y, ry, strata, xp))
    return np.concatenate(parts)


def table_statistics(xcodes, rx, y, ry: int, strata: Strata, xp):
    """G2, X2 and adjusted df of a batch of tables X_i x Y | Z.

    Parameters
    ----------
    xcodes : int array (k, n)
        Codes of k candidate (possibly joint) variables X_i.
    rx : int array (k,)
        Number of codes each X_i may take (its table rows).
    y : int array (n,), codes in [0, ry)
    strata : Strata of the conditioning set

    Returns
    -------
    numpy array (k, 4): G2, X2, adjusted df (bnlearn's heuristic: per stratum,
    (non-empty rows - 1) * (non-empty columns - 1), summed) and observed cells.
    """
    k, n = xcodes.shape
    rxm = int(np.max(rx))
    rz = strata.count
    cells = rz * rxm * ry
    if k * cells >= 2**62:  # would overflow int64
        if k > 1:  # one table at a time
            return np.concatenate([table_statistics(xcodes[i : i + 1], rx[i : i + 1], y, ry,
                                                    strata, xp) for i in range(k)])
        # one table of declared levels too many to index: x and y by their observed values
        # (the statistics and the adjusted df do not see empty rows or columns)
        x1, rx1 = compress(xcodes[0], xp)
        y1, ry1 = compress(y, xp)
        if rz * rx1 * ry1 >= 2**62:
            raise ValueError(f"a table of {rx1} x {ry1} observed levels in {rz} strata has too "
                             "many cells to count")
        return table_statistics(x1[None, :], np.array([rx1]), y1, ry1, strata, xp)
    if cells <= _DENSE_FACTOR * n and xp is np:  # each row of xcodes is its own "column"
        return subset_statistics(xcodes, np.arange(k)[:, None], np.asarray(rx), y, ry, strata, xp)
    z = stratum_code(strata, xp, n)
    keys = xcodes.astype(xp.int64) * ry + (z * (rxm * ry) + y)[None, :]
    keys += (xp.arange(k, dtype=xp.int64) * cells)[:, None]
    if cells <= _DENSE_FACTOR * n:
        return _dense(keys.ravel(), k, rz, rxm, ry, xp)
    return _sparse(keys.ravel(), k, n, rz, rxm, ry, cells, xp)


def _dense(keys, k, rz, rxm, ry, xp):
    counts = xp.bincount(keys, minlength=k * rz * rxm * ry)
    counts = counts.reshape(k, rz, rxm, ry).astype(xp.float64)
    nxz = counts.sum(axis=3)
    nyz = counts.sum(axis=2)
    nz = nyz.sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):  # as the kernels' _score
        m = nxz[..., :, None] * nyz[..., None, :]
        d = counts * nz[..., None, None] - m
        g2 = 2.0 * xp.where(counts > 0, counts * xp.log1p(d / m), 0.0).sum(axis=(1, 2, 3))
        x2 = xp.where(m > 0, d * d / (m * nz[..., None, None]), 0.0).sum(axis=(1, 2, 3))
    rows = (nxz > 0).sum(axis=2)
    cols = (nyz > 0).sum(axis=2)
    df_adj = (xp.maximum(rows - 1, 0) * xp.maximum(cols - 1, 0)).sum(axis=1)
    return _stack(xp.maximum(g2, 0.0), xp.maximum(x2, 0.0), df_adj,
                  (counts > 0).sum(axis=(1, 2, 3)))


def _group_sums(ids, weights, xp, ordered=False):
    """Sum of ``weights`` over equal ``ids``, broadcast back to each entry; ``ordered``:
    ``ids`` are sorted (equal ids adjacent), summed by runs without sorting again."""
    if ordered and xp is np and len(ids):
        start = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        return np.repeat(np.add.reduceat(weights, start), np.diff(np.append(start, len(ids))))
    _, inv = xp.unique(ids, return_inverse=True)
    inv = inv.ravel()
    return xp.bincount(inv, weights=weights)[inv]


def _sparse(keys, k, n, rz, rxm, ry, cells, xp):
    uniq, counts = xp.unique(keys, return_counts=True)
    counts = counts.astype(xp.float64)
    stratum = uniq // (rxm * ry)  # (candidate, z) id
    xz = uniq // ry  # (candidate, z, x) id
    yz = stratum * ry + uniq % ry  # (candidate, z, y) id
    nxz = _group_sums(xz, counts, xp, ordered=True)
    nyz = _group_sums(yz, counts, xp)
    nz = _group_sums(stratum, counts, xp, ordered=True)
    m = nxz * nyz
    cand = uniq // cells
    g2 = 2.0 * xp.bincount(cand, weights=counts * xp.log1p((counts * nz - m) / m), minlength=k)
    x2 = xp.bincount(cand, weights=counts * counts * nz / m, minlength=k) - n
    # adjusted df: non-empty rows and columns per non-empty stratum
    # unique by sorting (return_counts): numpy 2.x's hashing unique (no return_*) is
    # 20-250 times slower on these int64 ids; the same sorted values
    rows_stratum = xp.unique(xz, return_counts=True)[0] // rxm
    cols_stratum = xp.unique(yz, return_counts=True)[0] // ry
    strata, n_rows = xp.unique(rows_stratum, return_counts=True)
    _, n_cols = xp.unique(cols_stratum, return_counts=True)
    per_stratum = (xp.maximum(n_rows - 1, 0) * xp.maximum(n_cols - 1, 0)).astype(xp.float64)
    df_adj = xp.bincount(strata // rz, weights=per_stratum, minlength=k)
    return _stack(xp.maximum(g2, 0.0), xp.maximum(x2, 0.0), df_adj,
                  xp.bincount(cand, minlength=k))


def _stack(*columns):
    """The statistics array (k, 4) on the host from its columns (numpy or CuPy)."""
    return np.stack([to_numpy(c).astype(np.float64) for c in columns], axis=1)


def permutation_null(xcode, ycode, zcode, B: int, seed: int, dense_min: float = 0.0,
                     tail=None):
    """The null distribution of G2 and X2 of the table X x Y | Z under permutations of x
    within the strata of z (margins fixed), from the compiled
    :func:`~mbstat.ci.tables._kernels.permutation_statistics` (O(rows) a permutation, whatever
    the number of declared cells; O(log rows) for a 2 x 2 stratum, drawn as one
    hypergeometric cell).

    Returns (out, moments, tail_p): ``out`` (B + 1, 2) holds the observed G2 and X2 (row
    0) and those of ``B`` permutations (rows 1..B) summed over the strata that need
    permuting; ``moments`` (6,) the null mean of G2 and X2, their variances and their
    shifts (constant parts) of the other strata (one x or one y level; with ``dense_min``
    > 0, at least that many rows per cell, where the chi-square holds, or exact moments).
    With ``dense_min`` = 0 the rows 1..B are the whole statistics. ``tail_p`` is (log
    p-value, calibration code) of the statistic ``tail`` = (s, column (0 G2, 1 X2), null
    mean and variance of strata not among the rows) where ``dense_min`` > 0 and every
    permuted stratum is 2 x 2 (enumerated or saddlepoint,
    :func:`~mbstat.ci.tables._kernels.two_by_two_tail`), else NaN.

    ``xcode``, ``ycode``, ``zcode`` are int codes (n,) on the host; ``seed`` (a uint64)
    seeds the permutations.
    """
    codes = [np.asarray(c) for c in (xcode, ycode, zcode)]
    kernels = _kernels()
    if len(codes[0]) == 0:
        return np.zeros((B + 1, 2)), np.zeros(kernels.MOMENTS), np.full(2, np.nan)
    tail = np.full(4, np.nan) if tail is None else np.asarray(tail, dtype=np.float64)
    return kernels.interruptible(kernels._one_null, *codes, int(B), np.uint64(seed),
                                 float(dense_min), kernels.clogc_table(len(codes[0])), tail)


#: Columns per block when finding the rows where levels first appear (bounds the (rows,
#: block) masks).
_FIRST_BLOCK = 1024
#: Columns of at most this many levels are scanned level by level (vectorized across the
#: block); the others through one ``unique`` each.
_FIRST_SCAN_LEVELS = 16


def first_rows(codes, cards, columns, miss=None, rows_first=True):
    """The row of each level's first appearance in each column of ``columns`` (a list of
    (cards[j],) int64 arrays, -1 for a level never observed; missing cells ignored):
    the content of a column up to the names and order of its levels. ``codes`` (and
    ``miss``) are (rows, columns) with ``rows_first``, else (columns, rows) (a
    partition's layout)."""
    out = []
    columns = np.asarray(columns, dtype=np.int64)
    for lo in range(0, len(columns), _FIRST_BLOCK):
        block = columns[lo:lo + _FIRST_BLOCK]
        sub = codes[:, block] if rows_first else codes[block].T
        absent = None
        if miss is not None:
            absent = miss[:, block] if rows_first else miss[block].T
        top = int(cards[block].max(initial=0))
        if sub.shape[0] == 0 or top == 0:
            out += [np.full(int(cards[j]), -1, dtype=np.int64) for j in block]
            continue
        if top <= _FIRST_SCAN_LEVELS:
            first = np.empty((top, len(block)), dtype=np.int64)
            for level in range(top):
                hit = sub == level
                if absent is not None:
                    hit &= ~absent
                at = hit.argmax(axis=0)
                first[level] = np.where(hit[at, np.arange(len(block))], at, -1)
            out += [first[:int(cards[j]), i].copy() for i, j in enumerate(block)]
            continue
        for i, j in enumerate(block):
            column = sub[:, i].astype(np.int64)
            if absent is not None:
                column[absent[:, i]] = -1
            levels, at = np.unique(column, return_index=True)
            first = np.full(int(cards[j]), -1, dtype=np.int64)
            keep = levels >= 0
            first[levels[keep].astype(np.int64)] = at[keep]
            out.append(first)
    return out


def relabelled(column, relabel):
    """``column``'s codes through the map ``relabel`` (None: as they are), read-only."""
    if relabel is None:
        return column
    out = relabel.astype(column.dtype)[column]
    out.flags.writeable = False
    return out


class _ColumnKeys(dict):
    """Per column, a sort key and seed word from its content alone (CRC-32 of its canonical
    codes, :class:`_Canonical`, then its position), so that permutations depend neither
    on where a variable stands among the columns, nor on its name, nor on the names or
    order of its levels; with ``kept``, of those rows only (a test's complete rows under
    test-wise deletion)."""

    def __init__(self, canon):
        super().__init__()
        self.canon = canon

    def __missing__(self, j):
        column = self.canon.column(j)
        self[j] = (zlib.crc32(np.ascontiguousarray(column).tobytes()), j)
        return self[j]


def relabelling(first, n_rows: int):
    """The map (levels,) from a column's codes to its canonical codes, levels numbered in
    the order of their first appearance (``first``, from :func:`first_rows`; levels never
    observed after them, in code order), or None where that order is the codes' own."""
    levels = len(first)
    order = np.argsort(np.where(first >= 0, first, n_rows + np.arange(levels)), kind="stable")
    if (order == np.arange(levels)).all():
        return None
    relabel = np.empty(levels, dtype=np.int64)
    relabel[order] = np.arange(levels)
    return relabel


def _no_missing():
    return np.zeros((0, 0), dtype=bool)


def cell_base(codes, miss, cards, yi: int, z, rxm: int, ry: int, n: int):
    """The (z, y) cell offset of each row in a flat (strata, rxm, ry) table, -1 where y or a
    column of z is missing (``miss`` (p, n), or (0, 0)); and the number of strata (declared
    levels, or the observed configurations once they exceed the rows, as
    :func:`joint_code`). ``codes`` is the (p, n) code matrix."""
    z = list(z)
    zcode, rz = joint_code([codes[j] for j in z], cards[z], np, n)
    base = (zcode.astype(np.int64) * rxm) * ry + codes[yi]
    if miss.shape[0]:
        lost = miss[yi] if not z else miss[yi] | miss[z].any(axis=0)
        base[lost] = -1
    return base, int(rz)


def by_size(xs):
    """The candidates grouped by their number of columns: (positions, (k, size) index
    array) per size, so that each group is one kernel call."""
    groups = {}
    for i, xk in enumerate(xs):
        groups.setdefault(len(xk), []).append(i)
    return [(pos, np.array([xs[i] for i in pos], dtype=np.int64)) for pos in groups.values()]


def masked_statistics(dataset, xs, yi: int, z: tuple):
    """Statistics (k, 4) and rows used (k,) of the tables X_i x Y | Z, each over the rows
    complete for its own columns X_i, Y and Z (test-wise deletion, ``na="pairwise"``):
    the compiled :func:`~mbstat.ci.tables._kernels.masked_statistics` (one pass over the rows a
    candidate, split across threads where that pays), or, for tables with more cells than
    the rows fill densely, :func:`table_statistics` over each test's complete rows."""
    kernels = _kernels()
    codes = dataset.codes.T
    miss = _no_missing() if dataset.missing is None else dataset.missing.T
    cards = dataset.cardinalities
    n = dataset.n_rows
    ry = int(cards[yi])
    stats = np.empty((len(xs), 4))
    rows = np.empty(len(xs))
    for pos, subsets in by_size(xs):
        rxm = int(np.prod(cards[subsets], axis=1).max())
        base, rz = cell_base(codes, miss, cards, yi, z, rxm, ry, n)
        if _compiled_fits(n, rz * rxm * ry):
            out = kernels._split(lambda part: kernels.masked_statistics(
                codes, miss, part, cards, base, rz, rxm, ry), subsets, subsets.size * n)
        else:
            out = np.array([_sparse_masked(codes, miss, cards, sub, yi, z, ry, base >= 0)
                            for sub in subsets]).reshape(len(pos), 5)
        stats[pos] = out[:, :4]
        rows[pos] = out[:, 4]
    return stats, rows


def _sparse_masked(codes, miss, cards, subset, yi, z, ry, kept):
    """One test's statistics and rows (5,) over its complete rows, by :func:`table_statistics`
    (tables too large for the compiled kernels)."""
    if miss.shape[0]:
        kept = kept & ~miss[subset].any(axis=0)
    n = int(kept.sum())
    if n == 0:
        return np.zeros(5)
    xcode, rx = joint_code([codes[j][kept] for j in subset], cards[subset], np, n)
    zcols = np.array([codes[j][kept] for j in z]).reshape(len(z), n)
    strata = make_strata(zcols, cards[list(z)], np, n)
    stats = table_statistics(xcode[None, :], np.array([rx]), codes[yi][kept], ry, strata, np)
    return np.append(stats[0], n)



# ----------------------------------------------------------------- partitions (Dask)
#: A batch's tables are counted densely in each partition while they have at most this
#: many cells in all; larger ones travel as their observed cells (keys and counts).
PARTITION_DENSE_CELLS = 1 << 22


def _declared_base(codes, miss, cards, yi, z, rxm, ry):
    """:func:`cell_base` over the declared strata (mixed radix, first z slowest): the same
    strata in every partition (compiled: :func:`~mbstat.ci.tables._kernels.declared_base`)."""
    return _kernels().declared_base(codes, miss, cards, int(yi),
                                    np.asarray(z, dtype=np.int64).reshape(-1), rxm, ry)


def _partition_cells(part, subsets, cards, yi, z, rxm, ry, dense):
    """One partition's share of a batch: its tables (k, cells) counted by the compiled
    :func:`~mbstat.ci.tables._kernels.count_tables` (``dense``), or per candidate the keys and
    counts of its observed cells."""
    codes = part["codes"]
    miss = _no_missing() if part["missing"] is None else part["missing"]
    base = _declared_base(codes, miss, cards, yi, z, rxm, ry)
    if dense:
        cells = math.prod(int(cards[j]) for j in z) * rxm * ry
        return _kernels().count_tables(codes, miss, subsets, cards, base, cells, ry)
    out = []
    for sub in subsets:
        kept = base >= 0
        if miss.shape[0]:
            kept &= ~miss[sub].any(axis=0)
        xc = np.zeros(int(kept.sum()), dtype=np.int64)
        for j in sub:
            xc = xc * int(cards[j]) + codes[j][kept]
        out.append(np.unique(base[kept] + xc * ry, return_counts=True))
    return out


def _merge_cells(pieces, rxm: int, ry: int):
    """One table from the partitions' observed cells: counts summed per cell, the observed
    strata renumbered in order (as :func:`joint_code` compresses them). Returns (table
    (1, strata * rxm * ry), strata)."""
    keys = np.concatenate([k for k, _ in pieces]) if pieces else np.zeros(0, np.int64)
    counts = np.concatenate([c for _, c in pieces]) if pieces else np.zeros(0, np.int64)
    width = rxm * ry
    strata, inverse = np.unique(keys // width, return_inverse=True)
    table = np.bincount(inverse.ravel() * width + keys % width, weights=counts,
                        minlength=max(len(strata), 1) * width)
    return np.rint(table).astype(np.int64)[None, :], max(len(strata), 1)


def _check_declared(cards, z, rxm, ry):
    if math.prod(int(cards[j]) for j in z) * rxm * ry >= 2**62:
        raise ValueError("a table of declared levels too many to index in int64: condition on "
                         "fewer variables")


def partitioned_statistics(ds, xs, yi: int, z: tuple):
    """Statistics (k, 4), rows used (k,) and |X| (k,) of the tables X_i x Y | Z of a data set
    in partitions: each partition counts its rows (complete for the test's columns) with
    the compiled kernel, the tables are summed and scored by the same
    :func:`~mbstat.ci.tables._kernels._score` as in memory: the same numbers."""
    kernels = _kernels()
    cards = ds.cardinalities
    ry = int(cards[yi])
    stats, rows, rx = np.empty((len(xs), 4)), np.empty(len(xs)), np.empty(len(xs))
    for pos, subsets in by_size(xs):
        sizes = np.prod(cards[subsets].astype(np.float64), axis=1)
        rxm = int(sizes.max())
        _check_declared(cards, z, rxm, ry)
        rz = math.prod(int(cards[j]) for j in z)
        dense = len(pos) * rz * rxm * ry <= PARTITION_DENSE_CELLS
        parts = ds.map(_partition_cells, subsets, cards, yi, tuple(z), rxm, ry, dense)
        if dense:
            out = kernels.score_tables(np.sum(parts, axis=0), rz, rxm, ry)
        else:
            out = np.concatenate([kernels.score_tables(*_merge_cells(
                [part[i] for part in parts], rxm, ry), rxm, ry) for i in range(len(pos))])
        stats[pos], rows[pos], rx[pos] = out[:, :4], out[:, 4], sizes
    return stats, rows, rx


def _partition_rows(part, columns, cards, yi, z, keep, rxm, ry):
    """The rows (codes of ``columns``, (len(columns), m)) of one partition that are complete
    for ``columns`` and fall in the declared strata ``keep`` (sorted) of z."""
    codes = part["codes"]
    miss = _no_missing() if part["missing"] is None else part["missing"]
    base = _declared_base(codes, miss, cards, yi, z, rxm, ry)
    kept = base >= 0
    if miss.shape[0]:
        kept &= ~miss[list(columns)].any(axis=0)
    kept &= np.isin(base // (rxm * ry), keep)
    return codes[list(columns)][:, kept]


def _crc_fold(part, carried, columns, complete, maps):
    """CRC-32 of each column's canonical codes (relabelled by ``maps``) carried over the
    partitions in order (``zlib.crc32`` of the whole column, as in memory), over the rows
    complete for ``complete``."""
    codes = part["codes"]
    miss = part["missing"]
    rows = slice(None)
    if complete and miss is not None:
        rows = ~miss[list(complete)].any(axis=0)
    return {j: zlib.crc32(np.ascontiguousarray(relabelled(codes[j][rows], maps[j])).tobytes(),
                          carried.get(j, 0))
            for j in columns}


def _partition_first_rows(part, columns, cards, complete):
    """:func:`first_rows` of the partition's rows complete for ``complete``, and how many."""
    codes, miss = part["codes"], part["missing"]
    if complete and miss is not None:
        kept = ~miss[list(complete)].any(axis=0)
        return first_rows(codes[:, kept], cards, columns, None, rows_first=False), kept.sum()
    return first_rows(codes, cards, columns, miss, rows_first=False), codes.shape[1]


def partitioned_relabelling(ds, columns, complete=()) -> dict:
    """The maps of :func:`relabelling` of ``columns`` over the partitions' rows (complete for
    ``complete``) in order: the relabelling in memory (levels by first appearance), kept
    in ``ds.cache``."""
    maps = ds.cache.setdefault("relabel", {})
    todo = tuple(j for j in columns if (j, complete) not in maps)
    if todo:
        pieces = ds.map(_partition_first_rows, todo, ds.cardinalities, complete)
        offsets = np.cumsum([0, *(rows for _, rows in pieces)])
        for i, j in enumerate(todo):
            first = np.full(int(ds.cardinalities[j]), -1, dtype=np.int64)
            for offset, (piece, _) in zip(offsets, pieces):
                new = (first < 0) & (piece[i] >= 0)
                first[new] = piece[i][new] + offset
            maps[(j, complete)] = relabelling(first, int(offsets[-1]))
    return {j: maps[(j, complete)] for j in columns}


def partitioned_calibration(test, ds, xs, yi: int, z: tuple, out, todo) -> None:
    """The semiparametric or permutation calibration of the rows ``todo`` of ``out`` for a
    data set in partitions, with the p-values of the same test in memory.

    The permutations need rows, but only those of the strata that are permuted: a stratum
    with one x or one y level adds nothing, and (semiparametric) a stratum with at least
    :data:`~mbstat.ci.tables.contingency.DENSE_STRATUM` rows per cell adds the chi-square's
    moments, which its margins give. So each test counts its observed cells (one pass),
    adds the moments of its dense strata from them, gathers the rows of its other strata
    (in row order, as in memory) and permutes those as the in-memory kernel does, seeded
    from the columns' contents (CRC-32 carried across the partitions in order), all on the
    columns' canonical codes (levels by first appearance, as in memory)."""
    cards = ds.cardinalities
    ry = int(cards[yi])
    exact = test.calibration == "permutation"
    cache = ds.cache.setdefault("crc", {})
    for i in todo:
        xk = tuple(xs[i])
        columns = (*xk, yi, *z)
        complete = columns if ds.keeps_missing else ()
        maps = partitioned_relabelling(ds, columns, complete)
        todo_keys = [j for j in columns if (j, complete) not in cache]
        if todo_keys:
            found = ds.chain(_crc_fold, {}, tuple(todo_keys), complete, maps)
            cache.update({(j, complete): crc for j, crc in found.items()})
        keys = _ColumnKeys(None)
        keys.update({j: (cache[(j, complete)], j) for j in columns})
        rxm = int(np.prod(cards[list(xk)]))
        _check_declared(cards, z, rxm, ry)
        pieces = [part[0] for part in ds.map(_partition_cells, np.array([xk]), cards, yi, z, rxm,
                                              ry, False)]
        table, rz = _merge_cells(pieces, rxm, ry)
        strata = np.unique(np.concatenate([k for k, _ in pieces]) // (rxm * ry))
        cube = table.reshape(rz, rxm, ry)
        # strata and levels in the order of their canonical codes, as the kernel meets them
        # in memory: the dense strata's moments summed in the same order, to the last bit
        keyed = [sorted(v, key=keys.__getitem__) for v in (z, xk)]
        zorder = np.argsort(_canonical_index(strata[:rz] if len(strata) else np.zeros(rz, int),
                                             z, cards, maps, keyed[0]), kind="stable")
        xorder = np.argsort(_canonical_index(np.arange(rxm), xk, cards, maps, keyed[1]))
        yorder = np.argsort(maps[yi]) if maps[yi] is not None else np.arange(ry)
        cube = cube[zorder][:, xorder][:, :, yorder]
        nxz, nyz = cube.sum(axis=2), cube.sum(axis=1)
        big_n = nxz.sum(axis=1).astype(np.float64)
        r, c = (nxz > 0).sum(axis=1), (nyz > 0).sum(axis=1)
        df = (r - 1.0) * (c - 1.0)
        dense = np.zeros(rz, dtype=bool) if exact else big_n >= DENSE_STRATUM * r * c
        dense &= df > 0
        with np.errstate(invalid="ignore"):  # as the kernels' _dense_stratum
            low_x = np.where(nxz > 0, nxz, np.inf).min(axis=1, initial=np.inf)
            low_y = np.where(nyz > 0, nyz, np.inf).min(axis=1, initial=np.inf)
            dense &= low_x * low_y >= _kernels().DENSE_EXPECTED * big_n
        moments = np.zeros(4)
        if dense.any():
            with np.errstate(divide="ignore"):
                inv_x = np.cumsum(np.where(nxz > 0, 1.0 / nxz, 0.0), axis=1)[:, -1][dense]
                inv_y = np.cumsum(np.where(nyz > 0, 1.0 / nyz, 0.0), axis=1)[:, -1][dense]
            nd, dfd = big_n[dense], df[dense]  # sums in order (cumsum), as the kernel adds
            moments[0] = np.cumsum(dfd + (nd * inv_x - 1.0) * (nd * inv_y - 1.0)
                                   / (6.0 * nd))[-1]
            moments[1] = np.cumsum(nd / (nd - 1.0) * dfd)[-1]
            moments[2] = moments[3] = np.cumsum(2.0 * dfd)[-1]
        keep = np.sort(strata[zorder][(df > 0) & ~dense]) if len(strata) else strata
        gathered = ds.map(_partition_rows, columns, cards, yi, z, keep, rxm, ry)
        block = np.concatenate(gathered, axis=1) if gathered else np.zeros((len(columns), 0))
        position = {j: t for t, j in enumerate(columns)}
        res = test.permutation_p(lambda j: relabelled(block[position[j]], maps[j]), keys, cards,
                                 xk, yi, z, out[i], ds.n_rows, moments=moments)
        out[i, 1:4], out[i, 5] = res[:3], res[3]


def _canonical_index(declared, columns, cards, maps, keyed):
    """The mixed-radix index (first slowest) over the columns ``keyed`` of their canonical
    codes (``maps``: :func:`relabelling`) of the cells ``declared``, indices over
    ``columns`` of their own codes."""
    if not len(columns):
        return np.zeros(len(declared), dtype=np.int64)
    digits = np.unravel_index(declared, [int(cards[j]) for j in columns])
    mapped = {j: d if maps[j] is None else maps[j][d] for j, d in zip(columns, digits)}
    return np.ravel_multi_index([mapped[j] for j in keyed], [int(cards[j]) for j in keyed])


def _partition_moments(part, xcols, yi, z, lookup):
    """Per candidate, the rows, means and centred cross-products of [z, y, x] over the
    partition's rows complete for them (k, m+3, m+3): entry (0, 0) the rows, row and
    column 0 the means, the rest the cross-products of the deviations from those means.
    Centred within the partition, so that columns far from 0 (say 10^6 + noise) keep
    their precision (raw sums of squares would lose it); ``lookup`` maps a discrete
    column to its levels' values (as :meth:`Dataset.numeric`)."""
    codes, values, miss = part["codes"], part["values"], part["missing"]

    def numeric(j):
        return values[j] if lookup[j] is None else lookup[j][codes[j]]

    m = len(z)
    out = np.zeros((len(xcols), m + 3, m + 3))
    for i, x in enumerate(xcols):
        cols = [*z, yi, x]
        block = np.vstack([numeric(j) for j in cols])
        if miss is not None:
            block = block[:, ~miss[cols].any(axis=0)]
        if block.shape[1] == 0:
            continue
        mean = block.mean(axis=1)
        dev = block - mean[:, None]
        out[i, 0, 0] = block.shape[1]
        out[i, 0, 1:] = out[i, 1:, 0] = mean
        out[i, 1:, 1:] = dev @ dev.T
    return out


def merge_moments(pieces) -> np.ndarray:
    """The moments of :func:`_partition_moments` of all the rows from those of the
    partitions (P, k, d, d): rows summed, means weighted, cross-products summed with the
    between-partition term sum_p n_p (mean_p - mean)(mean_p - mean)' (Chan, Golub &
    LeVeque 1979)."""
    pieces = np.asarray(pieces, dtype=np.float64)
    n = pieces[:, :, 0, 0]  # (P, k)
    total = n.sum(axis=0)  # (k,)
    means = pieces[:, :, 0, 1:]  # (P, k, d-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(total[:, None] > 0, (n[..., None] * means).sum(axis=0)
                        / np.maximum(total, 1.0)[:, None], 0.0)
    dev = means - mean[None]
    comoment = pieces[:, :, 1:, 1:].sum(axis=0) + np.einsum("pk,pki,pkj->kij", n, dev, dev)
    out = np.zeros(pieces.shape[1:])
    out[:, 0, 0] = total
    out[:, 0, 1:] = out[:, 1:, 0] = mean
    out[:, 1:, 1:] = comoment
    return out


def partitioned_moments(ds, xcols, yi: int, z: tuple):
    """The moments of :func:`_partition_moments` of every candidate over all the
    partitions (:func:`merge_moments`): the sufficient statistics of the partial
    correlation."""
    cols = (*xcols, yi, *z)
    ds.require_numeric(cols, "fisher_z")
    lookup = {j: None if ds.kinds[j] == "continuous" else np.asarray(ds.levels[j], float)
              for j in cols}
    return merge_moments(ds.map(_partition_moments, list(xcols), yi, tuple(z), lookup))
