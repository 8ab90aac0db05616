"""The dependency measure of Liu et al. (Definitions 7 and 9)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mbstat.backend import gpu_available
from mbstat.dependency import dependency, make_engine, prepare_dependency

# ---------------------------------------------------------------------------
# References written straight from the definitions (slow, obviously right)
# ---------------------------------------------------------------------------


def ref_discrete(df, feats, target):
    """Definition 7: share of samples whose value combination has one class."""
    if not feats:
        return 0.0
    pure = df.groupby(list(feats))[target].transform("nunique") == 1
    return float(pure.mean())


def ref_neighbour(df, feats, target, theta):
    """Definition 9 with the overlap metric for discrete columns, by full distance matrix."""
    n = len(df)
    if not feats:
        return 0.0
    sq = np.zeros((n, n))
    for f in feats:
        v = df[f].to_numpy()
        if pd.api.types.is_float_dtype(df[f]):
            lo, hi = v.min(), v.max()
            v = (v - lo) / (hi - lo) if hi > lo else np.zeros(n)
            sq += (v[:, None] - v[None, :]) ** 2
        else:
            sq += v[:, None] != v[None, :]
    y = df[target].to_numpy()
    near = sq <= theta ** 2
    ok = [(y[near[i]] == y[i]).all() for i in range(n)]
    return float(np.mean(ok))


def random_discrete(rng, n, d, k=3, n_classes=2):
    cards = rng.integers(2, k + 1, size=d)
    cols = {f"X{j}": rng.integers(0, c, size=n) for j, c in enumerate(cards)}
    x = np.column_stack(list(cols.values()))
    y = (x[:, : max(1, d // 2)].sum(axis=1) + rng.integers(0, 2, size=n)) % n_classes
    if len(np.unique(y)) < 2:
        y[0], y[1] = 0, 1
    cols["y"] = y
    return pd.DataFrame(cols)


def random_mixed(rng, n, d_cont, d_disc, n_classes=3):
    cols = {f"C{j}": rng.normal(size=n) * (j + 1) + j for j in range(d_cont)}
    cols.update({f"D{j}": rng.integers(0, 3, size=n) for j in range(d_disc)})
    base = sum(cols.values())
    y = (np.digitize(base, np.quantile(base, np.linspace(0, 1, n_classes + 1)[1:-1]))
         + (rng.random(n) < 0.1)) % n_classes
    cols["y"] = y
    return pd.DataFrame(cols)


# ---------------------------------------------------------------------------
# Hand-computed tables
# ---------------------------------------------------------------------------

def dep(df, feats, target, **kwargs):
    """``dependency``, with D(empty) = 0 (Theorem 2) for the property tests' random sets."""
    return dependency(df, feats, target, **kwargs) if feats else 0.0


TOY = pd.DataFrame({
    "a": [0, 0, 0, 1, 1, 1, 1, 2],
    "b": [0, 1, 1, 0, 0, 1, 1, 0],
    "y": [0, 0, 0, 1, 0, 1, 1, 1],
})


def test_definition7_by_hand():
    # a: cell a=0 is pure (3 samples), a=1 mixed (4), a=2 pure (1) -> 4/8
    assert dependency(TOY, ["a"], "y") == 0.5
    # b: b=0 -> y {0,1,0,1} mixed, b=1 -> y {0,0,1,1} mixed -> 0
    assert dependency(TOY, "b", "y") == 0.0
    # (a, b): (1,0) holds y {1, 0}: the only impure cell, 2 samples -> 6/8
    assert dependency(TOY, ["a", "b"], "y") == 0.75
    assert dependency(TOY, ["b", "a"], "y") == 0.75
    assert dependency(TOY, [0, 1], 2) == 0.75  # positions work


@pytest.mark.parametrize("features", [[], (), None])
def test_empty_feature_set_is_refused(features):
    # D(empty) = 0 by definition, but asking for it is a mistake (fsdms refuses it too)
    with pytest.raises(ValueError, match="features must name at least one variable"):
        dependency(TOY, features, "y")


def test_definition9_by_hand():
    df = pd.DataFrame({"x": [0.0, 0.1, 0.5, 1.0], "y": [0, 1, 1, 1]})
    # theta 0.2: samples 0 and 1 see each other (different classes); 2 and 3 are alone
    assert dependency(df, ["x"], "y", theta=0.2) == 0.5
    # theta 0.45: sample 2 now sees sample 1 (same class) -> still 0.5
    assert dependency(df, ["x"], "y", theta=0.45) == 0.5
    # theta 0.5: sample 2 sees sample 0 at distance exactly 0.5 (<= theta) -> 0.25
    assert dependency(df, ["x"], "y", theta=0.5) == 0.25
    # columns are min-max normalised: an affine change of units changes nothing
    df2 = df.assign(x=df["x"] * 37.0 - 5.0)
    assert dependency(df2, ["x"], "y", theta=0.5) == 0.25


