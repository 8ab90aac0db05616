"""Data in partitions (Dask): :class:`PartitionedDataset`, its scans and partition-wise encoding."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .. import _dask
from .._dask import fold_partitions, map_partitions
from .._validation import check_choice
from .dataset import CONTINUOUS, DISCRETE, Dataset
from .encoding import (NA_CHOICES, _column_names, _encode_observed, _frame_columns, _kept_labels,
                       _raise_missing, _type_kind)


def _is_partitioned_source(data) -> bool:
    """Whether ``data`` is a Dask DataFrame or a directory of Parquet files."""

    return _dask.is_dask_frame(data) or _dask.is_parquet_dir(data)


@dataclass(frozen=True, eq=False, repr=False)
class PartitionedDataset(Dataset):
    """An encoded data set whose rows stay in partitions on a Dask cluster.

    Levels, kinds and names are those :func:`as_dataset` gives the same rows in memory
    (found in one pass over the partitions); each partition holds its codes, values and
    missing cells like a :class:`Dataset`'s, transposed (columns as rows). CI tests count
    their tables per partition with the same compiled kernels and sum them
    (:mod:`mbstat.ci.tables.counting`), so results equal the in-memory ones. ``codes`` holds no
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

        return map_partitions(self.parts, func, *args)

    def chain(self, func, first, *args):
        """``func(partition, carried, *args)`` partition after partition, each call given the
        last one's result (``first`` for the first): a sequential fold on the cluster."""

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
                   kinds=ds.kinds, labels=ds.labels, ordered=ds.ordered,
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
    ordered = tuple(bool(meta.iloc[:, j].dtype.ordered)
                    if isinstance(meta.iloc[:, j].dtype, pd.CategoricalDtype) else None
                    for j in range(len(col_names)))
    return PartitionedDataset(
        codes=np.zeros((0, len(col_names)), dtype=dtype, order="F"), levels=tuple(levels),
        names=col_names, kinds=tuple(kinds), labels=_kept_labels(frame.columns),
        ordered=None if all(o is None for o in ordered) else ordered, parts=tuple(encoded),
        part_rows=tuple(rows),
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
