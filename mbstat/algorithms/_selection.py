"""The level at which a search admits the strongest of m candidates (``selection``).

A forward step that tests m candidates and admits the most dependent one when its p-value
is below alpha admits a false member with probability 1 - (1 - alpha)^m under a global
null (independent tests: 0.92 at m = 50, alpha 0.05): the smallest of m valid p-values
is not a valid p-value. ``selection="bonferroni"`` (the default of every learner that
selects this way) admits the strongest candidate only while its p-value is at most
alpha / m, m the candidates outside the current set that the step chose among: by the
union bound the step admits a candidate independent of the target with probability at
most alpha, whatever the dependence between the m tests, and under a global null the
expected number of false members of the search is at most alpha / (1 - alpha) (each step
admits with probability at most alpha, and needs every earlier one to have admitted), for
p-values valid given the steps before. Measured (``benchmarks/global_null.py``, 500 rows,
50 binary candidates, 200 data sets, alpha 0.05): 0.06-0.07 false members [0.03, 0.11],
against 1-4 with the papers' rule.
Steps that admit several candidates at once use Holm's step-down form (the i-th
smallest p-value against alpha / (m - i)), which reduces to Bonferroni for one.
``selection="none"`` is the papers' rule (the strongest is admitted at alpha).

Only admission is corrected: tests that remove members (the shrink or backward phases)
and tests that drop candidates (early dropping, elimination) stay at alpha, where an
error keeps a candidate out or a member in rather than letting a false one in. The
correction is the forward-selection analogue of Bonferroni-adjusted entry in stepwise
regression (Hocking 1976; the "alpha / m to enter" rule). RGS
(:func:`~mbstat.algorithms.grow_shrink.rgs`) also keeps each member at the level at which
it entered (its shrink).
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice

__all__ = ["SELECTION_CHOICES", "CRITERION", "check_selection", "entry_level", "entry_notes",
           "entry_rule", "entry_floor"]

SELECTION_CHOICES = ("bonferroni", "none")

#: What the evidence's ``criterion`` column holds for decisions made at entry.
CRITERION = ("log(alpha / m) - log p of a candidate's entry test, m the candidates the step "
             "chose among (Bonferroni: selection = \"bonferroni\"): it joins when >= 0")


def check_selection(selection) -> str:
    """``selection`` checked: "bonferroni" (default) or "none" (the paper's rule)."""
    return check_choice("selection", selection, SELECTION_CHOICES)


def entry_level(alpha: float, m: int, selection: str) -> float:
    """Natural log of the level at which the strongest of ``m`` candidates enters."""
    if selection == "none" or m <= 1:
        return math.log(alpha)
    return math.log(alpha) - math.log(m)


def entry_rule(log_level: float):
    """An IAMB decision rule (see :func:`~mbstat.algorithms.iamb.significance`) that admits
    at ``exp(log_level)``: dependent when the test rejects at alpha and log p is at most
    ``log_level``; sort keys (statistic, margin), the margin log p - ``log_level`` (its
    negation is the evidence's criterion)."""

    def rule(xs, res):
        log_p = np.asarray(res.log_pvalue, dtype=np.float64)
        margin = np.nan_to_num(log_p - log_level, nan=np.inf)
        dependent = ~np.asarray(res.independent, dtype=bool) & (margin <= 0.0)
        return dependent, (-np.nan_to_num(np.asarray(res.statistic, dtype=np.float64)), margin)

    rule.criterion = CRITERION
    rule.entry = True  # its criterion explains exclusions; a member shows its test alone
    return rule


def entry_notes(selection, evidence, alpha: float) -> tuple:
    """The note a result carries when its level of entry decided: some candidate dependent
    at ``alpha`` was left out because its p-value exceeded alpha / m (an exclusion whose
    criterion, the entry margin, is negative); nothing otherwise."""
    if selection != "bonferroni" or not len(evidence):
        return ()
    refused = ((evidence["decision"] == "exclude") & (evidence["criterion"] < 0)
               & (evidence["pvalue"] <= alpha))
    if not refused.any():
        return ()
    return (f"Criterion (entry): {CRITERION}; {int(refused.sum())} candidate(s) dependent at "
            f"alpha = {alpha:g} stayed out at alpha / m (selection = \"none\": the papers' "
            "rule at alpha).",)


def entry_floor(selection, tester, alpha: float, m: int):
    """Why the search may admit nothing: the tester's test cannot give a p-value below
    the level at which the first step admits (alpha / m, ``selection="bonferroni"``), as a
    Monte Carlo test of B permutations (least p-value 1 / (B + 1)): (message, True), the
    message a warning; None where the test reaches it. A test that can serve the level
    itself (the CRT's early stop, :meth:`~mbstat.ci.CITest.served`) is replaced in
    ``tester`` by its copy that does: (message, False), the message a note. (A step
    admits once fewer candidates remain than alpha over the least p-value; the warning says
    how many draws would serve the first step.)"""
    if selection != "bonferroni" or m <= 1:
        return None
    test = tester.test_obj
    level = alpha / m
    if test.least_pvalue(alpha) <= level:
        return None
    served = test.served(level)  # a sequential test's early stop moved to the level
    if served is not None:
        tester.test_obj = served
        return (f"the early stop of test {test.name!r} serves {level:.3g}, the level at which "
                f"the first step admits (alpha / m = {alpha:g} / {m}): its least p-value at "
                f"alpha, {test.least_pvalue(alpha):.3g}, could not reach it"), False
    least = test.least_pvalue(alpha)
    return (f"test {test.name!r} cannot give a p-value below {least:.3g}, above the level "
            f"at which the first step admits a candidate (selection=\"bonferroni\": alpha / m "
            f"= {alpha:g} / {m} = {level:.3g}): no candidate can join while more than "
            f"{math.floor(alpha / least)} remain; {test.floor_advice(level)}, or pass "
            "selection=\"none\" (the papers' rule)"), True
