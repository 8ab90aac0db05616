"""IAMB-FDR: IAMB with false-discovery-rate control in the search (Peña 2008).

Peña, J. M. (2008). Learning Gaussian graphical models of gene networks with false
discovery rate control. EvoBIO 2008, LNCS 4973, 165-176: the algorithm IAMBFDR; bnlearn's
``iamb.fdr`` (R/iamb-fdr.R, ``ia.fdr.markov.blanket``) is the reading followed here.
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice
from ..results import MBResult
from .learners import Found, Learner, Run

__all__ = ["iamb_fdr"]

CORRECTIONS = ("by", "bh")
#: The phase of an exclusion that rests on the loop rule, not on a test at the FDR level.
LOOP_PHASE = "stopped: state repeated"


def _check_args(fdr="by", start=None) -> dict:
    return {"fdr": check_choice("fdr", fdr, CORRECTIONS), "start": start}


def log_thresholds(m: int, fdr: str = "by") -> np.ndarray:
    """``log(m c(m) / i)`` for the ranks i = 1..m: a p-value of rank i is significant at
    FDR level alpha when ``p * m c(m) / i <= alpha`` (Benjamini-Yekutieli, ``c(m) =
    sum_j 1/j``, valid under any dependence; "bh": Benjamini-Hochberg, ``c(m) = 1``)."""
    ranks = np.arange(1, m + 1, dtype=np.float64)
    c = float(np.sum(1.0 / ranks)) if fdr == "by" else 1.0
    return np.log(m * c / ranks)


class _Round:
    """One round's tests, in candidate order: the non-members' batch (read as arrays, a
    result object made only for a row a decision or the trace shows) and the members'
    single tests."""

    __slots__ = ("batch", "where", "singles", "statistic", "log_pvalue", "skipped")

    def __init__(self, candidates, batch, where, singles):
        self.batch, self.where, self.singles = batch, where, singles
        m = len(candidates)
        stat, log_p, skipped = np.empty(m), np.empty(m), np.zeros(m, dtype=bool)
        if batch is not None:
            at = np.fromiter((i for i, c in enumerate(candidates) if c in where), np.intp)
            stat[at] = batch.statistic
            log_p[at] = batch.log_pvalue
            skipped[at] = batch.skipped
        for i, c in enumerate(candidates):
            res = singles.get(c)
            if res is not None:
                stat[i], log_p[i], skipped[i] = res.statistic, res.log_pvalue, res.skipped
        self.statistic, self.log_pvalue, self.skipped = stat, log_p, skipped

    def __getitem__(self, x):
        """The result of ``x``'s test."""
        res = self.singles.get(x)
        return res if res is not None else self.batch[self.where[x]]


def _round(tester, target, candidates, mb) -> _Round:
    """Every candidate's test against the target given the blanket without it: one batch
    for the non-members (given the blanket), one test per member (given the others)."""
    inside = set(mb)
    rest = [c for c in candidates if c not in inside]
    batch, where = None, {}
    if rest:
        batch = tester.test_many(rest, target, tuple(mb), phase="fdr")
        where = {c: i for i, c in enumerate(rest)}
    singles = {x: tester.test(x, target, tuple(b for b in mb if b != x), phase="fdr")
               for x in mb}
    return _Round(candidates, batch, where, singles)


def _criteria(results: _Round, names, log_thr, log_alpha):
    """Ranks (0 = most dependent), the FDR-scaled p-value ``min(1, p m c(m) / i)`` (log) and
    the decision "dependent" of every candidate (``names``, in the round's order). Ranked by
    log p, then statistic, then candidate order; a declined (skipped) test ranks as p = 1
    and is never dependent."""
    skipped = results.skipped
    log_p = np.where(skipped, 0.0, results.log_pvalue)
    stat = results.statistic
    order = np.lexsort((np.arange(len(names)), -np.nan_to_num(stat), log_p))
    rank = np.empty(len(names), dtype=np.intp)
    rank[order] = np.arange(len(names))
    log_crit = np.minimum(0.0, log_p + log_thr[rank])
    dependent = ~skipped & (log_crit <= log_alpha)
    return (dict(zip(names, rank.tolist())), dict(zip(names, log_crit.tolist())),
            dict(zip(names, dependent.tolist())))


