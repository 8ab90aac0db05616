"""Frozen result objects with R-style summaries, p-value tables and plots.

Every algorithm returns a subclass of :class:`SelectionResult`; Markov-blanket
learners return :class:`MBResult`, built by the learners' front end
(:func:`mbstat.algorithms.learners.learn`) from the evidence the search decided on.
Results hold what the search found; they run no tests of their own.
"""
from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._frozen import FrozenMapping, fields_equal, values_equal
from .._validation import check_alpha, check_choice
from ..ci.result import format_pvalue, plural
from ..plotting import GraphEdge, draw_graph, plot_pvalues, plot_trace, radial_layout

__all__ = ["SelectionResult", "MBResult", "Summary", "format_call", "stars", "plural",
           "bh_adjust", "adjust_pvalues", "describe_data", "empty_tests", "make_trace", "trace_builder",
           "TraceBuilder", "LAZY_FIELDS"]

#: Fields a learner may pass as builders (callables returning the DataFrame, picklable):
#: the tests log (:meth:`~mbstat.ci.CITester.log_builder`), the evidence
#: (:class:`~mbstat.algorithms._evidence.Evidence`) and the trace (:class:`TraceBuilder`).
#: Each is built on first access and kept: most runs of a search (a learner over every
#: node, a stability resample) never read them.
LAZY_FIELDS = ("tests", "evidence", "trace")

SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"


def signif_legend(of: str | None = None) -> str:
    """The legend of the stars; ``of``: the column they follow, where a table shows more
    than one p-value."""
    return SIGNIF_LEGEND if of is None else SIGNIF_LEGEND.replace(
        "Signif. codes:", f"Signif. codes (of {of}):", 1)


def stars(p: float) -> str:
    """R's significance stars."""
    if p is None or math.isnan(p):
        return ""
    for cut, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p <= cut:
            return mark
    return ""


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (statsmodels' ``fdr_bh``)."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float)
    return multipletests(p, method="fdr_bh")[1] if len(p) else p


TESTS_DTYPES = {"x": str, "y": str, "z": str, "statistic": float, "df": float, "pvalue": float,
                "log_pvalue": float, "mi": float, "independent": bool, "skipped": bool,
                "calibration": str, "phase": str}


def empty_tests() -> pd.DataFrame:
    """A tests log with no rows, with the columns of :attr:`~mbstat.ci.CITester.log`."""
    frame = pd.DataFrame(columns=list(TESTS_DTYPES), index=pd.RangeIndex(1, 1, name="test"))
    return frame.astype(TESTS_DTYPES)


def format_call(name: str, data, **args) -> str:
    """R-style call line: ``iamb(data = <DataFrame 20000 x 37>, target = "HR", ...)``."""
    parts = [f"data = {describe_data(data)}"]
    for key, value in args.items():
        if value is None:
            continue
        parts.append(f"{key} = {_rrepr(value)}")
    return f"{name}({', '.join(parts)})"


def describe_data(data) -> str:
    """The data as a call line shows it: ``<DataFrame 20000 x 37>``, ``<Dataset 500 x 8>``."""
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) == 2:
        return f"<{type(data).__name__} {shape[0]} x {shape[1]}>"
    rows = getattr(data, "n_rows", None)
    if rows is not None:
        return f"<Dataset {rows} x {data.n_cols}>"
    return f"<{type(data).__name__}>"


def _rrepr(value) -> str:
    if isinstance(value, (np.generic, np.ndarray)):  # np.int64(2) is 2, as R prints it
        value = value.tolist()
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return f"{value:.6g}"
    if callable(value):
        return getattr(value, "__name__", repr(value))
    if isinstance(value, (list, tuple)):
        return "c(" + ", ".join(_rrepr(v) for v in value) + ")"
    if isinstance(value, Mapping):
        return "c(" + ", ".join(f"{_rname(k)} = {_rrepr(v)}" for k, v in value.items()) + ")"
    return repr(value)


