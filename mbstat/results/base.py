"""Frozen result objects with R-style summaries, p-value tables and plots.

Every algorithm returns a subclass of :class:`SelectionResult`; Markov-blanket
learners return :class:`MBResult`, built by :func:`make_mb_result` from the
:class:`~mbstat.ci.CITester` that answered the algorithm's questions.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._frozen import FrozenMapping
from ..ci.base import format_pvalue, plural

__all__ = ["SelectionResult", "MBResult", "Summary", "make_mb_result", "format_call", "stars",
           "plural", "bh_adjust", "empty_tests"]

SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"


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
                "phase": str}


def empty_tests() -> pd.DataFrame:
    """A tests log with no rows, with the columns of :attr:`~mbstat.ci.CITester.log`."""
    frame = pd.DataFrame(columns=list(TESTS_DTYPES), index=pd.RangeIndex(1, 1, name="test"))
    return frame.astype(TESTS_DTYPES)


def format_call(name: str, data, **args) -> str:
    """R-style call line: ``iamb(data = <DataFrame 20000 x 37>, target = "HR", ...)``."""
    parts = [f"data = {_describe(data)}"]
    for key, value in args.items():
        if value is None:
            continue
        parts.append(f"{key} = {_rrepr(value)}")
    return f"{name}({', '.join(parts)})"


def _describe(data) -> str:
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) == 2:
        return f"<{type(data).__name__} {shape[0]} x {shape[1]}>"
    rows = getattr(data, "n_rows", None)
    if rows is not None:
        return f"<Dataset {rows} x {data.n_cols}>"
    return f"<{type(data).__name__}>"


def _rrepr(value) -> str:
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
        parts = [f"<h4>{self.title}</h4>", "<table>"]
        parts += [f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in self.header]
        parts.append("</table>")
        for caption, table in self.tables.items():
            parts.append(f"<p>{caption}</p>")
            parts.append(table if isinstance(table, str) else table.to_html())
        parts += [f"<p>{line}</p>" for line in self.footer]
        return "\n".join(parts)


def _fmt_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Statistic / df / p-value / BH columns formatted as R prints them."""
    out = pd.DataFrame(index=list(frame.index))
    out["statistic"] = frame["statistic"].map(lambda v: f"{v:.4g}")
    out["df"] = frame["df"].map(lambda v: "" if math.isnan(v) else f"{v:g}")
    out["p-value"] = frame.apply(_fmt_p, axis=1)
    out["p.adj (BH)"] = frame["p_adj"].map(format_pvalue)
    out[""] = frame["pvalue"].map(stars)
    return out


def _fmt_p(row) -> str:
    if row["pvalue"] > 0 or not np.isfinite(row["log_pvalue"]):
        return format_pvalue(row["pvalue"])
    # underflowed: show the magnitude from the log p-value
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
        The log of every test performed (no rows for selectors that test nothing).
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
    tests: pd.DataFrame = field(default=None, repr=False)
    n_variables: int = field(default=0, repr=False)  # columns of the data (0: not recorded)

    def __post_init__(self):
        object.__setattr__(self, "params", FrozenMapping(self.params))
        if self.tests is None:
            object.__setattr__(self, "tests", empty_tests())

    def __getattribute__(self, name):
        """Attributes as stored, except DataFrames and Series: deep copies."""
        value = object.__getattribute__(self, name)
        if isinstance(value, (pd.DataFrame, pd.Series)):
            return value.copy(deep=True)  # frames are mutable: hand out copies
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

    def __iter__(self):
        return iter(self.selected)

    def __len__(self) -> int:
        return len(self.selected)

    def __contains__(self, feature) -> bool:
        return feature in self.selected


