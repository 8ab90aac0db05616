"""An oracle CI test that answers from an exact joint probability table.

Where :class:`~mbstat.ci.oracles.dseparation.DSeparationOracle` answers from a graph, this
oracle answers from a distribution: it computes the conditional mutual
information ``I(X; Y | Z)`` exactly from the full joint table and declares
dependence when it exceeds a tolerance. It needs no faithful graph, so it
can check algorithms on distributions no DAG represents faithfully, such as
parity functions (Margaritis 2009, Section 5).
"""
from __future__ import annotations

import math

import numpy as np

from ..._validation import check_int, check_number
from ..protocol import CITest
from ..result import ORACLE, results_table

__all__ = ["ExactOracle", "parity_table"]

#: Largest joint table accepted (cells).
MAX_CELLS = 1 << 22


class ExactOracle(CITest):
    """Dependent (p = 0) when the exact ``I(X; Y | Z)`` exceeds ``tol``, else p = 1.

    Parameters
    ----------
    table : array_like
        Joint probabilities, one axis per variable (axis ``i`` has as many
        entries as variable ``i`` has states); non-negative, summing to 1.
    names : sequence of str, optional
        One name per axis (default ``"X1" .. "Xp"``).
    tol : float, default 1e-10
        Conditional mutual information (nats) above which the oracle
        declares dependence.

    Notes
    -----
    ``statistic`` and ``mi`` of a result are the exact conditional mutual
    information; ``df`` is NaN. Pass the oracle both as the data and as the
    test: ``gs_m(oracle, "X1", m=2, test=oracle)``.

    Examples
    --------
    >>> oracle = ExactOracle(parity_table(2, n_distractors=1), names=["Y", "A", "B", "D"])
    >>> round(oracle.cmi("Y", "A"), 12), oracle.cmi("Y", ["A", "B"]) > 0
    (0.0, True)
    """

    name = "exact"
    method = "exact conditional mutual information oracle"
    statistic_name = "I"
    kind = "oracle"
    unknown_message = "the oracle's table has no variables"
    joint_x = True

    def __init__(self, table, names=None, tol: float = 1e-10):
        p = np.array(table, dtype=np.float64, copy=True)
        if p.ndim < 2:
            raise ValueError(f"table must have one axis per variable (at least 2); got {p.ndim}")
        if p.size > MAX_CELLS:
            raise ValueError(f"table has {p.size} cells; at most {MAX_CELLS} are supported")
        if not np.isfinite(p).all() or (p < 0).any():
            raise ValueError("table must hold finite non-negative probabilities")
        total = p.sum()
        if abs(total - 1.0) > 1e-8:
            raise ValueError(f"table must sum to 1; it sums to {total:.12g}")
        p /= total
        p.flags.writeable = False
        if names is None:
            names = tuple(f"X{i + 1}" for i in range(p.ndim))
        else:
            names = tuple(names)
            if len(names) != p.ndim or not all(isinstance(v, str) for v in names):
                raise ValueError(f"names must be {p.ndim} strings, one per axis; got {names!r}")
            if len(set(names)) != len(names):
                raise ValueError("names must be unique")
        self.table = p
        self.nodes = names
        self.tol = check_number("tol", tol, low=0.0)
        self._axis = {v: i for i, v in enumerate(names)}

    def __repr__(self) -> str:
        return (f"<ExactOracle: {len(self.nodes)} variables, {self.table.size} cells, "
                f"tol={self.tol:g}>")

    @classmethod
    def from_network(cls, net, tol: float = 1e-10) -> ExactOracle:
        """The oracle of the joint distribution of a (small) BayesianNetwork."""
        nodes = list(net.nodes)
        size = math.prod(len(net.levels[v]) for v in nodes)
        if size > MAX_CELLS:
            raise ValueError(f"the joint table would have {size} cells; at most {MAX_CELLS}")
        if len(nodes) > 52:
            raise ValueError("from_network supports at most 52 variables (numpy.einsum)")
        operands = []
        for v in nodes:
            operands += [net.cpts[v], [nodes.index(u) for u in (*net.parents[v], v)]]
        joint = np.einsum(*operands, list(range(len(nodes))))
        return cls(joint, names=nodes, tol=tol)

    # ------------------------------------------------------------- queries
    def _axes(self, variables) -> tuple:
        if isinstance(variables, str):
            variables = (variables,)
        out = []
        for v in variables:
            if v not in self._axis:
                raise ValueError(f"unknown variable {v!r}; the table has {list(self.nodes)}")
            out.append(self._axis[v])
        return tuple(out)

    def cmi(self, x, y, z=()) -> float:
        """Exact ``I(x; y | z)`` in nats; x, y and z are names or lists of names."""
        xa, ya, za = self._axes(x), self._axes(y), self._axes(z)
        if set(xa) & set(ya) or set(xa) & set(za) or set(ya) & set(za):
            raise ValueError("x, y and z must be disjoint")
        return self._cmi(xa, ya, za)

    def _cmi(self, xa, ya, za) -> float:
        keep = (*xa, *ya, *za)
        drop = tuple(i for i in range(self.table.ndim) if i not in keep)
        marg = self.table.sum(axis=drop) if drop else self.table
        # the summed array keeps the remaining axes in increasing order
        order = sorted(keep)
        marg = np.transpose(marg, [order.index(a) for a in keep])
        shape = self.table.shape
        rx = math.prod(shape[a] for a in xa)
        ry = math.prod(shape[a] for a in ya)
        rz = math.prod(shape[a] for a in za)
        pxyz = marg.reshape(rx, ry, rz)
        pxz = pxyz.sum(axis=1, keepdims=True)
        pyz = pxyz.sum(axis=0, keepdims=True)
        pz = pyz.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(pxyz > 0, pxyz * np.log(pxyz * pz / (pxz * pyz)), 0.0)
        return max(float(terms.sum()), 0.0)

    # ------------------------------------------------------ CITest protocol
    def batch(self, tester, xs, y, z):
        names = tester.dataset.names
        ax = self._axis
        ya = (ax[names[y]],)
        za = tuple(ax[names[j]] for j in z)
        mi = np.array([self._cmi(tuple(ax[names[j]] for j in xk), ya, za) for xk in xs])
        dep = mi > self.tol
        return results_table(len(xs), statistic=mi, df=np.nan, pvalue=np.where(dep, 0.0, 1.0),
                             log_pvalue=np.where(dep, -np.inf, 0.0), mi=mi, calibration=ORACLE)


