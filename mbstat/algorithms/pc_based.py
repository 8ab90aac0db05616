"""Parents-and-children learners and the Markov blankets built on them.

* MMPC and MMMB: Tsamardinos, Aliferis & Statnikov (2003), "Time and sample efficient
  discovery of Markov blankets and direct causal relations", KDD 2003 (Figures 1-3:
  MaxMinHeuristic, MMPC-bar, MMPC with its symmetry step, MMMB).
* HITON-PC, semi-interleaved HITON-PC and HITON-MB: Aliferis, Statnikov, Tsamardinos,
  Mani & Koutsoukos (2010), "Local causal and Markov blanket induction for causal
  discovery and feature selection for classification. Part I", JMLR 11, 171-234
  (Figure 2: GLL-PC with its inclusion heuristic, elimination strategy and symmetry
  correction; Figure 4: semi-interleaved HITON-PC; Figure 7: GLL-MB).

All five share GLL-PC's frame: a *tentative* PC set TPC(T) grown by an inclusion
heuristic and pruned by an elimination strategy (X leaves when T _||_ X | S for some
S in TPC(T) \\ {X}, |S| <= ``max_k``), then the symmetry correction PC(T) = {X in
TPC(T): T in TPC(X)} ("and"). The Markov blanket adds the spouses: Y in PC(X) for some
X in PC(T), Y not in PC(T) u {T}, with T and Y dependent given S(Y) u {X}, S(Y) the set
that separated Y from T (GLL-MB step 4; MMMB's spouse step).

Reading of the symmetry step under ``selection="bonferroni"``: X leaves PC(T) only on a
test of X's own search that finds T and X independent at alpha (given some S). Where T
stayed out of TPC(X) because its entry was refused at alpha / m while T and X were
dependent at alpha, X stays: the entry level corrects the choice of the strongest
candidate, and a removal is decided at alpha (:mod:`._selection`: only admission is
corrected), so the symmetry step does not demand the corrected level twice. With an oracle
no entry is refused and nothing changes. Mean PC F1 of ``mmpc`` over every node at 5,000
rows (seed 1): insurance 0.693 -> 0.716, alarm 0.903 -> 0.908, hailfinder 0.875 -> 0.878.

Reading of the symmetry step under determinism: T leaves TPC(X) when some test of X's
search finds T _||_ X | S. Where S determines X or T (a relabeling or a function of S, as
hailfinder's nine such nodes), every stratum of S holds one level of X (or of T): its
statistic is 0 whatever the data, and it cannot reject (H(X | S) = 0 or H(T | S) = 0 on
the rows; for continuous columns, a residual variance of zero). Such a test is no
evidence that T is not a neighbour of X (faithfulness, on which the step rests, fails
there), so X stays in PC(T) and a note names it; MMPC's and GLL-PC's proofs assume
faithful, exact tests, where no test is degenerate and nothing changes. On
``sample_network("hailfinder", 5000, seed=1)`` 26 of the 27 symmetry removals rested on
such a test (23 of them true neighbours): mean PC F1 over the 56 nodes 0.549 before,
0.875 after (``symmetry="none"``: 0.878).

Every TPC search runs on the run's one tester (a test asked twice is counted once) and
is memoized per variable, so the PC sets of the neighbours that the symmetry
correction and the spouse search need are searched once each.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from .._validation import check_choice, check_int
from ..results import MBResult
from ._equivalence import relation
from ._evidence import Ledger
from ._selection import check_selection, entry_level
from .learners import Found, Learner, Run

#: The share of H(V) (or of V's variance) left given S at or below which S determines V:
#: rounding.
_NO_ENTROPY = 1e-12

__all__ = ["mmpc", "mmmb", "hiton_pc", "hiton_mb", "si_hiton_pc"]

SYMMETRY = ("and", "or", "none")


def _check_args(max_k=3, symmetry="and", selection="bonferroni") -> dict:
    """The PC learners' own arguments, checked before the data is read."""
    return {"max_k": check_int("max_k", max_k, low=0, allow_none=True),
            "symmetry": check_choice("symmetry", symmetry, SYMMETRY),
            "selection": check_selection(selection)}


