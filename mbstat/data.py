"""The data layer: check the user's data once, encode it once.

Every public function accepts a pandas DataFrame, a 2-D numpy array or an
already encoded :class:`Dataset`; :func:`as_dataset` turns the first two into
the third. Algorithms and CI tests only ever see a ``Dataset``.

Missing cells are refused, dropped with their rows, or kept (``na="pairwise"``) as a
mask for test-wise deletion. A Dask DataFrame (or a directory of Parquet files) becomes
a :class:`PartitionedDataset`: the same levels and codes, the rows left in partitions on
the cluster, where the CI tests count them (the ``dask`` extra).
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

__all__ = ["Dataset", "PartitionedDataset", "as_dataset", "as_partitioned"]

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
    missing : ndarray of bool or None, shape (n, p)
        Where cells are missing, kept by ``as_dataset(..., na="pairwise")`` for
        test-wise deletion (their code is 0 and their value NaN: only the tests read
        this mask); None when every cell is observed.
    """

    codes: np.ndarray = field(repr=False)
    levels: tuple
    names: tuple
    kinds: tuple
    values: np.ndarray | None = field(default=None, repr=False)
    missing: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        self.codes.flags.writeable = False
        if self.values is not None:
            self.values.flags.writeable = False
        if self.missing is not None:
            self.missing.flags.writeable = False

    #: Whether the rows live in partitions on a cluster (:class:`PartitionedDataset`).
    partitioned = False

    @property
    def keeps_missing(self) -> bool:
        """Whether missing cells are kept, for test-wise deletion (``na="pairwise"``)."""
        return self.missing is not None

    @cached_property
    def missing_columns(self) -> np.ndarray:
        """Whether each column has missing cells (kept for test-wise deletion)."""
        if self.missing is None:
            return np.zeros(self.n_cols, dtype=bool)
        return self.missing.any(axis=0)

    def require_complete(self, who: str) -> None:
        """Raise when the data keeps missing cells (``na="pairwise"``) and ``who`` cannot
        delete them test by test (model-based and ranking methods need complete rows)."""
        if self.missing is not None:
            cols = [n for n, m in zip(self.names, self.missing_columns) if m]
            raise ValueError(
                f"{who} cannot honour na='pairwise' (test-wise deletion is for CI tests and "
                f"the CI learners): the data has missing values in columns {_listed(cols)}; "
                "pass na='drop' to drop incomplete rows")

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
        if self.missing is not None:
            kinds += f", {int(self.missing.sum())} missing cells kept (na='pairwise')"
        if self.partitioned:
            kinds += f", {self.n_partitions} partitions"
        return f"<{type(self).__name__}: {self.n_rows} rows, {self.n_cols} variables{kinds}>"

    def constant(self, j: int) -> bool:
        """Whether column j takes one value only among its observed cells."""
        col = self.values[:, j] if self.kinds[j] == CONTINUOUS else self.codes[:, j]
        if self.missing is not None:
            col = col[~self.missing[:, j]]
        return bool(len(col) == 0 or np.all(col == col[0]))

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
        if self.missing is not None:
            out[self.missing] = np.nan
        out.flags.writeable = False
        return out

    def to_frame(self) -> pd.DataFrame:
        """Decode back to a DataFrame (categorical columns for discrete data)."""
        cols = {}
        for j, name in enumerate(self.names):
            if self.kinds[j] == CONTINUOUS:
                cols[name] = np.array(self.values[:, j])
            else:
                codes = self.codes[:, j].astype(np.int64)
                if self.missing is not None:
                    codes[self.missing[:, j]] = -1
                cols[name] = pd.Categorical.from_codes(codes, categories=list(self.levels[j]))
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
            missing=_kept_missing(self.missing, idx),
        )


def _kept_missing(missing, idx):
    """The missing mask of columns ``idx``, or None where they are complete."""
    if missing is None:
        return None
    sub = np.asfortranarray(missing[:, idx])
    return sub if sub.any() else None


