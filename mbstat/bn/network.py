"""Discrete Bayesian networks: structure queries, d-separation, sampling, BIF.

A :class:`BayesianNetwork` holds a DAG over named discrete variables and one
conditional probability table (CPT) per node. It answers structural queries
(parents, children, spouses, Markov blankets, d-separation) and draws i.i.d.
samples by vectorized forward (ancestral) sampling. :func:`read_bif` parses
networks in the BIF interchange format used by the bnlearn repository;
:func:`from_edges` and :func:`random_dag` build networks with random CPTs.

d-separation is also available on a bare DAG, given as a mapping from each node
to its parents, through :func:`d_separated` and :class:`DSeparator`, so that
oracle conditional-independence tests can use it without CPTs.
"""
from __future__ import annotations

import gzip
import heapq
import numbers
import os
import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from .._validation import check_int, check_number, check_seed

__all__ = [
    "BayesianNetwork",
    "DSeparator",
    "blanket_scores",
    "d_separated",
    "from_edges",
    "random_dag",
    "read_bif",
]

#: Largest deviation of a CPT row sum from 1 accepted as is.
ROW_SUM_TOL = 1e-6
#: Largest deviation that :func:`read_bif` silently renormalizes.
RENORMALIZE_TOL = 1e-3


# ---------------------------------------------------------------------------
# d-separation on a bare DAG
# ---------------------------------------------------------------------------


