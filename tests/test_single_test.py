"""The one-call path of a single contingency test (issue #25): the same tables and results as
the batch kernels and as a plain numpy count, on every layout the kernel branches on."""
from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat.ci.engine import CITester
from mbstat.ci.tables import _query


def frame(n, levels, seed):
    rng = np.random.default_rng(seed)
    data = {}
    for j, card in enumerate(levels):  # skewed levels: empty and heavy strata both occur
        p = rng.dirichlet(np.full(card, 0.6))
        data[f"v{j}"] = pd.Categorical(rng.choice(card, n, p=p), categories=range(card))
    return pd.DataFrame(data)


def reference_table(codes, cards, x, y, z):
    """The flat (z, x, y) table by numpy: z in mixed radix, first slowest."""
    code = np.zeros(codes.shape[1], dtype=np.int64)
    for j in z:
        code = code * cards[j] + codes[j]
    code = (code * cards[x] + codes[x]) * cards[y] + codes[y]
    cells = int(np.prod([cards[j] for j in (*z, x, y)]))
    return np.bincount(code, minlength=cells)


@pytest.mark.parametrize("n", [2, 37, 63, 64, 65, 1000, 4099])
def test_the_bitmap_tree_counts_the_numpy_table(n):
    """The tree against numpy, tails of the last bitmap word included: x and y of 1-5
    levels (the specialized passes of 2 and 3 levels and the general one), up to four z."""
    levels = (2, 3, 4, 1, 3, 2, 4, 5)
    ds = mbstat.as_dataset(frame(n, levels, seed=n))
    rng = np.random.default_rng(n)
    for size in range(5):
        for _ in range(12):
            assert_tree_counts(ds, *rng.choice(len(levels), 2 + size, replace=False).tolist())


def assert_tree_counts(ds, x, y, *z):
    """The tree's table of (x, y | z) on ``ds`` equals numpy's count."""
    codes, cards = ds.codes.T, ds.cardinalities
    want = reference_table(codes, cards, x, y, list(z))
    tree = np.zeros(len(want), np.int64)
    _query._tree_table(ds.level_bits, ds.n_rows, x, y, np.array(z, dtype=np.int64), cards,
                       tree)
    np.testing.assert_array_equal(tree, want)


@pytest.mark.parametrize("n", [700, 3000])
def test_tree_counts_skewed_levels_exactly(n):
    """Skewed levels (rare ones of a few rows: nodes of a few rows or none at every
    depth, the first included, next to dense ones): the tree's table equals a direct
    count at |Z| = 0..4, and the tester's rows and log equal the batch path's."""
    rng = np.random.default_rng(n)
    cols = {}
    for j, card in enumerate((2, 3, 4, 5, 3, 6, 2, 4)):
        p = np.geomspace(1.0, 1e-3 * (j + 1), card)
        cols[f"v{j}"] = rng.choice(card, n, p=p / p.sum()).astype(str)
    df = pd.DataFrame(cols)
    ds = mbstat.as_dataset(df)
    fast, batch = CITester(df, "g2"), CITester(df, "g2")
    batch._single = None
    names = list(df.columns)
    for size in range(5):
        for _ in range(10):
            x, y, *z = rng.choice(len(names), 2 + size, replace=False).tolist()
            assert_tree_counts(ds, x, y, *z)
            got = fast.test(names[x], names[y], [names[k] for k in z])
            ref = batch.test(names[x], names[y], [names[k] for k in z])
            assert got.batch.table.tolist() == ref.batch.table.tolist()
    pd.testing.assert_frame_equal(fast.log, batch.log)  # every field bit for bit


def test_tables_past_the_tree_go_to_the_batch_path():
    """More levels than the bitmaps hold, or more cells than 4 n: the kernel declines (-1)
    and the tester's batch path answers, with the same row."""
    df = frame(150, (3, 20, 2, 2, 2, 2, 2, 2, 2, 2), seed=2)
    ds = mbstat.as_dataset(df)
    args = _query.single_args(ds.cardinalities, 150, 0, False, -1.0, -1.0, 0.1)
    for cols in ([0, 1], [0, 2, *range(3, 10)]):  # 20 levels; 3 * 2**8 cells > 4 n
        out = np.full((1, 6), -7.0)
        flagged = _query.single_test(ds.level_bits, np.array(cols, dtype=np.int64), *args, out)
        assert flagged == -1 and (out == -7.0).all()
        fast, batch = CITester(df, "g2"), CITester(df, "g2")
        batch._single = None
        names = [f"v{j}" for j in cols]
        assert fast.test(names[0], names[1], names[2:]).batch.table.tolist() == \
            batch.test(names[0], names[1], names[2:]).batch.table.tolist()
    out = np.full((1, 6), np.nan)
    flagged = _query.single_test(ds.level_bits, np.array([0, 2, 3], dtype=np.int64), *args, out)
    assert flagged == 0 and np.isfinite(out).all()


TESTS = [("g2", {}), ("g2", {"calibration": "asymptotic"}), ("x2", {}), ("g2-adf", {}),
         ("x2-adf", {}), ("g2", {"min_per_cell": 5}), ("sp-g2", {"B": 20}),
         ("mc-x2", {"B": 50})]


