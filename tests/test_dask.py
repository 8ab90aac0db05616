"""One data set in partitions on a Dask cluster: the same answers as in memory.

A LocalCluster of 2 workers (threads of this process, for speed) holds the partitions;
every count is made there by the compiled kernels and summed. Skipped without the
``dask`` extra.
"""
import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import mbstat  # noqa: E402
import mbstat.datasets  # noqa: E402
from mbstat import as_dataset, ci_test, ci_test_batch  # noqa: E402
from mbstat.data import PartitionedDataset  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def alarm():
    return mbstat.datasets.sample_network("alarm", 3000, seed=1)


@pytest.fixture(scope="module")
def parted(client, alarm):
    return as_dataset(dd.from_pandas(alarm, npartitions=3))


QUERIES = [("HR", "CO", ["HRBP"]), ("HR", "CO", []), (["HR", "HRSAT"], "CO", ["HRBP", "CVP"]),
           ("PCWP", "LVEDVOLUME", ["HYPOVOLEMIA", "LVFAILURE", "CVP"])]


def test_encoding_equals_memory(parted, alarm):
    mem = as_dataset(alarm)
    assert isinstance(parted, PartitionedDataset) and parted.n_partitions == 3
    assert (parted.names, parted.levels, parted.kinds) == (mem.names, mem.levels, mem.kinds)
    assert parted.n_rows == len(alarm) and "3 partitions" in repr(parted)
    back = parted.to_frame()
    np.testing.assert_array_equal(as_dataset(back).codes, mem.codes)


