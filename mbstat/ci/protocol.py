"""The protocol every conditional-independence test follows (:class:`CITest`)."""
from __future__ import annotations

import numpy as np

from .result import NOTES

__all__ = ["CITest"]


class CITest:
    """Protocol of a conditional-independence test.

    Subclasses set ``name``, ``method`` (the htest title), ``statistic_name``
    and ``kind`` ("discrete", "continuous", "mixed" or "oracle"), check their arguments in
    ``__init__`` and implement :meth:`batch`, which returns one results table. The engine
    calls ``batch`` with column positions only; a single result is a row of a batch.
    """

    name = "test"
    method = "conditional independence test"
    statistic_name = "statistic"
    kind = "discrete"
    joint_x = True  # accepts a set of variables as x
    unknown_message = "the oracle has no variables"  # oracles: what check() says

    def check(self, tester, columns) -> None:
        """Raise when the data cannot be tested: continuous columns for a discrete test,
        variables that an oracle does not know (its ``nodes``)."""
        if self.kind == "discrete":
            tester.dataset.require_discrete(columns, self.name)
        elif self.kind == "oracle":
            names, known = tester.dataset.names, set(self.nodes)
            unknown = [names[j] for j in columns if names[j] not in known]
            if unknown:
                raise ValueError(f"{self.unknown_message} {unknown}")

    def batch(self, tester, xs, y, z) -> np.ndarray:
        """Test each x in ``xs`` (tuples of column positions) against y given z.

        Returns the results table: a structured array of one row per x with the float
        columns :data:`FIELDS` and then :attr:`extra_columns` (:func:`results_table` makes one;
        the ``calibration`` column holds codes of :data:`CALIBRATIONS`).
        """
        raise NotImplementedError

    def least_pvalue(self, alpha: float) -> float:
        """The smallest p-value the test can give at the tester's level ``alpha`` (0: no
        floor above rounding; a Monte Carlo test's 1 / (B + 1))."""
        return 0.0

    def floor_advice(self, level: float) -> str:
        """How to let the test reach p-values of ``level`` (see :meth:`least_pvalue`)."""
        return "choose a test whose p-values reach it"

    def max_conditioning(self, n: int):
        """The most variables the test can condition on with ``n`` rows, or None (no
        limit): the searches stop growing there (their ``max_sx``) instead of failing."""
        return None

    def served(self, level: float):
        """A copy of this test whose p-values reach ``level`` where the test can adapt
        itself (a sequential test's early stop), else None."""
        return None

    #: Columns a test adds after :data:`FIELDS` (e.g. PPI's ``increase``).
    extra_columns = ()
    #: Whether x and y play the same part (then a test of y against x is a cache hit).
    symmetric = True
    #: The htest note of each calibration code (see :data:`NOTES`).
    notes = NOTES