@pytest.mark.parametrize("test, args", TESTS)
@pytest.mark.parametrize("n, levels", [
    (300, (3, 2, 4, 3, 6, 2)),
    (2000, (2, 3, 2, 4, 3, 3)),
    (150, (3, 20, 2, 5, 2, 1)),  # 20 levels: past the bitmaps, the scatter
    (60, (4, 4, 4, 4, 4, 4)),  # more cells than 4 n: the batch path's unique()
])
def test_single_tests_equal_the_batch_path(test, args, n, levels):
    """Every field of every row bit for bit, and the same logs, against a tester whose
    single tests go through the batch path (one candidate)."""
    df = frame(n, levels, seed=n)
    fast, batch = CITester(df, test, **args), CITester(df, test, **args)
    assert fast._single is not None
    batch._single = None
    rng = np.random.default_rng(len(levels) + n)
    names = list(df.columns)
    for size in range(4):
        for _ in range(6):
            x, y, *z = rng.choice(names, 2 + size, replace=False).tolist()
            a, b = fast.test(x, y, z), batch.test(x, y, z)
            np.testing.assert_array_equal(a.batch.table, b.batch.table)
            assert not a.batch.table.flags.writeable
            assert fast.test(y, x, z).batch.table.tolist() == a.batch.table.tolist()  # cache
    pd.testing.assert_frame_equal(fast.log, batch.log)
    assert fast.n_tests == batch.n_tests and fast.calibrations == batch.calibrations
    assert pickle.loads(pickle.dumps(fast.log_builder()))().equals(fast.log)


def test_single_test_matches_a_hand_computed_g2():
    """G2 = 2 sum c log(c n_z / (n_xz n_yz)) and bnlearn's df, from the counts by hand."""
    df = frame(500, (3, 2, 3), seed=7)
    got = CITester(df, "g2", calibration="asymptotic").test("v0", "v1", ["v2"])
    x, y, z = (df[c].cat.codes.to_numpy() for c in ("v0", "v1", "v2"))
    g2 = 0.0
    for s in range(3):
        t = np.array([[np.sum((x == a) & (y == b) & (z == s)) for b in range(2)]
                      for a in range(3)], dtype=float)
        e = t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / t.sum()
        g2 += 2 * np.sum(t[t > 0] * np.log(t[t > 0] / e[t > 0]))
    assert got.statistic == pytest.approx(g2, rel=1e-12)
    assert got.df == (3 - 1) * (2 - 1) * 3
    from scipy.stats import chi2

    assert got.pvalue == pytest.approx(chi2.sf(g2, 6), rel=1e-10)


def test_the_general_path_answers_where_the_one_call_path_does_not():
    """Missing cells (test-wise deletion) and continuous columns leave single tests to the
    batch path; a test without ``single`` (fisher_z) is untouched."""
    df = frame(400, (3, 2, 3, 2), seed=3)
    holes = df.copy()
    holes.loc[::7, "v2"] = np.nan
    pairwise = CITester(holes, "g2", na="pairwise")
    assert pairwise._single is None
    assert pairwise.test("v0", "v1", ["v2"]).n < 400
    rng = np.random.default_rng(0)
    numbers = pd.DataFrame(rng.normal(size=(300, 3)), columns=list("abc"))
    assert CITester(numbers, "fisher_z")._single is None
    kept = CITester(holes, "g2", na="drop")
    assert kept.dataset.missing is None and kept._single is not None
    assert kept.test("v0", "v1", ("v2", "v3")).n == kept.n


@pytest.mark.parametrize("size", range(4))
def test_single_tests_in_any_order_give_the_same_rows(size):
    """The compiled path has no state between tests: shuffled queries, same rows."""
    df = frame(700, (2, 3, 4, 3, 2, 3, 4), seed=size)
    names = list(df.columns)
    queries = [tuple(q) for q in itertools.islice(itertools.combinations(names, 2 + size), 40)]
    first, second = CITester(df), CITester(df)
    rows = {q: first.test(q[0], q[1], q[2:]).batch.table.tolist() for q in queries}
    for q in reversed(queries):
        assert second.test(q[0], q[1], q[2:]).batch.table.tolist() == rows[q]


def test_a_pickled_test_leaves_its_data_behind():
    """The one-call path's held arguments (the data set's arrays) are not pickled with the
    test, and the unpickled test gives the same row."""
    df = frame(500, (3, 2, 3), seed=1)
    tester = CITester(df, "g2")
    row = tester.test("v0", "v1", ["v2"]).batch.table.tolist()
    assert tester.test_obj._single_args is not None
    copy = pickle.loads(pickle.dumps(tester.test_obj))
    assert "_single_args" not in vars(copy)
    assert CITester(df, copy).test("v0", "v1", ["v2"]).batch.table.tolist() == row


def test_a_subclass_that_counts_its_own_way_keeps_its_batch_path():
    """A ContingencyTest subclass overriding ``batch`` answers single tests through it."""
    from mbstat.ci.tables import ContingencyTest

    class Halved(ContingencyTest):
        def batch(self, tester, xs, y, z):
            out = super().batch(tester, xs, y, z)
            out["statistic"] /= 2
            return out

    df = frame(400, (3, 2, 3), seed=4)
    plain = CITester(df, ContingencyTest()).test("v0", "v1", ["v2"])
    halved = CITester(df, Halved()).test("v0", "v1", ["v2"])
    assert halved.statistic == plain.statistic / 2
    assert CITester(df, "mc-g2", B=20).test("v0", "v1", ["v2"]).calibration == "permutation"
