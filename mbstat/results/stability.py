"""Frozen results of resampled learners: inclusion frequencies and arc strengths.

:class:`StabilityResult` holds how often one target's learner selected each candidate over
R resamples (:func:`mbstat.stability`); :class:`ArcStrengths` the same for many targets
drawn on the same resamples, with each pair's strength as bnlearn's ``boot.strength``
reports it (:func:`mbstat.arc_strengths`). They hold what the runs found; they run nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._frozen import FrozenMapping, fields_equal
from .._validation import check_choice, check_int, check_number
from ..ci.result import plural
from ..plotting import GraphEdge, draw_graph, network_layout, plot_frequencies, plot_heatmap
from .base import MBResult, SelectionResult, Summary

__all__ = ["StabilityResult", "ArcStrengths", "ByTarget", "wilson_interval", "resample_rows", "mb_threshold",
           "mb_bound", "Z95"]

#: The 97.5% standard normal quantile (a two-sided 95% interval).
Z95 = 1.959963984540054


def wilson_interval(k, n: int, z: float = Z95):
    """Wilson's score interval for a binomial proportion k / n (Wilson 1927; the
    ``method="wilson"`` of statsmodels' ``proportion_confint``). Returns (lower, upper)."""
    k = np.asarray(k, dtype=float)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lower = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))  # exact at the ends,
    upper = np.where(k >= n, 1.0, np.clip(centre + half, 0.0, 1.0))  # not 1 - 1e-16
    return lower, upper


def mb_threshold(q: float, p: int, pfer: float) -> float:
    """The Meinshausen-Bühlmann (2010, Theorem 1) cut-off that bounds the expected number of
    false selections by ``pfer``: E[V] <= q^2 / ((2 pi_thr - 1) p) = pfer solved for pi_thr,
    ``pi_thr = (1 + q^2 / (p pfer)) / 2``. Above 1 when no cut-off in (1/2, 1] meets it."""
    return 0.5 * (1.0 + q * q / (p * pfer))


def mb_bound(q: float, p: int, pi_thr: float) -> float:
    """The Meinshausen-Bühlmann bound q^2 / ((2 pi_thr - 1) p) on E[V] at cut-off ``pi_thr``
    (infinite for pi_thr <= 1/2, where the theorem says nothing)."""
    return math.inf if pi_thr <= 0.5 else q * q / ((2.0 * pi_thr - 1.0) * p)


def resample_rows(entropy: int, r: int, n: int, size: int, replace: bool) -> np.ndarray:
    """The rows (sorted) of resample ``r``: ``size`` rows of ``n`` drawn with (bootstrap) or
    without (subsample) replacement by a generator from ``SeedSequence(entropy)``'s child r
    (``spawn_key=(r,)``), so resample r is the same whatever R, the target or the worker."""
    seq = np.random.SeedSequence(entropy, spawn_key=(r, 0))
    rng = np.random.default_rng(seq)
    rows = rng.integers(0, n, size=size) if replace else rng.choice(n, size=size, replace=False)
    return np.sort(rows)


def learner_seed(entropy: int, r: int | None) -> int:
    """The seed a randomized learner gets in resample ``r`` (``spawn_key=(r, 1)``), or in the
    full-data run for r = None (``spawn_key=(0, 2)``: not any resample's, whatever R)."""
    key = (0, 2) if r is None else (r, 1)
    return int(np.random.SeedSequence(entropy, spawn_key=key).generate_state(1)[0])


def _freq(value: float) -> str:
    return f"{value:.3f}"


