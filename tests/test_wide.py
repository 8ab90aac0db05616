"""Wide data: the THROMBIN-shaped generator, sparse input, learners on many features."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat.datasets import make_wide_binary


def test_make_wide_binary_shape_blanket_and_seed():
    df = make_wide_binary(300, 500, seed=3)
    assert df.shape == (300, 501) and df.columns[-1] == "y"
    assert (df.dtypes == np.uint8).all()
    assert df.attrs["blanket"] == ("P1", "P2", "P3", "C1", "C2", "S1", "S2")
    assert set(df.attrs["blanket"]) <= set(df.columns)
    assert df.equals(make_wide_binary(300, 500, seed=3))
    assert not df.equals(make_wide_binary(300, 500, seed=4))
    noise = df.filter(regex=r"^X")
    assert 0.005 < noise.to_numpy().mean() < 0.03  # sparse: about 1.5% ones
    # the relevant columns are not first: the order is shuffled
    assert list(df.columns[:7]) != list(df.attrs["blanket"])


def test_make_wide_binary_structure():
    """Children depend on y and their spouse; copies of a parent are independent of y
    given the parent (checked by G2 on a large sample)."""
    from mbstat import ci_test

    df = make_wide_binary(4000, 40, seed=0)
    assert ci_test(df, "C1", "y").pvalue < 1e-10
    assert ci_test(df, "S1", "y", ["C1"]).pvalue < 1e-6  # a spouse: dependent given C1
    assert ci_test(df, "RP1_1", "y").pvalue < 1e-6
    assert ci_test(df, "RP1_1", "y", ["P1"], calibration="asymptotic").pvalue > 1e-3


def test_make_wide_binary_sparse_is_the_same_data():
    dense = make_wide_binary(200, 300, seed=1)
    sparse = make_wide_binary(200, 300, seed=1, sparse=True)
    assert all(isinstance(t, pd.SparseDtype) for t in sparse.dtypes)
    assert sparse.sparse.to_dense().astype(np.uint8).equals(dense)
    assert sparse.attrs["blanket"] == dense.attrs["blanket"]


def test_make_wide_binary_checks_arguments():
    with pytest.raises(ValueError, match="n_features"):
        make_wide_binary(100, 5)
    with pytest.raises(ValueError, match="density"):
        make_wide_binary(100, 50, density=0.9)


# ------------------------------------------------------------------ sparse and wide input
def _column_by_column(df):
    """The per-column encoding (a float column forces it), for comparison."""
    from mbstat.data import as_dataset

    return as_dataset(df.assign(__float=0.5)).subset(list(df.columns))


def test_sparse_and_wide_frames_encode_as_column_by_column():
    from scipy import sparse

    from mbstat.data import as_dataset

    df = make_wide_binary(120, 300, seed=5)
    df.iloc[:, 3] = 1  # a column without zeros, one without ones, one with other values
    df.iloc[:, 4] = 0
    df.iloc[:7, 5] = 9
    ref = _column_by_column(df)
    for data, names in ((df, None), (sparse.csc_matrix(df.to_numpy()), list(df.columns)),
                        (sparse.csr_array(df.to_numpy()), list(df.columns)),
                        (df.astype(pd.SparseDtype("uint8", 0)), None)):
        ds = as_dataset(data, names=names)
        assert np.array_equal(ds.codes, ref.codes)
        assert ds.levels == ref.levels and ds.names == ref.names
    flags = df.iloc[:, :6].astype(bool)
    assert as_dataset(flags).levels == _column_by_column(flags).levels
    default = as_dataset(sparse.csc_matrix(df.to_numpy()))
    assert default.names[:2] == ("V1", "V2")
    with pytest.raises(ValueError, match="names has 3 entries"):
        as_dataset(sparse.csc_matrix(df.to_numpy()), names=["a", "b", "c"])


def test_learners_on_sparse_input_match_dense():
    import mbstat
    from scipy import sparse

    from mbstat.data import as_dataset

    df = make_wide_binary(800, 400, seed=0)
    dense = mbstat.iamb(df, "y", alpha=0.001, test="g2")
    ds = as_dataset(sparse.csc_matrix(df.to_numpy()), names=list(df.columns))
    assert mbstat.iamb(ds, "y", alpha=0.001, test="g2").blanket == dense.blanket
    frame = make_wide_binary(800, 400, seed=0, sparse=True)
    assert mbstat.iamb(frame, "y", alpha=0.001, test="g2").blanket == dense.blanket


def test_sparse_floats_and_wide_codes_are_read_densely():
    """A scipy.sparse matrix of floats (scipy's default), or of codes past 255, is not
    block-encoded: it is read as its dense array would be (floats continuous, integers
    discrete), not refused with a message about a 0-D array."""
    from scipy import sparse

    rng = np.random.default_rng(0)
    floats = sparse.random(200, 4, density=0.3, random_state=0, format="csr")
    codes = sparse.csr_matrix(rng.integers(0, 300, (200, 3)))
    for m, kind in ((floats, "continuous"), (codes, "discrete")):
        ds, dense = mbstat.as_dataset(m), mbstat.as_dataset(m.toarray())
        assert ds.kinds == dense.kinds and set(ds.kinds) == {kind}
        np.testing.assert_array_equal(ds.to_frame().to_numpy(), dense.to_frame().to_numpy())