def _iter_bits(mask: int):
    """Positions of the set bits of a non-negative int, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class DSeparator:
    """Compiled DAG answering d-separation queries quickly.

    The DAG is compiled once into bit masks (parents, children and ancestors
    of every node); each query then runs the reachability ("Bayes-ball")
    algorithm of Koller and Friedman (2009, Algorithm 3.1) on bit sets.

    Parameters
    ----------
    parents : Mapping
        Each node mapped to an iterable of its parents. Nodes that occur only
        as parents are added as root nodes. Node names may be any hashable.

    Raises
    ------
    ValueError
        If the graph has a self-loop or a directed cycle.

    See Also
    --------
    d_separated : one-off queries on a mapping or a network.
    """

    __slots__ = ("nodes", "_index", "_parents", "_children", "_ancestors")

    def __init__(self, parents: Mapping):
        if not isinstance(parents, Mapping):
            raise TypeError(
                f"parents must be a mapping from node to its parents; got {type(parents).__name__}"
            )
        pa = {}
        for node, ps in parents.items():
            ps = (ps,) if _is_single(ps) else tuple(ps)
            if node in ps:
                raise ValueError(f"parents: node {node!r} is its own parent (self-loop)")
            pa[node] = ps
        for ps in list(pa.values()):
            for p in ps:
                pa.setdefault(p, ())
        order = _topological_order(list(pa), pa, "parents")
        index = {node: i for i, node in enumerate(order)}
        par = [0] * len(order)
        ch = [0] * len(order)
        anc = [0] * len(order)
        for i, node in enumerate(order):
            a = 1 << i
            for p in pa[node]:
                j = index[p]
                par[i] |= 1 << j
                ch[j] |= 1 << i
                a |= anc[j]
            anc[i] = a
        self.nodes = tuple(order)
        self._index = index
        self._parents = tuple(par)
        self._children = tuple(ch)
        self._ancestors = tuple(anc)

    def __repr__(self) -> str:
        n_arcs = sum(m.bit_count() for m in self._parents)
        return f"<DSeparator: {len(self.nodes)} nodes, {n_arcs} arcs>"

    def _mask(self, nodes, param: str) -> int:
        index = self._index
        if nodes is None:
            return 0
        if _is_single(nodes) or (isinstance(nodes, Hashable) and nodes in index):
            nodes = (nodes,)
        mask = 0
        for v in nodes:
            try:
                mask |= 1 << index[v]
            except (KeyError, TypeError):
                raise ValueError(f"{param}: unknown node {v!r}") from None
        return mask

    def __call__(self, x, y, z=()) -> bool:
        return self.d_separated(x, y, z)

    def d_separated(self, x, y, z=()) -> bool:
        """Whether ``x`` and ``y`` are d-separated given ``z``.

        Parameters
        ----------
        x, y : node or iterable of nodes
        z : node or iterable of nodes, optional
            The conditioning set (default empty).

        Returns
        -------
        bool
            True when every trail between a node of ``x`` and a node of ``y``
            is blocked by ``z``. Empty ``x`` or ``y`` are trivially separated.

        Raises
        ------
        ValueError
            If a node is unknown or the three sets are not pairwise disjoint.
        """
        xm = self._mask(x, "x")
        ym = self._mask(y, "y")
        zm = self._mask(z, "z")
        if xm & ym or xm & zm or ym & zm:
            names = [self.nodes[i] for i in _iter_bits((xm & ym) | (xm & zm) | (ym & zm))]
            raise ValueError(f"x, y and z must be disjoint; they share {names}")
        if not xm or not ym:
            return True
        # Without z, x and y are d-connected iff they share an ancestor.
        if not zm:
            ax = ay = 0
            for i in _iter_bits(xm):
                ax |= self._ancestors[i]
            for i in _iter_bits(ym):
                ay |= self._ancestors[i]
            return not (ax & ay)
        return not self._reach(xm, zm, stop=ym) & ym

    def connected(self, y, z=()) -> tuple:
        """The nodes d-connected to ``y`` given ``z`` (one reachability pass).

        ``x`` is d-separated from ``y`` by ``z`` exactly when no node of ``x``
        is in the result: a whole batch of candidates costs one pass.

        Returns
        -------
        tuple of nodes, in the DAG's order, without ``y`` and ``z``.
        """
        ym = self._mask(y, "y")
        zm = self._mask(z, "z")
        if ym & zm:
            names = [self.nodes[i] for i in _iter_bits(ym & zm)]
            raise ValueError(f"y and z must be disjoint; they share {names}")
        reach = self._reach(ym, zm, stop=0) & ~ym & ~zm
        return tuple(self.nodes[i] for i in _iter_bits(reach))

    def _reach(self, start: int, zm: int, stop: int) -> int:
        """Mask of the nodes reachable from ``start`` by active trails given ``zm`` (z
        nodes included where a trail arrives); returns early once it meets ``stop``."""
        par, ch = self._parents, self._children
        # Nodes with a descendant in z (z included): colliders there are open.
        anc_z = 0
        for i in _iter_bits(zm):
            anc_z |= self._ancestors[i]
        free = ~zm
        up_seen = down_seen = 0
        up, down = start, 0  # frontiers: arrived from a child / from a parent
        while up or down:
            up_seen |= up
            down_seen |= down
            if (up | down) & stop:
                break
            new_up = new_down = 0
            for i in _iter_bits(up & free):  # trail may turn anywhere
                new_up |= par[i]
                new_down |= ch[i]
            for i in _iter_bits(down & free):  # chain continues downwards
                new_down |= ch[i]
            for i in _iter_bits(down & anc_z):  # open collider: back upwards
                new_up |= par[i]
            up = new_up & ~up_seen
            down = new_down & ~down_seen
        return up_seen | down_seen


def _is_single(obj) -> bool:
    """A string or a non-iterable object names a single node."""
    return isinstance(obj, (str, bytes)) or not isinstance(obj, Iterable)


@lru_cache(maxsize=64)
def _compiled(key: tuple) -> DSeparator:
    return DSeparator(dict(key))


def d_separated(dag, x, y, z=()) -> bool:
    """Whether ``x`` and ``y`` are d-separated given ``z`` in a DAG.

    Parameters
    ----------
    dag : Mapping, BayesianNetwork or DSeparator
        A mapping from each node to an iterable of its parents, or an object
        that already holds the DAG.
    x, y : node or iterable of nodes
    z : node or iterable of nodes, optional
        The conditioning set (default empty).

    Returns
    -------
    bool

    Notes
    -----
    Uses the reachability algorithm of Koller and Friedman (2009,
    Algorithm 3.1), linear in the size of the graph. The compiled form of a
    mapping is cached on its contents, so repeated queries on an unchanged
    mapping are cheap (cheapest when the parents are tuples); for many
    queries, :class:`DSeparator` avoids even the cache lookup.

    Examples
    --------
    >>> dag = {"a": (), "b": ("a",), "c": ("b",)}
    >>> d_separated(dag, "a", "c"), d_separated(dag, "a", "c", "b")
    (False, True)
    """
    if isinstance(dag, BayesianNetwork):
        return dag._dsep.d_separated(x, y, z)
    if isinstance(dag, DSeparator):
        return dag.d_separated(x, y, z)
    if not isinstance(dag, Mapping):
        raise TypeError(
            "dag must be a mapping from node to its parents, a BayesianNetwork or a "
            f"DSeparator; got {type(dag).__name__}"
        )
    try:  # fast path: hashable parent collections (tuples, frozensets)
        sep = _compiled(tuple(dag.items()))
    except TypeError:
        key = tuple((node, (ps,) if _is_single(ps) else tuple(ps)) for node, ps in dag.items())
        try:
            sep = _compiled(key)
        except TypeError:  # unhashable node names: compile without caching
            sep = DSeparator(dag)
    return sep.d_separated(x, y, z)


def blanket_scores(found, truth) -> dict:
    """How a learned Markov blanket compares with the true one.

    Parameters
    ----------
    found, truth : iterables of nodes
        The learned and the true blanket (e.g. ``result.blanket`` and
        ``net.markov_blanket(target)``).

    Returns
    -------
    dict
        ``precision`` and ``recall`` (1 for an empty ``found`` / ``truth``), their
        harmonic mean ``F1`` (0 when they are both 0), and the counts of false
        positives ``FP`` and false negatives ``FN``.

    Examples
    --------
    >>> round(blanket_scores(["a", "b", "x"], ["a", "b", "c", "d"])["F1"], 4)
    0.5714
    """
    for param, value in (("found", found), ("truth", truth)):
        if _is_single(value):
            raise TypeError(f"{param} must be an iterable of nodes; got {value!r}")
    found, truth = set(found), set(truth)
    tp = len(found & truth)
    precision = tp / len(found) if found else 1.0
    recall = tp / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "F1": f1,
            "FP": len(found - truth), "FN": len(truth - found)}


def _topological_order(nodes: list, parents: Mapping, param: str) -> list:
    """Kahn's algorithm, breaking ties by position in ``nodes`` (stable)."""
    pos = {node: i for i, node in enumerate(nodes)}
    missing = {node: len(parents[node]) for node in nodes}
    kids: dict = {node: [] for node in nodes}
    for node in nodes:
        for p in parents[node]:
            kids[p].append(node)
    heap = [pos[node] for node in nodes if missing[node] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        node = nodes[heapq.heappop(heap)]
        order.append(node)
        for c in kids[node]:
            missing[c] -= 1
            if missing[c] == 0:
                heapq.heappush(heap, pos[c])
    if len(order) < len(nodes):
        stuck = [node for node in nodes if missing[node] > 0]
        raise ValueError(f"{param}: the graph has a directed cycle through {stuck[:10]}")
    return order


# ---------------------------------------------------------------------------
# Bayesian network
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Random networks
# ---------------------------------------------------------------------------


def from_edges(edges, nodes=None, levels=2, seed=None, name: str = "random",
               alpha: float = 1.0) -> BayesianNetwork:
    """Build a network on a given DAG with random CPTs.

    Parameters
    ----------
    edges : iterable of (str, str)
        The arcs as ``(parent, child)`` pairs.
    nodes : iterable of str, optional
        All nodes, to include isolated ones and fix the tie-breaking order of
        the topological sort; default: nodes in order of first appearance in
        ``edges``.
    levels : int or Mapping, default 2
        Number of states of every node, or a mapping from node to a number of
        states or to a sequence of state names. Numbered states are named
        ``"0", "1", ...``.
    seed : None, int or numpy.random.Generator
    name : str, default "random"
    alpha : float, default 1.0
        Concentration of the symmetric Dirichlet each CPT row is drawn from
        (1 gives rows uniform on the simplex).

    Returns
    -------
    BayesianNetwork
        Nodes in a stable topological order; each node's parents in node order.

    Raises
    ------
    ValueError
        On a cycle, self-loop, repeated arc or node not in ``nodes``.
    """
    alpha = check_number("alpha", alpha, low=0.0, closed="neither")
    rng = check_seed(seed)
    edge_list = []
    for e in edges:
        if _is_single(e) or len(tuple(e)) != 2:
            raise ValueError(f"edges must hold (parent, child) pairs; got {e!r}")
        p, c = tuple(e)
        for v in (p, c):
            if not isinstance(v, str):
                raise TypeError(f"edges: node names must be str; got {type(v).__name__} {v!r}")
        if p == c:
            raise ValueError(f"edges: self-loop on {p!r}")
        edge_list.append((p, c))
    if len(set(edge_list)) != len(edge_list):
        dup = sorted({e for e in edge_list if edge_list.count(e) > 1})
        raise ValueError(f"edges: repeated arcs {dup}")
    if nodes is None:
        names = list(dict.fromkeys(v for e in edge_list for v in e))
    else:
        if _is_single(nodes):
            raise TypeError(f"nodes must be an iterable of str; got {type(nodes).__name__}")
        names = list(nodes)
        if len(set(names)) != len(names):
            raise ValueError("nodes must be unique")
        known = set(names)
        unknown = sorted({v for e in edge_list for v in e} - known)
        if unknown:
            raise ValueError(f"edges mention nodes not in nodes: {unknown}")
    parents = {v: [] for v in names}
    for p, c in edge_list:
        parents[c].append(p)
    order = _topological_order(names, parents, "edges")
    pos = {v: i for i, v in enumerate(order)}
    parents = {v: tuple(sorted(parents[v], key=pos.__getitem__)) for v in order}
    lv = _resolve_levels(levels, order)
    cpts = {}
    for v in order:
        shape = tuple(len(lv[p]) for p in parents[v]) + (len(lv[v]),)
        cpts[v] = rng.dirichlet(np.full(shape[-1], alpha), size=shape[:-1])
        # Dirichlet draws with small alpha can underflow to all zeros.
        cpts[v] = _fix_rows(cpts[v])
    return BayesianNetwork(name=name, nodes=tuple(order), parents=parents, levels=lv, cpts=cpts)


def _fix_rows(cpt: np.ndarray) -> np.ndarray:
    sums = cpt.sum(axis=-1, keepdims=True)
    bad = ~(sums > 0)
    cpt = np.where(bad, 1.0 / cpt.shape[-1], cpt)
    return cpt / cpt.sum(axis=-1, keepdims=True)


def _resolve_levels(levels, nodes) -> dict:
    def one(spec, param):
        if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
            k = check_int(param, spec, low=1)
            return tuple(str(i) for i in range(k))
        if _is_single(spec):
            raise TypeError(f"{param} must be an int or a sequence of state names; got {spec!r}")
        return tuple(str(s) for s in spec)

    if isinstance(levels, Mapping):
        missing = [v for v in nodes if v not in levels]
        if missing:
            raise ValueError(f"levels: missing entries for nodes {missing[:10]}")
        return {v: one(levels[v], f"levels[{v!r}]") for v in nodes}
    return {v: one(levels, "levels") for v in nodes}


def random_dag(n_nodes: int, edge_prob: float | None = None, max_parents: int | None = None,
               seed=None, *, levels=2, alpha: float = 1.0, name: str | None = None
               ) -> BayesianNetwork:
    """A Bayesian network with random structure and random CPTs.

    Parameters
    ----------
    n_nodes : int
        Number of nodes (>= 1), named ``"X1" .. "Xn"``.
    edge_prob : float, optional
        Probability of each arc ``i -> j`` between positions ``i < j`` of a
        random topological order. Default ``min(1, 2 / (n_nodes - 1))``
        (about ``n_nodes`` arcs in expectation) when ``max_parents`` is not
        given either.
    max_parents : int, optional
        Cap on the in-degree. Alone, each node draws its number of parents
        uniformly from ``0 .. min(max_parents, position)`` and picks them
        uniformly among earlier nodes; with ``edge_prob``, a node with more
        parents keeps a uniformly random subset of ``max_parents`` of them.
    seed : None, int or numpy.random.Generator
    levels : int or Mapping, default 2
        As in :func:`from_edges`.
    alpha : float, default 1.0
        Dirichlet concentration of the CPT rows.
    name : str, optional
        Default ``"random_dag_<n_nodes>"``.

    Returns
    -------
    BayesianNetwork
        The names are assigned by a random permutation, so that the
        topological order cannot be read off the names.
    """
    n = check_int("n_nodes", n_nodes, low=1)
    edge_prob = check_number("edge_prob", edge_prob, low=0.0, high=1.0, allow_none=True)
    max_parents = check_int("max_parents", max_parents, low=0, allow_none=True)
    rng = check_seed(seed)
    if edge_prob is None and max_parents is None:
        edge_prob = 1.0 if n <= 2 else min(1.0, 2.0 / (n - 1))
    names = [f"X{i + 1}" for i in rng.permutation(n)]  # names[k]: node at position k
    edges = []
    if edge_prob is not None:
        adj = np.triu(rng.random((n, n)) < edge_prob, k=1)  # adj[i, j]: i -> j
        for j in range(n):
            ps = np.flatnonzero(adj[:, j])
            if max_parents is not None and len(ps) > max_parents:
                ps = np.sort(rng.choice(ps, size=max_parents, replace=False))
            edges.extend((names[i], names[j]) for i in ps)
    else:
        for j in range(1, n):
            k = int(rng.integers(0, min(max_parents, j) + 1))
            ps = np.sort(rng.choice(j, size=k, replace=False))
            edges.extend((names[i], names[j]) for i in ps)
    if name is None:
        name = f"random_dag_{n}"
    return from_edges(edges, nodes=names, levels=levels, seed=rng, name=name, alpha=alpha)


# ---------------------------------------------------------------------------
# BIF reader
# ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r'"(?P<quoted>[^"]*)"'
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<punct>[{}()\[\];,|])"
    r"|(?P<word>(?:[^\s{}()\[\];,|\"/]|/(?![/*]))+)"
    r"|(?P<space>\s+)"
    r"|(?P<bad>.)",
    re.DOTALL,
)


