"""whitelist, blacklist, start and max_sx on every CI-test learner (bnlearn's learn.mb options),
with complete data and with missing cells under na="pairwise"."""
import pytest

import mbstat
from mbstat.bn import random_dag
from mbstat.datasets import load_network, sample_network
from test_missing import blank

#: Every CI-test learner of the table, with the arguments these tests need.
CI_LEARNERS = {name: {"iamb_ip": {"scale": "significance"}, "rgs": {"seed": 0},
                      "ses": {"symmetry": "and"}}.get(name, {})
               for name, row in mbstat.LEARNERS.items() if row.kind == "ci"}
#: Learners that find parents and children only.
PC_ONLY = {"mb_to_pc", "mmpc", "hiton_pc", "si_hiton_pc", "ses"}
#: Learners that search separating sets among neighbours: a blacklisted variable is
#: marginalized out, and a DAG's marginal need not be faithful to a DAG, so their oracle
#: guarantee does not cover it (the IAMB family needs only the unique Markov boundary).
NEIGHBOUR_SEARCH = PC_ONLY | {"mbor", "mmmb", "hiton_mb"}


def _sizes(tests):
    return tests["z"].map(lambda z: len(z.split(", ")) if z else 0)


def _mentions(tests, name):
    return ((tests["x"] == name) | (tests["y"] == name)
            | tests["z"].map(lambda z: name in z.split(", "))).any()


@pytest.fixture(scope="module")
def alarm():
    return sample_network("alarm", 2000, seed=3)


@pytest.fixture(scope="module")
def holed(alarm):
    """alarm with 10% of its cells missing completely at random."""
    return blank(alarm, 0.1, seed=0)


@pytest.mark.parametrize("na", ["raise", "pairwise"])
@pytest.mark.parametrize("method", sorted(CI_LEARNERS))
def test_lists_and_cap_are_honoured_on_data(alarm, holed, method, na):
    """On complete data, and with 10% missing cells and test-wise deletion."""
    data = alarm if na == "raise" else holed
    res = getattr(mbstat, method)(data, "HR", whitelist=["BP"], blacklist=["CO", "HRBP"],
                                  max_sx=2, na=na, **CI_LEARNERS[method])
    if na == "pairwise":  # each test on the rows complete for its own variables
        assert res.tests["n"].nunique() > 1 and res.tests["n"].max() < len(data)
    assert "BP" in res.blanket and not {"CO", "HRBP"} & set(res.blanket)
    assert not _mentions(res.tests, "CO") and not _mentions(res.tests, "HRBP")
    assert _sizes(res.tests).max() <= 2
    ev = res.evidence
    assert ev.loc["BP", ["decision", "phase"]].tolist() == ["keep", "whitelist"]
    assert ev.loc["CO", ["decision", "phase"]].tolist() == ["exclude", "blacklist"]
    assert "whitelist = c(\"BP\")" in res.call and "max_sx = 2" in res.call
    assert res.params["max_sx"] == 2 and res.n_candidates == len(alarm.columns) - 3


@pytest.mark.parametrize("method", sorted(CI_LEARNERS))
def test_oracle_with_whitelisted_true_members_stays_exact(method):
    """Whitelisting true members changes nothing with the oracle (PC learners: true parents
    and children); nor does blacklisting a non-member for the IAMB family."""
    for seed in range(12):
        net = random_dag(10, max_parents=3, seed=seed)
        for v in net.nodes[::3]:
            truth = set(net.parents_children(v) if method in PC_ONLY else net.markov_blanket(v))
            white = sorted(truth)[:1]
            black = [] if method in NEIGHBOUR_SEARCH else sorted(set(net.nodes) - truth - {v})[:1]
            res = getattr(mbstat, method)(net, v, test="oracle", whitelist=white or None,
                                          blacklist=black or None, **CI_LEARNERS[method])
            assert set(res.blanket) == truth, (seed, v)


@pytest.mark.parametrize("method", ["iamb", "gs_m"])
def test_max_sx_caps_every_test_with_the_oracle(method):
    net = load_network("alarm")
    for v in ("HR", "CO", "BP"):
        res = getattr(mbstat, method)(net, v, test="oracle", max_sx=1)
        assert _sizes(res.tests).max() <= 1
        assert len(res.blanket) <= 2


def test_start_is_where_iamb_begins_and_can_be_removed(alarm):
    res = mbstat.iamb(alarm, "HR", start=["KINKEDTUBE"])
    assert "KINKEDTUBE" not in res.blanket  # removed in the backward phase
    first = res.tests.iloc[0]
    assert first["z"] == "KINKEDTUBE"
    assert res.blanket == mbstat.iamb(alarm, "HR", start=["KINKEDTUBE"]).blanket


@pytest.mark.parametrize("kwargs, error, match", [
    ({"whitelist": ["HR"]}, ValueError, "whitelist: the target 'HR' cannot be in it"),
    ({"blacklist": ["HR"]}, ValueError, "blacklist: the target 'HR' cannot be in it"),
    ({"whitelist": ["BP"], "blacklist": ["BP", "CO"]}, ValueError,
     r"\['BP'\] are in both whitelist and blacklist"),
    ({"whitelist": ["NOPE"]}, ValueError, "whitelist: unknown variable 'NOPE'"),
    ({"candidates": ["CO", "BP"], "whitelist": ["HRBP"]}, ValueError,
     r"whitelist: \['HRBP'\] are not among the candidates"),
    ({"max_sx": -1}, ValueError, "max_sx"),
    ({"max_sx": 1, "start": ["CO", "BP", "HRBP"]}, ValueError, "max_sx = 1 is smaller"),
])
def test_bad_hard_priors_are_refused(alarm, kwargs, error, match):
    with pytest.raises(error, match=match):
        mbstat.iamb(alarm, "HR", **kwargs)


def test_mbor_needs_two_conditioning_variables(alarm):
    with pytest.raises(ValueError, match="max_sx must be >= 2 for MBOR"):
        mbstat.mbor(alarm, "HR", max_sx=1)