def test_definition9_two_dimensions_and_mixed():
    df = pd.DataFrame({
        "u": [0.0, 1.0, 0.0, 1.0, 0.5],
        "v": [0.0, 0.0, 1.0, 1.0, 0.55],
        "g": [0, 1, 1, 1, 0],
        "y": [0, 0, 1, 1, 0],
    })
    # centre s4 is sqrt(.25 + .2025) = .673 from the top corners (class 1) and
    # sqrt(.25 + .3025) = .743 from the bottom ones (class 0); corners are >= 1 apart
    assert dependency(df, ["u", "v"], "y", theta=0.6) == 1.0
    assert dependency(df, ["u", "v"], "y", theta=0.7) == 0.4  # s2, s3, s4 fail
    assert dependency(df, ["u", "v"], "y", theta=0.75) == 0.4  # s4 now sees s0, s1 too
    # g differs between s4 and the top corners: a discrete mismatch adds 1 -> all pure
    assert dependency(df, ["u", "v", "g"], "y", theta=0.7) == 1.0
    # on g alone: g = 0 {s0, s4} pure, g = 1 {s1, s2, s3} mixed, by equality (theta < 1)
    assert dependency(df, ["g"], "y", theta=0.5) == 0.4
    assert dependency(df, ["g"], "y") == 0.4


def test_discrete_under_definition9_equals_definition7():
    rng = np.random.default_rng(3)
    df = random_discrete(rng, 80, 4)
    feats = ["X0", "X2", "X3"]
    assert dependency(df, feats, "y", theta=0.9) == dependency(df, feats, "y")


# ---------------------------------------------------------------------------
# Against the references, and Theorem 2 (monotonicity) as properties
# ---------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 40), d=st.integers(1, 5),
       n_classes=st.integers(2, 3))
def test_discrete_matches_reference_and_is_monotone(seed, n, d, n_classes):
    rng = np.random.default_rng(seed)
    df = random_discrete(rng, n, d, n_classes=n_classes)
    feats = [f"X{j}" for j in range(d)]
    q = [f for f in feats if rng.random() < 0.7]
    m = [f for f in q if rng.random() < 0.5]
    dq, dm = dep(df, q, "y"), dep(df, m, "y")
    assert dq == ref_discrete(df, q, "y")
    assert dm == ref_discrete(df, m, "y")
    assert dm <= dq  # Theorem 2


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 40), d_cont=st.integers(0, 3),
       d_disc=st.integers(0, 2), theta=st.floats(0.05, 1.2))
def test_neighbour_matches_reference_and_is_monotone(seed, n, d_cont, d_disc, theta):
    rng = np.random.default_rng(seed)
    df = random_mixed(rng, n, d_cont, d_disc)
    if df["y"].nunique() < 2:
        return
    feats = [c for c in df.columns if c != "y"]
    q = [f for f in feats if rng.random() < 0.8]
    m = [f for f in q if rng.random() < 0.5]
    dq, dm = dep(df, q, "y", theta=theta), dep(df, m, "y", theta=theta)
    assert dq == pytest.approx(ref_neighbour(df, q, "y", theta), abs=1e-12)
    assert dm == pytest.approx(ref_neighbour(df, m, "y", theta), abs=1e-12)
    assert dm <= dq  # Theorem 2


@pytest.mark.parametrize("theta", [None, 0.3])
def test_incremental_updates_match_direct(theta):
    """Batched add/remove from states equal fresh evaluations of each set."""
    rng = np.random.default_rng(5)
    df = random_discrete(rng, 60, 6, k=3, n_classes=3) if theta is None else \
        random_mixed(rng, 60, 4, 2)
    ds, t, cols = prepare_dependency(df, "y", None, theta=theta, discretize=None, na="raise")
    eng = make_engine(ds, t, cols, theta, "cpu")
    names = [ds.names[j] for j in cols]
    p = eng.state([0, 2])
    r = eng.remove(eng.remove(eng.full(), 1), 4)
    added = eng.count_add(p, [1, 3, 4, 5]) / eng.n
    removed = eng.count_remove(r, [0, 2, 3, 5]) / eng.n
    for a, v in zip([1, 3, 4, 5], added):
        assert v == dependency(df, [names[0], names[2], names[a]], "y", theta=theta)
    rest = [0, 2, 3, 5]
    for a, v in zip(rest, removed):
        assert v == dependency(df, [names[j] for j in rest if j != a], "y", theta=theta)