class _Tokens:
    """Token stream over BIF text that knows line numbers for messages."""

    def __init__(self, text: str, source: str):
        self.text = text
        self.source = source
        toks = []
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup
            if kind in ("comment", "space"):
                continue
            if kind == "bad":
                if m.group().startswith("/*"):
                    raise self._error(m.start(), "unterminated /* comment")
                raise self._error(m.start(), f"unexpected character {m.group()!r}")
            value = m.group("quoted") if kind == "quoted" else m.group()
            toks.append((value, m.start(), kind == "punct"))
        self.toks = toks
        self.i = 0

    def _error(self, pos: int, msg: str) -> ValueError:
        line = self.text.count("\n", 0, pos) + 1
        return ValueError(f"{self.source}, line {line}: {msg}")

    def error(self, msg: str) -> ValueError:
        pos = self.toks[self.i][1] if self.i < len(self.toks) else len(self.text)
        return self._error(pos, msg)

    def peek(self):
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def peek_punct(self):
        """The next token if it is (unquoted) punctuation, else None."""
        if self.i < len(self.toks) and self.toks[self.i][2]:
            return self.toks[self.i][0]
        return None

    def next(self, what: str = "a token"):
        if self.i >= len(self.toks):
            raise self.error(f"unexpected end of file, expected {what}")
        tok = self.toks[self.i][0]
        self.i += 1
        return tok

    def name(self, what: str) -> str:
        if self.i >= len(self.toks):
            raise self.error(f"unexpected end of file, expected {what}")
        tok, _, punct = self.toks[self.i]
        if punct:
            raise self.error(f"expected {what}, found {tok!r}")
        self.i += 1
        return tok

    def expect(self, punct: str):
        if self.peek_punct() != punct:
            found = self.peek()
            found = "end of file" if found is None else repr(found)
            raise self.error(f"expected {punct!r}, found {found}")
        self.i += 1

    def skip_statement(self):
        """Skip to just after the next ';' (e.g. a property)."""
        while True:
            if self.next("';'") == ";" and self.toks[self.i - 1][2]:
                return

    def skip_block(self):
        """Skip a balanced { ... } block whose '{' is next."""
        self.expect("{")
        depth = 1
        while depth:
            tok = self.next("'}'")
            if self.toks[self.i - 1][2]:
                depth += tok == "{"
                depth -= tok == "}"

    def name_list(self, close: str, what: str) -> list:
        """Names separated by commas or whitespace, up to ``close`` (consumed)."""
        out = []
        while self.peek_punct() != close:
            if self.peek_punct() == ",":
                self.i += 1
                continue
            out.append(self.name(what))
        self.i += 1
        return out

    def numbers(self, what: str) -> list:
        """Numbers separated by commas or whitespace, up to ';' (consumed)."""
        out = []
        while True:
            p = self.peek_punct()
            if p == ";":
                self.i += 1
                return out
            if p == ",":
                self.i += 1
                continue
            if p is not None:
                raise self.error(f"expected a probability in {what}, found {p!r}")
            tok = self.name("a probability")
            try:
                out.append(float(tok))
            except ValueError:
                raise self.error(f"expected a probability in {what}, found {tok!r}") from None


