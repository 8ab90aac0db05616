"""MBOR: Markov boundary search using the OR condition (Rodrigues de Morais & Aussem 2008).

Algorithm 1 (MBOR) with its subroutines PCSuperSet (Algorithm 2), SPSuperSet
(Algorithm 3) and MBtoPC (Algorithm 4). Every subroutine runs on one shared
:class:`~mbstat.ci.CITester`, so a test asked twice (by different targets,
phases or subroutines) is performed once. "Restricting the data to
MBS u {T}" means restricting the candidates and conditioning sets to it.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .._frozen import FrozenMapping
from .._validation import check_alpha, check_int
from ..results import MBResult
from ._common import prepare
from ._selection import check_selection
from .iamb import iamb, inter_iamb, search
from .learners import Found, Learner, Run

__all__ = ["mbor", "pc_superset", "sp_superset", "mb_to_pc", "Superset"]

#: With ``max_k=None``, a search for separating sets examines whole sizes 0, 1, 2, ...
#: while the subsets examined number at most this many (bnlearn's ``max.sx``, chosen
#: from the pool's size); a larger size is searched only when ``max_k`` asks for it.
MAX_SUBSETS = 10_000


@dataclass(frozen=True)
class Superset:
    """The outcome of PCSuperSet or SPSuperSet.

    Attributes
    ----------
    kind : str
        "PCS" (parents-and-children superset) or "SPS" (spouses superset).
    target : str
    features : tuple of str
        The superset, in candidate order.
    dsep : mapping feature -> tuple of str
        For each candidate left out, the set found to separate it from the
        target (PCS: the empty set or one feature; SPS: ``{X, Z}``).
    n_tests : int
        Tests performed.
    tests : DataFrame
        The log of those tests.
    """

    kind: str
    target: str
    features: tuple
    dsep: object = field(repr=False)
    n_tests: int = field(repr=False)
    tests: pd.DataFrame = field(default=None, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "dsep", FrozenMapping(self.dsep))

    def __repr__(self) -> str:
        shown = ", ".join(self.features)
        return (f"<Superset {self.kind} of {self.target}: {{{shown}}} ({len(self.features)}), "
                f"{self.n_tests} tests>")

    def __iter__(self):
        return iter(self.features)

    def __len__(self) -> int:
        return len(self.features)

    def __contains__(self, feature) -> bool:
        return feature in self.features


# ---------------------------------------------------------------------------
# the subroutines, on a shared tester
# ---------------------------------------------------------------------------


def _pc_superset(tester, target, candidates, trace):
    """Algorithm 2: drop X when T _||_ X, then when T _||_ X | Y for some Y in PCS (|Z| <= 1).

    Phase II is batched by the conditioning variable: for each Y still in PCS
    (candidate order), every other X still in PCS is tested given Y at once.
    """
    dsep = {}
    batch = tester.test_many(candidates, target, (), phase="pcs")
    pcs = []
    independent = batch.independent  # one decision per candidate, computed once
    for i, x in enumerate(candidates):
        if independent[i]:
            dsep[x] = ()
            trace.append(("pcs", "remove", x, batch[i]))
        else:
            pcs.append(x)
    for x, y, result in _drop_separated(tester, target, pcs, (), "pcs"):
        dsep[x] = (y,)
        trace.append(("pcs", "remove", x, result))
    return pcs, dsep


def _drop_separated(tester, target, members, given, phase):
    """For each Y still in ``members`` (in order), test every other member against the
    target given (*given, Y) in one batch and remove the independent ones from
    ``members`` (in place); yields (removed member, Y, its CIResult)."""
    for y in list(members):
        if y not in members:
            continue
        xs = [x for x in members if x != y]
        if not xs:
            break
        batch = tester.test_many(xs, target, [*given, y], phase=phase)
        for i in np.flatnonzero(batch.independent):
            members.remove(xs[i])
            yield xs[i], y, batch[i]


def _sp_superset(tester, target, candidates, pcs, dsep, trace):
    """Algorithm 3: for each X in PCS, Y outside PCS with T not _||_ Y | dSep(Y) u X, pruned by
    T _||_ Y | {X, Z} for Z in SPS_X (|Z| <= 2). Returns (SPS, separating sets of the pruned)."""
    inside = set(pcs)
    outside = [y for y in candidates if y not in inside]
    sps, pruned = [], {}
    for x in pcs:
        sps_x = []
        groups = {}
        for y in outside:
            groups.setdefault(tuple(v for v in dsep[y] if v != x), []).append(y)
        for sep, ys in groups.items():
            batch = tester.test_many(ys, target, (*sep, x), phase="sps")
            sps_x += [y for y, indep in zip(ys, batch.independent) if not indep]
        found = set(sps_x)
        sps_x = [y for y in outside if y in found]  # candidate order
        for y, z, _ in _drop_separated(tester, target, sps_x, (x,), "sps"):
            pruned.setdefault(y, (x, z))
        for y in sps_x:
            if y not in sps:
                sps.append(y)
                trace.append(("sps", "add", y, None))
    found = set(sps)
    sps = [y for y in outside if y in found]
    return sps, {y: z for y, z in pruned.items() if y not in found}


def _separate(tester, target, xs, pool, max_k, phase, survived=None, notes=None):
    """For each x in ``xs``, the first (smallest) Z in ``pool`` \\ {x} with |Z| <= max_k that
    separates x from the target, or no entry. Subsets are enumerated by size, then in
    ``pool`` order; each subset is one batched call over the x not yet separated, and the
    search stops as soon as every x is separated (at once when ``xs`` is empty).

    ``max_k=None``: every size whose subsets, counted from size 0, number at most
    :data:`MAX_SUBSETS` (:func:`_auto_max_k`). When that bound ends the search with some
    x still unseparated, a warning says so and the note is appended to ``notes``.

    ``survived`` (a dict), when given, receives for each x never separated the weakest
    test it survived (the largest p-value: pcalg's pMax)."""
    found = {}
    todo = list(xs)
    if not todo:
        return found
    # a subset holding every x separates none of them: the last size is len(pool) - 1
    largest = len(pool) - (1 if set(todo) <= set(pool) else 0)
    top = _auto_max_k(len(pool), largest) if max_k is None else min(max_k, largest)
    for k in range(top + 1):
        for z in combinations(pool, k):
            batch_xs = [x for x in todo if x not in z]
            if not batch_xs:
                continue
            batch = tester.test_many(batch_xs, target, z, phase=phase)
            if survived is not None:
                for i in np.flatnonzero(~batch.independent):
                    x = batch_xs[i]
                    if x not in survived or batch.log_pvalue[i] > survived[x].log_pvalue:
                        survived[x] = batch[i]
            for i in np.flatnonzero(batch.independent):
                found[batch_xs[i]] = (z, batch[i])
                todo.remove(batch_xs[i])
            if not todo:
                return found
    if max_k is None and top < largest:
        _note_bound(phase, top, len(pool), todo, notes)
    return found


def _auto_max_k(n: int, top: int) -> int:
    """Largest size s <= top with sum_{t <= s} C(n, t) <= MAX_SUBSETS (at least 0)."""
    total, size = 1, 0  # size 0: the empty set
    while size < top:
        total += math.comb(n, size + 1)
        if total > MAX_SUBSETS:
            break
        size += 1
    return size


def _note_bound(phase, size, n_pool, todo, notes) -> None:
    """Warn, and add to ``notes``, that the default bound ended a search for separating sets."""
    shown = ", ".join(map(str, todo[:5])) + (", ..." if len(todo) > 5 else "")
    message = (f"MBOR ({phase}): separating sets were searched up to {size} of the "
               f"{n_pool} variables (max_k=None examines at most {MAX_SUBSETS:,} subsets); "
               f"none separates {shown} from the target. Pass max_k to search larger sets")
    warnings.warn(message, UserWarning, stacklevel=2)
    if notes is not None:
        notes.append(f"Note: {message}.")


def _mb_to_pc(tester, target, candidates, method, max_k, ledger=None, notes=None,
              max_sx=None, selection="none", family=None):
    """Algorithm 4: CorrectMB, then drop X in MB separated from T by some Z in MB \\ X.

    Returns (PC, MB, survived): PC in the order CorrectMB added its members, and for each
    of them the weakest test it survived in the separating-set search. ``ledger``
    receives CorrectMB's decisions, each separation and each PC member's weakest test;
    ``notes`` (a list) what the user should know (:func:`_separate`). ``selection`` and
    ``family`` set CorrectMB's level of entry (:func:`~mbstat.algorithms.iamb.search`).
    """
    mb = search(tester, target, candidates, method, phases=("correct_mb", "correct_mb"),
                ledger=ledger, max_sx=max_sx, selection=selection, family=family)
    survived = {}
    sep = _separate(tester, target, mb, mb, max_k, "mb_to_pc", survived, notes)
    pc = [x for x in mb if x not in sep]
    if ledger is not None:
        for x in mb:
            if x in sep:
                ledger.exclude(x, sep[x][1], "mb_to_pc")
            else:
                ledger.keep(x, survived[x], "mb_to_pc")
    return pc, mb, survived


def _mbor(tester, target, candidates, method, max_k, trace, memo=None, ledger=None, max_sx=None,
          notes=None, selection="none"):
    """Algorithm 1. Returns (PC, SP, PCS, SPS).

    ``memo`` caches MBtoPC(X, V) by (X, V): pass one dict to runs for several targets
    on the same tester (a pure cache: the results do not change). ``ledger`` receives
    the evidence: PCSuperSet's exclusions, the target's MBtoPC (CorrectMB and the
    separating-set search), for a member added by the OR condition the weakest test of
    T in X's MBtoPC, for a spouse the test that added it. ``notes`` (a list) receives
    what the user should know, e.g. that the default bound on separating sets ended a
    search (:func:`_separate`). With ``selection="bonferroni"`` each CorrectMB admits at
    alpha / m, m counting every candidate of the run (the supersets were chosen from
    them), not only the superset it searches.
    """
    memo = {} if memo is None else memo
    family = len(candidates)

    def mb_to_pc_run(x, record=None):
        key = (x, variables, method, max_k, max_sx, selection)
        if key not in memo or record is not None:
            cands = [v for v in variables if v != x]
            pc_x, _, survived = _mb_to_pc(tester, x, cands, method, max_k, record, notes,
                                          max_sx, selection, family)
            memo[key] = (pc_x, survived)
        return memo[key]

    def mb_to_pc(x):
        return mb_to_pc_run(x)[0]

    # Phase I: MB superset
    start = len(trace)
    pcs, dsep = _pc_superset(tester, target, candidates, trace)
    if ledger is not None:
        for phase, _, x, res in trace[start:]:
            ledger.exclude(x, res, phase)
    sps, _ = _sp_superset(tester, target, candidates, pcs, dsep, trace)
    union = set(pcs) | set(sps)
    mbs = [v for v in candidates if v in union]
    # D restricted to MBS u {T}, in the data's column order
    keep = set(mbs) | {target}
    variables = tuple(v for v in tester.dataset.names if v in keep)
    # Phase II: parents and children, with the OR condition
    pc = list(mb_to_pc_run(target, ledger)[0])
    for x in pc:
        trace.append(("pc", "add", x, None))
    for x in pcs:
        if x not in pc and target in mb_to_pc(x):
            pc.append(x)
            trace.append(("pc", "add (OR)", x, None))
            if ledger is not None:
                ledger.keep(x, mb_to_pc_run(x)[1][target], "pc (OR)")
    # Phase III: spouses, each with a minimal separating set in MBS
    pairs = [(x, y) for x in pc for y in mb_to_pc(x)
             if y != target and y not in pc]
    ys = list(dict.fromkeys(y for _, y in pairs))
    first = set(pc)
    pool = [*pc, *(v for v in mbs if v not in first)]  # likely separators first
    sepsets = _separate(tester, target, ys, pool, max_k, "spouses", notes=notes)
    sp = []
    for x, y in pairs:
        if y in sp or y not in sepsets:
            continue
        z = sepsets[y][0]
        if x in z:
            continue
        res = tester.test(y, target, (*z, x), phase="spouses")
        if not res.independent:
            sp.append(y)
            trace.append(("spouses", "add", y, res))
            if ledger is not None:
                ledger.keep(y, res, "spouses")
    return pc, sp, pcs, sps


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------


def _method(correct_mb) -> str:
    if correct_mb is inter_iamb or correct_mb == "inter_iamb":
        return "inter_iamb"
    if correct_mb is iamb or correct_mb == "iamb":
        return "iamb"
    raise ValueError("correct_mb must be mbstat.inter_iamb or mbstat.iamb (or their names); "
                     f"got {correct_mb!r}")


def _check_args(correct_mb=inter_iamb, max_k=None, selection="bonferroni") -> dict:
    """MBOR's and MBtoPC's own arguments: CorrectMB by name, the subset-size cap, the
    level of entry."""
    return {"correct_mb": _method(correct_mb),
            "max_k": check_int("max_k", max_k, low=0, allow_none=True),
            "selection": check_selection(selection)}


def _capped(max_k, max_sx, room: int):
    """``max_k`` within the conditioning cap: separating sets of at most ``max_sx - room``."""
    if max_sx is None:
        return max_k
    return max_sx - room if max_k is None else min(max_k, max_sx - room)


def _mbor_search(run: Run, correct_mb, max_k, selection="bonferroni") -> Found:
    if run.max_sx is not None and run.max_sx < 2:
        raise ValueError(f"max_sx must be >= 2 for MBOR (SPSuperSet conditions on two "
                         f"variables); got {run.max_sx}")
    notes = []
    pc, sp, pcs, sps = _mbor(run.tester, run.target, run.candidates, correct_mb,
                             _capped(max_k, run.max_sx, 1), run.trace, ledger=run.ledger,
                             notes=notes, max_sx=run.max_sx, selection=selection)
    return Found([*pc, *sp], parents_children=pc, spouses=sp,
                 params={"pcs": tuple(pcs), "sps": tuple(sps)},
                 notes=tuple(notes))


def _mb_to_pc_search(run: Run, correct_mb, max_k, selection="bonferroni") -> Found:
    notes = []
    pc, mb, _ = _mb_to_pc(run.tester, run.target, run.candidates, correct_mb,
                          _capped(max_k, run.max_sx, 0), run.ledger, notes, run.max_sx,
                          selection)
    run.trace.extend(("mb_to_pc", "keep", x, None) for x in pc)
    return Found(pc, parents_children=pc, params={"blanket": tuple(mb)},
                 notes=tuple(notes))


MBOR = Learner("mbor", "ci", "Markov boundary search using the OR condition (MBOR)",
               search=_mbor_search, check=_check_args)
MB_TO_PC = Learner("mb_to_pc", "ci", "parents and children from a Markov blanket (MBtoPC)",
                   search=_mb_to_pc_search, check=_check_args)


@MBOR.front_end
def mbor(data, target, test="auto", alpha=0.05, *, correct_mb=inter_iamb, max_k=None,
         selection="bonferroni", backend=None, candidates=None, whitelist=None,
         blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
         **test_args) -> MBResult:
    """Markov boundary search using the OR condition (MBOR, Algorithm 1).

    Phase I builds a superset MBS = PCS u SPS with conditioning sets of at
    most one (:func:`pc_superset`) and two (:func:`sp_superset`) variables,
    and restricts the data to MBS u {T}. Phase II finds the parents and
    children with :func:`mb_to_pc`, adding X in PCS whenever T is in
    MBtoPC(X) (the OR condition). Phase III adds Y in MBtoPC(X) \\ (PC u T),
    X in PC, when T and Y are dependent given Z u {X}, Z the smallest set in
    MBS \\ {T, Y} separating them.

    Parameters
    ----------
    data : DataFrame, ndarray, Dataset or BayesianNetwork (with test="oracle")
    target : str or int
    test : str
        A CI test from :data:`mbstat.TESTS` ("auto", the default, gives "g2" on discrete
        data, as in the paper; see :func:`mbstat.iamb`).
    alpha : float
        Significance level.
    correct_mb : {inter_iamb, iamb}
        The weak Markov-blanket learner of MBtoPC (paper: Inter-IAMB).
    selection : {"bonferroni", "none"}
        The level at which CorrectMB admits the strongest candidate: alpha / m, m every
        candidate outside the blanket (default: the supersets it searches were chosen
        from all of them), or alpha as in the paper ("none"; 1.5 false members among 50
        independent candidates at 500 rows). The supersets and the spouse tests stay
        at alpha.
    max_k : int or None
        Largest separating set searched by MBtoPC and Phase III (bnlearn's
        ``max.sx``). None (default): sizes 0, 1, 2, ... while the subsets
        examined number at most ``mbstat.algorithms.mbor.MAX_SUBSETS``
        (10,000): every subset of a pool of up to 13 variables, as in the
        paper and exact under the oracle; sizes up to 3 of 30, 2 of 140. When
        that bound ends a search with a variable still unseparated, a warning
        and a note in ``result.notes`` say so. An integer searches exactly up
        to that size, whatever the cost (pyCausalFS uses 3; with the oracle,
        max_k=3 misses separating sets on dense DAG nodes).
    backend, candidates, whitelist, blacklist, discretize, na, progress, **test_args
        As in :func:`mbstat.iamb`.
    max_sx : int, optional
        The largest conditioning set of any test (bnlearn's ``max.sx``), at
        least 2 (SPSuperSet conditions on two variables): CorrectMB's growth
        stops there and separating sets are searched up to ``max_sx - 1``
        variables (a spouse is tested given its separating set and a child).

    Returns
    -------
    MBResult
        ``parents_children`` and ``spouses`` separately; ``params`` also
        holds the supersets ``pcs`` and ``sps``.

    Notes
    -----
    Phase III's "minimal Z" is the first separating set found by size, then
    PC members first, then MBS order; it depends only on Y, so it is searched once per Y.
    If none has at most ``max_k`` variables, Y is not added.
    """


def pc_superset(data, target, test="auto", alpha=0.05, *, backend=None, candidates=None,
                discretize=None, na="raise", **test_args) -> Superset:
    """PCSuperSet (MBOR's Algorithm 2): a superset of the parents and children.

    Removes X when T _||_ X, then when T _||_ X | Y for some Y still in the
    superset, and records the separating set dSep(X) (empty or {Y}).
    Reading of the nested loop: batched by Y (candidate order), each Y still in
    PCS is tested as the conditioning variable of all other members at once.

    Returns
    -------
    Superset
        ``features`` (PCS) and ``dsep`` for every candidate removed.
    """
    check_alpha(alpha)
    tester, target, cands = prepare(data, target, test=test, alpha=alpha, backend=backend,
                                    discretize=discretize, na=na, test_args=test_args,
                                    candidates=candidates)
    pcs, dsep = _pc_superset(tester, target, cands, [])
    return Superset("PCS", target, tuple(pcs), dsep, tester.n_tests, tester.log)


def sp_superset(data, target, pcs=None, dsep=None, test="auto", alpha=0.05, *, backend=None,
                candidates=None, discretize=None, na="raise", **test_args) -> Superset:
    """SPSuperSet (MBOR's Algorithm 3): a superset of the spouses.

    Parameters
    ----------
    pcs : Superset, iterable of features or None
        The result of :func:`pc_superset` (None: computed here), or a
        parents-and-children superset given with ``dsep``.
    dsep : mapping feature -> iterable of features, optional
        With a plain ``pcs``: the separating set of every candidate not in it.

    Returns
    -------
    Superset
        ``features`` (SPS) and, in ``dsep``, the {X, Z} that pruned a candidate.
    """
    check_alpha(alpha)
    tester, target, cands = prepare(data, target, test=test, alpha=alpha, backend=backend,
                                    discretize=discretize, na=na, test_args=test_args,
                                    candidates=candidates)
    ds = tester.dataset
    if pcs is None:
        if dsep is not None:
            raise ValueError("dsep is given without pcs")
        pcs, dsep = _pc_superset(tester, target, cands, [])
    elif isinstance(pcs, Superset):
        if pcs.kind != "PCS" or pcs.target != target:
            raise ValueError(f"pcs must be the pc_superset of {target!r}; got {pcs!r}")
        pcs, dsep = list(pcs.features), dict(pcs.dsep)
    else:
        if isinstance(pcs, str) or not hasattr(pcs, "__iter__"):
            raise TypeError(f"pcs must be a Superset or an iterable of features; got {pcs!r}")
        if dsep is None or not hasattr(dsep, "items"):
            raise TypeError("dsep (a mapping feature -> separating set) is needed with a "
                            "plain pcs")
        pcs = [ds.names[j] for j in ds.indices(pcs, "pcs")]
        dsep = {ds.names[ds.index(k, "dsep")]: tuple(ds.names[j] for j in ds.indices(v, "dsep"))
                for k, v in dsep.items()}
    inside = set(pcs)
    outside = [c for c in cands if c not in inside]
    missing = [c for c in outside if c not in dsep]
    if set(pcs) - set(cands):
        raise ValueError(f"pcs: {sorted(set(pcs) - set(cands))} are not candidates")
    if missing:
        raise ValueError(f"dsep: no separating set for {missing[:10]}")
    sps, pruned = _sp_superset(tester, target, cands, pcs, dsep, [])
    return Superset("SPS", target, tuple(sps), pruned, tester.n_tests, tester.log)


@MB_TO_PC.front_end
def mb_to_pc(data, target, test="auto", alpha=0.05, *, correct_mb=inter_iamb, max_k=None,
             selection="bonferroni", backend=None, candidates=None, whitelist=None,
             blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
             **test_args) -> MBResult:
    """MBtoPC (MBOR's Algorithm 4): parents and children from a Markov blanket.

    Runs ``correct_mb`` (Inter-IAMB by default), then removes each member X
    for which some Z in MB \\ X (searched by increasing size up to
    ``max_k``; None: as in :func:`mbor`) makes it independent of the target.

    Returns
    -------
    MBResult
        ``selected`` and ``parents_children`` are the PC set (``spouses`` is
        None: MBtoPC does not find them); ``params["blanket"]`` is CorrectMB's
        blanket, whose members outside PC the evidence shows separated.
    """
