"""The evidence a search decided on: one deciding test per feature, kept as it decides.

A search calls :meth:`Ledger.keep` when a test keeps a feature in (or adds it to) the
selection and :meth:`Ledger.exclude` when a test leaves it out (or :meth:`Ledger.keep_rows`
and :meth:`Ledger.exclude_rows` for several rows of one batch at once). The ledger keeps,
per feature, the decision in force at the end of the search:

* a member: the *weakest* of the tests that kept it since it last entered (the largest
  p-value, or the smallest value of the learner's own criterion), as pcalg reports
  ``pMax`` for the edges a PC search keeps;
* an excluded candidate: the test that excluded it last, with its conditioning
  (separating) set.

The result then shows exactly the tests on which the selection was made. A decision holds
its test as a row of the batch that answered it (the batch and a position: no per-test
object is made while the search runs); :meth:`Ledger.evidence` reads the rows into a few
arrays (:class:`Evidence`), and the table (a DataFrame) is built from them only when a
reader asks for it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..ci.result import CALIBRATIONS, FIELDS, SKIPPED, CIBatch, CIResult

__all__ = ["Decision", "Evidence", "Ledger", "EVIDENCE_COLUMNS"]

#: Columns of the evidence table (``MBResult.evidence``), before the adjusted p-value.
EVIDENCE_COLUMNS = ["decision", "phase", "x", "z", "statistic", "df", "pvalue", "log_pvalue",
                    "criterion", "skipped", "calibration"]

#: The first four columns of a batch's table are the evidence's statistic, df, pvalue and
#: log_pvalue.
assert FIELDS[:4] == ("statistic", "df", "pvalue", "log_pvalue")
_LOGP, _CALIB = FIELDS.index("log_pvalue"), FIELDS.index("calibration")


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


def _row_strength(table, i) -> float:
    """:func:`_strength` of row ``i`` of a batch's table."""
    return -np.inf if table[i, _CALIB] == SKIPPED else -float(table[i, _LOGP])


def _held(result):
    """A decision's test as held by the ledger: ``(batch, row)`` for a row of a batch (a
    :class:`~mbstat.ci.result.CIResult`), else the object itself (a test of another kind)."""
    if type(result) is CIResult:
        return (result.batch, 0)
    return result


def _result(held):
    """The test of a held decision as a :class:`~mbstat.ci.result.CIResult` (made here)."""
    if type(held) is tuple:
        batch, i = held
        return batch[i] if len(batch) > 1 else CIResult(batch)
    return held