def _search(run: Run, fdr: str = "by", start=None) -> Found:
    """Peña's IAMBFDR loop, one change per round (bnlearn's reading):

    1. test every candidate against the target given the blanket without it, rank the
       p-values and scale each by ``m c(m) / rank`` (the FDR threshold of its rank);
    2. remove the member of largest rank whose scaled p-value exceeds alpha (the member
       added in the last round is not checked), and start again; else
    3. add the non-member of smallest rank whose scaled p-value is at most alpha (the
       candidate removed in the last round is not checked), and start again; else stop.

    A blanket seen before (a cycle) is broken as bnlearn does, by freezing the variable
    whose change closed it; mbstat leaves that variable out in both cases (bnlearn puts a
    removed one back in), so that every member rests on a test passed at the FDR level.
    The blanket starts from ``start`` and the whitelist (never removed); with ``max_sx``
    the search stops once the blanket has more than ``max_sx`` members (bnlearn).
    """
    tester, target, cands = run.tester, run.target, run.candidates
    ledger, trace = run.ledger, run.trace
    m = len(cands)
    if not m:
        return Found([])
    log_thr = log_thresholds(m, fdr)
    log_alpha = math.log(tester.alpha)
    fixed, max_sx = set(run.whitelist), run.max_sx
    mb: list = list(dict.fromkeys([*(start or ()), *run.whitelist]))
    frozen: list = []
    last_added = last_removed = None
    seen = set()
    notes = []
    while True:
        state = frozenset(mb)
        if state in seen:  # a cycle: freeze the variable whose change closed it, out
            culprit = last_added if last_added is not None else last_removed
            if culprit is None:  # cannot happen: a state repeats only after a change
                break
            if culprit == last_added:
                mb.remove(culprit)
                res = tester.test(culprit, target, tuple(mb), phase="fdr")
                ledger.exclude(culprit, res, LOOP_PHASE)
                trace.append((LOOP_PHASE, "remove", culprit, res))
            frozen.append(culprit)
            last_added = last_removed = None
            seen = set()
            notes.append(culprit)
            continue
        seen.add(state)
        if max_sx is not None and len(mb) > max_sx:  # no room to test the non-members
            for x in cands:
                d = ledger.decision(x)
                if x not in state and (d is None or d.decision == "keep"):
                    ledger.exclude(x, None, f"growth stopped: max_sx = {max_sx} reached")
            break
        results = _round(tester, target, cands, mb)
        rank, log_crit, dependent = _criteria(results, cands, log_thr, log_alpha)

        def crit(x):
            return math.exp(log_crit[x])

        changed = False
        # removals: members by decreasing rank, the last added one and the whitelist excepted
        for x in sorted((x for x in mb if x != last_added and x not in fixed), key=rank.get,
                        reverse=True):
            if dependent[x]:
                ledger.keep(x, results[x], "shrink", strength=-log_crit[x], criterion=crit(x))
                continue
            mb.remove(x)
            ledger.exclude(x, results[x], "shrink", criterion=crit(x))
            trace.append(("shrink", "remove", x, results[x]))
            last_added, last_removed, changed = None, x, True
            break
        if changed:
            continue
        # additions: non-members by increasing rank, the last removed and frozen excepted
        barred = {last_removed, *frozen}
        for x in sorted((x for x in cands if x not in state and x not in barred), key=rank.get):
            if dependent[x]:
                mb.append(x)
                ledger.keep(x, results[x], "grow", strength=-log_crit[x], criterion=crit(x))
                trace.append(("grow", "add", x, results[x]))
                last_added, last_removed, changed = x, None, True
            break
        if changed:
            continue
        # the final round excludes every non-member it tested (rows of the round's batch)
        out = [x for x in cands if x not in state and not dependent[x]]
        if out:
            ledger.exclude_rows(out, results.batch, [results.where[x] for x in out], "grow",
                                criteria=[crit(x) for x in out])
        break
    found_notes = ()
    if notes:
        found_notes = (f"Note: the search revisited a blanket; {', '.join(map(str, notes))} "
                       "left out and frozen to break the cycle (bnlearn's rule).",)
    return Found(mb, notes=found_notes)


IAMB_FDR = Learner("iamb_fdr", "ci", "IAMB with false discovery rate control (IAMB-FDR, "
                   "{fdr})", search=_search, check=_check_args)


@IAMB_FDR.front_end
def iamb_fdr(data, target, test="auto", alpha=0.05, *, fdr="by", start=None, backend=None,
             candidates=None, whitelist=None, blacklist=None, max_sx=None, discretize=None,
             na="raise", progress=None, **test_args) -> MBResult:
    """IAMB with false-discovery-rate control of the blanket (Peña 2008, IAMBFDR).

    Each round tests every candidate against the target given the current blanket
    without it, sorts the m p-values and compares the one of rank i with the FDR
    threshold ``alpha i / (m c(m))`` (Benjamini-Yekutieli: ``c(m) = sum_{j<=m} 1/j``).
    IAMBFDR's lines: remove the member of largest rank above its threshold; if none,
    add the non-member of smallest rank below its threshold; repeat until the blanket
    does not change. As in bnlearn's ``iamb.fdr``, the member added in the last round
    is not checked for removal, nor the candidate removed in the last round for
    addition, and a blanket seen before is a cycle broken by freezing the variable
    whose change closed it (left out: see Notes).

    Reading chosen: each p-value is compared with the threshold of its own rank
    (Peña's algorithm and bnlearn), not the step-up rule (reject every rank up to the
    largest one below its threshold); the step-up rule would add more at a time but is
    not what the fixed point of the algorithm is proven for. Alpha is the FDR level
    of the blanket, not a per-test level: at the same alpha the blanket is smaller
    (fewer false positives) than IAMB's.

    Parameters
    ----------
    data, target, test
        As in :func:`mbstat.iamb` (``test="oracle"`` with a BayesianNetwork as data).
    alpha : float
        The false discovery rate to control.
    fdr : {"by", "bh"}
        "by" (default): Benjamini-Yekutieli, valid under any dependence between the
        tests, as in Peña (2008) and bnlearn; "bh": Benjamini-Hochberg, ``c(m) = 1``
        (valid under independence or positive dependence; larger blankets).
    start, backend, candidates, whitelist, blacklist, discretize, na, progress, **test_args
        As in :func:`mbstat.iamb` (whitelisted features are never removed).
    max_sx : int, optional
        The largest conditioning set a test may use: the search stops once the
        blanket has more than ``max_sx`` members (bnlearn's ``max.sx``).

    Returns
    -------
    MBResult
        ``evidence``: for each decision the test it rests on and, in ``criterion``,
        the FDR-scaled p-value ``min(1, p m c(m) / i)`` that decided it (kept when
        <= alpha): each member's weakest such test since it entered, each other
        candidate's test in the last round (or its removal).

    Notes
    -----
    With the d-separation oracle (p-values 0 or 1) the FDR thresholds change no
    decision and the search returns the true blanket. A variable frozen to break a
    cycle (rare) is shown with the phase "stopped: state repeated" and named in the
    summary's notes; bnlearn puts a removed culprit back in the blanket.
    """
