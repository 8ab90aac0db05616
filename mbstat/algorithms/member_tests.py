"""Each candidate tested against the target given the rest of a learned blanket, on request.

This is not the evidence a learner decided on (that is ``MBResult.evidence``): it is the
"member given all the others" view a user may want beside it. Its tests can be weak (large
conditioning sets, many degrees of freedom) and say nothing of the search.
"""
from __future__ import annotations

import pandas as pd

from ..ci.engine import CITester
from ..results import MBResult, adjust_pvalues

__all__ = ["member_tests"]


def member_tests(data, result: MBResult, test=None, *, adjust: str = "BH", backend=None,
                 discretize=None, na="raise", **test_args) -> pd.DataFrame:
    """Test each candidate against the target given the rest of ``result``'s blanket.

    Members are tested given the blanket without themselves, the other candidates given
    the whole blanket (one batched call).

    Parameters
    ----------
    data : DataFrame, ndarray or Dataset
        The data the result was learned from.
    result : MBResult
    test : str, optional
        A CI test (default: the one the learner used) and its ``**test_args``.
    adjust : {"BH", "BY", "holm", "bonferroni", "none"}
        Multiple-testing adjustment of ``p_adj``.

    Returns
    -------
    DataFrame
        Indexed by ``feature``: ``z, statistic, df, pvalue, log_pvalue, p_adj, selected``.
    """
    if not isinstance(result, MBResult):
        raise TypeError(f"result must be an MBResult (a CI-test learner's); got "
                        f"{type(result).__name__}")
    tester = CITester(data, result.test if test is None else test, alpha=result.alpha,
                      backend=backend, discretize=discretize, na=na, **test_args)
    blanket = list(result.blanket)
    candidates = list(result.evidence.index)
    rows = {x: tester.test(x, result.target, [b for b in blanket if b != x], phase="report")
            for x in blanket}
    members = set(blanket)
    outside = [c for c in candidates if c not in members]
    if outside:
        rows.update(zip(outside, tester.test_many(outside, result.target, blanket,
                                                  phase="report")))
    order = blanket + outside
    frame = pd.DataFrame(
        {"z": [", ".join(rows[x].z) for x in order],
         **{k: [float(getattr(rows[x], k)) for x in order]
            for k in ("statistic", "df", "pvalue", "log_pvalue")}},
        index=pd.Index(order, name="feature"))
    frame["p_adj"] = adjust_pvalues(frame["pvalue"], adjust)
    frame["selected"] = [x in members for x in order]
    return frame
