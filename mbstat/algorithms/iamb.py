"""IAMB and Inter-IAMB (Tsamardinos & Aliferis 2003), as in Pocock et al.'s Algorithm 1."""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from .._validation import check_alpha
from ..results import MBResult, format_call, make_mb_result
from ._common import prepare

__all__ = ["iamb", "inter_iamb"]


def significance(xs, res):
    """IAMB's decision rule: dependent when the test rejects at alpha.

    A rule maps the tested features ``xs`` and their results ``res`` (arrays
    ``statistic, log_pvalue, mi, skipped, df, independent``) to a boolean
    array "dependent" and a tuple of sort keys for :func:`numpy.lexsort`
    (last key primary; smaller = more dependent). Here: log p, then statistic.
    """
    return ~np.asarray(res.independent), (-res.statistic, res.log_pvalue)


def _stack(results):
    """The arrays of a rule's input from a list of CIResults."""
    return SimpleNamespace(**{name: np.array([getattr(r, name) for r in results])
                              for name in ("statistic", "df", "log_pvalue", "mi", "skipped",
                                           "independent")})


def _forward_step(tester, target, blanket, candidates, trace, rule=significance, phase="grow"):
    """Add the most dependent remaining candidate if it is dependent; True if added."""
    remaining = [c for c in candidates if c not in blanket]
    if not remaining:
        return False
    batch = tester.test_many(remaining, target, blanket, phase=phase)
    dependent, keys = rule(remaining, batch)
    best = int(np.lexsort(keys)[0])
    if not dependent[best]:
        return False
    blanket.append(remaining[best])
    trace.append((phase, "add", remaining[best], batch[best]))
    return True


def _backward(tester, target, blanket, trace, rule=significance, phase="shrink"):
    """Remove the least dependent member while the rule finds it independent given the rest."""
    changed = False
    while blanket:
        results = [tester.test(x, target, [b for b in blanket if b != x], phase=phase)
                   for x in blanket]
        dependent, keys = rule(list(blanket), _stack(results))
        worst = int(np.lexsort(tuple(-k for k in keys))[0])
        if dependent[worst]:
            break
        trace.append((phase, "remove", blanket[worst], results[worst]))
        del blanket[worst]
        changed = True
    return changed


def search(tester, target, candidates, method="iamb", rule=significance, trace=None,
           phases=("grow", "shrink")) -> list:
    """Run IAMB (``method="iamb"``) or Inter-IAMB on a tester; return the blanket.

    The loops every IAMB-family learner shares (IAMB-IP passes its own
    ``rule``; MBOR calls this as its CorrectMB on one shared tester).
    """
    blanket = []
    trace = [] if trace is None else trace
    grow, shrink = phases
    if method == "iamb":
        while _forward_step(tester, target, blanket, candidates, trace, rule, grow):
            pass
        _backward(tester, target, blanket, trace, rule, shrink)
    else:
        seen = {frozenset()}
        while _forward_step(tester, target, blanket, candidates, trace, rule, grow):
            _backward(tester, target, blanket, trace, rule, shrink)
            state = frozenset(blanket)
            if state in seen:
                break
            seen.add(state)
    return blanket


def iamb(data, target, test="g2", alpha=0.05, *, backend=None, candidates=None,
         discretize=None, na="raise", **test_args) -> MBResult:
    """Incremental Association Markov Blanket (IAMB).

    Forward phase: repeatedly test every remaining candidate against the
    target given the current blanket (one batched call) and add the most
    dependent one (smallest log p-value, ties by statistic), while it is
    dependent at ``alpha``. Backward phase: repeatedly remove the member least
    dependent on the target given the rest, while it is independent.

    Parameters
    ----------
    data : DataFrame, ndarray, Dataset or BayesianNetwork (with test="oracle")
    target : str or int
    test : str
        A CI test from :data:`mbstat.TESTS` (default "g2").
    alpha : float
        Significance level.
    backend : {"auto", "cpu", "gpu"}, optional
    candidates : list, optional
        Restrict the search to these features (default: all but the target).
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins.
    **test_args
        Arguments of the test (e.g. ``B``, ``seed``, ``dag``).

    Returns
    -------
    MBResult
    """
    return _run("iamb", data, target, test, alpha, backend, candidates, discretize, na, test_args)


def inter_iamb(data, target, test="g2", alpha=0.05, *, backend=None, candidates=None,
               discretize=None, na="raise", **test_args) -> MBResult:
    """Interleaved IAMB: a backward pass after every addition.

    Same arguments as :func:`iamb`. The search stops when an addition is
    followed by its own removal with nothing else changing (a state seen
    before), which guarantees termination.
    """
    return _run("inter_iamb", data, target, test, alpha, backend, candidates, discretize, na,
                test_args)


_TITLES = {"iamb": "incremental association (IAMB)",
           "inter_iamb": "interleaved incremental association (Inter-IAMB)"}


def _run(method, data, target, test, alpha, backend, candidates, discretize, na, test_args):
    check_alpha(alpha)
    start = time.perf_counter()
    tester, target, cands = prepare(data, target, test=test, alpha=alpha, backend=backend,
                                    discretize=discretize, na=na, test_args=test_args,
                                    candidates=candidates)
    trace = []
    blanket = search(tester, target, cands, method, trace=trace)
    elapsed = time.perf_counter() - start
    call = format_call(method, data, target=target, test=tester.test_name, alpha=alpha,
                       candidates=None if candidates is None else cands)
    return make_mb_result(tester, method=method, target=target, blanket=blanket, call=call,
                          params={"test": tester.test_name, "alpha": alpha, **test_args},
                          elapsed=elapsed, trace=trace, title=_TITLES[method], candidates=cands)
