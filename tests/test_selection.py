"""The level of entry of the searches (selection="bonferroni"): the whole search's level."""
import functools
import warnings
import math

import numpy as np
import pandas as pd
import pytest

import mbstat

LEARNERS = ["iamb", "inter_iamb", "fast_iamb", "gs_m", "mbor", "fbed", "mmpc", "mmmb",
            "hiton_pc", "hiton_mb", "si_hiton_pc", "rgs"]


def _null(seed, rows=300, p=30):
    rng = np.random.default_rng(seed)
    cols = [f"X{j}" for j in range(p)] + ["T"]
    return mbstat.as_dataset(pd.DataFrame(rng.integers(0, 2, (rows, p + 1)), columns=cols)
                             .astype("category"))


@pytest.fixture(scope="module")
def nulls():
    return [_null(seed) for seed in range(12)]


@pytest.mark.parametrize("learner", LEARNERS)
def test_global_null_keeps_out_what_the_papers_rule_lets_in(nulls, learner):
    """12 null data sets, 30 independent candidates: the default admits at most 2 false
    members in all (expected about 12 x 0.05 = 0.6); the papers' rule (selection="none")
    at least 6 (its P(any) is 0.7-1.0 per data set)."""
    func = mbstat.METHODS[learner]
    if learner == "rgs":
        func = functools.partial(func, seed=0)
    default = sum(len(func(d, "T", calibration="asymptotic").blanket) for d in nulls)
    paper = sum(len(func(d, "T", calibration="asymptotic", selection="none").blanket)
                for d in nulls)
    assert default <= 2
    assert paper >= 6


def test_entry_level_is_alpha_over_m_and_the_evidence_says_so():
    """A candidate dependent at alpha but not at alpha / m stays out; its evidence carries
    the margin log(alpha / m) - log p < 0, and the summary explains the criterion."""
    rng = np.random.default_rng(3)
    n = 400
    t = rng.integers(0, 2, n)
    weak = np.where(rng.random(n) < 0.56, t, 1 - t)  # dependent, but weakly
    frame = pd.DataFrame({"T": t, "W": weak,
                          **{f"N{j}": rng.integers(0, 2, n) for j in range(19)}})
    plain = mbstat.iamb(frame, "T", calibration="asymptotic", selection="none")
    p = plain.evidence.loc["W", "pvalue"]
    assert 0.05 / 20 < p < 0.05 and "W" in plain.blanket
    res = mbstat.iamb(frame, "T", calibration="asymptotic")
    assert "W" not in res.blanket
    row = res.evidence.loc["W"]
    assert row["pvalue"] == pytest.approx(p)
    assert row["criterion"] == pytest.approx(math.log(0.05 / 20) - math.log(p))
    assert "Criterion (entry)" in str(res.summary())


@pytest.mark.parametrize("learner", ["iamb", "fbed", "mmmb", "fast_iamb", "rgs"])
def test_selection_is_checked(learner):
    with pytest.raises(ValueError, match="selection"):
        mbstat.METHODS[learner](_null(0, 50, 3), "T", selection="holm")


def test_a_test_whose_least_p_value_is_above_the_entry_level_is_said():
    """A Monte Carlo test of B permutations cannot give p < 1 / (B + 1): where that is above
    alpha / m, the first steps can admit nothing; the search warns, its result says so and
    how many permutations would serve (floor(m / alpha)), and enough of them are quiet."""
    rng = np.random.default_rng(5)
    t = rng.integers(0, 2, 300)
    frame = pd.DataFrame({"T": t, "A": t, **{f"N{j}": rng.integers(0, 2, 300)
                                               for j in range(9)}})
    with pytest.warns(UserWarning, match=r"below 0\.0196.*0\.05 / 10.*B >= 200") as caught:
        res = mbstat.iamb(frame, "T", test="mc-g2", B=50)
    assert len(caught) == 1 and res.blanket == ()
    assert "B >= 200" in str(res.summary())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mbstat.iamb(frame, "T", test="mc-g2", B=200).blanket == ("A",)
        assert mbstat.iamb(frame, "T", test="mc-g2", B=50, selection="none").blanket == ("A",)


def test_the_crt_early_stop_serves_the_first_entry_level():
    """The CRT's early stop gives clear members p = alpha / 2, above alpha / m: the search
    moves it to alpha / m (a note, no warning) and admits; the caller's test is untouched."""
    from mbstat.ci.models.crt import CRTTest

    rng = np.random.default_rng(7)
    t = rng.integers(0, 2, 150)
    frame = pd.DataFrame({"T": t, "A": np.where(rng.random(150) < 0.9, t, 1 - t),
                          **{f"N{j}": rng.integers(0, 2, 150) for j in range(5)}})
    mine = CRTTest(model="tree", B=200, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = mbstat.iamb(frame, "T", test=mine, progress=False)
    assert "A" in res.blanket and mine.alpha is None
    assert "serves 0.00833" in str(res.summary())
    assert CRTTest(B=200).least_pvalue(0.05) == pytest.approx(0.025)
