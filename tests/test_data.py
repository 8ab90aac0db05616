"""The data layer: encoding, levels, kinds, errors, and the caller's data left alone."""
import numpy as np
import pandas as pd
import pytest

import mbstat
import mbstat.datasets
from mbstat import as_dataset, ci_test
from mbstat.data import Dataset


def frame():
    return pd.DataFrame(
        {
            "cat": pd.Categorical(["a", "b", "a", "c"], categories=["a", "b", "c", "unused"]),
            "txt": ["x", "y", "y", "x"],
            "flag": [True, False, True, True],
            "int": [3, 1, 3, 7],
            "num": [0.5, 1.5, 2.5, 3.5],
        }
    )


def test_encoding_levels_and_kinds():
    ds = as_dataset(frame())
    assert isinstance(ds, Dataset)
    assert ds.names == ("cat", "txt", "flag", "int", "num")
    assert ds.kinds == ("discrete",) * 4 + ("continuous",)
    assert ds.levels[0] == ("a", "b", "c", "unused")  # declared categories kept
    assert ds.levels[1] == ("x", "y")
    assert ds.levels[2] == (False, True)
    assert ds.levels[3] == (1, 3, 7)
    assert ds.codes.dtype == np.uint8
    np.testing.assert_array_equal(ds.codes[:, 0], [0, 1, 0, 2])
    np.testing.assert_array_equal(ds.codes[:, 3], [1, 0, 1, 2])
    np.testing.assert_array_equal(ds.values[:, 4], [0.5, 1.5, 2.5, 3.5])
    assert list(ds.cardinalities) == [4, 2, 2, 3, 0]
    assert ds.n_rows == 4 and ds.n_cols == 5


def test_smallest_dtype_grows_with_levels():
    arr = np.arange(600).reshape(300, 2)
    ds = as_dataset(arr)
    assert ds.codes.dtype == np.uint16
    assert ds.names == ("V1", "V2")


def test_array_with_names_and_roundtrip():
    arr = np.array([[0, 1], [1, 1], [1, 0]])
    ds = as_dataset(arr, names=["a", "b"])
    back = ds.to_frame()
    assert list(back.columns) == ["a", "b"]
    assert back["a"].tolist() == [0, 1, 1]


def test_codes_are_read_only():
    ds = as_dataset(frame())
    with pytest.raises(ValueError):
        ds.codes[0, 0] = 1
    with pytest.raises(AttributeError):
        ds.names = ("x",)


def test_caller_data_never_modified():
    df = frame()
    df.loc[1, "num"] = np.nan
    before = df.copy(deep=True)
    as_dataset(df, na="drop", discretize=2)
    arr = np.random.default_rng(0).integers(0, 3, (50, 3))
    arr_before = arr.copy()
    ci_test(arr, 0, 1, [2])
    pd.testing.assert_frame_equal(df, before)
    np.testing.assert_array_equal(arr, arr_before)


def test_discretize_equal_frequency():
    x = np.arange(100, dtype=float)
    ds = as_dataset(pd.DataFrame({"x": x}), discretize=4)
    assert ds.kinds == ("discrete",)
    assert np.bincount(ds.codes[:, 0]).tolist() == [25, 25, 25, 25]
    assert len(ds.levels[0]) == 4


def test_na_drop_and_raise():
    df = pd.DataFrame({"a": [1, 2, None, 1], "b": ["x", "y", "x", None]})
    with pytest.raises(ValueError, match=r"missing values .*\['a', 'b'\].*na='drop'"):
        as_dataset(df)
    ds = as_dataset(df, na="drop")
    assert ds.n_rows == 2


