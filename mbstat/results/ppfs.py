"""Results of PPFS (Hassan et al.): frozen, printable, plottable (the PPI test's result,
:class:`~mbstat.ci.models.ppi.PPIResult`, lives with the test and is importable here too)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..ci.models.ppi import UNCALIBRATED, PPIResult
from ..ci.result import format_pvalue, plural
from ..plotting import new_axes
from .base import SIGNIF_LEGEND, SelectionResult, Summary, bh_adjust, stars

__all__ = ["PPIResult", "PPFSResult"]

@dataclass(frozen=True, repr=False, eq=False)
class PPFSResult(SelectionResult):
    """A PPFS Markov blanket with its importance scores and fold aggregation.

    Extra attributes
    ----------------
    alpha, B, K, test_size, folds : the settings (B and test_size: PPI; folds: LOCO, CRT).
    test : {"crt", "loco", "ppi"}
        The registry name of the test deciding the search (the calibrated CRT or LOCO
        test, or the paper's PPI test).
    test_label, test_settings, increase_note : str
        What the test object calls one test, its settings and its ``increase``
        column: the report names the test from these.
    merge : {"vote", "paper"}, float or None
        How the fold blankets were merged (None: K < 2, one run on all rows).
    votes : int or None
        With a vote: how many fold blankets a member is in at least.
    seed : int or None
        The seed used (drawn when none was given; None for a Generator):
        ``ppfs(..., seed=result.seed)`` replays the run.
    model, task : str
    importance : DataFrame
        One row per candidate (index ``feature``), most important first:
        ``grow`` (importance log(1/p) of the growth test given the empty
        set), ``shrink`` (log(1/p) of the last test given the rest of the
        blanket: the shrink phase's, or the spouse phase's; NaN when not tested), ``pvalue`` (of the deciding test),
        ``increase`` (its effect size), ``folds`` (how many fold blankets hold
        it) and ``selected``: from the chosen fold (``merge="paper"``), or the median
        over the folds (a vote).
    fold_blankets : tuple of tuples
        The blanket found on each fold (one entry when K < 2).
    frequency : Series
        How many fold blankets contain each feature of their union (Eq. 7).
    zscores : Series
        Score of each fold's blanket (Eq. 8), index ``fold``.
    chosen_fold : int or None
        The fold whose blanket was returned (``merge="paper"``; None otherwise).
    fold_importance : DataFrame
        Growth importance log(1/p) of every candidate (rows) in every fold (columns).
    pvalues : DataFrame
        The deciding test of every candidate (chosen fold, or medians over the folds),
        with the columns of :attr:`MBResult.pvalues <mbstat.results.MBResult>`.
    trace : DataFrame
        Growth, shrink and spouse-phase decisions of every fold: ``fold, phase, action,
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
    test_label: str = ""
    test_settings: str = ""
    increase_note: str = ""
    merge: object = None
    votes: int | None = None
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
        """Whether the blanket merges K >= 2 fold blankets."""
        return len(self.fold_blankets) > 1

    @property
    def pvalues(self) -> pd.DataFrame:
        """The deciding test of each candidate, in the order of ``importance``.

        The shrink test given the rest of the blanket (or the spouse phase's
        test), or the growth test given the empty set for candidates dropped
        there: from the chosen fold (``merge="paper"``, or one run), else the
        median over all K folds of each fold's deciding test (twice the median
        of K p-values is a valid p-value, Ruschendorf 1982; the median itself is
        a summary): ``statistic`` and ``df`` (from ``tests``), ``pvalue``,
        ``log_pvalue``, ``p_adj`` (Benjamini-Hochberg) and ``selected``, as in
        :attr:`MBResult.pvalues <mbstat.results.MBResult>`. Every column
        summarizes the same K tests; ``log_pvalue`` is the natural log of
        ``pvalue``, computed from the tests' log p-values (the median of an even
        count, the mean of the middle two, as log-sum-exp) so that it keeps the
        precision of p-values that underflow. (``importance``'s ``shrink`` is the
        median over only the folds that ran a shrink test of the candidate.)
        """
        imp, log = self.importance, self.tests
        if self.chosen_fold is not None:
            log = log[log["fold"] == self.chosen_fold]
        # a feature's last grow/shrink test of a fold decided it there (a shrink test given
        # the empty set was a cache hit: not logged, and the same as its growth test)
        log = log[log["phase"].isin(["grow", "shrink", "spouse"])]
        key = ["fold", "x"] if "fold" in log.columns else ["x"]
        log = log.drop_duplicates(key, keep="last")
        groups = log.groupby("x")
        deciding = groups[["statistic", "df"]].median().reindex(imp.index)
        log_p = groups["log_pvalue"].agg(_log_median).reindex(imp.index)
        frame = pd.DataFrame(
            {"statistic": deciding["statistic"], "df": deciding["df"], "pvalue": imp["pvalue"],
             "log_pvalue": log_p},
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
        if self.chosen_fold is not None:
            z = zscores.loc[self.chosen_fold]
            header.append(("Aggregation", f"{plural(self.K, 'fold')}; blanket of fold "
                                          f"{self.chosen_fold} (z = {z:.3g}, the highest; "
                                          f"the paper's Eqs. 6-8)"))
        elif self.aggregated:
            m, K = self.votes, self.K
            rule = "majority vote" if self.merge == "vote" else f"vote at {self.merge:g}"
            header.append(("Aggregation", f"{plural(K, 'fold')}; {rule}: the features in at "
                                          f"least {m} of the {K} fold blankets (E[false "
                                          f"members] <= {K / m:.3g} x one fold's, E[missed] "
                                          f"<= {K / (K - m + 1):.3g} x; Markov)"))
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
        if self.aggregated and self.chosen_fold is None:
            title = (f"Blanket of {self.target} (median over the folds; importance = log(1/p) "
                     f"given the rest):")
        else:
            title = f"Blanket of {self.target} (importance = log(1/p) given the rest):"
        table[""] = sel["pvalue"].map(stars)
        tables = {title: table}
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
            tables["Fold blankets (z: the paper's Eqs. 6-8):"] = folds
            near = imp[(~imp["selected"]) & (imp["folds"] > 0)] if "folds" in imp else imp[:0]
            if len(near):
                tables["Left out though in some fold blankets:"] = pd.DataFrame(
                    {"folds": [f"{int(c)}/{self.K}" for c in near["folds"]]}, index=near.index)
        rest = imp[~imp["selected"]]
        footer = [SIGNIF_LEGEND, self.increase_note]
        if len(rest):
            dropped_grow = int(rest["shrink"].isna().sum())
            footer.append(f"{plural(len(rest), 'candidate')} left out: {dropped_grow} at growth "
                          f"(given the empty set), {len(rest) - dropped_grow} given the rest "
                          f"of the blanket (shrink or spouse phase).")
        if self.test == "ppi":
            footer.append(UNCALIBRATED)
        return Summary("Markov blanket: predictive permutation feature selection (PPFS)",
                       header, tables, footer)

    @property
    def _test_label(self) -> str:
        """What the test object calls one test (``label`` of its class)."""
        return self.test_label

    @property
    def _test_settings(self) -> str:
        """The test object's settings (its ``settings_text()``)."""
        return self.test_settings

    def plot(self, kind: str = "importance", ax=None):
        """Importance scores (``kind="importance"``) or fold membership (``"folds"``).

        Returns the matplotlib Axes.
        """

        check_choice("kind", kind, ("importance", "folds"))
        if kind == "folds":
            return self._plot_folds(ax)
        return self._plot_importance(ax)

    def _plot_importance(self, ax):
        from matplotlib.patches import Patch


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


def _log_median(log_p) -> float:
    """log(median(p)) from the log p-values: the middle one of an odd count, the log of the
    mean of the middle two (log-sum-exp) of an even count, as ``np.median`` of the p-values
    (NaN ignored)."""
    values = np.sort(np.asarray(log_p, dtype=np.float64))
    values = values[~np.isnan(values)]
    n = len(values)
    if n == 0:
        return math.nan
    if n % 2:
        return float(values[n // 2])
    return float(np.logaddexp(values[n // 2 - 1], values[n // 2]) - math.log(2.0))


def _shorten(names, k: int = 4) -> str:
    """``a, b, c, d, ... (+3)`` for a long list of names."""
    if not names:
        return "(empty)"
    more = f", ... (+{len(names) - k})" if len(names) > k else ""
    return ", ".join(names[:k]) + more
