"""The discrete Bayesian network: structure queries, d-separation, forward sampling.

A :class:`BayesianNetwork` holds a DAG over named discrete variables and one
conditional probability table (CPT) per node. It answers structural queries
(parents, children, spouses, Markov blankets, d-separation) and draws i.i.d.
samples by vectorized forward (ancestral) sampling.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pandas as pd

from .._validation import check_int, check_seed
from .dag import DSeparator, _is_single

__all__ = ["BayesianNetwork", "ROW_SUM_TOL"]

#: Largest deviation of a CPT row sum from 1 accepted as is.
ROW_SUM_TOL = 1e-6


@dataclass(frozen=True, slots=True, eq=False)
class BayesianNetwork:
    """A discrete Bayesian network.

    Parameters
    ----------
    name : str
    nodes : tuple of str
        The variables, in a topological order (parents before children).
    parents : Mapping of str to tuple of str
        The parents of each node; their order fixes the CPT axes.
    levels : Mapping of str to tuple of str
        The states of each node.
    cpts : Mapping of str to ndarray
        ``cpts[v]`` has shape ``(*parent_cards, card)`` with the parent axes
        in the order of ``parents[v]``; every row (last axis) sums to 1.

    Notes
    -----
    All inputs are copied; the stored mappings are read-only views and the
    CPT arrays are read-only. Equality compares structure, levels and CPTs.
    """

    name: str
    nodes: tuple
    parents: Mapping
    levels: Mapping
    cpts: Mapping = field(repr=False)
    _children: Mapping = field(init=False, repr=False, compare=False)
    _dsep: DSeparator = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        setattr_ = object.__setattr__
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got {type(self.name).__name__}")
        if _is_single(self.nodes):
            raise TypeError(f"nodes must be a sequence of str; got {type(self.nodes).__name__}")
        nodes = tuple(self.nodes)
        for v in nodes:
            if not isinstance(v, str):
                raise TypeError(f"nodes must be strings; got {type(v).__name__} {v!r}")
        if len(set(nodes)) != len(nodes):
            dup = sorted({v for v in nodes if nodes.count(v) > 1})
            raise ValueError(f"nodes must be unique; repeated: {dup}")
        for param, mapping in (("parents", self.parents), ("levels", self.levels),
                               ("cpts", self.cpts)):
            if not isinstance(mapping, Mapping):
                raise TypeError(f"{param} must be a mapping; got {type(mapping).__name__}")
            extra = set(mapping) - set(nodes)
            if extra:
                raise ValueError(f"{param} has entries for unknown nodes {sorted(map(str, extra))}")
        pos = {v: i for i, v in enumerate(nodes)}
        parents, levels, cpts = {}, {}, {}
        for v in nodes:
            ps = self.parents.get(v, ())
            ps = (ps,) if _is_single(ps) else tuple(ps)
            for p in ps:
                if p not in pos:
                    raise ValueError(f"parents[{v!r}]: unknown node {p!r}")
                if pos[p] >= pos[v]:
                    raise ValueError(
                        f"nodes must be in topological order: parent {p!r} of {v!r} "
                        "comes after it (or is the node itself)"
                    )
            if len(set(ps)) != len(ps):
                raise ValueError(f"parents[{v!r}] repeats a parent: {list(ps)}")
            parents[v] = ps
            if v not in self.levels:
                raise ValueError(f"levels: missing the states of node {v!r}")
            lv = self.levels[v]
            lv = (lv,) if _is_single(lv) else tuple(lv)
            if not lv or not all(isinstance(s, str) for s in lv):
                raise ValueError(f"levels[{v!r}] must be a non-empty sequence of str; got {lv!r}")
            if len(set(lv)) != len(lv):
                raise ValueError(f"levels[{v!r}] repeats a state: {list(lv)}")
            levels[v] = lv
        for v in nodes:
            if v not in self.cpts:
                raise ValueError(f"cpts: missing the table of node {v!r}")
            shape = tuple(len(levels[p]) for p in parents[v]) + (len(levels[v]),)
            try:
                cpt = np.array(self.cpts[v], dtype=np.float64, copy=True)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"cpts[{v!r}] is not a numeric array: {exc}") from None
            if cpt.shape != shape:
                raise ValueError(
                    f"cpts[{v!r}] must have shape {shape} (parent cardinalities, then the "
                    f"node's); got {cpt.shape}"
                )
            if not np.isfinite(cpt).all() or (cpt < 0).any():
                raise ValueError(f"cpts[{v!r}] must hold finite non-negative probabilities")
            dev = np.abs(cpt.sum(axis=-1) - 1.0)
            if dev.size and dev.max() > ROW_SUM_TOL:
                raise ValueError(
                    f"cpts[{v!r}]: rows must sum to 1; the worst sums to "
                    f"{1.0 + float(dev.max()):.9g} or {1.0 - float(dev.max()):.9g}"
                )
            cpt.flags.writeable = False
            cpts[v] = cpt
        children = {v: [] for v in nodes}
        for v in nodes:
            for p in parents[v]:
                children[p].append(v)
        setattr_(self, "nodes", nodes)
        setattr_(self, "parents", MappingProxyType(parents))
        setattr_(self, "levels", MappingProxyType(levels))
        setattr_(self, "cpts", MappingProxyType(cpts))
        setattr_(self, "_children", MappingProxyType({v: tuple(c) for v, c in children.items()}))
        setattr_(self, "_dsep", DSeparator(parents))

    # -- dunder ---------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<BayesianNetwork {self.name}: {len(self.nodes)} nodes, {self.n_arcs} arcs>"

    def __eq__(self, other):
        if not isinstance(other, BayesianNetwork):
            return NotImplemented
        return (
            self.name == other.name
            and self.nodes == other.nodes
            and dict(self.parents) == dict(other.parents)
            and dict(self.levels) == dict(other.levels)
            and all(np.array_equal(self.cpts[v], other.cpts[v]) for v in self.nodes)
        )

    def __hash__(self):
        return hash((self.name, self.nodes, tuple(self.parents.items())))

    def __reduce__(self):
        # mappingproxy objects cannot be pickled: rebuild from plain dicts.
        return (
            BayesianNetwork,
            (self.name, self.nodes, dict(self.parents), dict(self.levels), dict(self.cpts)),
        )

    def __contains__(self, node) -> bool:
        return node in self.parents

    # -- structure ------------------------------------------------------------

    def _check(self, node, param: str = "node") -> str:
        if not isinstance(node, Hashable) or node not in self.parents:
            raise ValueError(f"{param}: {node!r} is not a node of network {self.name!r}")
        return node

    @property
    def edges(self) -> tuple:
        """The arcs as ``(parent, child)`` pairs, grouped by child in node order."""
        return tuple((p, v) for v in self.nodes for p in self.parents[v])

    @property
    def n_arcs(self) -> int:
        """Number of arcs."""
        return sum(len(ps) for ps in self.parents.values())

    @property
    def cardinalities(self) -> dict:
        """Number of states of each node."""
        return {v: len(self.levels[v]) for v in self.nodes}

    @property
    def n_parameters(self) -> int:
        """Number of free parameters, ``sum((card - 1) * n_parent_configs)``."""
        return sum(
            (cpt.shape[-1] - 1) * (cpt.size // cpt.shape[-1]) for cpt in self.cpts.values()
        )

    def children(self, node: str) -> tuple:
        """The children of ``node``, in node order."""
        return self._children[self._check(node)]

    def spouses(self, node: str) -> frozenset:
        """The other parents of the children of ``node``."""
        self._check(node)
        return frozenset(p for c in self._children[node] for p in self.parents[c]) - {node}

    def parents_children(self, node: str) -> frozenset:
        """The parents and children of ``node`` (its neighbours in the DAG)."""
        self._check(node)
        return frozenset(self.parents[node]) | frozenset(self._children[node])

    def markov_blanket(self, node: str) -> frozenset:
        """The Markov blanket of ``node``: parents, children and spouses.

        In a faithful network this is the unique Markov boundary of ``node``.
        """
        return self.parents_children(node) | self.spouses(node)

    def markov_blankets(self) -> dict:
        """The Markov blanket of every node, in node order."""
        return {v: self.markov_blanket(v) for v in self.nodes}

    def d_separated(self, x, y, z=()) -> bool:
        """Whether ``x`` and ``y`` are d-separated given ``z``.

        Parameters
        ----------
        x, y : str or iterable of str
        z : str or iterable of str, optional
            The conditioning set (default empty).

        Returns
        -------
        bool

        See Also
        --------
        d_separated : the same test on a bare DAG.
        """
        return self._dsep.d_separated(x, y, z)

    # -- sampling ---------------------------------------------------------------

    def sample(self, n: int, seed=None) -> pd.DataFrame:
        """Draw ``n`` i.i.d. rows by forward sampling.

        Parameters
        ----------
        n : int
            Number of rows (>= 0).
        seed : None, int or numpy.random.Generator
            Seed of :func:`numpy.random.default_rng`; equal seeds give equal
            samples.

        Returns
        -------
        DataFrame
            One categorical column per node, in ``nodes`` order, whose
            categories are all the declared levels (even unused ones).

        Notes
        -----
        Nodes are drawn in topological order. For each node the parent
        configuration of every row is a mixed-radix code (first parent most
        significant, matching the CPT's C order); the value is then drawn by
        inverse CDF, comparing one uniform per row with the cumulative CPT row
        of that configuration. There is no loop over rows.
        """
        n = check_int("n", n, low=0)
        rng = check_seed(seed)
        codes: dict = {}
        for v in self.nodes:
            cpt = self.cpts[v]
            card = cpt.shape[-1]
            cum = np.cumsum(cpt.reshape(-1, card), axis=1)
            # Exact 1 at the end of every row (and on a tail of zero-probability
            # states), so each uniform in [0, 1) falls in a state of positive mass.
            cum /= cum[:, -1:]
            config = np.zeros(n, dtype=np.int64)
            for p in self.parents[v]:
                config *= len(self.levels[p])
                config += codes[p]
            u = rng.random(n)
            codes[v] = _inverse_cdf(cum, config, u, card)
        return pd.DataFrame(
            {
                v: pd.Categorical.from_codes(codes[v], categories=list(self.levels[v]))
                for v in self.nodes
            },
            columns=list(self.nodes),
        )


def _inverse_cdf(cum: np.ndarray, config: np.ndarray, u: np.ndarray, card: int) -> np.ndarray:
    """State index per row: number of cumulative probabilities <= u."""
    dtype = np.int8 if card <= 127 else np.int16 if card <= 32767 else np.int32
    out = np.empty(len(u), dtype=dtype)
    step = max(1, (1 << 21) // card)  # bounds the temporary (rows x card) array
    for start in range(0, len(u), step):
        sl = slice(start, start + step)
        out[sl] = (cum[config[sl]] <= u[sl, None]).sum(axis=1)
    return out
