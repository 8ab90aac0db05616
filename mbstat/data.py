"""The data layer: check the user's data once, encode it once.

Every public function accepts a pandas DataFrame, a 2-D numpy array or an
already encoded :class:`Dataset`; :func:`as_dataset` turns the first two into
the third. Algorithms and CI tests only ever see a ``Dataset``.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ._validation import check_choice, check_int

__all__ = ["Dataset", "as_dataset"]

DISCRETE, CONTINUOUS = "discrete", "continuous"


@dataclass(frozen=True, eq=False)
class Dataset:
    """An encoded, read-only data set.

    Attributes
    ----------
    codes : ndarray, shape (n, p)
        Integer level codes of the discrete columns in the smallest unsigned
        dtype that fits (Fortran order, so a column is contiguous); continuous
        columns hold zeros here.
    levels : tuple of tuples
        The levels of each discrete column (declared categories included even
        when unused); empty for continuous columns.
    names : tuple of str
    kinds : tuple of {"discrete", "continuous"}
    values : ndarray or None, shape (n, p)
        Float values of every column when some column is continuous
        (discrete columns hold their codes), otherwise None.
    """

    codes: np.ndarray = field(repr=False)
    levels: tuple
    names: tuple
    kinds: tuple
    values: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        self.codes.flags.writeable = False
        if self.values is not None:
            self.values.flags.writeable = False

    @property
    def n_rows(self) -> int:
        return self.codes.shape[0]

    @property
    def n_cols(self) -> int:
        return self.codes.shape[1]

    @cached_property
    def cardinalities(self) -> np.ndarray:
        """Number of levels of each column (0 for continuous columns)."""
        return np.array([len(lv) for lv in self.levels], dtype=np.int64)

    @cached_property
    def level_counts(self) -> tuple:
        """:attr:`cardinalities` as a tuple of Python ints (cheap per-test arithmetic)."""
        return tuple(int(c) for c in self.cardinalities)

    @cached_property
    def level_bits(self) -> np.ndarray | None:
        """Bitmaps (p, levels, ceil(n / 64)) uint64 of each column's levels, for the CPU's
        popcount counting of small tables; None when they would take over 256 MB."""
        from ._bitmaps import BIT_LEVELS, level_bits

        n_levels = int(min(BIT_LEVELS, max(1, self.cardinalities.max(initial=1))))
        if self.n_cols * n_levels * ((self.n_rows + 63) // 64) * 8 > 256 * 2**20:
            return None
        return level_bits(self.codes, n_levels, self.cardinalities)

    @cached_property
    def _index(self) -> dict:
        return {name: j for j, name in enumerate(self.names)}

    def __repr__(self) -> str:
        n_cont = sum(k == CONTINUOUS for k in self.kinds)
        kinds = f", {n_cont} continuous" if n_cont else ""
        return f"<Dataset: {self.n_rows} rows, {self.n_cols} variables{kinds}>"

    def index(self, var, param: str = "variable") -> int:
        """Column position of ``var``, given by name or by position."""
        if type(var) is int and 0 <= var < self.codes.shape[1]:  # the common case, fast
            return var
        if isinstance(var, str):
            try:
                return self._index[var]
            except KeyError:
                raise ValueError(
                    f"{param}: unknown variable {var!r}; the data has columns "
                    f"{_preview(self.names)}"
                ) from None
        if isinstance(var, numbers.Integral) and not isinstance(var, bool):
            if not 0 <= var < self.n_cols:
                raise ValueError(
                    f"{param}: position {var} is out of range for {self.n_cols} columns"
                )
            return int(var)
        raise TypeError(f"{param} must be a column name or position; got {var!r}")

    def indices(self, variables, param: str = "variables") -> tuple:
        """Column positions of a variable or an iterable of variables."""
        if variables is None or (type(variables) is tuple and not variables):
            return ()
        if isinstance(variables, (str, numbers.Integral)):
            variables = (variables,)
        elif not isinstance(variables, Iterable):
            raise TypeError(f"{param} must be a column name or position, or a list of them; "
                            f"got {variables!r}")
        out = tuple(self.index(v, param) for v in variables)
        if len(set(out)) != len(out):
            raise ValueError(f"{param} names the same variable twice: {list(variables)!r}")
        return out

    def require_discrete(self, columns, test: str) -> None:
        """Raise when a discrete test meets continuous columns."""
        bad = [self.names[j] for j in columns if self.kinds[j] == CONTINUOUS]
        if bad:
            raise ValueError(
                f"test {test!r} needs discrete data but columns {_listed(bad)} are "
                "continuous; pass discretize=<number of bins> to bin them at equal frequencies, "
                "or use a continuous test such as test='fisher_z'"
            )

    def require_numeric(self, columns, test: str) -> None:
        """Raise when a test on numbers meets discrete columns whose levels are not numbers
        (their codes would stand in for values that have no order or spacing)."""
        bad = [self.names[j] for j in columns if not self._numeric_levels[j]]
        if bad:
            raise ValueError(
                f"test {test!r} needs numeric columns but columns {_listed(bad)} have "
                "non-numeric levels; use a discrete test such as test='g2'"
            )

    @cached_property
    def _numeric_levels(self) -> tuple:
        """Whether each column's values are numbers (continuous, or all levels numbers)."""
        return tuple(kind == CONTINUOUS or all(isinstance(v, numbers.Real) for v in lv)
                     for kind, lv in zip(self.kinds, self.levels))

    def numeric(self) -> np.ndarray:
        """Float matrix (n, p) of all columns, read-only: continuous values, the level
        values of discrete columns whose levels are numbers, the codes of the others."""
        return self._numeric_matrix

    @cached_property
    def _numeric_matrix(self) -> np.ndarray:
        out = np.empty(self.codes.shape, dtype=np.float64, order="F")
        for j, (kind, lv) in enumerate(zip(self.kinds, self.levels)):
            if kind == CONTINUOUS:
                out[:, j] = self.values[:, j]
            elif self._numeric_levels[j]:
                out[:, j] = np.asarray(lv, dtype=np.float64)[self.codes[:, j]]
            else:
                out[:, j] = self.codes[:, j]
        out.flags.writeable = False
        return out

    def to_frame(self) -> pd.DataFrame:
        """Decode back to a DataFrame (categorical columns for discrete data)."""
        cols = {}
        for j, name in enumerate(self.names):
            if self.kinds[j] == CONTINUOUS:
                cols[name] = np.array(self.values[:, j])
            else:
                cols[name] = pd.Categorical.from_codes(
                    self.codes[:, j].astype(np.int64), categories=list(self.levels[j])
                )
        return pd.DataFrame(cols)

    def subset(self, columns) -> "Dataset":
        """The data restricted to some columns (by name or position)."""
        idx = list(self.indices(columns))
        return Dataset(
            codes=np.asfortranarray(self.codes[:, idx]),
            levels=tuple(self.levels[j] for j in idx),
            names=tuple(self.names[j] for j in idx),
            kinds=tuple(self.kinds[j] for j in idx),
            values=None if self.values is None else np.asfortranarray(self.values[:, idx]),
        )


