"""Progress bars for long runs: tqdm when asked for, nothing otherwise."""
from __future__ import annotations

__all__ = ["progress_bar"]


class _Silent:
    """Stands in for a tqdm bar when progress is off."""

    def update(self, n=1):
        pass

    def set_postfix(self, **kwargs):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress_bar(enabled: bool, total=None, desc: str = "", unit: str = "it"):
    """A tqdm bar (closed on exit) when ``enabled``, else a silent stand-in."""
    if not enabled:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)
