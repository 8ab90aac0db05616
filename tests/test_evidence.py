"""What a result prints is the evidence the search decided on (issue #14).

For every CI-test learner and several shipped networks: each member's reported test is a
decision to keep it (p <= alpha and not declined, or the learner's own criterion), each
excluded candidate's a decision to exclude it, and every reported test is one the search
made (it is in the tests log, with the same conditioning set).
"""
import numpy as np
import pytest

import mbstat
from mbstat.datasets import sample_network

NETWORKS = [("asia", 2000, 1), ("alarm", 3000, 2), ("insurance", 3000, 5)]
LEARNERS = {
    "iamb": {},
    "inter_iamb": {},
    "iamb_ip": {"scale": "significance"},
    "mbor": {},
    "gs_m": {"m": 1},
    "rgs": {"m": 1, "seed": 0},
    "iamb_fdr": {},
    "fast_iamb": {},
    "mmmb": {},
    "hiton_mb": {},
    "si_hiton_pc": {},
}
#: Exclusions that rest on a rule of the search rather than on an independence test have a
#: phase "stopped: ..." (a repeated state, too few rows per cell, a time budget).
RULE_PREFIX = "stopped"


@pytest.fixture(scope="module", params=NETWORKS, ids=[n for n, _, _ in NETWORKS])
def sample(request):
    name, n, seed = request.param
    data = sample_network(name, n, seed=seed)
    targets = list(data.columns[:: max(1, data.shape[1] // 4)])[:4]
    return data, targets


#: How a learner's own criterion decides: True where it keeps (default: a margin > 0).
KEEPS = {"iamb_fdr": lambda c, alpha: c <= alpha}  # an FDR-scaled p-value


def _check(res):
    ev = res.evidence
    alpha = res.alpha
    keeps = KEEPS.get(res.method, lambda c, alpha: c > 0)
    assert list(ev.index[: len(res.blanket)]) == list(res.blanket)
    assert sorted(ev.index) == sorted(set(ev.index))
    keep = ev["decision"] == "keep"
    assert set(ev.index[keep]) == set(res.blanket)
    tested = ev["pvalue"].notna()
    members = ev[keep]
    assert tested[keep].all(), "every member was kept on a test"
    assert (~members["skipped"]).all()
    own = members["criterion"].notna()
    assert (members.loc[~own, "pvalue"] <= alpha).all(), members
    assert keeps(members.loc[own, "criterion"], alpha).all(), members
    decided = ev["criterion"].notna()  # the learner's own criterion decided (IAMB-IP, RGS)
    out = ev[~keep & tested & ~decided & ~ev["phase"].str.startswith(RULE_PREFIX)]
    assert (out["skipped"] | (out["pvalue"] > alpha)).all(), out
    assert (~keeps(ev.loc[~keep & decided, "criterion"], alpha)).all()
    log = res.tests
    for feature, row in ev[tested].iterrows():
        made = log[(log["x"] == row["x"]) & (log["z"] == row["z"]) & (log["y"] == res.target)]
        made = made if len(made) else log[(log["y"] == row["x"]) & (log["z"] == row["z"])
                                          & (log["x"] == res.target)]
        assert len(made) >= 1, (feature, row["x"], row["z"])
        assert np.isclose(made["statistic"].iloc[0], row["statistic"], rtol=1e-12)


#: Every learner with its defaults, and the PC learners' variants.
CASES = [*LEARNERS.items(), ("mmpc", {}), ("hiton_pc", {"symmetry": "or"}),
         ("si_hiton_pc", {"max_k": 2})]
#: Learners whose every candidate is decided on a test, every member at p <= alpha too.
ALL_TESTED = {"iamb_fdr", "fast_iamb", "fbed", "mmpc", "mmmb", "hiton_pc", "hiton_mb",
              "si_hiton_pc"}
PC_ONLY = {"mmpc", "hiton_pc", "si_hiton_pc"}


@pytest.mark.parametrize("method, args", CASES, ids=[f"{m}{a or ''}" for m, a in CASES])
def test_evidence_is_the_decision(sample, method, args):
    data, targets = sample
    for target in targets:
        res = getattr(mbstat, method)(data, target, alpha=0.01, **args)
        _check(res)
        table = res.summary().tables
        caption = next(iter(table))
        assert "weakest test that kept it" in caption
        ev = res.evidence
        if method in ALL_TESTED:
            assert ev["pvalue"].notna().all(), ev[ev["pvalue"].isna()]
            assert (ev.loc[ev["decision"] == "keep", "pvalue"] <= res.alpha).all()
        if method in ("mbor", "mmmb", "hiton_mb"):
            assert res.blanket == (*res.parents_children, *res.spouses)
            assert (ev.loc[list(res.spouses), "phase"] == "spouses").all()
        elif method in PC_ONLY:
            assert res.parents_children == res.blanket and res.spouses is None


def test_iamb_ip_criterion_decides_on_the_mi_scale():
    data = sample_network("alarm", 3000, seed=2)
    res = mbstat.iamb_ip(data, "HR", prior={"CATECHOL": 1, "BP": -1}, threshold=0.01)
    ev = res.evidence
    keep = ev["decision"] == "keep"
    assert (ev.loc[keep, "criterion"] > 0).all()
    assert (ev.loc[~keep & ev["criterion"].notna(), "criterion"] <= 0).all()
    assert "Criterion: the score" in str(res.summary())


def test_mbor_case_of_the_issue_prints_evidence_below_alpha():
    """insurance, 3,000 rows, Accident: members were shown with p = 1 (given all others)."""
    data = sample_network("insurance", 3000, seed=5)
    res = mbstat.mbor(data, "Accident", alpha=0.01)
    members = res.pvalues[res.pvalues["selected"]]
    assert len(members) == len(res.blanket) > 0
    assert (members["pvalue"] < 0.01).all(), members
    text = str(res.summary())
    assert "p-value" in text and " 1 " not in text.split("Blanket of")[1].split("---")[0]
