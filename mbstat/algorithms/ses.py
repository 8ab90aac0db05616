"""SES: statistically equivalent signatures (Lagani, Athineou, Farcomeni, Tsagris &
Tsamardinos 2017, "Feature selection with the R package MXM: discovering statistically
equivalent feature subsets", J. Stat. Softw. 80(7); Tsamardinos, Lagani & Pappas 2012).

The reading followed is MXM's code (``R/SES.R`` -> ``R/InternalSES.R`` with
``R/IdentifyEquivalence.R``, ``R/identifyTheEquivalent.R``, ``R/max_min_assoc.R``,
``R/min_assoc.R``, ``R/compare_p_values.R``; MXM 1.5.5), line by line below.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from .._validation import check_choice, check_int
from ..results.equivalent import EquivalentResult, count_boundaries, generate_boundaries
from ._equivalence import (DETERMINISM_TOL, determinism_frame, determinism_notes,
                           determining as _determining, equivalence_frame)
from ._selection import check_selection, entry_level
from .learners import Found, Learner, Run

__all__ = ["ses"]

SYMMETRY = ("none", "and")


def _check_args(max_k=3, max_boundaries=100, symmetry="none", selection="bonferroni",
                without_determining=False) -> dict:
    if not isinstance(without_determining, (bool, np.bool_)):
        raise TypeError(f"without_determining must be True or False; got "
                        f"{without_determining!r}")
    return {"max_k": check_int("max_k", max_k, low=1, allow_none=True),
            "max_boundaries": check_int("max_boundaries", max_boundaries, low=1),
            "symmetry": check_choice("symmetry", symmetry, SYMMETRY),
            "selection": check_selection(selection),
            "without_determining": bool(without_determining)}


def _weaker(p_new, s_new, p_old, s_old) -> bool:
    """Whether a test (log p, statistic) is weaker evidence than the one kept: MXM's
    ``!compare_p_values(new, old)`` (larger p-value; equal p-values: not a larger
    statistic). A NaN keeps the old one (compare_p_values returns FALSE on NA; the
    negation then replaces: MXM's min_assoc does; we keep the old value instead, so a
    test that could not be computed never decides)."""
    if p_new != p_new or p_old != p_old:
        return False
    if p_new == p_old:
        return not (s_new > s_old)
    return p_new > p_old


def _stronger(p_new, s_new, p_old, s_old) -> bool:
    """MXM's ``compare_p_values(new, old)``: a smaller p-value, or equal and a larger
    statistic."""
    if p_new != p_new or p_old != p_old or s_new != s_new or s_old != s_old:
        return False
    if p_new == p_old:
        return s_new > s_old
    return p_new < p_old


class _SES:
    """One SES search on a run's tester (target ``target``, candidates ``pool``).

    ``record`` (the run's own target) writes the decisions to the run's ledger and trace;
    the searches of other variables (symmetry="and") keep their own."""

    def __init__(self, run: Run, target, pool, max_k, record: bool, selection="none"):
        self.run, self.tester, self.target = run, run.tester, target
        self.pool = list(pool)
        self.selection = selection  # the level of entry (see _selection)
        self.cap = max_k if run.max_sx is None else (
            run.max_sx if max_k is None else min(max_k, run.max_sx))
        self.record = record
        self.logp: dict = {}
        self.stat: dict = {}
        self.weakest: dict = {}  # the test of the weakest association kept
        self.queues = {x: [x] for x in self.pool}
        self.selected: list = []  # in order of addition
        self.remaining: list = []
        self.last = None
        self.equivalences: list = []  # (member, stands_for, phase, result)
        self.fixed = tuple(run.whitelist) if record else ()
        self.capped = False

    def phase(self, name):
        return name if self.record else f"ses({self.target}): {name}"

    def keep(self, x, result, phase):
        if self.record:
            self.run.ledger.keep(x, result, phase)

    def exclude(self, x, result, phase):
        if self.record:
            self.run.ledger.exclude(x, result, phase)
            self.run.trace.append((phase, "remove", x, result))

    def update(self, x, result) -> None:
        """MXM: ``if (compare_p_values(pvalues[cvar], cur)) pvalues[cvar] = cur``: keep
        the weakest association seen (the max-min association)."""
        lp = 0.0 if result.skipped else float(result.log_pvalue)
        st = float(result.statistic)
        if x not in self.logp or _weaker(lp, st, self.logp[x], self.stat[x]):
            self.logp[x], self.stat[x], self.weakest[x] = lp, st, result

    def subsets(self, cs):
        """IdentifyEquivalence / min_assoc: the subsets of ``cs`` that hold the last
        variable added, by size 1..k (k = min(max_k, |cs|)), the others in
        ``nchoosek`` order (``tempCS = setdiff(cs, lastvar)``; ``rbind(subset, lastvar)``).
        """
        others = [v for v in cs if v != self.last]
        k = len(cs) if self.cap is None else min(self.cap, len(cs))
        if self.cap is not None and len(cs) > self.cap:
            self.capped = True
        for size in range(1, k + 1):
            for combo in combinations(others, size - 1):
                yield (*combo, self.last)

    # ------------------------------------------------------------------ the search
    def run_search(self):
        """InternalSES.R: the univariate tests, then the loop of IdentifyEquivalence and
        max_min_assoc, then a last IdentifyEquivalence."""
        tester, target = self.tester, self.target
        free = [x for x in self.pool if x not in self.fixed]
        if self.pool:
            batch = tester.test_many(self.pool, target, (), phase=self.phase("univariate"))
            for i, x in enumerate(self.pool):
                self.update(x, batch[i])
            dependent = ~np.asarray(batch.independent)
        else:
            dependent = np.zeros(0, dtype=bool)
        for i, x in enumerate(self.pool):  # remainingVars[pvalues > threshold] = 0
            if x in self.fixed:
                continue
            if dependent[i]:
                self.remaining.append(x)
            else:
                self.exclude(x, batch[i], self.phase("univariate"))
        for x in self.fixed:  # whitelisted: selected first, in the order given
            self.add(x, None)
        self.n_free = len(free)
        if not self.selected:
            if not self.remaining:  # min(pvalues) > threshold: no associations
                return
            # which.min(pvalues): the smallest p-value, the first in candidate order
            position = {x: i for i, x in enumerate(free)}
            first = min(self.remaining, key=lambda x: (self.logp[x], position[x]))
            if not self.enters(first):
                return
            self.add(first, batch[self.pool.index(first)])
        while self.remaining:  # loop = any(as.logical(remainingVars))
            self.identify_equivalence()
            best = self.max_min_assoc()
            if best is not None:  # selectedPvalue <= threshold: add it
                if not self.enters(best):
                    break
                self.add(best, None)
        self.identify_equivalence()  # "lets find the variables to be discarded"

    def enters(self, best) -> bool:
        """``selection``: whether the strongest remaining variable ``best`` enters, its
        max-min association's p-value at most alpha / m, m the free candidates outside the
        selected set (those removed included: the step chose among them); MMPC's rule
        (:func:`mbstat.mmpc`). When it does not, the remaining variables stay out (the
        forward phase ends), each excluded by its weakest test with the margin
        log(level) - log p at its step-down level (alpha / m, alpha / (m - 1), ...)."""
        m = self.n_free - sum(1 for x in self.selected if x not in self.fixed)
        level = entry_level(self.tester.alpha, m, self.selection)
        if self.logp[best] <= level:
            return True
        position = {x: i for i, x in enumerate(self.pool)}
        refused = sorted(self.remaining, key=lambda x: (self.logp[x], -self.stat[x],
                                                        position[x]))
        for rank, x in enumerate(refused):
            self.remaining.remove(x)
            if self.record:
                res = self.weakest[x]
                level = entry_level(self.tester.alpha, m - rank, self.selection)
                self.run.ledger.exclude(x, res, "entry", criterion=level - self.logp[x])
                self.run.trace.append(("entry", "remove", x, res))
        return False

    def add(self, x, result) -> None:
        if x in self.remaining:
            self.remaining.remove(x)
        self.selected.append(x)
        self.last = x
        if self.record:
            self.run.trace.append((self.phase("forward"), "add", x, result))
            if x not in self.fixed:  # its max-min association: the weakest test so far
                self.keep(x, self.weakest[x], self.phase("forward"))
            else:
                self.run.ledger.keep(x, None, "whitelist")

    def identify_equivalence(self) -> None:
        """IdentifyEquivalence.R: every selected or remaining variable but the last added
        (lines 3-11), in column order, is tested given the subsets of the selected ones
        without it (``cs``, taken when it is visited: line 14) that hold the last added
        (lines 19-28); at the first independence it leaves for good (lines 46-48) and
        identifyTheEquivalent looks for the member of that separating set it can stand
        for (line 49).

        Batching, same tests and same decisions as MXM's order: the remaining variables
        visited between two selected ones see the same ``cs`` (a remaining variable
        changes no ``cs``), so they are tested together, one batch per subset; each one's
        tests stop at its first independence as in MXM's loop. Their exclusions and
        identifyTheEquivalent calls are then applied in column order (the queues grow in
        MXM's order)."""
        if self.last is None:
            return
        order = {x: i for i, x in enumerate(self.pool)}
        visit = sorted({*self.selected, *self.remaining}, key=order.get)
        pending: list = []
        for cvar in visit:
            if cvar in self.remaining:
                pending.append(cvar)
                continue
            self._remaining_block(pending, order)
            pending = []
            if cvar == self.last or cvar in self.fixed or cvar not in self.selected:
                continue
            cs = [v for v in sorted(self.selected, key=order.get) if v != cvar]
            for z in self.subsets(cs):
                res = self.tester.test(cvar, self.target, z, phase=self.phase("equivalence"))
                self.update(cvar, res)
                if res.independent:
                    self.selected.remove(cvar)
                    self.exclude(cvar, res, self.phase("equivalence"))
                    self.identify_the_equivalent(cvar, z)
                    break
                self.keep(cvar, res, self.phase("equivalence"))
        self._remaining_block(pending, order)

    def _remaining_block(self, block, order) -> None:
        """The remaining variables of ``block`` (consecutive in column order, no selected
        one between them) given the subsets of the selected ones, one batch per subset."""
        if not block:
            return
        cs = sorted(self.selected, key=order.get)
        open_ = list(block)
        left = {}
        for z in self.subsets(cs):
            if not open_:
                break
            batch = self.tester.test_many(open_, self.target, z,
                                          phase=self.phase("equivalence"))
            independent = np.asarray(batch.independent)
            for i, cvar in enumerate(list(open_)):
                res = batch[i]
                self.update(cvar, res)
                if independent[i]:
                    open_.remove(cvar)
                    left[cvar] = (res, z)
        for cvar in block:  # MXM's order: one variable after the other
            if cvar in left:
                res, z = left[cvar]
                self.remaining.remove(cvar)
                self.exclude(cvar, res, self.phase("equivalence"))
                self.identify_the_equivalent(cvar, z)

    def identify_the_equivalent(self, cvar, z) -> None:
        """identifyTheEquivalent.R: for each w of the separating set z (in its order), w
        against the target given z without w and with cvar; at the first independence
        cvar (with the variables already equivalent to it) joins w's queue: cvar can
        stand for w."""
        for w in z:
            if w == cvar:
                continue
            zprime = (*[v for v in z if v != w], cvar)
            res = self.tester.test(w, self.target, zprime, phase=self.phase("equivalent"))
            if res.independent:
                self.queues[w].extend(self.queues[cvar])
                self.equivalences.append((cvar, w, "equivalent", res))
                break

    def max_min_assoc(self):
        """max_min_assoc.R / min_assoc.R: each remaining variable's weakest association
        over the subsets with the last added (the tests were made by
        identify_equivalence: no new test), the variable of the strongest such association
        is returned (compare_p_values: smaller p, then larger statistic; the first in
        column order on ties); those independent given some subset left already."""
        best, best_p, best_s = None, 2.0, 0.0  # selected_pvalue = 2, selected_stat = 0
        for x in self.remaining:
            if _stronger(self.logp[x], self.stat[x], best_p, best_s):
                best, best_p, best_s = x, self.logp[x], self.stat[x]
        if best is None and self.remaining:  # only NaN associations: none can be chosen
            for x in list(self.remaining):
                self.remaining.remove(x)
        return best

    def classes(self) -> list:
        """The selected variables' queues (``unique``), in column order as MXM's
        ``queues[which(selectedVars == 1)]`` (whose ``expand.grid`` are the signatures);
        whitelisted variables first."""
        position = {x: i for i, x in enumerate(self.pool)}
        order = [*[x for x in self.fixed if x in self.selected],
                 *sorted((x for x in self.selected if x not in self.fixed), key=position.get)]
        return [tuple(dict.fromkeys(self.queues[x])) for x in order]


def _members(search: _SES) -> set:
    return {v for c in search.classes() for v in c}


def _search(run: Run, max_k=3, max_boundaries=100, symmetry="none", selection="bonferroni",
            without_determining=False) -> Found:
    """SES on the run's target; with ``symmetry="and"``, each member of a class is kept
    only when the target is among the members of its own SES (MMPC's symmetry
    correction, Tsamardinos et al. 2003 Figure 3, applied to every variable of a
    class), the SES of a member searched without the other members of its class (each
    of them determines it, and would separate it from everything)."""
    s = _SES(run, run.target, run.candidates, max_k, record=True, selection=selection)
    s.run_search()
    classes = s.classes()
    notes = []
    if symmetry == "and":
        memo = {}
        kept = []
        for c in classes:
            alive = []
            for x in c:
                if x in run.whitelist:
                    alive.append(x)
                    continue
                other = memo.get(x)
                if other is None:
                    # x's own class left out: a variable that determines x would
                    # separate it from everything
                    pool = [v for v in [run.target, *run.candidates] if v not in c]
                    other = memo[x] = _SES(run, x, pool, max_k, record=False,
                                              selection=selection)
                    other.run_search()
                if run.target in _members(other):
                    alive.append(x)
            if alive:
                kept.append(tuple(alive))
        dropped = [x for c in classes for x in c if not any(x in k for k in kept)]
        for x in dropped:
            if x in s.selected:
                d = run.ledger.decision(x)
                run.ledger.exclude(x, d.result if d else None, "symmetry")
                run.trace.append(("symmetry", "remove", x, None))
        if dropped:
            notes.append(f"Note: the symmetry correction removed {', '.join(dropped)} (the "
                         "target is not in their own SES).")
        classes = kept
    selected = [c[0] for c in classes]
    for x in selected:  # a class whose first member left: its next one stands in
        d = run.ledger.decision(x)
        if d is None or d.decision != "keep":
            run.ledger.keep(x, d.result if d is not None else None, "equivalent")
    equivalences = [row for row in s.equivalences
                    if any(row[0] in c and row[1] in c for c in classes)]
    n = count_boundaries(classes)
    boundaries = generate_boundaries(classes, max_boundaries)
    pairs = [(a, (b,)) for c in classes for a in c for b in c if a != b]
    det = determinism_frame(run.tester.dataset, pairs)
    notes += list(determinism_notes(det, run.target))
    # members that alone determine the target (measured always: entropies, no test)
    determining = _determining(run.tester.dataset, run.target,
                               [(v,) for c in classes for v in c], DETERMINISM_TOL)
    reduced = ()
    if determining:
        one = len(determining) == 1
        said = (f"Note: {', '.join(determining)} alone determine{'s' if one else ''} "
                f"{run.target} (a relabeling or a finer coding of it) and separate"
                f"{'s' if one else ''} it from every other variable.")
        if without_determining:  # SES again without them
            pool = [c for c in run.candidates if c not in determining]
            other = _SES(run, run.target, pool, max_k, record=False, selection=selection)
            other.run_search()
            reduced = generate_boundaries(other.classes(), max_boundaries)
            listed = "; ".join("{" + ", ".join(b) + "}" for b in reduced[:5])
            said += (f" Without {'it' if one else 'them'}, SES finds {len(reduced)} "
                     f"signature{'' if len(reduced) == 1 else 's'} (.reduced_boundaries): "
                     f"{listed}{'; ...' if len(reduced) > 5 else ''}.")
        else:
            said += (" without_determining=True searches again without "
                     f"{'it' if one else 'them'} (.reduced_boundaries).")
        notes.append(said)
    if s.capped:
        notes.append(f"Note: conditioning sets were capped at max_k = {s.cap}; larger "
                     "separating sets were not searched.")
    if n > len(boundaries):
        notes.append(f"Note: {n} signatures; the first {len(boundaries)} are listed "
                     "(max_boundaries).")
    return Found(selected, parents_children=selected, notes=tuple(notes),
                 extra={"classes": tuple(classes), "boundaries": boundaries,
                        "n_boundaries": n, "equivalences": equivalence_frame(equivalences),
                        "deterministic": det, "max_boundaries": max_boundaries,
                        "determining": tuple(determining), "reduced_boundaries": reduced})


SES = Learner("ses", "ci", "statistically equivalent signatures (SES)", search=_search,
              check=_check_args, result=EquivalentResult)


@SES.front_end
def ses(data, target, test="auto", alpha=0.05, *, max_k=3, max_boundaries=100,
        symmetry="none", selection="bonferroni", without_determining=False, backend=None,
        candidates=None, whitelist=None, blacklist=None, max_sx=None, discretize=None,
        na="raise", progress=None, **test_args) -> EquivalentResult:
    """Statistically equivalent signatures (SES; Lagani et al. 2017, MXM's ``SES``).

    MMPC's max-min search (Tsamardinos et al. 2003) that keeps, for every variable it
    removes, the selected variable it can replace: when X is independent of T given a
    subset Z of the selected variables, each W of Z is tested against T given
    Z \\ {W} u {X}; at the first independence X joins W's *queue* (X can stand for W).
    The signatures are one member of each queue of the selected variables
    (``expand.grid`` of the queues): parents-and-children sets of T, not blankets
    (use :func:`mbstat.tie` for Markov boundaries).

    MXM's algorithm (``InternalSES.R``): 1. test every candidate against T alone; keep
    the dependent ones, select the one of smallest p-value; 2. IdentifyEquivalence:
    test every selected or remaining variable but the last selected given the subsets
    (size <= ``max_k``) of the selected ones that hold the last selected; the first
    independence removes it and runs identifyTheEquivalent; 3. max_min_assoc: select
    the remaining variable whose weakest association (largest p-value over those
    subsets, ties by the smaller statistic) is strongest; 4. repeat 2-3 while any
    remain; 5. a last IdentifyEquivalence.

    Reading chosen for the level of the whole search (``selection``): steps 1 and 3
    admit the strongest of m candidates, and MXM admits it at alpha; the smallest of m
    null p-values is below alpha almost surely, so under a global null (50 independent
    binary candidates, 500 rows) MXM's rule keeps 1.4 false members on average. By
    default the strongest enters only while its p-value (step 1: univariate; step 3:
    its max-min association) is at most alpha / m, m the candidates outside the
    selected set (MMPC's rule in :func:`mbstat.mmpc`; Bonferroni-adjusted entry,
    :mod:`mbstat.algorithms._selection`); else the forward phase ends and step 5 runs.
    The union bound then holds each step's chance of admitting a null candidate to
    alpha, and the expected number of false members to alpha / (1 - alpha). The
    removals (step 2), the equivalence tests and the symmetry correction stay at
    alpha. ``selection="none"`` is MXM's rule.

    Parameters
    ----------
    data, target, test
        As in :func:`mbstat.iamb` (``test="oracle"`` with a BayesianNetwork, or a
        :class:`mbstat.ci.oracles.deterministic.DeterministicOracle` as the test).
    alpha : float
        Significance level (MXM's ``threshold``).
    max_k : int or None
        Largest conditioning set (MXM's default 3); None: every subset.
    max_boundaries : int
        How many signatures are listed (their count is reported whatever it is).
    symmetry : {"none", "and"}
        "none" (default): MXM's SES, no symmetry correction; "and": a member of a class
        is kept only when T is in its own SES (MMPC's correction; one more SES per
        member), which removes MMPC-bar's false positives.
    selection : {"bonferroni", "none"}
        The level of entry (see above): "bonferroni" (default), the strongest remaining
        variable enters at alpha / m; "none", MXM's rule (at alpha).
    without_determining : bool
        A member that alone determines the target (a relabeling or finer coding of it:
        its conditional entropy given the member at most 1% of its own) separates it
        from everything; such members are always named (``determining``, a note). With
        True SES runs again without them and lists those signatures apart
        (``reduced_boundaries``), as :func:`mbstat.tie` does. Default False: MXM's
        SES, whose signatures are those of all the variables.
    backend, candidates, whitelist, blacklist, max_sx, discretize, na, progress, **test_args
        As in :func:`mbstat.iamb`. Whitelisted features are selected from the start
        and never removed.

    Returns
    -------
    EquivalentResult
        ``blanket``/``parents_children``: one member of each class (MXM's
        ``selectedVars``); ``classes`` (MXM's ``queues``); ``boundaries`` (MXM's
        ``signatures``) and ``n_boundaries``; ``equivalences``: for each equivalence the
        test of W given Z \\ {W} u {X} that shows it; ``deterministic``: the relations
        between members of a class that are (near) functions of each other (notes).
        ``evidence`` as in :func:`mbstat.mmpc`.

    Notes
    -----
    Checked against MXM 1.5.5 itself (``github:cran/MXM``; R 4.2, its dependencies from
    Debian's packages, Rfast 2.0.6 reduced to its G2 tests, the Rfast functions SES
    calls with ``test = "gSquare"``): on hailfinder (5,000 rows, 11 targets) and a
    random binary DAG with three recoded copies (2,000 rows, 13 targets), ``max_k = 3``,
    threshold 0.05, ``ses(..., selection="none", test="g2",
    calibration="asymptotic")`` returns MXM's queues and signatures on 24 of 24
    targets; the univariate log p-values agree to 5e-12 (``benchmarks/equivalent.py
    --mxm``; recorded in ``tests/test_ses_mxm.py``). On one target the first member of
    a class differs: two copies whose kept p-values mbstat computes 3e-15 apart, so the
    column-order rule for ties does not apply. The reading was also checked by hand,
    line by line, against MXM's R code (commit 46a6170).

    Where it agrees (same tests asked, same decisions, given the same p-values):

    - First selection: the smallest univariate p-value, the first column on ties
      (``InternalSES.R`` 48, ``which.min``); the candidates with p > alpha are never
      visited again (55-58); none dependent: nothing selected (17-40).
    - The loop IdentifyEquivalence -> max_min_assoc while any remain, then one more
      IdentifyEquivalence (``InternalSES.R`` 63-92, 94); the selected variable's test is
      p <= alpha (83), independence is p > alpha (mbstat's ``decide``; MXM compares
      log p with log alpha, ``SES.R`` 294).
    - IdentifyEquivalence (``IdentifyEquivalence.R``): the selected and remaining
      variables in column order (3, 7), the last added skipped (4, 9-11), ``cs`` the
      selected ones without the variable, taken when it is visited (13-14), subsets of
      sizes 1..min(max_k, |cs|) that hold the last added, the others in ``nchoosek``
      order (15-28), the weakest association kept (38-41), the first independence
      removes the variable and calls identifyTheEquivalent (46-52). mbstat batches the
      remaining variables visited between two selected ones (same ``cs``), then applies
      their removals in column order (:meth:`_SES.identify_equivalence`).
    - identifyTheEquivalent (``identifyTheEquivalent.R`` 7-17): each w of the separating
      set in its order, w against T given (z without w) plus the removed variable; at the
      first p > alpha the removed variable's queue is appended to w's, then stop.
    - max_min_assoc / min_assoc (``max_min_assoc.R`` 8-22, ``min_assoc.R`` 4-37): the
      remaining variable whose weakest association (largest p over the subsets with the
      last added; ties: the smaller statistic, ``min_assoc.R`` 29) is strongest
      (``compare_p_values.R``: smaller p, equal p the larger statistic; the first column
      on ties). mbstat asks no test here: min_assoc's subsets (the final ``cs``) are among
      those IdentifyEquivalence just tested the variable given (a variable still
      remaining was tested given all of them), and MXM's kept p-value already holds
      those tests (``min_assoc.R`` 4).
    - Output: the selected variables' queues, each ``unique``, in column order
      (``InternalSES.R`` 107-108); the signatures are their ``expand.grid`` (120).

    Where it departs:

    - The tests. MXM's default for a factor target is a logistic/multinomial/ordinal
      regression test (``SES.R`` 146-156); G2 is ``test = "gSquare"`` (``gSquare.R``,
      Rfast's ``cat.ci`` and, univariate, ``g2tests``, ``univregs.R`` 40-47: asymptotic
      chi-square with Rfast's degrees of freedom, not read here). mbstat's ``g2`` uses
      bnlearn's degrees of freedom and a semiparametric p-value on sparse tables, and a
      test its power rule skips counts as independence. The same search on different
      p-values can return different sets.
    - Missing values: MXM replaces them by the column's median or mode with a warning
      (``SES.R`` 87-104); mbstat raises, or deletes test-wise (``na="pairwise"``).
    - A test that returns NaN: MXM's min_assoc replaces the kept p-value by NA
      (``!compare_p_values`` is TRUE on NA, ``min_assoc.R`` 29) and max_min_assoc's
      ``if (NA > threshold)`` then fails (``max_min_assoc.R`` 16); mbstat keeps the old
      value, and drops a variable with only NaN associations.
    - Not carried over: ``backward`` (``mmpcbackphase``, ``SES.R`` 299-308; default
      FALSE), ``wei``, ``ini``, ``hash`` (mbstat's tester always caches), ``ncores``.
      ``max_k=None`` (no cap) is mbstat's; MXM needs max_k >= 1 (``SES.R`` 285-289).
    - The level of entry: ``selection="bonferroni"`` (default) admits at alpha / m
      where MXM admits at alpha (``selection="none"``: MXM's rule).
    - mbstat's additions: whitelist/blacklist, ``symmetry="and"`` (MMPC's correction,
      absent from MXM), ``without_determining`` (``reduced_boundaries``) and the notes on
      (near-)deterministic relations; the test counts differ (MXM's ``n.tests`` counts
      hash entries, ``InternalSES.R`` 131; mbstat counts the tests computed).
    """