def parity_table(n_inputs: int, n_distractors: int = 0, noise: float = 0.1, bit_p: float = 0.5,
                 distractor_p=None) -> np.ndarray:
    """Exact joint table of a (near-)parity domain.

    Axis 0 is the target ``Y = X_1 xor ... xor X_k`` (``k = n_inputs``),
    inverted with probability ``noise``; axes ``1 .. k`` are the input bits,
    independent Bernoulli(``bit_p``); the last ``n_distractors`` axes are
    independent Bernoulli(``distractor_p``) bits (default 0.3, 0.35, ...).

    With ``bit_p = 0.5`` and ``0 < noise < 1/2``, ``Y`` is independent of
    every proper subset of the inputs (together with any distractors) and
    dependent on all of them jointly: its Markov boundary is all ``k``
    inputs, and only a search over sets of ``k`` variables can find it.

    Returns
    -------
    ndarray of shape (2,) * (1 + n_inputs + n_distractors)
    """

    k = check_int("n_inputs", n_inputs, low=1)
    d = check_int("n_distractors", n_distractors, low=0)
    noise = check_number("noise", noise, low=0.0, high=1.0)
    bit_p = check_number("bit_p", bit_p, low=0.0, high=1.0)
    if distractor_p is None:
        dis = 0.3 + 0.05 * np.arange(d)
    else:
        dis = np.broadcast_to(np.asarray(distractor_p, dtype=np.float64), (d,))
        if not ((dis >= 0) & (dis <= 1)).all():
            raise ValueError(f"distractor_p must lie in [0, 1]; got {distractor_p!r}")
    if 1 + k + d > 22:
        raise ValueError(f"a table of {1 + k + d} binary variables is too large (at most 22)")
    bits = np.indices((2,) * k).reshape(k, -1)  # (k, 2^k) all input configurations
    p_inputs = np.prod(np.where(bits == 1, bit_p, 1.0 - bit_p), axis=0)
    parity = bits.sum(axis=0) % 2
    joint = np.zeros((2, 2**k))
    joint[parity, np.arange(2**k)] = p_inputs * (1.0 - noise)
    joint[1 - parity, np.arange(2**k)] = p_inputs * noise
    joint = joint.reshape((2,) * (1 + k))
    for q in dis:
        joint = np.multiply.outer(joint, np.array([1.0 - q, q]))
    return joint