# ---------------------------------------------------------------------------
# one variable's TPC search
# ---------------------------------------------------------------------------


class _Search:
    """The TPC search of one variable: its tester, target and cap, and its own ledger and
    trace of decisions (the tests log names the searches of other variables than the
    run's target by their ``label``)."""

    def __init__(self, tester, target, max_k, ledger, trace, label=None, fixed=(),
                 selection="none"):
        self.tester = tester
        self.target = target
        self.max_k = max_k
        self.selection = selection  # the level of entry into TPC (see _selection)
        self.fixed = tuple(fixed)  # whitelisted: in TPC from the start, never removed
        self.ledger = ledger
        self.trace = trace
        self.label = label
        self.capped = False

    def phase(self, name: str) -> str:
        return name if self.label is None else f"pc({self.label}): {name}"

    def test_many(self, xs, z, phase):
        return self.tester.test_many(xs, self.target, tuple(z), phase=self.phase(phase))

    def keep(self, x, batch, i, phase, strength=None) -> None:
        """Record a test that keeps x, building its result only when it is the weakest yet."""
        if strength is None:
            strength = -np.inf if batch.skipped[i] else -float(batch.log_pvalue[i])
        prev = self.ledger.decision(x)
        if prev is None or prev.decision != "keep" or strength < prev.strength:
            self.ledger.keep(x, batch[i], phase)

    def exclude(self, x, result, phase, criterion=np.nan) -> None:
        self.ledger.exclude(x, result, phase, criterion=criterion)
        self.trace.append((phase, "remove", x, result))

    def refuse_entry(self, xs, m: int) -> None:
        """``selection``: the candidates ``xs`` (in order) stay out of TPC, the first of
        them found dependent at alpha but not at its level of entry (alpha / m, then
        alpha / (m - 1), ...): each is excluded by the test that kept it so far, with
        the margin log(level) - log p as its criterion."""
        for rank, x in enumerate(xs):
            res = self.ledger.decision(x).result
            level = entry_level(self.tester.alpha, m - rank, self.selection)
            self.exclude(x, res, "entry", criterion=level - float(res.log_pvalue))

    def decide(self, xs, batch, phase, alive) -> np.ndarray:
        """Keep the dependent xs; exclude the independent ones and drop them from ``alive``.
        Returns the decisions (True: independent)."""
        independent = batch.independent
        strength = np.where(batch.skipped, -np.inf, -batch.log_pvalue)
        for i, x in enumerate(xs):
            if independent[i]:
                alive.remove(x)
                self.exclude(x, batch[i], phase)
            else:
                self.keep(x, batch, i, phase, strength[i])
        return independent

    def subsets(self, pool, must=None, min_size=1):
        """Subsets of ``pool`` of ``min_size`` to ``max_k`` variables (all with ``must``
        when given), by size, then in pool order."""
        if must is None:
            top = len(pool) if self.max_k is None else min(self.max_k, len(pool))
            for k in range(min_size, top + 1):
                yield from combinations(pool, k)
            return
        rest = [v for v in pool if v != must]
        top = len(rest) + 1 if self.max_k is None else min(self.max_k, len(rest) + 1)
        for k in range(max(min_size, 1), top + 1):
            for s in combinations(rest, k - 1):
                yield (*s, must)

    def note_cap(self, pool_size: int) -> None:
        if self.max_k is not None and pool_size > self.max_k:
            self.capped = True

    def separate(self, x, pool, phase) -> bool:
        """The elimination strategy for one variable: test x given the non-empty subsets of
        ``pool`` (up to max_k) by size; exclude it at the first independence."""
        self.note_cap(len(pool))
        for z in self.subsets(pool):
            batch = self.test_many([x], z, phase)
            if batch.independent[0]:
                self.exclude(x, batch[0], phase)
                return True
            self.keep(x, batch, 0, phase)
        return False

    def eliminate(self, members, pool, phase, must=None) -> list:
        """The elimination strategy for many: drop each member for which some non-empty
        Z in ``pool`` \\ {member} (with ``must`` when given), |Z| <= max_k, makes it
        independent of the target. One batch per Z over the members still in and not in
        Z; the pool stays fixed while members leave (bnlearn's reading). Returns the
        members left, in order."""
        alive = list(members)
        self.note_cap(len(pool) - 1)
        for z in self.subsets(pool, must=must):
            xs = [x for x in alive if x not in z]
            if xs:
                self.decide(xs, self.test_many(xs, z, phase), phase, alive)
            if not alive:
                break
        return alive


