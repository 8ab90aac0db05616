"""What the learners of equivalent boundaries (SES, TIE*) share: the rows of evidence
for an equivalence, and the detection of (near-)deterministic relations on the data.

A relation is deterministic when a variable's conditional entropy given a set is zero:
it is a function of the set (Statnikov et al. 2013, Section 2: information equivalence;
Lemeire 2007's "deterministic relations" that break faithfulness). On discrete columns
the plug-in entropies are computed from the codes; a relation is *near*-deterministic
when ``H(V | S) <= tol * H(V)`` (default 1%: the set tells 99% of what V holds). On a
continuous V the fraction of variance left, ``1 - R^2`` of the least-squares fit on S
(discrete members of S as indicators), plays the role of the ratio.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..results.equivalent import DETERMINISM_COLUMNS, EQUIVALENCE_COLUMNS

__all__ = ["DETERMINISM_TOL", "equivalence_frame", "relation", "determinism_frame",
           "determinism_notes", "determining", "evidence_determinism_notes"]

#: Near-deterministic: H(V | S) at most this fraction of H(V) (or 1 - R^2 at most it).
DETERMINISM_TOL = 0.01


def equivalence_frame(rows) -> pd.DataFrame:
    """The equivalences table from rows (member, stands_for, phase, CIResult)."""
    records = []
    for member, stands_for, phase, r in rows:
        x = ", ".join(r.x)
        records.append((member, stands_for, phase, x, ", ".join(r.z), float(r.statistic),
                        float(r.df), float(r.pvalue), float(r.log_pvalue)))
    frame = pd.DataFrame.from_records(records, columns=EQUIVALENCE_COLUMNS)
    return frame.astype({"statistic": float, "df": float, "pvalue": float,
                         "log_pvalue": float})


def _entropy(codes: np.ndarray) -> float:
    """Plug-in entropy (bits) of the rows of a non-negative integer matrix (n, k): the rows
    as one mixed-radix key (recompressed to its distinct values where the radix would
    overflow), counted by ``bincount`` where the keys are few, else by ``unique``
    (a 2-D ``unique(axis=0)`` is 10-20 times slower)."""
    if codes.shape[0] == 0 or codes.shape[1] == 0:
        return 0.0
    key = codes[:, 0].astype(np.int64)
    for j in range(1, codes.shape[1]):
        card = int(codes[:, j].max()) + 1
        if int(key.max()) >= (1 << 62) // card:
            key = np.unique(key, return_inverse=True)[1].astype(np.int64).reshape(-1)
        key = key * card + codes[:, j]
    top = int(key.max()) + 1
    counts = (np.bincount(key, minlength=top) if top <= 4 * len(key) + 1024
              else np.unique(key, return_counts=True)[1])
    counts = counts[counts > 0]
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def relation(ds, v: int, given) -> tuple:
    """``(H(v | given), H(v), ratio, measure)`` on the rows complete for v and ``given``
    (column positions of the Dataset ``ds``); the ratio is NaN where not defined."""
    given = list(given)
    cols = [v, *given]
    rows = slice(None)
    if ds.missing is not None:
        rows = ~ds.missing[:, cols].any(axis=1)
    if ds.kinds[v] == "discrete":
        if any(ds.kinds[j] != "discrete" for j in given):
            return math.nan, math.nan, math.nan, "entropy (bits)"
        codes = np.asarray(ds.codes[rows][:, cols], dtype=np.int64)
        h_v = _entropy(codes[:, :1])
        h_cond = max(0.0, _entropy(codes) - _entropy(codes[:, 1:]))
        ratio = h_cond / h_v if h_v > 0 else math.nan
        return h_cond, h_v, ratio, "entropy (bits)"
    values = ds.numeric()[rows] if ds.values is not None else None
    if values is None:
        return math.nan, math.nan, math.nan, "variance"
    y = values[:, v]
    design = [np.ones(len(y))]
    for j in given:
        if ds.kinds[j] == "discrete":
            codes = ds.codes[rows][:, j]
            design += [(codes == c).astype(float) for c in np.unique(codes)[1:]]
        else:
            design.append(values[:, j])
    x = np.column_stack(design)
    total = float(np.var(y))
    if total <= 0:
        return 0.0, 0.0, math.nan, "variance"
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    left = float(np.var(y - x @ coef))
    return left, total, left / total, "variance"


def determinism_frame(ds, pairs, tol: float = DETERMINISM_TOL) -> pd.DataFrame:
    """The (near-)deterministic relations among ``pairs`` (variable name, tuple of names):
    one row per pair with ``H(V | S) <= tol * H(V)`` (or ``1 - R^2 <= tol``)."""
    records = []
    seen = set()
    if ds is not None and ds.n_rows:
        for v, given in pairs:
            key = (v, tuple(sorted(given)))
            if key in seen or not given:
                continue
            seen.add(key)
            h, marginal, ratio, measure = relation(ds, ds.index(v), [ds.index(g) for g in given])
            if ratio == ratio and ratio <= tol:
                records.append((v, ", ".join(given), h, marginal, ratio, measure))
    frame = pd.DataFrame.from_records(records, columns=DETERMINISM_COLUMNS)
    return frame.astype({"entropy": float, "marginal": float, "ratio": float})


def determining(ds, target, boundaries, tol: float = DETERMINISM_TOL) -> list:
    """The variables that alone determine the target: boundaries of one variable v with
    H(T | v) <= tol H(T) (a relabeling of the target, or a finer coding of it); none
    without the data's rows (an oracle)."""
    if ds is None or not ds.n_rows:
        return []
    out = []
    t = ds.index(target)
    for b in boundaries:
        if len(b) == 1 and b[0] not in out:
            _, _, ratio, _ = relation(ds, t, [ds.index(b[0])])
            if ratio == ratio and ratio <= tol:
                out.append(b[0])
    return out


