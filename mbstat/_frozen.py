"""A read-only mapping that pickles (``types.MappingProxyType`` does not)."""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FrozenMapping", "fields_equal", "values_equal"]


class FrozenMapping(Mapping):
    """An immutable view of a copied dict; picklable, so results travel between processes."""

    __slots__ = ("_data",)

    def __init__(self, data=()):
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name, value):
        raise AttributeError("FrozenMapping is read-only")

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"

    def __reduce__(self):
        return (FrozenMapping, (self._data,))


def values_equal(a, b) -> bool:
    """Value equality for result fields: frames and arrays by content, NaN equal to NaN.

    The ``==`` of a DataFrame or an array is elementwise (its truth value is ambiguous),
    and ``nan != nan``; results compare by value with this instead, so a result equals
    its unpickled copy.
    """
    import math

    import numpy as np
    import pandas as pd

    if a is b:
        return True
    if isinstance(a, (pd.DataFrame, pd.Series, pd.Index)) or isinstance(
            b, (pd.DataFrame, pd.Series, pd.Index)):
        return type(a) is type(b) and a.equals(b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(values_equal(x, y) for x, y in zip(a, b)))
    return bool(a == b)


def fields_equal(self, other, ignore=()) -> bool:
    """``__eq__`` of a frozen dataclass whose fields may hold frames, arrays or NaN (the
    fields named in ``ignore`` left out)."""
    from dataclasses import fields

    if type(other) is not type(self):
        return NotImplemented
    return all(values_equal(object.__getattribute__(self, f.name),
                            object.__getattribute__(other, f.name))
               for f in fields(self) if f.name not in ignore)
