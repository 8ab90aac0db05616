"""Markov blankets of many targets at once, in parallel with joblib.

The same call scales from threads on a laptop to a cluster: joblib's backend
is chosen by the caller's context, e.g. ``with joblib.parallel_config(
backend="dask"):`` after creating a ``dask.distributed.Client`` (Dask is an
optional extra, not a dependency).
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field

import pandas as pd

from ._frozen import FrozenMapping, fields_equal
from ._validation import check_choice, check_n_jobs
from .algorithms import LEARNERS
from .algorithms.learners import _shown
from .bn import BayesianNetwork
from .ci.engine import _names_only
from .ci.result import plural
from .data import as_dataset
from .plotting import GraphEdge, draw_graph, network_layout
from .results.base import Summary, _rrepr, format_call
from .results.stability import ByTarget
from .stability import arc_strengths

__all__ = ["BlanketCollection", "blankets"]


class _EachTarget:
    """The target of a collection's call line: ``target = <each target>``."""

    def __repr__(self) -> str:
        return "<each target>"


_EACH_TARGET = _EachTarget()


@dataclass(frozen=True, eq=False)
class BlanketCollection(ByTarget):
    """The blankets of several targets, learned by one method.

    Attributes
    ----------
    method : str
    results : mapping target -> result (read-only)
    elapsed : float
        Wall-clock seconds for the whole collection.
    call : str
        The learner's call line as passed to :func:`blankets`: ``<each target>`` as its
        target, the data and the arguments as given (each result's own call shows the
        values it resolved: the test chosen, the defaults, a drawn seed).
    """

    method: str
    results: object = field(repr=False)
    elapsed: float = field(repr=False)
    call: str = field(default="", repr=False)

    def __post_init__(self):
        object.__setattr__(self, "results", FrozenMapping(self.results))

    def __eq__(self, other):  # by value, as the results: the seconds taken are not part of it
        return fields_equal(self, other, ignore=("elapsed",))

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.method, tuple(self.results)))

    def __repr__(self) -> str:
        sizes = [len(r.selected) for r in self.results.values()]
        mean = sum(sizes) / len(sizes) if sizes else 0.0
        return (f"<BlanketCollection {self.method}: {plural(len(sizes), 'target')}, mean "
                f"blanket size {mean:.2f}, {plural(self.n_tests, 'test')}>")

    @property
    def n_tests(self) -> int:
        return sum(r.n_tests for r in self.results.values())

    @property
    def adjacency(self) -> pd.DataFrame:
        """Boolean matrix: row target, column feature, True when the feature is in its blanket."""
        names = list(self.results)
        features = sorted({f for r in self.results.values() for f in r.selected} | set(names),
                          key=lambda f: (f not in names, names.index(f) if f in names else f))
        frame = pd.DataFrame(False, index=pd.Index(names, name="target"),
                             columns=pd.Index(features, name="feature"))
        for target, res in self.results.items():
            frame.loc[target, list(res.selected)] = True
        return frame

    def asymmetric_pairs(self) -> pd.DataFrame:
        """Pairs of learned targets where X is in MB(Y) but Y is not in MB(X) (index
        ``pair``, 1, 2, ...)."""
        rows = []
        for target, res in self.results.items():
            for feature in res.selected:
                other = self.results.get(feature)
                if other is not None and target not in other.selected:
                    rows.append((feature, target))
        return pd.DataFrame(rows, columns=["in_blanket_of", "missing_from_blanket_of"],
                            index=pd.RangeIndex(1, len(rows) + 1, name="pair"))

    @property
    def symmetric(self) -> bool:
        """True when X in MB(Y) iff Y in MB(X) for every pair of learned targets."""
        return self.asymmetric_pairs().empty

    def plot(self, ax=None):
        """The learned network (matplotlib only, no Graphviz); returns the Axes.

        Every learned target is a node, joined to each member of its blanket: a solid edge
        where the pair agrees (X in MB(Y) and Y in MB(X): with correct blankets the edges
        of the moral graph), a dashed red arrow Y -> X where only Y's blanket holds X (an
        :meth:`asymmetric_pairs` row), a dotted edge to a member that was not itself
        learned (grey node). Kamada-Kawai layout (networkx)."""

        names = list(self.results)
        learned = set(names)
        nodes = {v: "learned" for v in names}
        edges, done = [], set()
        for target, res in self.results.items():
            for feature in res.selected:
                if feature not in learned:
                    nodes.setdefault(feature, "not learned")
                    edges.append(GraphEdge(target, feature, "one-sided"))
                elif target in self.results[feature].selected:
                    if (feature, target) not in done:
                        done.add((target, feature))
                        edges.append(GraphEdge(target, feature, "edge"))
                else:
                    edges.append(GraphEdge(target, feature, "asymmetric"))
        agreeing = [(e.a, e.b) for e in edges if e.kind == "edge"]
        pos = network_layout(list(nodes), [(e.a, e.b) for e in edges])
        n_asym = sum(e.kind == "asymmetric" for e in edges)
        return draw_graph(nodes, edges, pos, ax=ax, aspect="auto",
                          title=f"{self.method}: blankets of {plural(len(names), 'target')}, "
                                f"{plural(len(agreeing), 'agreeing pair')}, "
                                f"{plural(n_asym, 'asymmetric pair')}")

    def summary(self) -> Summary:
        """One line per target: blanket size, tests and the blanket itself."""
        table = pd.DataFrame(
            {
                "size": [len(r.selected) for r in self.results.values()],
                "tests": [r.n_tests for r in self.results.values()],
                "blanket": [", ".join(r.selected) for r in self.results.values()],
            },
            index=pd.Index(list(self.results), name="target"),
        )
        asym = self.asymmetric_pairs()
        agree = "every pair agrees" if asym.empty else plural(len(asym), "asymmetric pair")
        footer = [f"Symmetry: {agree} (X in MB(Y) iff Y in MB(X))."]
        header = [("Method", self.method), ("Targets", str(len(self.results))),
                  ("Tests", f"{self.n_tests}, {self.elapsed:.3g} s wall clock")]
        if self.call:
            header.insert(1, ("Call", self.call))
        return Summary(f"Markov blankets: {self.method}", header, {"Blankets:": table}, footer)


