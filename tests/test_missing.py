"""na="pairwise": test-wise deletion, each test on the rows complete for its own variables.

References are independent: the same test on the complete-case subset of the test's
columns, encoded on its own (pandas ``dropna``), and the level under MCAR nulls.
"""
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import mbstat
import mbstat.datasets
from mbstat import as_dataset, ci_test, ci_test_batch
from mbstat.ci.engine import CITester


def blank(df, share=0.1, seed=0):
    """``df`` with ``share`` of its cells missing completely at random."""
    rng = np.random.default_rng(seed)
    return df.mask(rng.random(df.shape) < share)


@pytest.fixture(scope="module")
def alarm():
    return mbstat.datasets.sample_network("alarm", 3000, seed=1)


@pytest.fixture(scope="module")
def holed(alarm):
    return blank(alarm)


QUERIES = [("HR", "CO", ["HRBP"]), ("HR", "CO", []), (["HR", "HRSAT"], "CO", ["HRBP", "CVP"]),
           ("PCWP", "LVEDVOLUME", ["HYPOVOLEMIA", "LVFAILURE", "CVP"])]


@pytest.mark.parametrize("test", ["g2", "x2", "g2-adf", "x2-adf", "sp-g2", "mc-x2"])
def test_each_test_equals_the_complete_case_subset(holed, test):
    ds = as_dataset(holed, na="pairwise")
    args = {"B": 200} if test.startswith("mc") else {}
    for x, y, z in QUERIES:
        cols = ([x] if isinstance(x, str) else x) + [y] + z
        ref = ci_test(holed[cols].dropna(), x, y, z, test=test, **args)
        got = ci_test(ds, x, y, z, test=test, na="pairwise", **args)
        assert got.n == ref.n < len(holed)
        np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-12)
        assert (got.df, got.calibration) == (ref.df, ref.calibration)
        np.testing.assert_allclose(got.pvalue, ref.pvalue, rtol=1e-10, atol=1e-300)
        assert got.mi == pytest.approx(ref.mi, rel=1e-12)
        # the DataFrame path gives the same answer
        again = ci_test(holed, x, y, z, test=test, na="pairwise", **args)  # columns reordered
        assert again.pvalue == pytest.approx(got.pvalue, rel=1e-12)


def test_a_batch_gives_each_candidate_its_own_rows(holed):
    xs = ["HR", "HRSAT", "CVP", ("PCWP", "HYPOVOLEMIA")]
    batch = ci_test_batch(holed, xs, "CO", ["HRBP"], test="g2", na="pairwise")
    assert len(set(batch.n.tolist())) == len(xs)
    for x, n, stat in zip(xs, batch.n, batch.statistic):
        cols = ([x] if isinstance(x, str) else list(x)) + ["CO", "HRBP"]
        ref = ci_test(holed[cols].dropna(), x, "CO", ["HRBP"], test="g2")
        assert (n, stat) == (ref.n, pytest.approx(ref.statistic, rel=1e-12))
    assert "n" in batch.to_frame().columns


def test_fisher_z_on_pairwise_complete_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 4))
    X[:, 1] += X[:, 0]
    X[:, 2] += X[:, 1]
    holed = blank(pd.DataFrame(X, columns=list("abcd")), seed=1)
    batch = ci_test_batch(holed, ["a", "d"], "c", ["b"], test="fisher_z", na="pairwise")
    for i, x in enumerate(["a", "d"]):
        ref = ci_test(holed[[x, "c", "b"]].dropna(), x, "c", ["b"], test="fisher_z")
        assert batch.n[i] == ref.n
        np.testing.assert_allclose(batch.statistic[i], ref.statistic, rtol=1e-10)
        np.testing.assert_allclose(batch.pvalue[i], ref.pvalue, rtol=1e-9)


