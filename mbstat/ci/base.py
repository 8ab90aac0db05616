"""The CI-test interface: results, batches, the test protocol and the engine.

A :class:`CITester` binds one data set, one test and one significance level.
Algorithms ask it questions (``test`` for one, ``test_many`` for a batch of
candidates against one target given one conditioning set); it answers from
its cache when the same question was asked before, and logs every test it
really performs.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import FrozenInstanceError, dataclass, field, fields
from time import perf_counter

import numpy as np
import pandas as pd

__all__ = ["CALIBRATIONS", "FIELDS", "CIResult", "CIBatch", "CITest", "CITester", "Query",
           "decide", "empty_log", "format_pvalue", "results_table"]

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
        batch = self.batch
        alpha = batch.query.alpha
        if alpha is None:
            return bool(decide(np.nan, ASYMPTOTIC, alpha))  # decide says why
        table = batch.table  # decide's rule on the row's two numbers, as Python floats
        return table.item(0, _CALIBRATION) == SKIPPED or table.item(0, _PVALUE) > alpha

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


class CITest:
    """Protocol of a conditional-independence test.

    Subclasses set ``name``, ``method`` (the htest title), ``statistic_name``
    and ``kind`` ("discrete", "continuous", "mixed" or "oracle"), check their arguments in
    ``__init__`` and implement :meth:`batch`, which returns one results table. The engine
    calls ``batch`` with column positions only; a single result is a row of a batch.
    """

    name = "test"
    method = "conditional independence test"
    statistic_name = "statistic"
    kind = "discrete"
    joint_x = True  # accepts a set of variables as x
    unknown_message = "the oracle has no variables"  # oracles: what check() says

    def check(self, tester, columns) -> None:
        """Raise when the data cannot be tested: continuous columns for a discrete test,
        variables that an oracle does not know (its ``nodes``)."""
        if self.kind == "discrete":
            tester.dataset.require_discrete(columns, self.name)
        elif self.kind == "oracle":
            names, known = tester.dataset.names, set(self.nodes)
            unknown = [names[j] for j in columns if names[j] not in known]
            if unknown:
                raise ValueError(f"{self.unknown_message} {unknown}")

    def batch(self, tester, xs, y, z) -> np.ndarray:
        """Test each x in ``xs`` (tuples of column positions) against y given z.

        Returns the results table: a structured array of one row per x with the float
        columns :data:`FIELDS` and then :attr:`extra_columns` (:func:`results_table` makes one;
        the ``calibration`` column holds codes of :data:`CALIBRATIONS`).
        """
        raise NotImplementedError

    #: Columns a test adds after :data:`FIELDS` (e.g. PPI's ``increase``).
    extra_columns = ()
    #: Whether x and y play the same part (then a test of y against x is a cache hit).
    symmetric = True
    #: The htest note of each calibration code (see :data:`NOTES`).
    notes = NOTES


class CITester:
    """One data set, one test, one level: the engine algorithms talk to.

    Parameters
    ----------
    data : Dataset, DataFrame, ndarray or BayesianNetwork
        A BayesianNetwork is accepted with ``test="oracle"`` (no rows needed).
    test : str or CITest
        A name from :data:`mbstat.ci.TESTS` or a test object; "auto" (default) chooses
        from the data's kinds (:func:`mbstat.ci.registry.choose_test`: g2, fisher_z or
        mi-cg) and says why in :attr:`test_reason`.
    alpha : float
        Significance level of the decisions.
    backend : {"auto", "cpu", "gpu"} or None
        Where tables are counted (None: the global default; "auto" counts on
        the GPU when one answers and the data is large enough to gain).
    **test_args
        Arguments of the test (see :data:`mbstat.ci.TESTS`).
    """

    def __init__(self, data, test="auto", *, alpha=0.05, backend=None, discretize=None,
                 na="raise", **test_args):
        from .._validation import check_alpha
        from ..backend import resolve_backend
        from ..data import Dataset, as_dataset
        from .registry import make_test

        self.alpha = check_alpha(alpha)
        #: Why the test was chosen (``test="auto"``), or None for a test named by the caller.
        self.test_reason = None
        if isinstance(test, str) and test == "auto":  # chosen from the data's kinds
            from .registry import choose_test, rare_levels_warning

            self.dataset = as_dataset(data, na=na, discretize=discretize)
            test, reason = choose_test(self.dataset.kinds)
            self.test_reason = f'test="auto" chose {test!r}: {reason}'
            rare = rare_levels_warning(self.dataset, test)
            if rare:
                import warnings

                warnings.warn(rare, UserWarning, stacklevel=3)
        self.test_obj = make_test(test, data=data, **test_args)
        if self.test_reason is None:
            if self.test_obj.kind == "oracle" and not isinstance(
                data, (Dataset, pd.DataFrame, np.ndarray)
            ):
                data = _names_only(self.test_obj.nodes)
            self.dataset = as_dataset(data, na=na, discretize=discretize)
        self.backend = resolve_backend(backend, self.dataset.n_rows)
        self.xp = self.backend.xp
        self._codes_t = None
        self._strata = {}
        self._pairs = {}  # zkey -> _PairIndex: tests of one x, by a code of (x, y)
        self._joint = {}  # (x key, y, zkey) -> row: tests of a set of variables
        self._values = None  # the results of every test performed, in order (rows)
        self._log = []  # per batch: (x positions or keys, y, zkey, first row, phase)
        #: A progress bar (``update(k)`` per batch of k tests performed), or None.
        self.bar = None
        self.n_tests = 0
        self.n_cache_hits = 0
        self.elapsed = 0.0
        #: na="pairwise": each test uses the rows complete for its own columns, its table
        #: says how many (column "n"); only tests that honour it are accepted.
        self.rows_column = self.test_obj.kind != "oracle" and (
            na == "pairwise" or self.dataset.keeps_missing)
        if self.rows_column and not getattr(self.test_obj, "pairwise", False):
            raise ValueError(f"test {self.test_obj.name!r} cannot honour na='pairwise' "
                             "(test-wise deletion); use a contingency test (g2, x2) or "
                             "fisher_z, or na='drop'")
        if getattr(self.dataset, "partitioned", False) and self.test_obj.kind != "oracle" \
                and not getattr(self.test_obj, "partitioned", False):
            raise ValueError(f"test {self.test_obj.name!r} needs the rows in memory; on data in "
                             "partitions (Dask) use a contingency test (g2, x2) or fisher_z")
        self._dtype = table_dtype(tuple(self.test_obj.extra_columns)
                                  + (("n",) if self.rows_column else ()))
        self._width = len(self._dtype.names)
        self._values = np.empty((0, self._width))
        test = self.test_obj
        self.query = Query(test.name, test.method, test.statistic_name, self.alpha,
                           self.dataset.n_rows, self.dataset.names, self._dtype.names,
                           test.notes)
        # discrete tests on all-discrete data have nothing to check per call
        self._check_needed = not (self.test_obj.kind == "discrete"
                                  and "continuous" not in self.dataset.kinds
                                  and type(self.test_obj).check is CITest.check)

    # ----------------------------------------------------------- data access
    @property
    def test_name(self) -> str:
        return self.test_obj.name

    @property
    def n(self) -> int:
        return self.dataset.n_rows

    def columns(self, idx):
        """Device array (len(idx), n) of the codes of columns ``idx`` (compact dtype); a
        view for a slice, and a view (n,) of one column for an int."""
        if self._codes_t is None:
            self._codes_t = self.xp.asarray(np.ascontiguousarray(self.dataset.codes.T))
        if isinstance(idx, (slice, int)):
            return self._codes_t[idx]
        return self._codes_t[np.asarray(idx, dtype=np.intp)]

    def strata(self, z: tuple):
        """The :class:`~mbstat.ci.counting.Strata` of the conditioning set z (cached)."""
        hit = self._strata.get(z)
        if hit is None:
            from .counting import make_strata

            hit = make_strata(self.columns(z), self.dataset.cardinalities[list(z)], self.xp, self.n)
            if len(self._strata) > 4096:
                self._strata.clear()
            self._strata[z] = hit
        return hit

    # --------------------------------------------------------------- queries
    def _var(self, v, param):
        return self.dataset.index(v, param)

    def _xkey(self, x) -> tuple:
        if isinstance(x, (str, numbers.Integral)):
            return (self._var(x, "x"),)
        if isinstance(x, tuple):  # fast path for GS^(m)'s many subsets of names
            try:
                key = tuple(sorted(self.dataset._index[v] for v in x))
                if len(set(key)) == len(key) and key:
                    return key
            except (KeyError, TypeError):
                pass  # positions or unknown names: the checked path below says what is wrong
        key = tuple(sorted(self.dataset.indices(x, "x")))
        if not key:
            raise ValueError("x must name at least one variable")
        return key

    def test(self, x, y, z=(), phase: str = "") -> CIResult:
        """Test x (a variable or a set of variables) against y given z."""
        return CIResult(self._batch(*self._answer([x], y, z, phase)))

    def _zkey(self, z) -> tuple:
        """Sorted column positions of the conditioning set z."""
        if type(z) is tuple:  # the common case, names or positions: no checks to repeat
            index, p = self.dataset._index, self.dataset.n_cols
            try:
                key = sorted([v if type(v) is int and 0 <= v < p else index[v] for v in z])
            except (KeyError, TypeError):
                pass  # an unknown name or an odd type: the checked path says what is wrong
            else:
                if len(set(key)) == len(key):
                    return tuple(key)
        return tuple(sorted(self.dataset.indices(z, "z")))

    def _xkeys(self, xs) -> list:
        """Sorted column-position tuples of the candidates (names looked up in bulk)."""
        index = self.dataset._index
        p = self.dataset.n_cols
        try:
            keys = [(index[x],) if type(x) is str else
                    (x,) if type(x) is int and 0 <= x < p else
                    tuple(sorted(index[v] for v in x)) for x in xs]
        except (KeyError, TypeError):  # positions in sets, unknown names, odd types: checked
            return [self._xkey(x) for x in xs]
        if any(len(k) != len(set(k)) or not k for k in keys if len(k) != 1):
            return [self._xkey(x) for x in xs]
        return keys

    def test_many(self, xs, y, z=(), phase: str = "") -> CIBatch:
        """Test every x in ``xs`` against y given z, in one pass over the data."""
        return self._batch(*self._answer(xs, y, z, phase))

    def _batch(self, xkeys, yi, zkey, matrix) -> CIBatch:
        """The CIBatch of the answers ``matrix`` (k, columns), a read-only table."""
        return CIBatch(self.query, tuple(xkeys), yi, zkey, matrix)

    def _answer(self, xs, y, z, phase):
        """The results of x in ``xs`` against y given z: from the cache, else tested in one
        batch (and logged). Returns the keys, y, z positions and the results as a float
        matrix (k, columns) of the test's table (:func:`as_matrix`).

        Storage is compact, for millions of tests: the results are rows of one float
        matrix; a test of one x is found by an integer code of (x, y) among the tests
        given the same z (:class:`_PairIndex`, sorted arrays searched in one call per
        batch), a test of a set of variables by its key in a dict.
        """
        t0 = perf_counter()
        yi = self._var(y, "y")
        zkey = self._zkey(z)
        if yi in zkey:
            raise ValueError(f"y ({self.dataset.names[yi]!r}) is also in z")
        if type(xs) is not list:
            xs = list(xs)
        if len(xs) > 1:
            cols = self._column_names(xs)
            if cols is not None:
                return self._answer_columns(cols, yi, zkey, phase, t0)
        xkeys = self._xkeys(xs)
        members = {j for xk in xkeys for j in xk}
        if yi in members or not members.isdisjoint(zkey):
            self._overlap(xkeys, yi, zkey)
        if len(xkeys) == 1 and len(xkeys[0]) == 1:  # one test (shrink phases): no arrays
            x = xkeys[0][0]
            p = self.dataset.n_cols
            code = ((min(x, yi) * p + max(x, yi)) if self.test_obj.symmetric
                    else x * p + yi)
            index = self._pairs.get(zkey)
            if index is not None:
                row = index.find_one(code)
                if row >= 0:
                    self.n_cache_hits += 1
                    self.elapsed += perf_counter() - t0
                    return xkeys, yi, zkey, self._values[row:row + 1].copy()
            return self._answer_one(xkeys, code, yi, zkey, phase, t0)
        single = all(len(xk) == 1 for xk in xkeys)
        one = (np.arange(len(xkeys)) if single else
               np.array([i for i, xk in enumerate(xkeys) if len(xk) == 1], dtype=np.int64))
        xpos = np.fromiter((xkeys[i][0] for i in one.tolist()), dtype=np.int64, count=len(one))
        codes = self._pair_codes(xpos, yi)
        index = self._pairs.get(zkey)
        rows = np.full(len(xkeys), -1, dtype=np.int64)
        if index is not None:
            rows[one] = index.find(codes)
        if not single:
            joint = [i for i, xk in enumerate(xkeys) if len(xk) > 1]
            rows[joint] = [self._joint.get((xkeys[i], yi, zkey), -1) for i in joint]
        todo_pos = np.flatnonzero(rows < 0)
        self.n_cache_hits += len(rows) - len(todo_pos)
        if len(todo_pos):
            todo = [xkeys[i] for i in todo_pos.tolist()]
            fresh, new = self._run_tests(todo, yi, zkey, phase)
            if single:
                self._pairs.setdefault(zkey, _PairIndex()).add(codes[todo_pos], new)
                self._log.append((xpos[todo_pos].astype(np.int32), yi, zkey, new[0], phase))
            else:
                fresh_one = np.array([len(xk) == 1 for xk in todo])
                if fresh_one.any():
                    where = np.searchsorted(one, todo_pos[fresh_one])  # their place in one
                    self._pairs.setdefault(zkey, _PairIndex()).add(codes[where],
                                                                   new[fresh_one])
                self._joint.update(((xk, yi, zkey), int(r)) for xk, r in zip(todo, new)
                                   if len(xk) > 1)
                self._log.append((todo, yi, zkey, new[0], phase))
            if len(todo_pos) == len(rows):
                self.elapsed += perf_counter() - t0
                return xkeys, yi, zkey, fresh
            rows[todo_pos] = new
        table = self._values[rows]
        self.elapsed += perf_counter() - t0
        return xkeys, yi, zkey, table

    def _run_tests(self, todo: list, yi: int, zkey: tuple, phase: str) -> tuple:
        """Test the keys ``todo`` against y given z in one call of the test: the table
        (checked), stored and counted. Returns the table and the positions of its rows."""
        if self._check_needed:
            self.test_obj.check(self, [yi, *zkey, *{j for xk in todo for j in xk}])
        fresh = as_matrix(self.test_obj.batch(self, todo, yi, zkey))
        if fresh.shape != (len(todo), self._width):
            raise ValueError(f"test {self.test_name!r} returned a table of shape "
                             f"{fresh.shape}; expected ({len(todo)}, {self._width})")
        new = self._store(fresh)
        self.n_tests += len(todo)
        if self.bar is not None:
            self.bar.update(len(todo))
            self.bar.set_postfix_str(phase, refresh=False)
        return fresh, new

    def _answer_one(self, xkeys, code: int, yi: int, zkey: tuple, phase: str, t0: float):
        """:meth:`_answer` of one test of one column not in the cache (pair ``code``): the
        same check, store, index, log and counts as the batch path, without its arrays."""
        fresh, new = self._run_tests(xkeys, yi, zkey, phase)
        self._pairs.setdefault(zkey, _PairIndex()).add(np.array([code], dtype=np.int64), new)
        self._log.append((np.array(xkeys[0], dtype=np.int32), yi, zkey, new[0], phase))
        self.elapsed += perf_counter() - t0
        return xkeys, yi, zkey, fresh

    def _column_names(self, xs):
        """Column positions of ``xs`` when every x is a name of one column (the searches'
        batches), else None (the general path checks and sorts the keys)."""
        try:
            return list(map(self.dataset._index.__getitem__, xs))
        except (KeyError, TypeError):
            return None

    def _answer_columns(self, cols: list, yi: int, zkey: tuple, phase: str, t0: float):
        """:meth:`_answer` for candidates that are single columns ``cols`` (positions): the
        same cache, store, log and counts, with the per-candidate work done on arrays (one
        lookup of the batch's codes, one call of the test for the fresh ones)."""
        xset = set(cols)
        if yi in xset or not xset.isdisjoint(zkey):
            self._overlap([(c,) for c in cols], yi, zkey)
        xkeys = [(c,) for c in cols]
        xpos = np.array(cols, dtype=np.int64)
        codes = self._pair_codes(xpos, yi)
        index = self._pairs.get(zkey)
        k = len(cols)
        rows = todo_pos = None
        if index is not None:
            rows = index.find(codes)
            todo_pos = np.flatnonzero(rows < 0)
            if len(todo_pos) == k:
                todo_pos = None
        n_todo = k if todo_pos is None else len(todo_pos)
        self.n_cache_hits += k - n_todo
        if n_todo:
            todo = xkeys if todo_pos is None else [xkeys[i] for i in todo_pos.tolist()]
            fresh, new = self._run_tests(todo, yi, zkey, phase)
            if index is None:
                index = self._pairs[zkey] = _PairIndex()
            if todo_pos is None:  # all fresh: the table is the test's
                index.add(codes, new)
                self._log.append((xpos.astype(np.int32), yi, zkey, new[0], phase))
                rows, table = None, fresh
            else:
                index.add(codes[todo_pos], new)
                self._log.append((xpos[todo_pos].astype(np.int32), yi, zkey, new[0], phase))
                rows[todo_pos] = new
        if rows is not None:
            table = self._values[rows]
        self.elapsed += perf_counter() - t0
        return xkeys, yi, zkey, table

    def _pair_codes(self, x: np.ndarray, yi: int) -> np.ndarray:
        """One integer per test of column x against column y (the same for y against x
        when the test is symmetric)."""
        p = self.dataset.n_cols
        if self.test_obj.symmetric:
            return np.minimum(x, yi) * p + np.maximum(x, yi)
        return x * p + yi

    def _store(self, fresh: np.ndarray) -> np.ndarray:
        """Append the rows of ``fresh`` to the results matrix; return their positions."""
        k, used = len(fresh), self.n_tests
        if used + k > len(self._values):
            grown = np.empty((max(2 * len(self._values), used + k, 1024), self._width))
            grown[:used] = self._values[:used]
            self._values = grown
        self._values[used:used + k] = fresh
        return np.arange(used, used + k, dtype=np.int64)

    def _overlap(self, xkeys, yi, zkey):
        """Raise for the first x that shares a variable with y or z."""
        for xk in xkeys:
            if yi in xk or set(zkey).intersection(xk):
                names = [self.dataset.names[j] for j in xk]
                where = "y" if yi in xk else "z"
                raise ValueError(f"x {names} overlaps {where}; x, y and z must be disjoint")

    @property
    def n_skipped(self) -> int:
        """Tests declined by a power rule (independence assumed)."""
        return self.calibrations.get("skipped", 0)

    @property
    def calibrations(self) -> dict:
        """How many of the tests performed used each calibration (name -> count)."""
        counts = np.bincount(self._values[:self.n_tests, _CALIBRATION].astype(np.intp),
                             minlength=len(CALIBRATIONS))
        return {name: int(c) for name, c in zip(CALIBRATIONS, counts) if c}

    @property
    def log(self) -> pd.DataFrame:
        """Every test performed, in order: the query, the test's table (``calibration`` as
        names), the decision at alpha, ``skipped`` and the phase that asked. Built when
        asked, from the compact store (names looked up by position, one array per column)."""
        return self.log_builder()()

    def log_builder(self) -> "LogBuilder":
        """:attr:`log` as it stands now (the tests performed so far), built when called: a
        result builds its log only when asked, and holds the compact store, not the data."""
        return LogBuilder(tuple(self.dataset.names), tuple(self._log),  # rows copied: not
                          self._values[:self.n_tests].copy(),  # the buffer's spare room
                          self.alpha, self._dtype.names)


@dataclass(frozen=True, eq=False)
class LogBuilder:
    """The compact store of a tester's tests (see :meth:`CITester.log_builder`); called,
    the log as a DataFrame. Picklable."""

    names: tuple
    entries: tuple  # (x keys, y, z key, first row, phase) per batch
    matrix: np.ndarray
    alpha: float
    columns: tuple

    def __call__(self) -> pd.DataFrame:
        columns, k = self.columns, len(self.matrix)
        if not k:
            return empty_log(tuple(c for c in columns if c not in FIELDS))
        names = np.array(self.names, dtype=object)
        x = np.empty(k, dtype=object)
        y = np.empty(k, dtype=np.int64)
        z = np.empty(k, dtype=object)
        phase = np.empty(k, dtype=object)
        z_labels = {}
        for i, (todo, yi, zkey, first, ph) in enumerate(self.entries):
            last = self.entries[i + 1][3] if i + 1 < len(self.entries) else k
            if isinstance(todo, np.ndarray):
                x[first:last] = names[todo]
            else:
                x[first:last] = [_set_label(names[list(xk)].tolist()) for xk in todo]
            y[first:last] = yi
            label = z_labels.get(zkey)
            if label is None:
                label = z_labels[zkey] = ", ".join(names[list(zkey)].tolist())
            z[first:last] = label
            phase[first:last] = ph
        matrix = self.matrix
        codes = matrix[:, _CALIBRATION].astype(np.intp)
        data = {"x": pd.array(x, dtype="str"), "y": pd.array(names[y], dtype="str"),
                "z": pd.array(z, dtype="str")}
        data.update((name, matrix[:, j].copy()) for j, name in enumerate(columns)
                    if name != "calibration")
        data.update(independent=decide(matrix[:, 2], matrix[:, _CALIBRATION], self.alpha),
                    skipped=codes == SKIPPED,
                    calibration=pd.array(np.array(CALIBRATIONS, dtype=object)[codes],
                                         dtype="str"),
                    phase=pd.array(phase, dtype="str"))
        return pd.DataFrame(data, index=pd.RangeIndex(1, k + 1, name="test"))


class _PairIndex:
    """The tests of one x given one z: sorted integer codes of (x, y) and the rows of
    their results, in a few sorted chunks (one per batch, merged when there are many)."""

    __slots__ = ("chunks",)

    def __init__(self):
        self.chunks = []

    def add(self, codes: np.ndarray, rows: np.ndarray) -> None:
        order = np.argsort(codes, kind="stable")
        self.chunks.append((codes[order], rows[order]))
        if len(self.chunks) > 8:
            codes = np.concatenate([c for c, _ in self.chunks])
            rows = np.concatenate([r for _, r in self.chunks])
            order = np.argsort(codes, kind="stable")
            self.chunks = [(codes[order], rows[order])]

    def find_one(self, code: int) -> int:
        """The row of one code's earliest test, -1 where none was performed."""
        found = -1
        for known, rows in self.chunks:
            at = int(known.searchsorted(code))
            if at < len(known) and known[at] == code:
                row = int(rows[at])
                found = row if found < 0 else min(found, row)
        return found

    def find(self, codes: np.ndarray) -> np.ndarray:
        """The row of each code's earliest test, -1 where none was performed."""
        out = np.full(len(codes), -1, dtype=np.int64)
        for known, rows in self.chunks:
            at = np.minimum(np.searchsorted(known, codes), len(known) - 1)
            hit = (known[at] == codes) & (out < 0)
            out[hit] = rows[at[hit]]
        return out


_CALIBRATION = FIELDS.index("calibration")
_PVALUE = FIELDS.index("pvalue")


def empty_log(extra=()) -> pd.DataFrame:
    """A tests log with no rows, with the columns and dtypes of :attr:`CITester.log`."""
    names = ("x", "y", "z", *(f for f in (*FIELDS, *extra) if f != "calibration"),
             "independent", "skipped", "calibration", "phase")
    dtypes = {name: str if name in ("x", "y", "z", "calibration", "phase") else
              bool if name in ("independent", "skipped") else float for name in names}
    frame = pd.DataFrame(columns=list(names), index=pd.RangeIndex(1, 1, name="test"))
    return frame.astype(dtypes)


def _names_only(nodes):
    """A zero-row Dataset carrying only variable names (for oracle tests)."""
    from ..data import Dataset

    p = len(nodes)
    return Dataset(
        codes=np.zeros((0, p), dtype=np.uint8, order="F"),
        levels=tuple(() for _ in nodes),
        names=tuple(nodes),
        kinds=tuple("oracle" for _ in nodes),
    )
