"""TIE*: every Markov boundary of a target (Statnikov, Lytkin, Lemeire & Aliferis 2013,
"Algorithms for discovery of multiple Markov boundaries", JMLR 14, 499-566).

TIE* (the paper's Figure 3) is generative: a base learner X of one Markov boundary, a
procedure Y that embeds the data in fewer variables, a criterion Z that checks that the
boundary learned on the embedded data is a boundary of the whole. Its lines:

1. learn a Markov boundary M of T with X on all the variables V; 2. output M;
3. repeat: 4. Y generates an embedded data set D_e on V \\ G; 5. X learns M_new on it;
6. if Z says M_new is a Markov boundary of T in V, output it; 7. until Y has no more.

Y is IGS (Incremental Generation of Subsets): G is the smallest subset of the
variables of the boundaries found so far that (i) was not considered before and (ii)
holds no subset whose removal gave an M_new rejected by Z (removing more cannot give a
boundary back). Z is Criterion Independence: M_new is a Markov boundary when
T _||_ M \\ M_new | M_new (M_new then carries all of M's information about T; it is
minimal as X's boundary in the embedded distribution).
"""
from __future__ import annotations

import heapq

import numpy as np
import pandas as pd

from .._validation import check_int
from ..results.equivalent import BOUNDARY_TEST_COLUMNS, EquivalentResult
from ._equivalence import (DETERMINISM_TOL, determinism_frame, determinism_notes,
                           determining as _determining, equivalence_frame)
from .learners import LEARNERS, Found, Learner, Run

__all__ = ["tie"]

#: Learners that cannot be TIE*'s base (they are not single-boundary CI learners).
NOT_BASES = ("ses", "tie")


def _check_args(base="iamb_fdr", base_args=None, max_boundaries=100, max_removed=None,
                max_runs=2000, without_determining=False) -> dict:
    if not isinstance(base, str) or base not in LEARNERS or LEARNERS[base].kind != "ci" \
            or base in NOT_BASES:
        bases = [n for n, r in LEARNERS.items() if r.kind == "ci" and n not in NOT_BASES]
        raise ValueError(f"base must name a CI learner of the learner table ({bases}); got "
                         f"{base!r}")
    if base_args is not None and not hasattr(base_args, "items"):
        raise TypeError("base_args must be a mapping of the base learner's own arguments")
    row = LEARNERS[base]
    args = dict(base_args or {})
    unknown = sorted(set(args) - set(row.parameters))
    if unknown:
        raise TypeError(f"base_args: {unknown} are not arguments of {base} (its own: "
                        f"{list(row.parameters) or 'none'}; the test, alpha and the hard "
                        "priors are tie's)")
    own = row.check(**args) if row.check is not None else args
    own.pop("progress", None)
    return {"base": base, "base_args": own,
            "max_boundaries": check_int("max_boundaries", max_boundaries, low=1),
            "max_removed": check_int("max_removed", max_removed, low=1, allow_none=True),
            "max_runs": check_int("max_runs", max_runs, low=0),
            "without_determining": _check_bool("without_determining", without_determining)}