def _listed(names, k: int = 8) -> str:
    """The names as a list, or the first k of them and how many in all (never thousands)."""
    return repr(list(names)) if len(names) <= k else _preview(names, k)


def _preview(names, k: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:k])
    return f"[{shown}{', ...' if len(names) > k else ''}] ({len(names)} in all)"


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


def as_dataset(data, names=None, *, na: str = "raise", discretize=None,
               columns=None) -> Dataset:
    """Check and encode ``data`` once.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray, structured array, Dataset, Dask DataFrame or path
        Categorical, string, bool and integer columns are discrete; float
        columns are continuous. The fields of a structured (record) array
        are its columns. In an object column numpy scalars count as the
        Python values they hold (``np.int64(2)`` is an int) and numbers are
        encoded as in a typed column (floats, or ints mixed with floats, are
        continuous); other mixes of types are refused. Column labels become
        text (``str``) and must stay distinct. A ``dask.dataframe.DataFrame``, or
        the path of a directory of Parquet files, gives a
        :class:`PartitionedDataset`: the rows stay in their partitions on the
        cluster (the ``dask`` extra, see :func:`as_partitioned`).
    names : sequence of str, optional
        Column names for an array (default ``V1 .. Vp`` as in R; for a
        structured array, its field names).
    na : {"raise", "drop", "pairwise"}
        Missing values raise an error naming the columns, or their rows are dropped,
        or (``"pairwise"``) they are kept as missing cells for test-wise deletion:
        each CI test then uses the rows complete for its own variables (x, y and z),
        as bnlearn does. Test-wise deletion is consistent when values are missing
        completely at random (MCAR), not when missingness depends on the data (MAR,
        MNAR); model-based and ranking methods refuse such data. A Dataset keeps the
        missing cells it was encoded with unless ``na="drop"``.
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins.
    columns : sequence of int, optional
        Encode only these columns of a DataFrame (positions, in this order): a column's
        encoding does not depend on the others, so a test reads only its own columns
        (``na="drop"`` still drops the rows incomplete in any column).

    Returns
    -------
    Dataset
    """
    check_choice("na", na, NA_CHOICES)
    if discretize is not None:
        check_int("discretize", discretize, low=2)
    if isinstance(data, Dataset):
        if names is not None:
            raise ValueError("names cannot be given with a Dataset, which already has names")
        if na == "drop" and data.partitioned and data.keeps_missing:
            raise ValueError(
                "na='drop': this data set in partitions was encoded with na='pairwise' and "
                "keeps its missing cells; encode the Dask DataFrame with na='drop' "
                "(as_dataset(frame, na='drop')) to drop the incomplete rows")
        if data.missing is not None and na == "drop":  # (the default "raise" keeps the
            data = as_dataset(data.to_frame(), na="drop")  # missing cells it was encoded with)
        if discretize is not None and CONTINUOUS in data.kinds:
            if data.partitioned:
                raise ValueError("discretize: bin the columns of a partitioned data set before "
                                 "encoding it")
            data = as_dataset(data.to_frame(), discretize=discretize, na=na)
        return data
    if _is_partitioned_source(data):
        if names is not None:
            raise ValueError("names cannot be given with a Dask DataFrame or Parquet files")
        return as_partitioned(data, na=na, discretize=discretize)
    if columns is None:
        wide = _integer_blocks(data, names)  # scipy.sparse, or a frame of one integer dtype
        if wide is not None:
            return wide
    frame = _to_frame(data, names)
    if frame.shape[1] == 0:
        raise ValueError("data has no columns")
    col_names = _column_names(frame.columns, "names" if names is not None else None)
    if columns is not None:  # only these columns, by position
        columns = _positions(columns, frame.shape[1])
        if na == "drop":  # the rows incomplete in any column go, as without columns=
            incomplete = frame.isna().to_numpy().any(axis=1)
            if incomplete.any():
                frame = frame.iloc[~incomplete]
        col_names = [col_names[j] for j in columns]
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
    return _assemble(columns, col_names)


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
                   kinds=(DISCRETE,) * p)


