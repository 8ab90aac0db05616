"""The encoded data set every CI test reads: :class:`Dataset` (codes, levels, kinds, values,
missing mask)."""
from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .._bitmaps import BIT_LEVELS, level_bits

__all__ = ["CONTINUOUS", "DISCRETE", "Dataset", "column_values", "is_discrete"]

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
    labels : tuple or None
        The column labels of the frame the data came from where some are not text
        (``pd.DataFrame(array)``'s 0 .. p-1, say); :attr:`names` holds them as text
        (``str(label)``). None for arrays and frames labelled by text.
    ordered : tuple or None
        Per column: None, or for a pandas Categorical column whether its categories are
        ordered; None when no column is one. Tests on numbers refuse such columns
        (:meth:`require_numeric`): declared categories have no spacing.

    Variables are named by their :attr:`names`, or by an integer (:meth:`index`): where
    some column label is a number, an integer is a label, as ``df[k]`` reads it (the
    label wins over a position it could also mean; an integer that is no label is an
    error); otherwise (arrays, frames labelled by text) an integer is a position.
    """

    codes: np.ndarray = field(repr=False)
    levels: tuple
    names: tuple
    kinds: tuple
    values: np.ndarray | None = field(default=None, repr=False)
    missing: np.ndarray | None = field(default=None, repr=False)
    labels: tuple | None = field(default=None, repr=False)
    ordered: tuple | None = field(default=None, repr=False)

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

    @cached_property
    def _labelled(self) -> dict | None:
        """Column position of each column label that is a number (-1 where two labels are
        equal numbers, 1 and 1.0), or None where no label is one (an int is a position)."""
        if self.labels is None:
            return None
        out = {}
        for j, label in enumerate(self.labels):
            if _is_number(label):
                out[label] = -1 if label in out else j
        return out or None

    @cached_property
    def n_positional(self) -> int:
        """How many columns a plain int names by position: all, or none where some label is
        a number (an int is then a label) unless the labels are 0 .. p-1 in order."""
        if self._labelled is None or self.labels == tuple(range(self.n_cols)):
            return self.n_cols
        return 0

    def index(self, var, param: str = "variable") -> int:
        """Column position of ``var``: a name; or an integer, a label where some column
        label is a number (as ``df[k]``), else a position.

        Raises
        ------
        ValueError
            An unknown name, an integer that is no label (listing the labels) or out of range.
        TypeError
            Neither a name nor an integer (nor a number among numeric labels).
        """
        if type(var) is int and 0 <= var < self.n_positional:  # the common case, fast
            return var
        if isinstance(var, str):
            try:
                return self._index[var]
            except KeyError:
                raise ValueError(
                    f"{param}: unknown variable {var!r}; the data has columns "
                    f"{_preview(self.names)}"
                ) from None
        if self._labelled is not None and _is_number(var):
            j = self._labelled.get(var, None)
            if j is None:
                raise ValueError(
                    f"{param}: no column is labelled {var!r}; the column labels are "
                    f"{_listed(self.labels)} (where column labels are numbers, an integer "
                    "is a label, as data[k] reads it, not a position)")
            if j < 0:
                raise ValueError(f"{param}: {var!r} equals the labels of several columns "
                                 f"{[lb for lb in self.labels if lb == var and _is_number(lb)]};"
                                 " name the column by its name (str(label))")
            return j
        if isinstance(var, numbers.Integral) and not isinstance(var, bool):
            if not 0 <= var < self.n_cols:
                raise ValueError(
                    f"{param}: position {var} is out of range for {self.n_cols} columns"
                )
            return int(var)
        raise TypeError(f"{param} must be a column name or position; got {var!r}")

    def indices(self, variables, param: str = "variables") -> tuple:
        """Column positions of a variable or an iterable of variables (as :meth:`index`)."""
        if variables is None or (type(variables) is tuple and not variables):
            return ()
        if isinstance(variables, (str, numbers.Integral)) or (
                self._labelled is not None and _is_number(variables)):
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

    def require_numeric(self, columns, test: str, ordinal: bool = False) -> None:
        """Raise when a test on numbers meets columns that hold no numbers: discrete columns
        whose levels are not numbers (their codes would stand in for values that have no
        order or spacing), and pandas Categorical columns of more than two categories,
        whatever they are (declared categories are labels: 1, 5, 9 as region codes have no
        spacing either; two numeric categories are an indicator, as a bool).

        ``ordinal=True`` (rank tests, which read only the order) accepts ordered
        Categoricals, ranked in their categories' order; refused where that order and the
        categories' values disagree (numeric categories declared out of order), which
        :meth:`numeric` would rank by value.
        """
        if all(self._numbers[j] for j in columns):  # the common case: one pass, no lists
            return
        ordered = self.ordered or (None,) * self.n_cols
        text, declared, disordered = [], [], []
        for j in columns:
            if self._numbers[j]:
                continue
            if ordered[j] is None:
                text.append(self.names[j])
            elif not (ordinal and ordered[j]):
                declared.append(self.names[j])
            elif not self._ranks_in_order(j):
                disordered.append(self.names[j])
        if declared:
            why = ("unordered pandas Categoricals: categories without an order have no ranks"
                   if ordinal else "pandas Categoricals: categories, ordered or not, have no "
                   "spacing") + " (their codes are not values)"
            raise ValueError(
                f"test {test!r} needs numbers but columns {_listed(declared)} are {why}. Use "
                "a test for discrete or mixed data (test='g2' on discrete data, 'mi-cg' with "
                "continuous columns)"
                + ("" if ordinal else ", a rank test (test='spearman') for ordered categories")
                + ", or pass the column as numbers where its categories are numbers "
                "(df[col].astype(float))")
        if disordered:
            raise ValueError(
                f"test {test!r} ranks ordered Categoricals in their categories' order, but "
                f"columns {_listed(disordered)} declare numeric categories out of ascending "
                "order, and their values would be ranked instead; reorder the categories or "
                "pass the column as numbers")
        if text:
            raise ValueError(
                f"test {test!r} needs numeric columns but columns {_listed(text)} have "
                "non-numeric levels; use a discrete test such as test='g2'"
            )

    @cached_property
    def _numeric_levels(self) -> tuple:
        """Whether each column's values are numbers (continuous, or all levels numbers)."""
        return tuple(kind == CONTINUOUS or all(isinstance(v, numbers.Real) for v in lv)
                     for kind, lv in zip(self.kinds, self.levels))

    @cached_property
    def _numbers(self) -> tuple:
        """Whether each column holds numbers with a spacing, as tests on numbers need them:
        continuous, or discrete with numeric levels (integers, bools as 0/1) and not a
        pandas Categorical unless of two numeric categories at most (any two-point coding
        is an affine function of any other: correlations change sign at most, and a
        two-sided test not at all, as for a bool column)."""
        ordered = self.ordered or (None,) * self.n_cols
        return tuple(num and (declared is None or len(lv) <= 2)
                     for num, declared, lv in zip(self._numeric_levels, ordered, self.levels))

    def _ranks_in_order(self, j: int) -> bool:
        """Whether :meth:`numeric` of Categorical column j increases with its categories'
        order (codes for text categories; numeric categories only where ascending)."""
        lv = self.levels[j]
        return not self._numeric_levels[j] or all(a < b for a, b in zip(lv, lv[1:]))

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
        """Decode back to a DataFrame: categorical columns for discrete data (ordered where
        the data's were), labelled as the data's frame was (:attr:`labels`, else
        :attr:`names`)."""
        ordered = self.ordered or (None,) * self.n_cols
        cols = []
        for j in range(self.n_cols):
            if self.kinds[j] == CONTINUOUS:
                cols.append(np.array(self.values[:, j]))
            else:
                codes = self.codes[:, j].astype(np.int64)
                if self.missing is not None:
                    codes[self.missing[:, j]] = -1
                cols.append(pd.Categorical.from_codes(codes, categories=list(self.levels[j]),
                                                      ordered=bool(ordered[j])))
        labels = pd.Index(list(self.names)) if self.labels is None else \
            pd.Index(list(self.labels), dtype=object)  # as they were: 1 stays 1 beside 2.5
        return pd.DataFrame(dict(enumerate(cols))).set_axis(labels, axis=1)

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
            labels=_taken(self.labels, idx),
            ordered=_taken(self.ordered, idx),
        )


def _taken(per_column, idx):
    """A per-column tuple (or None) restricted to columns ``idx``."""
    return None if per_column is None else tuple(per_column[j] for j in idx)


def _is_number(value) -> bool:
    """Whether a column label (or a variable given for one) is a number (bools are not)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


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


def is_discrete(dataset, j: int) -> bool:
    """Whether column ``j`` of ``dataset`` is discrete (not continuous)."""
    return dataset.kinds[j] != CONTINUOUS


def column_values(dataset, cols) -> np.ndarray:
    """Float matrix (n, len(cols)) of continuous columns."""
    cols = list(cols)
    if not cols:
        return np.empty((dataset.n_rows, 0))
    return np.asarray(dataset.numeric()[:, cols], dtype=np.float64)
