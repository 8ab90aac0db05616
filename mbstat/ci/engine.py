"""The engine algorithms talk to: :class:`CITester`.

A :class:`CITester` binds one data set, one test and one significance level.
Algorithms ask it questions (``test`` for one, ``test_many`` for a batch of
candidates against one target given one conditioning set); it answers from
its cache when the same question was asked before, and logs every test it
really performs.
"""
from __future__ import annotations

import numbers
from time import perf_counter

import numpy as np
import pandas as pd

from .._validation import check_alpha
from ..backend import resolve_backend
from ..data import Dataset, as_dataset
from .log import LogBuilder
from .protocol import CITest
from .registry import choose_test, make_test, rare_levels_warning
from .result import (_CALIBRATION, CALIBRATIONS, CIBatch, CIResult, Query, as_matrix,
                     one_result, table_dtype)
from .tables.counting import make_strata

__all__ = ["CITester"]


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
        self.alpha = check_alpha(alpha)
        #: Why the test was chosen (``test="auto"``), or None for a test named by the caller.
        self.test_reason = None
        if isinstance(test, str) and test == "auto":  # chosen from the data's kinds

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
            continuous = [name for name, kind in zip(self.dataset.names, self.dataset.kinds)
                          if kind == "continuous"]  # (integers with a NaN read as floats)
            chosen = "" if self.test_reason is None else (
                f" ({self.test_reason}; continuous: {', '.join(continuous[:5])})")
            raise ValueError(f"test {self.test_obj.name!r} cannot honour na='pairwise' "
                             f"(test-wise deletion){chosen}; use a contingency test (g2, x2) "
                             "or fisher_z, or na='drop'")
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
        # a test that answers one question in one call (``single``: a contingency test's
        # compiled path), where no check and no per-test rows are needed
        self._single = (getattr(self.test_obj, "single", None)
                        if not self._check_needed and not self.rows_column else None)
        self._n_cols = self.dataset.n_cols
        self._n_pos = self.dataset.n_positional  # 0 where an int is a column label
        self._symmetric = self.test_obj.symmetric

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

    def on(self, data, test) -> "CITester":
        """A tester of ``test`` on other ``data`` (a permuted copy, say), at the default level
        and backend: how a test's calibration reruns it without knowing the engine."""
        return CITester(data, test)

    def strata(self, z: tuple):
        """The :class:`~mbstat.ci.tables.counting.Strata` of the conditioning set z (cached)."""
        hit = self._strata.get(z)
        if hit is None:
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
        return one_result(self.query, *self._answer([x], y, z, phase))

    def _zkey(self, z) -> tuple:
        """Sorted column positions of the conditioning set z."""
        if type(z) is tuple:  # the common case, names or positions: no checks to repeat
            if len(z) < 2:  # () or one variable: nothing to sort
                if not z:
                    return z
                v = z[0]
                if type(v) is int and 0 <= v < self._n_pos:
                    return z
                if type(v) is str and v in self.dataset._index:
                    return (self.dataset._index[v],)
            index, p = self.dataset._index, self._n_pos
            try:
                key = sorted([v if type(v) is int and 0 <= v < p else index[v] for v in z])
            except (KeyError, TypeError):
                pass  # an unknown name or an odd type: the checked path says what is wrong
            else:  # distinct: sorted, so neighbours differ
                if (key[0] != key[1] if len(key) == 2 else
                        key[0] != key[1] != key[2] if len(key) == 3 else
                        len(set(key)) == len(key)):
                    return tuple(key)
        return tuple(sorted(self.dataset.indices(z, "z")))

    def _xkeys(self, xs) -> list:
        """Sorted column-position tuples of the candidates (names looked up in bulk)."""
        index = self.dataset._index
        p = self._n_pos
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
        if type(xs) is list and len(xs) == 1:  # one test of one column, x and y by name or
            x = xs[0]  # plain position (the searches' and users' single tests): no lists
            names, p = self.dataset._index, self._n_pos
            xi = names.get(x) if type(x) is str else x if type(x) is int and 0 <= x < p else None
            yi = names.get(y) if type(y) is str else y if type(y) is int and 0 <= y < p else None
            if xi is not None and yi is not None and xi != yi:
                zkey = self._zkey(z)
                if yi not in zkey and xi not in zkey:
                    return self._answer_one(xi, yi, zkey, phase, t0)
            # anything else (overlaps, unknown names, odd types): checked below
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
        x = _one_column(xs, self.dataset) if len(xs) == 1 else None
        if x is not None:  # one test of one column (CITester.test, shrink phases): no sets
            xkeys = [(x,)]
            if x == yi or x in zkey:
                self._overlap(xkeys, yi, zkey)
        else:
            xkeys = self._xkeys(xs)
            members = {j for xk in xkeys for j in xk}
            if yi in members or not members.isdisjoint(zkey):
                self._overlap(xkeys, yi, zkey)
        if len(xkeys) == 1 and len(xkeys[0]) == 1:  # one test (shrink phases): no arrays
            return self._answer_one(xkeys[0][0], yi, zkey, phase, t0)
        if all(len(xk) == 1 for xk in xkeys):  # single columns given as positions or 1-tuples
            return self._answer_columns([xk[0] for xk in xkeys], yi, zkey, phase, t0)
        one = np.array([i for i, xk in enumerate(xkeys) if len(xk) == 1], dtype=np.int64)
        xpos = np.fromiter((xkeys[i][0] for i in one.tolist()), dtype=np.int64, count=len(one))
        codes = self._pair_codes(xpos, yi)
        index = self._pairs.get(zkey)
        rows = np.full(len(xkeys), -1, dtype=np.int64)
        if index is not None:
            rows[one] = index.find(codes)
        joint = [i for i, xk in enumerate(xkeys) if len(xk) > 1]
        rows[joint] = [self._joint.get((xkeys[i], yi, zkey), -1) for i in joint]
        todo_pos = np.flatnonzero(rows < 0)
        self.n_cache_hits += len(rows) - len(todo_pos)
        if len(todo_pos):
            todo = [xkeys[i] for i in todo_pos.tolist()]
            fresh, new = self._run_tests(todo, yi, zkey, phase)
            fresh_one = np.array([len(xk) == 1 for xk in todo])
            if fresh_one.any():
                where = np.searchsorted(one, todo_pos[fresh_one])  # their place in one
                self._pairs.setdefault(zkey, _PairIndex()).add(codes[where], new[fresh_one])
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
        first = self._store(fresh, len(todo), phase)
        return fresh, np.arange(first, first + len(todo), dtype=np.int64)

    def _answer_one(self, x: int, yi: int, zkey: tuple, phase: str, t0: float):
        """:meth:`_answer` of one test of column x (checked: not y, not in z): from the
        cache, else performed with the same check, store, index, log and counts as the
        batch path, without its arrays."""
        p = self._n_cols
        code = (min(x, yi) * p + max(x, yi)) if self._symmetric else x * p + yi
        xkeys = [(x,)]
        index = self._pairs.get(zkey)
        if index is not None:
            row = index.find_one(code)
            if row >= 0:
                self.n_cache_hits += 1
                self.elapsed += perf_counter() - t0
                return xkeys, yi, zkey, self._values[row:row + 1].copy()
        single = self._single
        fresh = None if single is None else single(self, x, yi, zkey)
        if fresh is None:
            fresh, new = self._run_tests(xkeys, yi, zkey, phase)
            row = int(new[0])
        else:  # the test's one-call path: its (1, width) row, stored as _run_tests does
            row = self._store(fresh, 1, phase)
        if index is None:
            index = self._pairs[zkey] = _PairIndex()
        index.singles.setdefault(code, row)  # found by code before a batch folds them in
        self._log.append((xkeys, yi, zkey, row, phase))
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

    def _store(self, fresh: np.ndarray, k: int, phase: str) -> int:
        """Check that the test returned ``k`` rows, append them to the results matrix, count
        and show them; return the first one's position."""
        if fresh.shape != (k, self._width):
            raise ValueError(f"test {self.test_name!r} returned a table of shape "
                             f"{fresh.shape}; expected ({k}, {self._width})")
        used = self.n_tests
        if used + k > len(self._values):
            grown = np.empty((max(2 * len(self._values), used + k, 1024), self._width))
            grown[:used] = self._values[:used]
            self._values = grown
        self._values[used:used + k] = fresh
        self.n_tests = used + k
        if self.bar is not None:
            self.bar.update(k)
            self.bar.set_postfix_str(phase, refresh=False)
        return used

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


