"""The learner table and the one front end every learner runs through.

A learner is its search function plus one :class:`Learner` row, declared on its public
function::

    IAMB = Learner("iamb", "ci", "incremental association (IAMB)", search=iamb_search)

    @IAMB.front_end
    def iamb(data, target, test="auto", alpha=0.05, *, backend=None, candidates=None,
             discretize=None, na="raise", **test_args) -> MBResult:
        '''The docstring users read.'''

The decorated function's body is never run: its signature and docstring are the public
ones, and :func:`learn` does what every learner does before and after its search (as
bnlearn's ``mb.backend`` does around ``ia.markov.blanket``): take the target as a column
or as a Series / 1-D array aligned with the data, check the arguments, build the CI
tester, time the search, write the call line, and assemble the result with the evidence
the search decided on. Model-based and ranking learners (kinds "model" and "ranking")
take the same target handling and run their own body.

Every CI learner also takes ``progress`` (declared in its signature or not): a tqdm bar of
the tests performed, shown at once (True), never (False) or once the run has taken 10 s
(None, the default); and a KeyboardInterrupt (Ctrl-C) during its search returns the
partial result, marked incomplete, from the decisions recorded so far (:func:`_search`).
"""
from __future__ import annotations

import functools
import inspect
import time
import warnings
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pandas as pd

from .._progress import hides_interrupt, progress_bar
from .._validation import check_alpha, check_int
from ..results import MBResult, format_call
from ..results.base import trace_builder
from ._common import prepare
from ._equivalence import evidence_determinism_notes
from ._evidence import Ledger
from ._selection import entry_floor, entry_notes

__all__ = ["Learner", "LEARNERS", "Run", "Found", "learn", "learners_table", "resolve_target"]

#: Arguments every CI-test learner takes, besides data and target.
CI_ARGUMENTS = ("test", "alpha", "backend", "candidates", "whitelist", "blacklist", "max_sx",
                "discretize", "na")
KINDS = {"ci": "CI-test learner", "model": "model-based", "ranking": "ranking"}

_REGISTRY: dict = {}
#: Learners by name: one row each (see :class:`Learner`), filled as their modules load.
LEARNERS = MappingProxyType(_REGISTRY)


