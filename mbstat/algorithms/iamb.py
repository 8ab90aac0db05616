"""IAMB and Inter-IAMB (Tsamardinos & Aliferis 2003), as in Pocock et al.'s Algorithm 1."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..ci.result import FIELDS, SKIPPED, CIBatch, CIResult, decide
from ..results import MBResult
from ._selection import check_selection, entry_level, entry_rule
from .learners import Found, Learner, Run

__all__ = ["iamb", "inter_iamb"]

_CALIBRATION = FIELDS.index("calibration")


def significance(xs, res):
    """IAMB's decision rule: dependent when the test rejects at alpha.

    A rule maps the tested features ``xs`` and their results ``res`` (arrays
    ``statistic, log_pvalue, mi, skipped, df, independent``) to a boolean
    array "dependent" and a tuple of sort keys for :func:`numpy.lexsort`
    (last key primary; smaller = more dependent). Here: log p, then statistic.
    """
    return ~np.asarray(res.independent), (-res.statistic, res.log_pvalue)


def _stack(results):
    """The arrays of a rule's input from a list of CIResults (read from their tables at
    once; results of another kind by their attributes)."""
    if results and all(type(r) is CIResult for r in results):
        alpha = results[0].batch.query.alpha
        if alpha is not None and all(r.batch.query.alpha == alpha for r in results):
            table = np.concatenate([r.batch.table for r in results])
            calibration = table[:, _CALIBRATION]
            return SimpleNamespace(statistic=table[:, 0], df=table[:, 1],
                                   log_pvalue=table[:, 3], mi=table[:, 4],
                                   skipped=calibration == SKIPPED,
                                   independent=decide(table[:, 2], calibration, alpha))
    return SimpleNamespace(**{name: np.array([getattr(r, name) for r in results])
                              for name in ("statistic", "df", "log_pvalue", "mi", "skipped",
                                           "independent")})


def _decide(ledger, rule, features, results, dependent, keys, phase, keep) -> None:
    """Record in ``ledger`` the rule's decisions on ``features``: keep the dependent ones
    (``keep`` True) or exclude the independent ones. The strength of a decision is minus
    the rule's primary sort key (-log p for the significance rule). ``results``: a batch
    (its rows recorded without a result object each) or a list of results."""
    if ledger is None:
        return
    strength = -np.asarray(keys[-1], dtype=np.float64)
    named = getattr(rule, "criterion", None) is not None
    rows = np.flatnonzero(np.asarray(dependent, dtype=bool) == keep)
    if isinstance(results, CIBatch):
        chosen = [features[i] for i in rows]
        criteria = strength[rows] if named else None
        if keep:
            ledger.keep_rows(chosen, results, rows, phase, strengths=strength[rows],
                             criteria=criteria)
        else:
            ledger.exclude_rows(chosen, results, rows, phase, criteria=criteria)
        return
    for i in rows:
        x = features[i]
        if keep:
            ledger.keep(x, results[i], phase, criterion=strength[i] if named else np.nan,
                        strength=strength[i])
        else:
            ledger.exclude(x, results[i], phase, criterion=strength[i] if named else np.nan)


def _forward_step(tester, target, blanket, candidates, trace, rule=significance, phase="grow",
                  ledger=None, max_sx=None, selection="none", family=None):
    """Add the most dependent remaining candidate if it is dependent; True if added.

    When none is dependent, every remaining candidate is excluded by this last test.
    With ``max_sx``, the growth stops once the blanket has more than ``max_sx`` members
    (as bnlearn's ``max.sx``): no test conditions on more variables. With
    ``selection="bonferroni"`` (and the significance rule) the strongest enters only at
    alpha / m (:mod:`~mbstat.algorithms._selection`), m the remaining candidates, or
    ``family`` less the blanket where the candidates were themselves chosen from
    ``family`` variables (MBOR's supersets).
    """
    remaining = [c for c in candidates if c not in blanket]
    if not remaining:
        return False
    if max_sx is not None and len(blanket) > max_sx:
        for x in remaining if ledger is not None else ():
            if x not in ledger:
                ledger.exclude(x, None, f"growth stopped: max_sx = {max_sx} reached")
        return False
    if selection != "none" and rule is significance:
        m = len(remaining) if family is None else max(family - len(blanket), len(remaining))
        rule = entry_rule(entry_level(tester.alpha, m, selection))
    batch = tester.test_many(remaining, target, blanket, phase=phase)
    dependent, keys = rule(remaining, batch)
    best = int(np.lexsort(keys)[0])
    if not dependent[best]:
        _decide(ledger, rule, remaining, batch, dependent, keys, phase, keep=False)
        return False
    blanket.append(remaining[best])
    trace.append((phase, "add", remaining[best], batch[best]))
    _decide(ledger, significance if getattr(rule, "entry", False) else rule,
            [remaining[best]], [batch[best]], [True],
            [np.asarray(k)[[best]] for k in keys], phase, keep=True)
    return True


def _backward(tester, target, blanket, trace, rule=significance, phase="shrink", ledger=None,
              fixed=()):
    """Remove the least dependent member while the rule finds it independent given the rest.

    Each pass keeps (in ``ledger``) the members the rule finds dependent given the rest.
    Members in ``fixed`` (a whitelist) are never removed (nor tested).
    """
    changed = False
    while any(b not in fixed for b in blanket):
        members = [b for b in blanket if b not in fixed]
        results = [tester.test(x, target, [b for b in blanket if b != x], phase=phase)
                   for x in members]
        dependent, keys = rule(members, _stack(results))
        _decide(ledger, rule, members, results, dependent, keys, phase, keep=True)
        worst = int(np.lexsort(tuple(-k for k in keys))[0])
        if dependent[worst]:
            break
        trace.append((phase, "remove", members[worst], results[worst]))
        if ledger is not None:
            ledger.exclude(members[worst], results[worst], phase,
                           criterion=-keys[-1][worst] if getattr(rule, "criterion", None)
                           else np.nan)
        blanket.remove(members[worst])
        changed = True
    return changed


def search(tester, target, candidates, method="iamb", rule=significance, trace=None,
           phases=("grow", "shrink"), ledger=None, start=(), fixed=(), max_sx=None,
           selection="none", family=None) -> list:
    """Run IAMB (``method="iamb"``) or Inter-IAMB on a tester; return the blanket.

    The loops every IAMB-family learner shares (IAMB-IP passes its own
    ``rule``; MBOR calls this as its CorrectMB on one shared tester). ``ledger``
    (an :class:`~mbstat.algorithms._evidence.Ledger`) records the deciding tests.
    The blanket starts from ``start`` and ``fixed`` (a whitelist, never removed), as
    bnlearn's ``ia.markov.blanket``; ``max_sx`` caps the conditioning sets;
    ``selection`` and ``family`` set the level of entry (:func:`_forward_step`).
    """
    blanket = list(dict.fromkeys([*start, *fixed]))
    trace = [] if trace is None else trace
    grow, shrink = phases
    step = (tester, target, blanket, candidates, trace, rule, grow, ledger, max_sx, selection,
            family)
    if method == "iamb":
        while _forward_step(*step):
            pass
        _backward(tester, target, blanket, trace, rule, shrink, ledger, fixed)
    else:
        seen = {frozenset(blanket)}
        while _forward_step(*step):
            _backward(tester, target, blanket, trace, rule, shrink, ledger, fixed)
            state = frozenset(blanket)
            if state in seen:
                _exclude_rest(tester, target, blanket, candidates, grow, ledger)
                break
            seen.add(state)
    return blanket


def _exclude_rest(tester, target, blanket, candidates, phase, ledger) -> None:
    """Inter-IAMB stopped on a repeated state: the candidates outside the blanket that no
    test excluded are left out by that rule; their test given the blanket (asked before,
    from the cache) is shown under the phase "stopped: state repeated"."""
    if ledger is None:
        return
    rest = [c for c in candidates if c not in blanket]
    if rest:
        batch = tester.test_many(rest, target, blanket, phase=phase)
        for x, result in zip(rest, batch):
            if x not in ledger:  # the removed ones keep the test that removed them
                ledger.exclude(x, result, "stopped: state repeated")


def run_search(run: Run, method: str = "iamb", rule=significance, start=None,
               selection="none") -> list:
    """:func:`search` with the run's tester, candidates, evidence, whitelist and cap."""
    return search(run.tester, run.target, run.candidates, method, rule, trace=run.trace,
                  ledger=run.ledger, start=start or (), fixed=run.whitelist,
                  max_sx=run.max_sx, selection=selection)


def _check_args(start=None, selection="bonferroni") -> dict:
    return {"start": start, "selection": check_selection(selection)}


def _iamb_search(method):
    def run(run, start, selection):
        return Found(run_search(run, method, start=start, selection=selection))
    return run


IAMB = Learner("iamb", "ci", "incremental association (IAMB)", search=_iamb_search("iamb"),
               check=_check_args)
INTER_IAMB = Learner("inter_iamb", "ci", "interleaved incremental association (Inter-IAMB)",
                     search=_iamb_search("inter_iamb"), check=_check_args)


@IAMB.front_end
def iamb(data, target, test="auto", alpha=0.05, *, selection="bonferroni", start=None,
         backend=None, candidates=None, whitelist=None, blacklist=None, max_sx=None,
         discretize=None, na="raise", progress=None, **test_args) -> MBResult:
    """Incremental Association Markov Blanket (IAMB; Tsamardinos & Aliferis 2003, as in
    Pocock et al.'s Algorithm 1).

    Forward phase: repeatedly test every remaining candidate against the
    target given the current blanket (one batched call) and add the most
    dependent one (smallest log p-value, ties by statistic), while it is
    dependent at ``alpha / m``, m the remaining candidates (``selection``).
    Backward phase: repeatedly remove the member least dependent on the target
    given the rest, while it is independent at ``alpha``.

    Reading. The paper's line "add the most dependent if dependent" tests the
    smallest of m p-values at alpha: under a global null that admits a false
    member with probability about 1 - (1 - alpha)^m, and the search keeps adding
    (3.7 false members among 50 independent candidates at 500 rows,
    ``benchmarks/global_null.py``). The default admits the strongest at the
    Bonferroni level alpha / m, which bounds the expected false members under a
    global null by alpha / (1 - alpha); ``selection="none"`` is the paper's rule
    (and bnlearn's). An oracle test is exact at any level, so oracle results do
    not change.

    Parameters
    ----------
    data : DataFrame, ndarray, Dataset or BayesianNetwork (with test="oracle")
    target : str, int, Series or 1-D array
        A column (its name; an int is its label where column labels are numbers, else its
        position), or the target's values, one per row of
        ``data`` (which then holds the features only), as scikit-learn's ``y``.
    test : str
        A CI test from :data:`mbstat.TESTS`; "auto" (default) chooses from the data's
        kinds: "g2" for discrete data, "fisher_z" for continuous, "mi-cg" for mixed.
    alpha : float
        Significance level.
    selection : {"bonferroni", "none"}
        The level at which the strongest candidate enters: alpha / m (default), or
        alpha as in the paper ("none"); see :mod:`mbstat.algorithms._selection`.
    backend : {"auto", "cpu", "gpu"}, optional
    start : list, optional
        The blanket the search starts from (bnlearn's ``start``); its members
        can be removed.
    candidates : list, optional
        Restrict the search to these features (default: all but the target).
    whitelist, blacklist : list, optional
        Hard priors, as bnlearn's ``learn.mb``: whitelisted features are in the
        blanket from the start and never removed; blacklisted ones are never
        candidates (nor conditioned on). The target may be in neither, and no
        feature in both.
    max_sx : int, optional
        The largest conditioning set a test may use (bnlearn's ``max.sx``):
        the growth stops once the blanket has more than ``max_sx`` members.
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins.
    na : {"raise", "drop", "pairwise"}
        Missing values: refused (default), every incomplete row dropped, or test-wise
        deletion (each test on the rows complete for its own variables; consistent
        when values are missing completely at random).
    progress : bool or None
        A progress bar (tqdm) of the tests performed: True shows it, False never;
        None (default) shows it once the run has taken 10 seconds. Every CI learner
        does the same, and on KeyboardInterrupt (Ctrl-C) returns what its search had
        kept so far, marked incomplete (``complete=False``) with a note.
    **test_args
        Arguments of the test (e.g. ``B``, ``seed``, ``dag``).

    Returns
    -------
    MBResult
        ``evidence``: each member's weakest test that kept it (the addition
        and every backward pass it survived), each other candidate's test that
        excluded it (the last forward step, or its removal).
    """


@INTER_IAMB.front_end
def inter_iamb(data, target, test="auto", alpha=0.05, *, selection="bonferroni", start=None,
               backend=None, candidates=None, whitelist=None, blacklist=None, max_sx=None,
               discretize=None, na="raise", progress=None, **test_args) -> MBResult:
    """Interleaved IAMB: a backward pass after every addition.

    Same arguments as :func:`iamb` (``selection`` included: the strongest enters at
    alpha / m by default). The search stops when an addition is
    followed by its own removal with nothing else changing (a state seen
    before), which guarantees termination.
    """
