"""An oracle CI test that answers from d-separation in a known DAG.

With a perfect oracle the Markov-blanket algorithms are proven to return the
true blanket; the tests use this to check them on many random DAGs.
"""
from __future__ import annotations

import numpy as np

from ...bn import BayesianNetwork, DSeparator
from ..protocol import CITest
from ..result import ORACLE, results_table

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
    unknown_message = "the oracle's DAG has no nodes"

    def __init__(self, dag):
        if isinstance(dag, BayesianNetwork):
            parents = dict(dag.parents)
        elif hasattr(dag, "items"):
            parents = {str(k): tuple(v) for k, v in dag.items()}
        else:
            raise TypeError("dag must be a BayesianNetwork or a mapping node -> parents")
        self.parents = parents
        self.nodes = tuple(parents)
        self._sep = dag._dsep if isinstance(dag, BayesianNetwork) else None

    def batch(self, tester, xs, y, z):
        if self._sep is None:
            self._sep = DSeparator(self.parents)
        names = tester.dataset.names
        # one reachability pass from y answers every candidate of the batch
        connected = set(self._sep.connected(names[y], [names[j] for j in z]))
        dep = np.array([any(names[j] in connected for j in xk) for xk in xs], dtype=np.float64)
        return results_table(len(xs), statistic=dep, df=np.nan, pvalue=1.0 - dep,
                             log_pvalue=np.where(dep > 0, -np.inf, 0.0), mi=dep,
                             calibration=ORACLE)