@dataclass(frozen=True, repr=False, eq=False)
class StabilityResult(SelectionResult):
    """How often a learner selected each candidate over R resamples of the data.

    ``selected`` is the stable blanket: the candidates selected in at least a fraction
    ``threshold`` of the resamples.

    Extra attributes
    ----------------
    R : int
        Resamples.
    resample : {"subsample", "bootstrap"}
    size : int
        Rows of each resample.
    seed : int
        The entropy of the ``numpy.random.SeedSequence`` every resample's rows (and every
        randomized learner's seed) were drawn from: ``seed=`` when given, else the one drawn.
    rule : {"pfer", "frequency"}
        How ``threshold`` was set: the Meinshausen-Bühlmann bound at ``pfer``, or given.
    threshold : float
        The cut-off on the inclusion frequency (1 when no cut-off meets ``pfer``).
    pfer : float or None
        The bound asked for on the expected number of false selections (rule "pfer").
    q : float
        Mean number of candidates selected per resample.
    candidates : tuple of str
    selections : DataFrame
        One row per resample (index ``resample``, 0 .. R-1), one boolean column per
        candidate: selected in that resample.
    parents_children, spouses : DataFrame or None
        The same for the parents and children and the spouses, for learners that
        separate them (None otherwise).
    full : MBResult or SelectionResult
        The learner's run on all the data.
    learner_title : str
    notes : tuple of str
    """

    R: int = 0
    resample: str = "subsample"
    size: int = 0
    seed: int = 0
    rule: str = "pfer"
    threshold: float = 0.5
    pfer: float | None = None
    q: float = 0.0
    candidates: tuple = ()
    selections: pd.DataFrame = field(default=None, repr=False)
    parents_children: pd.DataFrame | None = field(default=None, repr=False)
    spouses: pd.DataFrame | None = field(default=None, repr=False)
    full: object = field(default=None, repr=False)
    learner_title: str = ""
    notes: tuple = ()

    def __eq__(self, other):
        return fields_equal(self, other, ignore=("elapsed",))

    __hash__ = SelectionResult.__hash__

    def _repr_tail(self) -> str:
        return f"stable at frequency >= {self.threshold:.3g} over R = {self.R} {self.resample}s"

    # ---------------------------------------------------------------- numbers
    @property
    def blanket(self) -> tuple:
        """The stable blanket (same as ``selected``)."""
        return self.selected

    @property
    def counts(self) -> pd.Series:
        """Resamples in which each candidate was selected."""
        return self.selections.sum(axis=0).astype(np.int64).rename("count")

    @property
    def frequency(self) -> pd.Series:
        """Inclusion frequency of each candidate (index ``feature``)."""
        return (self.counts / self.R).rename("frequency")

    @property
    def bound(self) -> float:
        """The Meinshausen-Bühlmann bound on the expected number of false selections at
        ``threshold``: q^2 / ((2 threshold - 1) p); infinite for a threshold <= 1/2."""
        return mb_bound(self.q, self.n_candidates, self.threshold)

    def resample_rows(self, r: int) -> np.ndarray:
        """The rows (positions in the encoded data, sorted) of resample ``r``."""

        r = check_int("r", r, low=0, high=self.R - 1)
        return resample_rows(self.seed, r, self.n_rows, self.size, self.resample == "bootstrap")

    @property
    def table(self) -> pd.DataFrame:
        """One row per candidate (index ``feature``), most frequent first: ``frequency`` with
        its Wilson 95% interval ``lower, upper`` (the Monte Carlo error of R resamples),
        ``count``, ``full`` (selected on all the data), ``stable`` (in the stable blanket)
        and, for learners that separate them, the frequencies ``pc`` (as a parent or child)
        and ``spouse``."""
        counts = self.counts.to_numpy()
        lower, upper = wilson_interval(counts, self.R)
        frame = pd.DataFrame({"frequency": counts / self.R, "lower": lower, "upper": upper,
                              "count": counts},
                             index=pd.Index(list(self.candidates), name="feature"))
        frame["full"] = frame.index.isin(self.full.selected)
        frame["stable"] = frame.index.isin(self.selected)
        for column, sel in (("pc", self.parents_children), ("spouse", self.spouses)):
            if sel is not None:
                frame[column] = sel.mean(axis=0).to_numpy()
        order = np.lexsort((np.arange(len(frame)), -counts))
        return frame.iloc[order]

    # ---------------------------------------------------------------- report
    def _rule_text(self) -> str:
        p, q = self.n_candidates, self.q
        if self.rule == "pfer":
            text = (f"stability selection (Meinshausen & Buhlmann 2010): E[false members] <= "
                    f"{self.pfer:g} with q = {q:.3g} mean selected of p = {p} candidates: "
                    f"frequency >= (1 + q^2 / (p PFER)) / 2 = ")
            cut = mb_threshold(q, p, self.pfer)
            text += (f"{cut:.3g}" if cut <= 1 else
                     f"{cut:.3g} > 1, so 1 (bound q^2 / p = {self.bound:.3g})")
        else:
            text = f"frequency >= {self.threshold:g} (given)"
            if self.threshold > 0.5:
                text += f"; Meinshausen-Buhlmann bound E[false members] <= {self.bound:.3g}"
        return text

    def summary(self, top: int | None = 20) -> Summary:
        """An R-style report: the resampling, the rule, the stable blanket and the most
        frequent candidates (``top`` of them; None: every candidate selected at least once)."""
        rows = f"{self.size} rows " + ("drawn with replacement" if self.resample == "bootstrap"
                                        else "without replacement")
        tests = f"{self.n_tests} over the resamples, {self.elapsed:.3g} s"
        header = [
            ("Call", self.call),
            ("Learner", self.learner_title or self.method),
            ("Data", f"{plural(self.n_rows, 'row')}, {plural(self.n_candidates, 'candidate')}"),
            ("Resamples", f"R = {self.R} {self.resample}s of {rows}, seed = {self.seed}"),
            ("Rule", self._rule_text()),
            ("Tests", tests),
        ]
        table = self.table
        shown = table[table["count"] > 0]
        if top is not None:
            shown = shown.iloc[:top]
        out = pd.DataFrame(index=shown.index)
        out["freq"] = shown["frequency"].map(_freq)
        out["95% interval"] = [f"[{a:.3f}, {b:.3f}]" for a, b in zip(shown["lower"],
                                                                     shown["upper"])]
        for column in ("pc", "spouse"):
            if column in shown:
                out[column] = shown[column].map(_freq)
        out["full data"] = shown["full"].map({True: "yes", False: ""})
        out["stable"] = shown["stable"].map({True: "*", False: ""})
        tables = {f"Stable blanket of {self.target}:": "  " + (", ".join(self.selected)
                                                               or "(none)"),
                  "Inclusion frequencies (Wilson 95% intervals over the R resamples):": out}
        footer = ["'*' stable: in the stable blanket; 'full data': selected by the run on "
                  "all the rows."]
        never = int((table["count"] == 0).sum())
        hidden = int((table["count"] > 0).sum()) - len(out)
        if hidden:
            footer.append(f"{plural(hidden, 'more candidate')} selected at least once (see "
                          ".table).")
        if never:
            footer.append(f"{plural(never, 'candidate')} never selected.")
        full, stable = set(self.full.selected), set(self.selected)
        footer.append(f"Full-data blanket: {{{', '.join(self.full.selected)}}}"
                      + ("; the same as the stable blanket." if full == stable else
                         "; " + "; ".join(f"{what}: {{{', '.join(sorted(names))}}}"
                                          for what, names in (("not stable", full - stable),
                                                              ("stable but not in it",
                                                               stable - full)) if names)
                         + "."))
        footer += list(self.notes)
        return Summary(f"Stability of the Markov blanket: {self.method}, {self.R} resamples",
                       header, tables, footer)

    def plot(self, ax=None, top: int | None = 30):
        """Inclusion frequency of the most frequent candidates (``top``; None: all) as bars with
        their 95% intervals, stable members highlighted, the threshold as a line; members of
        the full-data blanket marked. Returns the matplotlib Axes."""

        table = self.table
        if top is not None:
            table = table.iloc[:top]
        label = (f"threshold {self.threshold:.3g} (PFER <= {self.pfer:g})" if self.rule == "pfer"
                 else f"threshold {self.threshold:.3g}")
        return plot_frequencies(table, self.threshold, ax=ax, threshold_label=label,
                                title=f"{self.method}: {self.target}, R = {self.R} "
                                      f"{self.resample}s")


