"""Tests of mbstat.datasets: shipped networks, synthetic generators, real data."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mbstat.bn import BayesianNetwork
from mbstat.datasets import (
    DATA_DIR,
    NETWORK_DIR,
    list_networks,
    load_diabetes,
    load_network,
    load_wdbc,
    load_wine,
    make_corral,
    make_parity,
    sample_network,
)

SHIPPED = ("alarm", "asia", "barley", "cancer", "earthquake", "hailfinder", "insurance", "survey")


# ---------------------------------------------------------------------------
# networks
# ---------------------------------------------------------------------------


def test_networks_are_inside_the_package():
    import mbstat

    package = Path(mbstat.__file__).resolve().parent
    assert DATA_DIR == package / "data"
    assert NETWORK_DIR == package / "data" / "networks"
    for name in SHIPPED:
        assert (NETWORK_DIR / f"{name}.bif.gz").is_file()
    assert (package.parent / "data" / "README.md").is_file()


def test_list_networks():
    assert list_networks() == SHIPPED


def test_load_network_by_name_and_path():
    asia = load_network("asia")
    assert isinstance(asia, BayesianNetwork)
    assert repr(asia) == "<BayesianNetwork asia: 8 nodes, 8 arcs>"
    assert load_network("asia") is asia  # cached
    assert load_network("ASIA") is asia
    path = NETWORK_DIR / "asia.bif.gz"
    assert load_network(path) == asia
    assert load_network(str(path)) == asia


def test_load_network_unknown_name():
    with pytest.raises(ValueError, match="alarm, asia, barley.*got 'nope'"):
        load_network("nope")
    with pytest.raises(TypeError, match="name must be"):
        load_network(3)


def test_sample_network():
    df = sample_network("cancer", 300, seed=1)
    assert df.shape == (300, 5)
    assert list(df.columns) == list(load_network("cancer").nodes)
    pd.testing.assert_frame_equal(df, sample_network("cancer", 300, seed=1))
    pd.testing.assert_frame_equal(df, load_network("cancer").sample(300, seed=1))
    pd.testing.assert_frame_equal(df, sample_network(load_network("cancer"), 300, seed=1))


# ---------------------------------------------------------------------------
# make_parity
# ---------------------------------------------------------------------------


def test_parity_shape_and_types():
    df = make_parity(10, 500, seed=0)
    assert df.shape == (500, 10)
    assert list(df.columns) == [f"X{i}" for i in range(1, 11)]
    assert (df.dtypes == np.int64).all()
    assert set(np.unique(df.to_numpy())) <= {0, 1}
    pd.testing.assert_frame_equal(df, make_parity(10, 500, seed=0))
    assert not df.equals(make_parity(10, 500, seed=1))
    assert make_parity(4, 7, seed=0).shape == (7, 4)


def test_parity_noise_free_is_exact_xor():
    df = make_parity(6, 2000, noise=0.0, seed=3)
    xor = df["X2"] ^ df["X3"] ^ df["X4"]
    assert (df["X1"] == xor).all()


def test_parity_noise_rate_and_bit_probability():
    n = 40_000
    df = make_parity(8, n, noise=0.2, bit_p=0.6, seed=4)
    flipped = (df["X1"] != (df["X2"] ^ df["X3"] ^ df["X4"])).mean()
    assert abs(flipped - 0.2) < 5 * np.sqrt(0.2 * 0.8 / n)
    for col in ("X2", "X3", "X4"):
        assert abs(df[col].mean() - 0.6) < 5 * np.sqrt(0.24 / n)
    fixed = make_parity(8, n, distractor_p=0.3, seed=4)
    assert np.all(np.abs(fixed.iloc[:, 4:].mean() - 0.3) < 5 * np.sqrt(0.21 / n))


def test_parity_only_jointly_dependent():
    """bit_p = 0.5, no noise: X1 is a function of {X2, X3, X4} jointly but is
    independent of every proper subset of them."""
    n = 40_000
    df = make_parity(6, n, noise=0.0, bit_p=0.5, seed=5)
    x1 = df["X1"].to_numpy()
    tol = 5 * np.sqrt(0.25 / (n / 4))  # conditional means over >= n/4 rows
    for k in (1, 2):
        for subset in itertools.combinations(["X2", "X3", "X4"], k):
            means = df.groupby(list(subset))["X1"].mean()
            assert np.all(np.abs(means - 0.5) < tol), subset
    joint = df.groupby(["X2", "X3", "X4"])["X1"].agg(["min", "max"])
    assert (joint["min"] == joint["max"]).all()  # deterministic given all three
    assert abs(x1.mean() - 0.5) < 5 * np.sqrt(0.25 / n)


def test_parity_validation():
    with pytest.raises(ValueError, match="n_vars must be >= 4"):
        make_parity(3, 10)
    with pytest.raises(ValueError, match="noise must be in"):
        make_parity(5, 10, noise=1.5)
    with pytest.raises(ValueError, match="bit_p must be in"):
        make_parity(5, 10, bit_p=-0.1)
    with pytest.raises(ValueError, match="distractor_p must be a number or have one entry"):
        make_parity(6, 10, distractor_p=[0.5])
    with pytest.raises(ValueError, match="distractor_p must lie in"):
        make_parity(6, 10, distractor_p=[0.5, 2.0])


# ---------------------------------------------------------------------------
# make_corral
# ---------------------------------------------------------------------------


def check_corral_core(df, n):
    a0, a1, b0, b1, y = (df[c].to_numpy() for c in ("A0", "A1", "B0", "B1", "class"))
    assert np.array_equal(y, (a0 & a1) | (b0 & b1))  # the target rule on every row
    combos = df.groupby(["A0", "A1", "B0", "B1"]).size()
    assert len(combos) == 16 and (combos == n // 16).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_corral(seed):
    df = make_corral("corral", seed=seed)
    assert list(df.columns) == ["A0", "A1", "B0", "B1", "I", "R", "class"]
    assert df.shape == (1024, 7)
    assert (df.dtypes == np.int64).all()
    check_corral_core(df, 1024)
    assert (df["R"] == df["class"]).mean() == 0.75
    assert abs(df["I"].mean() - 0.5) < 5 * np.sqrt(0.25 / 1024)
    assert df["class"].mean() == 7 / 16


@pytest.mark.parametrize("kind, n_features", [("corral46", 46), ("corral47", 47)])
def test_corral_extended(kind, n_features):
    df = make_corral(kind, seed=0)
    assert df.shape == (1024, n_features + 1)
    assert df.columns[-1] == "class"
    check_corral_core(df, 1024)
    assert ("R" in df) == (kind == "corral47")
    if kind == "corral47":
        assert (df["R"] == df["class"]).mean() == 0.75
    irrelevant = ["I1", "I2"] + [f"I{i}_{k}" for i in (1, 2) for k in range(1, 7)]
    redundant = [f"{b}_{k}" for b in ("A0", "A1", "B0", "B1") for k in range(7)]
    assert len(irrelevant) == 14 and len(redundant) == 28
    assert set(df.columns) == {"A0", "A1", "B0", "B1", "class"} | set(irrelevant) | set(
        redundant) | ({"R"} if kind == "corral47" else set())
    for i in (1, 2):
        for k in range(1, 7):
            assert (df[f"I{i}_{k}"] == df[f"I{i}"]).all()
    for b in ("A0", "A1", "B0", "B1"):
        for k in range(7):
            assert (df[f"{b}_{k}"] != df[b]).mean() == k / 16


def test_corral_determinism_and_validation():
    pd.testing.assert_frame_equal(make_corral("corral47", seed=9), make_corral("corral47", seed=9))
    assert not make_corral(seed=1).equals(make_corral(seed=2))
    small = make_corral("corral", seed=0, n_samples=64)
    check_corral_core(small, 64)
    assert (small["R"] == small["class"]).mean() == 0.75
    with pytest.raises(ValueError, match="kind must be one of"):
        make_corral("corral48")
    with pytest.raises(ValueError, match="n_samples must be a positive multiple of 16"):
        make_corral(n_samples=100)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), reps=st.integers(1, 8),
       kind=st.sampled_from(["corral", "corral46", "corral47"]))
def test_corral_invariants_any_seed(seed, reps, kind):
    n = 16 * reps
    df = make_corral(kind, seed=seed, n_samples=n)
    check_corral_core(df, n)
    if "R" in df:
        assert (df["R"] != df["class"]).sum() == n // 4


# ---------------------------------------------------------------------------
# real data sets
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "loader, shape, target, n_classes",
    [(load_wine, (178, 14), "class", 3), (load_wdbc, (569, 31), "class", 2),
     (load_diabetes, (442, 11), "target", None)],
)
def test_real_data(loader, shape, target, n_classes):
    pytest.importorskip("sklearn")
    df = loader()
    assert isinstance(df, pd.DataFrame)
    assert df.shape == shape
    assert df.columns[-1] == target
    assert all(isinstance(c, str) for c in df.columns)
    assert not df.isna().any().any()
    assert (df.dtypes.iloc[:-1] == np.float64).all()
    if n_classes is not None:
        assert df[target].dtype == np.int64
        assert sorted(df[target].unique()) == list(range(n_classes))
    else:
        assert df[target].dtype == np.float64


def test_diabetes_scaling():
    pytest.importorskip("sklearn")
    raw = load_diabetes(scaled=False)
    scaled = load_diabetes()
    assert raw["age"].min() >= 18 and abs(scaled["age"].mean()) < 1e-10
    pd.testing.assert_series_equal(raw["target"], scaled["target"])
    with pytest.raises(TypeError, match="scaled must be a bool"):
        load_diabetes(scaled="yes")