def _mmpc_tpc(s: _Search, pool) -> list:
    """MMPC-bar (Tsamardinos et al. 2003, Figure 2) with MaxMinHeuristic (Figure 1).

    Forward phase: the association of a candidate X is MinAssoc(X; T | CPC), the
    weakest over the subsets S of CPC (|S| <= max_k) of the test of X and T given S
    (largest log p-value, then smallest statistic); the candidate of largest MinAssoc
    joins CPC. A candidate found independent given some S has MinAssoc 0 and leaves
    for good (it can only stay 0). Only the subsets with the member added last are new
    at each step (bnlearn's ``maxmin.pc.heuristic.optimized``), one batch per subset.
    Backward phase: each member X leaves when independent given some subset of CPC \\ {X}.
    With ``selection="bonferroni"`` the strongest open candidate enters only while its
    MinAssoc p-value is at most alpha / m, m the candidates outside CPC (those dropped
    included: the open ones were chosen from them); else the forward phase ends.
    """
    open_ = [x for x in pool if x not in s.fixed]
    weakest = {}

    def visit(z):
        xs = list(open_)
        if not xs:
            return
        batch = s.test_many(xs, z, "forward")
        independent = s.decide(xs, batch, "forward", open_)
        log_p, stat = batch.log_pvalue.tolist(), batch.statistic.tolist()
        for i in np.flatnonzero(~independent):
            key = (log_p[i], -stat[i] if stat[i] == stat[i] else 0.0)
            if key > weakest.get(xs[i], (-np.inf, -np.inf)):
                weakest[xs[i]] = key

    visit(())
    cpc = []
    for best in s.fixed:  # whitelisted members first, as bnlearn's cpc = whitelisted
        _enter(s, cpc, best, open_, visit)
    candidates = len(pool) - len(s.fixed)  # entry: alpha / m, m the others outside CPC
    while open_:
        best = min(open_, key=weakest.__getitem__)  # the largest MinAssoc; ties: pool order
        m = candidates - (len(cpc) - len(s.fixed))
        if weakest[best][0] > entry_level(s.tester.alpha, m, s.selection):
            s.refuse_entry(sorted(open_, key=weakest.__getitem__), m)
            break
        _enter(s, cpc, best, open_, visit)
    free = [x for x in cpc if x not in s.fixed]
    kept = s.eliminate(free, cpc, "backward")
    return [x for x in cpc if x in s.fixed or x in kept]


def _enter(s: _Search, cpc, best, open_, visit) -> None:
    """MMPC's step: ``best`` joins CPC; the open candidates are tested given the new
    subsets of CPC (those with ``best``)."""
    if best in open_:
        open_.remove(best)
    cpc.append(best)
    s.trace.append(("forward", "add", best, None))
    s.note_cap(len(cpc))
    for z in s.subsets(cpc, must=best):
        if not open_:
            break
        visit(z)


