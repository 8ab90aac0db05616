"""Integer column labels: an int names a column by its label where some column label is a
number (as ``df[k]``), by its position otherwise (arrays, frames labelled by text); results
name columns by their labels (``str(label)``). And tests on numbers refuse pandas
Categoricals (fisher_z: ordered or not; rank tests: unordered)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbstat
from mbstat.ci import CITester

NAMES = ["A", "B", "T", "C", "D", "E", "F"]


@pytest.fixture(scope="module")
def gaussian():
    """A linear Gaussian network: A, B -> T -> C <- D; E, F unrelated. Blanket of T: A B C D."""
    rng = np.random.default_rng(7)
    n = 400
    a, b, d, e, f = rng.normal(size=(5, n))
    t = 0.8 * a - 0.7 * b + rng.normal(size=n)
    c = 0.8 * t + 0.8 * d + rng.normal(size=n)
    return np.column_stack([a, b, t, c, d, e, f])


def _labelled(arr, labels):
    return pd.DataFrame(arr, columns=labels)


PERMUTED = [3, 0, 6, 1, 5, 2, 4]  # label k is no column's position k except by chance
SPREAD = [10, 20, 30, 40, 50, 60, 70]
MIXED = ["A", 1, 0, "C", 7, 2, "F"]


def _reference(arr):
    return _labelled(arr, NAMES)


# ---------------------------------------------------------------- Dataset.index
@pytest.mark.parametrize("labels", [list(range(7)), PERMUTED, SPREAD, MIXED])
def test_an_integer_is_the_label(gaussian, labels):
    ds = mbstat.as_dataset(_labelled(gaussian, labels))
    for j, label in enumerate(labels):
        assert ds.index(label) == j  # as df[label]
        assert ds.index(str(label)) == j  # and by its name, as results report it
        assert ds.names[j] == str(label)
    ints = [lb for lb in labels if isinstance(lb, int)]
    assert ds.indices(ints) == tuple(labels.index(lb) for lb in ints)


def test_the_label_wins_over_a_position(gaussian):
    ds = mbstat.as_dataset(_labelled(gaussian, [1, 0, 2, 3, 4, 5, 6]))
    assert ds.index(1) == 0 and ds.index(0) == 1  # pandas' df[1], not the column at 1
    assert ds.n_positional == 0
    assert mbstat.as_dataset(pd.DataFrame(gaussian)).n_positional == 7  # 0..p-1 in order


@pytest.mark.parametrize("labels, wrong", [(SPREAD, 1), (PERMUTED, 7), (MIXED, 3)])
def test_an_integer_that_is_no_label_is_an_error(gaussian, labels, wrong):
    ds = mbstat.as_dataset(_labelled(gaussian, labels))
    with pytest.raises(ValueError, match=r"target: no column is labelled") as info:
        ds.index(wrong, "target")
    assert repr(labels) in str(info.value)  # the labels, listed
    with pytest.raises(ValueError, match="whitelist: no column is labelled"):
        ds.indices([labels[0], wrong], "whitelist")


def test_positions_where_no_label_is_a_number(gaussian):
    for data in (gaussian, _reference(gaussian), mbstat.as_dataset(gaussian)):
        ds = mbstat.as_dataset(data)
        assert ds.labels is None
        assert ds.index(2) == 2 and ds.indices([0, 6]) == (0, 6)
        assert ds.index(np.int64(3)) == 3
        with pytest.raises(ValueError, match="position 7 is out of range for 7 columns"):
            ds.index(7, "target")
    with pytest.raises(TypeError, match="target must be a column name or position"):
        mbstat.as_dataset(gaussian).index(True, "target")
    with pytest.raises(TypeError, match="target must be a column name or position"):
        mbstat.as_dataset(gaussian).index(1.0, "target")


def test_numpy_and_float_labels(gaussian):
    frame = pd.DataFrame(gaussian[:, :3], columns=pd.Index(np.array([5, 3, 9], dtype=np.int64)))
    ds = mbstat.as_dataset(frame)
    assert ds.index(np.int64(3)) == 1 and ds.index(9) == 2
    floats = mbstat.as_dataset(pd.DataFrame(gaussian[:, :3], columns=[0.5, 1.0, 2.5]))
    assert floats.index(0.5) == 0 and floats.index(1) == 1  # 1 == 1.0, as df[1]
    with pytest.raises(ValueError, match="no column is labelled 0"):
        floats.index(0)
    clash = mbstat.as_dataset(pd.DataFrame(gaussian[:, :3], columns=[1, 1.0, "x"]))
    with pytest.raises(ValueError, match="equals the labels of several columns"):
        clash.index(1, "x")
    assert clash.index("1.0") == 1


def test_labels_travel_with_the_data(gaussian):
    frame = _labelled(gaussian, SPREAD)
    ds = mbstat.as_dataset(frame)
    assert ds.labels == tuple(SPREAD)
    assert list(ds.to_frame().columns) == SPREAD
    sub = ds.subset([60, 20])
    assert sub.names == ("20", "60") or sub.names == ("60", "20")
    assert sub.index(60) == sub.names.index("60")
    holed = frame.copy()
    holed.iloc[3, 1] = np.nan
    kept = mbstat.as_dataset(holed, na="pairwise")
    dropped = mbstat.as_dataset(kept, na="drop")
    assert dropped.labels == tuple(SPREAD) and dropped.n_rows == len(frame) - 1
    assert dropped.index(20) == 1
    binned = mbstat.as_dataset(ds, discretize=3)
    assert binned.labels == tuple(SPREAD) and binned.index(70) == 6
    names = mbstat.as_dataset(gaussian, names=SPREAD)  # names given to an array: labels
    assert names.index(10) == 0
    assert frame.columns.tolist() == SPREAD  # the caller's frame is untouched


# ---------------------------------------------------------------- CI tests
@pytest.mark.parametrize("labels", [PERMUTED, SPREAD, MIXED])
@pytest.mark.parametrize("na", ["raise", "drop", "pairwise"])
def test_ci_tests_read_labels(gaussian, labels, na):
    ref = _reference(gaussian)
    frame = _labelled(gaussian, labels)
    lab = dict(zip(NAMES, labels))
    want = mbstat.ci_test(ref, "T", "C", z=["A", "D"], test="fisher_z")
    got = mbstat.ci_test(frame, lab["T"], lab["C"], z=[lab["A"], lab["D"]],
                         test="fisher_z", na=na)
    assert got.pvalue == want.pvalue and got.statistic == want.statistic
    assert got.x == (str(lab["T"]),) and got.y == str(lab["C"])
    assert set(got.z) == {str(lab["A"]), str(lab["D"])}
    batch = mbstat.ci_test_batch(frame, [lab["A"], lab["E"]], lab["T"], z=[lab["B"]],
                                 test="fisher_z", na=na)
    ref_batch = mbstat.ci_test_batch(ref, ["A", "E"], "T", z=["B"], test="fisher_z")
    np.testing.assert_array_equal(batch.pvalue, ref_batch.pvalue)
    tester = CITester(frame, "fisher_z", na=na)  # the engine's own fast paths
    assert tester.test(lab["T"], lab["C"], (lab["A"], lab["D"])).pvalue == want.pvalue
    assert tester.test(lab["T"], lab["C"], (lab["A"],)).pvalue == \
        mbstat.ci_test(ref, "T", "C", z=["A"], test="fisher_z").pvalue
    joint = CITester(frame, "g2", discretize=3, na=na).test((lab["A"], lab["B"]), lab["T"])
    assert joint.pvalue == mbstat.ci_test(ref, ["A", "B"], "T", test="g2", discretize=3).pvalue
    assert joint.x == (str(lab["A"]), str(lab["B"])) or joint.x == (str(lab["B"]), str(lab["A"]))
    np.testing.assert_array_equal(
        tester.test_many([lab["A"], lab["E"]], lab["T"], (lab["B"],)).pvalue,
        ref_batch.pvalue)


def test_ci_test_errors_name_the_parameter(gaussian):
    frame = _labelled(gaussian, SPREAD)
    with pytest.raises(ValueError, match=r"y: no column is labelled 1; the column labels "
                                         r"are \[10, 20, 30, 40, 50, 60, 70\]"):
        mbstat.ci_test(frame, 10, 1)
    with pytest.raises(ValueError, match="z: no column is labelled 0"):
        mbstat.ci_test(frame, 10, 20, z=[0])
    with pytest.raises(ValueError, match="z: no column is labelled 0"):
        CITester(frame, "fisher_z").test(10, 20, (0,))


def test_arrays_keep_positions(gaussian):
    want = mbstat.ci_test(_reference(gaussian), "T", "C", z=["A"], test="fisher_z")
    got = mbstat.ci_test(gaussian, 2, 3, z=[0], test="fisher_z")
    assert got.pvalue == want.pvalue and got.x == ("V3",)


# ---------------------------------------------------------------- learners
LEARNERS = ["iamb", "inter_iamb", "fast_iamb", "iamb_fdr", "gs_m", "mmmb", "hiton_mb",
            "fbed", "mbor", "mb_to_pc", "ses", "tie", "iamb_ip"]


@pytest.mark.parametrize("method", LEARNERS)
def test_learners_read_labels(gaussian, method):
    func = getattr(mbstat, method)
    frame = _labelled(gaussian, PERMUTED)
    lab = dict(zip(NAMES, PERMUTED))
    want = func(_reference(gaussian), "T", test="fisher_z")
    got = func(frame, lab["T"], test="fisher_z")
    assert got.target == str(lab["T"])
    assert sorted(got.selected) == sorted(str(lab[v]) for v in want.selected)
    assert {"A", "B", "C"} <= set(want.selected) <= {"A", "B", "C", "D"}  # (PC for some)


def test_learner_lists_read_labels(gaussian):
    frame = _labelled(gaussian, SPREAD)
    lab = dict(zip(NAMES, SPREAD))
    ref = _reference(gaussian)
    want = mbstat.iamb(ref, "T", test="fisher_z", candidates=["A", "B", "C", "E"],
                       whitelist=["E"], blacklist=["B"], start=["C"])
    got = mbstat.iamb(frame, lab["T"], test="fisher_z",
                      candidates=[lab[v] for v in "ABCE"], whitelist=[lab["E"]],
                      blacklist=[lab["B"]], start=[lab["C"]])
    assert sorted(got.selected) == sorted(str(lab[v]) for v in want.selected)
    assert "50" not in got.selected and "60" in got.selected  # D not a candidate; E whitelisted
    with pytest.raises(ValueError, match="whitelist: no column is labelled 1"):
        mbstat.iamb(frame, lab["T"], test="fisher_z", whitelist=[1])
    with pytest.raises(ValueError, match="candidates: no column is labelled 0"):
        mbstat.iamb(frame, lab["T"], test="fisher_z", candidates=[0, 10])
    with pytest.raises(ValueError, match="target: no column is labelled 2"):
        mbstat.iamb(frame, 2, test="fisher_z")


def test_blankets_and_stability_read_labels(gaussian):
    frame = _labelled(gaussian, PERMUTED)
    lab = dict(zip(NAMES, PERMUTED))
    coll = mbstat.blankets(frame, [lab["T"], lab["C"]], "iamb", test="fisher_z")
    ref = mbstat.blankets(_reference(gaussian), ["T", "C"], "iamb", test="fisher_z")
    assert list(coll) == [str(lab["T"]), str(lab["C"])]
    for name in "TC":
        mine, theirs = coll[str(lab[name])], ref[name]
        assert mine.target == str(lab[name])
        assert sorted(mine.selected) == sorted(str(lab[v]) for v in theirs.selected)
    args = dict(R=4, seed=1, threshold=0.5, test="fisher_z")
    stab = mbstat.stability(frame, lab["T"], "iamb", **args)
    ref_stab = mbstat.stability(_reference(gaussian), "T", "iamb", **args)
    assert stab.target == str(lab["T"])
    assert sorted(stab.selected) == sorted(str(lab[v]) for v in ref_stab.selected)
    with pytest.raises(ValueError, match="targets: no column is labelled 9"):
        mbstat.blankets(frame, [9], "iamb", test="fisher_z")


# ---------------------------------------------------------------- Categoricals
@pytest.fixture(scope="module")
def mixed_frame():
    rng = np.random.default_rng(3)
    n = 300
    grade = rng.integers(0, 3, n)
    x = grade + rng.normal(size=n)
    return pd.DataFrame({
        "x": x, "w": rng.normal(size=n),
        "region": pd.Categorical(rng.choice([1, 5, 9], n)),  # numbers as labels
        "colour": pd.Categorical(rng.choice(["red", "blue"], n)),
        "grade": pd.Categorical.from_codes(grade, ["low", "mid", "high"], ordered=True),
        "count": rng.integers(0, 5, n), "flag": rng.random(n) < 0.3,
    })


@pytest.mark.parametrize("col", ["region", "colour", "grade"])
def test_fisher_z_refuses_categoricals(mixed_frame, col):
    msg = (rf"test 'fisher_z' needs numbers but columns \['{col}'\] are pandas Categoricals"
           r".*test='g2'.*'mi-cg'")
    with pytest.raises(ValueError, match=msg):
        mbstat.ci_test(mixed_frame, "x", col, test="fisher_z")
    with pytest.raises(ValueError, match=msg):
        mbstat.ci_test(mixed_frame, "x", "w", z=[col], test="fisher_z")
    with pytest.raises(ValueError, match=msg):
        mbstat.ci_test_batch(mixed_frame, [col, "count"], "x", test="fisher_z")
    with pytest.raises(ValueError, match=msg):
        mbstat.iamb(mixed_frame[["x", "w", col]], "x", test="fisher_z")
    mbstat.ci_test(mixed_frame, "x", col, test="mi-cg")  # the mixed-data test takes it


def test_numbers_stay_numbers(mixed_frame):
    """Integer and bool columns enter fisher_z with their values, as R's cor takes them."""
    as_float = mixed_frame.assign(count=mixed_frame["count"].astype(float),
                                  flag=mixed_frame["flag"].astype(float))
    for col in ("count", "flag"):
        got = mbstat.ci_test(mixed_frame, "x", col, z=["w"], test="fisher_z")
        want = mbstat.ci_test(as_float, "x", col, z=["w"], test="fisher_z")
        assert got.pvalue == pytest.approx(want.pvalue, rel=1e-12)
    r, _ = stats.pearsonr(mixed_frame["x"], mixed_frame["count"])
    got = mbstat.ci_test(mixed_frame, "x", "count", test="fisher_z")
    assert got.statistic == pytest.approx(np.sqrt(len(mixed_frame) - 3) * np.arctanh(r))


