"""CUDA counting kernels for the CuPy backend.

The GPU twin of :mod:`._kernels`: one kernel fills the tables of a whole batch of
candidates (stratum, joint and cell codes formed on the fly, per-block histograms in
shared memory when a table fits), a second scores every stratum of every table, and
one reduction sums the strata: a handful of launches and one host copy per batch,
whatever the number of candidates, instead of materializing int64 keys.
"""
from __future__ import annotations

import numpy as np

__all__ = ["subset_statistics"]

_SOURCE = r"""
extern "C" __global__ void count_tables(
    const CODE_T* __restrict__ codes, const long long n,
    const long long* __restrict__ subsets, const int s,
    const long long* __restrict__ cards,
    const ZCODE_T* __restrict__ zcols, const int m, const long long* __restrict__ zcards,
    const CODE_T* __restrict__ y, const int width, const int ry,
    unsigned int* __restrict__ counts, const int cells, const int shared)
{
    extern __shared__ unsigned int hist[];
    const long long* sub = subsets + (long long)blockIdx.y * s;
    unsigned int* table = counts + (long long)blockIdx.y * cells;
    if (shared) {
        for (int c = threadIdx.x; c < cells; c += blockDim.x) hist[c] = 0;
        __syncthreads();
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < n; r += stride) {
        long long cell = 0;
        for (int j = 0; j < m; ++j) cell = cell * zcards[j] + (long long)zcols[j * n + r];
        long long joint = 0;
        for (int j = 0; j < s; ++j) {
            const long long col = sub[j];
            joint = joint * cards[col] + (long long)codes[col * n + r];
        }
        cell = cell * width + joint * ry + (long long)y[r];
        if (shared) atomicAdd(&hist[cell], 1u);
        else atomicAdd(&table[cell], 1u);
    }
    if (shared) {
        __syncthreads();
        for (int c = threadIdx.x; c < cells; c += blockDim.x) {
            const unsigned int v = hist[c];
            if (v) atomicAdd(&table[c], v);
        }
    }
}

extern "C" __global__ void score_strata(
    const unsigned int* __restrict__ counts, const long long n_strata, const int rxm,
    const int ry, double* __restrict__ out)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_strata) return;
    const unsigned int* tab = counts + t * rxm * ry;
    double nz = 0.0, g2 = 0.0, x2 = 0.0, df = 0.0, cells = 0.0;
    int rows = 0, cols = 0;
    for (int b = 0; b < ry; ++b) {
        double col = 0.0;
        for (int a = 0; a < rxm; ++a) col += (double)tab[a * ry + b];
        nz += col;
        cols += col > 0.0;
    }
    if (nz > 0.0) {
        for (int a = 0; a < rxm; ++a) {
            double row = 0.0;
            for (int b = 0; b < ry; ++b) row += (double)tab[a * ry + b];
            if (row == 0.0) continue;
            ++rows;
            for (int b = 0; b < ry; ++b) {
                double col = 0.0;
                for (int a2 = 0; a2 < rxm; ++a2) col += (double)tab[a2 * ry + b];
                if (col == 0.0) continue;
                // as the CPU's _score: e = m / nz, c - e = d / nz with d exact
                const double m = row * col;
                const double c = (double)tab[a * ry + b];
                const double d = c * nz - m;
                if (c > 0.0) { g2 += c * log1p(d / m); cells += 1.0; }
                x2 += d * d / (m * nz);
            }
        }
        df = (double)max(rows - 1, 0) * (double)max(cols - 1, 0);
    }
    out[4 * t] = g2; out[4 * t + 1] = x2; out[4 * t + 2] = df; out[4 * t + 3] = cells;
}
"""

_C_TYPES = {np.dtype(t): c for t, c in [
    (np.uint8, "unsigned char"), (np.uint16, "unsigned short"), (np.uint32, "unsigned int"),
    (np.int8, "signed char"), (np.int16, "short"), (np.int32, "int"), (np.int64, "long long"),
]}
#: Tables up to this many cells are counted in shared memory (4 bytes a cell).
SHARED_CELLS = 8192
#: Rows each thread counts (a block's shared histogram is flushed once per 256 x this).
ROWS_PER_THREAD = 16
_THREADS = 256
_modules = {}


def _module(code_dtype, z_dtype):
    import cupy

    key = (np.dtype(code_dtype), np.dtype(z_dtype))
    mod = _modules.get(key)
    if mod is None:
        source = _SOURCE.replace("ZCODE_T", _C_TYPES[key[1]]).replace("CODE_T", _C_TYPES[key[0]])
        mod = _modules[key] = cupy.RawModule(code=source)
    return mod


def subset_statistics(codes, subsets, cards, y, zcols, zcards, rxm, ry):
    """Statistics of the tables X_i x y | z, X_i the joint variable of columns ``subsets[i]``.

    Same arguments and result as :func:`mbstat.ci.tables._kernels.subset_statistics`
    (``codes``, ``y`` and ``zcols`` are CuPy arrays): a host array (k, 4) of
    G2, X2, adjusted df and observed cells. Cell codes are formed in the kernel
    (z, then x, then y in mixed radix), so a batch costs five launches.
    """
    import cupy

    codes = cupy.ascontiguousarray(codes)
    zcols = cupy.ascontiguousarray(zcols)
    n = codes.shape[1]
    k, s = subsets.shape
    zcards = np.asarray(zcards, dtype=np.int64)
    rz = int(np.prod(zcards)) if len(zcards) else 1
    cells = rz * rxm * ry
    mod = _module(codes.dtype, zcols.dtype)
    count, score = mod.get_function("count_tables"), mod.get_function("score_strata")
    shared = cells <= SHARED_CELLS
    blocks = max(1, min(-(-n // (_THREADS * ROWS_PER_THREAD)), 4096))
    cards_d = cupy.asarray(np.asarray(cards, dtype=np.int64))
    zcards_d = cupy.asarray(zcards)
    y = cupy.ascontiguousarray(y)
    chunk = max(1, min(65535, (1 << 27) // cells))  # at most 512 MB of counts at once
    out = []
    for start in range(0, k, chunk):
        block = np.ascontiguousarray(subsets[start : start + chunk], dtype=np.int64)
        kb = block.shape[0]
        counts = cupy.zeros(kb * cells, dtype=cupy.uint32)
        count((blocks, kb), (_THREADS,),
              (codes, np.int64(n), cupy.asarray(block), np.int32(s), cards_d, zcols,
               np.int32(zcols.shape[0]), zcards_d, y, np.int32(rxm * ry), np.int32(ry), counts,
               np.int32(cells), np.int32(shared)),
              shared_mem=cells * 4 if shared else 0)
        per_stratum = cupy.empty((kb * rz, 4), dtype=cupy.float64)
        score((-(-kb * rz // _THREADS),), (_THREADS,),
              (counts, np.int64(kb * rz), np.int32(rxm), np.int32(ry), per_stratum))
        out.append(per_stratum.reshape(kb, rz, 4).sum(axis=1))
    res = cupy.concatenate(out).get() if len(out) > 1 else out[0].get()
    res[:, 0] = np.maximum(2.0 * res[:, 0], 0.0)
    res[:, 1] = np.maximum(res[:, 1], 0.0)
    return res
