"""Results of PPFS (Hassan et al.): frozen, printable, plottable (the PPI test's result,
:class:`~mbstat.ci.ppi.PPIResult`, lives with the test and is importable here too)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..ci.base import format_pvalue
from ..ci.ppi import UNCALIBRATED, PPIResult  # noqa: F401 (PPIResult: importable here too)
from .base import SIGNIF_LEGEND, SelectionResult, Summary, bh_adjust, plural, stars

__all__ = ["PPIResult", "PPFSResult"]

@dataclass(frozen=True, repr=False, eq=False)
class PPFSResult(SelectionResult):
    """A PPFS Markov blanket with its importance scores and fold aggregation.

    Extra attributes
    ----------------
    alpha, B, K, test_size, folds : the settings (B and test_size: PPI; folds: LOCO).
    test : {"loco", "ppi"}
        The test deciding the search: the calibrated LOCO test or the paper's PPI test.
    seed : int or None
        The seed used (drawn when none was given; None for a Generator):
        ``ppfs(..., seed=result.seed)`` replays the run.
    model, task : str
    importance : DataFrame
        One row per candidate (index ``feature``), most important first:
        ``grow`` (importance log(1/p) of the growth test given the empty
        set), ``shrink`` (log(1/p) of the shrink test given the rest of the
        blanket; NaN when not tested), ``pvalue`` (of the deciding test),
        ``increase`` (its mean risk increase) and ``selected``, all from the
        chosen fold.
    fold_blankets : tuple of tuples
        The blanket found on each fold (one entry when K < 2).
    frequency : Series
        How many fold blankets contain each feature of their union (Eq. 7).
    zscores : Series
        Score of each fold's blanket (Eq. 8), index ``fold``.
    chosen_fold : int or None
        The fold whose blanket was returned (None without aggregation).
    fold_importance : DataFrame
        Growth importance log(1/p) of every candidate (rows) in every fold (columns).
    pvalues : DataFrame
        The deciding PPI test of every candidate in the chosen fold, with the
        columns of :attr:`MBResult.pvalues <mbstat.results.MBResult>`.
    trace : DataFrame
        Growth and shrink decisions of every fold: ``fold, phase, action,
        feature, statistic, pvalue, log_pvalue``.
    n_fits : int
        Models fitted (a shrink-phase model serves every member it tests).
    """

    alpha: float = 0.05
    B: int = 30
    K: int = 5
    test_size: float = 0.2
    model: str = ""
    task: str = ""
    test: str = "ppi"
    folds: int = 5
    seed: int | None = None
    importance: pd.DataFrame = field(default=None, repr=False)
    fold_blankets: tuple = ()
    frequency: pd.Series = field(default=None, repr=False)
    zscores: pd.Series = field(default=None, repr=False)
    chosen_fold: int | None = None
    fold_importance: pd.DataFrame = field(default=None, repr=False)
    trace: pd.DataFrame = field(default=None, repr=False)
    n_fits: int = field(default=0, repr=False)

    @property
    def blanket(self) -> tuple:
        """The Markov blanket (same as ``selected``)."""
        return self.selected

    @property
    def aggregated(self) -> bool:
        """Whether the K-fold aggregation chose the blanket."""
        return self.chosen_fold is not None

    @property
    def pvalues(self) -> pd.DataFrame:
        """The deciding PPI test of each candidate, in the order of ``importance``.

        The shrink test given the rest of the blanket, or the growth test given
        the empty set for candidates dropped there, from the chosen fold:
        ``statistic`` (Wilcoxon V, from ``tests``), ``df`` (NaN), ``pvalue``,
        ``log_pvalue``, ``p_adj`` (Benjamini-Hochberg) and ``selected``, as in
        :attr:`MBResult.pvalues <mbstat.results.MBResult>`.
        """
        imp, log = self.importance, self.tests
        if self.aggregated:
            log = log[log["fold"] == self.chosen_fold]
        # a feature's last grow/shrink test decided it (a shrink test given the
        # empty set was a cache hit: not logged, and the same as its growth test)
        log = log[log["phase"].isin(["grow", "shrink"])].drop_duplicates("x", keep="last")
        deciding = log.set_index("x").reindex(imp.index)
        frame = pd.DataFrame(
            {"statistic": deciding["statistic"], "df": deciding["df"], "pvalue": imp["pvalue"],
             "log_pvalue": -imp["shrink"].fillna(imp["grow"])},
            index=imp.index,
        )
        frame["p_adj"] = bh_adjust(frame["pvalue"])
        frame["selected"] = imp["selected"]
        return frame

    def summary(self) -> Summary:
        """An R-style report: the blanket, its importance scores and the folds."""
        header = [
            ("Call", self.call),
            ("Data", f"{plural(self.n_rows, 'row')}, {plural(self.n_candidates, 'candidate')}; "
                     f"{self.task}"),
            ("Model", f"{self.model} on {self.device}"),
            ("Tests", f"{plural(self.n_tests, self._test_label)} ({self._test_settings}, "
                      f"alpha = {self.alpha:g}), {plural(self.n_fits, 'fit')}, "
                      f"{self.elapsed:.3g} s"),
            ("Seed", "not recorded (a numpy Generator was given)" if self.seed is None
             else f"{self.seed} (ppfs(..., seed={self.seed}) replays this run)"),
        ]
        zscores, frequency = self.zscores, self.frequency
        if self.aggregated:
            z = zscores.loc[self.chosen_fold]
            header.append(("Aggregation", f"{plural(self.K, 'fold')}; blanket of fold "
                                          f"{self.chosen_fold} (z = {z:.3g}, the highest)"))
        else:
            header.append(("Aggregation", "none (K < 2): one run on all rows"))
        imp = self.importance
        sel = imp[imp["selected"]]
        table = pd.DataFrame(index=sel.index)
        table["importance"] = sel["shrink"].fillna(sel["grow"]).map(lambda v: f"{v:.4g}")
        table["p-value"] = sel["pvalue"].map(format_pvalue)
        table["increase"] = sel["increase"].map(lambda v: f"{v:.4g}")
        if self.aggregated:
            table["folds"] = [f"{int(frequency.get(f, 0))}/{self.K}" for f in sel.index]
        table[""] = sel["pvalue"].map(stars)
        tables = {f"Blanket of {self.target} (importance = log(1/p) given the rest):": table}
        if self.aggregated:
            folds = pd.DataFrame(
                {
                    "size": [len(b) for b in self.fold_blankets],
                    "z": zscores.to_numpy(),
                    "blanket": [_shorten(b) for b in self.fold_blankets],
                },
                index=zscores.index,
            )
            folds["z"] = folds["z"].map(lambda v: f"{v:.3g}")
            tables["Fold blankets (Eqs. 6-8):"] = folds
        rest = imp[~imp["selected"]]
        footer = [SIGNIF_LEGEND,
                  "increase: mean rise of the test risk when the feature is permuted"
                  if self.test == "ppi" else
                  "increase: mean reduction of the held-out loss when the feature is added"]
        if len(rest):
            dropped_grow = int(rest["shrink"].isna().sum())
            footer.append(f"{plural(len(rest), 'candidate')} left out: {dropped_grow} at growth "
                          f"(given the empty set), {len(rest) - dropped_grow} at shrink.")
        if self.test == "ppi":
            footer.append(UNCALIBRATED)
        return Summary("Markov blanket: predictive permutation feature selection (PPFS)",
                       header, tables, footer)

    @property
    def _test_label(self) -> str:
        return "PPI test" if self.test == "ppi" else "LOCO test"

    @property
    def _test_settings(self) -> str:
        if self.test == "ppi":
            return f"{plural(self.B, 'split')} each, test size {self.test_size:g}"
        return f"{plural(self.folds, 'fold')} each, cross-fitted"

    def plot(self, kind: str = "importance", ax=None):
        """Importance scores (``kind="importance"``) or fold membership (``"folds"``).

        Returns the matplotlib Axes.
        """
        from .._validation import check_choice

        check_choice("kind", kind, ("importance", "folds"))
        if kind == "folds":
            return self._plot_folds(ax)
        return self._plot_importance(ax)

    def _plot_importance(self, ax):
        from matplotlib.patches import Patch

        from ..plotting import new_axes

        imp = self.importance
        score = imp["shrink"].fillna(imp["grow"]).to_numpy()
        score = np.where(np.isfinite(score), score, np.nan)
        top = np.nanmax(score, initial=1.0)
        score = np.nan_to_num(score, nan=0.0, posinf=top * 1.05)
        order = np.argsort(-score, kind="stable")[::-1]
        ax = new_axes(ax, figsize=(6, max(3, 0.28 * len(imp) + 1.5)))
        colors = np.where(imp["selected"].to_numpy(), "C3", "C0")[order]
        ax.barh(np.arange(len(imp)), score[order], color=colors)
        ax.set_yticks(np.arange(len(imp)))
        ax.set_yticklabels(imp.index.to_numpy()[order])
        line = ax.axvline(math.log(1.0 / self.alpha), color="k", ls="--", lw=1,
                          label=f"log(1/alpha) = {math.log(1.0 / self.alpha):.3g}")
        ax.set_xlabel("importance log(1/p)  (shrink test; growth test if dropped there)")
        ax.set_title(f"ppfs: {self.target}")
        ax.legend(handles=[Patch(color="C3", label="selected"),
                           Patch(color="C0", label="not selected"), line], loc="lower right")
        return ax

    def _plot_folds(self, ax):
        from ..plotting import new_axes

        zscores, frequency = self.zscores, self.frequency
        folds = list(zscores.index)
        feats = [f for f in self.importance.index if frequency.get(f, 0) > 0]
        member = np.array([[f in b for b in self.fold_blankets] for f in feats], dtype=float)
        ax = new_axes(ax, figsize=(max(4, 0.6 * len(folds) + 3), max(3, 0.28 * len(feats) + 2)))
        if len(feats):
            ax.imshow(member, aspect="auto", cmap="Greys", vmin=0, vmax=1.6)
        ax.set_xticks(np.arange(len(folds)))
        ax.set_xticklabels([f"{k}\nz={z:.2g}" for k, z in zscores.items()])
        ax.set_yticks(np.arange(len(feats)))
        ax.set_yticklabels([f"{f} ({int(frequency[f])})" for f in feats])
        if self.chosen_fold is not None:
            pos = folds.index(self.chosen_fold)
            ax.axvspan(pos - 0.5, pos + 0.5, fill=False, edgecolor="C3", lw=2.5)
        ax.set_xlabel("fold (z-score, Eq. 8); chosen fold framed in red")
        ax.set_ylabel("feature (frequency, Eq. 7)")
        ax.set_title(f"ppfs fold blankets: {self.target}")
        return ax


def _shorten(names, k: int = 4) -> str:
    """``a, b, c, d, ... (+3)`` for a long list of names."""
    if not names:
        return "(empty)"
    more = f", ... (+{len(names) - k})" if len(names) > k else ""
    return ", ".join(names[:k]) + more
