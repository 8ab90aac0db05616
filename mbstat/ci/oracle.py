"""An oracle CI test that answers from d-separation in a known DAG.

With a perfect oracle the Markov-blanket algorithms are proven to return the
true blanket; the tests use this to check them on many random DAGs.
"""
from __future__ import annotations

import numpy as np

from .base import CITest

__all__ = ["DSeparationOracle"]


class DSeparationOracle(CITest):
    """Independent (p = 1) when x and y are d-separated by z in ``dag``, else p = 0.

    Parameters
    ----------
    dag : BayesianNetwork or mapping node -> parents
    """

    name = "oracle"
    method = "d-separation oracle"
    statistic_name = "dependent"
    kind = "oracle"

    def __init__(self, dag):
        from ..bn import BayesianNetwork

        if isinstance(dag, BayesianNetwork):
            parents = dict(dag.parents)
        elif hasattr(dag, "items"):
            parents = {str(k): tuple(v) for k, v in dag.items()}
        else:
            raise TypeError("dag must be a BayesianNetwork or a mapping node -> parents")
        self.parents = parents
        self.nodes = tuple(parents)

    def check(self, tester, columns) -> None:
        names = tester.dataset.names
        unknown = [names[j] for j in columns if names[j] not in self.parents]
        if unknown:
            raise ValueError(f"the oracle's DAG has no nodes {unknown}")

    def batch(self, tester, xs, y, z):
        from ..bn import d_separated

        names = tester.dataset.names
        zn = [names[j] for j in z]
        dep = np.array(
            [not d_separated(self.parents, [names[j] for j in xk], names[y], zn) for xk in xs],
            dtype=np.float64,
        )
        return {
            "statistic": dep,
            "df": np.full(len(xs), np.nan),
            "pvalue": 1.0 - dep,
            "log_pvalue": np.where(dep > 0, -np.inf, 0.0),
            "mi": dep,
        }