def test_fisher_z_batch_mixes_complete_and_holed_candidates():
    """Candidates complete on the rows of y and z share one batched residualization, the
    others get their own rows; each against a hand computation (residuals of x and y on
    [1, z] by least squares over the dropna'd rows, Fisher's z)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 6))
    X[:, 1] += X[:, 0]
    X[:, 3] += 0.3 * X[:, 1]
    frame = pd.DataFrame(X, columns=list("abcdef"))
    for col in "ce":  # b, d, f complete (they share the rows of a and c), e holed
        frame.loc[rng.random(600) < 0.1, col] = np.nan
    frame.loc[rng.random(600) < 0.1, "a"] = np.nan
    z = ["c"]
    batch = ci_test_batch(frame, ["b", "d", "e", "f"], "a", z, test="fisher_z",
                          na="pairwise")
    for i, x in enumerate(["b", "d", "e", "f"]):
        sub = frame[[x, "a", *z]].dropna()
        design = np.c_[np.ones(len(sub)), sub[z]]
        res = sub[[x, "a"]].to_numpy()
        res = res - design @ np.linalg.lstsq(design, res, rcond=None)[0]
        r = np.corrcoef(res.T)[0, 1]
        assert batch.n[i] == len(sub)
        np.testing.assert_allclose(batch.statistic[i],
                                   np.sqrt(len(sub) - len(z) - 3) * np.arctanh(r), rtol=1e-9)


def test_level_under_mcar_nulls():
    """200 independent candidates, y, z: 10% of cells missing completely at random; the
    share of rejections at 0.05 stays inside a 95% Wilson interval around 0.05."""
    rng = np.random.default_rng(7)
    n, k = 400, 300
    data = pd.DataFrame(rng.integers(0, 3, (n, k + 2)),
                        columns=[f"x{i}" for i in range(k)] + ["y", "z"]).astype("category")
    holed = blank(data, seed=8)
    batch = ci_test_batch(holed, [f"x{i}" for i in range(k)], "y", ["z"], test="g2",
                          na="pairwise")
    assert batch.n.min() < batch.n.max() < n
    hits = int((batch.pvalue <= 0.05).sum())
    lo, hi = proportion_confint(hits, k, alpha=0.01, method="wilson")
    assert lo <= 0.05 <= hi, hits
    # fisher_z: Gaussian candidates independent of y given z (z drives y)
    values = rng.normal(size=(n, k + 2))
    values[:, k] += values[:, k + 1]
    gauss = blank(pd.DataFrame(values, columns=data.columns), seed=9)
    batch = ci_test_batch(gauss, [f"x{i}" for i in range(k)], "y", ["z"], test="fisher_z",
                          na="pairwise")
    hits = int((batch.pvalue <= 0.05).sum())
    lo, hi = proportion_confint(hits, k, alpha=0.01, method="wilson")
    assert lo <= 0.05 <= hi and batch.n.min() < batch.n.max() < n, hits


def test_data_without_missing_values_is_unchanged(alarm):
    for x, y, z in QUERIES:
        plain = ci_test(alarm, x, y, z, test="g2")
        pair = ci_test(alarm, x, y, z, test="g2", na="pairwise")
        assert (pair.statistic, pair.pvalue, pair.n) == (plain.statistic, plain.pvalue, plain.n)


def test_learners_with_the_oracle_are_unaffected(holed):
    net = mbstat.datasets.load_network("alarm")
    truth = net.markov_blankets()
    for name in ("iamb", "gs_m", "mbor"):
        for target in ("HR", "CO", "PCWP"):
            res = getattr(mbstat, name)(holed, target, test="oracle", dag=net, na="pairwise")
            assert set(res.selected) == truth[target], (name, target)


def test_learners_honour_pairwise_and_log_each_tests_rows(holed):
    """Every CI learner of the learner table: its tests log says each test's rows."""
    from mbstat.algorithms import LEARNERS

    names = [name for name, row in LEARNERS.items() if row.kind == "ci"]
    assert len(names) >= 10
    for name in names:
        res = LEARNERS[name].function(holed, "HR", na="pairwise", test="g2")
        log = res.tests
        assert log["n"].nunique() > 1 and log["n"].max() < len(holed), name
        if name in ("iamb", "gs_m", "mbor"):
            assert {"HRBP", "CO"} <= set(res.selected), name  # strong members still found


def test_model_based_and_ranking_methods_refuse(holed):
    small = holed.iloc[:300, :8]
    for call in (lambda: mbstat.fsdms(small, "HR", na="pairwise"),
                 lambda: mbstat.dependency(small, ["CVP"], "HR", na="pairwise"),
                 lambda: mbstat.ppfs(small, "HR", na="pairwise")):
        with pytest.raises(ValueError, match="cannot honour na='pairwise'"):
            call()
    # an encoded Dataset keeps its missing cells: refused there too
    with pytest.raises(ValueError, match="cannot honour na='pairwise'"):
        mbstat.fsdms(as_dataset(small, na="pairwise"), "HR")
    with pytest.raises(ValueError, match="test 'ppi' cannot honour na='pairwise'"):
        CITester(small, "ppi", na="pairwise")


def test_encoding_keeps_missing_cells(holed):
    ds = as_dataset(holed, na="pairwise")
    assert ds.missing.shape == holed.shape and ds.missing.sum() == holed.isna().sum().sum()
    assert ds.codes[ds.missing].max() == 0  # a filler, never read by the tests
    pd.testing.assert_frame_equal(ds.to_frame().isna(), holed.isna())
    assert "missing cells kept" in repr(ds)
    assert as_dataset(ds, na="drop").n_rows == len(holed.dropna())
    with pytest.raises(ValueError, match="na='pairwise' for test-wise deletion"):
        as_dataset(holed)
    assert ds.subset(["HR", "CO"]).missing.shape == (len(holed), 2)


def test_pairwise_refusal_says_auto_chose_the_test_and_names_the_continuous_column():
    # integers with a NaN are floats to pandas, so continuous: test="auto" picks mi-cg, which
    # cannot delete test-wise; the error says that the choice was auto's and names the column
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"T": pd.Categorical(rng.integers(0, 2, 200)),
                       "a": pd.Categorical(rng.integers(0, 2, 200)),
                       "b": rng.integers(0, 3, 200).astype(float)})
    df.loc[3, "b"] = np.nan
    with pytest.raises(ValueError, match=r"test=\"auto\" chose 'mi-cg'.*continuous: b\)"):
        mbstat.iamb(df, "T", na="pairwise")
