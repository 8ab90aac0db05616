"""The chi-square law's tail, accurate where the p-value underflows: scipy's C functions
called from compiled code, and the continued fraction of the upper incomplete gamma function.

Shared by every family of tests (contingency tables, the likelihood-ratio tests of the
continuous and mixed family, the kernel test's Satterthwaite-Welch reference).
"""
from __future__ import annotations

import ctypes
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import get_cython_function_address, intrinsic

__all__ = ["CHI2", "chi2_logsf", "chi2_sf_logsf", "log_gammaincc", "sf_logsf_many"]


def _cython_special_address(name: str) -> int:
    """Address of scipy's C function ``name(df, x)`` (``scipy.special.cython_special``),
    after checking its signature: the compiled p-values call the very functions behind
    ``scipy.special.chdtrc`` and ``chdtr``, digit for digit."""
    from scipy.special import cython_special

    get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
        ("PyCapsule_GetName", ctypes.pythonapi))  # a private prototype: no global state
    signature = get_name(cython_special.__pyx_capi__[name]) or b""
    if not signature.startswith(b"double (double, double"):
        raise ImportError(f"scipy.special.cython_special.{name} has an unexpected signature "
                          f"{signature.decode()!r}; mbstat needs double {name}(double, double)")
    return get_cython_function_address("scipy.special.cython_special", name)


#: Addresses of scipy's C ``chdtrc`` (upper tail) and ``chdtr`` (lower tail), passed to
#: the compiled functions as one argument.
CHI2 = (_cython_special_address("chdtrc"), _cython_special_address("chdtr"))


@intrinsic
def _call_special(typingctx, address, df, x):  # pragma: no cover - compiled
    """Call the Cython C function ``double f(double, double, int)`` at ``address`` (an
    argument, not a global, so that the callers stay cacheable)."""

    def codegen(context, builder, signature, args):
        double = ir.DoubleType()
        fnty = ir.FunctionType(double, [double, double, ir.IntType(32)])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, [args[1], args[2], ir.Constant(ir.IntType(32), 0)])

    return types.float64(types.intp, types.float64, types.float64), codegen


@njit(cache=True, nogil=True)
def _sf_logsf(df, x, chi2):  # pragma: no cover - compiled
    """The chi-square p-value and its log: log1p(-cdf) above 0.5 (exact near 1), log(p)
    down to 1e-260, below that the continued fraction of Q(df/2, x/2) in log space
    (finite where p underflows). ``chi2``: the addresses :data:`CHI2`."""
    p = _call_special(chi2[0], df, x)
    if p > 0.5:
        return p, math.log1p(-_call_special(chi2[1], df, x))
    if p >= 1e-260:
        return p, math.log(p)
    if p >= 0.0:
        return p, _log_q(0.5 * df, 0.5 * x)
    return p, p  # NaN


@njit(cache=True, nogil=True)
def sf_logsf_many(df, x, chi2):  # pragma: no cover - compiled
    """p-values and their logs of the statistics ``x`` (1-D) with ``df`` degrees of freedom."""
    p = np.empty(x.shape[0])
    log_p = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        p[i], log_p[i] = _sf_logsf(df[i], x[i], chi2)
    return p, log_p



@njit(cache=True, nogil=True)
def log_gammaincc(a, x, out):  # pragma: no cover - compiled
    """out[i] = log Q(a[i], x[i]), the regularized upper incomplete gamma function, from its
    continued fraction (modified Lentz); accurate for x > a + 1 however small Q is."""
    for i in range(a.shape[0]):
        out[i] = _log_q(a[i], x[i])


@njit(cache=True, nogil=True)
def _log_q(ai, xi):  # pragma: no cover - compiled
    """log Q(ai, xi) by the modified Lentz continued fraction (xi > ai + 1)."""
    tiny = 1e-300
    b = xi + 1.0 - ai
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for k in range(1, 301):
        an = -k * (k - ai)
        b += 2.0
        d = an * d + b
        if abs(d) < tiny:
            d = tiny
        c = b + an / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return -xi + ai * math.log(xi) - math.lgamma(ai) + math.log(h)


def chi2_logsf(x, df):
    """Natural log of the chi-square survival function, accurate in the far tail.

    ``scipy.stats.chi2.logsf`` is ``log(sf)`` and returns -inf once the
    p-value underflows (around x = 1500 for small df); there we evaluate
    log Q(df/2, x/2) from the continued fraction of the upper incomplete
    gamma function (modified Lentz), which is finite for any x.
    """
    return chi2_sf_logsf(x, df)[1]


def chi2_sf_logsf(x, df):
    """The chi-square p-value and its accurate natural log (see :func:`chi2_logsf`).

    p is scipy's ``chdtrc`` (its C function, called from compiled code); log p is
    ``log(p)`` in the middle, ``log1p(-chdtr)`` where p > 0.5 (exact near 1), and the
    continued fraction of Q(df/2, x/2) in log space where p < 1e-260 (p may be 0
    there). One compiled pass.
    """
    x = np.asarray(x, dtype=np.float64)
    df = np.asarray(df, dtype=np.float64)
    if x.ndim == 1 and x.shape == df.shape:  # the engine's case needs no reshaping
        return sf_logsf_many(df, x, CHI2)
    shape = np.broadcast_shapes(x.shape, df.shape)
    x, df = (np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in (x, df))
    return tuple(a.reshape(shape)[()] for a in sf_logsf_many(df, x, CHI2))