def read_bif(path, name: str | None = None) -> BayesianNetwork:
    """Read a Bayesian network in BIF format.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.bif`` file, or a gzip-compressed one (detected by its content,
        whatever the suffix).
    name : str, optional
        Name of the network. Default: the name on the ``network`` line, or the
        file name without ``.bif``/``.gz`` when that name is missing or
        ``unknown`` (as in the bnlearn repository files).

    Returns
    -------
    BayesianNetwork
        Nodes in a topological order that keeps the file's declaration order
        wherever the arcs allow.

    Raises
    ------
    ValueError
        On a syntax error (with the line number), an undeclared variable or
        state, a missing or repeated table entry, or a CPT row whose sum is
        further than 1e-3 from 1 (the message names the node).

    Notes
    -----
    Supported: ``//`` and ``/* */`` comments, quoted or bare names, commas or
    whitespace as separators, ``property`` statements (ignored), both
    ``probability ( A | B, C )`` and the older ``probability ( A B C )``
    header, ``table`` entries and per-configuration ``(b, c) p1, p2;``
    entries, and ``default`` entries for configurations not listed.

    A ``table`` lists the probabilities with the last variable of the header
    varying fastest and the node itself slowest (the BIF 0.15 convention,
    also followed by pgmpy): ``P(a1|b1), P(a1|b2), ..., P(a2|b1), ...``.

    Rows whose sum deviates from 1 by more than 1e-6 but at most 1e-3
    (rounding in the file) are silently renormalized.
    """
    path = Path(os.fspath(path))
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace")
    toks = _Tokens(text, str(path))

    net_name = None
    var_levels: dict = {}
    probs: dict = {}  # node -> (parents, cpt)
    while toks.peek() is not None:
        kw = toks.name("'network', 'variable' or 'probability'")
        if kw == "network":
            net_name = toks.name("the network name")
            toks.skip_block()
        elif kw == "variable":
            var = toks.name("a variable name")
            if var in var_levels:
                raise toks.error(f"variable {var!r} is declared twice")
            var_levels[var] = _parse_variable(toks, var)
        elif kw == "probability":
            node, ps, cpt = _parse_probability(toks, var_levels)
            if node in probs:
                raise toks.error(f"a second probability block for {node!r}")
            probs[node] = (ps, cpt)
        else:
            raise toks.error(f"expected 'network', 'variable' or 'probability', found {kw!r}")

    missing = [v for v in var_levels if v not in probs]
    if missing:
        raise ValueError(f"{path}: no probability block for variables {missing[:10]}")
    parents = {v: probs[v][0] for v in var_levels}
    order = _topological_order(list(var_levels), parents, str(path))
    if name is None:
        name = net_name
        if not name or name.lower() == "unknown":
            name = path.name
            for suffix in (".gz", ".bif"):
                if name.lower().endswith(suffix):
                    name = name[: -len(suffix)]
    return BayesianNetwork(
        name=name,
        nodes=tuple(order),
        parents=parents,
        levels={v: var_levels[v] for v in order},
        cpts={v: probs[v][1] for v in order},
    )