@dataclass(frozen=True, repr=False)
class MBResult(SelectionResult):
    """A learned Markov blanket with its evidence.

    Extra attributes
    ----------------
    pvalues : DataFrame
        One row per candidate: test of the candidate vs the target given the
        rest of the blanket (``statistic, df, pvalue, log_pvalue``), the
        Benjamini-Hochberg adjusted p-value ``p_adj`` and ``selected``.
    trace : DataFrame
        Growth/shrink steps: ``phase, action, feature, statistic, pvalue``.
    test, alpha : the CI test and its level.
    parents_children, spouses : tuple or None
        For algorithms that separate them (MBOR).
    title : str
        Long name of the method, used by ``summary()``.
    """

    test: str = ""
    alpha: float = 0.05
    pvalues: pd.DataFrame = field(default=None, repr=False)
    trace: pd.DataFrame = field(default=None, repr=False)
    parents_children: tuple | None = None
    spouses: tuple | None = None
    n_skipped: int = 0
    title: str = ""

    @property
    def blanket(self) -> tuple:
        """The Markov blanket (same as ``selected``)."""
        return self.selected

    def summary(self) -> Summary:
        """An R-style report of the blanket and the evidence for it."""
        tests = f"{self.n_tests} ({self.test}"
        tests += f", alpha = {self.alpha:g}), backend: {self.backend} ({self.device}), "
        tests += f"{self.elapsed:.3g} s"
        header = [
            ("Call", self.call),
            ("Data", f"{plural(self.n_rows, 'row')}, "
                     f"{plural(self.n_variables or self.n_candidates + 1, 'variable')} "
                     f"({plural(self.n_candidates, 'candidate')})"),
            ("Tests", tests),
        ]
        if self.n_skipped:
            header.append(("Skipped", f"{plural(self.n_skipped, 'test')} declined by the power "
                                      "rule (independence assumed)"))
        if not self.complete:
            header.append(("Status", "incomplete: stopped early (time budget or interrupt)"))
        table = self.pvalues
        sel = table[table["selected"]]
        tables = {f"Blanket of {self.target}:": _fmt_table(sel)}
        if self.parents_children is not None:
            tables["Parents and children:"] = "  " + (", ".join(self.parents_children) or "(none)")
            tables["Spouses:"] = "  " + (", ".join(self.spouses or ()) or "(none)")
        footer = [SIGNIF_LEGEND]
        weak = int((self.n_rows < 5 * sel["df"]).sum())  # the tests in the table shown
        if weak:
            footer.append(f"Note: {weak} of these tests {'has' if weak == 1 else 'have'} fewer "
                          "than 5 rows per degree of freedom (large conditioning sets); their "
                          "p-values have little power.")
        rest = table[~table["selected"]]
        if len(rest):
            worst = rest["log_pvalue"].idxmin()
            p_min = format_pvalue(rest.loc[worst, "pvalue"])
            if (rest["pvalue"] > self.alpha).all():
                footer.append(f"{plural(len(rest), 'candidate')} independent of {self.target} "
                              f"given the blanket (smallest p = {p_min}, for {worst}).")
            else:
                footer.append(f"{plural(len(rest), 'candidate')} outside the blanket (smallest p = "
                              f"{p_min}, for {worst}).")
        return Summary(f"Markov blanket: {self.title or self.method}", header, tables, footer)

    def plot(self, kind: str = "pvalues", ax=None):
        """Plot -log10 p-values (``kind="pvalues"``) or the search ``"trace"``.

        Returns the matplotlib Axes.
        """
        from ..plotting import plot_pvalues, plot_trace
        from .._validation import check_choice

        check_choice("kind", kind, ("pvalues", "trace"))
        if kind == "trace":
            return plot_trace(self.trace, self.alpha, ax=ax, title=f"{self.method}: {self.target}")
        return plot_pvalues(self.pvalues, self.alpha, ax=ax, title=f"{self.method}: {self.target}")


TRACE_COLUMNS = ["phase", "action", "feature", "statistic", "pvalue", "log_pvalue"]


def make_trace(rows) -> pd.DataFrame:
    """A trace DataFrame from rows (phase, action, feature, CIResult or None).

    Rows that record ``when`` (tests performed and seconds at each row, as the
    grow-shrink searches do) add the columns ``tests`` and ``seconds``.
    """
    records = []
    for phase, action, feature, res in rows:
        if res is None:
            records.append((phase, action, feature, np.nan, np.nan, np.nan))
        else:
            records.append((phase, action, feature, res.statistic, res.pvalue, res.log_pvalue))
    frame = pd.DataFrame(records, columns=TRACE_COLUMNS)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="step")
    when = getattr(rows, "when", None)
    if when is not None:
        frame["tests"] = [w[0] for w in when]
        frame["seconds"] = [w[1] for w in when]
    return frame


def pvalue_table(tester, target, blanket, candidates) -> pd.DataFrame:
    """Each candidate tested against the target given the rest of the blanket.

    Members are tested given the blanket without themselves, non-members given
    the whole blanket (one batched call); BH adjustment over all candidates.
    """
    blanket = list(blanket)
    rows = {}
    for x in blanket:
        rest = [b for b in blanket if b != x]
        rows[x] = tester.test(x, target, rest, phase="report")
    outside = [c for c in candidates if c not in set(blanket)]
    if outside:
        batch = tester.test_many(outside, target, blanket, phase="report")
        for x, res in zip(outside, batch):
            rows[x] = res
    order = blanket + outside
    frame = pd.DataFrame(
        {
            "statistic": [rows[x].statistic for x in order],
            "df": [rows[x].df for x in order],
            "pvalue": [rows[x].pvalue for x in order],
            "log_pvalue": [rows[x].log_pvalue for x in order],
        },
        index=pd.Index(order, name="feature"),
    )
    frame["p_adj"] = bh_adjust(frame["pvalue"])
    frame["selected"] = [x in set(blanket) for x in order]
    return frame


def make_mb_result(tester, *, method, target, blanket, call, params, elapsed, trace=(),
                   title="", complete=True, parents_children=None, spouses=None,
                   candidates=None) -> MBResult:
    """Assemble an :class:`MBResult` from the tester an algorithm used.

    ``trace`` is an iterable of (phase, action, feature, CIResult or None);
    ``elapsed`` the seconds the algorithm took. The p-value table is computed
    here (its tests are logged under phase "report").
    """
    target = target if isinstance(target, str) else tester.dataset.names[target]
    if candidates is None:
        candidates = [c for c in tester.dataset.names if c != target]
    n_tests = tester.n_tests  # the algorithm's own tests, before the report's
    table = pvalue_table(tester, target, blanket, candidates)
    return MBResult(
        method=method,
        target=target,
        selected=tuple(blanket),
        params=params,
        call=call,
        n_rows=tester.n,
        n_candidates=len(candidates),
        n_variables=tester.dataset.n_cols,
        n_tests=n_tests,
        elapsed=elapsed,
        backend=tester.backend.name,
        device=tester.backend.device,
        complete=complete,
        tests=tester.log,
        test=tester.test_name,
        alpha=tester.alpha,
        pvalues=table,
        trace=make_trace(trace),
        parents_children=None if parents_children is None else tuple(parents_children),
        spouses=None if spouses is None else tuple(spouses),
        n_skipped=tester.n_skipped,
        title=title,
    )