def determinism_notes(frame: pd.DataFrame, target: str, tol: float = DETERMINISM_TOL) -> tuple:
    """The summary's notes on the relations of ``frame`` (none when it is empty): one on
    variables that are functions of others (the boundary is not unique), one on the
    target as a function of a set."""
    if not len(frame):
        return ()
    notes = []
    for of_target in (False, True):
        rows = frame[(frame["variable"] == target) == of_target]
        if not len(rows):
            continue
        parts = []
        for v, given, ratio, measure in rows[["variable", "given", "ratio",
                                              "measure"]].itertuples(index=False):
            what = "H(.|.)/H" if measure.startswith("entropy") else "1 - R^2"
            parts.append(f"{v} given {{{given}}} ({what} = {ratio:.2g})")
        shown = "; ".join(parts[:6]) + (f"; +{len(parts) - 6} more" if len(parts) > 6 else "")
        kind = "deterministic" if bool((rows["ratio"] <= 1e-12).all()) else \
            "(near-)deterministic"
        if of_target:
            notes.append(f"Note: {kind}: the target is a function of a set: {shown}. Given "
                         "that set the target is (nearly) constant and no other variable can "
                         "be found dependent on it; any other set that determines the target "
                         f"is a Markov boundary too, so the boundary of {target} need not be "
                         "unique.")
        else:
            notes.append(f"Note: {kind} relations between variables: {shown} (conditional "
                         f"entropy, or variance left, at most {tol:g} of the variable's "
                         "own). A variable that is a function of others adds nothing about "
                         f"{target} once they are known, and can replace one of them that "
                         "carries the same information: the Markov boundary need not be "
                         "unique, and which one a single-boundary search keeps depends on "
                         "the order of its tests.")
    return tuple(notes)


#: At most this many deciding tests are checked for a deterministic relation per run.
MAX_CHECKED = 200


def evidence_determinism_notes(ds, target: str, evidence: pd.DataFrame, notes=()) -> tuple:
    """The note every learner's summary gets when its deciding tests saw a deterministic
    relation: an excluded candidate x whose test given a non-empty z has a statistic of
    exactly zero (G2 and X2 are zero when x, or the target, is constant within every
    stratum of z; fisher_z when x is linear in z) and whose entropy (or variance) given z
    is then confirmed to be zero on the data (at most :data:`MAX_CHECKED` tests read).
    Near-deterministic relations leave a small, non-zero statistic and are not caught
    here (``ses`` and ``tie`` measure them). Empty when ``notes`` already speak of it."""
    if ds is None or not ds.n_rows or not len(evidence) or \
            any("deterministic" in n for n in notes):
        return ()
    zero = np.abs(np.asarray(evidence["statistic"], dtype=np.float64)) <= 1e-9
    if not zero.any():  # the common case
        return ()
    rows = evidence[(np.asarray(evidence["decision"]) == "exclude")
                    & (np.asarray(evidence["z"]) != "") & zero
                    & ~np.asarray(evidence["skipped"], dtype=bool)]
    if not len(rows):
        return ()
    pairs = []
    for feature, z in zip(rows.index[:MAX_CHECKED], rows["z"][:MAX_CHECKED]):
        given = tuple(z.split(", "))
        pairs.append((feature, given))
        pairs.append((target, given))
    frame = determinism_frame(ds, pairs, tol=1e-12)
    return determinism_notes(frame, target, tol=1e-12)