def _listed(names, k: int = 8) -> str:
    """The names as a list, or the first k of them and how many in all (never thousands)."""
    return repr(list(names)) if len(names) <= k else _preview(names, k)


def _preview(names, k: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:k])
    return f"[{shown}{', ...' if len(names) > k else ''}] ({len(names)} in all)"


def _column_names(labels, param=None) -> tuple:
    """The columns' names as text; refuse names that repeat, also after ``str()``
    (the labels 1 and "1" both name the column "1")."""
    names = tuple(str(c) for c in labels)
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


def as_dataset(data, names=None, *, na: str = "raise", discretize=None) -> Dataset:
    """Check and encode ``data`` once.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray, structured array or Dataset
        Categorical, string, bool and integer columns are discrete; float
        columns are continuous. The fields of a structured (record) array
        are its columns. In an object column numpy scalars count as the
        Python values they hold (``np.int64(2)`` is an int) and numbers are
        encoded as in a typed column (floats, or ints mixed with floats, are
        continuous); other mixes of types are refused. Column labels become
        text (``str``) and must stay distinct.
    names : sequence of str, optional
        Column names for an array (default ``V1 .. Vp`` as in R; for a
        structured array, its field names).
    na : {"raise", "drop"}
        Missing values raise an error naming the columns, or their rows are dropped.
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins.

    Returns
    -------
    Dataset
    """
    check_choice("na", na, ("raise", "drop"))
    if discretize is not None:
        check_int("discretize", discretize, low=2)
    if isinstance(data, Dataset):
        if names is not None:
            raise ValueError("names cannot be given with a Dataset, which already has names")
        if discretize is not None and CONTINUOUS in data.kinds:
            data = as_dataset(data.to_frame(), discretize=discretize)
        return data
    frame = _to_frame(data, names)
    if frame.shape[1] == 0:
        raise ValueError("data has no columns")
    col_names = _column_names(frame.columns, "names" if names is not None else None)
    missing = frame.isna().to_numpy()
    if missing.any():
        if na == "raise":
            cols = [n for n, m in zip(col_names, missing.any(axis=0)) if m]
            raise ValueError(
                f"data has missing values (NaN/None) in columns {cols}; "
                "remove them or pass na='drop' to drop incomplete rows"
            )
        frame = frame.iloc[~missing.any(axis=1)]
    if len(frame) < 2:
        dropped = (f" after dropping {missing.any(axis=1).sum()} rows with missing values"
                   if missing.any() else "")
        raise ValueError(f"data must have at least 2 rows; got {len(frame)}{dropped}")

    # by position: labels such as 1 and 1.0 may not select one column each
    columns = [_encode_column(name, frame.iloc[:, j], discretize)
               for j, name in enumerate(col_names)]
    n_levels = max((len(lv) for _, lv, _ in columns), default=0)
    dtype = np.min_scalar_type(max(n_levels - 1, 0))
    codes = np.zeros((len(frame), len(columns)), dtype=dtype, order="F")
    values = None
    if any(kind == CONTINUOUS for _, _, kind in columns):
        values = np.zeros((len(frame), len(columns)), dtype=np.float64, order="F")
    for j, (col, _, kind) in enumerate(columns):
        if kind == CONTINUOUS:
            values[:, j] = col
        else:
            codes[:, j] = col
            if values is not None:
                values[:, j] = col
    return Dataset(
        codes=codes,
        levels=tuple(lv for _, lv, _ in columns),
        names=col_names,
        kinds=tuple(kind for _, _, kind in columns),
        values=values,
    )


