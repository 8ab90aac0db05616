"""Plots of results (matplotlib, imported lazily). Every function returns its Axes."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["plot_pvalues", "plot_trace", "plot_frequencies", "plot_heatmap", "new_axes",
           "draw_graph", "radial_layout", "network_layout", "GraphEdge", "graph_artists"]

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


#: Largest -log10 p drawn on a linear axis by ``scale="auto"``; above it the axis is
#: symmetric-log (linear up to 1, logarithmic above), so that one member at p = 1e-750 does
#: not flatten every other bar to nothing.
LINEAR_MAX = 20.0


def _set_scale(ax, heights, scale: str, label: str) -> str:
    """Apply ``scale`` ("auto", "linear" or "symlog") to the y axis of -log10 p-values and
    return the axis label, which says which scale it is."""
    finite = np.asarray(heights, dtype=float)
    finite = finite[np.isfinite(finite)]
    top = float(finite.max()) if finite.size else 0.0
    if scale == "auto":
        scale = "symlog" if top > LINEAR_MAX else "linear"
    if scale == "symlog":
        ax.set_yscale("symlog", linthresh=1.0, linscale=1.0)
        ax.set_ylim(0, max(10.0, top * 1.5))
        return f"{label}\n(symlog scale: linear below 1, logarithmic above)"
    return label


def plot_pvalues(table, alpha: float, ax=None, title: str = "", scale: str = "auto"):
    """Bar chart of each candidate's deciding test as -log10 p, members highlighted, alpha as
    a line; candidates decided without a test (a whitelist, a stop, a power rule) get no bar
    but a grey cross at 0. ``scale="auto"`` turns the axis symmetric-log (linear up to 1,
    logarithmic above, said on the axis) when the largest bar passes :data:`LINEAR_MAX`, so
    the excluded candidates' bars (p near 1) stay visible beside a member at p = 1e-750;
    "linear" and "symlog" force one.

    A bar on the other side of the alpha line from its decision (a candidate excluded at
    p <= alpha by the search's own rule, such as ``selection="bonferroni"``'s entry at
    alpha / m; a member kept at p > alpha by a learner's criterion, such as IAMB-IP's) is
    hatched, and the legend says so: the line is not the rule that decided it."""
    fresh = ax is None
    ax = new_axes(ax, figsize=(max(5, 0.35 * len(table) + 2), 4.5))
    heights = neg_log10(table["log_pvalue"].to_numpy())
    untested = np.isnan(heights)
    selected = table["selected"].to_numpy(bool)
    colors = np.where(selected, "C3", "C0")
    x = np.arange(len(table))
    past = np.where(untested, False, table["pvalue"].to_numpy(float) <= alpha)
    own_rule = ~untested & (past != selected)  # decided against the side of the line
    plain = ~untested & ~own_rule
    ax.bar(x[plain], heights[plain], color=colors[plain])
    handles = []
    if own_rule.any():
        ax.bar(x[own_rule], heights[own_rule], color=colors[own_rule], hatch="///",
               edgecolor="white", linewidth=0)
    if untested.any():
        handles += ax.plot(x[untested], np.zeros(untested.sum()), "x", color="0.5",
                           label="decided without a test", clip_on=False, zorder=3)
    ax.axhline(-math.log10(alpha), color="k", ls="--", lw=1, label=f"alpha = {alpha:g}")
    ax.set_xticks(x)
    ax.set_xticklabels(table.index, rotation=90)
    ax.set_ylabel(_set_scale(ax, heights, scale, "-log10 p-value of the deciding test"))
    ax.set_title(title)
    from matplotlib.patches import Patch

    rule = ([Patch(facecolor="0.6", hatch="///", edgecolor="white", linewidth=0,
                   label="decided by the search's own rule, not at alpha (see .evidence)")]
            if own_rule.any() else [])
    ax.legend(handles=[Patch(color="C3", label="selected"), Patch(color="C0", label="not selected"),
                       *rule, *ax.get_lines()[len(handles):], *handles], loc="best")
    if fresh:
        ax.figure.tight_layout()  # room for the rotated names
    return ax


def plot_trace(trace, alpha: float, ax=None, title: str = "", scale: str = "auto"):
    """The search trace: -log10 p of each step, marked by what it did (``scale`` as in
    :func:`plot_pvalues`)."""
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
    ax.set_ylabel(_set_scale(ax, y, scale, "-log10 p-value"))
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


# ------------------------------------------------------------------------------- graphs
#: Node colours by role (matplotlib colour specs).
NODE_COLORS = {"target": "#d62728", "parent/child": "#ff7f0e", "spouse": "#2ca02c",
               "member": "#ff7f0e", "learned": "#aec7e8", "not learned": "#e0e0e0"}

#: Edge styles by kind: (line style, colour, arrow style, legend text).
EDGE_STYLES = {
    "edge": ("-", "0.25", "-", "edge"),
    "arc": ("-", "0.25", "-|>", "arc (direction known: a collider)"),
    "asymmetric": ("--", "#d62728", "-|>", "asymmetric: only the tail's blanket holds the head"),
    "one-sided": (":", "0.45", "-", "member of a blanket, not itself learned"),
    "blanket": (":", "0.45", "-", "in the blanket (no common child identified)"),
    "strong": ("-", "0.15", "-", "strength >= threshold"),
    "weak": ("--", "0.55", "-", "strength < threshold"),
}


class GraphEdge(tuple):
    """An edge to draw: ``(a, b, kind, label, width)``; ``kind`` a key of
    :data:`EDGE_STYLES`, ``label`` text at its middle ("" for none), ``width`` in points."""

    def __new__(cls, a, b, kind="edge", label="", width=1.5):
        if kind not in EDGE_STYLES:
            raise ValueError(f"kind must be one of {sorted(EDGE_STYLES)}; got {kind!r}")
        return super().__new__(cls, (str(a), str(b), kind, str(label), float(width)))

    a = property(lambda self: self[0])
    b = property(lambda self: self[1])
    kind = property(lambda self: self[2])
    label = property(lambda self: self[3])
    width = property(lambda self: self[4])


def radial_layout(target, inner, outer) -> dict:
    """Positions of a blanket around its ``target`` (at the origin): the names of ``inner``
    (parents and children, or the members) evenly on the unit circle, each entry of
    ``outer`` (a mapping spouse -> the inner nodes it is joined to, possibly none) on the
    circle of radius 2 at the mean angle of its inner nodes, spread apart where several
    share one."""
    pos = {str(target): np.zeros(2)}
    inner = [str(v) for v in inner]
    angles = {}
    for i, name in enumerate(inner):
        angles[name] = math.pi / 2 - 2 * math.pi * i / max(len(inner), 1)
        pos[name] = np.array([math.cos(angles[name]), math.sin(angles[name])])
    wanted = {}
    free = []
    for name, links in outer.items():
        linked = [angles[v] for v in links if v in angles]
        if linked:  # circular mean of the linked angles
            wanted[str(name)] = math.atan2(np.mean(np.sin(linked)), np.mean(np.cos(linked)))
        else:
            free.append(str(name))
    # spread spouses that want the same direction: at least `gap` radians apart, in order
    gap = min(0.45, 2 * math.pi / max(len(wanted) + len(free), 1))
    placed = sorted(wanted.items(), key=lambda kv: kv[1])
    final = []
    for name, angle in placed:
        if final and angle - final[-1][1] < gap:
            angle = final[-1][1] + gap
        final.append((name, angle))
    if final:  # centre each spread group again on its wanted directions
        shift = np.mean([w for _, w in placed]) - np.mean([a for _, a in final])
        final = [(name, a + shift) for name, a in final]
    for i, name in enumerate(free):
        final.append((name, -math.pi / 2 + 2 * math.pi * (i + 0.5) / max(len(free), 1) / 2))
    for name, angle in final:
        pos[name] = 2.0 * np.array([math.cos(angle), math.sin(angle)])
    return pos


def network_layout(nodes, edges, seed: int = 0) -> dict:
    """Positions of a network's ``nodes`` joined by ``edges`` (pairs): Kamada & Kawai's
    (1989) energy layout from networkx, per connected component, the components packed
    left to right (largest first) and isolated nodes in a row below. Deterministic."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(str(v) for v in nodes)
    graph.add_edges_from((str(a), str(b)) for a, b in edges)
    parts = sorted((sorted(c) for c in nx.connected_components(graph)),
                   key=lambda c: (-len(c), c[0]))
    pos, x0 = {}, 0.0
    singles = [c[0] for c in parts if len(c) == 1]
    for part in (c for c in parts if len(c) > 1):
        sub = graph.subgraph(part)
        start = nx.circular_layout(sorted(sub.nodes))  # a fixed start: the same picture
        local = nx.kamada_kawai_layout(sub, pos=start)
        xy = np.array([local[v] for v in part])
        xy -= xy.mean(axis=0)
        _, _, axes = np.linalg.svd(xy, full_matrices=False)
        xy = xy @ axes.T * np.where(axes.sum(axis=1) < 0, -1.0, 1.0)  # long axis along x
        xy -= xy.min(axis=0)
        span = max(np.ptp(xy, axis=0).max(), 1e-9)
        xy *= math.sqrt(len(part)) / span  # area grows with the component's size
        for v, p in zip(part, xy):
            pos[v] = p + np.array([x0, 0.0])
        x0 += xy[:, 0].max() + 1.0
    width = max(x0 - 1.0, 1.0)
    for i, v in enumerate(singles):
        pos[v] = np.array([width * (i + 0.5) / len(singles), -1.0])
    return pos


