"""In-memory data checked and encoded: column names, kinds and levels, missing cells, binning
(:func:`encode_frame`, the path :func:`mbstat.data.as_dataset` takes for a frame or an array)."""
from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .._dask import path_problem
from .dataset import CONTINUOUS, DISCRETE, Dataset, _listed


def _column_names(labels, param=None) -> tuple:
    """The columns' names as text; refuse names that repeat, also after ``str()``
    (the labels 1 and "1" both name the column "1")."""
    labels = labels.tolist() if hasattr(labels, "tolist") else list(labels)  # no per-label boxing
    names = tuple(map(str, labels))
    if len(set(names)) == len(names):
        return names
    seen = {}
    for label, name in zip(labels, names):
        seen.setdefault(name, []).append(label)
    dupes = {name: found for name, found in seen.items() if len(found) > 1}
    if dupes:
        where = f"{param} has duplicate entries" if param else "data has duplicate column names"
        clashes = [f"{name!r} from the labels {', '.join(map(repr, found))}"
                   for name, found in dupes.items()
                   if len({(type(c), c) for c in found}) > 1]
        detail = f" ({'; '.join(clashes)})" if clashes else ""
        raise ValueError(f"{where}: {sorted(dupes)}{detail}; give each column its own name")
    return names


def _kept_labels(labels) -> tuple | None:
    """The column labels as :attr:`Dataset.labels` keeps them: where some is not text (an
    integer then names a column by its label), else None (the names are the labels)."""
    labels = labels.tolist() if hasattr(labels, "tolist") else list(labels)
    return None if all(isinstance(c, str) for c in labels) else tuple(labels)


def _declared_order(series) -> tuple | None:
    """:attr:`Dataset.ordered` of these columns: None, or for a pandas Categorical column
    whether its categories are ordered; None when no column is one."""
    out = tuple(bool(col.dtype.ordered) if isinstance(col.dtype, pd.CategoricalDtype)
                else None for col in series)
    return None if all(o is None for o in out) else out


def _positions(columns, p: int) -> list:
    """``columns`` of :func:`as_dataset` checked: distinct column positions in 0..p-1."""
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        raise TypeError(f"columns must be a list of column positions (int); got {columns!r}")
    out = []
    for j in columns:
        if isinstance(j, bool) or not isinstance(j, numbers.Integral):
            raise TypeError(f"columns must hold column positions (int), not names; got {j!r}")
        if not 0 <= j < p:
            raise ValueError(f"columns: position {j} is out of range for data with {p} columns")
        out.append(int(j))
    if len(set(out)) != len(out):
        raise ValueError(f"columns: positions repeated in {out}")
    if not out:
        raise ValueError("columns: give at least one column position")
    return out


NA_CHOICES = ("raise", "drop", "pairwise")


def _raise_missing(cols):
    raise ValueError(
        f"data has missing values (NaN/None) in columns {_listed(cols)}; remove them, pass "
        "na='drop' to drop incomplete rows, or na='pairwise' for test-wise deletion")


def _frame_columns(frame: pd.DataFrame):
    """The columns of ``frame`` as Series, by position (cheaper than ``iloc`` per column)."""
    if frame.columns.is_unique:
        return [col for _, col in frame.items()]
    return [frame.iloc[:, j] for j in range(frame.shape[1])]


def _assemble(columns, col_names, labels=None, ordered=None) -> Dataset:
    """The Dataset of encoded columns: (codes or floats, levels, kind, missing mask)."""
    n = len(columns[0][0])
    n_levels = max((len(lv) for _, lv, _, _ in columns), default=0)
    dtype = np.min_scalar_type(max(n_levels - 1, 0))
    codes = np.zeros((n, len(columns)), dtype=dtype, order="F")
    values = None
    if any(kind == CONTINUOUS for _, _, kind, _ in columns):
        values = np.zeros((n, len(columns)), dtype=np.float64, order="F")
    missing = None
    for j, (col, _, kind, miss) in enumerate(columns):
        if kind == CONTINUOUS:
            values[:, j] = col
        else:
            codes[:, j] = col
            if values is not None:
                values[:, j] = col
        if miss is not None:
            if missing is None:
                missing = np.zeros((n, len(columns)), dtype=bool, order="F")
            missing[:, j] = miss
            if values is not None:
                values[miss, j] = np.nan
    return Dataset(
        codes=codes,
        levels=tuple(lv for _, lv, _, _ in columns),
        names=tuple(col_names),
        kinds=tuple(kind for _, _, kind, _ in columns),
        values=values,
        missing=missing,
        labels=labels,
        ordered=ordered,
    )