def _rname(key) -> str:
    """An R name: as it is when syntactic (letters, digits, ``_``, ``.``), else in backquotes."""
    key = str(key)
    return key if key.replace(".", "_").isidentifier() else f"`{key}`"


class Summary:
    """A printable report: a header, tables (DataFrames) and footer lines.

    ``str()`` renders text like R's ``summary()``; ``tables`` keeps the
    DataFrames for programmatic use, as statsmodels' ``summary2`` does.
    """

    def __init__(self, title: str, header: list, tables: dict, footer: list):
        self.title = title
        self.header = list(header)
        self.tables = dict(tables)
        self.footer = list(footer)

    def __str__(self) -> str:
        lines = [self.title, ""]
        width = max((len(k) for k, _ in self.header), default=0)
        lines += [f"{k + ':':<{width + 1}}  {v}" for k, v in self.header]
        for caption, table in self.tables.items():
            lines += ["", caption]
            if isinstance(table, str):
                lines.append(table)
            elif len(table):
                lines.append(table.to_string())
            else:
                lines.append("  (none)")
        if self.footer:
            lines.append("---")
            lines += self.footer
        return "\n".join(line.rstrip() for text in lines for line in text.split("\n"))

    __repr__ = __str__

    def _repr_html_(self) -> str:
        """The same report as HTML (Jupyter's rich display, as statsmodels' summaries): the
        header as a two-column table, each table as an HTML table with the cells of the text,
        the footer as lines; every text escaped."""
        esc = html.escape
        parts = [f'<div class="mbstat-summary"><h4>{esc(self.title)}</h4>',
                 '<table class="mbstat-header">']
        parts += [f'<tr><th style="text-align:left">{esc(str(k))}:</th>'
                  f'<td style="text-align:left">{esc(str(v))}</td></tr>' for k, v in self.header]
        parts.append("</table>")
        for caption, table in self.tables.items():
            parts.append(f"<p><b>{esc(caption)}</b></p>")
            if isinstance(table, str):
                parts.append(f"<pre>{esc(table)}</pre>")
            elif len(table):
                parts.append(table.to_html(classes="mbstat-table", border=0))
            else:
                parts.append("<p>&nbsp;&nbsp;(none)</p>")
        if self.footer:
            parts.append("<hr>")
            parts += [f"<p>{esc(line)}</p>" for line in self.footer]
        parts.append("</div>")
        return "\n".join(parts)


def _fmt_table(frame: pd.DataFrame, adjust: str = "BH",
               adjusted_stars: bool = False) -> pd.DataFrame:
    """Given / statistic / df / p-value / adjusted columns formatted as R prints them; the
    stars of the p-value, or of the adjusted one (``adjusted_stars``)."""
    out = pd.DataFrame(index=list(frame.index))
    if (frame["x"] != frame.index).any():  # a joint test (GS^(m) subsets): show the set
        out["tested"] = frame["x"].map(lambda v: "{" + v + "}" if ", " in v else v)
    tested = frame["pvalue"].notna() | frame["skipped"]
    # a candidate decided without a test (a whitelist, a blacklist) shows why, not a set
    out["given"] = [_shorten_set(z) if t else f"({phase})"
                    for z, t, phase in zip(frame["z"], tested, frame["phase"])]
    out["statistic"] = frame["statistic"].map(lambda v: "NA" if math.isnan(v) else f"{v:.4g}")
    out["df"] = frame["df"].map(lambda v: "" if math.isnan(v) else f"{v:.4g}")
    if frame["criterion"].notna().any():
        out["criterion"] = frame["criterion"].map(lambda v: "" if math.isnan(v) else f"{v:.4g}")
    out["p-value"] = frame.apply(_fmt_p, axis=1)
    out[_adj_label(adjust)] = frame["p_adj"].map(format_pvalue)
    out[""] = frame["p_adj" if adjusted_stars else "pvalue"].map(stars)
    return out


def _timeless(trace):
    """A trace without its clock (the seconds at each step are not part of a result's value)."""
    if isinstance(trace, pd.DataFrame) and "seconds" in trace.columns:
        return trace.drop(columns="seconds")
    return trace