def _check_bool(name, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def _criterion(run: Run, first, learned):
    """Criterion Independence (Figure 5 of the paper): T _||_ M \\ M_new | M_new.

    Reading chosen: each variable of M \\ M_new is tested on its own given M_new (the
    paper tests the set); with d-separation (and D-separation) a set is separated
    exactly when each of its variables is, and on discrete data the smaller tables keep
    the power that the joint table (the product of the levels) loses. Accepted when
    every test finds independence. Returns (accepted, the deciding result or None):
    the strongest dependence (rejected) or the weakest (accepted)."""
    rest = [x for x in first if x not in learned]
    if not rest:
        return True, None
    if run.max_sx is not None and len(learned) > run.max_sx:
        return False, None  # the test would condition on more than max_sx: not made
    batch = run.tester.test_many(rest, run.target, tuple(learned), phase="tie: criterion")
    independent = np.asarray(batch.independent)
    logp = np.where(np.asarray(batch.skipped), 0.0, np.asarray(batch.log_pvalue))
    if independent.all():
        return True, batch[int(np.argmin(logp))]
    return False, batch[int(np.argmin(np.where(independent, np.inf, logp)))]


def _classes(first, boundaries, evidence):
    """The equivalence classes of the members of ``first``: y can stand for x when two
    boundaries found differ by x for y alone; classes are the connected sets of that
    relation (each starts with its member of ``first``). Returns (classes, rows of the
    equivalences table: the criterion test of the boundary that put y in x's place)."""
    parent: dict = {}

    def find(v):
        while parent.setdefault(v, v) != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    rows = []
    sets = [frozenset(b) for b in boundaries]
    for j, b2 in enumerate(sets):
        for i in range(j):
            b1 = sets[i]
            if len(b1) == len(b2) and len(b1 - b2) == 1:
                (x,), (y,) = tuple(b1 - b2), tuple(b2 - b1)
                if find(x) != find(y):
                    parent[find(y)] = find(x)
                    res = evidence.get(boundaries[j])
                    if res is not None:
                        rows.append((y, x, "criterion", res))
    members = [v for b in boundaries for v in b]
    classes = []
    for x in first:
        root = find(x)
        classes.append(tuple(dict.fromkeys([x, *[v for v in members if v != x
                                                 and find(v) == root]])))
    return classes, rows


class _Enumeration:
    """TIE*'s lines 3-7 for one first boundary: IGS over the variables of the boundaries
    found, the base learner on each embedded candidate set (a Run of its own on the
    run's tester: its decisions stay there, its tests are cached), Criterion
    Independence against ``first``."""

    def __init__(self, run: Run, row, own, candidates, first, max_boundaries, max_removed,
                 max_runs, label="", removed_is_cap=True):
        self.run, self.row, self.own = run, row, own
        # whether max_removed is the caller's cap (its removal sets not tried make the
        # enumeration incomplete) or the reading chosen for the reduced pass (single swaps)
        self.removed_is_cap = removed_is_cap
        self.dropped: set = set()  # removal sets left out as larger than max_removed
        self.candidates = list(candidates)
        self.first = tuple(first)
        self.max_boundaries, self.max_removed, self.max_runs = (max_boundaries, max_removed,
                                                                max_runs)
        self.label = label
        self.boundaries = [self.first]
        self.seen = {frozenset(self.first)}
        self.evidence: dict = {}
        self.tests: list = []
        self.order: dict = {}
        self.good: list = []
        self.bad: list = []
        self.heap: list = []
        self.queued: set = set()
        self.n_runs = 0
        self.stopped = ""
        self.fixed = set(run.whitelist)

    def push(self, g) -> None:
        if self.max_removed is not None and len(g) > self.max_removed:
            self.dropped.add(g)
            return
        if g in self.queued:
            return
        self.queued.add(g)
        heapq.heappush(self.heap, (len(g), tuple(sorted(self.order[v] for v in g)), g))

    def grow_union(self, b) -> None:
        for v in b:
            if v in self.order or v in self.fixed:
                continue
            self.order[v] = len(self.order)
            self.push(frozenset([v]))
            for g in self.good:
                self.push(g | {v})

    def pruned(self, g) -> bool:
        """IGS (ii): g holds a removal set already rejected (no boundary comes back)."""
        return any(b <= g for b in self.bad)

    def run_all(self) -> None:
        """Lines 3-7 until IGS has no more removal sets (or a cap); a KeyboardInterrupt
        propagates with what was found kept in the object. A cap that leaves a removal
        set IGS would still try sets ``stopped`` (the enumeration is then incomplete):
        max_boundaries or max_runs reached with such a set queued, or a set larger than
        max_removed (the caller's) not ruled out by IGS (ii) at the end."""
        self.grow_union(self.first)
        run = self.run
        while self.heap:
            cap = ""
            if len(self.boundaries) >= self.max_boundaries:
                cap = (f"max_boundaries = {self.max_boundaries} boundaries found; raise "
                       "max_boundaries to search for more")
            elif self.n_runs >= self.max_runs:
                cap = (f"max_runs = {self.max_runs} embedded runs made; raise max_runs to "
                       "search for more")
            if cap:
                if any(not self.pruned(h[2]) for h in self.heap):
                    self.stopped = cap
                    return
                break  # every set left holds a rejected one: nothing more to find
            _, _, g = heapq.heappop(self.heap)
            if self.pruned(g):  # IGS (ii)
                continue
            self.n_runs += 1
            sub = Run(run.tester, run.target, [c for c in self.candidates if c not in g],
                      run.start, whitelist=run.whitelist, max_sx=run.max_sx)
            learned = tuple(self.row.search(sub, **self.own).blanket)
            accepted, res = _criterion(run, self.first, learned)
            new = accepted and frozenset(learned) not in self.seen
            removed = sorted(g, key=self.order.get)
            self.tests.append((self.label + ", ".join(removed), ", ".join(learned),
                               "" if res is None else ", ".join(res.x),
                               "" if res is None else ", ".join(res.z),
                               np.nan if res is None else float(res.statistic),
                               np.nan if res is None else float(res.df),
                               np.nan if res is None else float(res.pvalue),
                               np.nan if res is None else float(res.log_pvalue), accepted,
                               new))
            if not accepted:
                self.bad.append(g)
                continue
            if new:
                self.seen.add(frozenset(learned))
                self.boundaries.append(learned)
                if res is not None:
                    self.evidence[learned] = res
                self.grow_union(learned)
            self.good.append(g)
            for v in self.order:  # the extensions of an accepted removal (IGS by size)
                if v not in g:
                    self.push(g | {v})
        if self.removed_is_cap and any(not self.pruned(g) for g in self.dropped):
            self.stopped = (f"max_removed = {self.max_removed}: removal sets of more "
                            "variables were not tried; raise max_removed (or None: no "
                            "limit) to search for more")


def _search(run: Run, base="iamb_fdr", base_args=None, max_boundaries=100, max_removed=None,
            max_runs=2000, without_determining=False) -> Found:
    """TIE* with IGS and Criterion Independence (module docstring), on the run's one
    tester: the base learner's search runs on the run (its evidence is the result's),
    then :class:`_Enumeration`; with ``without_determining``, again on the candidates
    without the variables that alone determine the target."""
    row = LEARNERS[base]
    own = dict(base_args or {})
    found = row.search(run, **own)
    first = tuple(found.blanket)
    target = run.target
    notes = list(found.notes)
    caps = dict(max_boundaries=max_boundaries, max_removed=max_removed, max_runs=max_runs)
    main = _Enumeration(run, row, own, run.candidates, first, **caps)
    reduced, determining = None, []
    complete = True
    try:
        main.run_all()
        ds = run.tester.dataset
        # the boundaries of one variable that alone determines the target (entropies only)
        determining = _determining(ds, target, main.boundaries, DETERMINISM_TOL)
        if without_determining:
            while determining:  # TIE* again without them (until none determines alone)
                pool = [c for c in run.candidates if c not in determining]
                sub = Run(run.tester, target, pool, run.start, whitelist=run.whitelist,
                          max_sx=run.max_sx)
                m2 = tuple(row.search(sub, **own).blanket)
                # single swaps only (max_removed = 1): the reduced pass answers "what else
                # tells about the target", at a bounded cost
                reduced = _Enumeration(run, row, own, pool, m2,
                                       **{**caps, "max_removed": 1},
                                       label="(without " + ", ".join(determining) + ") ",
                                       removed_is_cap=False)
                reduced.run_all()
                more = [v for v in _determining(ds, target, reduced.boundaries,
                                                DETERMINISM_TOL) if v not in determining]
                if not more:
                    break
                determining += more
    except KeyboardInterrupt:
        complete = False
        n_runs = main.n_runs + (reduced.n_runs if reduced is not None else 0)
        notes.append(f"Note: interrupted (KeyboardInterrupt) after {n_runs} embedded runs: "
                     f"the {len(main.boundaries)} boundaries found so far are listed.")
    for e, which in ((main, ""), (reduced, " without the determining variables")):
        if e is not None and e.stopped:  # a cap left removal sets untried: incomplete
            complete = False
            notes.append(f"Note: the search for more boundaries{which} stopped early "
                         f"({e.stopped}); there may be more (the result is marked "
                         "incomplete).")
    boundaries = main.boundaries
    classes, rows = _classes(first, boundaries, main.evidence)
    pairs = [(a, (b,)) for c in classes for a in c for b in c if a != b]
    pairs += [(target, tuple(b)) for b in boundaries if 0 < len(b) <= 3]
    det = determinism_frame(run.tester.dataset, pairs)
    notes += list(determinism_notes(det, target))
    if determining:
        one = len(determining) == 1
        said = (f"Note: {', '.join(determining)} alone determine{'s' if one else ''} "
                f"{target} (a relabeling or a finer coding of it): "
                f"{'it is' if one else 'each is'} a Markov boundary on its own, and "
                f"shields {target} from every other variable.")
        if reduced is not None:
            listed = "; ".join("{" + ", ".join(b) + "}" for b in reduced.boundaries[:5])
            n2 = len(reduced.boundaries)
            said += (f" Without {'it' if one else 'them'}, TIE* finds {n2} "
                     f"{'boundary' if n2 == 1 else 'boundaries'} of {target} among the other "
                     f"variables (.reduced_boundaries): {listed}{'; ...' if n2 > 5 else ''}.")
        else:
            said += (" without_determining=True searches the boundaries among the other "
                     "variables (.reduced_boundaries).")
        notes.append(said)
    frame = pd.DataFrame.from_records(main.tests + (reduced.tests if reduced else []),
                                      columns=BOUNDARY_TEST_COLUMNS)
    frame = frame.astype({"statistic": float, "df": float, "pvalue": float,
                          "log_pvalue": float, "accepted": bool, "new": bool})
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="run")
    return Found(list(first), complete=complete, parents_children=found.parents_children,
                 spouses=found.spouses, notes=tuple(notes), n_skipped=found.n_skipped,
                 params={"base_args": {k: v for k, v in own.items() if v is not None} or None},
                 extra={"classes": tuple(classes), "boundaries": tuple(boundaries),
                        "n_boundaries": len(boundaries),
                        "equivalences": equivalence_frame(rows), "boundary_tests": frame,
                        "deterministic": det, "max_boundaries": max_boundaries,
                        "determining": tuple(determining),
                        "reduced_boundaries": tuple(reduced.boundaries)
                        if reduced is not None else ()})