def test_rank_tests_take_ordered_categories(mixed_frame):
    """Ranks need an order only: an ordered Categorical is ranked in its categories' order
    (the same test as on its codes); unordered ones are refused."""
    codes = mixed_frame.assign(grade=mixed_frame["grade"].cat.codes.astype(np.int64))
    for test in ("spearman", "normal-scores"):
        got = mbstat.ci_test(mixed_frame, "x", "grade", z=["w"], test=test)
        want = mbstat.ci_test(codes, "x", "grade", z=["w"], test=test)
        assert got.pvalue == want.pvalue and got.statistic == want.statistic
        with pytest.raises(ValueError, match=rf"test '{test}' needs numbers but columns "
                                             r"\['colour'\] are unordered pandas Categoricals"):
            mbstat.ci_test(mixed_frame, "x", "colour", test=test)
    rho = stats.spearmanr(mixed_frame["x"], mixed_frame["grade"].cat.codes).statistic
    assert rho > 0.3  # the order read is the declared one (low < mid < high)
    backwards = mixed_frame.assign(grade=pd.Categorical(mixed_frame["grade"].cat.codes,
                                                        categories=[2, 1, 0], ordered=True))
    with pytest.raises(ValueError, match="numeric categories out of ascending order"):
        mbstat.ci_test(backwards, "x", "grade", test="spearman")