@pytest.mark.parametrize(
    "data, kwargs, error, message",
    [
        (np.zeros(5), {}, ValueError, "2-D array; got 1-D"),
        (np.zeros((2, 2, 2)), {}, ValueError, "2-D array; got 3-D"),
        (np.zeros((1, 3), dtype=int), {}, ValueError, "at least 2 rows"),
        (pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"]), {}, ValueError, "duplicate column names: \\['a'\\]"),
        (pd.DataFrame({"m": ["a", 1, "b"]}), {}, TypeError, "column 'm' mixes types"),
        (pd.DataFrame({"a": [1, 2]}), {"na": "keep"}, ValueError, "na must be one of"),
        (pd.DataFrame({"a": [1, 2]}), {"discretize": 1}, ValueError, "discretize must be >= 2"),
        (np.zeros((3, 2)), {"names": ["only"]}, ValueError, "names has 1 entries"),
        ({"a": [1, 2], "b": [3, 4]}, {}, TypeError, "DataFrame, a 2-D array or a Dataset; got a dict"),
    ],
)
def test_bad_input(data, kwargs, error, message):
    with pytest.raises(error, match=message):
        as_dataset(data, **kwargs)


def test_variable_lookup_errors():
    ds = as_dataset(frame())
    assert ds.index("int") == 3 and ds.index(3) == 3
    with pytest.raises(ValueError, match="target: unknown variable 'nope'"):
        ds.index("nope", "target")
    with pytest.raises(ValueError, match="out of range"):
        ds.index(9)
    with pytest.raises(TypeError, match="column name or position"):
        ds.index(1.5)
    with pytest.raises(TypeError, match="z must be a column name or position, or a list"):
        ds.indices(2.5, "z")


def test_numeric_matrix_uses_the_values_of_numeric_levels():
    df = pd.DataFrame({"i": [10, 30, 10, 20], "s": ["b", "a", "b", "a"],
                       "f": [0.5, 1.5, 2.5, 3.5], "t": [True, False, True, True]})
    ds = as_dataset(df)
    np.testing.assert_array_equal(ds.numeric(), [[10, 1, 0.5, 1], [30, 0, 1.5, 0],
                                                 [10, 1, 2.5, 1], [20, 0, 3.5, 1]])
    assert not ds.numeric().flags.writeable
    ds.require_numeric([0, 2, 3], "fisher_z")
    with pytest.raises(ValueError, match=r"columns \['s'\] have non-numeric levels"):
        ds.require_numeric([0, 1], "fisher_z")


def test_continuous_columns_refused_by_discrete_tests():
    df = frame()
    with pytest.raises(ValueError, match=r"columns \['num'\] are continuous.*discretize=.*fisher_z"):
        ci_test(df, "num", "cat", test="g2")
    res = ci_test(df, "num", "cat", discretize=2)
    assert 0 <= res.pvalue <= 1


@pytest.mark.parametrize(
    "columns, message",
    [
        ([1, "1"], r"duplicate column names: \['1'\] \('1' from the labels 1, '1'\)"),
        (["a", "b", "a", "b"], r"duplicate column names: \['a', 'b'\]; give each"),
    ],
)
def test_labels_that_collide_as_text_are_refused(columns, message):
    """1 and "1" both name the column "1": a clear error, not a crash inside pandas."""
    df = pd.DataFrame(np.arange(2 * len(columns)).reshape(2, -1) % 2)
    df.columns = columns
    with pytest.raises(ValueError, match=message):
        as_dataset(df)


def test_duplicate_names_for_an_array_name_the_parameter():
    with pytest.raises(ValueError, match=r"names has duplicate entries: \['a'\]"):
        as_dataset(np.zeros((3, 2), dtype=int), names=["a", "a"])
    with pytest.raises(TypeError, match="names must be a list of column names"):
        as_dataset(np.zeros((3, 2), dtype=int), names="ab")


def test_non_string_labels_become_text_names():
    df = pd.DataFrame({1: [0, 1, 0], 2.5: ["a", "b", "a"], ("t", 1): [1, 1, 2]})
    ds = as_dataset(df)
    assert ds.names == ("1", "2.5", "('t', 1)")
    assert ds.levels[1] == ("a", "b")
    df = pd.DataFrame([[0, "a"], [1, "b"]])
    df.columns = pd.Index([1, 1.0], dtype=object)  # equal labels, distinct names
    assert as_dataset(df).names == ("1", "1.0")


def test_numpy_scalars_in_object_columns_count_as_python_values():
    """An object column mixing int and np.int64 (or str and np.str_, bool and np.bool_)
    holds one type of value."""
    df = pd.DataFrame({
        "i": pd.Series([1, np.int64(2), 1, np.int32(3)], dtype=object),
        "s": pd.Series(["a", np.str_("b"), "a", "b"], dtype=object),
        "b": pd.Series([True, np.bool_(False), True, False], dtype=object),
    })
    before = df.copy(deep=True)
    ds = as_dataset(df)
    assert ds.kinds == ("discrete",) * 3
    assert ds.levels == ((1, 2, 3), ("a", "b"), (False, True))
    assert all(type(v) is int for v in ds.levels[0])
    np.testing.assert_array_equal(ds.codes[:, 0], [0, 1, 0, 2])
    np.testing.assert_array_equal(ds.codes[:, 2], [1, 0, 1, 0])
    pd.testing.assert_frame_equal(df, before)
    assert all(type(v) is not int for v in df["i"][1::2])  # the caller's values untouched


def test_numbers_in_object_columns_are_encoded_as_in_typed_columns():
    """Floats held as objects are continuous as in a float column (not one level per value);
    bools mixed with numbers are refused with examples of each."""
    df = pd.DataFrame({"f": pd.Series([0.5, 1, np.float32(2.5), 3.25], dtype=object),
                       "g": [0.5, 1.0, 2.5, 3.25]})
    ds = as_dataset(df)
    assert ds.kinds == ("continuous", "continuous")
    np.testing.assert_array_equal(ds.values[:, 0], ds.values[:, 1])
    assert as_dataset(df, discretize=2).levels[0] == as_dataset(df, discretize=2).levels[1]
    bad = pd.DataFrame({"m": pd.Series([True, 1, 0], dtype=object)})
    with pytest.raises(TypeError, match=r"column 'm' mixes types bool \(e.g. True\), int "
                                        r"\(e.g. 1\)"):
        as_dataset(bad)
    bad = pd.DataFrame({"m": pd.Series([1.5, "a", 2.5], dtype=object)})
    with pytest.raises(TypeError, match=r"column 'm' mixes types float \(e.g. 1.5\), "
                                        r"str \(e.g. 'a'\)"):
        as_dataset(bad)
    inf = pd.DataFrame({"m": pd.Series([1.5, np.inf, 2], dtype=object)})
    with pytest.raises(ValueError, match="column 'm' has infinite values"):
        as_dataset(inf)


def test_structured_and_record_arrays_give_named_columns():
    arr = np.array([(1, "a", 0.5), (2, "b", 1.5), (1, "a", 2.5)],
                   dtype=[("x", int), ("y", "U1"), ("z", float)])
    before = arr.copy()
    for data in (arr, arr.view(np.recarray)):
        ds = as_dataset(data)
        assert ds.names == ("x", "y", "z")
        assert ds.kinds == ("discrete", "discrete", "continuous")
        assert ds.levels[:2] == ((1, 2), ("a", "b"))
        np.testing.assert_array_equal(ds.codes[:, 1], [0, 1, 0])
    assert as_dataset(arr, names=["p", "q", "r"]).names == ("p", "q", "r")
    np.testing.assert_array_equal(arr, before)
    with pytest.raises(ValueError, match="names has 2 entries but data has 3 columns"):
        as_dataset(arr, names=["p", "q"])
    with pytest.raises(ValueError, match=r"field 'v' holds arrays of shape \(2,\)"):
        as_dataset(np.zeros(3, dtype=[("u", int), ("v", int, (2,))]))
    with pytest.raises(ValueError, match=r"structured array must be 1-D.*\(3, 1\)"):
        as_dataset(arr.reshape(3, 1))


def test_nullable_and_categorical_columns():
    """pandas' nullable dtypes encode as their numpy counterparts; missing values in them
    are found and dropped; declared but unused categories are kept as levels."""
    df = pd.DataFrame({
        "I": pd.array([1, 2, None, 2, 1], dtype="Int64"),
        "S": pd.array(["a", "b", "a", None, "b"], dtype="string"),
        "B": pd.array([True, False, True, True, None], dtype="boolean"),
        "F": pd.array([0.5, 1.5, 2.5, 3.5, 4.5], dtype="Float64"),
        "C": pd.Categorical(["u", "v", "u", "v", "u"], categories=["u", "v", "w"]),
    })
    with pytest.raises(ValueError, match=r"missing values .*\['I', 'S', 'B'\]"):
        as_dataset(df)
    ds = as_dataset(df, na="drop")
    assert ds.n_rows == 2 and ds.kinds == ("discrete",) * 3 + ("continuous", "discrete")
    assert ds.levels[:3] == ((1, 2), ("a", "b"), (False, True))
    assert ds.levels[4] == ("u", "v", "w")
    np.testing.assert_array_equal(ds.codes[:, :3], [[0, 0, 1], [1, 1, 0]])


def test_rows_dropped_by_position_with_a_repeated_index():
    df = pd.DataFrame({"a": [1, 2, None, 1, 2], "b": ["x", "y", "x", "y", "x"]},
                      index=[0, 0, 1, 1, 2])
    ds = as_dataset(df, na="drop")
    np.testing.assert_array_equal(ds.values[:, 0], [1, 2, 1, 2])
    np.testing.assert_array_equal(ds.codes[:, 1], [0, 1, 1, 0])


def test_masked_entries_of_a_masked_array_are_missing():
    """np.asarray would hand back the hidden values (99 here) as data."""
    arr = np.ma.masked_array([[1, 2], [2, 3], [1, 99], [2, 2]],
                             mask=[[0, 0], [0, 0], [0, 1], [0, 0]])
    with pytest.raises(ValueError, match=r"missing values .*\['V2'\]"):
        as_dataset(arr)
    ds = as_dataset(arr, na="drop")
    assert ds.kinds == ("discrete", "discrete") and ds.levels == ((1, 2), (2, 3))
    assert 99 in arr.data  # the caller's array untouched
    rec = np.ma.masked_array(np.array([(1, "a"), (2, "b"), (3, "c")],
                                      dtype=[("x", int), ("y", "U1")]),
                             mask=[(0, 0), (0, 1), (0, 0)])
    assert as_dataset(rec, na="drop").levels == ((1, 3), ("a", "c"))
    with pytest.raises(ValueError, match="got 1 after dropping 2 rows with missing values"):
        as_dataset(pd.DataFrame({"a": [None, None, 1.0], "b": [1, 2, 3]}), na="drop")


def test_errors_name_few_columns_and_say_what_data_was():
    wide = pd.DataFrame({f"s{j}": ["a", "b"] * 5 for j in range(300)})
    with pytest.raises(ValueError, match=r"\(300 in all\) have non-numeric"):
        mbstat.iamb(wide, "s0", test="fisher_z")
    with pytest.raises(TypeError, match=r"got a str 'file.csv' \(read a file first"):
        mbstat.iamb("file.csv", "a")


def test_dataframe_path_encodes_only_the_tests_columns():
    df = mbstat.datasets.sample_network("alarm", 2000, seed=1)
    ds = as_dataset(df)
    names = list(df.columns)
    for x, y, z in (("HR", "CO", ["HRBP"]), (names.index("HR"), "CO", [names.index("HRBP")]),
                    (["HR", "HRSAT"], "CO", ("HRBP",)), ("HR", "CO", None)):
        assert ci_test(df, x, y, z, test="g2") == ci_test(ds, x, y, z, test="g2")
    batch_df = mbstat.ci_test_batch(df, ["HR", "HRSAT", ("CVP", "PCWP")], "CO", ["HRBP"],
                                    test="g2")
    batch_ds = mbstat.ci_test_batch(ds, ["HR", "HRSAT", ("CVP", "PCWP")], "CO", ["HRBP"],
                                    test="g2")
    np.testing.assert_array_equal(batch_df.table, batch_ds.table)
    assert batch_df.xs == batch_ds.xs  # only the six columns used were encoded:
    assert set(batch_df.names) == {"HR", "HRSAT", "CVP", "PCWP", "CO", "HRBP"}
    # only the test's columns are read: a missing value elsewhere does not matter ...
    holed = df.copy()
    holed["PAP"] = holed["PAP"].cat.add_categories([]).astype(object)
    holed.loc[3, "PAP"] = None
    assert ci_test(holed, "HR", "CO", ["HRBP"], test="g2") == ci_test(ds, "HR", "CO", ["HRBP"],
                                                                     test="g2")
    # ... but na="drop" still drops the rows incomplete in any column
    assert ci_test(holed, "HR", "CO", ["HRBP"], test="g2", na="drop").n == len(df) - 1
    with pytest.raises(ValueError, match="unknown variable 'nope'"):
        ci_test(df, "nope", "CO", test="g2")


def test_vectorized_encoding_matches_the_values():
    rng = np.random.default_rng(3)
    words = np.array(["b", "a", "c"], dtype=object)
    df = pd.DataFrame({
        "obj": words[rng.integers(0, 3, 500)],
        "npstr": np.array([np.str_(w) for w in words[rng.integers(0, 3, 500)]], dtype=object),
        "npint": np.array([np.int64(v) for v in rng.integers(5, 8, 500)], dtype=object),
        "pystr": pd.array(words[rng.integers(0, 3, 500)].astype(str), dtype="string"),
        "nullable": pd.array(rng.integers(0, 3, 500), dtype="Int64"),
        "bools": np.array([bool(v) for v in rng.integers(0, 2, 500)], dtype=object),
    })
    ds = as_dataset(df)
    for j, name in enumerate(df.columns):
        decoded = np.asarray(ds.levels[j], dtype=object)[ds.codes[:, j]]
        assert [type(v) for v in ds.levels[j]] == [type(v) for v in sorted(ds.levels[j])]
        assert list(ds.levels[j]) == sorted(ds.levels[j]), name
        assert [v.item() if isinstance(v, np.generic) else v for v in df[name]] == list(decoded)
    assert all(type(v) is int for v in ds.levels[2]) and ds.levels[5] == (False, True)
    assert all(type(v) is str for v in ds.levels[1] + ds.levels[3])


def test_columns_selects_under_every_na_and_is_checked():
    """as_dataset(columns=): the columns asked for, in that order, also with na="drop" (which
    returned every column, silently), the rows incomplete in any column dropped as without
    columns=; bad positions raise errors naming the parameter (were IndexError/TypeError)."""
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, np.nan, 5.0], "b": list("xyxyx"),
                       "c": pd.Categorical(["u", "v", "u", "v", None])})
    full = as_dataset(df, na="drop")
    got = as_dataset(df, columns=[2, 0], na="drop")
    assert got.names == ("c", "a") and got.n_rows == full.n_rows == 3
    np.testing.assert_array_equal(got.codes[:, 0], full.codes[:, 2])
    np.testing.assert_array_equal(got.values[:, 1], full.values[:, 0])
    assert as_dataset(df, columns=[2, 0], na="pairwise").names == ("c", "a")
    for bad, err, msg in (([5], ValueError, "columns: position 5 is out of range"),
                          (["a"], TypeError, "columns must hold column positions"),
                          ([0, 0], ValueError, "columns: positions repeated"),
                          ("a", TypeError, "columns must be a list")):
        with pytest.raises(err, match=msg):
            as_dataset(df, columns=bad, na="drop")