def test_kernel_and_array_paths_agree():
    """The compiled CPU kernel and the array path (used on GPUs) give the same counts."""
    rng = np.random.default_rng(11)
    df = random_mixed(rng, 90, 5, 2)
    ds, t, cols = prepare_dependency(df, "y", None, theta=0.25, discretize=None, na="raise")
    eng = make_engine(ds, t, cols, 0.25, "cpu")
    st_p = eng.state([1, 5])
    st_r = eng.remove(eng.full(), 3)
    cands_p, cands_r = [0, 2, 3, 4, 6], [0, 1, 2, 4, 5, 6]
    eng.kernel = True
    kp, kr = eng.count_add(st_p, cands_p), eng.count_remove(st_r, cands_r)
    eng.kernel = False
    ap, ar = eng.count_add(st_p, cands_p), eng.count_remove(st_r, cands_r)
    np.testing.assert_array_equal(kp, ap)
    np.testing.assert_array_equal(kr, ar)
    assert kp.max() > 0 and kr.max() > 0  # a non-trivial comparison


@pytest.mark.parametrize("kernel", [True, False])
def test_boundary_distance_counts_as_neighbour(kernel):
    """Distance exactly theta is inside the neighbourhood, on both CPU paths."""
    rng = np.random.default_rng(4)
    grid = np.array([0.0, 0.25, 0.5, 0.75, 1.0])  # exact in binary: distances are exact
    df = pd.DataFrame({"u": grid[rng.integers(0, 5, 40)], "v": grid[rng.integers(0, 5, 40)],
                       "g": rng.integers(0, 2, 40)})
    df.loc[0, "u"], df.loc[1, "u"] = 0.0, 1.0  # full range on both columns
    df.loc[0, "v"], df.loc[1, "v"] = 0.0, 1.0
    df["y"] = (df["u"] > 0.5).astype(int) ^ (rng.random(40) < 0.1)
    ds, t, cols = prepare_dependency(df, "y", None, theta=0.25, discretize=None, na="raise")
    eng = make_engine(ds, t, cols, 0.25, "cpu")
    eng.kernel = kernel
    added = eng.count_add(eng.state([0]), [1, 2]) / eng.n
    removed = eng.count_remove(eng.full(), [0, 1, 2]) / eng.n
    names = ["u", "v", "g"]
    assert list(added) == [ref_neighbour(df, ["u", n], "y", 0.25) for n in ("v", "g")]
    assert list(removed) == [ref_neighbour(df, [m for m in names if m != n], "y", 0.25)
                             for n in names]
    # with "<" instead of "<=" the answers would differ: the test can fail
    assert ref_neighbour(df, ["u", "v"], "y", 0.25 - 1e-9) != added[0]
    assert ref_neighbour(df, ["u", "v"], "y", 0.25 - 1e-9) != removed[2]


# ---------------------------------------------------------------------------
# Bad input and data hygiene
# ---------------------------------------------------------------------------


def test_bad_input():
    df = pd.DataFrame({"x": [0.1, 0.5, 0.9, 0.3], "k": [0, 1, 0, 1], "y": [0, 1, 1, 0]})
    with pytest.raises(ValueError, match="theta=0.14"):
        dependency(df, ["x"], "y")  # numerical data without theta: says what to pass
    for bad in (0, -0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="theta"):
            dependency(df, ["x"], "y", theta=bad)
    with pytest.raises(TypeError, match="theta"):
        dependency(df, ["x"], "y", theta="0.1")
    with pytest.raises(ValueError, match="single class"):
        dependency(df.assign(y=1), ["k"], "y")
    with pytest.raises(ValueError, match="continuous"):
        dependency(df, ["k"], "x")
    with pytest.raises(ValueError, match="target"):
        dependency(df, ["k", "y"], "y")
    with pytest.raises(ValueError, match="unknown variable"):
        dependency(df, ["nope"], "y")
    # discretize bins the continuous column, then Definition 7 applies
    assert 0.0 <= dependency(df, ["x"], "y", discretize=2) <= 1.0


def test_does_not_modify_data():
    rng = np.random.default_rng(0)
    df = random_mixed(rng, 30, 2, 1)
    before = df.copy()
    dependency(df, ["C0", "D0"], "y", theta=0.2)
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("theta", [None, 0.2])
def test_gpu_matches_cpu(theta):
    rng = np.random.default_rng(2)
    df = random_discrete(rng, 200, 5) if theta is None else random_mixed(rng, 200, 4, 1)
    feats = [c for c in df.columns if c != "y"]
    assert dependency(df, feats[:3], "y", theta=theta, backend="gpu") == \
        dependency(df, feats[:3], "y", theta=theta, backend="cpu")
