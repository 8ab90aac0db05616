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
from dataclasses import dataclass, field
from time import perf_counter

import numpy as np
import pandas as pd

__all__ = ["CIResult", "CIBatch", "CITest", "CITester", "batch_from_table", "format_pvalue"]

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


@dataclass(frozen=True, slots=True)
class CIResult:
    """The outcome of one conditional-independence test of x and y given z.

    Attributes
    ----------
    statistic, df, pvalue : float
        As in scipy's ``Chi2ContingencyResult``; ``df`` is NaN where a test has none.
    log_pvalue : float
        Natural log of the p-value, accurate where the p-value underflows to 0:
        rank by this (or by the statistic), never by ``pvalue``.
    mi : float
        Association on the mutual-information scale (nats): G2 / 2n for
        discrete tests, -log(1 - r^2) / 2 for fisher_z.
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
    skipped : bool
        True when a power rule declined the test and declared independence.
    """

    statistic: float
    df: float
    pvalue: float
    log_pvalue: float
    mi: float
    test: str
    n: int
    x: tuple
    y: str
    z: tuple = ()
    alpha: float | None = None
    skipped: bool = False
    method: str = field(default="", repr=False)
    statistic_name: str = field(default="statistic", repr=False)

    @property
    def independent(self) -> bool:
        """Decision at ``alpha``: True when independence is not rejected."""
        if self.alpha is None:
            raise ValueError("this result has no alpha; compare pvalue with your level")
        return self.skipped or self.pvalue > self.alpha

    def __str__(self) -> str:
        cond = f" | {' + '.join(self.z)}" if self.z else ""
        stat = self.statistic_name
        df = "" if math.isnan(self.df) else f", df = {self.df:.6g}"
        p = format_pvalue(self.pvalue)
        p = f"p-value {p}" if p.startswith("<") else f"p-value = {p}"
        lines = [
            "",
            f"\t{self.method or self.test}",
            "",
            f"data:  {_set_label(self.x)} ~ {self.y}{cond}",
            f"{stat} = {self.statistic:.5g}{df}, {p}",
            "alternative hypothesis: true value is greater than 0",
            "sample estimates:",
            f"mutual information (nats): {self.mi:.6g}",
        ]
        if self.skipped:
            lines.append("note: too few rows per cell; independence assumed (power rule)")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class CIBatch:
    """Results of many x tested against one y given one z, as arrays."""

    keys: tuple = field(repr=False)  # column positions of each x
    names: tuple = field(repr=False)  # the data's column names
    y: str
    z: tuple
    test: str
    n: int
    alpha: float | None
    statistic: np.ndarray = field(repr=False)
    df: np.ndarray = field(repr=False)
    pvalue: np.ndarray = field(repr=False)
    log_pvalue: np.ndarray = field(repr=False)
    mi: np.ndarray = field(repr=False)
    skipped: np.ndarray = field(repr=False)
    method: str = field(default="", repr=False)
    statistic_name: str = field(default="statistic", repr=False)

    @property
    def xs(self) -> tuple:
        """The tested variables, as tuples of names."""
        return tuple(tuple(self.names[j] for j in k) for k in self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> CIResult:
        return CIResult(statistic=float(self.statistic[i]), df=float(self.df[i]),
                        pvalue=float(self.pvalue[i]), log_pvalue=float(self.log_pvalue[i]),
                        mi=float(self.mi[i]), skipped=bool(self.skipped[i]), test=self.test,
                        n=self.n, x=tuple(self.names[j] for j in self.keys[i]), y=self.y,
                        z=self.z, alpha=self.alpha, method=self.method,
                        statistic_name=self.statistic_name)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def independent(self) -> np.ndarray:
        """Decisions at alpha (True: independence not rejected)."""
        return self.skipped | (self.pvalue > self.alpha)

    def __str__(self) -> str:
        """R-style: the test, the query and one row per candidate."""
        cond = f" | {' + '.join(self.z)}" if self.z else ""
        frame = self.to_frame()
        table = pd.DataFrame({
            self.statistic_name: frame["statistic"].map(lambda v: f"{v:.5g}"),
            "df": frame["df"].map(lambda v: "" if math.isnan(v) else f"{v:.6g}"),
            "p-value": frame["pvalue"].map(format_pvalue),
        }, index=frame.index.rename(None))
        lines = ["", f"\t{self.method or self.test}", "",
                 f"data:  x ~ {self.y}{cond}, {plural(len(self), 'candidate')}", "",
                 table.to_string() if len(self) else "(no candidates)"]
        return "\n".join(lines) + "\n"

    def to_frame(self) -> pd.DataFrame:
        """The batch as a DataFrame indexed by the x label."""
        return pd.DataFrame(
            {
                "statistic": self.statistic,
                "df": self.df,
                "pvalue": self.pvalue,
                "log_pvalue": self.log_pvalue,
                "mi": self.mi,
            },
            index=pd.Index([_set_label(x) for x in self.xs], name="x"),
        )


class CITest:
    """Protocol of a conditional-independence test.

    Subclasses set ``name``, ``method`` (the htest title), ``statistic_name``
    and ``kind`` ("discrete", "continuous" or "oracle") and implement
    :meth:`batch`. The engine calls ``batch`` with column positions only.
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

    def batch(self, tester, xs, y, z) -> dict:
        """Test each x in ``xs`` (tuples of column positions) against y given z.

        Returns a dict of float arrays ``statistic, df, pvalue, log_pvalue, mi``
        and optionally a bool array ``skipped``.
        """
        raise NotImplementedError

    def results(self, tester, xs, y, z) -> np.ndarray:
        """:meth:`batch` as the float array (k, 6) of the engine's :data:`_FIELDS`
        (skipped as 0/1). Tests that compute this table directly override it."""
        res = self.batch(tester, xs, y, z)
        out = np.empty((len(xs), len(_FIELDS)))
        for j, name in enumerate(_FIELDS[:-1]):
            out[:, j] = res[name]
        out[:, -1] = 0.0 if res.get("skipped") is None else res["skipped"]
        return out


class CITester:
    """One data set, one test, one level: the engine algorithms talk to.

    Parameters
    ----------
    data : Dataset, DataFrame, ndarray or BayesianNetwork
        A BayesianNetwork is accepted with ``test="oracle"`` (no rows needed).
    test : str or CITest
        A name from :data:`mbstat.ci.TESTS` or a test object.
    alpha : float
        Significance level of the decisions.
    backend : {"auto", "cpu", "gpu"} or None
        Where tables are counted (None: the global default; "auto" counts on
        the GPU when one answers and the data is large enough to gain).
    **test_args
        Arguments of the test (see :data:`mbstat.ci.TESTS`).
    """

    def __init__(self, data, test="g2", *, alpha=0.05, backend=None, discretize=None,
                 na="raise", **test_args):
        from .._validation import check_alpha
        from ..backend import resolve_backend
        from ..data import Dataset, as_dataset
        from .registry import make_test

        self.alpha = check_alpha(alpha)
        self.test_obj = make_test(test, data=data, **test_args)
        if self.test_obj.kind == "oracle" and not isinstance(
            data, (Dataset, pd.DataFrame, np.ndarray)
        ):
            data = _names_only(self.test_obj.nodes)
        self.dataset = as_dataset(data, na=na, discretize=discretize)
        self.backend = resolve_backend(backend, self.dataset.n_rows)
        self.xp = self.backend.xp
        self._codes_t = None
        self._strata = {}
        self._cache = {}
        self._log = []
        self.n_tests = 0
        self.n_cache_hits = 0
        self.n_skipped = 0
        self.elapsed = 0.0
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
        xkeys, yi, zkey, table = self._answer([x], y, z, phase)
        names = self.dataset.names
        statistic, df, pvalue, log_pvalue, mi, skipped = table[0].tolist()
        return CIResult(statistic=statistic, df=df, pvalue=pvalue, log_pvalue=log_pvalue, mi=mi,
                        skipped=skipped != 0.0, test=self.test_obj.name, n=self.dataset.n_rows,
                        x=tuple(map(names.__getitem__, xkeys[0])), y=names[yi],
                        z=tuple(map(names.__getitem__, zkey)), alpha=self.alpha,
                        method=self.test_obj.method,
                        statistic_name=self.test_obj.statistic_name)

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
        xkeys, yi, zkey, table = self._answer(xs, y, z, phase)
        columns = dict(zip(_FIELDS, np.ascontiguousarray(table.T)))
        columns["skipped"] = columns["skipped"] != 0.0
        for arr in columns.values():
            arr.flags.writeable = False  # results are immutable
        return CIBatch(
            keys=tuple(xkeys),
            names=self.dataset.names,
            y=self.dataset.names[yi],
            z=tuple(self.dataset.names[j] for j in zkey),
            test=self.test_name,
            n=self.n,
            alpha=self.alpha,
            method=self.test_obj.method,
            statistic_name=self.test_obj.statistic_name,
            **columns,
        )

    def _answer(self, xs, y, z, phase):
        """The results of x in ``xs`` against y given z: from the cache, else tested in one
        batch (and logged). Returns the keys, y, z positions and a float table (k, 6) of
        the :data:`_FIELDS` (skipped as 0/1).

        The cache holds each test as a list of six Python floats, so that a batch of hits
        and fresh results is assembled by one ``np.array`` call.
        """
        t0 = perf_counter()
        yi = self._var(y, "y")
        zkey = self._zkey(z)
        xkeys = self._xkeys(xs)
        if yi in zkey:
            raise ValueError(f"y ({self.dataset.names[yi]!r}) is also in z")
        members = {j for xk in xkeys for j in xk}
        if yi in members or not members.isdisjoint(zkey):
            self._overlap(xkeys, yi, zkey)
        keys = [((xk[0], yi, zkey) if xk[0] < yi else (yi, xk[0], zkey)) if len(xk) == 1
                else (xk, yi, zkey) for xk in xkeys]  # tests are symmetric in x and y
        rows = list(map(self._cache.get, keys))
        todo_pos = [i for i, row in enumerate(rows) if row is None]
        self.n_cache_hits += len(rows) - len(todo_pos)
        if todo_pos:
            todo = [xkeys[i] for i in todo_pos]
            if self._check_needed:
                self.test_obj.check(self, [yi, *zkey, *{j for xk in todo for j in xk}])
            fresh = self.test_obj.results(self, todo, yi, zkey)
            self._record(todo, [keys[i] for i in todo_pos], yi, zkey, fresh, phase)
            if len(todo_pos) == len(rows):
                self.elapsed += perf_counter() - t0
                return xkeys, yi, zkey, fresh
            for i, row in zip(todo_pos, fresh.tolist()):
                rows[i] = row
        table = np.array(rows, dtype=np.float64).reshape(len(rows), len(_FIELDS))
        self.elapsed += perf_counter() - t0
        return xkeys, yi, zkey, table

    def _overlap(self, xkeys, yi, zkey):
        """Raise for the first x that shares a variable with y or z."""
        for xk in xkeys:
            if yi in xk or set(zkey).intersection(xk):
                names = [self.dataset.names[j] for j in xk]
                where = "y" if yi in xk else "z"
                raise ValueError(f"x {names} overlaps {where}; x, y and z must be disjoint")

    def _record(self, todo, keys, yi, zkey, fresh, phase) -> None:
        """Cache the tests just performed and keep the batch for the log."""
        self._cache.update(zip(keys, fresh.tolist()))
        self._log.append((todo, yi, zkey, fresh, phase))
        self.n_tests += len(todo)
        self.n_skipped += int(np.count_nonzero(fresh[:, -1]))

    @property
    def log(self) -> pd.DataFrame:
        """Every test performed, in order, with its decision at alpha."""
        names = self.dataset.names
        columns = {key: [] for key in ("x", "y", "z", *_FIELDS, "phase")}
        for todo, yi, zkey, res, phase in self._log:
            k = len(todo)
            columns["x"] += [_set_label([names[c] for c in xk]) for xk in todo]
            columns["y"] += [names[yi]] * k
            columns["z"] += [", ".join(names[j] for j in zkey)] * k
            for j, name in enumerate(_FIELDS):
                columns[name].append(res[:, j])
            columns["phase"] += [phase] * k
        for name in _FIELDS:
            parts = columns[name]
            columns[name] = np.concatenate(parts) if parts else np.empty(0)
        columns["skipped"] = columns["skipped"].astype(bool)
        independent = columns["skipped"] | (columns["pvalue"] > self.alpha)
        order = ["x", "y", "z", "statistic", "df", "pvalue", "log_pvalue", "mi"]
        data = {key: columns[key] for key in order}
        data.update(independent=independent, skipped=columns["skipped"], phase=columns["phase"])
        n = len(independent)
        return pd.DataFrame(data, index=pd.RangeIndex(1, n + 1, name="test"))


_FIELDS = ("statistic", "df", "pvalue", "log_pvalue", "mi", "skipped")


def batch_from_table(table: np.ndarray) -> dict:
    """The dict of :meth:`CITest.batch` from a results table (k, 6) of :data:`_FIELDS`."""
    out = dict(zip(_FIELDS, table.T))
    out["skipped"] = out["skipped"] != 0.0
    return out


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
