"""The evidence a search decided on: one deciding test per feature, kept as it decides.

A search calls :meth:`Ledger.keep` when a test keeps a feature in (or adds it to) the
selection and :meth:`Ledger.exclude` when a test leaves it out. The ledger keeps, per
feature, the decision in force at the end of the search:

* a member: the *weakest* of the tests that kept it since it last entered (the largest
  p-value, or the smallest value of the learner's own criterion), as pcalg reports
  ``pMax`` for the edges a PC search keeps;
* an excluded candidate: the test that excluded it last, with its conditioning
  (separating) set.

The result then shows exactly the tests on which the selection was made.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Ledger", "EVIDENCE_COLUMNS"]

#: Columns of the evidence table (``MBResult.evidence``), before the adjusted p-value.
EVIDENCE_COLUMNS = ["decision", "phase", "x", "z", "statistic", "df", "pvalue", "log_pvalue",
                    "criterion", "skipped", "calibration"]


@dataclass(frozen=True)
class Decision:
    """One deciding test: what it decided, in which phase, with which result."""

    decision: str  # "keep" or "exclude"
    phase: str
    result: object  # a CIResult (or a row of a batch)
    strength: float  # larger = stronger evidence of dependence
    criterion: float = np.nan  # the learner's own decision quantity, where it has one
    skipped: bool = False  # declined by a power rule without a test (independence assumed)


def _strength(result) -> float:
    """Evidence of dependence on the p-value scale: -log p (a declined test: none)."""
    return -np.inf if result.skipped else -float(result.log_pvalue)


class Ledger:
    """Per feature, the test on which the search last decided it (see the module docstring)."""

    def __init__(self):
        self._entries: dict = {}

    def keep(self, feature, result, phase: str, strength=None, criterion=np.nan) -> None:
        """A test that keeps ``feature`` in the selection; the weakest since it entered stays.

        ``strength`` (default ``-log p``) orders the tests; ``criterion`` is the learner's
        own decision quantity shown beside the test (IAMB-IP's score, for one).
        """
        if result is None:  # kept by a rule, not a test (a whitelist): nothing replaces it
            self._entries[feature] = Decision("keep", phase, None, -np.inf, float(criterion))
            return
        s = _strength(result) if strength is None else float(strength)
        prev = self._entries.get(feature)
        if prev is None or prev.decision != "keep" or s < prev.strength:
            self._entries[feature] = Decision("keep", phase, result, s, float(criterion))

    def exclude(self, feature, result, phase: str, criterion=np.nan, skipped=False) -> None:
        """A test that leaves ``feature`` out (it replaces any earlier decision); ``result``
        None with ``skipped``: a power rule declined the test (independence assumed)."""
        strength = _strength(result) if result is not None else -np.inf
        self._entries[feature] = Decision("exclude", phase, result, strength, float(criterion),
                                          skipped)

    def kept(self) -> list:
        """The features whose decision in force is "keep", in the order first decided."""
        return [f for f, d in self._entries.items() if d.decision == "keep"]

    def __contains__(self, feature) -> bool:
        return feature in self._entries

    def decision(self, feature):
        """The :class:`Decision` in force for ``feature`` (None if never decided)."""
        return self._entries.get(feature)

    def frame(self, selected, candidates, note: str = "not tested") -> pd.DataFrame:
        """The evidence table: members (in selection order), then the other candidates.

        A candidate with no decision (never reached by the search) gets ``phase = note``
        and NaN statistics. A member whose decision is not "keep" is an error of the
        search, reported here rather than printed as contradictory evidence.
        """
        selected = list(selected)
        chosen = set(selected)
        order = selected + [c for c in candidates if c not in chosen]
        rows = []
        for f in order:
            d = self._entries.get(f)
            member = f in chosen
            if d is None:
                rows.append(("keep" if member else "exclude", note, f, "", np.nan, np.nan,
                             np.nan, np.nan, np.nan, False, ""))
                continue
            if member != (d.decision == "keep"):
                raise RuntimeError(f"internal error: {f!r} is {'in' if member else 'out of'} "
                                   f"the selection but its last decision was {d.decision!r}")
            r = d.result
            if r is None:
                rows.append((d.decision, d.phase, f, "", np.nan, np.nan, np.nan, np.nan,
                             d.criterion, d.skipped, "skipped" if d.skipped else ""))
                continue
            tested = f if r.y == f else ", ".join(r.x)  # a test of the target against f
            rows.append((d.decision, d.phase, tested, ", ".join(r.z),
                         float(r.statistic), float(r.df), float(r.pvalue), float(r.log_pvalue),
                         d.criterion, bool(r.skipped), getattr(r, "calibration", "")))
        columns = list(zip(*rows)) if rows else [()] * len(EVIDENCE_COLUMNS)
        dtypes = {"statistic": float, "df": float, "pvalue": float, "log_pvalue": float,
                  "criterion": float, "skipped": bool}
        data = {name: np.array(col, dtype=dtypes.get(name, object))
                for name, col in zip(EVIDENCE_COLUMNS, columns)}
        return pd.DataFrame(data, index=pd.Index(order, name="feature"), copy=False)
