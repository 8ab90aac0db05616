"""The public surface as a whole: every learner leaves the caller's data alone and is
reproducible, and every name in the API is importable."""
import pandas as pd
import pytest

import mbstat
from mbstat.datasets import load_network, load_wine, make_corral

ARGS = {
    "iamb": {}, "inter_iamb": {}, "iamb_ip": {"prior": {"lung": 1}}, "mbor": {},
    "gs_m": {"m": 2}, "rgs": {"m": 2, "k": 50, "seed": 3}, "ses": {}, "tie": {},
}


@pytest.fixture(scope="module")
def asia():
    return load_network("asia").sample(3000, seed=5)


@pytest.mark.parametrize("method", sorted(ARGS))
def test_ci_learners_leave_data_unchanged_and_repeat(asia, method):
    before = asia.copy(deep=True)
    first = mbstat.METHODS[method](asia, "either", **ARGS[method])
    again = mbstat.METHODS[method](asia, "either", **ARGS[method])
    pd.testing.assert_frame_equal(asia, before)
    assert first.selected == again.selected
    assert first.pvalues.equals(again.pvalues)


def test_ppfs_and_fsdms_leave_data_unchanged_and_repeat():
    wine = load_wine().iloc[:, [0, 6, 9, 12, 13]]
    before = wine.copy(deep=True)
    a = mbstat.ppfs(wine, "class", model="tree", test="ppi", B=5, K=0, seed=1)
    b = mbstat.ppfs(wine, "class", model="tree", test="ppi", B=5, K=0, seed=1)
    pd.testing.assert_frame_equal(wine, before)
    assert a.selected == b.selected
    corral = make_corral("corral", seed=0)
    before = corral.copy(deep=True)
    assert mbstat.fsdms(corral, "class").selected == mbstat.fsdms(corral, "class").selected
    pd.testing.assert_frame_equal(corral, before)


def test_public_names_exist():
    for name in mbstat.__all__:
        assert hasattr(mbstat, name), name
    assert set(mbstat.METHODS) == {"iamb", "inter_iamb", "iamb_ip", "mbor", "mb_to_pc", "gs_m",
                                   "rgs", "iamb_fdr", "fast_iamb", "fbed", "mmpc", "mmmb", "hiton_pc",
                                   "hiton_mb", "si_hiton_pc", "ppfs", "fsdms", "wfsdms",
                                   "ses", "tie"}
    assert set(mbstat.LEARNERS) == set(mbstat.METHODS)
    table = mbstat.learners_table()
    assert table.index.name == "learner" and list(table.index) == list(mbstat.LEARNERS)
    assert table.loc["gs_m", "kind"] == "CI-test learner"
    assert "m, k, seed, time_budget" in table.loc["rgs", "arguments"]
    assert table.loc["ppfs", "kind"] == "model-based" and table.loc["fsdms", "kind"] == "ranking"


@pytest.mark.parametrize("method", sorted(ARGS))
def test_unknown_target_is_named(asia, method):
    with pytest.raises(ValueError, match="target: unknown variable 'nope'"):
        mbstat.METHODS[method](asia, "nope", **ARGS[method])


@pytest.mark.parametrize("method", sorted(mbstat.METHODS))
def test_data_with_only_the_target_is_refused(asia, method):
    """Every learner says the data has nothing but the target (not an empty blanket)."""
    with pytest.raises(ValueError, match="data has no candidate variables besides the "
                                         "target 'dysp'"):
        mbstat.METHODS[method](asia[["dysp"]], "dysp")


@pytest.mark.parametrize("method", ["iamb", "inter_iamb", "iamb_ip", "mbor", "gs_m", "rgs"])
def test_misplaced_parameter_is_named_for_the_learner_and_the_test(asia, method):
    """What a learner does not take goes to the CI test; refused, the message says both."""
    with pytest.raises(TypeError, match=r"\['bogus'\]: neither a parameter of this learner "
                                        r"nor an argument of test 'g2' \(it accepts: "
                                        r"calibration, B, seed, match, min_per_cell\)"):
        mbstat.METHODS[method](asia, "dysp", bogus=1)