def _hiton_tpc(s: _Search, pool, interleaved: bool) -> list:
    """HITON-PC as GLL-PC (Aliferis et al. 2010, Figures 2 and 4).

    Inclusion heuristic: the candidates univariately associated with T, sorted by that
    association (log p-value, then statistic); the others leave for good. Each step
    moves the next one into TPC and applies the elimination strategy: the new member
    given the subsets of TPC \\ {X}; with ``interleaved`` (HITON-PC) every other member
    too, given the subsets that hold the new one (the others were tested when their
    last member came in). Semi-interleaved (SI-HITON-PC) checks only the new member at
    each step and every member once OPEN is empty.
    """
    fixed = s.fixed
    candidates = [x for x in pool if x not in fixed]
    tpc = list(fixed)  # whitelisted members first (bnlearn's si.hiton.pc)
    if not candidates:
        return tpc
    batch = s.test_many(candidates, (), "univariate")
    open_ = list(candidates)
    s.decide(candidates, batch, "univariate", open_)
    position = {x: i for i, x in enumerate(candidates)}
    log_p, stat = batch.log_pvalue, np.nan_to_num(batch.statistic)
    open_.sort(key=lambda x: (log_p[position[x]], -stat[position[x]], position[x]))
    if s.selection != "none":  # Holm's step-down over the univariate tests
        m = len(candidates)
        for rank, x in enumerate(open_):
            if log_p[position[x]] > entry_level(s.tester.alpha, m - rank, s.selection):
                s.refuse_entry(open_[rank:], m - rank)
                open_ = open_[:rank]
                break
    for x in open_:
        tpc.append(x)
        s.trace.append(("forward", "add", x, batch[position[x]]))
        if s.separate(x, tpc[:-1], "eliminate"):
            tpc.pop()
        elif interleaved and len(tpc) > 1:
            kept = s.eliminate([v for v in tpc[:-1] if v not in fixed], tpc, "eliminate",
                               must=x)
            tpc = [v for v in tpc if v in fixed or v in kept or v == x]
    if not interleaved:
        kept = s.eliminate([v for v in tpc if v not in fixed], tpc, "eliminate")
        tpc = [v for v in tpc if v in fixed or v in kept]
    return tpc


HEURISTICS = {
    "mmpc": _mmpc_tpc,
    "hiton": lambda s, pool: _hiton_tpc(s, pool, interleaved=True),
    "si_hiton": lambda s, pool: _hiton_tpc(s, pool, interleaved=False),
}


# ---------------------------------------------------------------------------
# PC sets with the symmetry correction, and the spouses
# ---------------------------------------------------------------------------


