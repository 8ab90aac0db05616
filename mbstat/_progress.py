"""Long runs: progress bars (tqdm when asked for, or once a run has taken a while) and
Ctrl-C inside compiled code."""
from __future__ import annotations

import signal
import threading

__all__ = ["AUTO_DELAY", "hides_interrupt", "interruptible", "progress_bar"]

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


class _Delayed(_Silent):
    """Counts until :data:`AUTO_DELAY` seconds have passed, then opens a tqdm bar with the
    count so far: a short run never builds one (tqdm's own ``delay`` still costs its
    construction, about 0.3 ms a call)."""

    def __init__(self, **kwargs):
        from time import perf_counter

        self._clock, self._kwargs = perf_counter, kwargs
        self._start, self._n, self._bar, self._postfix = perf_counter(), 0, None, ""

    def update(self, n=1):
        if self._bar is not None:
            self._bar.update(n)
            return
        self._n += n
        if self._clock() - self._start >= AUTO_DELAY:
            self._bar = _tqdm(initial=self._n, delay=0.0, **self._kwargs)
            if self._postfix:
                self._bar.set_postfix_str(self._postfix, refresh=False)

    def set_postfix(self, **kwargs):
        if self._bar is not None:
            self._bar.set_postfix(**kwargs)

    def set_postfix_str(self, s="", refresh=True):
        self._postfix = s
        if self._bar is not None:
            self._bar.set_postfix_str(s, refresh=refresh)

    def close(self):
        if self._bar is not None:
            self._bar.close()


def _tqdm(**kwargs):
    from tqdm.auto import tqdm

    return tqdm(leave=False, dynamic_ncols=True, **kwargs)


def progress_bar(enabled, total=None, desc: str = "", unit: str = "it"):
    """A tqdm bar (closed on exit), or a stand-in.

    ``enabled``: True shows the bar at once; None shows it at the first update after the
    run has taken :data:`AUTO_DELAY` seconds (nothing is built or printed before); False
    (or any other false value) never shows one.
    """
    if enabled is None:
        return _Delayed(total=total, desc=desc, unit=unit)
    if not enabled:
        return _Silent()
    return _tqdm(total=total, desc=desc, unit=unit, delay=0.0)


def hides_interrupt(error: BaseException) -> bool:
    """Whether ``error`` is the SystemError of a compiled (numba) function that a Ctrl-C
    reached. A SIGINT arriving while a kernel runs without the GIL is handled when the
    kernel boxes its results, inside one of numba's calls into Python, which then returns
    a result with the KeyboardInterrupt set: numba raises ``SystemError: CPUDispatcher(...)
    returned a result with an exception set``, the KeyboardInterrupt at the end of its
    context chain."""
    seen = set()
    while isinstance(error, BaseException) and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        if not isinstance(error, SystemError):
            return False
        seen.add(id(error))
        error = error.__context__
    return False


def interruptible(kernel, *args):
    """``kernel(*args)`` (a compiled call), a Ctrl-C that arrives meanwhile raised as a
    KeyboardInterrupt once it has returned, so that the learners' handlers return their
    partial results instead of failing with numba's SystemError.

    In the main thread, SIGINT is held for the call (a handler that only notes it, so
    nothing is raised inside numba's boxing of the results, whose error path is unsafe),
    then handed to the handler it replaced; elsewhere (signals reach only the main
    thread), or where no handler can be set, a SystemError hiding the interrupt
    (:func:`hides_interrupt`) is raised as the KeyboardInterrupt."""
    held = []
    previous = None
    if threading.current_thread() is threading.main_thread():
        try:
            previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
        except (ValueError, TypeError):  # not the main interpreter: no handler here
            previous = None
    try:
        result = kernel(*args)
    except SystemError as error:
        if hides_interrupt(error):
            raise KeyboardInterrupt from None
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if held:  # the Ctrl-C, handed on as the replaced handler would have taken it
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)
    return result