#: Choices of ``na``.
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


def _assemble(columns, col_names) -> Dataset:
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
    )


def _to_frame(data, names) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        if names is not None:
            raise ValueError("names cannot be given with a DataFrame, which has its own columns")
        return data  # read only below: never modified
    if isinstance(data, pd.Series):
        raise ValueError("data must be 2-D (a DataFrame or a 2-D array); got a Series")
    if isinstance(data, (str, bytes, os.PathLike)):
        from ._dask import path_problem

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


def _is_partitioned_source(data) -> bool:
    """Whether ``data`` is a Dask DataFrame or a directory of Parquet files."""
    from . import _dask

    return _dask.is_dask_frame(data) or _dask.is_parquet_dir(data)



# ------------------------------------------------------------ data in partitions (Dask)
@dataclass(frozen=True, eq=False, repr=False)
class PartitionedDataset(Dataset):
    """An encoded data set whose rows stay in partitions on a Dask cluster.

    Levels, kinds and names are those :func:`as_dataset` gives the same rows in memory
    (found in one pass over the partitions); each partition holds its codes, values and
    missing cells like a :class:`Dataset`'s, transposed (columns as rows). CI tests count
    their tables per partition with the same compiled kernels and sum them
    (:mod:`mbstat.ci.counting`), so results equal the in-memory ones. ``codes`` holds no
    rows here; methods that need the rows in memory (:meth:`numeric`, model-based
    learners) refuse, :meth:`to_frame` gathers them.

    Attributes
    ----------
    parts : tuple
        The persisted partitions (Dask delayed objects or futures), in row order.
    part_rows : tuple of int
        Rows of each partition.
    keeps_missing : bool
        Encoded with ``na="pairwise"`` and some cell is missing (:attr:`missing_columns`).
    """

    parts: tuple = field(default=(), repr=False)
    part_rows: tuple = field(default=(), repr=False)
    missing_by_column: tuple = field(default=(), repr=False)

    partitioned = True

    @property
    def n_rows(self) -> int:
        return int(sum(self.part_rows))

    @property
    def n_partitions(self) -> int:
        return len(self.parts)

    @cached_property
    def missing_columns(self) -> np.ndarray:
        return np.array(self.missing_by_column or [False] * self.n_cols, dtype=bool)

    @property
    def keeps_missing(self) -> bool:
        return bool(self.missing_columns.any())

    @property
    def level_bits(self):
        return None

    @cached_property
    def cache(self) -> dict:
        """Facts computed once from the partitions (e.g. the columns' content keys)."""
        return {}

    def require_complete(self, who: str) -> None:
        raise ValueError(f"{who} needs the rows in memory; the data is in {self.n_partitions} "
                         "partitions on a Dask cluster (only the CI tests and the CI learners "
                         "count there): compute() the Dask DataFrame first")

    def numeric(self) -> np.ndarray:
        self.require_complete("numeric()")

    def constant(self, j: int) -> bool:
        ranges = [r for r in self.map(_observed_range, j) if r is not None]
        return not ranges or min(lo for lo, _ in ranges) == max(hi for _, hi in ranges)

    def map(self, func, *args) -> list:
        """``func(partition, *args)`` on every partition (on the cluster), in row order."""
        from ._dask import map_partitions

        return map_partitions(self.parts, func, *args)

    def chain(self, func, first, *args):
        """``func(partition, carried, *args)`` partition after partition, each call given the
        last one's result (``first`` for the first): a sequential fold on the cluster."""
        from ._dask import fold_partitions

        return fold_partitions(self.parts, func, first, *args)

    def to_frame(self) -> pd.DataFrame:
        """Gather every row into memory, decoded (as :meth:`Dataset.to_frame`)."""
        return pd.concat([_part_dataset(part, self).to_frame() for part in self.map(_identity)],
                         ignore_index=True)

    def subset(self, columns) -> "Dataset":
        raise ValueError("subset(): the rows are in partitions on a Dask cluster; select the "
                         "columns of the Dask DataFrame before encoding it")

    def __reduce__(self):
        raise TypeError("a PartitionedDataset refers to partitions held by this process's Dask "
                        "client and cannot be sent to other processes: run its learners in "
                        "this process (e.g. blankets(..., n_jobs=1)); the cluster counts in "
                        "parallel")