def _object_columns(n=60):
    """Object columns as pandas holds them: integers with None, booleans with None, numbers
    as objects (integers only in the first half, floats in the second), text with None."""
    rng = np.random.default_rng(4)
    ints = pd.Series(rng.choice([1, 2, 3, 10], n), dtype=object)
    ints[rng.random(n) < 0.2] = None
    flags = pd.Series(rng.random(n) < 0.5, dtype=object)
    flags[5] = None
    numbers = pd.Series([int(v) for v in rng.integers(0, 9, n // 2)]
                        + list(rng.normal(size=n - n // 2)), dtype=object)
    text = pd.Series(rng.choice(["u", "v", "w"], n), dtype=object)
    text[3] = None
    return pd.DataFrame({"ints": ints, "flags": flags, "numbers": numbers, "text": text,
                         "y": rng.integers(0, 2, n)})


def test_object_columns_encode_as_in_memory(client):
    """Dask turns object columns into strings ("1", "10", "2": Dask's convert-string); the
    encoding undoes that, so the partitions give the in-memory Dataset: the same levels (1,
    2, 3, 10, not '1', '10', '2', '3'), kinds (numbers as objects continuous although the
    first partition holds integers only), codes and tests; mixed types are refused naming
    the column, as in memory."""
    from dask import delayed

    frame = _object_columns()
    mem = as_dataset(frame, na="pairwise")
    assert mem.levels[0] == (1, 2, 3, 10) and mem.kinds[2] == "continuous"
    built = [dd.from_pandas(frame, npartitions=2),
             dd.from_delayed([delayed(frame.iloc[:30].copy)(), delayed(frame.iloc[30:].copy)()],
                             meta=frame.iloc[:0])]
    for dask_frame in built:
        assert dask_frame.dtypes["ints"] != object  # what Dask made of it
        parted = as_dataset(dask_frame, na="pairwise")
        assert (parted.names, parted.levels, parted.kinds) == (mem.names, mem.levels, mem.kinds)
        pd.testing.assert_frame_equal(parted.to_frame(), mem.to_frame())
        for x in ("ints", "flags", "text"):
            got, ref = (ci_test(d, x, "y", test="g2", na="pairwise") for d in (parted, frame))
            assert (got.statistic, got.pvalue, got.n) == (ref.statistic, ref.pvalue, ref.n)
    assert frame.dtypes["ints"] == object and frame["ints"].iloc[0] in (1, 2, 3, 10, None)
    mixed = frame.assign(ints=frame["ints"].where(frame.index != 40, "x"))
    for data in (mixed, dd.from_pandas(mixed, npartitions=2)):
        with pytest.raises(TypeError, match="column 'ints' mixes types int .*, str"):
            as_dataset(data, na="pairwise")


@pytest.mark.parametrize("test", ["g2", "x2", "g2-adf", "auto", "sp-x2", "mc-g2"])
def test_statistics_equal_memory(parted, alarm, test):
    """Asymptotic tests equal to the last bit; calibrated ones too (the rows of the strata
    that need permuting are gathered in row order, the dense strata's moments come from
    their margins), to rounding of those moments."""
    mem = as_dataset(alarm)
    args = {"B": 300} if test.startswith("mc") else {}
    for x, y, z in QUERIES:
        got = ci_test(parted, x, y, z, test=test, **args)
        ref = ci_test(mem, x, y, z, test=test, **args)
        assert (got.statistic, got.n, got.calibration) == (ref.statistic, ref.n, ref.calibration)
        if got.calibration == "asymptotic":
            assert (got.pvalue, got.df) == (ref.pvalue, ref.df)
        else:
            assert got.df == pytest.approx(ref.df, rel=1e-12)
            assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    some = ci_test_batch(parted, ["HR", "CVP", "BP", ("PAP", "SHUNT")], "CO", ["HRBP"], test="g2")
    np.testing.assert_array_equal(some.table, ci_test_batch(
        mem, ["HR", "CVP", "BP", ("PAP", "SHUNT")], "CO", ["HRBP"], test="g2").table)


def test_many_strata_travel_as_observed_cells(client):
    """Conditioning sets of more declared cells than a dense table allows: each partition
    sends its observed cells."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.integers(0, 12, (3000, 9)),
                         columns=list("abcdefghi")).astype("category")
    parted = as_dataset(dd.from_pandas(frame, npartitions=2))
    z = list("cdefghi")  # 12^7 declared strata
    got = ci_test(parted, "a", "b", z, test="g2")
    ref = ci_test(frame, "a", "b", z, test="g2")
    assert (got.statistic, got.df, got.pvalue) == (ref.statistic, ref.df, ref.pvalue)


def test_learners_find_the_same_blanket(client):
    asia = mbstat.datasets.sample_network("asia", 5000, seed=3)
    parted = as_dataset(dd.from_pandas(asia, npartitions=2))
    for name in ("iamb", "gs_m"):
        for target in ("either", "lung"):
            got = getattr(mbstat, name)(parted, target)
            ref = getattr(mbstat, name)(asia, target)
            assert got.selected == ref.selected, (name, target)
            np.testing.assert_array_equal(got.tests["pvalue"], ref.tests["pvalue"])
    many = mbstat.blankets(parted, ["lung", "smoke"], method="iamb")  # in this process
    assert many.results["lung"].selected == mbstat.iamb(asia, "lung").selected
    with pytest.raises(TypeError, match="cannot be sent to other processes"):
        import pickle

        pickle.dumps(parted)


def test_pairwise_and_drop_in_partitions(client, alarm):
    rng = np.random.default_rng(0)
    holed = alarm.iloc[:1500].mask(rng.random((1500, alarm.shape[1])) < 0.1)
    frame = dd.from_pandas(holed, npartitions=2)
    parted = as_dataset(frame, na="pairwise")
    assert parted.keeps_missing
    for x, y, z in QUERIES[:3]:
        got = ci_test(parted, x, y, z, test="g2", na="pairwise")
        ref = ci_test(holed, x, y, z, test="g2", na="pairwise")
        assert (got.statistic, got.pvalue, got.n) == (ref.statistic, ref.pvalue, ref.n)
        # encoded with its missing cells, the data set needs no na= again: each test's rows
        assert ci_test(parted, x, y, z, test="g2").n == ref.n
    dropped = as_dataset(frame, na="drop")
    assert dropped.n_rows == len(holed.dropna())
    with pytest.raises(ValueError, match="missing values"):
        as_dataset(frame)


def test_fisher_z_from_sufficient_statistics(client):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4000, 5))
    X[:, 1] += X[:, 0]
    X[:, 2] += 0.5 * X[:, 1]
    frame = pd.DataFrame(X, columns=list("abcde"))
    parted = as_dataset(dd.from_pandas(frame, npartitions=3))
    got = ci_test_batch(parted, ["a", "d", "e"], "c", ["b"], test="fisher_z")
    ref = ci_test_batch(frame, ["a", "d", "e"], "c", ["b"], test="fisher_z")
    np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-8)
    np.testing.assert_allclose(got.pvalue, ref.pvalue, rtol=1e-8)


def test_drop_refused_on_partitions_that_keep_missing_cells(client):
    """na='drop' on a data set in partitions encoded with na='pairwise' raised nothing and
    kept the missing cells: ci_test(..., na='drop') deleted test-wise (n = 400, p = 0.29)
    where the same call in memory drops the incomplete rows (n = 259, p = 0.20)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({c: rng.integers(0, 3, 400) for c in "abc"}).astype(float)
    frame.loc[rng.random(400) < 0.1, "c"] = np.nan
    frame = frame.astype("Int64")
    parted = as_dataset(dd.from_pandas(frame, npartitions=2), na="pairwise")
    with pytest.raises(ValueError, match="na='drop'.*as_dataset\\(frame, na='drop'\\)"):
        ci_test(parted, "a", "b", ["c"], na="drop")
    dropped = as_dataset(dd.from_pandas(frame, npartitions=2), na="drop")
    assert ci_test(dropped, "a", "b", ["c"]) == ci_test(frame, "a", "b", ["c"], na="drop")


def test_fisher_z_far_from_zero(client):
    """Columns far from 0 (10^6 + noise) with test-wise deletion: each partition's moments
    are centred before they are merged, so the partial correlation keeps its precision
    (raw sums of squares gave z = 29.3 where the data's is 5.86)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 3))
    X[:, 1] += 0.1 * X[:, 0]
    frame = pd.DataFrame(X + 1e6, columns=list("abc"))
    frame.loc[rng.random(2000) < 0.1, "c"] = np.nan
    parted = as_dataset(dd.from_pandas(frame, npartitions=4), na="pairwise")
    for z in ([], ["c"]):
        got = ci_test(parted, "a", "b", z, test="fisher_z")
        ref = ci_test(frame, "a", "b", z, test="fisher_z", na="pairwise")
        sub = frame[["a", "b", *z]].dropna()
        r = np.corrcoef(_residuals(sub, z).T)[0, 1]  # by hand, on the data less 10^6
        expected = np.sqrt(len(sub) - len(z) - 3) * np.arctanh(r)
        np.testing.assert_allclose([got.statistic, ref.statistic], expected, rtol=1e-6)


def test_fisher_z_large_constant_is_a_constant(client):
    """A constant column far from 0 (1e12 / 3) is constant in the merged moments too: its
    centred sum of squares is rounding (at most 1e-12 squared of its raw one), so r = 0 and
    p = 1 as in memory (before: noise, p = 0.57 against the first independent y here)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(400, 20)), columns=[f"x{i}" for i in range(20)])
    frame["z"] = rng.normal(size=400)
    frame["c"] = 1e12 / 3
    parted = as_dataset(dd.from_pandas(frame, npartitions=3))
    for z in ([], ["z"]):
        got = [ci_test(parted, "c", f"x{i}", z, test="fisher_z").pvalue for i in range(20)]
        assert got == [1.0] * 20
        assert (ci_test_batch(parted, list(frame.columns[:20]), "c", z,
                              test="fisher_z").pvalue == 1).all()


def _residuals(sub, z):
    """Residuals of a and b on [1, z], computed on the columns less 10^6 (exact shifts)."""
    design = np.c_[np.ones(len(sub)), sub[z].to_numpy() - 1e6]
    ab = sub[["a", "b"]].to_numpy() - 1e6
    return ab - design @ np.linalg.lstsq(design, ab, rcond=None)[0]


def test_parquet_directory(client, alarm, tmp_path):
    pytest.importorskip("pyarrow")
    small = alarm.iloc[:1000, :10]
    dd.from_pandas(small, npartitions=2).to_parquet(tmp_path / "data")
    parted = as_dataset(str(tmp_path / "data"))
    assert parted.n_partitions == 2 and parted.n_rows == 1000
    got = ci_test(parted, "CVP", "PCWP", ["LVEDVOLUME"], test="g2")
    assert got == ci_test(small, "CVP", "PCWP", ["LVEDVOLUME"], test="g2")


def test_what_needs_rows_in_memory_refuses(parted):
    with pytest.raises(ValueError, match="needs the rows in memory"):
        mbstat.ci.CITester(parted, "mi-cg")
    with pytest.raises(ValueError, match="needs the rows in memory"):
        mbstat.dependency(parted, ["CVP"], "HR")
    with pytest.raises(ValueError, match="discretize"):
        as_dataset(dd.from_pandas(pd.DataFrame({"a": [0.5, 1.5, 2.5]}), npartitions=1),
                   discretize=2)