class _PairIndex:
    """The tests of one x given one z: sorted integer codes of (x, y) and the rows of
    their results, in a few sorted chunks (one per batch, merged when there are many);
    single tests (the shrink phases' and ``CITester.test``'s) in a dict until a batch is
    looked up."""

    __slots__ = ("chunks", "singles")

    def __init__(self):
        self.chunks = []
        self.singles = {}

    def add(self, codes: np.ndarray, rows: np.ndarray) -> None:
        order = np.argsort(codes, kind="stable")
        self.chunks.append((codes[order], rows[order]))
        if len(self.chunks) > 8:
            codes = np.concatenate([c for c, _ in self.chunks])
            rows = np.concatenate([r for _, r in self.chunks])
            order = np.argsort(codes, kind="stable")
            self.chunks = [(codes[order], rows[order])]

    def _fold_singles(self) -> None:
        """The single tests as one sorted chunk (before a batch is looked up)."""
        if self.singles:
            codes = np.fromiter(self.singles.keys(), dtype=np.int64, count=len(self.singles))
            rows = np.fromiter(self.singles.values(), dtype=np.int64, count=len(self.singles))
            self.singles = {}
            self.add(codes, rows)

    def find_one(self, code: int) -> int:
        """The row of one code's earliest test, -1 where none was performed."""
        found = self.singles.get(code, -1)
        for known, rows in self.chunks:
            at = int(known.searchsorted(code))
            if at < len(known) and known[at] == code:
                row = int(rows[at])
                found = row if found < 0 else min(found, row)
        return found

    def find(self, codes: np.ndarray) -> np.ndarray:
        """The row of each code's earliest test, -1 where none was performed."""
        self._fold_singles()
        out = np.full(len(codes), -1, dtype=np.int64)
        for known, rows in self.chunks:
            at = np.minimum(np.searchsorted(known, codes), len(known) - 1)
            hit = (known[at] == codes) & (out < 0)
            out[hit] = rows[at[hit]]
        return out


def _one_column(xs, dataset):
    """The column position of ``xs[0]`` where it names one column (a name, or a position
    as a plain int), else None (the general path checks and sorts the keys)."""
    x = xs[0]
    if type(x) is str:
        return dataset._index.get(x)
    if type(x) is int and 0 <= x < dataset.n_positional:
        return x
    return None


def _names_only(nodes):
    """A zero-row Dataset carrying only variable names (for oracle tests)."""

    p = len(nodes)
    return Dataset(
        codes=np.zeros((0, p), dtype=np.uint8, order="F"),
        levels=tuple(() for _ in nodes),
        names=tuple(nodes),
        kinds=tuple("oracle" for _ in nodes),
    )
