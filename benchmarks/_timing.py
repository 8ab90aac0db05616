"""Timing helper shared by the benchmark scripts."""
from __future__ import annotations

import statistics
import time


def timed(fn, repeats):
    """Median wall-clock seconds of ``repeats`` calls ``fn(i)`` (i = 0, 1, ...: a repeat may
    vary its seed) and the last result."""
    times, out = [], None
    for i in range(repeats):
        start = time.perf_counter()
        out = fn(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out