def _to_frame(data, names) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        if names is not None:
            raise ValueError("names cannot be given with a DataFrame, which has its own columns")
        return data  # read only below: never modified
    if isinstance(data, pd.Series):
        raise ValueError("data must be 2-D (a DataFrame or a 2-D array); got a Series")
    if isinstance(data, (str, bytes, os.PathLike)):
        raise TypeError(f"data must be a DataFrame, a 2-D array or a Dataset; got a "
                        f"{type(data).__name__} {str(data)[:60]!r} (read a file first, e.g. with "
                        "pandas.read_csv)")
    if isinstance(data, Mapping):
        raise TypeError(f"data must be a DataFrame, a 2-D array or a Dataset; got a "
                        f"{type(data).__name__} (pandas.DataFrame(data) makes one)")
    masked = np.ma.getmaskarray(data) if isinstance(data, np.ma.MaskedArray) else None
    arr = np.asarray(data)  # a masked array's data, masked entries included: see below
    if arr.dtype.names is not None:  # structured or record array: its fields are the columns
        if arr.ndim != 1:
            raise ValueError(f"data: a structured array must be 1-D (one record a row); got "
                             f"shape {arr.shape}")
        columns = []
        for field in arr.dtype.names:
            col = np.asarray(arr[field])
            if col.ndim != 1:
                raise ValueError(f"data: field {field!r} holds arrays of shape {col.shape[1:]} "
                                 "per record; give each column one value a row")
            columns.append(col)
        default = list(arr.dtype.names)
        if masked is not None:
            masked = [masked[field] for field in arr.dtype.names]
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
    """Return (codes or floats, levels, kind) for one column."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return col.array.codes, tuple(dtype.categories), DISCRETE  # no Series in between
    if pd.api.types.is_bool_dtype(dtype):
        return col.to_numpy(bool).astype(np.int64), (False, True), DISCRETE
    if pd.api.types.is_integer_dtype(dtype):
        levels, codes = np.unique(col.to_numpy(), return_inverse=True)
        return codes, tuple(levels.tolist()), DISCRETE
    if pd.api.types.is_float_dtype(dtype):
        return _encode_floats(name, col.to_numpy(np.float64), discretize)
    # object / string columns: every entry must be of one kind; numpy scalars count as the
    # Python values they hold (np.int64(2) is an int, np.str_("a") a str)
    values = col.to_numpy(object)
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
