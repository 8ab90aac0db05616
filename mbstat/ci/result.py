"""The CI-test interface's values: queries, results, batches of results and their tables.

A test (:mod:`mbstat.ci.protocol`) answers a :class:`Query` with a :class:`CIBatch`, one row
per candidate; a :class:`CIResult` is one row, printed like R's ``htest``.
"""
from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, dataclass, field, fields

import numpy as np
import pandas as pd

__all__ = ["CALIBRATIONS", "FIELDS", "CIResult", "CIBatch", "Query", "decide", "format_pvalue",
           "results_table"]

#: Below this, R prints "p-value < 2.2e-16".
_EPS = 2.220446049250313e-16


def format_pvalue(p: float, digits: int = 4) -> str:
    """Format a p-value the way R's ``format.pval`` does."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "NA"
    if p < _EPS:
        return "< 2.2e-16"
    return f"{p:.{digits}g}"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``"1 candidate"``, ``"3 candidates"``: the count and its noun (``nouns`` if irregular)."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


def _set_label(names) -> str:
    return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"


#: The columns of every test's results table, in order (a test may append its own, e.g.
#: PPI's ``increase``). All are float64, so a table is a zero-copy view of a float matrix.
FIELDS = ("statistic", "df", "pvalue", "log_pvalue", "mi", "calibration")

#: How a p-value was obtained; the ``calibration`` column holds the position in this tuple.
CALIBRATIONS = ("asymptotic", "semiparametric", "permutation", "exact", "skipped", "oracle")
ASYMPTOTIC, SEMIPARAMETRIC, PERMUTATION, EXACT, SKIPPED, ORACLE = range(len(CALIBRATIONS))

#: The htest note printed under a result of each calibration (none for the plain ones); a
#: test may word its own (:attr:`CITest.notes`).
NOTES = {
    SEMIPARAMETRIC: "semiparametric p-value: df is the mean of the statistic over permutations "
                    "of x within the strata of z, the p-value that of a chi-square fitted to "
                    "them",
    PERMUTATION: "p-value from permutations of x within the strata of z (Monte Carlo)",
    SKIPPED: "too few rows per cell; independence assumed (power rule)",
}


def decide(pvalue, calibration, alpha):
    """The one independence rule (scalars or arrays): independent when the test was skipped
    (a power rule assumed independence) or its p-value exceeds ``alpha``."""
    if alpha is None:
        raise ValueError("this result has no alpha; compare pvalue with your level")
    return (calibration == SKIPPED) | (pvalue > alpha)


def table_dtype(extra=()) -> np.dtype:
    """The structured dtype of a results table: :data:`FIELDS` then ``extra``, all float64."""
    hit = _DTYPES.get(extra)
    if hit is None:
        hit = _DTYPES[extra] = np.dtype([(name, np.float64) for name in (*FIELDS, *extra)])
    return hit


_DTYPES = {}


def results_table(k: int, extra=(), calibration=ASYMPTOTIC, **columns) -> np.ndarray:
    """A results table of ``k`` rows (a structured array of :func:`table_dtype`), filled from
    ``columns`` (name -> array or scalar); ``calibration`` is one code for every row or an
    array of codes."""
    out = np.zeros(k, dtype=table_dtype(tuple(extra)))
    out["calibration"] = calibration
    for name, values in columns.items():
        out[name] = values
    return out


def as_matrix(table) -> np.ndarray:
    """A results table as a float matrix (k, columns), a view where it can be one. A dict of
    columns (the earlier protocol) is accepted: ``skipped`` becomes the calibration."""
    if isinstance(table, dict):
        table = dict(table)
        skipped = np.asarray(table.pop("skipped", False), dtype=bool)
        k = len(np.atleast_1d(table["pvalue"]))
        table.setdefault("calibration", np.where(skipped, SKIPPED, ASYMPTOTIC))
        extra = tuple(name for name in table if name not in FIELDS)
        table = results_table(k, extra, **table)
    if not table.flags.c_contiguous:
        table = np.ascontiguousarray(table)
    names = table.dtype.names
    if names is None:
        return table.reshape(len(table), -1).astype(np.float64, copy=False)
    return table.view(np.float64).reshape(len(table), len(names))


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Query:
    """What every result of one tester shares: the test, its level, the data's names and
    the columns of the test's results table."""

    test: str
    method: str
    statistic_name: str
    alpha: float | None
    n: int
    names: tuple = field(repr=False)
    columns: tuple = field(default=FIELDS, repr=False)
    notes: dict = field(default_factory=lambda: NOTES, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "position", {c: j for j, c in enumerate(self.columns)})


