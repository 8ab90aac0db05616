"""Dask plumbing of the data layer: recognise Dask DataFrames and Parquet directories, and
run a function on every partition of a persisted collection (lazy imports: Dask is the
optional ``dask`` extra, ``pip install "mbstat[dask]"``).

It knows nothing of mbstat's data model: :mod:`mbstat.data` passes the encoding function,
:mod:`mbstat.ci.tables.counting` the counting functions.
"""
from __future__ import annotations

import os

__all__ = ["is_dask_frame", "is_parquet_dir", "path_problem", "require_dask",
           "without_string_conversion"]


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


def path_problem(data) -> str:
    """Why the path ``data`` (not a directory of Parquet files) cannot be read as data, for
    the data layer's message."""
    path = os.fspath(data)
    if not os.path.exists(path):
        return ("no file or directory of that name exists, and a path is read only as a "
                "directory of Parquet files (through Dask)")
    if os.path.isdir(path):
        return ("the directory holds no Parquet files (*.parquet), which a directory given "
                "as data must hold")
    if path.endswith(".parquet"):
        return ("one Parquet file: give its directory (read through Dask) or read it with "
                "pandas.read_parquet")
    return "a path is read only as a directory of Parquet files (through Dask)"


def require_dask(what: str):
    """Import ``dask.dataframe``, or say how to install the extra."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(f"{what} needs Dask: pip install \"mbstat[dask]\"") from None
    return dask, dd


def without_string_conversion(frame):
    """``frame`` less Dask's conversion of object columns to strings.

    With ``dataframe.convert-string`` on (Dask's default with pyarrow), ``from_pandas`` and
    ``from_delayed`` turn every object column into strings: integers with None become
    "1", "10", mixed values their str(). Read here as undoing that: the same collection
    (a new one; the caller's is untouched) with ``from_pandas``'s conversion switched off
    and the ``ArrowStringConversion`` steps dropped, so each partition holds the objects
    that pandas holds. The expression API is Dask's own (``dask.dataframe.dask_expr``):
    where it is missing, ``frame`` is returned as it is.
    """
    try:
        from dask.dataframe.dask_expr import new_collection
        from dask.dataframe.dask_expr._expr import ArrowStringConversion
        from dask.dataframe.dask_expr.io.io import FromPandas
    except ImportError:  # pragma: no cover - an older Dask without the expression API
        return frame
    expr = getattr(frame, "expr", None)
    if expr is None:  # pragma: no cover - a legacy Dask collection
        return frame

    def undone(node):
        if isinstance(node, ArrowStringConversion):
            return node.frame
        if isinstance(node, FromPandas) and node.pyarrow_strings_enabled:
            return node.substitute_parameters({"pyarrow_strings_enabled": False})
        return None

    changed = False
    try:
        while True:  # one step at a time: a substitution renames the nodes above it
            found = next(((node, new) for node in expr.walk()
                          if (new := undone(node)) is not None), None)
            if found is None:
                return new_collection(expr) if changed else frame
            expr, changed = expr.substitute(*found), True
    except (AttributeError, TypeError):  # pragma: no cover - Dask's private API moved
        return frame


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
