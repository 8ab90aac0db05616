"""A d-separation oracle that knows which variables are functions of which.

Geiger, Verma & Pearl (1990), "Identifying independence in Bayesian networks",
Networks 20, 507-534: with functionally determined nodes, d-separation is replaced by
D-separation, d-separation given the closure of Z under the functional dependencies (a
node every value of which is fixed once Z is, is as good as in Z); and a variable in that
closure is independent of anything given Z (it is constant given Z). The test of a
learner of equivalent Markov boundaries (:func:`mbstat.ses`, :func:`mbstat.tie`): with a
copy or recoding X' of X, plain d-separation says X' is needed beside X; D-separation
says either one serves.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...bn import DSeparator
from ..result import ORACLE, results_table
from .dseparation import DSeparationOracle

__all__ = ["DeterministicOracle"]


class DeterministicOracle(DSeparationOracle):
    """D-separation in ``dag`` given the closure of z under the ``determined`` relations.

    x and y are independent given z (p = 1) when every variable of x, or y, is in the
    closure cl(z) (a function of z is constant given z), or when x and y are
    d-separated by cl(z); else dependent (p = 0). ``test_name`` stays "oracle".

    Parameters
    ----------
    dag : BayesianNetwork or mapping node -> parents
        The graph; a copy or function of a node is a child of what determines it.
    determined : mapping node -> iterable of sets of nodes
        Each node with the sets of nodes that determine it: ``{"A2": [["A"]], "A":
        [["A2"]]}`` says A2 is a relabeling of A (each is a function of the other).
    """

    method = "D-separation oracle (d-separation given the functionally determined closure)"

    def __init__(self, dag, determined: Mapping):
        super().__init__(dag)
        if not isinstance(determined, Mapping):
            raise TypeError("determined must be a mapping node -> sets of nodes that "
                            "determine it")
        known = set(self.nodes) | {p for ps in self.parents.values() for p in ps}
        rules = []
        for node, sets in determined.items():
            for s in sets:
                s = frozenset((s,) if isinstance(s, str) else s)
                unknown = sorted(map(str, ({node} | s) - known))
                if unknown:
                    raise ValueError(f"determined: {unknown} are not nodes of the DAG")
                if node in s or not s:
                    raise ValueError(f"determined: {node!r} needs a non-empty set of other "
                                     "nodes")
                rules.append((node, s))
        self.rules = tuple(rules)

    @classmethod
    def from_groups(cls, dag, groups) -> "DeterministicOracle":
        """The oracle of ``dag`` whose ``groups`` (iterables of nodes) are each a set of
        relabelings of one variable: every member determines every other."""
        determined: dict = {}
        for group in groups:
            group = list(group)
            for a in group:
                determined.setdefault(a, []).extend([b] for b in group if b != a)
        return cls(dag, determined)

    def closure(self, z) -> frozenset:
        """The nodes fixed once z is: z and, repeatedly, every node a rule determines."""
        cl = set(z)
        changed = True
        while changed:
            changed = False
            for node, s in self.rules:
                if node not in cl and s <= cl:
                    cl.add(node)
                    changed = True
        return frozenset(cl)

    def batch(self, tester, xs, y, z):
        if self._sep is None:
            self._sep = DSeparator(self.parents)
        names = tester.dataset.names
        cl = self.closure(names[j] for j in z)
        yname = names[y]
        if yname in cl:
            dep = np.zeros(len(xs))
        else:
            connected = set(self._sep.connected(yname, sorted(cl, key=self._sep._index.get)))
            dep = np.array([any(names[j] in connected for j in xk if names[j] not in cl)
                            for xk in xs], dtype=np.float64)
        return results_table(len(xs), statistic=dep, df=np.nan, pvalue=1.0 - dep,
                             log_pvalue=np.where(dep > 0, -np.inf, 0.0), mi=dep,
                             calibration=ORACLE)