def test_categorical_order_survives_reencoding(mixed_frame):
    ds = mbstat.as_dataset(mixed_frame)
    assert ds.ordered == (None, None, False, False, True, None, None)
    holed = mixed_frame.copy()
    holed.loc[5, "w"] = np.nan
    dropped = mbstat.as_dataset(mbstat.as_dataset(holed, na="pairwise"), na="drop")
    assert dropped.ordered == ds.ordered  # count and flag stay numbers
    assert mbstat.ci_test(dropped, "x", "count", test="fisher_z").n == len(mixed_frame) - 1
    assert list(ds.subset(["grade", "count"]).ordered) == [True, None]


def test_two_numeric_categories_are_an_indicator(mixed_frame):
    """Any coding of two categories is an affine function of any other: the two-sided
    p-values of fisher_z and the rank tests do not depend on it, as for a bool column."""
    pair = mixed_frame.assign(flag=pd.Categorical(mixed_frame["flag"].astype(int)))
    swapped = mixed_frame.assign(flag=pd.Categorical(1 - mixed_frame["flag"].astype(int) * 4))
    for test in ("fisher_z", "spearman", "normal-scores"):
        got = mbstat.ci_test(pair, "x", "flag", z=["w"], test=test)
        want = mbstat.ci_test(mixed_frame, "x", "flag", z=["w"], test=test)
        assert got.pvalue == pytest.approx(want.pvalue, rel=1e-10)
    for test in ("fisher_z", "normal-scores"):  # (spearman given z: not exactly, see rank.py)
        flipped = mbstat.ci_test(swapped, "x", "flag", z=["w"], test=test)
        want = mbstat.ci_test(mixed_frame, "x", "flag", z=["w"], test=test)
        assert flipped.pvalue == pytest.approx(want.pvalue, rel=1e-10)
    text = mixed_frame.assign(flag=mixed_frame["flag"].map({True: "yes", False: "no"}))
    with pytest.raises(ValueError, match="non-numeric levels"):
        mbstat.ci_test(text, "x", "flag", test="fisher_z")


def test_partitioned_data_reads_labels(gaussian):
    dd = pytest.importorskip("dask.dataframe")
    frame = _labelled(gaussian, SPREAD)
    parts = dd.from_pandas(frame, npartitions=2)
    want = mbstat.ci_test(_reference(gaussian), "T", "C", z=["A"], test="fisher_z")
    got = mbstat.ci_test(parts, 30, 40, z=[10], test="fisher_z")
    assert got.pvalue == pytest.approx(want.pvalue, rel=1e-9) and got.x == ("30",)
    with pytest.raises(ValueError, match="z: no column is labelled 1"):
        mbstat.ci_test(parts, 30, 40, z=[1], test="fisher_z")
    cats = dd.from_pandas(frame.assign(**{"g": pd.Categorical(np.arange(len(frame)) % 3)}),
                          npartitions=2)
    with pytest.raises(ValueError, match=r"columns \['g'\] are pandas Categoricals"):
        mbstat.ci_test(cats, 30, "g", test="fisher_z")