def _exclusion_lines(rest: pd.DataFrame, level: float, own_level: bool) -> list:
    """What the summary says of the excluded candidates: how many a test excluded (the
    closest call), and how many were left out without one (and why)."""
    if not len(rest):
        return []
    tested = rest[rest["pvalue"].notna()]
    parts = []
    if len(tested):
        worst = tested["log_pvalue"].idxmin()
        given = tested.loc[worst, "z"]
        text = (f"{plural(len(tested), 'candidate')} excluded by a test in .evidence "
                f"(smallest p = {format_pvalue(tested.loc[worst, 'pvalue'])}, for {worst}"
                f"{' given ' + _shorten_set(given) if given else ''})")
        low = int((tested["pvalue"] <= level).sum())
        if low:
            text += (f"; {low} of them at p <= {level:g}" +
                     (", by a rule of the search (see their phase)" if own_level else ""))
        parts.append(text + ".")
    untested = rest[rest["pvalue"].isna()]
    for phase, n in untested["phase"].value_counts().items():
        parts.append(f"{plural(n, 'candidate')} excluded without a test: {phase}.")
    return parts


def _calibration_notes(shown: pd.DataFrame, n_rows: int) -> list:
    """What the summary says of how the p-values of the tests shown were obtained."""
    notes = []
    semi = int((shown["calibration"] == "semiparametric").sum())
    if semi:
        its = "its p-value is" if semi == 1 else "their p-values are"
        notes.append(f"Note: {semi} of these tests {'was' if semi == 1 else 'were'} too sparse "
                     f"for the asymptotic chi-square; {its} semiparametric, which holds the "
                     "level: a scaled chi-square c chi2(k) with the mean and variance of the "
                     "statistic under permutations of x within the strata of z (df shows the "
                     "mean).")
    weak = int(((shown["calibration"] == "asymptotic") & (n_rows < 5 * shown["df"])).sum())
    if weak:
        notes.append(f"Note: {weak} of these tests {'has' if weak == 1 else 'have'} fewer "
                     "than 5 rows per degree of freedom and an asymptotic p-value, which runs "
                     "too small on sparse tables (calibration='auto' corrects it).")
    return notes


def _shorten_set(text: str, k: int = 3) -> str:
    """A conditioning set for the table: ``{}`` when empty, its first k names and a count."""
    names = [v for v in text.split(", ") if v]
    if not names:
        return "{}"
    shown = ", ".join(names[:k]) + (f", +{len(names) - k}" if len(names) > k else "")
    return "{" + shown + "}"


def _fmt_p(row) -> str:
    if row["skipped"]:
        return "skipped"
    if not row["pvalue"] <= 1:  # NaN: not tested
        return "NA"
    if row["pvalue"] >= np.finfo(float).eps or not np.isfinite(row["log_pvalue"]):
        return format_pvalue(row["pvalue"])
    # below R's "< 2.2e-16" (or underflowed): the magnitude from the log p-value, one rule
    # for the whole column, so that the members' evidence can be compared
    return f"1e{row['log_pvalue'] / math.log(10):.0f}"