class ByTarget:
    """Read access by target to a collection's ``results`` mapping (``coll[target]``,
    iteration over the targets, ``len``)."""

    def __getitem__(self, target):
        return self.results[target]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the summary as HTML."""
        return self.summary()._repr_html_()


@dataclass(frozen=True, eq=False)
class ArcStrengths(ByTarget):
    """Inclusion frequencies of many targets over the same R resamples, and the strength of
    each pair as bnlearn's ``boot.strength`` reports arcs.

    Attributes
    ----------
    method : str
    results : mapping target -> StabilityResult (read-only)
    elapsed : float
        Wall-clock seconds.
    strength : DataFrame
        One row per pair of learned targets (index ``pair``, 1, 2, ...; ``from`` before
        ``to`` in the data's order):
        ``strength`` the fraction of resamples with both ``from`` in MB(``to``) and ``to``
        in MB(``from``) (the AND rule), ``either`` with at least one (the OR rule), and
        ``from_in_to``, ``to_in_from`` each direction; ``full`` whether the full-data runs
        joined them by the AND rule.
    """

    method: str
    results: object = field(repr=False)
    strength: pd.DataFrame = field(repr=False)
    elapsed: float = field(repr=False)

    def __post_init__(self):
        object.__setattr__(self, "results", FrozenMapping(self.results))

    def __eq__(self, other):
        return fields_equal(self, other, ignore=("elapsed",))

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.method, tuple(self.results)))

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        if isinstance(value, (pd.DataFrame, pd.Series)):
            return value.copy(deep=True)
        return value

    def __repr__(self) -> str:
        first = next(iter(self.results.values()))
        return (f"<ArcStrengths {self.method}: {plural(len(self.results), 'target')}, "
                f"R = {first.R} {first.resample}s, "
                f"{plural(int((self.strength['strength'] >= 0.5).sum()), 'pair')} "
                "with strength >= 0.5>")

    @property
    def matrix(self) -> pd.DataFrame:
        """Inclusion frequencies: row ``target``, column ``feature``, the fraction of
        resamples with the feature in the target's blanket (NaN on the diagonal)."""
        names = list(self.results)
        features = list(dict.fromkeys(f for r in self.results.values() for f in r.candidates))
        features = [*names, *[f for f in features if f not in names]]
        frame = pd.DataFrame(np.nan, index=pd.Index(names, name="target"),
                             columns=pd.Index(features, name="feature"))
        for target, res in self.results.items():
            frame.loc[target, list(res.candidates)] = res.frequency.to_numpy()
        return frame

    def averaged(self, threshold: float = 0.5) -> pd.DataFrame:
        """The pairs whose strength (AND rule) is at least ``threshold``, strongest first
        (bnlearn's ``averaged.network`` reading for undirected blanket pairs)."""

        threshold = check_number("threshold", threshold, low=0.0, high=1.0, closed="right")
        table = self.strength
        return table[table["strength"] >= threshold].sort_values(
            ["strength", "either"], ascending=False, kind="stable")

    def summary(self, threshold: float = 0.5, top: int | None = 30) -> Summary:
        """The resampling and the strongest pairs (strength >= ``threshold``; ``top`` rows)."""
        first = next(iter(self.results.values()))
        strong = self.averaged(threshold)
        shown = strong if top is None else strong.iloc[:top]
        out = shown.copy()
        for column in ("strength", "either", "from_in_to", "to_in_from"):
            out[column] = out[column].map(_freq)
        out["full"] = out["full"].map({True: "yes", False: ""})
        header = [("Call", first.call.replace(f'"{first.target}"', "<each target>")),
                  ("Targets", str(len(self.results))),
                  ("Resamples", f"R = {first.R} {first.resample}s of {first.size} rows, "
                                f"seed = {first.seed}"),
                  ("Time", f"{self.elapsed:.3g} s wall clock")]
        footer = ["strength: both in the other's blanket (AND); either: at least one (OR); "
                  "full: joined by the full-data runs (AND)."]
        if top is not None and len(strong) > top:
            footer.append(f"{plural(len(strong) - top, 'more pair')} (see .averaged()).")
        caption = f"Pairs with strength >= {threshold:g} ({len(strong)} of {len(self.strength)}):"
        return Summary(f"Markov blanket arc strengths: {self.method}", header,
                       {caption: out}, footer)

    def plot(self, ax=None, kind: str = "and", threshold: float = 0.5,
             min_strength: float = 0.1):
        """Plot the pairs' strengths; returns the Axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        kind : {"and", "directed", "graph"}
            "and": heat map of the strengths (both in the other's blanket, symmetric);
            "directed": heat map of :attr:`matrix` over the targets (row target, column
            feature, the frequency of the feature in the target's blanket); "graph": the
            network of the targets as bnlearn's ``strength.plot`` draws it, each pair of
            strength >= ``min_strength`` an edge of width proportional to its strength,
            solid at >= ``threshold`` (the averaged network, :meth:`averaged`) and dashed
            below (matplotlib only, no Graphviz).
        threshold, min_strength : float
            For "graph": the strength of a solid edge, and the least strength drawn.
        """

        check_choice("kind", kind, ("and", "directed", "graph"))
        names = list(self.results)
        first = next(iter(self.results.values()))
        title = f"{self.method}: arc strengths, R = {first.R} {first.resample}s"
        if kind == "graph":
            threshold = check_number("threshold", threshold, low=0.0, high=1.0, closed="right")
            min_strength = check_number("min_strength", min_strength, low=0.0, high=1.0,
                                        closed="right")
            table = self.strength
            table = table[table["strength"] >= min_strength]
            edges = [GraphEdge(a, b, "strong" if s >= threshold else "weak", "",
                               0.4 + 3.6 * s)
                     for a, b, s in zip(table["from"], table["to"], table["strength"])]
            strong = [(e.a, e.b) for e in edges if e.kind == "strong"]
            pos = network_layout(names, strong or [(e.a, e.b) for e in edges])
            ax = draw_graph({v: "learned" for v in names}, edges, pos, ax=ax, aspect="auto",
                            title=f"{title}\nline width proportional to strength "
                                  f"(AND rule); solid >= {threshold:g}")
            return ax
        if kind == "directed":
            frame = self.matrix.loc[:, names]
            label = "frequency of feature in MB(target)"
        else:
            frame = pd.DataFrame(np.nan, index=pd.Index(names, name="from"),
                                 columns=pd.Index(names, name="to"))
            table = self.strength
            for a, b, s in zip(table["from"], table["to"], table["strength"]):
                frame.loc[a, b] = frame.loc[b, a] = s
            label = "strength (both in the other's blanket)"
        return plot_heatmap(frame, ax=ax, label=label, title=title)


def strength_table(results) -> pd.DataFrame:
    """The pairs table of :class:`ArcStrengths` from per-target results drawn on the same
    resamples (their ``selections`` rows are the same resamples)."""
    names = list(results)
    rows = []
    for i, a in enumerate(names):
        sel_a = results[a].selections
        full_a = set(results[a].full.selected)
        for b in names[i + 1:]:
            sel_b = results[b].selections
            ab = sel_b[a].to_numpy() if a in sel_b else np.zeros(len(sel_b), bool)  # a in MB(b)
            ba = sel_a[b].to_numpy() if b in sel_a else np.zeros(len(sel_a), bool)  # b in MB(a)
            rows.append((a, b, float(np.mean(ab & ba)), float(np.mean(ab | ba)),
                         float(np.mean(ab)), float(np.mean(ba)),
                         b in full_a and a in set(results[b].full.selected)))
    frame = pd.DataFrame(rows, columns=["from", "to", "strength", "either", "from_in_to",
                                        "to_in_from", "full"])
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="pair")
    return frame


def is_mb_result(result) -> bool:
    """Whether a learner's result separates parents and children from spouses."""
    return isinstance(result, MBResult) and result.parents_children is not None