def _identity(part):
    return part


def _observed_range(part, j):
    """(smallest, largest) observed value or code of column j in a partition, or None."""
    col = part["values"][j] if part["values"] is not None else part["codes"][j]
    if part["missing"] is not None:
        col = col[~part["missing"][j]]
    return (col.min(), col.max()) if len(col) else None


def _part_dataset(part, ds) -> Dataset:
    """One partition as an in-memory Dataset (for :meth:`PartitionedDataset.to_frame`)."""
    miss = part["missing"]
    return Dataset(codes=np.asfortranarray(part["codes"].T), levels=ds.levels, names=ds.names,
                   kinds=ds.kinds,
                   values=None if part["values"] is None else np.asfortranarray(part["values"].T),
                   missing=None if miss is None or not miss.any() else np.asfortranarray(miss.T))


def as_partitioned(data, *, na="raise", discretize=None) -> PartitionedDataset:
    """A :class:`PartitionedDataset` from a ``dask.dataframe.DataFrame`` or the path of a
    directory of Parquet files (read by ``dask.dataframe.read_parquet``).

    One pass finds each column's kind, levels (sorted, as :func:`as_dataset`; a
    categorical column's declared categories), missing cells and rows; a second encodes
    every partition with those levels and keeps it persisted on the cluster (the
    distributed client in use, else Dask's default scheduler). ``na`` as in
    :func:`as_dataset` ("drop" drops a partition's incomplete rows); ``discretize`` is
    refused (bin the columns before). Object columns are encoded as in memory: Dask's
    conversion of them to strings is undone (:func:`mbstat._dask.without_string_conversion`),
    and a column of integers in some partitions and floats in others is continuous.
    """
    check_choice("na", na, NA_CHOICES)
    from . import _dask

    dask, dd = _dask.require_dask("a Dask DataFrame or a Parquet directory")
    if discretize is not None:
        raise ValueError("discretize: a Dask DataFrame is encoded without binning; bin its "
                         "continuous columns first (e.g. with map_partitions and fixed edges)")
    frame = dd.read_parquet(os.fspath(data)) if _dask.is_parquet_dir(data) else data
    frame = _dask.without_string_conversion(frame)  # object columns as pandas holds them
    col_names = _column_names(frame.columns)
    if not col_names:
        raise ValueError("data has no columns")
    meta = frame._meta
    declared = [tuple(meta.iloc[:, j].dtype.categories)
                if isinstance(meta.iloc[:, j].dtype, pd.CategoricalDtype)
                and "__UNKNOWN_CATEGORIES__" not in meta.iloc[:, j].dtype.categories else None
                for j in range(len(col_names))]
    parts = frame.to_delayed()
    scans = _dask.map_partitions(parts, _scan_partition, declared, na)
    rows = [sc["rows"] for sc in scans]
    kinds, levels, missing = [], [], []
    for j, name in enumerate(col_names):
        found = {sc["kinds"][j] for sc in scans if sc["rows"]} - {"empty"}
        observed = [np.asarray(sc["levels"][j], dtype=object) for sc in scans
                    if sc["kinds"][j] == DISCRETE]
        if found == {DISCRETE, CONTINUOUS} and all(  # integers here, floats there: floats
                _type_kind(type(v)) == "int" for lv in observed for v in lv):
            found = {CONTINUOUS}
        if len(found) > 1:
            raise TypeError(f"column {name!r} has values of kinds {sorted(found)} in different "
                            "partitions; give each column one type")
        kind = found.pop() if found else DISCRETE
        kinds.append(CONTINUOUS if kind == CONTINUOUS else DISCRETE)
        if kind == CONTINUOUS:
            levels.append(())
        elif declared[j] is not None:
            levels.append(declared[j])
        elif kind == "bool":
            levels.append((False, True))
        elif observed:  # the levels of all partitions together, sorted as in memory
            union = pd.Series(np.concatenate(observed), dtype=object)
            levels.append(_encode_observed(name, union, None)[1])
        else:
            levels.append(())
        missing.append(sum(sc["missing"][j] for sc in scans))
    if any(missing) and na == "raise":
        _raise_missing([n for n, m in zip(col_names, missing) if m])
    if sum(rows) < 2:
        raise ValueError(f"data must have at least 2 rows; got {sum(rows)}")
    n_levels = max((len(lv) for lv in levels), default=0)
    dtype = np.min_scalar_type(max(n_levels - 1, 0))
    spec = (tuple(levels), tuple(kinds), na, dtype)
    encoded = _dask.persist_partitions(parts, _encode_partition, spec)
    return PartitionedDataset(
        codes=np.zeros((0, len(col_names)), dtype=dtype, order="F"), levels=tuple(levels),
        names=col_names, kinds=tuple(kinds), parts=tuple(encoded), part_rows=tuple(rows),
        missing_by_column=tuple(bool(m) and na == "pairwise" for m in missing))


