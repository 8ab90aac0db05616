"""Networks with random CPTs: on a given DAG (:func:`from_edges`) or a random one
(:func:`random_dag`)."""
from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from .._validation import check_int, check_number, check_seed
from .dag import _is_single, _topological_order
from .network import BayesianNetwork

__all__ = ["from_edges", "random_dag"]


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
