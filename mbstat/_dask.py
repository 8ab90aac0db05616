"""Dask plumbing of the data layer: recognise Dask DataFrames and Parquet directories, and
run a function on every partition of a persisted collection (lazy imports: Dask is the
optional ``dask`` extra, ``pip install "mbstat[dask]"``).

It knows nothing of mbstat's data model: :mod:`mbstat.data` passes the encoding function,
:mod:`mbstat.ci.counting` the counting functions.
"""
from __future__ import annotations

import os

__all__ = ["is_dask_frame", "is_parquet_dir", "require_dask"]


def is_dask_frame(data) -> bool:
    """Whether ``data`` is a ``dask.dataframe.DataFrame`` (without importing Dask)."""
    module = type(data).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(data, "npartitions") and hasattr(
        data, "columns")


def is_parquet_dir(data) -> bool:
    """Whether ``data`` is the path of a directory holding Parquet files."""
    if not isinstance(data, (str, os.PathLike)):
        return False
    path = os.fspath(data)
    if not os.path.isdir(path):
        return False
    return any(name.endswith(".parquet") for name in os.listdir(path))


def require_dask(what: str):
    """Import ``dask.dataframe``, or say how to install the extra."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(f"{what} needs Dask: pip install \"mbstat[dask]\"") from None
    return dask, dd