class Ledger:
    """Per feature, the test on which the search last decided it (see the module docstring).

    Each entry is a plain tuple ``(decision, phase, held test, strength, criterion,
    skipped)``; :meth:`decision` makes the :class:`Decision` a reader asks for."""

    def __init__(self):
        self._entries: dict = {}

    def keep(self, feature, result, phase: str, strength=None, criterion=np.nan) -> None:
        """A test that keeps ``feature`` in the selection; the weakest since it entered stays.

        ``strength`` (default ``-log p``) orders the tests; ``criterion`` is the learner's
        own decision quantity shown beside the test (IAMB-IP's score, for one).
        """
        if result is None:  # kept by a rule, not a test (a whitelist): nothing replaces it
            self._entries[feature] = ("keep", phase, None, -np.inf, float(criterion), False)
            return
        s = _strength(result) if strength is None else float(strength)
        prev = self._entries.get(feature)
        if prev is None or prev[0] != "keep" or s < prev[3]:
            self._entries[feature] = ("keep", phase, _held(result), s, float(criterion), False)

    def exclude(self, feature, result, phase: str, criterion=np.nan, skipped=False) -> None:
        """A test that leaves ``feature`` out (it replaces any earlier decision); ``result``
        None with ``skipped``: a power rule declined the test (independence assumed)."""
        strength = _strength(result) if result is not None else -np.inf
        self._entries[feature] = ("exclude", phase,
                                  None if result is None else _held(result), strength,
                                  float(criterion), bool(skipped))

    def keep_rows(self, features, batch: CIBatch, rows, phase: str, strengths=None,
                  criteria=None) -> None:
        """:meth:`keep` for rows ``rows`` of ``batch`` (features ``features``, in the same
        order), without a result object per row."""
        table = batch.table
        entries = self._entries
        for t, (x, i) in enumerate(zip(features, rows)):
            s = _row_strength(table, i) if strengths is None else float(strengths[t])
            prev = entries.get(x)
            if prev is None or prev[0] != "keep" or s < prev[3]:
                entries[x] = ("keep", phase, (batch, int(i)), s,
                              np.nan if criteria is None else float(criteria[t]), False)

    def exclude_rows(self, features, batch: CIBatch, rows, phase: str, criteria=None) -> None:
        """:meth:`exclude` for rows ``rows`` of ``batch`` (features ``features``)."""
        table = batch.table
        entries = self._entries
        for t, (x, i) in enumerate(zip(features, rows)):
            entries[x] = ("exclude", phase, (batch, int(i)), _row_strength(table, i),
                          np.nan if criteria is None else float(criteria[t]), False)

    def kept(self) -> list:
        """The features whose decision in force is "keep", in the order first decided."""
        return [f for f, d in self._entries.items() if d[0] == "keep"]

    def __contains__(self, feature) -> bool:
        return feature in self._entries

    def decision(self, feature):
        """The :class:`Decision` in force for ``feature`` (None if never decided)."""
        d = self._entries.get(feature)
        if d is None:
            return None
        return Decision(d[0], d[1], None if d[2] is None else _result(d[2]), d[3], d[4], d[5])

    def evidence(self, selected, candidates, note: str = "not tested") -> "Evidence":
        """The evidence of a search as arrays (:class:`Evidence`; called, the table):
        members (in selection order), then the other candidates.

        A candidate with no decision (never reached by the search) gets ``phase = note``
        and NaN statistics. A member whose decision is not "keep" is an error of the
        search, reported here rather than printed as contradictory evidence.
        """
        selected = list(selected)
        chosen = set(selected)
        order = selected + [c for c in candidates if c not in chosen]
        k = len(order)
        criterion = [np.nan] * k
        skipped = [False] * k
        decision, phase, x, z = [None] * k, [None] * k, [None] * k, [""] * k
        calibration = [""] * k
        labels = {}  # id(batch) -> (its y, its z label, its x names)
        rows_of = {}  # id(batch) -> (batch, positions in order, rows)
        other = []  # positions of the tests of another kind
        entries = self._entries
        for t, f in enumerate(order):
            d = entries.get(f)
            member = f in chosen
            if d is None:
                decision[t], phase[t], x[t] = "keep" if member else "exclude", note, f
                continue
            if member != (d[0] == "keep"):
                raise RuntimeError(f"internal error: {f!r} is {'in' if member else 'out of'} "
                                   f"the selection but its last decision was {d[0]!r}")
            decision[t], phase[t], criterion[t] = d[0], d[1], d[4]
            held = d[2]
            if held is None:
                x[t] = f
                skipped[t] = d[5]
                calibration[t] = "skipped" if d[5] else ""
            elif type(held) is tuple:
                batch, i = held
                key = id(batch)
                lab = labels.get(key)
                if lab is None:
                    names = batch.query.names
                    lab = labels[key] = (names[batch.yi],
                                         ", ".join([names[j] for j in batch.zkey]), names)
                    rows_of[key] = (batch, [], [])
                y, z[t], names = lab
                x[t] = f if y == f else ", ".join([names[j] for j in batch.keys[i]])
                entry = rows_of[key]
                entry[1].append(t)
                entry[2].append(i)
            else:  # a test of another kind: read by its attributes
                x[t] = f if held.y == f else ", ".join(held.x)
                z[t] = ", ".join(held.z)
                other.append(t)
        numbers = np.full((k, 5), np.nan)  # statistic, df, pvalue, log_pvalue, criterion
        numbers[:, 4] = criterion
        skipped = np.array(skipped, dtype=bool)
        calibration = np.array(calibration, dtype=object)
        for t in other:
            r = entries[order[t]][2]
            numbers[t, :4] = [float(r.statistic), float(r.df), float(r.pvalue),
                              float(r.log_pvalue)]
            skipped[t] = bool(r.skipped)
            calibration[t] = getattr(r, "calibration", "")
        if rows_of:  # the batch rows, gathered by batch
            where, block = [], []
            for batch, at, rows in rows_of.values():
                where += at
                block.append(batch.table[rows][:, :_CALIB + 1])
            block = np.concatenate(block) if len(block) > 1 else block[0]
            numbers[where, :4] = block[:, :4]
            codes = block[:, _CALIB].astype(np.intp)
            skipped[where] = codes == SKIPPED
            calibration[where] = np.array(CALIBRATIONS, dtype=object)[codes]
        decision = np.array(decision, dtype=object)
        phase = np.array(phase, dtype=object)
        x = np.array(x, dtype=object)
        z = np.array(z, dtype=object)
        return Evidence(tuple(order), decision, phase, x, z, numbers, skipped, calibration)

    def frame(self, selected, candidates, note: str = "not tested") -> pd.DataFrame:
        """The evidence table (a DataFrame): :meth:`evidence`, built now."""
        return self.evidence(selected, candidates, note)()


@dataclass(frozen=True, eq=False)
class Evidence:
    """The evidence of a search as arrays, one entry per candidate (members first); called,
    the evidence table (``MBResult.evidence``, a DataFrame indexed by feature). Picklable.

    ``evidence[name]`` gives one column (a copy, an array) without building the table;
    ``evidence[mask]`` (a boolean array or Series) the table's rows."""

    order: tuple
    decision: np.ndarray
    phase: np.ndarray
    x: np.ndarray
    z: np.ndarray
    numbers: np.ndarray  # (k, 5): statistic, df, pvalue, log_pvalue, criterion
    skipped: np.ndarray
    calibration: np.ndarray

    def __len__(self) -> int:
        return len(self.order)

    def _column(self, name: str) -> np.ndarray:
        if name in ("statistic", "df", "pvalue", "log_pvalue", "criterion"):
            return self.numbers[:, ("statistic", "df", "pvalue", "log_pvalue",
                                    "criterion").index(name)]
        if name in ("decision", "phase", "x", "z", "skipped", "calibration"):
            return getattr(self, name)
        raise KeyError(name)

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._column(key).copy()
        mask = np.asarray(key.to_numpy() if isinstance(key, pd.Series) else key, dtype=bool)
        return self()[mask]

    def __call__(self) -> pd.DataFrame:
        data = {name: self._column(name).copy() for name in EVIDENCE_COLUMNS}
        return pd.DataFrame(data, index=pd.Index(list(self.order), name="feature"), copy=False)

