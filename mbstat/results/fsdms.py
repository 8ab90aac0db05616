"""Results of :func:`~mbstat.fsdms` and :func:`~mbstat.wfsdms` (Liu et al. 2015)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..ci.result import plural
from ..plotting import new_axes
from .base import SelectionResult, Summary

__all__ = ["FSDMSResult", "WFSDMSResult"]

_SET_TITLES = {"A1": "strongly relevant (Algorithm 1)",
               "B2": "weakly relevant, non-redundant (Algorithm 2)",
               "C3": "the rest"}
_SET_COLORS = {"A1": "C3", "B2": "C1", "C3": "C0"}


def _names(features, k: int = 12) -> str:
    shown = ", ".join(features[:k])
    return (shown + (", ..." if len(features) > k else "")) or "(none)"


def _no_pvalues(table: str) -> property:
    """A ``pvalues`` property that explains why there are none and where to look."""

    def pvalues(self):
        raise AttributeError(f"{type(self).__name__} has no pvalues: FSDMS ranks features by "
                             "dependency margin and performs no significance tests; see "
                             f".{table}")

    return property(pvalues, doc="Not available: FSDMS performs no tests (AttributeError).")


@dataclass(frozen=True, repr=False, eq=False)
class FSDMSResult(SelectionResult):
    """The feature sequence of FSDMS with the evidence for each step.

    Extra attributes
    ----------------
    ranking : DataFrame
        One row per step, indexed by ``rank`` (1 = chosen first):
        ``feature``, ``set`` (A1, B2 or C3), ``gain`` (the margin gain
        ``E(P + a) - E(P)``), ``dependency`` (``D(P)`` after the step),
        ``remaining`` (``D(F - P)`` after the step), ``margin``
        (``E(P) = D(P) - alpha D(F - P)``) and ``tie`` ("" when the gain was
        the unique maximum, "D" when ``D(P + a)`` broke the tie, "order" when
        several candidates were still equal and the first in column order won).
    A1, B2, C3 : tuple of str
        Strongly relevant features (Algorithm 1), approximately weakly
        relevant non-redundant features (Algorithm 2), and the rest, each in
        column order.
    alpha : float
        Weight of the remaining set's dependency in the margin.
    theta : float or None
        Neighbourhood radius (Definition 9); None for Definition 7.
    dependency_all : float
        ``D(F)``, the dependency of all candidate features.
    n_classes : int
    stopped : str
        Why the ranking holds fewer than all features ("" when it ranks them all):
        Algorithm 3 stopped once ``D(P) = D(F)`` (``fsdms(..., full=True)`` ranks
        every feature), or an interrupt.
    tests : DataFrame
        No rows: FSDMS performs no significance tests (``pvalues`` raises
        AttributeError).
    """

    alpha: float = 1.0
    theta: float | None = None
    ranking: pd.DataFrame = field(default=None, repr=False)
    A1: tuple = ()
    B2: tuple = ()
    C3: tuple = ()
    dependency_all: float = 0.0
    n_classes: int = 2
    rule: str = ""
    stopped: str = ""

    pvalues = _no_pvalues("ranking")

    def _repr_tail(self) -> str:
        return plural(self.n_tests, "dependency evaluation")

    @property
    def sequence(self) -> tuple:
        """The features in the order FSDMS ranks them: all candidates with ``full=True``,
        else up to the step at which ``D(P) = D(F)`` (see :attr:`stopped`)."""
        return tuple(self.ranking["feature"])

    @property
    def measure(self) -> str:
        if self.theta is None:
            return "Definition 7 (discrete: value combinations)"
        return (f"Definition 9 (neighbourhood: theta = {self.theta:g}, columns scaled to "
                "[0, 1], discrete columns by equality)")

    def summary(self, max_rows: int = 30) -> Summary:
        """An R-style report: the sets A1, B2, C3 and the ranked sequence."""
        header = [
            ("Call", self.call),
            ("Data", f"{plural(self.n_rows, 'row')}, {plural(self.n_candidates, 'feature')}, "
                     f"{plural(self.n_classes, 'class', 'classes')}"),
            ("Dependency", self.measure),
            ("Margin", f"E(X) = D(X) - alpha D(F - X), alpha = {self.alpha:g};  D(F) = "
                       f"{self.dependency_all:.4g}"),
            ("Evaluations", f"{plural(self.n_tests, 'dependency evaluation')}, backend: "
                            f"{self.backend} ({self.device}), {self.elapsed:.3g} s"),
        ]
        sets = pd.DataFrame(
            {"size": [len(getattr(self, s)) for s in _SET_TITLES],
             "features": [_names(getattr(self, s), 6) for s in _SET_TITLES],
             "meaning": list(_SET_TITLES.values())},
            index=pd.Index(list(_SET_TITLES), name="set"),
        )
        table = self.ranking
        ties = table["tie"].value_counts()
        for col in ("gain", "dependency", "remaining", "margin"):
            table[col] = table[col].map(lambda v: f"{v:.4f}")
        chosen = set(self.selected)
        table["selected"] = ["*" if f in chosen else "" for f in table["feature"]]
        footer = [f"Selected: {plural(len(self.selected), 'feature')} ({self.rule})."]
        if self.stopped:
            footer.append(f"Ranking: {self.stopped}.")
        if len(table) > max_rows:
            footer.append(f"Ranking shows the first {max_rows} of {len(table)} steps "
                          "(all in .ranking).")
            table = table.iloc[:max_rows]
        if ties.get("D", 0) or ties.get("order", 0):
            footer.append(f"Ties: {plural(int(ties.get('D', 0)), 'step')} decided by D(P + a), "
                          f"{ties.get('order', 0)} by column order.")
        return Summary("Feature selection by dependency margin (FSDMS)", header,
                       {"Feature sets:": sets, "Ranking (Algorithm 3):": table}, footer)

    def plot(self, ax=None):
        """Margin gain and dependencies ``D(P)``, ``D(F - P)`` against the rank.

        Returns the matplotlib Axes.
        """

        r = self.ranking
        ax = new_axes(ax, figsize=(max(6, 0.25 * len(r) + 3), 4))
        rank = r.index.to_numpy()
        colors = [_SET_COLORS[s] for s in r["set"]]
        ax.bar(rank, r["gain"].to_numpy(), color=colors, alpha=0.6, width=0.8)
        lines = ax.plot(rank, r["dependency"].to_numpy(), "k-o", ms=3, lw=1.5,
                        label="D(selected)")
        lines += ax.plot(rank, r["remaining"].to_numpy(), "k--", lw=1, label="D(remaining)")
        ax.axhline(0, color="0.5", lw=0.5)
        if len(self.selected):
            lines.append(ax.axvline(len(self.selected) + 0.5, color="C2", ls=":", lw=1.5,
                                    label=f"selected ({len(self.selected)})"))
        from matplotlib.patches import Patch

        present = set(r["set"])
        patches = [Patch(color=_SET_COLORS[s], alpha=0.6, label=f"gain, {s}")
                   for s in _SET_TITLES if s in present]
        ax.legend(handles=patches + lines, loc="best", fontsize=8)
        ax.set_xlabel("rank")
        ax.set_ylabel("dependency / margin gain")
        if len(r) <= 40:
            ax.set_xticks(rank)
            ax.set_xticklabels(r["feature"], rotation=90, fontsize=7)
        ax.set_title(f"FSDMS: {self.target}")
        return ax


@dataclass(frozen=True, repr=False, eq=False)
class WFSDMSResult(SelectionResult):
    """The best nested subset of the FSDMS sequence by cross-validated accuracy.

    Extra attributes
    ----------------
    fsdms : FSDMSResult
        The sequence the nested subsets come from.
    scores : DataFrame
        Indexed by ``n_features`` (1, 2, ...): ``feature`` (the one added),
        ``accuracy`` (mean over folds) and ``sd`` (standard deviation over folds).
    estimator : str
        The classifier, as printed by scikit-learn.
    cv : str
        The cross-validation scheme.
    best_k : int
        Size of the best subset (the smallest among equally accurate ones).
    accuracy : float
        Its mean accuracy.
    accuracy_all : float
        Mean accuracy of all candidate features.
    tests : DataFrame
        No rows: no significance tests (``pvalues`` raises AttributeError).
    """

    fsdms: FSDMSResult = field(default=None, repr=False)
    scores: pd.DataFrame = field(default=None, repr=False)
    estimator: str = ""
    cv: str = ""
    best_k: int = 0
    accuracy: float = float("nan")
    accuracy_all: float = float("nan")

    pvalues = _no_pvalues("scores")

    def _repr_tail(self) -> str:
        return f"accuracy {self.accuracy:.4f} (all: {self.accuracy_all:.4f})"

    def summary(self, max_rows: int = 30) -> Summary:
        """An R-style report: accuracy of every nested subset and the best one."""
        header = [
            ("Call", self.call),
            ("Data", f"{plural(self.n_rows, 'row')}, {plural(self.n_candidates, 'feature')}"),
            ("Dependency", self.fsdms.measure),
            ("Estimator", self.estimator),
            ("Validation", self.cv),
            ("Time", f"{self.elapsed:.3g} s (FSDMS {self.fsdms.elapsed:.3g} s)"),
        ]
        table = self.scores
        table["accuracy"] = table["accuracy"].map(lambda v: f"{v:.4f}")
        table["sd"] = table["sd"].map(lambda v: f"{v:.4f}")
        table["best"] = np.where(table.index == self.best_k, "*", "")
        footer = [f"Best: the first {plural(self.best_k, 'feature')}, accuracy "
                  f"{self.accuracy:.4f} (all {plural(self.n_candidates, 'feature')}: "
                  f"{self.accuracy_all:.4f})."]
        if len(table) > max_rows:
            footer.append(f"Showing {max_rows} of {len(table)} subsets (all in .scores).")
            table = table.iloc[:max_rows]
        return Summary("Wrapper feature selection by dependency margin (WFSDMS)", header,
                       {"Nested subsets of the FSDMS sequence:": table}, footer)

    def plot(self, ax=None):
        """Cross-validated accuracy against the number of features; returns the Axes."""

        ax = new_axes(ax)
        s = self.scores
        k = s.index.to_numpy()
        acc, sd = s["accuracy"].to_numpy(), s["sd"].to_numpy()
        ax.plot(k, acc, "-o", color="C0", ms=3, label="WFSDMS nested subsets")
        ax.fill_between(k, acc - sd, acc + sd, color="C0", alpha=0.15, label="+/- 1 sd (folds)")
        ax.axhline(self.accuracy_all, color="k", ls="--", lw=1,
                   label=f"all {plural(self.n_candidates, 'feature')}")
        ax.plot([self.best_k], [self.accuracy], "*", color="C3", ms=12,
                label=f"best: {plural(self.best_k, 'feature')}")
        ax.set_xlabel("number of features (FSDMS order)")
        ax.set_ylabel("cross-validated accuracy")
        ax.set_title(f"WFSDMS: {self.target}, {self.estimator.split('(')[0]}")
        ax.legend(loc="best", fontsize=8)
        return ax