class _Neighbourhoods:
    """TPC and PC sets of any variable of one run, memoized (one search per variable)."""

    def __init__(self, run: Run, heuristic: str, max_k, symmetry: str, memo=None, fixed=(),
                 selection="none"):
        self.run = run
        self.selection = selection
        self.tester = run.tester
        self.root = run.target
        keep = {*run.candidates, run.target}
        self.variables = [v for v in self.tester.dataset.names if v in keep]
        self.search_tpc = HEURISTICS[heuristic]
        self.max_k, self.max_sx = max_k, run.max_sx
        # the elimination's cap: max_k within max_sx (every test honours max_sx)
        self.cap = max_k if run.max_sx is None else (
            run.max_sx if max_k is None else min(max_k, run.max_sx))
        self.fixed = tuple(fixed)  # in the target's TPC from the start (a PC whitelist)
        self.symmetry = symmetry
        self.searches: dict = {}
        self.pcs: dict = {}
        self.n_untested = 0  # spouse tests that max_sx did not allow
        self.undecided: list = []  # the root's neighbours the symmetry step could not test
        # the searches, shareable between runs on one tester (a pure cache)
        self.memo = {} if memo is None else memo
        self.memo_key = (heuristic, self.cap, selection, tuple(self.variables))

    def tpc(self, v) -> list:
        """TPC(v), searched once per variable (and per ``memo``: see :func:`_pc_search`)."""
        hit = self.searches.get(v)
        if hit is None:
            fixed = self.fixed if v == self.root else ()
            key = (v, fixed, *self.memo_key)
            hit = self.memo.get(key)
            if hit is None:
                s = _Search(self.tester, v, self.cap, Ledger(), [],
                            label=None if v == self.root else v, fixed=fixed,
                            selection=self.selection)
                hit = self.memo[key] = (s, self.search_tpc(s, [u for u in self.variables
                                                                if u != v]))
            self.searches[v] = hit
        return hit[1]

    def _replay(self, v) -> None:
        """The decisions and steps of v's own search, into the run's ledger and trace."""
        s = self.searches[v][0]
        ledger = self.run.ledger
        for c in self.variables:
            d = s.ledger.decision(c)
            if d is None:
                continue
            if d.decision == "keep":
                ledger.keep(c, d.result, d.phase, strength=d.strength, criterion=d.criterion)
            else:
                ledger.exclude(c, d.result, d.phase, criterion=d.criterion)
        self.run.trace.extend(s.trace)

    @property
    def capped(self) -> bool:
        return any(s.capped for s, _ in self.searches.values())

    def _reasked(self, x, v, decision):
        """The test of x's search that decided on v, as a test of x against v (the same
        test, from the cache, when the test is symmetric)."""
        result = decision.result
        if self.tester.test_obj.symmetric:
            return self.tester.test(x, v, result.z, phase="symmetry")
        return result

    def pc(self, v) -> list:
        """PC(v): TPC(v) with the symmetry correction; for the run's target its decisions
        go to the run's ledger (phase "symmetry")."""
        hit = self.pcs.get(v)
        if hit is not None:
            return hit
        tpc = self.tpc(v)
        record = v == self.root
        run = self.run
        if record:
            self._replay(v)
        if self.symmetry == "none":
            out = list(tpc)
        elif self.symmetry == "and":
            out = []
            for x in tpc:
                if (record and x in self.fixed) or v in self.tpc(x):
                    out.append(x)
                    continue
                # T left TPC(x): the test that separated them (or that refused its entry)
                decision = self.searches[x][0].ledger.decision(v)
                if decision.result is not None and not decision.result.independent:
                    out.append(x)  # refused at entry, dependent at alpha (module docstring)
                    continue
                if self._cannot_reject(x, v, decision.result):
                    out.append(x)  # no evidence against the neighbour (module docstring)
                    if record:
                        self.undecided.append((x, decision.result.z))
                elif record:
                    res = self._reasked(x, v, decision)
                    run.ledger.exclude(x, res, "symmetry", criterion=decision.criterion)
                    run.trace.append(("symmetry", "remove", x, res))
        else:  # "or": T in TPC(x) needs x and T marginally dependent; test those only
            out = list(tpc)
            inside = set(tpc)
            rest = [u for u in self.variables if u != v and u not in inside]
            if rest:
                batch = self.tester.test_many(rest, v, (), phase="symmetry")
                for i in np.flatnonzero(~np.asarray(batch.independent)):
                    x = rest[i]
                    if v in self.tpc(x):
                        out.append(x)
                        if record:  # x's search kept T: its weakest test
                            res = self._reasked(x, v, self.searches[x][0].ledger.decision(v))
                            run.ledger.keep(x, res, "symmetry")
                            run.trace.append(("symmetry", "add", x, res))
        self.pcs[v] = out
        return out

    def _cannot_reject(self, x, v, result) -> bool:
        """Whether ``result`` (the test of x's search that separated v) could not reject:
        its conditioning set determines x or v on the data's rows (see the module
        docstring); never for an oracle (no rows)."""
        ds = self.tester.dataset
        if result is None or not result.z or not ds.n_rows:
            return False
        given = list(ds.indices(result.z))
        for u in (x, v):
            left, total, _, _ = relation(ds, ds.index(u), given)
            if left == left and left <= _NO_ENTROPY * total:  # NaN: not measured (mixed)
                return True
        return False

    def notes(self) -> tuple:
        notes = []
        if self.capped:
            by = "max_k" if self.cap == self.max_k else "max_sx"
            notes.append(f"Note: conditioning sets were capped at {by} = {self.cap}; larger "
                         "separating sets were not searched (max_k=None searches them all).")
        if self.undecided:
            named = "; ".join(f"{x} (given {{{', '.join(z)}}})" for x, z in self.undecided)
            notes.append(f"Note: the symmetry correction kept {named}: its own search "
                         f"separated {self.root} from it given a set that determines one of "
                         "the pair (a functional relation: the test could not reject, so it "
                         "is no evidence against the neighbour).")
        if self.n_untested:
            notes.append(f"Note: {self.n_untested} spouse test(s) would condition on more than "
                         f"max_sx = {self.max_sx} variables and were not made.")
        return tuple(notes)


