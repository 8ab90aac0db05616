"""Plots of results (matplotlib, imported lazily). Every function returns its Axes."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["plot_pvalues", "plot_trace", "plot_frequencies", "plot_heatmap", "new_axes"]

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


def plot_frequencies(table, threshold: float, ax=None, title: str = "",
                     threshold_label: str = "threshold"):
    """Inclusion frequencies as bars with their intervals (``frequency, lower, upper``),
    stable members (``stable``) highlighted, members of the full-data run (``full``) marked
    with a dot on the axis, and the threshold as a line (drawn only when at most 1)."""
    fresh = ax is None
    ax = new_axes(ax, figsize=(max(5, 0.35 * len(table) + 2), 4.5))
    x = np.arange(len(table))
    freq = table["frequency"].to_numpy()
    stable = table["stable"].to_numpy(bool)
    err = np.clip(np.vstack([freq - table["lower"].to_numpy(),
                             table["upper"].to_numpy() - freq]), 0.0, None)
    ax.bar(x, freq, color=np.where(stable, "C3", "C0"), yerr=err, capsize=2,
           ecolor="0.3")
    full = table["full"].to_numpy(bool)
    handles = []
    if full.any():
        handles += ax.plot(x[full], np.full(full.sum(), 0.02), "o", color="k", ms=4,
                           label="selected on all the data", zorder=3)
    if threshold <= 1:
        handles.append(ax.axhline(threshold, color="k", ls="--", lw=1, label=threshold_label))
    ax.set_xticks(x)
    ax.set_xticklabels(table.index, rotation=90)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("inclusion frequency (95% interval)")
    ax.set_title(title)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color="C3", label="stable"), Patch(color="C0", label="not stable"),
                       *handles], loc="upper right", fontsize=8)
    if fresh:
        ax.figure.tight_layout()
    return ax


def plot_heatmap(frame, ax=None, title: str = "", label: str = ""):
    """A square heat map of a frame of values in [0, 1] (NaN blank), names on both axes."""
    fresh = ax is None
    size = max(5, 0.22 * max(frame.shape) + 2)
    ax = new_axes(ax, figsize=(size + 1, size))
    image = ax.imshow(np.ma.masked_invalid(frame.to_numpy(dtype=float)), vmin=0, vmax=1,
                      cmap="viridis", aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(frame.shape[1]))
    ax.set_xticklabels(frame.columns, rotation=90, fontsize=7)
    ax.set_yticks(np.arange(frame.shape[0]))
    ax.set_yticklabels(frame.index, fontsize=7)
    ax.set_xlabel(frame.columns.name or "")
    ax.set_ylabel(frame.index.name or "")
    ax.figure.colorbar(image, ax=ax, label=label)
    ax.set_title(title)
    if fresh:
        ax.figure.tight_layout()
    return ax
