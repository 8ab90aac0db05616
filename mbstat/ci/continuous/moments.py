"""Sufficient statistics of the partial-correlation tests (``fisher_z``, ``spearman``,
``normal-scores``): the correlation matrix of a data set's columns, computed once and
shared by every test of a search.

A partial correlation of x and y given z depends on the data only through the
correlations of [z, y, x] (the Schur complement of the z block). :func:`column_moments`
centres and scales every column once (two passes: the mean, then the mean of the
deviations, so that a column far from 0, 1e8 + 1e-5 N(0, 1), keeps its digits) and keeps
the standardized columns ``U`` (``U'U`` is the correlation matrix); the rows of ``U'U`` a
test needs are computed in fixed blocks when first asked for (one GEMM each, on CuPy when
the tester's backend is the GPU) and kept. A test is then an O(|z|^3 + |z|^2 k) elimination
of the z block (one for a batch of k candidates against one (y, z)), independent of n
(:func:`partial_from_correlations`, compiled).

Numerical care. The correlation path squares the condition number of the z block, so it
answers only where each pivot of z and each residual variance of x and y given z (in
correlation units) is at least :data:`WELL_POSED` (1e-3: rounding error of r below about
1e-12); elsewhere the test is recomputed from the standardized rows by a QR decomposition
with column pivoting (:func:`partial_from_rows`), which also drops z columns collinear with
the others (the least-squares projection on the span of z, as statsmodels' ``OLS`` with its
pseudo-inverse).

The constant rule, invariant under offset and scale: a column is *constant* when all its
observed values are equal (its range is 0: scipy's ``ConstantInputWarning``), and *flat
given z* when its residual sum of squares given z is at most
``TAU**2 * css + ROUND**2 * raw_ss``: 1e-12 of its own centred sd (an exact linear
function of z), or half a unit of rounding of its values (``raw_ss`` its uncentred sum of
squares: 3 z + 1e8 less its fit on z is the rounding of 1e8, not signal). A flat x or y
carries no evidence: r = 0. A column whose variation is a real signal, 1e8 + 1e-5 s, is
neither (its sd is 1e-13 of its mean, 450 units of rounding).

Data in partitions (Dask): every partition sends its rows, means, the R factor of its
centred block (QR, so that sums of squares never form), and its range; they are merged
by stacking the R factors with sqrt(n_p) (mean_p - mean) (Chan, Golub & LeVeque 1979, in
square-root form) and one QR, and the tests run on the merged R as on rows.

Reuse: :class:`ColumnMoments` also gives centred cross-products (:meth:`ColumnMoments.
crossproducts`) and means, from which a least-squares fit of one column on others (the
normal equations of ``reg-lr``'s Gaussian branch, the residual variances of ``mi-cg`` with
no discrete z) follows without reading the rows again.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np
from numba import njit

__all__ = ["ColumnMoments", "ROUND", "TAU", "WELL_POSED", "column_moments",
           "partial_from_correlations", "partial_from_rows", "partitioned_partials",
           "standardize"]

#: A residual sd at most this share of the column's centred sd: an exact linear function.
TAU = 1e-12
#: A residual sd at most this share of the column's root mean square: rounding (half an
#: ulp's worth: the rounding of 3 z + 1e8 is about 0.19 eps of its magnitude).
ROUND = 0.5 * np.finfo(np.float64).eps
#: The correlation path answers where every pivot of z and residual variance of x and y
#: (correlation units) is at least this; elsewhere the rows (QR) answer.
WELL_POSED = 1e-3

#: Products of at most this many multiply-adds (a block of 32 rows of the correlation
#: matrix at 20,000 rows and 400 columns) are computed by :func:`gram_rows` in the calling
#: thread; larger ones by the BLAS (threaded). A threaded BLAS on a shared, loaded machine
#: waits for its threads: 32 rows x 50 columns at 20,000 rows took 1.7 s by OpenBLAS's
#: two threads against 13 ms here (2 cores, load average 11).
SMALL_GEMM = 2**28

_LOCK = threading.Lock()
_CACHE = weakref.WeakKeyDictionary()  # dataset -> {key: ColumnMoments or factor}
#: Missing-value patterns (na="pairwise") kept per data set, most recent first.
_PATTERNS = 4


def standardize(values: np.ndarray):
    """Centred, unit-norm columns of ``values`` (n, p) and their facts.

    Returns ``(u, unit, floor, mean, css)``: ``u`` (n, p) the deviations from the mean
    (the values less their mean, less the mean of those deviations: the mean of 1e8 +
    1e-5 s is rounded to 1.5e-8, a thousandth of the signal) over the square root of their sum of squares ``css`` (0 for a constant
    column, whose range is 0, and for a column with missing values); ``unit`` 1.0 for the
    others; ``floor`` the flat threshold of each column in correlation units
    (``TAU**2 + ROUND**2 * raw_ss / css``, inf for a constant).
    """
    values = np.asarray(values, dtype=np.float64)
    n, p = values.shape
    with np.errstate(invalid="ignore"):
        mean = values.mean(axis=0) if n else np.zeros(p)
        dev = values - mean  # exact near the mean (Sterbenz), the signal's digits kept
        shift = dev.mean(axis=0) if n else np.zeros(p)
        dev -= shift  # the mean itself is rounded to its magnitude's ulp: centre again
        mean = mean + shift
        css = np.einsum("ij,ij->j", dev, dev)
        const = (values.max(axis=0, initial=-np.inf) == values.min(axis=0, initial=np.inf)) \
            if n else np.ones(p, dtype=bool)
    bad = const | ~np.isfinite(css) | (css <= 0)
    scale = np.where(bad, 1.0, np.sqrt(np.where(bad, 1.0, css)))
    u = np.asfortranarray(dev / scale)
    if bad.any():
        u[:, bad] = 0.0
    unit = np.where(bad, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(bad, np.inf, TAU**2 + ROUND**2 * (1.0 + n * mean**2 / css))
    return u, unit, floor, mean, np.where(bad, 0.0, css)


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def gram_rows(u, lo, hi, out):
    """Rows ``lo:hi`` of ``u' u`` into ``out`` (hi - lo, p), ``u`` (n, p) in Fortran order:
    dot products of columns, summed over fixed chunks of 1,024 rows (the chunk of four
    columns stays in the cache), four columns at a time. The order of the sums depends only
    on n and p, never on the queries."""
    n, p = u.shape
    out[:, :] = 0.0
    chunk = 1024
    for r0 in range(0, n, chunk):
        r1 = min(n, r0 + chunk)
        m = r1 - r0
        for i in range(lo, hi):
            a = u[r0:r1, i]
            j = 0
            while j + 4 <= p:
                b0, b1, b2, b3 = u[r0:r1, j], u[r0:r1, j + 1], u[r0:r1, j + 2], u[r0:r1, j + 3]
                s0 = s1 = s2 = s3 = 0.0
                for r in range(m):
                    ar = a[r]
                    s0 += ar * b0[r]
                    s1 += ar * b1[r]
                    s2 += ar * b2[r]
                    s3 += ar * b3[r]
                out[i - lo, j] += s0
                out[i - lo, j + 1] += s1
                out[i - lo, j + 2] += s2
                out[i - lo, j + 3] += s3
                j += 4
            while j < p:
                b0 = u[r0:r1, j]
                s0 = 0.0
                for r in range(m):
                    s0 += a[r] * b0[r]
                out[i - lo, j] += s0
                j += 1


class ColumnMoments:
    """The correlation matrix of the columns of ``values`` (n, p), filled by blocks of rows
    when asked (:meth:`rows`); ``xp`` the array module of the GEMMs (numpy or CuPy).

    Attributes: ``n`` rows, ``mean`` and ``css`` (centred sums of squares) of each column,
    ``unit`` (0 for a constant column), ``floor`` (flat thresholds in correlation units),
    ``state``: the rows computed so far (:meth:`rows`).
    """

    def __init__(self, values: np.ndarray, xp=np):
        u, self.unit, self.floor, self.mean, self.css = standardize(values)
        self.n, self.p = u.shape
        self.xp = xp
        self._u = u  # host copy (the QR fallback reads its columns)
        self._u_dev = u if xp is np else xp.asarray(u)
        #: rows computed together (a fixed shape: an entry's value never depends on the
        #: order of the queries); fewer on wide data
        self.block = 32 if self.p <= 8192 else 4
        cap = max(4 * self.block, (256 * 2**20) // (8 * max(self.p, 1)))
        self._cap = min(cap, self.p + self.block)
        #: (store, slot): row ``slot[v]`` of ``store`` is row v of the correlation matrix
        #: once computed (-1 before); replaced whole when full, so that a reader holding
        #: one pair (another thread) never sees a row overwritten
        self.state = (np.zeros((self._cap, self.p)), np.full(self.p, -1, dtype=np.int64))
        self._used = 0
        self._lock = threading.Lock()

    def rows(self, cols) -> tuple:
        """Make rows ``cols`` of the correlation matrix available; returns the
        ``(store, slot)`` pair that holds them."""
        store, slot = self.state
        if all(slot[c] >= 0 for c in cols):
            return store, slot
        with self._lock:
            store, slot = self.state
            blocks = sorted({c // self.block for c in cols if slot[c] < 0})
            if self._used + len(blocks) * self.block > len(store):  # full: start again
                blocks = sorted({c // self.block for c in cols})
                size = max(self._cap, len(blocks) * self.block)  # one query's rows fit
                store, slot = np.zeros((size, self.p)), np.full(self.p, -1, np.int64)
                self._used = 0
            for b in blocks:
                lo, hi = b * self.block, min((b + 1) * self.block, self.p)
                target = store[self._used:self._used + hi - lo]
                if self.xp is np and self.n * self.p * (hi - lo) <= SMALL_GEMM:
                    gram_rows(self._u, lo, hi, target)
                else:
                    block = self._u_dev[:, lo:hi].T @ self._u_dev
                    if self.xp is not np:
                        block = self.xp.asnumpy(block)
                    target[:] = block
                slot[lo:hi] = np.arange(self._used, self._used + hi - lo)
                self._used += hi - lo
            self.state = (store, slot)
        return store, slot

    def columns(self, cols) -> np.ndarray:
        """The standardized columns ``cols`` (n, len(cols)) on the host."""
        return self._u[:, list(cols)]

    def crossproducts(self, a, b) -> np.ndarray:
        """Centred cross-products sum_i (v_a - mean_a)(v_b - mean_b) of the columns ``a``
        (rows of the result) with ``b``: the sufficient statistics of a least-squares fit
        (covariance = this / (n - 1))."""
        a, b = list(a), list(b)
        store, slot = self.rows(a)
        corr = store[slot[a]][:, b]
        return corr * np.sqrt(np.outer(self.css[a], self.css[b]))

    def partial(self, y: int, xcols, z) -> tuple:
        """Partial correlations (k,) of columns ``xcols`` with y given z: the correlation
        path where it is well posed, the QR of the standardized rows elsewhere."""
        z = np.asarray(z, dtype=np.int64)
        xcols = np.asarray(xcols, dtype=np.int64)
        store, slot = self.rows([y, *z.tolist()])
        r = np.zeros(len(xcols))
        status = np.zeros(len(xcols), dtype=np.int8)
        partial_from_correlations(store, slot, self.unit, self.floor, y, z, xcols, WELL_POSED,
                                  r, status)
        redo = np.flatnonzero(status == 2)
        if len(redo):
            cols = [y, *z.tolist(), *xcols[redo].tolist()]
            local = self.columns(cols)
            m = len(z)
            r[redo] = partial_from_rows(local, self.unit[cols], self.floor[cols], 0,
                                        np.arange(m + 1, len(cols)), np.arange(1, m + 1))
        return r, status


@njit(cache=True, nogil=True)
def partial_from_correlations(store, slot, unit, floor, y, z, xs, theta, r, status):
    """Partial correlations of columns ``xs`` with y given z from the rows of the correlation
    matrix (row v is ``store[slot[v]]``; rows of y and z present), into ``r``; ``status``
    per candidate: 0 computed, 1 flat or constant (r = 0), 2 ill-posed (to recompute from
    the rows). The z block is eliminated once with pivoting on the largest residual
    variance (a pivoted Cholesky), every candidate updated alongside."""
    m, k = len(z), len(xs)
    wzz = np.empty((m, m))
    wzy = np.empty(m)
    wzx = np.empty((m, k))
    for i in range(m):
        row = store[slot[z[i]]]
        for j in range(m):
            wzz[i, j] = row[z[j]]
        wzy[i] = row[y]
        for t in range(k):
            wzx[i, t] = row[xs[t]]
    yrow = store[slot[y]]
    wyy = unit[y]
    wyx = np.empty(k)
    wxx = np.empty(k)
    for t in range(k):
        wyx[t] = yrow[xs[t]]
        wxx[t] = unit[xs[t]]
    active = np.ones(m, dtype=np.bool_)
    for _ in range(m):
        best, d = -1, -1.0
        for i in range(m):
            if active[i] and wzz[i, i] > d:
                best, d = i, wzz[i, i]
        if best < 0:
            break
        if d <= floor[z[best]]:  # linear in the pivots already taken (or constant)
            if d >= theta or unit[z[best]] == 0.0:
                active[best] = False
                continue
        if d < theta:  # too close to collinear for the correlations: the rows decide
            for t in range(k):
                status[t] = 2
            return
        active[best] = False
        s = np.sqrt(d)
        cz = np.empty(m)
        for i in range(m):
            cz[i] = wzz[best, i] / s if active[i] else 0.0
        cy = wzy[best] / s
        for i in range(m):
            if active[i]:
                for j in range(m):
                    if active[j]:
                        wzz[i, j] -= cz[i] * cz[j]
                wzy[i] -= cz[i] * cy
        wyy -= cy * cy
        for t in range(k):
            cx = wzx[best, t] / s
            for i in range(m):
                if active[i]:
                    wzx[i, t] -= cz[i] * cx
            wyx[t] -= cy * cx
            wxx[t] -= cx * cx
    if unit[y] == 0.0 or wyy <= floor[y]:
        if unit[y] == 0.0 or wyy >= theta:
            for t in range(k):
                r[t] = 0.0
                status[t] = 1
            return
    if wyy < theta:
        for t in range(k):
            status[t] = 2
        return
    for t in range(k):
        x = xs[t]
        if unit[x] == 0.0 or (wxx[t] <= floor[x] and wxx[t] >= theta):
            r[t] = 0.0
            status[t] = 1
        elif wxx[t] < theta:
            status[t] = 2
        else:
            v = wyx[t] / np.sqrt(wyy * wxx[t])
            r[t] = min(1.0, max(-1.0, v))
            status[t] = 0


def partial_from_rows(u, unit, floor, y: int, xcols, z) -> np.ndarray:
    """Partial correlations (k,) of columns ``xcols`` of ``u`` with column y given the
    columns z, from rows whose columns are centred and of unit norm (``u`` standardized
    data, or a square-root factor ``R`` with ``R'R`` the correlation matrix): the columns
    of z, pivoted by residual norm, form an orthonormal basis (QR with column pivoting;
    a z column whose residual is within its ``floor`` is collinear and dropped); y and the
    candidates are projected off it; a flat x or y (residual sum of squares within its
    ``floor``) gives r = 0."""
    from scipy import linalg

    u = np.asarray(u, dtype=np.float64)
    z, xcols = list(z), list(xcols)
    block = u[:, [y, *xcols]]
    if z:
        zu = u[:, z]
        q, rz, piv = linalg.qr(zu, mode="economic", pivoting=True)
        d = np.abs(np.diag(rz)) ** 2
        keep = 0
        for j in range(len(d)):  # pivoted: residual norms decrease
            if d[j] <= floor[z[piv[j]]] or unit[z[piv[j]]] == 0.0:
                break
            keep += 1
        q = q[:, :keep]
        resid = block - q @ (q.T @ block)
        resid -= q @ (q.T @ resid)  # once more: orthogonal to working precision
    else:
        resid = block
    ss = np.einsum("ij,ij->j", resid, resid)
    cols = [y, *xcols]
    flat = (ss <= floor[cols]) | (unit[cols] == 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (resid[:, 1:].T @ resid[:, 0]) / np.sqrt(ss[1:] * ss[0])
    r[flat[1:] | flat[0]] = 0.0
    return np.clip(np.nan_to_num(r), -1.0, 1.0)


def _store_for(dataset) -> dict:
    with _LOCK:
        hit = _CACHE.get(dataset)
        if hit is None:
            hit = _CACHE[dataset] = OrderedDict()
        return hit


def column_moments(dataset, xp=np, pattern: tuple = ()) -> ColumnMoments:
    """The :class:`ColumnMoments` of ``dataset``'s numeric columns (:meth:`Dataset.numeric`),
    over the rows complete in the columns ``pattern`` (na="pairwise"; () for every row),
    computed once per data set, pattern and array module and shared by every tester of
    the data set (kept while the data set lives; the last few patterns)."""
    store = _store_for(dataset)
    key = (getattr(xp, "__name__", "numpy"), tuple(sorted(pattern)))
    hit = store.get(key)
    if hit is not None:
        store.move_to_end(key)
        return hit
    values = dataset.numeric()
    if pattern:
        values = values[~dataset.missing[:, list(pattern)].any(axis=1)]
    hit = ColumnMoments(values, xp)
    with _LOCK:
        store[key] = hit
        while sum(k[1] != () for k in store) > _PATTERNS:
            old = next(k for k in store if k[1] != ())
            del store[old]
    return hit


# ------------------------------------------------------------------ data in partitions
def _numeric_rows(part, cols, lookup):
    codes, values = part["codes"], part["values"]
    out = np.empty((codes.shape[1], len(cols)))
    for i, j in enumerate(cols):
        out[:, i] = values[j] if lookup[j] is None else lookup[j][codes[j]]
    return out


def _partition_factors(part, groups, lookup):
    """Per group of columns: (rows, means as (hi, lo), R factor of the centred block,
    minimum, maximum) over the partition's rows complete in the group's columns (QR, so
    that no sum of squares forms)."""
    miss = part["missing"]
    out = []
    for cols in groups:
        block = _numeric_rows(part, cols, lookup)
        if miss is not None:
            block = block[~miss[list(cols)].any(axis=0)]
        n = block.shape[0]
        if n == 0:
            c = len(cols)
            out.append((0, (np.zeros(c), np.zeros(c)), np.zeros((0, c)), np.full(c, np.inf),
                        np.full(c, -np.inf)))
            continue
        hi = block.mean(axis=0)
        dev = block - hi
        lo = dev.mean(axis=0)  # the mean is (hi + lo): hi rounded to its ulp, lo the rest
        factor = np.linalg.qr(dev - lo, mode="r")
        out.append((n, (hi, lo), factor, block.min(axis=0), block.max(axis=0)))
    return out


def merge_factors(pieces):
    """The rows, means, square-root factor R of the centred cross-products (R'R) and the
    ranges of all the rows from those of the partitions: the factors stacked with
    sqrt(n_p) (mean_p - mean) and reduced by one QR. Each partition's mean comes as
    (hi, lo), hi rounded and lo the mean of the deviations from it; the differences of
    means are taken from the first partition's hi (exact), so that columns far from 0
    keep the digits of their signal."""
    pieces = [pc for pc in pieces if pc[0]] or pieces[:1]
    n = np.array([pc[0] for pc in pieces], dtype=np.float64)
    total = n.sum()
    ref = pieces[0][1][0]
    diffs = np.array([(pc[1][0] - ref) + pc[1][1] for pc in pieces])  # mean_p - ref
    shift = (n[:, None] * diffs).sum(axis=0) / max(total, 1.0)
    stacked = [pc[2] for pc in pieces] + [np.sqrt(n[:, None]) * (diffs - shift)]
    factor = np.linalg.qr(np.vstack(stacked), mode="r")
    lo = np.min([pc[3] for pc in pieces], axis=0)
    hi = np.max([pc[4] for pc in pieces], axis=0)
    return total, ref + shift, factor, lo, hi


def _standardized_factor(total, mean, factor, lo, hi):
    """The merged factor with unit-norm columns and the columns' unit and floor (as
    :func:`standardize`)."""
    css = np.einsum("ij,ij->j", factor, factor)
    bad = (lo == hi) | (css <= 0) | ~np.isfinite(css)
    scale = np.sqrt(np.where(bad, 1.0, css))
    u = factor / scale
    u[:, bad] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(bad, np.inf, TAU**2 + ROUND**2 * (1.0 + total * mean**2 / css))
    return u, np.where(bad, 0.0, 1.0), floor


def partitioned_partials(ds, y: int, xcols, z) -> tuple:
    """Partial correlations (k,) and rows (k,) of columns ``xcols`` with y given z on a
    data set in partitions: each test over the rows complete for its own x, y and z. The
    candidates without missing cells share one group (rows complete in y and z); each of
    the others is its own. One pass over the partitions; with no missing cells at all the
    factor of every numeric column is computed once and kept."""
    xcols, z = [int(j) for j in xcols], [int(j) for j in z]
    ds.require_numeric((*xcols, y, *z), "fisher_z")
    miss = ds.missing_columns
    r, n = np.zeros(len(xcols)), np.zeros(len(xcols))
    m = len(z)
    if not miss.any():
        store = _store_for(ds)
        hit = store.get("factor")
        if hit is None:
            cols = tuple(j for j in range(ds.n_cols) if ds._numeric_levels[j])
            lookup = _lookup(ds, cols)
            merged = merge_factors([pc[0] for pc in ds.map(_partition_factors, [cols],
                                                            lookup)])
            hit = store["factor"] = ({j: i for i, j in enumerate(cols)},
                                     *_standardized_factor(*merged), merged[0])
        where, u, unit, floor, total = hit
        pos = [where[j] for j in (y, *z, *xcols)]
        r[:] = partial_from_rows(u[:, pos], unit[pos], floor[pos], 0,
                                 range(m + 1, m + 1 + len(xcols)), range(1, m + 1))
        n[:] = total
        return r, n
    shared = [i for i, x in enumerate(xcols) if not miss[x]]
    groups, members = [], []
    if shared:
        groups.append((y, *z, *(xcols[i] for i in shared)))
        members.append(shared)
    for i, x in enumerate(xcols):
        if miss[x]:
            groups.append((y, *z, x))
            members.append([i])
    lookup = _lookup(ds, {j for g in groups for j in g})
    per_part = ds.map(_partition_factors, groups, lookup)
    for g, (cols, idx) in enumerate(zip(groups, members)):
        merged = merge_factors([pc[g] for pc in per_part])
        n[idx] = merged[0]
        if merged[0] <= m + 1:
            continue
        u, unit, floor = _standardized_factor(*merged)
        r[idx] = partial_from_rows(u, unit, floor, 0, range(m + 1, len(cols)), range(1, m + 1))
    return r, n


def _lookup(ds, cols):
    return {j: None if ds.kinds[j] == "continuous" else np.asarray(ds.levels[j], float)
            for j in cols}
