"""The data layer: check the user's data once, encode it once.

Every public function accepts a pandas DataFrame, a 2-D numpy array or an
already encoded :class:`Dataset`; :func:`as_dataset` turns the first two into
the third. Algorithms and CI tests only ever see a ``Dataset``.
"""
from __future__ import annotations

import numbers
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
                f"test {test!r} needs discrete data but columns {bad} are continuous; "
                "pass discretize=<number of bins> to bin them at equal frequencies, "
                "or use a continuous test such as test='fisher_z'"
            )

    def require_numeric(self, columns, test: str) -> None:
        """Raise when a test on numbers meets discrete columns whose levels are not numbers
        (their codes would stand in for values that have no order or spacing)."""
        bad = [self.names[j] for j in columns if not self._numeric_levels[j]]
        if bad:
            raise ValueError(
                f"test {test!r} needs numeric columns but columns {bad} have non-numeric "
                "levels; use a discrete test such as test='g2'"
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


def _preview(names, k: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:k])
    return f"[{shown}{', ...' if len(names) > k else ''}] ({len(names)} in all)"


def as_dataset(data, names=None, *, na: str = "raise", discretize=None) -> Dataset:
    """Check and encode ``data`` once.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
        Categorical, string, bool and integer columns are discrete; float
        columns are continuous.
    names : sequence of str, optional
        Column names for an array (default ``V1 .. Vp`` as in R).
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
    dupes = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if dupes:
        raise ValueError(f"data has duplicate column names: {dupes}")
    bad_names = [c for c in frame.columns if not isinstance(c, str)]
    if bad_names:
        frame = frame.rename(columns={c: str(c) for c in bad_names})
    missing = frame.isna().any(axis=0)
    if missing.any():
        if na == "raise":
            cols = list(frame.columns[missing.to_numpy()])
            raise ValueError(
                f"data has missing values (NaN/None) in columns {cols}; "
                "remove them or pass na='drop' to drop incomplete rows"
            )
        frame = frame.loc[~frame.isna().any(axis=1)]
    if len(frame) < 2:
        raise ValueError(f"data must have at least 2 rows; got {len(frame)}")

    columns = [_encode_column(name, frame[name], discretize) for name in frame.columns]
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
        names=tuple(str(c) for c in frame.columns),
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
    if isinstance(data, Mapping):
        raise TypeError(f"data must be a DataFrame, a 2-D array or a Dataset; got a "
                        f"{type(data).__name__} (pandas.DataFrame(data) makes one)")
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be a 2-D array; got {arr.ndim}-D with shape {arr.shape}")
    if names is None:
        names = [f"V{j + 1}" for j in range(arr.shape[1])]
    names = [str(n) for n in names]
    if len(names) != arr.shape[1]:
        raise ValueError(f"names has {len(names)} entries but data has {arr.shape[1]} columns")
    return pd.DataFrame({i: arr[:, j] for j, i in enumerate(range(arr.shape[1]))}).set_axis(
        names, axis=1
    )


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
        values = col.to_numpy(np.float64)
        if not np.isfinite(values).all():
            raise ValueError(f"column {name!r} has infinite values")
        if discretize is None:
            return values, (), CONTINUOUS
        return _equal_frequency_bins(values, discretize)
    # object / string columns: every entry must be of one type
    values = col.to_numpy(object)
    types = {type(v) for v in values}
    if len(types) > 1:
        shown = sorted(t.__name__ for t in types)
        raise TypeError(f"column {name!r} mixes types {shown}; give each column one type")
    try:
        levels, codes = np.unique(values, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"column {name!r} has values that cannot be ordered: {exc}") from None
    return codes, tuple(levels.tolist()), DISCRETE


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
