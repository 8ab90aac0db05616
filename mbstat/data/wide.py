"""Wide input: a scipy.sparse matrix or a frame of one integer dtype, encoded in blocks of columns."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .dataset import DISCRETE, Dataset
from .encoding import _column_names, _kept_labels

#: Columns densified (and encoded) at a time from a sparse matrix or a wide frame.
_BLOCK = 4096


def _integer_blocks(data, names):
    """The Dataset of a ``scipy.sparse`` matrix, or of a DataFrame whose columns all have
    one numpy integer or bool dtype (dense, or pandas sparse), encoded ``_BLOCK`` columns
    at a time without a Python step per value: codes are ranks among each column's
    values (the same codes and levels as column-by-column encoding). None for other data
    and for values outside 0..255 (encoded column by column)."""
    try:
        from scipy import sparse
    except ImportError:  # pragma: no cover - scipy is a dependency
        return None
    if sparse.issparse(data):
        if data.ndim != 2:
            return None
        matrix = data.tocsc()
        col_names = _column_names(names if names is not None else
                                  [f"V{j + 1}" for j in range(matrix.shape[1])],
                                  "names" if names is not None else None)
        labels = None if names is None else _kept_labels(names)
        if len(col_names) != matrix.shape[1]:
            raise ValueError(f"names has {len(col_names)} entries but data has "
                             f"{matrix.shape[1]} columns")
        if not (np.issubdtype(matrix.dtype, np.integer) or matrix.dtype == bool):
            return None
        take = lambda lo, hi: matrix[:, lo:hi].toarray()  # noqa: E731
    elif isinstance(data, pd.DataFrame) and names is None and data.shape[1] > 1:
        dtypes = set(data.dtypes)
        dtype = next(iter(dtypes))
        base = dtype.subtype if isinstance(dtype, pd.SparseDtype) else dtype
        if len(dtypes) != 1 or not isinstance(base, np.dtype) or base.kind not in "iub":
            return None
        col_names = _column_names(data.columns)
        labels = _kept_labels(data.columns)
        if isinstance(dtype, pd.SparseDtype):
            take = lambda lo, hi: data.iloc[:, lo:hi].sparse.to_coo().toarray()  # noqa: E731
        else:
            take = lambda lo, hi: data.iloc[:, lo:hi].to_numpy()  # noqa: E731
    else:
        return None
    n, p = data.shape
    if n < 2:
        raise ValueError(f"data must have at least 2 rows; got {n}")
    dtype = data.dtype if sparse.issparse(data) else next(iter(set(data.dtypes)))
    boolean = (dtype.subtype if isinstance(dtype, pd.SparseDtype) else dtype) == bool
    codes = np.empty((n, p), dtype=np.uint8, order="F")
    levels = []
    for lo in range(0, p, _BLOCK):
        block = np.asarray(take(lo, min(p, lo + _BLOCK)))
        k = block.shape[1]
        if boolean:  # as column-by-column encoding: levels (False, True), used or not
            codes[:, lo:lo + k] = block
            levels += [(False, True)] * k
            continue
        low, high = (block.min(), block.max()) if block.size else (0, 0)
        if low < 0 or high > 255:
            return None
        if high <= 1:  # zeros and ones: code = value unless the column has no zero
            zero = (block == 0).any(axis=0)
            one = (block == 1).any(axis=0)
            codes[:, lo:lo + k] = block * zero[None, :]
            kinds = {(True, True): (0, 1), (True, False): (0,), (False, True): (1,)}
            levels += [kinds[pair] for pair in zip(zero.tolist(), one.tolist())]
            continue
        block = block.astype(np.int64)
        present = np.zeros((k, 256), dtype=bool)
        present[np.arange(k)[None, :], block] = True
        rank = np.cumsum(present, axis=1) - 1  # code = rank among the column's values
        codes[:, lo:lo + k] = rank[np.arange(k)[None, :], block]
        levels += [tuple(np.flatnonzero(row).tolist()) for row in present]
    return Dataset(codes=codes, levels=tuple(levels), names=tuple(col_names),
                   kinds=(DISCRETE,) * p, labels=labels)
