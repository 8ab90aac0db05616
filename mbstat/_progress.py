"""Progress bars for long runs: tqdm when asked for, or once a run has taken a while."""
from __future__ import annotations

__all__ = ["AUTO_DELAY", "progress_bar"]

#: With ``progress=None`` (the learners' default) a bar appears once a run has taken this
#: many seconds: a run that long is one a user could take for a hang.
AUTO_DELAY = 10.0


class _Silent:
    """Stands in for a tqdm bar when progress is off."""

    def update(self, n=1):
        pass

    def set_postfix(self, **kwargs):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress_bar(enabled, total=None, desc: str = "", unit: str = "it"):
    """A tqdm bar (closed on exit), or a silent stand-in.

    ``enabled``: True shows the bar at once; None shows it once the run has taken
    :data:`AUTO_DELAY` seconds (tqdm's ``delay``: nothing is printed before); False
    (or any other false value) never shows one.
    """
    if enabled is not None and not enabled:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True,
                delay=0.0 if enabled else AUTO_DELAY)
