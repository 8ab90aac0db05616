"""The data layer: encoding, levels, kinds, errors, and the caller's data left alone."""
import numpy as np
import pandas as pd
import pytest

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
        ci_test(df, "num", "cat")
    res = ci_test(df, "num", "cat", discretize=2)
    assert 0 <= res.pvalue <= 1