@dataclass(frozen=True)
class SelectionResult:
    """What every selector returns: the selection and its provenance.

    Attributes
    ----------
    method : str
        Function that produced it ("iamb", "gs_m", ...).
    target : str
    selected : tuple of str
        The selected features, in the order the algorithm settled them.
    params : mapping
        The algorithm's parameters (read-only).
    call : str
        An R-style call line.
    n_rows, n_candidates : int
    n_tests : int
        Tests performed (cache hits not counted).
    elapsed : float
        Seconds.
    backend, device : str
        Where the work really ran.
    complete : bool
        False when an anytime algorithm stopped early (time budget, interrupt).
    tests : DataFrame
        The log of every test performed (no rows for selectors that test nothing). Built
        on first access, then kept: a learner passes a builder (a callable returning the
        frame, e.g. :meth:`~mbstat.ci.CITester.log_builder`), since on wide data the log
        of every test costs time and memory that few readers want.
    n_variables : int
        Columns of the data (the target, the candidates and any left out).

    Results are immutable: every DataFrame or Series attribute is handed out
    as a deep copy, so editing it never changes the result.
    """

    method: str
    target: str
    selected: tuple
    params: object = field(repr=False)
    call: str = field(repr=False)
    n_rows: int = field(repr=False)
    n_candidates: int = field(repr=False)
    n_tests: int = field(repr=False)
    elapsed: float = field(repr=False)
    backend: str = field(repr=False)
    device: str = field(repr=False)
    complete: bool = field(default=True, repr=False)
    tests: pd.DataFrame = field(default=None, repr=False)  # or its builder, until read
    n_variables: int = field(default=0, repr=False)  # columns of the data (0: not recorded)

    def __post_init__(self):
        object.__setattr__(self, "params", FrozenMapping(self.params))
        if object.__getattribute__(self, "tests") is None:  # (not its builder: not built here)
            object.__setattr__(self, "tests", empty_tests())

    #: Results compare by value (frames by content, NaN equal to NaN), so a result equals
    #: its unpickled copy and a rerun with the same inputs; the seconds taken (``elapsed``)
    #: are not part of the value. They hash by what they selected.
    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        for name in LAZY_FIELDS:  # compare the tables, not their builders
            if name in self.__dataclass_fields__:
                self._built(name), other._built(name)
        if "trace" not in self.__dataclass_fields__:  # (FSDMS, PPFS: no steps to compare)
            return fields_equal(self, other, ignore=("elapsed",))
        return (fields_equal(self, other, ignore=("elapsed", "trace"))
                and values_equal(_timeless(self.trace), _timeless(other.trace)))

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.method, self.target, self.selected))

    def __getattribute__(self, name):
        """Attributes as stored, except DataFrames and Series: deep copies; a table kept as
        its builder (:data:`LAZY_FIELDS`) is built on first access."""
        value = object.__getattribute__(self, name)
        if name in LAZY_FIELDS and callable(value) and not isinstance(value, pd.DataFrame):
            value = object.__getattribute__(self, "_built")(name)
        if isinstance(value, (pd.DataFrame, pd.Series)):
            return value.copy(deep=True)  # frames are mutable: hand out copies
        return value

    def _built(self, name: str):
        """The field ``name`` built from its builder the first time and kept in its place
        (the result stays frozen to its users: only this fills the field, once)."""
        value = object.__getattribute__(self, name)
        if callable(value) and not isinstance(value, pd.DataFrame):
            value = value()
            object.__setattr__(self, name, value)
        return value

    def __repr__(self) -> str:
        shown = ", ".join(self.selected[:8]) + (", ..." if len(self.selected) > 8 else "")
        flag = "" if self.complete else ", incomplete"
        return (
            f"<{type(self).__name__} {self.method}: {self.target} <- {{{shown}}} "
            f"({len(self.selected)} of {self.n_candidates}), {self._repr_tail()}{flag}>"
        )

    def _repr_tail(self) -> str:
        """What ``repr`` says after the selection's size."""
        return plural(self.n_tests, "test")

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the summary as HTML (its tables as HTML tables), or the
        repr for a result without a summary."""
        summary = getattr(self, "summary", None)
        if summary is None:
            return f"<pre>{html.escape(repr(self))}</pre>"
        return summary()._repr_html_()

    def __iter__(self):
        return iter(self.selected)

    def __len__(self) -> int:
        return len(self.selected)

    def __contains__(self, feature) -> bool:
        return feature in self.selected


#: p.adjust names (R) -> statsmodels ``multipletests`` methods ("fdr" is R's alias of BH).
ADJUSTMENTS = {"BH": "fdr_bh", "fdr": "fdr_bh", "BY": "fdr_by", "holm": "holm",
               "hochberg": "simes-hochberg", "hommel": "hommel", "bonferroni": "bonferroni",
               "none": None}
_CANONICAL = {name.lower(): name for name in ADJUSTMENTS}


def _adjustment(adjust) -> str:
    """R's name of an adjustment, case-insensitive ("bh" is "BH")."""

    name = _CANONICAL.get(adjust.lower(), adjust) if isinstance(adjust, str) else adjust
    check_choice("adjust", name, ADJUSTMENTS)
    return name