def _parse_variable(toks: _Tokens, var: str) -> tuple:
    toks.expect("{")
    states = None
    while toks.peek_punct() != "}":
        kw = toks.name(f"'type' or 'property' in variable {var!r}")
        if kw == "type":
            kind = toks.name("a variable type")
            if kind != "discrete":
                raise toks.error(
                    f"variable {var!r}: only discrete variables are supported, got {kind!r}"
                )
            toks.expect("[")
            size = toks.name("the number of states")
            toks.expect("]")
            toks.expect("{")
            states = tuple(toks.name_list("}", f"a state of {var!r}"))
            toks.expect(";")
            try:
                declared = int(size)
            except ValueError:
                raise toks.error(f"variable {var!r}: bad number of states {size!r}") from None
            if declared != len(states):
                raise toks.error(
                    f"variable {var!r} declares {declared} states but lists {len(states)}"
                )
            if len(set(states)) != len(states):
                raise toks.error(f"variable {var!r} lists a state twice: {list(states)}")
        elif kw == "property":
            toks.skip_statement()
        else:
            raise toks.error(f"variable {var!r}: unexpected {kw!r}")
    toks.expect("}")
    if not states:
        raise toks.error(f"variable {var!r} has no states")
    return states


def _parse_probability(toks: _Tokens, var_levels: dict):
    toks.expect("(")
    header = []
    while toks.peek_punct() != ")":
        if toks.peek_punct() in (",", "|"):
            toks.i += 1
            continue
        header.append(toks.name("a variable name"))
    toks.expect(")")
    if not header:
        raise toks.error("empty probability header")
    for v in header:
        if v not in var_levels:
            raise toks.error(f"probability block uses undeclared variable {v!r}")
    node, ps = header[0], tuple(header[1:])
    if node in ps or len(set(ps)) != len(ps):
        raise toks.error(f"probability ( {node} | ... ): repeated variable in {header}")
    card = len(var_levels[node])
    pcards = tuple(len(var_levels[p]) for p in ps)
    n_conf = int(np.prod(pcards, dtype=np.int64))
    table = np.full((n_conf, card), np.nan)
    default = None
    seen = np.zeros(n_conf, dtype=bool)
    state_index = [{s: i for i, s in enumerate(var_levels[p])} for p in ps]
    toks.expect("{")
    while toks.peek_punct() != "}":
        if toks.peek_punct() == "(":
            toks.i += 1
            states = toks.name_list(")", "a parent state")
            if len(states) != len(ps):
                raise toks.error(
                    f"node {node!r}: entry {tuple(states)} gives {len(states)} parent states, "
                    f"expected {len(ps)}"
                )
            row = 0
            for s, p, idx, k in zip(states, ps, state_index, pcards):
                if s not in idx:
                    raise toks.error(f"node {node!r}: {s!r} is not a state of parent {p!r}")
                row = row * k + idx[s]
            vals = toks.numbers(f"the table of {node!r}")
            if len(vals) != card:
                raise toks.error(f"node {node!r}: entry {tuple(states)} has {len(vals)} "
                                 f"probabilities, expected {card}")
            if seen[row]:
                raise toks.error(f"node {node!r}: entry {tuple(states)} is given twice")
            seen[row] = True
            table[row] = vals
            continue
        kw = toks.name(f"'table', 'default' or '(' in the block of {node!r}")
        if kw == "table":
            vals = toks.numbers(f"the table of {node!r}")
            if len(vals) != card * n_conf:
                raise toks.error(f"node {node!r}: table has {len(vals)} probabilities, "
                                 f"expected {card * n_conf}")
            if seen.any():
                raise toks.error(f"node {node!r}: both a table and per-configuration entries")
            # node slowest, last parent fastest -> (card, n_conf) -> (n_conf, card)
            table[:] = np.asarray(vals).reshape(card, n_conf).T
            seen[:] = True
        elif kw == "default":
            vals = toks.numbers(f"the default of {node!r}")
            if len(vals) != card:
                raise toks.error(f"node {node!r}: default has {len(vals)} probabilities, "
                                 f"expected {card}")
            default = vals
        elif kw == "property":
            toks.skip_statement()
        else:
            raise toks.error(f"node {node!r}: unexpected {kw!r} in the probability block")
    toks.expect("}")
    if not seen.all():
        if default is None:
            raise toks.error(
                f"node {node!r}: {int((~seen).sum())} parent configurations have no "
                "probabilities and there is no default"
            )
        table[~seen] = default
    if not np.isfinite(table).all() or (table < 0).any():
        raise ValueError(f"{toks.source}: node {node!r} has negative or non-finite probabilities")
    sums = table.sum(axis=1)
    dev = np.abs(sums - 1.0)
    if dev.max() > RENORMALIZE_TOL:
        worst = sums[np.argmax(dev)]
        raise ValueError(
            f"{toks.source}: the probabilities of node {node!r} must sum to 1 in each parent "
            f"configuration; one row sums to {worst:.6g}"
        )
    fix = dev > ROW_SUM_TOL
    table[fix] /= sums[fix, None]
    return node, ps, table.reshape(pcards + (card,))
