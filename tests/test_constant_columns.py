"""A constant column under the permutation calibrations (issue 31, item 4).

A one-level x (or y) leaves nothing to test: df 0 and p = 1, as the asymptotic ``g2`` and
``x2`` answer. Before, the semiparametric and Monte Carlo tests were handed an empty
list of tests to calibrate and failed (``max() arg is an empty sequence``).
"""
import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat import ci_test, ci_test_batch

CALIBRATED = ["sp-g2", "sp-x2", "mc-g2", "mc-x2"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    return pd.DataFrame({"k": np.ones(100, int), "c": np.zeros(100, int),
                         "y": np.arange(100) % 2, "z": rng.integers(0, 3, 100),
                         "w": rng.integers(0, 2, 100)})


@pytest.mark.parametrize("test", CALIBRATED)
@pytest.mark.parametrize("z", [None, ["z"], ["z", "w"]])
def test_constant_x_or_y_gives_p_one(data, test, z):
    for x, y in [("k", "y"), ("y", "k"), ("k", "c")]:
        res = ci_test(data, x, y, z, test=test)
        assert (res.statistic, res.df, res.pvalue) == (0.0, 0.0, 1.0)
        reference = ci_test(data, x, y, z, test=test[3:])  # the asymptotic g2 / x2
        assert (reference.df, reference.pvalue) == (0.0, 1.0)


@pytest.mark.parametrize("test", CALIBRATED)
def test_batch_of_constant_columns_and_a_mixed_batch(data, test):
    every = ci_test_batch(data, ["k", "c"], "y", ["z"], test=test)
    assert list(every.pvalue) == [1.0, 1.0] and list(every.df) == [0.0, 0.0]
    mixed = ci_test_batch(data, ["k", "w", "c"], "y", ["z"], test=test)
    alone = ci_test(data, "w", "y", ["z"], test=test)
    assert mixed.pvalue[[0, 2]].tolist() == [1.0, 1.0]
    assert mixed.pvalue[1] == alone.pvalue  # the calibrated test beside them is unchanged


@pytest.mark.parametrize("test", CALIBRATED)
def test_declared_level_never_observed(data, test):
    """Two declared levels, one observed: the permuted statistics are all 0, df 0, p 1."""
    d = data.assign(k=pd.Categorical(["a"] * len(data), categories=["a", "b"]))
    res = ci_test(d, "k", "y", ["z"], test=test)
    assert res.statistic == 0.0 and res.pvalue == 1.0


@pytest.mark.parametrize("test", ["sp-g2", "mc-g2", "g2"])
def test_learners_leave_a_constant_column_out(data, test):
    d = data.assign(y2=data["y"] ^ (data["w"] * (np.arange(len(data)) % 5 == 0)))
    for learner in (mbstat.iamb, mbstat.inter_iamb):
        res = learner(d, "y2", test=test, candidates=["k", "c"])  # left alone in a step
        assert res.blanket == () and res.complete
        res = learner(d, "y2", test=test)
        assert "k" not in res.blanket and "c" not in res.blanket and "y" in res.blanket


def test_partitioned_constant_column(data):
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    parted = dd.from_pandas(data, npartitions=3)
    for test in CALIBRATED:
        res = ci_test(parted, "k", "y", ["z"], test=test)
        assert (res.df, res.pvalue) == (0.0, 1.0)