def draw_graph(nodes, edges, pos, ax=None, title: str = "", legend: bool = True,
               fontsize: float = 8, figsize=None, aspect: str = "equal"):
    """Draw a graph with matplotlib alone (no Graphviz): ``nodes`` a mapping name -> role
    (a key of :data:`NODE_COLORS`), ``edges`` :class:`GraphEdge` s, ``pos`` name -> (x, y).

    Each node is a boxed label and each edge an arrow patch clipped at the boxes; they
    carry ``gid`` "node:NAME" and "edge:KIND:A--B" (matplotlib's artist id, kept in SVG
    output), so the picture can be read back (:func:`graph_artists`). ``aspect`` "equal" keeps the layout's shape, "auto"
    stretches it to the Axes. Returns the Axes."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fresh = ax is None
    if figsize is None:
        figsize = (7, 6) if len(nodes) <= 16 else (13, 10)
    ax = new_axes(ax, figsize=figsize)
    boxes = {}
    for name, role in nodes.items():
        x, y = pos[name]
        text = ax.text(x, y, name, ha="center", va="center", fontsize=fontsize, zorder=3,
                       bbox=dict(boxstyle="round,pad=0.35", fc=NODE_COLORS[role], ec="0.3",
                                 lw=2.0 if role == "target" else 0.8))
        text.set_gid(f"node:{name}")
        boxes[name] = text
    for edge in edges:
        style, color, arrow, _ = EDGE_STYLES[edge.kind]
        patch = ax.annotate(
            "", xy=pos[edge.b], xytext=pos[edge.a], zorder=4,
            arrowprops=dict(arrowstyle=arrow, linestyle=style, color=color, lw=edge.width,
                            patchA=boxes[edge.a].get_bbox_patch(),
                            patchB=boxes[edge.b].get_bbox_patch(),
                            shrinkA=1, shrinkB=1, mutation_scale=12))
        patch.set_gid(f"edge:{edge.kind}:{edge.a}--{edge.b}")
        if edge.label:
            mid = (np.asarray(pos[edge.a]) + np.asarray(pos[edge.b])) / 2
            ax.text(mid[0], mid[1], edge.label, fontsize=fontsize - 1.5, ha="center",
                    va="center", color="0.1", zorder=5,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85)
                    ).set_gid(f"label:{edge.a}--{edge.b}")
    xy = np.array([pos[v] for v in nodes]) if nodes else np.zeros((1, 2))
    pad = 0.08 * max(np.ptp(xy, axis=0).max(), 1.0)
    ax.update_datalim([xy.min(axis=0) - pad, xy.max(axis=0) + pad])
    ax.autoscale_view()
    ax.set_aspect(aspect, adjustable="datalim")
    ax.set_axis_off()
    ax.set_title(title)
    if legend:
        roles = list(dict.fromkeys(nodes.values()))
        kinds = list(dict.fromkeys(e.kind for e in edges))
        handles = [Patch(fc=NODE_COLORS[r], ec="0.3", label=r) for r in roles]
        handles += [Line2D([], [], ls=EDGE_STYLES[k][0], color=EDGE_STYLES[k][1],
                           label=EDGE_STYLES[k][3]) for k in kinds]
        ax.legend(handles=handles, loc="lower left", fontsize=fontsize - 1, framealpha=0.9,
                  bbox_to_anchor=(0.0, -0.02))
    if fresh:
        ax.figure.tight_layout()
    return ax


def graph_artists(ax) -> tuple:
    """The nodes and edges drawn by :func:`draw_graph` on ``ax``, read back from their gids:
    ``(nodes, edges)``, a set of names and a mapping ``(a, b)`` -> edge kind, as drawn."""
    nodes, edges = set(), {}
    for artist in ax.get_children():
        gid = artist.get_gid() or ""
        if gid.startswith("node:"):
            nodes.add(gid[5:])
        elif gid.startswith("edge:"):
            kind, pair = gid[5:].split(":", 1)
            a, b = pair.split("--", 1)
            edges[(a, b)] = kind
    return nodes, edges
