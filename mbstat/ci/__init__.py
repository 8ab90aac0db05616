"""Conditional-independence tests: one interface, batched, CPU or GPU.

>>> import mbstat
>>> res = mbstat.ci_test(data, "HR", "CO", z=["HRBP"], test="g2")
>>> print(res)          # prints like R's htest
"""
from __future__ import annotations

from ..data import used_columns
from .chi2 import chi2_logsf
from .continuous.gaussian import FisherZ
from .engine import CITester
from .log import empty_log
from .models.crt import CRTResult, CRTTest, crt_test
from .models.loco import LOCOResult, LOCOTest, loco_test
from .models.ppi import PPIResult, PPITest, ppi_test
from .oracles.dseparation import DSeparationOracle
from .oracles.exact import ExactOracle
from .protocol import CITest
from .registry import TESTS, make_test, tests_table
from .result import CALIBRATIONS, FIELDS, CIBatch, CIResult, decide, format_pvalue, results_table
from .tables.contingency import ContingencyTest, PermutationTest

__all__ = [
    "CALIBRATIONS", "CIBatch", "CIResult", "CITest", "CITester", "ContingencyTest",
    "DSeparationOracle", "ExactOracle", "FIELDS", "FisherZ", "PPIResult", "PPITest",
    "PermutationTest", "TESTS", "chi2_logsf", "ci_test", "ci_test_batch", "cond_mutual_info",
    "decide", "empty_log", "format_pvalue", "make_test", "ppi_test", "results_table",
    "CRTResult", "CRTTest", "crt_test", "LOCOResult", "LOCOTest", "loco_test",
    "tests_table",
]


def ci_test(data, x, y, z=(), test="auto", *, alpha=0.05, backend=None, discretize=None,
            na="raise", **test_args) -> CIResult:
    """Test whether x is independent of y given z.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
    x : variable or set of variables
        Name or position; a list of several forms one joint variable.
    y : variable
    z : variables, optional
        Conditioning set.
    test : str
        One of :data:`TESTS` (see :func:`tests_table`): "auto" (default: "g2" on
        discrete data, "fisher_z" on continuous, "mi-cg" on mixed), "g2", "g2-adf", "x2",
        "x2-adf", "sp-g2", "sp-x2", "mc-g2", "mc-x2", "fisher_z", "spearman",
        "normal-scores", "rcot", "mi-cg", "reg-lr", "crt", "loco", "ppi", "oracle", "exact".
    alpha : float
        Level of the decision reported by ``result.independent``.
    backend : {"auto", "cpu", "gpu"}, optional
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins.
    na : {"raise", "drop", "pairwise"}
        Missing values: an error, rows dropped (incomplete in any column of the data), or
        test-wise deletion (the rows complete for x, y and z; ``result.n`` says how many).
        Test-wise deletion is consistent when values are missing completely at random
        (MCAR), not under MAR or MNAR. A DataFrame is encoded only in the test's columns.
    **test_args
        Arguments of the chosen test (``calibration``, ``B``, ``seed``, ``min_per_cell``,
        ``dag``, the PPI settings, ...: see :func:`tests_table`).

    Returns
    -------
    CIResult
        ``result.calibration`` says how the p-value was obtained ("asymptotic",
        "semiparametric", "permutation", "exact", "skipped" or "oracle").
    """
    data, (x, y, z) = used_columns(data, (x, y, z), na, discretize)
    tester = CITester(data, test, alpha=alpha, backend=backend, discretize=discretize,
                      na=na, **test_args)
    return tester.test(x, y, z)


def ci_test_batch(data, xs, y, z=(), test="auto", *, alpha=0.05, backend=None,
                  discretize=None, na="raise", **test_args) -> CIBatch:
    """Test each x in ``xs`` against y given z in one pass over the data (arguments as
    :func:`ci_test`; under ``na="pairwise"`` each x has its own rows, ``batch.n``)."""
    if isinstance(xs, str) or not hasattr(xs, "__iter__"):
        raise TypeError("xs must be a list of variables (or of variable sets)")
    xs = list(xs)
    if not xs:
        raise ValueError("xs must name at least one candidate variable")
    data, (xs, y, z) = used_columns(data, (xs, y, z), na, discretize, batch=True)
    tester = CITester(data, test, alpha=alpha, backend=backend, discretize=discretize,
                      na=na, **test_args)
    return tester.test_many(xs, y, z)


def cond_mutual_info(data, x, y, z=(), *, backend=None) -> float:
    """Conditional mutual information I(x; y | z) in nats (plug-in estimate)."""
    return ci_test(data, x, y, z, "g2", backend=backend).mi
