"""Plots of results (matplotlib, imported lazily). Every function returns its Axes."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["plot_pvalues", "plot_trace", "new_axes"]

_LOG10 = math.log(10.0)


def new_axes(ax=None, figsize=(7, 4)):
    """The given Axes, or a fresh one on a new figure."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def neg_log10(log_pvalue) -> np.ndarray:
    """-log10 p from natural-log p-values (finite even where p underflows)."""
    out = -np.asarray(log_pvalue, dtype=float) / _LOG10
    return np.where(np.isfinite(out), out, np.nan)


def plot_pvalues(table, alpha: float, ax=None, title: str = ""):
    """Bar chart of each candidate's deciding test as -log10 p, members highlighted, alpha as
    a line; candidates decided without a test (a whitelist, a stop, a power rule) get no bar
    but a grey cross at 0."""
    fresh = ax is None
    ax = new_axes(ax, figsize=(max(5, 0.35 * len(table) + 2), 4.5))
    heights = neg_log10(table["log_pvalue"].to_numpy())
    untested = np.isnan(heights)
    colors = np.where(table["selected"].to_numpy(), "C3", "C0")
    x = np.arange(len(table))
    ax.bar(x[~untested], heights[~untested], color=colors[~untested])
    handles = []
    if untested.any():
        handles += ax.plot(x[untested], np.zeros(untested.sum()), "x", color="0.5",
                           label="decided without a test", clip_on=False, zorder=3)
    ax.axhline(-math.log10(alpha), color="k", ls="--", lw=1, label=f"alpha = {alpha:g}")
    ax.set_xticks(x)
    ax.set_xticklabels(table.index, rotation=90)
    ax.set_ylabel("-log10 p-value of the deciding test")
    ax.set_title(title)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color="C3", label="selected"), Patch(color="C0", label="not selected"),
                       *ax.get_lines()[len(handles):], *handles], loc="best")
    if fresh:
        ax.figure.tight_layout()  # room for the rotated names
    return ax


def plot_trace(trace, alpha: float, ax=None, title: str = ""):
    """The search trace: -log10 p of each step, marked by what it did."""
    ax = new_axes(ax)
    y = neg_log10(trace["log_pvalue"].to_numpy())
    steps = trace.index.to_numpy()
    for action, marker, color in (("add", "^", "C2"), ("remove", "v", "C3"), ("keep", "o", "C0")):
        mask = (trace["action"] == action).to_numpy()
        if mask.any():
            ax.scatter(steps[mask], y[mask], marker=marker, color=color, label=action, zorder=3)
            for s, h, f in zip(steps[mask], y[mask], trace["feature"].to_numpy()[mask]):
                ax.annotate(str(f), (s, h if np.isfinite(h) else 0), fontsize=7,
                            xytext=(2, 3), textcoords="offset points")
    other = ~trace["action"].isin(["add", "remove", "keep"]).to_numpy()
    if other.any():
        ax.scatter(steps[other], y[other], marker="x", color="0.5", label="other")
    ax.axhline(-math.log10(alpha), color="k", ls="--", lw=1, label=f"alpha = {alpha:g}")
    ax.set_xlabel("step")
    ax.set_ylabel("-log10 p-value")
    ax.set_title(title)
    ax.legend(loc="best")
    return ax
