"""Kernels called by address (``mbstat.ci.tables._linked``, issue #25's cold start): the
callee's arrays, its exceptions and its cached version reach the caller as in a linked call."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit, types
from numba.core.errors import TypingError

from mbstat.ci.tables._linked import Callee

_I64 = types.Array(types.int64, 1, "C")
_F64 = types.Array(types.float64, 1, "C")


@njit
def _ratio(a, b):  # pragma: no cover - compiled
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i] / b[i]
    return out, a.sum()


RATIO = Callee(_ratio, types.Tuple((_F64, types.int64))(_I64, _F64))
_CALL_RATIO = RATIO.call


@njit
def _twice(address, a, b):  # pragma: no cover - compiled
    f = _CALL_RATIO(address)
    first, s1 = f(a, b)
    second, s2 = f(a, b)
    return first + second, s1 + s2


def test_a_callee_by_address_returns_its_arrays():
    a = np.arange(1, 4)
    out, total = _twice(RATIO.address(), a, np.full(3, 2.0))
    np.testing.assert_array_equal(out, a)  # a / 2, twice
    assert total == 12


def test_the_callees_exception_reaches_the_caller():
    with pytest.raises(ZeroDivisionError):
        _twice(RATIO.address(), np.arange(3), np.zeros(3))


def test_a_signature_whose_return_type_differs_is_refused():
    """(numba's TypingError, or the Callee's TypeError: never a call through a pointer of
    the wrong type)."""
    RATIO.address()  # compiled for these arguments, returning (float64[:], int64)
    wrong = Callee(_ratio, types.Tuple((_F64, types.float64))(_I64, _F64))
    with pytest.raises((TypeError, TypingError), match="return"):
        wrong.address()


CHILD = r"""
import json
import numpy as np
from mbstat.ci.tables import _kernels as K
x = np.array([0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1], dtype=np.int64)
y = np.array([0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0], dtype=np.int64)
z = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1], dtype=np.int64)
out, moments, found = K._one_null(x, y, z, 5, 3, 1.0, K.clogc_table(12),
                                  np.array([1.0, 0.0, 0.0, 0.0]))
print(json.dumps({"hits": sum(sum(c.dispatcher.stats.cache_hits.values())
                             for c in K.CALLEES),
                  "misses": sum(sum(c.dispatcher.stats.cache_misses.values())
                               for c in K.CALLEES),
                  "out": out.tolist(), "moments": moments.tolist(), "found": found.tolist()}))
"""


def test_the_callees_load_from_the_cache_in_a_new_process():
    """A new process finds every callee in numba's cache (no compile) and gets the same
    numbers as the next one: the cached callers hold no address of the process that compiled
    them. Numba's own cache of the package is used (the suite's earlier tests, or the first
    process here, compile the calibration's kernels into it), so that only a cold checkout
    pays that compile once."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", CHILD], env=env,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert second["misses"] == 0 and second["hits"] > 0
    assert second["out"] == first["out"] and second["moments"] == first["moments"]
    np.testing.assert_array_equal(second["found"], first["found"])