def blankets(data, targets=None, method="iamb", *, n_jobs=1, progress=False, R=None, **params):
    """Learn the Markov blanket of many targets (default: every variable).

    Parameters
    ----------
    data : DataFrame, ndarray, Dataset or BayesianNetwork (oracle tests)
    targets : str, int or list of them, optional
        Names or positions (checked as a learner checks ``target``); default
        all variables.
    method : str
        A learner of :data:`mbstat.LEARNERS` ("iamb", "inter_iamb", "mbor", ...).
    n_jobs : int
        joblib workers (-1: all cores). The backend follows the caller's
        ``joblib.parallel_config`` (threads, loky processes, or Dask).
    progress : bool
        Show a tqdm progress bar.
    R : int, optional
        Learn every blanket on R resamples too, and return their arc strengths
        (:func:`mbstat.arc_strengths`; ``params`` then also take its ``resample``,
        ``fraction``, ``threshold``, ``pfer``, ``seed`` and ``learner_args``).
    **params
        Passed to the method (``alpha``, ``test``, ...).

    Returns
    -------
    BlanketCollection, or ArcStrengths with ``R``
    """
    if R is not None:
        return arc_strengths(data, targets, method, R, n_jobs=n_jobs, progress=progress,
                             **params)
    from joblib import Parallel, delayed


    check_choice("method", method, LEARNERS)
    check_n_jobs(n_jobs)
    func = LEARNERS[method].function
    passed = dict(params)  # the call line's arguments, as given

    if isinstance(data, BayesianNetwork):
        dataset, columns = data, _names_only(data.nodes)
    else:
        dataset = columns = as_dataset(data, na=params.pop("na", "raise"),
                                       discretize=params.pop("discretize", None))
    if targets is None:
        targets = columns.names
    positions = columns.indices(targets, "targets")  # names or positions, as a learner's target
    if not positions:
        raise ValueError(f"targets must name at least one variable; got {targets!r}")
    targets = [columns.names[j] for j in positions]
    start = time.perf_counter()
    jobs = (delayed(func)(dataset, t, **params) for t in targets)
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    if progress:
        from tqdm.auto import tqdm

        results = tqdm(results, total=len(targets), desc=f"{method} blankets", unit="target")
    collected = dict(zip(targets, results))
    call = _call_line(method, data, passed, [r.params for r in collected.values()],
                      inspect.signature(func).parameters)
    return BlanketCollection(method, collected, time.perf_counter() - start, call)


def _call_line(method: str, data, passed: dict, resolved: list, arguments) -> str:
    """The learner's call line for every target (:func:`~mbstat.results.base.format_call`):
    ``target = <each target>``, then the values of its ``arguments`` that every target's
    learner resolved alike (``resolved``: the results' params; the test chosen, the defaults,
    in the learner's order), then the other arguments as ``passed``. A value that differs
    between targets (a seed drawn per target) shows as passed, or not at all when none was."""
    first, *others = resolved
    shown = {k: v for k, v in first.items() if k in arguments and k not in ("data", "target")
             and all(k in o and _rrepr(o[k]) == _rrepr(v) for o in others)}
    shown.update((k, v) for k, v in passed.items() if k not in shown)
    return format_call(method, data, target=_EACH_TARGET,
                       **{k: v for k, v in shown.items() if _shown(v)})