def _pc_search(run: Run, heuristic: str, max_k=3, symmetry="and", memo=None,
               selection="bonferroni") -> Found:
    """PC(T): GLL-PC with the heuristic's TPC search and the symmetry correction. ``memo``
    (a dict) shares the other variables' searches between runs on one tester. Whitelisted
    features are neighbours, as bnlearn's ``learn.nbr`` takes them."""
    nb = _Neighbourhoods(run, heuristic, max_k, symmetry, memo, fixed=run.whitelist,
                         selection=selection)
    pc = nb.pc(run.target)
    return Found(pc, parents_children=pc, notes=nb.notes())


def _mb_search(run: Run, heuristic: str, max_k=3, symmetry="and", memo=None,
               selection="bonferroni") -> Found:
    """GLL-MB (Aliferis et al. 2010, Figure 7, steps 1-4; MMMB's spouse step): PC(T), then
    for X in PC(T) and Y in PC(X) \\ (PC(T) u {T}): Y joins when T and Y are dependent
    given S(Y) u {X}, S(Y) the set that separated Y from T. With X in S(Y), X is not a
    collider and the test would repeat the separating one: it is not asked.

    A whitelisted feature is in the blanket, as a parent, child or spouse: the search
    places it (it is not forced into PC(T), where its parents would be taken for spouses
    of T); one the search does not find joins the parents and children at the end."""
    nb = _Neighbourhoods(run, heuristic, max_k, symmetry, memo, selection=selection)
    target, tester, ledger = run.target, run.tester, run.ledger
    pc = nb.pc(target)
    inside = set(pc)
    separating = {y: ledger.decision(y).result.z for y in run.candidates if y not in inside}
    spouses = []
    for x in pc:
        for y in nb.pc(x):
            if y == target or y in inside or y in spouses:
                continue
            z = separating[y]
            if x in z:
                continue
            if nb.max_sx is not None and len(z) + 1 > nb.max_sx:
                nb.n_untested += 1
                continue
            res = tester.test(y, target, (*z, x), phase="spouses")
            if not res.independent:
                spouses.append(y)
                ledger.keep(y, res, "spouses")
                run.trace.append(("spouses", "add", y, res))
    return Found([*pc, *spouses], parents_children=pc, spouses=spouses,
                 notes=nb.notes())


def _learner(name, title, search, heuristic):
    return Learner(name, "ci", title,
                   search=lambda run, **own: search(run, heuristic, **own), check=_check_args)


MMPC = _learner("mmpc", "max-min parents and children (MMPC)", _pc_search, "mmpc")
MMMB = _learner("mmmb", "max-min Markov blanket (MMMB)", _mb_search, "mmpc")
HITON_PC = _learner("hiton_pc", "HITON parents and children (HITON-PC)", _pc_search, "hiton")
HITON_MB = _learner("hiton_mb", "HITON Markov blanket (HITON-MB)", _mb_search, "hiton")
SI_HITON_PC = _learner("si_hiton_pc", "semi-interleaved HITON-PC (SI-HITON-PC)", _pc_search,
                       "si_hiton")