def _scan_partition(frame: pd.DataFrame, declared, na) -> dict:
    """One partition's rows, and per column its kind, observed levels and missing cells."""
    if na == "drop":
        frame = frame.dropna()
    kinds, levels, missing = [], [], []
    for j, col in enumerate(_frame_columns(frame)):
        miss = col.isna().to_numpy(bool)
        missing.append(int(miss.sum()))
        observed = col[~miss] if miss.any() else col
        if len(observed) == 0:
            kinds.append("empty")
            levels.append([])
            continue
        if declared[j] is not None:
            kinds.append(DISCRETE)
            levels.append([])
            continue
        if isinstance(col.dtype, pd.CategoricalDtype):
            observed = observed.astype(object)
        codes, lv, kind = _encode_observed(str(col.name), observed, None)
        if kind == CONTINUOUS:
            kinds.append(CONTINUOUS)
            levels.append([])
        else:
            kinds.append("bool" if lv == (False, True) and pd.api.types.is_bool_dtype(col.dtype)
                         else DISCRETE)
            levels.append(list(lv))
    return {"rows": len(frame), "kinds": kinds, "levels": levels, "missing": missing}


def _encode_partition(frame: pd.DataFrame, spec) -> dict:
    """A partition's codes (p, m), values (p, m) or None, missing mask (p, m) or None (na
    "pairwise"), with the levels found by the scan: the codes :func:`as_dataset` gives the
    same rows in memory."""
    levels, kinds, na, dtype = spec
    if na == "drop":
        frame = frame.dropna()
    m, p = frame.shape
    codes = np.zeros((p, m), dtype=dtype)
    values = np.zeros((p, m)) if CONTINUOUS in kinds else None
    missing = np.zeros((p, m), dtype=bool) if na == "pairwise" else None
    for j, col in enumerate(_frame_columns(frame)):
        miss = col.isna().to_numpy(bool)
        if kinds[j] == CONTINUOUS:
            values[j] = col.to_numpy(np.float64, na_value=np.nan)
        else:
            if isinstance(col.dtype, pd.CategoricalDtype) and tuple(col.dtype.categories) == \
                    levels[j]:
                code = col.array.codes
            else:
                raw = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
                code = pd.Categorical(raw.to_numpy(object), categories=list(levels[j])).codes
            codes[j] = np.where(code < 0, 0, code)
            if values is not None:
                values[j] = codes[j]
                values[j, miss] = np.nan
        if missing is not None:
            missing[j] = miss
    if missing is not None and not missing.any():
        missing = None
    return {"codes": codes, "values": values, "missing": missing}