TIE = Learner("tie", "ci", "all Markov boundaries (TIE*, base {base})", search=_search,
              check=_check_args, result=EquivalentResult)


@TIE.front_end
def tie(data, target, test="auto", alpha=0.05, *, base="iamb_fdr", base_args=None,
        max_boundaries=100, max_removed=None, max_runs=2000, without_determining=False,
        backend=None, candidates=None,
        whitelist=None, blacklist=None, max_sx=None, discretize=None, na="raise",
        progress=None, **test_args) -> EquivalentResult:
    """All Markov boundaries of the target (TIE*; Statnikov, Lytkin, Lemeire & Aliferis
    2013, JMLR 14, Figure 3, with IGS and Criterion Independence).

    1. The base learner finds a boundary M on all the variables (it is ``blanket``,
    with the base's evidence); 2-7. for removal sets G taken smallest first among the
    variables of the boundaries found so far (IGS: never one that holds a removal
    already rejected), the base learner reruns without G, and its boundary M_new is
    kept when T is independent of each variable of M \\ M_new given M_new (Criterion
    Independence). Every run shares one tester: a test asked again is not redone.

    Parameters
    ----------
    data, target, test, alpha
        As in :func:`mbstat.iamb`; ``alpha`` is the base learner's level and the
        criterion's.
    base : str
        The base learner: any CI learner of :data:`mbstat.LEARNERS` (not ``ses`` nor
        ``tie``). Default "iamb_fdr" (Peña 2008): sound whenever the embedded
        distributions satisfy the composition property (TIE*'s requirement on X,
        Theorem 4 of the paper, which the paper meets with semi-interleaved HITON-PC
        or IAMB), a blanket at a controlled false discovery rate, and cheap to rerun on
        one tester (each rerun's first rounds are the cached tests of the first);
        TIE*'s first boundary is then iamb_fdr's. ``mmmb`` (or ``hiton_mb``) reruns
        a neighbourhood search per member, at a higher cost per run.
    base_args : mapping, optional
        The base learner's own arguments (e.g. ``{"fdr": "bh"}``, ``{"max_k": 2}``).
    max_boundaries : int
        Stop once this many boundaries are found.
    max_removed : int, optional
        The largest removal set G tried (default: no limit, as the paper).
    max_runs : int
        Stop after this many embedded runs.

        A cap that stops the enumeration while IGS still has removal sets to try
        (queued, or larger than ``max_removed`` and not ruled out by a rejected
        subset) marks the result incomplete (``complete=False``) with a note naming
        the cap; the boundaries found are then a subset of TIE*'s. A KeyboardInterrupt
        returns the boundaries found so far, also marked incomplete.
    without_determining : bool
        When a boundary is one variable that alone determines the target (its
        conditional entropy given it is at most 1% of its own: a relabeling of the
        target, a finer coding of it, a leak), that variable is a Markov boundary on its
        own and shields the target from everything else; such variables are always
        named (``determining``, a note). With True, TIE* runs again without them and
        reports those boundaries apart (``reduced_boundaries``): what else tells about
        the target. Reading chosen, for cost: that second pass tries removal sets of one
        variable only (single swaps); the first pass is TIE* in full. Needs the data's
        rows (not with an oracle).

        Default False, on principle (re-examined with Statnikov et al. 2013). TIE*'s
        output (Figure 3, lines 2 and 6) is all and only the Markov boundaries of T in
        V (the paper's correctness theorem: when X finds a Markov boundary of every
        embedded distribution, Y generates the ones needed and Z recognizes a boundary
        of the original), and a Markov boundary is a minimal Markov blanket. Where a
        variable D alone determines T, {D} is a Markov blanket, and a blanket without D
        must itself determine T (T independent of D given it: H(T | M) = H(T | M, D)
        = 0). The graph's blanket of such a node holds D (its parent or child), so it
        is a blanket but not minimal: not a Markov boundary, and not a set TIE*'s
        generative step should reach. Line 5 with G = {D} does
        learn the embedded boundary without D, and line 6 rejects it (Criterion
        Independence: T depends on D given it), as it should; the second pass reports
        what line 6 rejected, boundaries of T in V without D (what else tells about T
        once D is set aside), which is another question, asked with True. On hailfinder
        the nine nodes a relabeling or a function determines are all such: with every
        test right (a D-separation oracle of its 0/1 tables) the graph's blanket is a
        Markov boundary for none of them, and TIE* on the data reports the reference's
        boundaries for all nine (``benchmarks/equivalent.py``; the figures with and
        without the second pass are in the user guide's "Equivalent Markov
        boundaries"). The second pass's boundaries are larger sets (without D the
        boundary of T is D's, proxies of D included) whose last members carry little:
        on hailfinder at 5,000 rows the members of the graph's blanket it misses are
        spouses tested before their common child is in the set, or children whose
        information the proxies already hold (the population's I(T; x | z) of the
        excluding test: zero for a spouse, at most 6e-3 nats for a child, 1.2e-4 for
        ScnRelPlFcst's child given seven children of Scenario, which hold 98.8% of its
        entropy): power, not determinism (``benchmarks/equivalent.py --explain``).
    backend, candidates, whitelist, blacklist, max_sx, discretize, na, progress, **test_args
        As in :func:`mbstat.iamb`. Whitelisted features are in every boundary (never
        removed); blacklisted ones in none.

    Returns
    -------
    EquivalentResult
        ``boundaries`` (the first is ``blanket``) and ``n_boundaries``;
        ``classes``: for each member of the first, the variables that replace it in
        another boundary found (two boundaries differing by that swap alone);
        ``equivalences``: the criterion test of each swap; ``boundary_tests``: every
        embedded run (removed, learned, the criterion test, accepted, new);
        ``deterministic``: the relations among class members, and of the target given
        a boundary of up to three variables, that are (near) deterministic.
    """
