"""Dependency of a feature set on the class (Liu, Tang & Zeng 2015, Definitions 7 and 9).

``D(X)`` is the fraction of samples whose class is fixed by their values on
the feature set ``X``:

* Definition 7 (discrete data): a sample counts when every sample with its
  value combination on ``X`` has its class (the rough-set positive region).
* Definition 9 (numerical data): columns are min-max normalised to [0, 1]
  and a sample counts when every sample within Euclidean distance ``theta``
  of it on ``X`` has its class (the neighbourhood rule of Hu et al.).

``D(empty set) = 0`` and ``M`` a subset of ``Q`` implies ``D(M) <= D(Q)``
(Theorem 2). :func:`dependency` evaluates one set; :func:`fsdms` asks the
engines below for many sets that differ by one feature, which they answer
from states updated one column at a time:

* discrete: a state is the group id of every sample on ``X``; adding a
  column refines the ids, ``D(X - {a})`` for every ``a`` comes from prefix
  and suffix group ids, and the purity of the groups of many sets is found
  with one row-wise sort (no Python loop over samples);
* numerical: a state is the vector of squared distances of all pairs of
  samples from different classes; adding or removing a feature adds or
  subtracts that column's squared differences, and a sample counts when
  none of its pairs is within ``theta``. The arrays live on the backend's
  device (numpy or CuPy).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_features, check_number
from .backend import resolve_backend
from .data import CONTINUOUS, as_dataset

__all__ = ["dependency"]

#: Largest number of array elements one batch may hold (chunks beyond it).
_CHUNK = 1 << 24

_THETA_HINT = ("pass theta=0.14 (the paper's setting for columns normalised to [0, 1]) "
               "for the neighbourhood dependency of Definition 9, or discretize=<bins> "
               "to bin the continuous columns and use Definition 7")


def dependency(data, features, target, theta=None, *, discretize=None, na="raise",
               backend=None) -> float:
    """Dependency ``D(features)`` of the class ``target`` on a feature set.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
    features : str, int or sequence of them
        The feature set ``X`` (names or positions), at least one feature
        (``D`` of the empty set is 0 by definition).
    target : str or int
        The class column; it must be discrete with at least two classes.
    theta : float, optional
        Neighbourhood radius (> 0) of Definition 9. None uses Definition 7,
        which needs every feature discrete.
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins first.
    na : {"raise", "drop"}
        What to do with missing values.
    backend : {"auto", "cpu", "gpu"}, optional
        Where the arrays live (default: the package setting).

    Returns
    -------
    float
        The fraction of samples in the positive region, in [0, 1].

    Notes
    -----
    Mixed data under Definition 9: a discrete column adds 0 to the squared
    distance where two samples agree and 1 where they differ (the overlap
    metric), so for ``theta < 1`` neighbours must agree on every discrete
    feature, as in Hu et al.'s neighbourhood rough sets.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "y": [0, 0, 0, 1]})
    >>> dependency(df, ["a"], "y")   # a = 0 fixes y = 0: 2 of 4 samples
    0.5
    >>> dependency(df, ["a", "b"], "y")
    1.0
    """
    ds, tgt, cols = prepare_dependency(data, target, features, theta=theta,
                                       discretize=discretize, na=na, param="features",
                                       default_all=False)
    engine = make_engine(ds, tgt, cols, theta, backend)
    return engine.count(engine.state(range(len(cols)))) / engine.n


def prepare_dependency(data, target, features, *, theta, discretize, na, param="features",
                       default_all=True):
    """Check the arguments shared by :func:`dependency` and :func:`~mbstat.fsdms`.

    Returns (dataset, target position, feature positions).
    """
    check_number("theta", theta, low=0.0, closed="neither", allow_none=True)
    if theta is not None and not math.isfinite(theta):
        raise ValueError(f"theta must be a finite number > 0; got {theta!r}")
    ds = as_dataset(data, na=na, discretize=discretize)
    ds.require_complete("the rough-set dependency (dependency, fsdms)")
    t = ds.index(target, "target")
    if ds.kinds[t] == CONTINUOUS:
        raise ValueError(
            f"target {ds.names[t]!r} is continuous; the dependency needs class labels: "
            "give it an integer, string or categorical dtype, or pass discretize=<bins>"
        )
    if len(np.unique(ds.codes[:, t])) < 2:
        raise ValueError(
            f"target {ds.names[t]!r} has a single class; the dependency needs at least two"
        )
    if features is None and not default_all:
        features = ()  # no default set: refused as empty
    cols = check_features(ds, t, features, param)
    if theta is None:
        bad = [ds.names[j] for j in cols if ds.kinds[j] == CONTINUOUS]
        if bad:
            raise ValueError(
                f"theta is None but features {bad[:5]}{' ...' if len(bad) > 5 else ''} are "
                f"continuous; {_THETA_HINT}"
            )
    return ds, t, cols


#: Discrete data with at least this many features and at most :data:`_PAIRS_MAX_ROWS` rows
#: is evaluated through its close pairs of samples (:class:`_ClosePairs`).
_PAIRS_MIN_FEATURES = 64
_PAIRS_MAX_ROWS = 20_000


def make_engine(ds, target: int, cols, theta, backend, pairs=None):
    """The dependency engine for ``cols`` of ``ds`` (Definition 7 or 9).

    ``pairs`` (discrete data on the CPU): evaluate removals through the close pairs of
    samples (:class:`_ClosePairs`; True, False, or None: when there are at least
    :data:`_PAIRS_MIN_FEATURES` features and at most :data:`_PAIRS_MAX_ROWS` rows)."""
    be = resolve_backend(backend, ds.n_rows)
    y = np.unique(ds.codes[:, target], return_inverse=True)[1].astype(np.int64)
    if theta is None:
        if pairs is None:
            pairs = len(cols) >= _PAIRS_MIN_FEATURES and ds.n_rows <= _PAIRS_MAX_ROWS
        return _DiscreteEngine(be, ds.codes[:, list(cols)], ds.cardinalities[list(cols)], y,
                               pairs=bool(pairs) and not be.is_gpu)
    return _NeighbourEngine(be, ds, cols, y, float(theta))


def _to_numpy(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


@dataclass(frozen=True)
class State:
    """A feature set (positions into the engine's columns) and its engine data."""

    cols: tuple
    data: object = None


class _Engine:
    """Shared bookkeeping: the backend and the number of evaluations."""

    kind = ""

    def __init__(self, be, y):
        self.backend = be
        self.xp = be.xp
        self.n = int(len(y))
        self.n_classes = int(y.max()) + 1
        self.n_evals = 0

    def state(self, cols) -> State:
        """The state of a feature set, built one column at a time."""
        st = self.empty()
        for j in cols:
            st = self.add(st, j)
        return st

    def full(self) -> State:
        return self.state(range(self.n_features))

    def no_blanket(self, alive, c_minus) -> list:
        """Algorithm 2: the b in ``alive`` with ``D(F - {m}) > D(F - {m, b})`` for every
        m != b (``c_minus[m]``: the count of ``D(F - {m})``), one batch per m."""
        full = self.full()
        alive = list(alive)
        for m in range(self.n_features):
            test = [b for b in alive if b != m]
            if not test:
                continue
            c = self.count_remove(self.remove(full, m), test)
            failed = {b for b, v in zip(test, c) if not c_minus[m] > v}
            alive = [b for b in alive if b not in failed]
        return alive


# ---------------------------------------------------------------------------
# Definition 7: discrete data
# ---------------------------------------------------------------------------


class _DiscreteEngine(_Engine):
    """Positive region of the partition by value combinations (Definition 7)."""

    kind = "discrete"

    def __init__(self, be, codes, cards, y, pairs=False):
        super().__init__(be, y)
        xp = self.xp
        self.cards = np.maximum(np.asarray(cards, dtype=np.int64), 1)
        self.n_features = len(self.cards)
        self.y = xp.asarray(y)
        self._host = np.asarray(codes)  # (n, d), the caller's compact dtype: never copied
        self._codes = None
        self.pairs = _ClosePairs(self._host, y) if pairs else None
        self._levels = None

    @property
    def codes(self):
        """Codes (d, n) int64 on the device, one row per feature (built on first use)."""
        if self._codes is None:
            self._codes = self.xp.asarray(
                np.ascontiguousarray(np.asarray(self._host, dtype=np.int64).T))
        return self._codes

    def _compress(self, key):
        return self.xp.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)

    def _ids(self, st: State):
        if st.data is None:  # a removed-from state: rebuild its ids
            ids = self.xp.zeros(self.n, dtype=np.int64)
            for j in st.cols:
                ids = self._compress(ids * int(self.cards[j]) + self.codes[j])
            return ids
        return st.data

    def empty(self) -> State:
        return State((), self.xp.zeros(self.n, dtype=np.int64))

    def add(self, st, j) -> State:
        ids = self._ids(st)
        return State(st.cols + (j,), self._compress(ids * int(self.cards[j]) + self.codes[j]))

    def remove(self, st, j) -> State:
        return State(tuple(c for c in st.cols if c != j), None)

    def full(self) -> State:
        if self.pairs is not None:  # removals are evaluated from pairs: no ids needed
            return State(tuple(range(self.n_features)), None)
        return super().full()

    def _removed(self, st) -> np.ndarray:
        """Mask of the features not in ``st`` (the removed ones)."""
        out = np.ones(self.n_features, dtype=bool)
        out[list(st.cols)] = False
        return out

    def count(self, st) -> int:
        self.n_evals += 1
        if self.pairs is not None and st.data is None:
            return int(self.pairs.count_remove(self._removed(st), np.zeros(0, np.int64))[0])
        return int(self._pure(self._ids(st)[None, :])[0])

    def no_blanket(self, alive, c_minus) -> list:
        if self.pairs is None:
            return super().no_blanket(alive, c_minus)
        # counted as the evaluations of the paper's loop it answers (len(alive) per m)
        self.n_evals += len(alive) * (self.n_features - 1)
        return self.pairs.no_blanket(alive)

    def count_add(self, st, cands) -> np.ndarray:
        cands = list(cands)
        if self.pairs is not None:  # wide data: count the cells of the impure groups only
            self.n_evals += len(cands)
            return self._count_add_cells(self._ids(st), np.asarray(cands, dtype=np.int64))
        self.n_evals += len(cands)
        ids = self._ids(st)
        cards = self.xp.asarray(self.cards[cands])
        codes = self.codes[cands]
        return self._pure_chunked(lambda sl: ids[None, :] * cards[sl, None] + codes[sl],
                                  len(cands))

    def count_remove(self, st, cands) -> np.ndarray:
        cands = list(cands)
        self.n_evals += len(cands)
        cols = st.cols
        if not cands:
            return np.zeros(0, dtype=np.int64)
        if self.pairs is not None:
            return self.pairs.count_remove(self._removed(st),
                                           np.asarray(cands, dtype=np.int64))[1]
        xp = self.xp
        pre = [xp.zeros(self.n, dtype=np.int64)]
        for j in cols:
            pre.append(self._compress(pre[-1] * int(self.cards[j]) + self.codes[j]))
        suf = [xp.zeros(self.n, dtype=np.int64)]
        for j in reversed(cols):
            suf.append(self._compress(suf[-1] * int(self.cards[j]) + self.codes[j]))
        suf = suf[::-1]  # suf[i] = ids of cols[i:]
        pos = {c: i for i, c in enumerate(cols)}
        idx = [pos[c] for c in cands]
        n = self.n
        return self._pure_chunked(
            lambda sl: xp.stack([pre[i] * n + suf[i + 1] for i in idx[sl]]), len(cands))

    def _count_add_cells(self, ids: np.ndarray, cands: np.ndarray) -> np.ndarray:
        """``D(P + a)`` for each candidate a from the class counts of the cells (group of P,
        value of a) of the rows in impure groups of P (a pure group stays pure), counted
        by one sparse product with the one-hot matrix of the features' nonzero levels."""
        from scipy import sparse

        y, k = np.asarray(self.y), self.n_classes
        groups, ids = np.unique(ids, return_inverse=True)
        per = np.bincount(ids * k + y, minlength=len(groups) * k).reshape(-1, k)
        impure = np.count_nonzero(per, axis=1) > 1
        rows = np.flatnonzero(impure[ids])
        base = self.n - len(rows)  # D(P): the rows of pure groups
        if not len(rows):
            return np.full(len(cands), base, dtype=np.int64)
        g = np.cumsum(impure)[ids[rows]] - 1  # impure groups renumbered 0..G-1
        n_g = int(impure.sum())
        cells = sparse.csr_array((np.ones(len(rows)), (g * k + y[rows], np.arange(len(rows)))),
                                 shape=(n_g * k, len(rows)))
        onehot, start = self._onehot()
        sub = onehot[rows]
        total = per[impure].reshape(-1)  # (G * K,): rows of each group and class
        out = np.empty(len(cands), dtype=np.int64)
        step = max(1, _CHUNK // max(n_g * k * 2, 1))
        for s0 in range(0, len(cands), step):
            part = cands[s0:s0 + step]
            sizes = start[part + 1] - start[part]
            first = np.repeat(start[part] - np.cumsum(sizes) + sizes, sizes)
            levels = first + np.arange(int(sizes.sum()))  # the level columns of part
            counts = (cells @ sub[:, levels]).toarray()  # (G * K, levels)
            which = np.repeat(np.arange(len(part)), sizes)
            pure = np.zeros(len(part), dtype=np.float64)
            nonzero = counts.reshape(n_g, k, -1)
            size = nonzero.sum(axis=1)
            ok = np.count_nonzero(nonzero, axis=1) == 1
            np.add.at(pure, which, (size * ok).sum(axis=0))
            agg = sparse.csr_array((np.ones(len(levels)), (np.arange(len(levels)), which)),
                                   shape=(len(levels), len(part)))
            zero = (total[:, None] - (agg.T @ counts.T).T).reshape(n_g, k, len(part))
            pure += (zero.sum(axis=1) * (np.count_nonzero(zero, axis=1) == 1)).sum(axis=0)
            out[s0:s0 + len(part)] = base + pure.astype(np.int64)
        return out

    def _onehot(self):
        """The one-hot matrix (n, L) of every feature's nonzero levels (CSR), and for each
        feature the range of its columns (``start[a]:start[a + 1]``)."""
        if self._levels is None:
            from scipy import sparse

            rows, cols = np.nonzero(self._host)
            vals = self._host[rows, cols].astype(np.int64)
            start = np.concatenate([[0], np.cumsum(self.cards - 1)])
            onehot = sparse.csc_array((np.ones(len(rows)), (rows, start[cols] + vals - 1)),
                                      shape=(self.n, int(start[-1]))).tocsr()
            self._levels = (onehot, start)
        return self._levels


    def _pure_chunked(self, make_keys, k) -> np.ndarray:
        step = max(1, _CHUNK // max(self.n, 1))
        out = [self._pure(make_keys(slice(s, s + step))) for s in range(0, k, step)]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def _pure(self, keys) -> np.ndarray:
        """Samples in class-pure groups, for each row of group keys (k, n)."""
        xp = self.xp
        k, n = keys.shape
        z = keys * self.n_classes + self.y[None, :]
        z.sort(axis=1)
        g = z // self.n_classes
        lab = z - g * self.n_classes
        same = g[:, 1:] == g[:, :-1]
        mixed = same & (lab[:, 1:] != lab[:, :-1])
        start = xp.ones((k, n), dtype=bool)
        start[:, 1:] = ~same
        gid = xp.cumsum(start, axis=1) - 1 + (xp.arange(k) * n)[:, None]
        impure = xp.zeros(k * n, dtype=bool)
        impure[gid[:, 1:][mixed]] = True
        return n - _to_numpy(impure[gid].sum(axis=1)).astype(np.int64)


class _ClosePairs:
    """Removals from a large feature set, evaluated through close pairs of samples.

    A sample is outside the positive region of a set R exactly when a sample of another
    class agrees with it on every feature of R. So, with h_R(i, j) the number of features
    of R on which a cross-class pair differs, ``D(R) = n - #{samples in a pair with
    h_R = 0}`` and ``D(R - {a}) = D(R) - #{further samples in a pair with h_R = 1 that
    differs on a}``. The pairs with ``h_B <= span`` for a base set B are found by sparse
    products of the one-hot matrix of the nonzero levels (``h = r_i + r_j - NZ_i.NZ_j -
    E_i.E_j``, r the count of nonzero codes of a sample, NZ their indicators, E the
    one-hot of the nonzero levels), in blocks of rows. They answer for every R = B - Q
    with ``|Q| < span``: removing Q lowers h by at most |Q|, so a pair left out still has
    ``h_R >= 2``. A query outside that range collects the pairs again from its own R. On
    wide data (many features, few close pairs) ``D(R - {a})`` for every a costs time in
    the number of close pairs, not in |R|.
    """

    #: Pairs stored per collection: those with h <= span, or every cross-class pair when
    #: there are at most ``all_pairs`` pairs of samples (then a collection serves every
    #: later query whose removed set contains its own: h is lowered in place).
    span = 32
    all_pairs = 25_000_000

    def __init__(self, codes, y):
        self.codes = codes  # (n, d), read only
        self.y = np.asarray(y)
        self.n, self.d = codes.shape
        self.base = None  # the removed features of the base set B (a mask)
        self.limit = np.inf if self.n * self.n <= self.all_pairs else self.span
        self.i = self.j = self.h = None
        self._nz = None

    def _matrices(self):
        if self._nz is None:
            from scipy import sparse

            rows, cols = np.nonzero(self.codes)
            vals = self.codes[rows, cols].astype(np.int64)
            ones = np.ones(len(rows), dtype=np.float32)
            nz = sparse.csc_array((ones, (rows, cols)), shape=(self.n, self.d))
            top = int(vals.max(initial=1))  # level v of feature c: column c * top + v - 1
            onehot = None if top == 1 else sparse.csc_array(
                (ones, (rows, cols * top + vals - 1)), shape=(self.n, self.d * top))
            self._nz = (nz, onehot, top, nz.tocsr())
        return self._nz

    def _collect(self, removed: np.ndarray) -> None:
        """Store the cross-class pairs with h <= span on the features not ``removed``."""
        nz, onehot, top, _ = self._matrices()
        keep = np.flatnonzero(~removed)
        nz = nz[:, keep].tocsr()
        oh = None if onehot is None else onehot[:, (keep[:, None] * top
                                                   + np.arange(top)).reshape(-1)].tocsr()
        r = np.asarray(nz.sum(axis=1)).reshape(-1)
        nz_t = nz.T.tocsc()
        oh_t = None if oh is None else oh.T.tocsc()
        y, n = self.y, self.n
        found = ([], [], [])
        block = max(1, (1 << 22) // max(n, 1))
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            same = (nz[lo:hi] @ nz_t).toarray()
            same += same if oh is None else (oh[lo:hi] @ oh_t).toarray()
            h = np.rint(r[lo:hi, None] + r[None, :] - same).astype(np.int64)
            ii, jj = np.nonzero((h <= self.limit) & (y[lo:hi, None] != y[None, :])
                                & (np.arange(lo, hi)[:, None] < np.arange(n)[None, :]))
            for part, values in zip(found, (ii + lo, jj, h[ii, jj])):
                part.append(values)
        self.i, self.j, self.h = (np.concatenate(part) for part in found)
        self.i, self.j = self.i.astype(np.int32), self.j.astype(np.int32)
        self.base = removed.copy()

    def distances(self, removed: np.ndarray) -> np.ndarray:
        """h_R of the stored pairs, R = the features not ``removed`` (a mask); the pairs
        not stored have h_R >= 2."""
        if self.base is None or (self.base & ~removed).any():
            self._collect(removed)
        extra = np.flatnonzero(removed & ~self.base)
        if len(extra) >= self.limit:
            self._collect(removed)
            extra = extra[:0]
        for f in extra.tolist():  # the base moves to R: later queries remove more
            col = self.codes[:, f]
            self.h -= col[self.i] != col[self.j]
        self.base = removed.copy()
        return self.h

    def differ(self, p: int, removed: np.ndarray) -> np.ndarray:
        """The features not ``removed`` on which the stored pair p differs."""
        a, b = int(self.i[p]), int(self.j[p])
        rows = self._matrices()[3]
        near = np.union1d(rows.indices[rows.indptr[a]:rows.indptr[a + 1]],
                          rows.indices[rows.indptr[b]:rows.indptr[b + 1]])
        near = near[self.codes[a, near] != self.codes[b, near]]
        return near[~removed[near]]

    def count_remove(self, removed: np.ndarray, cands: np.ndarray) -> tuple:
        """(``D(R)``, ``D(R - {a})`` for each a in ``cands``) as counts, R = the features
        not ``removed``."""
        h = self.distances(removed)
        bad = np.zeros(self.n, dtype=bool)
        bad[self.i[h == 0]] = True
        bad[self.j[h == 0]] = True
        base = self.n - int(bad.sum())
        new = np.zeros(self.d, dtype=np.int64)
        marks = set()
        for p in np.flatnonzero(h == 1).tolist():
            f = int(self.differ(p, removed)[0])
            for s in (int(self.i[p]), int(self.j[p])):
                if not bad[s] and (f, s) not in marks:
                    marks.add((f, s))
                    new[f] += 1
        return base, base - new[cands]

    def no_blanket(self, alive) -> list:
        """Algorithm 2 from the pairs with h_F <= 2: b (not strongly relevant, so every
        sample in a pair differing on b alone is already outside D(F)'s region) survives
        m exactly when a pair differing on {m, b} has a sample outside the region of
        F - {m}; it stays when it survives every m != b."""
        none = np.zeros(self.d, dtype=bool)
        h = self.distances(none)
        bad = np.zeros(self.n, dtype=bool)
        bad[self.i[h == 0]] = True
        bad[self.j[h == 0]] = True
        lost = {}  # a -> samples in a pair differing on a alone
        for p in np.flatnonzero(h == 1).tolist():
            a = int(self.differ(p, none)[0])
            lost.setdefault(a, set()).update((int(self.i[p]), int(self.j[p])))
        partners = {}
        for p in np.flatnonzero(h == 2).tolist():
            m1, m2 = self.differ(p, none).tolist()
            for s in (int(self.i[p]), int(self.j[p])):
                if bad[s]:
                    continue
                for b, m in ((m1, m2), (m2, m1)):
                    if s not in lost.get(m, ()):
                        partners.setdefault(b, set()).add(m)
        return [b for b in alive if len(partners.get(b, ())) >= self.d - 1]


# ---------------------------------------------------------------------------
# Definition 9: numerical (and mixed) data
# ---------------------------------------------------------------------------


class _NeighbourEngine(_Engine):
    """Neighbourhood positive region over squared distances of cross-class pairs.

    Samples are sorted by class; block ``b`` holds the pairs (i, j) with i in
    class b and j in a later class, row-major, so a state is one vector of
    length ``m = (n^2 - sum n_c^2) / 2`` and each block reshapes to a matrix.
    On the CPU a compiled kernel scores all candidates without temporaries;
    otherwise (CuPy) the same sums are formed as (k, m) arrays in chunks.
    """

    kind = "numerical"

    def __init__(self, be, ds, cols, y, theta, kernel=None):
        super().__init__(be, y)
        order = np.argsort(y, kind="stable")
        ys = y[order]
        x = np.empty((len(cols), self.n), dtype=np.float64)
        disc = np.zeros(len(cols), dtype=bool)
        for r, j in enumerate(cols):
            if ds.kinds[j] == CONTINUOUS:
                v = np.asarray(ds.values[order, j], dtype=np.float64)
                lo, hi = v.min(), v.max()
                x[r] = (v - lo) / (hi - lo) if hi > lo else 0.0
            else:
                x[r] = ds.codes[order, j]
                disc[r] = True
        self.n_features = len(cols)
        self.theta2 = theta * theta
        starts = np.searchsorted(ys, np.arange(self.n_classes + 1))
        blocks, off = [], 0
        for c in range(self.n_classes - 1):
            r0, r1 = int(starts[c]), int(starts[c + 1])
            if r1 > r0 and r1 < self.n:
                blocks.append((off, r0, r1, r1 - r0, self.n - r1))
                off += (r1 - r0) * (self.n - r1)
        self.m = off
        self.blocks = blocks
        self.kernel = (not be.is_gpu) if kernel is None else kernel
        self._x_host, self._disc_host = x, disc
        self._blocks_host = np.array([b[:3] for b in blocks], dtype=np.int64).reshape(-1, 3)
        self.x = self.xp.asarray(x)
        self.disc = disc

    def _delta(self, cands):
        """Squared differences of columns ``cands`` over the pairs, a fresh (k, m) array."""
        xp = self.xp
        a = self.x[list(cands)]
        parts = []
        for _, r0, r1, nb, nc in self.blocks:
            parts.append((a[:, r0:r1, None] - a[:, None, r1:]).reshape(len(cands), nb * nc))
        d = xp.concatenate(parts, axis=1)
        disc = self.disc[list(cands)]
        if disc.all():
            return (d != 0).astype(np.float64)
        d *= d
        for r in np.flatnonzero(disc):  # mixed data: discrete columns by equality
            d[r] = d[r] != 0
        return d

    def empty(self) -> State:
        return State((), self.xp.zeros(self.m, dtype=np.float64))

    def add(self, st, j) -> State:
        return State(st.cols + (j,), st.data + self._delta([j])[0])

    def remove(self, st, j) -> State:
        return State(tuple(c for c in st.cols if c != j), st.data - self._delta([j])[0])

    def count(self, st) -> int:
        self.n_evals += 1
        return int(self._count_rows(st.data[None, :] <= self.theta2)[0])

    def count_add(self, st, cands) -> np.ndarray:
        return self._batch(st, list(cands), sign=1)

    def count_remove(self, st, cands) -> np.ndarray:
        return self._batch(st, list(cands), sign=-1)

    def _batch(self, st, cands, sign) -> np.ndarray:
        self.n_evals += len(cands)
        if not cands:
            return np.zeros(0, dtype=np.int64)
        if self.kernel:
            return _neighbour_counts(self._x_host, self._disc_host, st.data, self._blocks_host,
                                     np.asarray(cands, dtype=np.int64), sign, self.theta2)
        step = max(1, _CHUNK // max(self.m, 1))
        out = []
        for s in range(0, len(cands), step):
            t = self._delta(cands[s:s + step])
            if sign > 0:
                t += st.data[None, :]
            else:
                self.xp.subtract(st.data[None, :], t, out=t)
            out.append(self._count_rows(t <= self.theta2))
        return np.concatenate(out)

    def _count_rows(self, bad) -> np.ndarray:
        """Samples with no close pair from another class, per row of ``bad`` (k, m)."""
        xp = self.xp
        k = bad.shape[0]
        fail = xp.zeros((k, self.n), dtype=bool)
        for off, r0, r1, nb, nc in self.blocks:
            b = bad[:, off:off + nb * nc].reshape(k, nb, nc)
            fail[:, r0:r1] |= b.any(axis=2)
            fail[:, r1:] |= b.any(axis=1)
        return self.n - _to_numpy(fail.sum(axis=1)).astype(np.int64)


def _neighbour_counts_py(x, disc, s, blocks, cands, sign, theta2):
    """For each candidate c: samples with no cross-class pair within theta of them
    on the set whose squared distances are ``s`` plus (sign 1) or minus (sign -1)
    column c's. Same float operations as the array path, so the same answer."""
    n = x.shape[1]
    k = cands.shape[0]
    out = np.zeros(k, dtype=np.int64)
    for r in range(k):
        c = cands[r]
        fail = np.zeros(n, dtype=np.uint8)
        for b in range(blocks.shape[0]):
            off, r0, r1 = blocks[b, 0], blocks[b, 1], blocks[b, 2]
            nc = n - r1
            xc = x[c, r1:]
            cols = fail[r1:]
            for i in range(r1 - r0):
                xi = x[c, r0 + i]
                row = s[off + i * nc: off + (i + 1) * nc]
                hit = np.uint8(0)
                if disc[c]:
                    for j in range(nc):
                        d = np.float64(xi != xc[j])
                        v = row[j] + d if sign > 0 else row[j] - d
                        h = np.uint8(v <= theta2)
                        hit |= h
                        cols[j] |= h
                elif sign > 0:
                    for j in range(nc):
                        d = xi - xc[j]
                        h = np.uint8(row[j] + d * d <= theta2)
                        hit |= h
                        cols[j] |= h
                else:
                    for j in range(nc):
                        d = xi - xc[j]
                        h = np.uint8(row[j] - d * d <= theta2)
                        hit |= h
                        cols[j] |= h
                fail[r0 + i] |= hit
        out[r] = n - fail.sum()
    return out


_kernel = None


def _neighbour_counts(x, disc, s, blocks, cands, sign, theta2):
    """The compiled kernel (numba, serial), built on first use and cached on disk."""
    global _kernel
    if _kernel is None:
        import numba

        _kernel = numba.njit(cache=True, nogil=True)(_neighbour_counts_py)
    return _kernel(x, disc, s, blocks, cands, sign, theta2)
