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


def _delayed(func):
    import dask

    return dask.delayed(func, pure=True)


def _client():
    """The distributed client in use, or None (Dask's default scheduler)."""
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - the dask extra brings distributed
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _futures(parts):
    """The client of futures ``parts`` (persisted on a distributed cluster), or None."""
    first = parts[0] if len(parts) else None
    return getattr(first, "client", None) if type(first).__name__ == "Future" else None


def map_partitions(parts, func, *args) -> list:
    """``func(part, *args)`` for every partition (futures on a distributed cluster: one task
    each, submitted directly; Dask delayed objects: computed together on the default
    scheduler); the results in partition order."""
    client = _futures(parts)
    if client is not None:
        return client.gather([client.submit(func, part, *args, pure=False) for part in parts])
    import dask

    call = _delayed(func)
    return list(dask.compute(*[call(part, *args) for part in parts]))


def fold_partitions(parts, func, first, *args):
    """``func(part, carried, *args)`` partition after partition, each given the last result
    (``first`` for the first partition); only the small carried values travel."""
    client = _futures(parts)
    carried = first
    if client is not None:
        for part in parts:
            carried = client.submit(func, part, carried, *args, pure=False)
        return carried.result()
    import dask

    call = _delayed(func)
    for part in parts:
        carried = call(part, carried, *args)
    return dask.compute(carried)[0]


def persist_partitions(parts, func, *args) -> list:
    """``func(part, *args)`` for every partition, kept in the cluster's memory: futures on
    the distributed client in use, else persisted Dask delayed objects; in order."""
    import dask

    call = _delayed(func)
    tasks = [call(part, *args) for part in parts]
    client = _client()
    if client is not None:
        return list(client.compute(tasks))
    return list(dask.persist(*tasks))
