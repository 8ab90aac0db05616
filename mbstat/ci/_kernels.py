"""Compiled (numba) counting kernels for the CPU backend.

One pass over the rows per candidate fills its table; the statistics are
computed from the table in the same call, with no temporary arrays. The numpy
path in :mod:`.counting` computes the same numbers and serves CuPy.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def dense_table_statistics(x, y, z, rz, rxm, ry):  # pragma: no cover - compiled
    """G2, X2, adjusted df and observed cells of k tables (rows of x) vs y | z."""
    k, n = x.shape
    out = np.zeros((k, 4))
    table = np.zeros((rz, rxm, ry), np.int64)
    nxz = np.zeros((rz, rxm), np.int64)
    nyz = np.zeros((rz, ry), np.int64)
    nz = np.zeros(rz, np.int64)
    for i in range(k):
        table[:] = 0
        for r in range(n):
            table[z[r], x[i, r], y[r]] += 1
        nxz[:] = 0
        nyz[:] = 0
        nz[:] = 0
        for s in range(rz):
            for a in range(rxm):
                for b in range(ry):
                    c = table[s, a, b]
                    nxz[s, a] += c
                    nyz[s, b] += c
            for b in range(ry):
                nz[s] += nyz[s, b]
        g2 = 0.0
        x2 = 0.0
        df_adj = 0.0
        cells = 0
        for s in range(rz):
            if nz[s] == 0:
                continue
            rows = 0
            cols = 0
            for a in range(rxm):
                if nxz[s, a] > 0:
                    rows += 1
            for b in range(ry):
                if nyz[s, b] > 0:
                    cols += 1
            df_adj += max(rows - 1, 0) * max(cols - 1, 0)
            for a in range(rxm):
                if nxz[s, a] == 0:
                    continue
                for b in range(ry):
                    if nyz[s, b] == 0:
                        continue
                    e = nxz[s, a] * nyz[s, b] / nz[s]
                    c = table[s, a, b]
                    if c > 0:
                        g2 += c * math.log(c / e)
                        cells += 1
                    x2 += (c - e) * (c - e) / e
        out[i, 0] = max(2.0 * g2, 0.0)
        out[i, 1] = max(x2, 0.0)
        out[i, 2] = df_adj
        out[i, 3] = cells
    return out
