"""Distribution tails accurate where the p-value underflows: the chi-square law's (scipy's
C functions called from compiled code, and the continued fraction of the upper incomplete
gamma function) and the F law's (scipy's ``betainc``, and the continued fraction of the
incomplete beta function). Both continued fractions are evaluated in log space by one
modified Lentz step (:func:`_lentz`).

Shared by every family of tests (contingency tables, the likelihood-ratio tests of the
continuous and mixed family, reg-lr's F test, the kernel test's Satterthwaite-Welch
reference).
"""
from __future__ import annotations

import ctypes
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import get_cython_function_address, intrinsic
from scipy import special

__all__ = ["CHI2", "chi2_logsf", "chi2_sf_logsf", "f_sf_logsf", "log_gammaincc", "sf_logsf_many"]


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
def _lentz(an, bn, c, d):  # pragma: no cover - compiled
    """One term of a continued fraction ``b0 + a1 / (b1 + a2 / (b2 + ...))`` by the
    modified Lentz method (Thompson & Barnett 1986, J. Comput. Phys. 64:490; Numerical
    Recipes 3rd ed., section 5.2): from the partial numerator ``an``, denominator ``bn`` and
    the running (c, d), the new (c, d) and the factor c d of the convergent (pivots below
    1e-300 in absolute value clamped to 1e-300). Serves the incomplete gamma function's
    fraction (:func:`_log_q`) and the incomplete beta function's (:func:`_log_betainc_cf`)."""
    tiny = 1e-300
    d = bn + an * d
    d = 1.0 / (tiny if abs(d) < tiny else d)
    c = bn + an / c
    c = tiny if abs(c) < tiny else c
    return c, d, c * d


@njit(cache=True, nogil=True)
def _log_q(ai, xi):  # pragma: no cover - compiled
    """log Q(ai, xi), the regularized upper incomplete gamma function, from its continued
    fraction ``1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))`` (Numerical Recipes 3rd ed.,
    eq. 6.2.7) by :func:`_lentz`, in log space: finite where Q underflows (xi > ai + 1)."""
    b = xi + 1.0 - ai
    c = 1.0 / 1e-300
    d = 1.0 / b
    h = d
    for k in range(1, 301):
        b += 2.0
        c, d, delta = _lentz(-k * (k - ai), b, c, d)
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return -xi + ai * math.log(xi) - math.lgamma(ai) + math.log(h)


@njit(cache=True, nogil=True)
def _log_betainc_cf(a, b, x):  # pragma: no cover - compiled
    """log I_x(a, b), the regularized incomplete beta function, from its continued fraction
    (Numerical Recipes 3rd ed., eq. 6.4.5) by :func:`_lentz`, in log space: finite where
    I_x underflows. Converges fast for x < (a + 1) / (a + b + 2), where it is used."""
    c, d, h = _lentz(-(a + b) * x / (a + 1.0), 1.0, 1e300, 1.0)  # c = 1, d = 1 / (1 + aa)
    for m in range(1, 10001):
        c, d, f = _lentz(m * (b - m) * x / ((a - 1.0 + 2.0 * m) * (a + 2.0 * m)), 1.0, c, d)
        h *= f
        c, d, f = _lentz(-(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 1.0 + 2.0 * m)),
                         1.0, c, d)
        h *= f
        if abs(f - 1.0) < 1e-15:
            break
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return a * math.log(x) + b * math.log1p(-x) - lbeta - math.log(a) + math.log(h)


@njit(cache=True, nogil=True)
def _log_betainc_at(a, b, x, out, idx):  # pragma: no cover - compiled
    """out[i] = log I_x[i](a[i], b[i]) for i in ``idx`` (:func:`_log_betainc_cf`)."""
    for i in idx:
        out[i] = _log_betainc_cf(a[i], b[i], x[i])


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


def f_sf_logsf(left, explained, df1, df2):
    """The F test's p-value and its accurate natural log from the residual sums of squares.

    Parameters
    ----------
    left, explained : ndarray
        rss1 / rss0 and (rss0 - rss1) / rss0 of the full and the null model, each computed
        directly (not as 1 minus the other), so both tails keep their digits.
    df1, df2 : ndarray
        The columns the full model adds and its residual degrees of freedom (> 0).

    Returns
    -------
    (p, log p)
        p = P(F(df1, df2) >= F) with F = (explained / df1) / (left / df2), i.e. the
        regularized incomplete beta I_left(df2 / 2, df1 / 2) (scipy's ``fdtrc`` without
        forming F); log p is log1p(-I_explained(df1 / 2, df2 / 2)) above 0.5, log(p) down to
        1e-260 and, below, the continued fraction of I in log space (finite where p underflows).
    """
    left, explained, df1, df2 = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64)
                                                     for a in (left, explained, df1, df2)))
    a, b = 0.5 * df2, 0.5 * df1
    p = special.betainc(a, b, left)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(p > 0.5, np.log1p(-special.betainc(b, a, explained)), np.log(p))
    tiny = np.flatnonzero((p < 1e-260) & (left > 0))
    if len(tiny):
        out = np.array(log_p, dtype=np.float64).reshape(-1)
        _log_betainc_at(*(np.ascontiguousarray(c).reshape(-1) for c in (a, b, left)), out,
                        tiny)
        log_p = out.reshape(p.shape)
    return p[()], log_p[()]