_COMMON = """
    Parameters
    ----------
    data : DataFrame, ndarray, Dataset or BayesianNetwork (with test="oracle")
    target : str, int, Series or 1-D array
    test : str
        A CI test from :data:`mbstat.TESTS` ("auto", the default, chooses from the data's
        kinds, as in :func:`mbstat.iamb`).
    alpha : float
        Significance level.
    max_k : int or None
        Largest conditioning set of the elimination strategy (default 3, as the
        papers' experiments, MXM's ``max_k`` and pyCausalFS use). None searches every
        subset, as the algorithms are proven (exact with the oracle); on data, tests
        given more than three discrete variables rarely have the rows to reject
        independence, and an unrejected test removes a true member.
    symmetry : {"and", "or", "none"}
        The symmetry correction of a PC set: "and" (default; the papers' correction,
        needed for correctness): X in PC(T) when X in TPC(T) and T in TPC(X); "or": X in
        TPC(T) or T in TPC(X) (more recall, fewer guarantees; searches TPC(X) for every
        X marginally dependent on T); "none": TPC(T) as it is (pyCausalFS).
    selection : {"bonferroni", "none"}
        The level of entry into TPC. The papers admit a candidate dependent at alpha:
        the strongest of m null candidates passes almost surely (0.87 false members
        among 50 independent candidates at 500 rows, ``benchmarks/global_null.py``).
        "bonferroni" (default): MMPC's strongest open candidate enters while its
        MinAssoc p-value is at most alpha / m, m the candidates outside CPC; HITON's
        univariate inclusion is Holm's step-down (the i-th strongest, from 0, at
        alpha / (m - i)). Elimination, the symmetry correction and the spouse tests stay
        at alpha. "none": the papers' rule.
    backend, candidates, whitelist, blacklist, discretize, na, **test_args
        As in :func:`mbstat.iamb`. Whitelisted features: for the PC learners, in TPC(T)
        from the start, never removed nor corrected (bnlearn's ``learn.nbr`` takes them
        as neighbours); for ``mmmb`` and ``hiton_mb``, in the blanket, placed by the
        search as parent/child or spouse (a parent of a whitelisted spouse is not
        taken for a spouse), among the parents and children when the search does not
        find them. Blacklisted ones are in no search, nor in any conditioning set.
        ``na`` and ``progress`` as in :func:`mbstat.iamb`.
    max_sx : int, optional
        The largest conditioning set any test may use: the elimination searches
        subsets of at most ``min(max_k, max_sx)`` variables, and a spouse test that
        would condition on more is not made (the summary says how many).
"""


def _doc(text: str) -> str:
    head, _, tail = text.partition("\n    Returns")
    return head.rstrip() + "\n" + _COMMON + "\n    Returns" + tail


@MMPC.front_end
def mmpc(data, target, test="auto", alpha=0.05, *, max_k=3, symmetry="and",
         selection="bonferroni", backend=None, candidates=None, whitelist=None,
         blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
         **test_args) -> MBResult:
    """Max-Min Parents and Children (MMPC; Tsamardinos, Aliferis & Statnikov 2003).

    MMPC-bar (Figure 2). Forward phase: repeatedly add to CPC the candidate of
    largest minimum association with T, the minimum taken over the tests given the
    subsets of CPC (MaxMinHeuristic, Figure 1; association = -log p-value); a
    candidate independent of T given some subset leaves for good. Backward phase:
    remove each X of CPC independent of T given some subset of CPC \\ {X}. Then the
    symmetry correction of MMPC (Figure 3): X stays when T is in MMPC-bar(X).

    Returns
    -------
    MBResult
        The parents and children of the target (``blanket`` and
        ``parents_children``; spouses are not searched: see :func:`mmmb`).
        ``evidence``: each member's weakest test that kept it (its minimum
        association, pcalg's pMax), each other candidate's separating test; a
        candidate removed by the symmetry correction shows the test that separated
        it from the target in its own search (phase "symmetry").
    """


