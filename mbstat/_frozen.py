"""A read-only mapping that pickles (``types.MappingProxyType`` does not)."""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FrozenMapping"]


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
