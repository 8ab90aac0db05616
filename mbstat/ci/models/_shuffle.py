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