def _to_frame(data, names) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        if names is not None:
            raise ValueError("names cannot be given with a DataFrame, which has its own columns")
        return data  # read only below: never modified
    if isinstance(data, pd.Series):
        raise ValueError("data must be 2-D (a DataFrame or a 2-D array); got a Series")
    if isinstance(data, (str, bytes, os.PathLike)):
        why = "" if isinstance(data, bytes) else f": {path_problem(data)}"
        raise TypeError(f"data must be a DataFrame, a 2-D array, a Dataset or a directory of "
                        f"Parquet files; got a {type(data).__name__} {str(data)[:300]!r} (read "
                        f"a file first, e.g. with pandas.read_csv){why}")
    if isinstance(data, Mapping):
        raise TypeError(f"data must be a DataFrame, a 2-D array or a Dataset; got a "
                        f"{type(data).__name__} (pandas.DataFrame(data) makes one)")
    from scipy import sparse

    if sparse.issparse(data):  # floats or codes past 255 (not block-encoded): read densely
        data = data.toarray()
    masked = np.ma.getmaskarray(data) if isinstance(data, np.ma.MaskedArray) else None
    arr = np.asarray(data)  # a masked array's data, masked entries included: see below
    if arr.dtype.names is not None:  # structured or record array: its fields are the columns
        if arr.ndim != 1:
            raise ValueError(f"data: a structured array must be 1-D (one record a row); got "
                             f"shape {arr.shape}")
        columns = []
        for name in arr.dtype.names:
            col = np.asarray(arr[name])
            if col.ndim != 1:
                raise ValueError(f"data: field {name!r} holds arrays of shape {col.shape[1:]} "
                                 "per record; give each column one value a row")
            columns.append(col)
        default = list(arr.dtype.names)
        if masked is not None:
            masked = [masked[name] for name in arr.dtype.names]
    elif arr.ndim != 2:
        raise ValueError(f"data must be a 2-D array; got {arr.ndim}-D with shape {arr.shape}")
    else:
        columns = [arr[:, j] for j in range(arr.shape[1])]
        default = [f"V{j + 1}" for j in range(arr.shape[1])]
        if masked is not None:
            masked = list(masked.T)
    if masked is not None:  # masked entries are missing values (objects keep ints ints)
        columns = [pd.Series(col, dtype=object).mask(m) if m.any() else col
                   for col, m in zip(columns, masked)]
    if names is None:
        names = default
    elif isinstance(names, str) or not isinstance(names, Iterable):
        raise TypeError(f"names must be a list of column names; got {names!r}")
    names = list(names)
    if len(names) != len(columns):
        raise ValueError(f"names has {len(names)} entries but data has {len(columns)} columns")
    return pd.DataFrame(dict(enumerate(columns))).set_axis(names, axis=1)


def _encode_column(name, col: pd.Series, discretize):
    """Return (codes or floats, levels, kind, missing mask or None) for one column; missing
    cells get code 0 (value NaN), their mask says where they are. Vectorized: pandas
    Categorical codes, ``pandas.factorize`` (sorted) or ``numpy.unique``."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = col.array.codes  # no Series in between
        miss = codes < 0
        if miss.any():
            return np.where(miss, 0, codes), tuple(dtype.categories), DISCRETE, miss
        return codes, tuple(dtype.categories), DISCRETE, None
    miss = None
    if col.hasnans:
        miss = col.isna().to_numpy(bool)
        if miss.all():
            raise ValueError(f"column {name!r} has no observed values")
        col = col[~miss]
    out = _encode_observed(name, col, discretize)
    if miss is None:
        return (*out, None)
    full = np.full(len(miss), np.nan if out[2] == CONTINUOUS else 0,
                   dtype=np.float64 if out[2] == CONTINUOUS else np.int64)
    full[~miss] = out[0]
    return full, out[1], out[2], miss


def _encode_observed(name, col: pd.Series, discretize):
    """Return (codes or floats, levels, kind) for a column without missing values."""
    dtype = col.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        # (as objects they would become a discrete variable with a level per instant)
        raise TypeError(f"column {name!r} holds dates or times ({dtype}), which are neither "
                        "categories nor numbers; convert it (e.g. to periods as a categorical, "
                        "or to float seconds) or drop it")
    if pd.api.types.is_bool_dtype(dtype):
        return col.to_numpy(bool).astype(np.int64), (False, True), DISCRETE
    if pd.api.types.is_integer_dtype(dtype):
        raw = col.to_numpy() if isinstance(dtype, np.dtype) else col.to_numpy(np.int64)
        levels, codes = np.unique(raw, return_inverse=True)
        return codes, tuple(levels.tolist()), DISCRETE
    if pd.api.types.is_float_dtype(dtype):
        return _encode_floats(name, col.to_numpy(np.float64), discretize)
    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        codes, levels = pd.factorize(col.array, sort=True)  # pandas' own strings: hashed
        return codes, tuple(str(v) for v in levels), DISCRETE
    # object columns: every entry must be of one kind; numpy scalars count as the Python
    # values they hold (np.int64(2) is an int, np.str_("a") a str)
    values = col.to_numpy(object)
    inferred = pd.api.types.infer_dtype(values, skipna=False)
    if inferred == "string":
        codes, levels = pd.factorize(values, sort=True)
        return codes, tuple(str(v) for v in levels), DISCRETE
    if inferred == "integer":
        codes, levels = pd.factorize(values, sort=True)
        return codes, tuple(int(v) for v in levels), DISCRETE
    if inferred == "boolean":
        return values.astype(bool).astype(np.int64), (False, True), DISCRETE
    if inferred in ("floating", "mixed-integer-float"):
        return _encode_floats(name, values.astype(np.float64), discretize)
    return _encode_objects(name, values, discretize)


def _encode_objects(name, values: np.ndarray, discretize):
    """An object column of other or mixed types, entry by entry (the uncommon case)."""
    types = set(map(type, values))
    if any(issubclass(t, np.generic) for t in types):
        values = np.array([v.item() if isinstance(v, np.generic) else v for v in values],
                          dtype=object)
        types = set(map(type, values))
    kinds = {_type_kind(t) for t in types}
    if len(kinds) > 1 and kinds != {"int", "float"}:
        examples = {}
        for v in values:
            examples.setdefault(_type_kind(type(v)), v)
        shown = ", ".join(f"{k} (e.g. {v!r})" for k, v in sorted(examples.items()))
        raise TypeError(f"column {name!r} mixes types {shown}; give each column one type")
    if "float" in kinds:  # numbers as objects: continuous, as the same floats in a float column
        return _encode_floats(name, values.astype(np.float64), discretize)
    if kinds == {"bool"}:
        return values.astype(bool).astype(np.int64), (False, True), DISCRETE
    try:
        levels, codes = np.unique(values, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"column {name!r} has values that cannot be ordered: {exc}") from None
    return codes, tuple(levels.tolist()), DISCRETE

def _type_kind(cls: type) -> str:
    """The kind of an object column's entries of type ``cls``: bool, int, float (other real
    numbers), str, or the type's name."""
    for kind, base in (("bool", bool), ("int", numbers.Integral), ("float", numbers.Real),
                       ("str", str)):
        if issubclass(cls, base):
            return kind
    return cls.__name__