class CIBatch:
    """Results of many x tested against one y given one z: one table, one row per x.

    ``table`` is a read-only float matrix (k, len(columns)), its columns :data:`FIELDS`
    then those the test adds (``columns``); each is an attribute (``batch.pvalue``,
    ``batch.mi``, ...: read-only arrays), ``calibration`` read as names from
    :data:`CALIBRATIONS`, ``skipped`` and ``independent`` as booleans. ``batch[i]`` is
    the :class:`CIResult` of row i. ``y``, ``z``, ``test``, ``n``, ``alpha``, ``method``
    and ``statistic_name`` describe the query (``query``); ``keys``, ``yi`` and ``zkey``
    hold the column positions of each x, of y and of z.

    Immutable (assigning raises ``dataclasses.FrozenInstanceError``); a slotted class
    rather than a dataclass, as one is made for every test asked.
    """

    __slots__ = ("query", "keys", "yi", "zkey", "table")

    def __init__(self, query: Query, keys: tuple, yi: int, zkey: tuple, table: np.ndarray):
        if table.flags.writeable:
            table.flags.writeable = False
        _set_query(self, query)
        _set_keys(self, keys)
        _set_yi(self, yi)
        _set_zkey(self, zkey)
        _set_table(self, table)

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    __delattr__ = __setattr__

    def __reduce__(self):  # unpickled tables are read-only again (through __init__)
        return (type(self), tuple(getattr(self, name) for name in self.__slots__))

    def __repr__(self) -> str:
        return (f"CIBatch(test={self.test!r}, y={self.y!r}, z={self.z!r}, n={self.n!r}, "
                f"alpha={self.alpha!r}, {plural(len(self), 'candidate')})")

    @property
    def y(self) -> str:
        return self.query.names[self.yi]

    @property
    def z(self) -> tuple:
        return tuple(map(self.query.names.__getitem__, self.zkey))

    test = property(lambda self: self.query.test, doc="Name of the test.")
    method = property(lambda self: self.query.method, doc="The htest title of the test.")
    statistic_name = property(lambda self: self.query.statistic_name)
    alpha = property(lambda self: self.query.alpha, doc="Level of the decisions.")
    n = property(lambda self: (self.column("n").astype(np.int64) if "n" in self.query.position
                               else self.query.n),
                 doc="Rows used (per test under na='pairwise': the rows complete for it).")
    names = property(lambda self: self.query.names, doc="The data's column names.")
    columns = property(lambda self: self.query.columns, doc="The table's column names.")

    def column(self, name: str) -> np.ndarray:
        """One column of the table (a read-only view)."""
        return self.table[:, self.query.position[name]]

    @property
    def xs(self) -> tuple:
        """The tested variables, as tuples of names."""
        return tuple(tuple(self.names[j] for j in k) for k in self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i) -> CIResult:
        i = range(len(self))[i]  # negative positions; IndexError past the end
        return CIResult(CIBatch(self.query, (self.keys[i],), self.yi, self.zkey,
                                self.table[i : i + 1]))

    def __iter__(self):
        return _rows(self)

    def take(self, rows) -> CIBatch:
        """The batch restricted to ``rows`` (positions or a boolean mask), in that order."""
        rows = np.arange(len(self))[rows]
        return CIBatch(self.query, tuple(self.keys[i] for i in rows), self.yi, self.zkey,
                       self.table[rows])

    def __getattr__(self, name):  # the columns a test adds (e.g. PPI's "increase")
        if name not in CIBatch.__slots__ and name in self.query.position:
            return self.column(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def calibration_codes(self) -> np.ndarray:
        """The calibration column as integer codes (positions in :data:`CALIBRATIONS`)."""
        return _read_only(self.table[:, _CALIBRATION].astype(np.int8))

    @property
    def calibration(self) -> np.ndarray:
        """How each p-value was obtained: names from :data:`CALIBRATIONS`."""
        return _read_only(np.array(CALIBRATIONS, dtype=object)[self.calibration_codes])

    @property
    def skipped(self) -> np.ndarray:
        """True where a power rule declined the test and assumed independence."""
        return _read_only(self.table[:, _CALIBRATION] == SKIPPED)

    @property
    def independent(self) -> np.ndarray:
        """Decisions at alpha (True: independence not rejected), by :func:`decide`."""
        return _read_only(decide(self.table[:, _PVALUE], self.table[:, _CALIBRATION],
                                 self.alpha))

    def notes(self) -> dict:
        """The htest note of each calibration in this batch (name -> text)."""
        codes = set(self.calibration_codes.tolist())
        return {CALIBRATIONS[code]: text for code, text in self.query.notes.items()
                if code in codes}

    def __str__(self) -> str:
        """R-style: the test, the query and one row per candidate."""
        cond = f" | {' + '.join(self.z)}" if self.z else ""
        frame = self.to_frame()
        table = pd.DataFrame({
            self.statistic_name: frame["statistic"].map(lambda v: f"{v:.5g}"),
            "df": frame["df"].map(lambda v: "" if math.isnan(v) else f"{v:.6g}"),
            "p-value": frame["pvalue"].map(format_pvalue),
        }, index=frame.index.rename(None))
        plain = (ASYMPTOTIC, EXACT, ORACLE)
        if not np.isin(self.calibration_codes, plain).all():
            table["calibration"] = frame["calibration"]
        lines = ["", f"\t{self.method or self.test}", "",
                 f"data:  x ~ {self.y}{cond}, {plural(len(self), 'candidate')}", "",
                 table.to_string() if len(self) else "(no candidates)"]
        lines += [f"note ({name}): {text}" for name, text in self.notes().items()]
        return "\n".join(lines) + "\n"

    def to_frame(self) -> pd.DataFrame:
        """The batch as a DataFrame indexed by the x label: the table's columns, with
        ``calibration`` as names."""
        data = {name: self.table[:, j] for j, name in enumerate(self.columns)}
        data["calibration"] = self.calibration
        return pd.DataFrame(data, index=pd.Index([_set_label(x) for x in self.xs], name="x"))


_set_query, _set_keys, _set_yi, _set_zkey, _set_table = (
    CIBatch.__dict__[name].__set__ for name in CIBatch.__slots__)


def one_result(query: Query, keys: list, yi: int, zkey: tuple, table: np.ndarray) -> CIResult:
    """The :class:`CIResult` of the one-row ``table`` (made read-only) of x ``keys[0]``
    against y given z: :class:`CIBatch` and :class:`CIResult` built without their
    ``__init__`` checks (a single test's answer, per test asked)."""
    if table.flags.writeable:
        table.flags.writeable = False
    row = object.__new__(CIBatch)
    _set_query(row, query)
    _set_keys(row, (keys[0],))
    _set_yi(row, yi)
    _set_zkey(row, zkey)
    _set_table(row, table)
    result = object.__new__(CIResult)
    result.__dict__["batch"] = row
    return result


def _rows(batch: CIBatch):
    """The :class:`CIResult` of each row of ``batch``, in order: one-row batches sharing the
    query, made without the checks of :class:`CIBatch` (the rows of a read-only table are
    read-only views)."""
    query, yi, zkey, table = batch.query, batch.yi, batch.zkey, batch.table
    new = object.__new__
    for i, key in enumerate(batch.keys):
        row = new(CIBatch)
        _set_query(row, query)
        _set_keys(row, (key,))
        _set_yi(row, yi)
        _set_zkey(row, zkey)
        _set_table(row, table[i:i + 1])
        yield CIResult(row)


@dataclass(frozen=True, eq=False)
class CIResult:
    """The outcome of one conditional-independence test of x and y given z: a row of a
    :class:`CIBatch` (``result.batch``, one row), read through the same names.

    Attributes
    ----------
    statistic, df, pvalue : float
        As in scipy's ``Chi2ContingencyResult``; ``df`` is NaN where a test has none (for a
        semiparametric test, the df estimated from permutations).
    log_pvalue : float
        Natural log of the p-value, accurate where the p-value underflows to 0:
        rank by this (or by the statistic), never by ``pvalue``.
    mi : float
        Association on the mutual-information scale (nats): G2 / 2n for discrete tests,
        -log(1 - r^2) / 2 for fisher_z; NaN for model-based tests, whose effect has a field
        of its own (PPI: ``increase``).
    calibration : str
        How the p-value was obtained, one of :data:`CALIBRATIONS`: "asymptotic" (chi-square
        or normal), "semiparametric" (chi-square with df from permutations), "permutation"
        (Monte Carlo), "exact", "skipped" (a power rule declined the test), "oracle".
    skipped : bool
        True when a power rule declined the test and declared independence.
    independent : bool
        Decision at ``alpha`` (:func:`decide`).
    test : str
        Name of the test in :data:`mbstat.ci.TESTS`.
    n : int
        Rows used.
    x : tuple of str
        The tested variable(s); several names form one joint variable.
    y : str
    z : tuple of str
    alpha : float or None
        Significance level the decision uses.
    """

    batch: CIBatch = field(repr=False)

    def __getattr__(self, name):  # the batch's query (y, z, test, ...) and a test's own columns
        batch = self.__dict__.get("batch")
        if batch is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = getattr(batch, name)
        if isinstance(value, np.ndarray):
            return value[0].item()
        return value

    @property
    def x(self) -> tuple:
        return self.batch.xs[0]

    # the query, read directly (not through __getattr__: the evidence reads them per row)
    y = property(lambda self: self.batch.y)
    z = property(lambda self: self.batch.z)
    test = property(lambda self: self.batch.query.test)
    alpha = property(lambda self: self.batch.query.alpha)

    @property
    def n(self) -> int:
        """Rows used (under na="pairwise", the rows complete for this test)."""
        n = self.batch.n
        return int(n[0]) if isinstance(n, np.ndarray) else n

    @property
    def calibration(self) -> str:
        return CALIBRATIONS[int(self.batch.table[0, _CALIBRATION])]

    @property
    def skipped(self) -> bool:
        return bool(self.batch.table[0, _CALIBRATION] == SKIPPED)

    @property
    def independent(self) -> bool:
        """Decision at ``alpha``: True when independence is not rejected (:func:`decide`)."""
        table = self.batch.table  # the row's two numbers as Python floats: no numpy scalars
        return bool(decide(table.item(0, _PVALUE), table.item(0, _CALIBRATION),
                           self.batch.query.alpha))

    def __reduce__(self):  # rebuilt through __init__: arrays stay read-only
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

    def _values(self) -> tuple:
        b = self.batch
        return (type(self), b.test, self.n, self.x, b.y, b.z, b.alpha, b.method, b.statistic_name,
                b.columns)

    def __eq__(self, other) -> bool:
        """Same query, same test and the same numbers (NaN equal to NaN)."""
        if not isinstance(other, CIResult):
            return NotImplemented
        return self._values() == other._values() and np.array_equal(
            self.batch.table, other.batch.table, equal_nan=True)

    def __hash__(self) -> int:
        return hash(self._values()[1:6])

    def __repr__(self) -> str:
        b = self.batch
        row = ", ".join(f"{name}={getattr(self, name)!r}" for name in b.columns
                        if name != "calibration")
        return (f"{type(self).__name__}({row}, calibration={self.calibration!r}, "
                f"test={b.test!r}, n={self.n!r}, x={self.x!r}, y={b.y!r}, z={b.z!r}, "
                f"alpha={b.alpha!r})")

    def __str__(self) -> str:
        return "\n".join(self._htest_lines()) + "\n"

    def _htest_lines(self) -> list:
        cond = f" | {' + '.join(self.z)}" if self.z else ""
        df = "" if math.isnan(self.df) else f", df = {self.df:.6g}"
        lines = [
            "",
            f"\t{self.method or self.test}",
            "",
            f"data:  {_set_label(self.x)} ~ {self.y}{cond}",
            f"{self.statistic_name} = {self.statistic:.5g}{df}, {_p_text(self.pvalue)}",
            "alternative hypothesis: " + ("true partial correlation is not equal to 0"
                                          if self.statistic_name == "z" else
                                          "x and y are dependent given z"),
            "sample estimates:",
        ]
        if self.statistic_name == "z" and not math.isnan(self.mi):  # Fisher's z: |r|
            lines.append(f"absolute partial correlation: "
                         f"{math.sqrt(max(0.0, -math.expm1(-2.0 * self.mi))):.6g}")
        elif not math.isnan(self.mi):
            lines.append(f"mutual information (nats): {self.mi:.6g}")
        lines += [f"{name}: {getattr(self, name):.6g}" for name in self.batch.columns[len(FIELDS):]]
        return lines + [f"note: {text}" for text in self.batch.notes().values()]


for _j, _name in enumerate(FIELDS[:-1]):  # the table's float columns
    setattr(CIBatch, _name, property(lambda self, _j=_j: self.table[:, _j],
                                     doc=f"The ``{_name}`` column (read-only)."))
    setattr(CIResult, _name, property(lambda self, _j=_j: float(self.batch.table[0, _j]),
                                      doc=f"The ``{_name}`` of this result's row."))


def _p_text(p: float) -> str:
    p = format_pvalue(p)
    return f"p-value {p}" if p.startswith("<") else f"p-value = {p}"


_CALIBRATION = FIELDS.index("calibration")
_PVALUE = FIELDS.index("pvalue")
