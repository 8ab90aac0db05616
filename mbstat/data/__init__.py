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

import dataclasses
import numbers

import pandas as pd

from .._validation import check_choice, check_int
from .dataset import CONTINUOUS, DISCRETE, Dataset, _is_number
from .encoding import NA_CHOICES, encode_frame
from .partitioned import PartitionedDataset, _is_partitioned_source, as_partitioned
from .wide import _integer_blocks

__all__ = ["CONTINUOUS", "DISCRETE", "Dataset", "PartitionedDataset", "as_dataset", "as_partitioned"]


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
        continuous); other mixes of types are refused, and so are date and time
        columns (datetime64, timedelta64). Column labels become
        text (``str``) and must stay distinct; where some label is a number, an integer
        names a column by its label (as ``df[k]``), elsewhere by its position
        (:meth:`Dataset.index`). Categorical columns stay categories: tests on numbers
        refuse them (:meth:`Dataset.require_numeric`). A ``dask.dataframe.DataFrame``, or
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
            data = _reencoded(data, na="drop")  # missing cells it was encoded with)
        if discretize is not None and CONTINUOUS in data.kinds:
            if data.partitioned:
                raise ValueError("discretize: bin the columns of a partitioned data set before "
                                 "encoding it")
            data = _reencoded(data, discretize=discretize, na=na)
        return data
    if _is_partitioned_source(data):
        if names is not None:
            raise ValueError("names cannot be given with a Dask DataFrame or Parquet files")
        return as_partitioned(data, na=na, discretize=discretize)
    if columns is None:
        wide = _integer_blocks(data, names)  # scipy.sparse, or a frame of one integer dtype
        if wide is not None:
            return wide
    return encode_frame(data, names, na=na, discretize=discretize, columns=columns)


def _reencoded(data: Dataset, **how) -> Dataset:
    """``data`` decoded and encoded again (rows dropped, columns binned), its columns still
    Categoricals only where they were (:meth:`Dataset.to_frame` decodes every discrete
    column as one); labels travel with the frame."""
    out = encode_frame(data.to_frame(), **how)
    return dataclasses.replace(out, ordered=data.ordered)


def used_columns(data, query, na, discretize, batch=False):
    """A DataFrame encoded only in the columns that the query (x or xs, y, z) names, and
    the query by name: a test encodes only its own columns (a column's encoding does not depend on
    the others). Anything else, and a query the checks must word (unknown names, odd
    types, labels that repeat as text), and ``na="drop"`` (which drops the rows incomplete
    in any column of the data), is returned as it came."""
    if not isinstance(data, pd.DataFrame) or na == "drop" or data.shape[1] < 2:
        return data, query
    labels = data.columns
    if not labels.is_unique:
        return data, query
    names = list(map(str, labels.tolist()))
    index = {name: j for j, name in enumerate(names)}
    if len(index) != len(names):
        return data, query
    # an integer is a label where some label is a number (as Dataset.index reads it)
    numeric = {c: j for j, c in enumerate(labels.tolist()) if _is_number(c)}
    if len(numeric) != sum(map(_is_number, labels.tolist())):  # 1 and 1.0: Dataset.index words it
        return data, query
    used = {}

    def name_of(v):
        if isinstance(v, str):
            j = index[v]
        elif numeric and _is_number(v):
            j = numeric[v]
        elif isinstance(v, numbers.Integral) and not isinstance(v, bool) and 0 <= v < len(names):
            j = int(v)
        else:
            raise KeyError(v)
        used.setdefault(j, None)
        return names[j]

    def many(vs):
        if vs is None or isinstance(vs, (str, numbers.Number)):
            return vs if vs is None else name_of(vs)
        return [name_of(v) for v in vs]

    x, y, z = query
    try:
        x = [many(xk) for xk in x] if batch else many(x)
        y = name_of(y)
        z = many(z)
    except (KeyError, TypeError):
        return data, query
    if len(used) == len(names):
        return data, (x, y, z)
    # in the frame's order: tests sort z by position, so sums run in the same order
    return as_dataset(data, na=na, discretize=discretize, columns=sorted(used)), (x, y, z)