@MMMB.front_end
def mmmb(data, target, test="auto", alpha=0.05, *, max_k=3, symmetry="and",
         selection="bonferroni", backend=None, candidates=None, whitelist=None,
         blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
         **test_args) -> MBResult:
    """Max-Min Markov Blanket (MMMB; Tsamardinos, Aliferis & Statnikov 2003).

    PC(T) by :func:`mmpc`, then the spouses (MMMB's step, as GLL-MB's step 4 of
    Aliferis et al. 2010): for each X in PC(T) and Y in PC(X) outside PC(T) u {T},
    Y joins when T and Y are dependent given S(Y) u {X}, S(Y) the set that separated
    Y from T (X is then a common child). Every PC set is searched once per call.

    Returns
    -------
    MBResult
        ``parents_children`` and ``spouses`` separately. ``evidence``: PC members as
        in :func:`mmpc`, each spouse's test given S(Y) u {X}, each other candidate's
        separating test.
    """


@HITON_PC.front_end
def hiton_pc(data, target, test="auto", alpha=0.05, *, max_k=3, symmetry="and",
             selection="bonferroni", backend=None, candidates=None, whitelist=None,
             blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
             **test_args) -> MBResult:
    """HITON-PC, interleaved (Aliferis et al. 2010, GLL-PC of Figure 2).

    Inclusion heuristic: sort the candidates by univariate association with T and
    discard those independent of T. Each step moves the next one into TPC and applies
    the elimination strategy to every member: X leaves when independent of T given
    some subset of TPC \\ {X} (only the subsets with the new member are new for the
    others). Then the symmetry correction (GLL-PC step 5).

    Returns
    -------
    MBResult
        The parents and children (``blanket`` and ``parents_children``; spouses: see
        :func:`hiton_mb`), with evidence as in :func:`mmpc`.
    """


@HITON_MB.front_end
def hiton_mb(data, target, test="auto", alpha=0.05, *, max_k=3, symmetry="and",
             selection="bonferroni", backend=None, candidates=None, whitelist=None,
             blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
             **test_args) -> MBResult:
    """HITON-MB (Aliferis et al. 2010, GLL-MB of Figure 7 with HITON-PC).

    PC(T) by :func:`hiton_pc`, then the spouses as in :func:`mmmb`: Y in PC(X) for
    some X in PC(T), Y outside PC(T) u {T}, joins when T and Y are dependent given
    S(Y) u {X}. (The optional wrapper step of the 2003 paper is not run.)

    Returns
    -------
    MBResult
        ``parents_children`` and ``spouses`` separately, with evidence as in
        :func:`mmmb`.
    """


@SI_HITON_PC.front_end
def si_hiton_pc(data, target, test="auto", alpha=0.05, *, max_k=3, symmetry="and",
                selection="bonferroni", backend=None, candidates=None, whitelist=None,
                blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
                **test_args) -> MBResult:
    """Semi-interleaved HITON-PC (Aliferis et al. 2010, Figure 4; bnlearn's
    ``si.hiton.pc``).

    As :func:`hiton_pc`, but each step checks only the new member (given the subsets
    of TPC \\ {X}); every member is checked once OPEN is empty, given the subsets of
    the final TPC. Fewer tests than the interleaved version; the same result with the
    oracle.

    Returns
    -------
    MBResult
        The parents and children, with evidence as in :func:`mmpc`.
    """


for _f in (mmpc, mmmb, hiton_pc, hiton_mb, si_hiton_pc):
    _f.__doc__ = _doc(_f.__doc__)