def adjust_pvalues(pvalues, adjust: str = "BH") -> np.ndarray:
    """Adjusted p-values as R's ``p.adjust`` (via statsmodels); NaN entries stay NaN."""
    p = np.asarray(pvalues, dtype=float)
    out = p.copy()
    method = ADJUSTMENTS[_adjustment(adjust)]
    ok = ~np.isnan(p)
    if method is not None and ok.any():
        from statsmodels.stats.multitest import multipletests

        out[ok] = multipletests(p[ok], method=method)[1]
    return out


def _adj_label(adjust: str) -> str:
    adjust = _adjustment(adjust)
    return "p.adj" if adjust == "none" else f"p.adj ({adjust})"


@dataclass(frozen=True, repr=False, eq=False)
class MBResult(SelectionResult):
    """A learned Markov blanket with the evidence the search decided on.

    Extra attributes
    ----------------
    evidence : DataFrame
        One row per candidate, members first: the test on which the search
        decided it (``decision`` "keep" or "exclude", its ``phase``, the tested
        ``x`` and conditioning set ``z``, ``statistic, df, pvalue, log_pvalue``,
        the learner's own ``criterion`` where it decides on one (NaN
        otherwise) and ``skipped``). A member shows the weakest test that kept
        it since it last entered (largest p-value, as pcalg's pMax); an
        excluded candidate the test that excluded it, with its separating set.
    pvalues : DataFrame
        ``evidence`` with the Benjamini-Hochberg adjusted ``p_adj`` and the
        boolean ``selected``; :meth:`table` chooses another adjustment.
    trace : DataFrame
        Growth/shrink steps: ``phase, action, feature, statistic, pvalue``.
    test, alpha : the CI test and its level.
    parents_children, spouses : tuple or None
        For algorithms that separate them (MBOR).
    title : str
        Long name of the method, used by ``summary()``.
    notes : tuple of str
        What the user should know about this run (a constant target, caps that bound).
    """

    test: str = ""
    alpha: float = 0.05
    evidence: pd.DataFrame = field(default=None, repr=False)
    trace: pd.DataFrame = field(default=None, repr=False)
    parents_children: tuple | None = None
    spouses: tuple | None = None
    n_skipped: int = 0
    title: str = ""
    notes: tuple = ()

    @property
    def blanket(self) -> tuple:
        """The Markov blanket (same as ``selected``)."""
        return self.selected

    @property
    def pvalues(self) -> pd.DataFrame:
        """The evidence with BH-adjusted p-values (``p_adj``) and ``selected``: :meth:`table`."""
        return self.table()

    def table(self, adjust: str = "BH") -> pd.DataFrame:
        """The evidence table with adjusted p-values.

        Parameters
        ----------
        adjust : {"BH", "BY", "holm", "hochberg", "hommel", "bonferroni", "none"}
            Multiple-testing adjustment over the candidates' deciding tests,
            as R's ``p.adjust`` (computed by statsmodels; "fdr" is "BH"; any case).
        """
        frame = self.evidence
        frame["p_adj"] = adjust_pvalues(frame["pvalue"], adjust)
        frame["selected"] = frame["decision"].eq("keep").to_numpy()
        return frame

    def summary(self, adjust: str | None = None, alpha: float | None = None) -> Summary:
        """An R-style report of the blanket and the evidence for it.

        Parameters
        ----------
        adjust : {"BH", "BY", "holm", "hochberg", "hommel", "bonferroni", "none"}, optional
            Adjustment of the ``p.adj`` column (default BH). When given, the significance
            stars follow the adjusted p-values (the legend says so); by default they
            follow the raw ones, as R's summaries.
        alpha : float, optional
            Level for the notes on the excluded candidates (default: the
            level the search used).
        """

        level = self.alpha if alpha is None else check_alpha(alpha)
        tests = f"{self.n_tests} ({self.test}, alpha = {self.alpha:g}"
        counts = self.tests["calibration"].value_counts() if len(self.tests) else {}
        if len(counts) > 1 or (len(counts) and "asymptotic" not in counts):  # say how
            tests += "; " + ", ".join(f"{n} {kind}" for kind, n in counts.items())
        tests += f"), backend: {self.backend} ({self.device}), {self.elapsed:.3g} s"
        header = [
            ("Call", self.call),
            ("Data", f"{plural(self.n_rows, 'row')}, "
                     f"{plural(self.n_variables or self.n_candidates + 1, 'variable')} "
                     f"({plural(self.n_candidates, 'candidate')})"),
            ("Tests", tests),
        ]
        if self.n_skipped:
            header.append(("Skipped", f"{plural(self.n_skipped, 'test')} declined by the power "
                                      "rule (too few rows per cell: independence assumed, so "
                                      "members needing them may be missed)"))
        if not self.complete:
            header.append(("Status", "incomplete: stopped early (time budget or interrupt)"))
        given = adjust is not None
        adjust = _adjustment(adjust) if given else "BH"
        table = self.table(adjust)
        sel = table[table["selected"]]
        caption = (f"Blanket of {self.target} (each member's weakest test that kept it, "
                   "given z):")
        tables = {caption: _fmt_table(sel, adjust, adjusted_stars=given)}
        if self.parents_children is not None:
            tables["Parents and children:"] = "  " + (", ".join(self.parents_children) or "(none)")
        if self.spouses is not None:
            tables["Spouses:"] = "  " + (", ".join(self.spouses) or "(none)")
        footer = [signif_legend(_adj_label(adjust) if given else "p-value")]
        footer += _calibration_notes(sel, self.n_rows)
        footer += _exclusion_lines(table[~table["selected"]], level, level == self.alpha)
        footer += list(self.notes)
        return Summary(f"Markov blanket: {self.title or self.method}", header, tables, footer)

    def plot(self, kind: str = "pvalues", ax=None, scale: str = "auto"):
        """Plot the evidence; returns the matplotlib Axes.

        Parameters
        ----------
        kind : {"pvalues", "trace", "graph"}
            "pvalues": each candidate's deciding test as -log10 p, members highlighted,
            alpha as a line. "trace": -log10 p of each step of the search. "graph": the
            target and its members by role, parents and children on the inner ring and
            spouses outside joined to the child they share (the collider that their
            keeping test conditioned on: an arc target -> child <- spouse) where the learner
            separates them (MBOR, MMMB, HITON-MB), otherwise every member joined to the
            target; each edge labelled with the deciding p-value of its member (matplotlib
            only, no Graphviz).
        ax : matplotlib Axes, optional
        scale : {"auto", "linear", "symlog"}
            y axis of "pvalues" and "trace": "auto" turns symmetric-log (linear up to 1,
            logarithmic above, said on the axis) when one bar passes -log10 p = 20.
        """

        check_choice("kind", kind, ("pvalues", "trace", "graph"))
        check_choice("scale", scale, ("auto", "linear", "symlog"))
        title = f"{self.method}: {self.target}"
        if kind == "trace":
            return plot_trace(self.trace, self.alpha, ax=ax, title=title, scale=scale)
        if kind == "graph":
            nodes, edges, pos = self._graph()
            return draw_graph(nodes, edges, pos, ax=ax, title=title)
        return plot_pvalues(self.pvalues, self.alpha, ax=ax, title=title, scale=scale)

    def spouse_links(self) -> dict:
        """Each spouse's common children with the target: the parents and children in the
        conditioning set of the test that kept it, less its separating set (the last test
        that found it independent of the target). Empty mapping for learners that do not
        separate spouses."""
        if self.spouses is None:
            return {}
        evidence, pc = self.evidence, set(self.parents_children)
        tests = None
        links = {}
        for spouse in self.spouses:
            given = [v for v in evidence.loc[spouse, "z"].split(", ") if v in pc]
            if len(given) > 1:
                tests = self.tests if tests is None else tests
                pair = (((tests["x"] == spouse) & (tests["y"] == self.target))
                        | ((tests["x"] == self.target) & (tests["y"] == spouse)))
                separating = tests.loc[pair & tests["independent"], "z"]
                if len(separating):
                    sep = set(separating.iloc[-1].split(", "))
                    given = [v for v in given if v not in sep] or given
            links[spouse] = tuple(given)
        return links

    def _graph(self):
        """Nodes (name -> role), edges and positions of ``plot(kind="graph")``."""

        evidence = self.evidence
        label = {v: _p_label(evidence.loc[v, "log_pvalue"], evidence.loc[v, "skipped"])
                 for v in self.selected}
        nodes = {self.target: "target"}
        edges = []
        if self.parents_children is None:
            nodes.update((v, "member") for v in self.selected)
            edges = [GraphEdge(self.target, v, "edge", label[v]) for v in self.selected]
            return nodes, edges, radial_layout(self.target, self.selected, {})
        links = self.spouse_links()
        colliders = {c for children in links.values() for c in children}
        nodes.update((v, "parent/child") for v in self.parents_children)
        nodes.update((v, "spouse") for v in self.spouses)
        for v in self.parents_children:
            edges.append(GraphEdge(self.target, v, "arc" if v in colliders else "edge",
                                   label[v]))
        for spouse, children in links.items():
            if children:
                edges += [GraphEdge(spouse, c, "arc", label[spouse] if i == 0 else "")
                          for i, c in enumerate(children)]
            else:
                edges.append(GraphEdge(self.target, spouse, "blanket", label[spouse]))
        return nodes, edges, radial_layout(self.target, self.parents_children, links)