def _encode_floats(name, values: np.ndarray, discretize):
    if not np.isfinite(values).all():
        raise ValueError(f"column {name!r} has infinite values")
    if discretize is None:
        return values, (), CONTINUOUS
    return _equal_frequency_bins(values, discretize)


def _equal_frequency_bins(values: np.ndarray, bins: int):
    distinct, inverse = np.unique(values, return_inverse=True)
    if len(distinct) <= bins:  # few values: each is its own level
        return inverse, tuple(float(v) for v in distinct), DISCRETE
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)))
    inner = edges[1:-1]
    codes = np.searchsorted(inner, values, side="right")
    bounds = np.concatenate([[values.min()], inner, [values.max()]])
    labels = tuple(
        f"[{bounds[i]:.4g},{bounds[i + 1]:.4g}{']' if i == len(bounds) - 2 else ')'}"
        for i in range(len(bounds) - 1)
    )
    return codes, labels, DISCRETE


def encode_frame(data, names=None, *, na: str = "raise", discretize=None,
                 columns=None) -> Dataset:
    """A frame, array or record array encoded in memory (see :func:`mbstat.data.as_dataset`)."""
    frame = _to_frame(data, names)
    if frame.shape[1] == 0:
        raise ValueError("data has no columns")
    col_names = _column_names(frame.columns, "names" if names is not None else None)
    labels = _kept_labels(frame.columns)
    if columns is not None:  # only these columns, by position
        columns = _positions(columns, frame.shape[1])
        if na == "drop":  # the rows incomplete in any column go, as without columns=
            incomplete = frame.isna().to_numpy().any(axis=1)
            if incomplete.any():
                frame = frame.iloc[~incomplete]
        col_names = [col_names[j] for j in columns]
        labels = None if labels is None else _kept_labels([labels[j] for j in columns])
        series = [frame.iloc[:, j] for j in columns]
    else:
        series = _frame_columns(frame)
    # by position: labels such as 1 and 1.0 may not select one column each
    columns = [_encode_column(name, col, discretize) for name, col in zip(col_names, series)]
    masks = [m for *_, m in columns]
    if any(m is not None for m in masks):
        if na == "raise":
            _raise_missing([n for n, m in zip(col_names, masks) if m is not None])
        if na == "drop":
            incomplete = np.zeros(len(frame), dtype=bool)
            for m in masks:
                if m is not None:
                    incomplete |= m
            kept = frame.iloc[~incomplete]
            if len(kept) < 2:
                raise ValueError(f"data must have at least 2 rows; got {len(kept)} after "
                                 f"dropping {int(incomplete.sum())} rows with missing values")
            columns = [_encode_column(name, col, discretize)
                       for name, col in zip(col_names, _frame_columns(kept))]
    if len(frame) < 2:
        raise ValueError(f"data must have at least 2 rows; got {len(frame)}")
    return _assemble(columns, col_names, labels, _declared_order(series))