@dataclass(frozen=True)
class Learner:
    """One row of the learner table.

    Attributes
    ----------
    name : str
        The public function's name ("iamb", "mbor", ...).
    kind : {"ci", "model", "ranking"}
        CI-test learners run through :func:`learn`'s tester; the others run their body.
    title : str
        Long name for summaries; may hold ``{param}`` fields of the learner's own arguments.
    search : callable, optional
        CI learners: ``search(run, **own_args) -> Found``.
    check : callable, optional
        ``check(**own_args) -> dict``: the learner's own arguments, checked, before any
        data is touched.
    result : type
        The result class.
    """

    name: str
    kind: str
    title: str
    search: object = field(default=None, repr=False)
    check: object = field(default=None, repr=False)
    result: type = MBResult
    function: object = field(default=None, repr=False, compare=False)

    @property
    def parameters(self) -> tuple:
        """The learner's own arguments (not data, target, nor the common CI arguments)."""
        sig = inspect.signature(self.function)
        common = {"data", "target", *CI_ARGUMENTS} if self.kind == "ci" else {"data", "target"}
        if self.kind == "ci" and not _own_progress(self):  # the front end's bar: common too
            common.add("progress")
        return tuple(p.name for p in sig.parameters.values()
                     if p.name not in common and p.kind is not p.VAR_KEYWORD)

    @property
    def takes_test_args(self) -> bool:
        """Whether extra keyword arguments go to the CI test."""
        return any(p.kind is p.VAR_KEYWORD
                   for p in inspect.signature(self.function).parameters.values())

    def front_end(self, declared):
        """Register ``declared`` (signature and docstring) as this learner's public function."""
        signature = inspect.signature(declared)
        row = self

        @functools.wraps(declared)
        def public(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{row.name}(): {exc}") from None
            bound.apply_defaults()
            return learn(row, dict(bound.arguments), declared)

        object.__setattr__(self, "function", public)
        _REGISTRY[self.name] = self
        return public


@dataclass
class Run:
    """What a CI learner's search works with: the tester, the target, the candidates, and
    where it records its decisions (``ledger``) and steps (``trace``)."""

    tester: object
    target: str
    candidates: list
    start: float
    ledger: Ledger = field(default_factory=Ledger)
    trace: list = field(default_factory=list)
    whitelist: tuple = ()  # always in the blanket (searches keep them in S, never remove them)
    max_sx: int | None = None  # the largest conditioning set a test may use


@dataclass
class Found:
    """What a CI learner's search returns.

    ``params`` adds to (or replaces) the result's parameters; ``notes`` are shown under the
    summary; ``trace`` replaces ``run.trace`` when the search kept its own.
    """

    blanket: list
    complete: bool = True
    parents_children: list | None = None
    spouses: list | None = None
    params: dict = field(default_factory=dict)
    notes: tuple = ()
    n_skipped: int = 0
    trace: object = None
    extra: dict = field(default_factory=dict)  # the result class's own fields (row.result)


# ------------------------------------------------------------------------- targets
def _describe(value) -> str:
    """A short description of a refused target: its type and size, never its values."""
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{type(value).__name__} of shape {tuple(shape)}"
    if hasattr(value, "__len__"):
        return f"{type(value).__name__} of {len(value)} items"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def target_label(name, columns, default: str = "y") -> str:
    """The name a target vector takes beside the features: its own (a Series') unless a
    column has it, else ``default``, with underscores added until no column has it."""
    taken = {str(c) for c in columns}
    label = default if name is None or str(name) in taken else str(name)
    while label in taken:
        label += "_"
    return label


def resolve_target(data, target):
    """``(data, target)`` with the target as a column: a name or position is kept; a
    Series or 1-D array with one value per row is appended to a copy of the features."""
    if not isinstance(target, (pd.Series, np.ndarray)):
        if not hasattr(target, "__len__") or isinstance(target, str):
            return data, target  # a name or position, checked (and refused) with the data
        raise TypeError("target must be a column name or position, or a Series / 1-D array "
                        f"with one value per row of data; got {_describe(target)}")
    if getattr(target, "ndim", 1) != 1:
        raise ValueError(f"target must be 1-D; got {_describe(target)}")
    by_position = isinstance(data, np.ndarray)  # an array has no index to align to
    if by_position and data.ndim == 2:
        data = pd.DataFrame(data, columns=[f"V{j + 1}" for j in range(data.shape[1])])
    if not isinstance(data, pd.DataFrame):
        raise TypeError("a target given as values needs data as a DataFrame or a 2-D array of "
                        f"the features; got {_describe(data)} (name the target's column "
                        "instead)")
    if len(target) != len(data):
        raise ValueError(f"target has {len(target)} values but data has {len(data)} rows")
    if isinstance(target, pd.Series) and not by_position and not target.index.equals(data.index):
        if not (data.index.is_unique and target.index.is_unique
                and target.index.sort_values().equals(data.index.sort_values())):
            raise ValueError("target's index does not match the data's index; align them "
                             "(or pass target.to_numpy() to match by position)")
        target = target.reindex(data.index)  # the same labels in another order: aligned
    name = getattr(target, "name", None)
    if name is not None and str(name) in {str(c) for c in data.columns}:
        raise ValueError(f"target is named {str(name)!r} like a column of data: pass "
                         f"target={str(name)!r} to learn its blanket among the other columns, "
                         "or drop that column from data")
    label = target_label(name, data.columns)
    values = target.to_numpy() if isinstance(target, pd.Series) else target
    frame = data.copy(deep=False)  # the caller's frame is never modified
    frame[label] = pd.Series(values, index=data.index, dtype=getattr(target, "dtype", None))
    return frame, label


# ------------------------------------------------------------------------- the front end
def learn(row: Learner, args: dict, declared=None):
    """Run learner ``row`` on the bound arguments ``args`` (see the module docstring)."""
    data, target = resolve_target(args.pop("data"), args.pop("target"))
    if row.kind != "ci":
        return declared(data, target, **args)
    common = {k: args.pop(k, None) for k in CI_ARGUMENTS}
    test_args = dict(args.pop("test_args", None) or {})
    # progress: the front end's bar over the tests (every CI learner takes it, declared or
    # not), unless the learner draws its own (gs_m, rgs)
    progress = (False if _own_progress(row) else
                args.pop("progress", test_args.pop("progress", None)))
    own = row.check(**args) if row.check is not None else args
    alpha = check_alpha(common["alpha"])
    common["na"] = common["na"] or "raise"
    start = time.perf_counter()
    tester, target, cands = prepare(data, target, test=common["test"], alpha=alpha,
                                    backend=common["backend"], discretize=common["discretize"],
                                    na=common["na"], test_args=test_args,
                                    candidates=common["candidates"])
    whitelist, blacklist = _hard_priors(tester.dataset, target, cands, common)
    barred = set(blacklist)
    cands = [c for c in cands if c not in barred]
    max_sx = check_int("max_sx", common["max_sx"], low=0, allow_none=True)
    if own.get("start") is not None:
        own["start"] = _names(tester.dataset, own["start"], "start", target, cands)
    begin = set(own.get("start") or ()) | set(whitelist)
    cap = tester.test_obj.max_conditioning(tester.n)
    capped = (cap is not None and (max_sx is None or cap < max_sx)
              and cap < len(cands) - 1 and len(begin) <= cap + 1)
    if capped:  # the test's own limit: the growth stops there rather than fail
        max_sx = cap
    if max_sx is not None and len(begin) > max_sx + 1:
        raise ValueError(f"max_sx = {max_sx} is smaller than the start and whitelist allow: "
                         f"{len(begin)} members need max_sx >= {len(begin) - 1}")
    run = Run(tester, target, cands, start, whitelist=whitelist, max_sx=max_sx)
    floor = entry_floor(own.get("selection"), tester, alpha, len(set(cands) - begin))
    if floor is not None and floor[1]:
        warnings.warn(floor[0], UserWarning, stacklevel=3)
    if _constant(tester.dataset, target):
        message = (f"target {target!r} is constant: its Markov blanket is empty (no test "
                   "was made)")
        warnings.warn(message, UserWarning, stacklevel=3)
        found, note = Found([], notes=(f"Note: {message}.",)), "constant target"
    else:
        found, note = _search(row, run, own, progress)
        _honour_hard_priors(run, found, blacklist)
    # the evidence and the trace as arrays; their tables are built when first read
    evidence = run.ledger.evidence(found.blanket, [*cands, *blacklist], note=note)
    found.notes = (*found.notes, *evidence_determinism_notes(tester.dataset, target, evidence,
                                                             found.notes),
                   *entry_notes(own.get("selection"), evidence, alpha),
                   *((f"Note: {floor[0]}.",) if floor is not None else ()),
                   *((f"Note: test {tester.test_obj.name!r} can condition on at most {cap} "
                      f"variables with {tester.n} rows: the search stops growing there "
                      f"(max_sx = {cap}).",) if capped else ()))
    tests = tester.log_builder()  # the log is built when the result's tests are first read
    _check_max_sx(tests, max_sx)
    elapsed = time.perf_counter() - start
    shown = {k: found.params.get(k, v) for k, v in own.items()}  # the call: own arguments
    shown = {k: v for k, v in shown.items() if k != "progress" and _shown(v)}
    priors = {"whitelist": list(whitelist) or None, "blacklist": list(blacklist) or None,
              "max_sx": max_sx}
    call = format_call(row.name, data, target=target, **shown, test=tester.test_name,
                       alpha=alpha, candidates=None if common["candidates"] is None else cands,
                       **priors)
    params = {"test": tester.test_name, "alpha": alpha, **own, **test_args, **found.params,
              **{k: v for k, v in priors.items() if v is not None}}
    params.pop("progress", None)
    return row.result(
        method=row.name,
        target=target,
        selected=tuple(found.blanket),
        params=params,
        call=call,
        n_rows=tester.n,
        n_candidates=len(cands),
        n_variables=tester.dataset.n_cols,
        n_tests=tester.n_tests,
        elapsed=elapsed,
        backend=tester.backend.name,
        device=tester.backend.device,
        complete=found.complete,
        tests=tests,
        test=tester.test_name,
        alpha=alpha,
        evidence=evidence,
        trace=trace_builder(run.trace if found.trace is None else found.trace),
        parents_children=None if found.parents_children is None else tuple(found.parents_children),
        spouses=None if found.spouses is None else tuple(found.spouses),
        n_skipped=tester.n_skipped + found.n_skipped,
        title=row.title.format(**{**own, **found.params}),
        notes=tuple(found.notes) + ((f"Note: {tester.test_reason}.",)  # not for auto's g2
                                    if tester.test_reason and tester.test_name != "g2"
                                    else ()),
        **found.extra,
    )


def _own_progress(row: Learner) -> bool:
    """Whether the learner's own arguments include ``progress`` (it draws its own bar)."""
    return row.check is not None and "progress" in inspect.signature(row.check).parameters


def _search(row: Learner, run: Run, own: dict, progress):
    """Run the search with a progress bar over the tests performed (``progress``: True,
    None: once the run has taken :data:`~mbstat._progress.AUTO_DELAY` seconds, False) and
    turn a KeyboardInterrupt into a partial result: the members the search had kept when it
    was interrupted (the ledger's decisions in force), marked incomplete, with a note.
    Returns (Found, the evidence note of candidates never decided)."""

    bar = progress_bar(progress, desc=f"{row.name}: blanket of {run.target}", unit=" tests")
    run.tester.bar = bar
    try:
        try:
            return row.search(run, **own), "not tested"
        except SystemError as error:  # a Ctrl-C inside a compiled call not yet converted
            if not hides_interrupt(error):
                raise
            raise KeyboardInterrupt from None
    except KeyboardInterrupt:
        tester = run.tester
        phase = tester._log[-1][-1] if tester._log else ""
        kept = run.ledger.kept()
        note = (f"Note: interrupted (KeyboardInterrupt) after {tester.n_tests} tests"
                f"{f' in phase {phase!r}' if phase else ''}: the blanket is what the search "
                "had kept so far, and candidates it had not decided on are shown as not "
                "reached.")
        return Found(kept, complete=False, notes=(note,)), "not reached: interrupted"
    finally:
        run.tester.bar = None
        bar.close()


def _names(ds, variables, param: str, target: str, candidates) -> tuple:
    """Names of ``variables`` (names or positions), each a candidate other than the target."""
    if isinstance(variables, (str, int, np.integer)):
        variables = [variables]
    names = tuple(ds.names[j] for j in ds.indices(variables, param))
    if target in names:
        raise ValueError(f"{param}: the target {target!r} cannot be in it")
    allowed = set(candidates)
    outside = [v for v in names if v not in allowed]
    if outside:
        raise ValueError(f"{param}: {outside} are not among the candidates")
    return names


def _hard_priors(ds, target, candidates, common) -> tuple:
    """The whitelist and blacklist as names, checked (bnlearn's ``learn.mb`` rules: the target
    in neither, no variable in both)."""
    lists = [() if common[p] is None else _names(ds, common[p], p, target, candidates)
             for p in ("whitelist", "blacklist")]
    both = sorted(set(lists[0]) & set(lists[1]))
    if both:
        raise ValueError(f"{both} are in both whitelist and blacklist")
    return lists[0], lists[1]


def _honour_hard_priors(run: Run, found: Found, blacklist) -> None:
    """Whitelisted variables join the blanket (and the parents and children, as bnlearn
    treats them as neighbours) whatever the search decided; the evidence says why."""
    found.blanket = list(found.blanket)
    if found.parents_children is not None:
        found.parents_children = list(found.parents_children)
    for x in run.whitelist:
        if x not in found.blanket:
            found.blanket.append(x)
        if found.parents_children is not None and x not in found.parents_children:
            found.parents_children.append(x)
        run.ledger.exclude(x, None, "whitelist")  # reset, then keep by the list
        run.ledger.keep(x, None, "whitelist")
    for x in blacklist:
        run.ledger.exclude(x, None, "blacklist")


def _check_max_sx(tests, max_sx) -> None:
    """The searches honour ``max_sx``: no logged test conditions on more variables
    (``tests``: the log's builder)."""
    if max_sx is None:
        return
    tests = tests()
    if not len(tests):
        return
    sizes = tests["z"].map(lambda z: len(z.split(", ")) if z else 0)
    if (sizes > max_sx).any():
        raise RuntimeError(f"internal error: a test conditioned on {int(sizes.max())} variables "
                           f"with max_sx = {max_sx}")


def _shown(value) -> bool:
    """Whether an argument appears in the call line (None and empty mappings do not)."""
    if value is None:
        return False
    if hasattr(value, "items") and not len(value):
        return False
    return not isinstance(value, np.random.Generator)


def _constant(ds, target: str) -> bool:
    """Whether the target takes one value only (oracles: never)."""
    if not ds.n_rows:
        return False
    return ds.constant(ds.index(target))


def learners_table() -> pd.DataFrame:
    """The learner table as a DataFrame: kind, title, result class and own arguments."""
    rows = [(r.name, KINDS[r.kind], r.title.replace("{", "<").replace("}", ">"),
             r.result.__name__, ", ".join(r.parameters) or "-",
             "yes" if r.takes_test_args else "no") for r in LEARNERS.values()]
    frame = pd.DataFrame(rows, columns=["learner", "kind", "title", "result", "arguments",
                                        "test arguments"])
    return frame.set_index("learner")