def _p_label(log_pvalue: float, skipped: bool = False) -> str:
    """An edge label: the p-value from its natural log, its magnitude where it underflows."""
    if skipped:
        return "skipped"
    if not np.isfinite(log_pvalue):
        return "" if np.isnan(log_pvalue) else "p = 0"
    l10 = log_pvalue / math.log(10)
    if l10 >= -4:
        return f"p = {10 ** l10:.2g}"
    exponent = math.floor(l10)
    return f"p = {10 ** (l10 - exponent):.1f}e{exponent}"


TRACE_COLUMNS = ["phase", "action", "feature", "statistic", "pvalue", "log_pvalue"]


def make_trace(rows) -> pd.DataFrame:
    """A trace DataFrame from rows (phase, action, feature, CIResult or None).

    Rows that record ``when`` (tests performed and seconds at each row, as the
    grow-shrink searches do) add the columns ``tests`` and ``seconds``.
    """
    return trace_builder(rows)()


def trace_builder(rows) -> "TraceBuilder":
    """:func:`make_trace`'s rows read now (a few numbers per step), the DataFrame built
    when the result's trace is first read."""
    records = []
    for phase, action, feature, res in rows:
        if res is None:
            records.append((phase, action, feature, np.nan, np.nan, np.nan))
        else:
            records.append((phase, action, feature, res.statistic, res.pvalue, res.log_pvalue))
    when = getattr(rows, "when", None)
    return TraceBuilder(tuple(records), None if when is None else tuple(when))


@dataclass(frozen=True, eq=False)
class TraceBuilder:
    """The steps of a search (:func:`trace_builder`); called, the trace DataFrame. Picklable."""

    records: tuple
    when: tuple | None = None

    def __call__(self) -> pd.DataFrame:
        frame = pd.DataFrame(list(self.records), columns=TRACE_COLUMNS)
        frame.index = pd.RangeIndex(1, len(frame) + 1, name="step")
        if self.when is not None:
            frame["tests"] = [w[0] for w in self.when]
            frame["seconds"] = [w[1] for w in self.when]
        return frame
