"""Tests of iamb_ip: IAMB with informative priors (Pocock, Lujan & Brown 2012, Eqs. 20-24)."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from mbstat.algorithms.iamb import iamb, search
from mbstat.algorithms.iamb_ip import iamb_ip, mi_rule
from mbstat.bn import random_dag
from mbstat.ci.engine import CITester
from mbstat.ci import cond_mutual_info
from mbstat.datasets import load_network, sample_network
from test_iamb import _g2, oracle_dags

LOG99 = math.log(99)

# ---------------------------------------------------------------------------
# d-separation oracle
# ---------------------------------------------------------------------------


def test_oracle_random_dags_empty_and_random_priors():
    """With no prior the MI-scale search returns the true blanket of every node of 100
    random DAGs (test_iamb.oracle_dags); capped priors (|alpha_d w| <= alpha_s), right or wrong, cannot add an
    independent feature or drop a dependent one, so random priors leave it exact too."""
    rng = np.random.default_rng(5)
    checked = 0
    for i, net in oracle_dags():
        tester = CITester(net, "oracle")
        truth = net.markov_blankets()
        for v in net.nodes:
            others = [c for c in net.nodes if c != v]
            rule = mi_rule({}, 0.02, LOG99, tester.n)
            assert set(search(tester, v, others, rule=rule)) == truth[v], (i, v)
            picked = rng.choice(others, size=min(3, len(others)), replace=False)
            prior = {str(x): float(rng.choice([-3.0, -1.0, 0.5, 1.0, 3.0])) for x in picked}
            rule = mi_rule(prior, 0.02, 1e6, tester.n)
            assert set(search(tester, v, others, rule=rule)) == truth[v], (i, v, prior)
            checked += 1
    assert checked > 1000


def test_oracle_public_api():
    for i, net in oracle_dags(10):
        if i < 6:
            continue
        truth = net.markov_blankets()
        for v in net.nodes[::2]:
            res = iamb_ip(net, v, test="oracle")
            assert set(res.blanket) == truth[v]
            others = [c for c in net.nodes if c != v]
            res = iamb_ip(net, v, prior={others[0]: 1, others[-1]: -1}, test="oracle")
            assert set(res.blanket) == truth[v]
            assert set(iamb_ip(net, v, test="oracle", scale="significance").blanket) == truth[v]


# ---------------------------------------------------------------------------
# no prior: IAMB with the MI threshold (scale "mi") or IAMB itself ("significance")
# ---------------------------------------------------------------------------


def _reference_mi_iamb(frame, target, candidates, t):
    """Pocock et al.'s Algorithm 1 with f = I(X; Y | CMB) and threshold t, one test at a time."""
    n = len(frame)

    def mi(x, z):
        return _g2(frame, x, target, z)[0] / (2 * n)

    cmb, trace = [], []
    while True:  # forward
        rest = [c for c in candidates if c not in cmb]
        if not rest:
            break
        scores = [mi(x, cmb) for x in rest]
        best = int(np.argmax(scores))
        if scores[best] <= t:
            break
        cmb.append(rest[best])
        trace.append(("add", rest[best]))
    while cmb:  # backward
        scores = [mi(x, [b for b in cmb if b != x]) for x in cmb]
        worst = int(np.argmin(scores))
        if scores[worst] >= t:
            break
        trace.append(("remove", cmb.pop(worst)))
    return trace


@pytest.fixture(scope="module")
def alarm():
    return sample_network("alarm", 800, seed=3)


def test_no_prior_is_iamb_with_the_mi_threshold(alarm):
    names = ["HYPOVOLEMIA", "LVFAILURE", "STROKEVOLUME", "LVEDVOLUME", "CVP", "PCWP",
             "HISTORY", "CO", "HR", "BP", "TPR", "CATECHOL", "ERRLOWOUTPUT", "HRBP"]
    frame = alarm[names]
    for target in ("STROKEVOLUME", "CO", "HR"):
        cands = [c for c in names if c != target]
        for t in (0.02, 0.05):
            res = iamb_ip(frame, target, threshold=t)
            steps = list(zip(res.trace["action"], res.trace["feature"]))
            assert steps == _reference_mi_iamb(frame, target, cands, t), (target, t)


def test_no_prior_on_the_significance_scale_is_iamb(alarm):
    for target in ("CO", "HR", "LVFAILURE", "VENTLUNG"):
        a = iamb(alarm, target, alpha=0.01, selection="none")  # the paper's IAMB
        b = iamb_ip(alarm, target, scale="significance", alpha=0.01)
        assert a.blanket == b.blanket
        pd.testing.assert_frame_equal(a.trace, b.trace)


def test_zero_weights_are_no_opinion(alarm):
    a = iamb_ip(alarm, "CO")
    b = iamb_ip(alarm, "CO", prior={"HR": 0, "BP": 0.0})
    assert a.blanket == b.blanket and a.trace.equals(b.trace)


# ---------------------------------------------------------------------------
# Eq. 24 and the cap alpha_d <= alpha_s
# ---------------------------------------------------------------------------


def _noisy_copy(n=1000, flip=0.42, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = np.where(rng.random(n) < flip, 1 - y, y)
    return pd.DataFrame({"X": x, "Y": y}).astype("category")


def test_mi_scale_prior_moves_the_threshold_by_alpha_d_w_over_n():
    frame = _noisy_copy()
    mi = cond_mutual_info(frame, "X", "Y")
    n = len(frame)
    shift = LOG99 / n  # alpha_d / N for w = 1, below t
    # just below the threshold: out without a prior, in with w = +1, still out with w = +0.1
    t = mi + shift / 2
    assert iamb_ip(frame, "Y", threshold=t).blanket == ()
    assert iamb_ip(frame, "Y", prior={"X": 1}, threshold=t).blanket == ("X",)
    assert iamb_ip(frame, "Y", prior={"X": 0.1}, threshold=t).blanket == ()
    # just above: in without a prior, out with w = -1
    t = mi - shift / 2
    assert iamb_ip(frame, "Y", threshold=t).blanket == ("X",)
    assert iamb_ip(frame, "Y", prior={"X": -1}, threshold=t).blanket == ()
    # the strength is alpha_d: a weaker prior no longer lifts it
    t = mi + shift / 2
    assert iamb_ip(frame, "Y", prior={"X": 1}, threshold=t, alpha_d=LOG99 / 4).blanket == ()


def test_knowledge_prior_is_capped_at_the_sparsity_prior():
    # X and Y exactly independent in the sample: I = 0, G2 = 0
    frame = pd.DataFrame({"X": [0, 1, 0, 1] * 250, "Y": [0, 0, 1, 1] * 250}).astype("category")
    assert cond_mutual_info(frame, "X", "Y") == 0
    for scale in ("mi", "significance"):
        res = iamb_ip(frame, "Y", prior={"X": 5.0}, alpha_d=1e9, scale=scale)
        assert res.blanket == (), scale  # uncapped, alpha_d w / N = 1e6 would add it
    # with some evidence (I > 0, far below t) the capped prior does add it
    weak = _noisy_copy(flip=0.49, seed=3)
    assert 0 < cond_mutual_info(weak, "X", "Y") < 0.02
    assert iamb_ip(weak, "Y").blanket == ()
    assert iamb_ip(weak, "Y", prior={"X": 1}, alpha_d=1e9).blanket == ("X",)


def _table(same, flipped):
    """X and Y binary with ``same`` rows X = Y and ``flipped`` rows X != Y per level of Y."""
    x = [0] * same + [1] * flipped + [1] * same + [0] * flipped
    y = [0] * (same + flipped) + [1] * (same + flipped)
    return pd.DataFrame({"X": x, "Y": y}).astype("category")


def test_significance_scale_shifts_g2_by_two_alpha_d_w():
    crit = 3.841458820694124  # chi2_{0.95}(1)
    weak = _table(105, 95)
    g2 = CITester(weak).test("X", "Y").statistic
    assert 0 < g2 < crit  # not significant alone
    need = (crit - g2) / 2  # the smallest alpha_d that lifts it
    assert iamb_ip(weak, "Y", scale="significance").blanket == ()
    assert iamb_ip(weak, "Y", prior={"X": 1}, alpha_d=need * 1.01,
                   scale="significance").blanket == ("X",)
    assert iamb_ip(weak, "Y", prior={"X": 1}, alpha_d=need * 0.99,
                   scale="significance").blanket == ()
    strong = _table(110, 90)
    g2 = CITester(strong).test("X", "Y").statistic
    assert crit < g2 < 2 * crit
    over = (g2 - crit) / 2
    assert iamb_ip(strong, "Y", scale="significance").blanket == ("X",)
    assert iamb_ip(strong, "Y", prior={"X": -1}, alpha_d=over * 1.01,
                   scale="significance").blanket == ()
    assert iamb_ip(strong, "Y", prior={"X": -1}, alpha_d=over * 0.99,
                   scale="significance").blanket == ("X",)
    # the cap alpha_d <= crit / 2: no prior can veto evidence beyond twice the critical value
    stronger = _table(120, 80)
    assert CITester(stronger).test("X", "Y").statistic > 2 * crit
    assert iamb_ip(stronger, "Y", prior={"X": -1}, alpha_d=1e9,
                   scale="significance").blanket == ("X",)


def test_prior_changes_the_blanket_on_a_network():
    net = load_network("alarm")
    small = sample_network(net, 50, seed=3)
    truth = net.markov_blanket("CO")
    base = set(iamb_ip(small, "CO").blanket)
    missed = sorted(truth - base)
    assert missed  # at 50 rows IAMB misses part of CO's blanket
    helped = set(iamb_ip(small, "CO", prior={x: 1 for x in missed}).blanket)
    assert len(helped & truth) > len(base & truth)


# ---------------------------------------------------------------------------
# results and bad input
# ---------------------------------------------------------------------------


def test_result_params_and_reports(alarm):
    prior = {"HR": 1, "BP": -1.0}
    res = iamb_ip(alarm, "CO", prior=prior, threshold=0.03)
    assert prior == {"HR": 1, "BP": -1.0}  # the caller's mapping is untouched
    assert res.method == "iamb_ip"
    assert dict(res.params["prior"]) == {"HR": 1.0, "BP": -1.0}
    with pytest.raises(TypeError):
        res.params["prior"]["HR"] = 0
    assert res.params["threshold"] == 0.03 and res.params["scale"] == "mi"
    assert math.isclose(res.params["alpha_d"], LOG99)
    text = str(res.summary())
    assert "IAMB-IP" in text and "prior = c(HR = 1, BP = -1)" in text
    assert res.pvalues["selected"].sum() == len(res.blanket)
    assert res.plot().get_title()
    by_position = iamb_ip(alarm, "CO", prior={list(alarm.columns).index("HR"): 1,
                                              "BP": -1.0}, threshold=0.03)
    assert by_position.blanket == res.blanket
    again = iamb_ip(alarm, "CO", prior=prior, threshold=0.03)
    assert again.blanket == res.blanket and again.trace.equals(res.trace)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"prior": {"NOPE": 1}}, ValueError, "prior: unknown variable 'NOPE'"),
    ({"prior": {"HR": "high"}}, TypeError, r"prior\['HR'\] must be a real number"),
    ({"prior": {"HR": None}}, TypeError, r"prior\['HR'\] must be a real number"),
    ({"prior": {"HR": True}}, TypeError, r"prior\['HR'\]"),
    ({"prior": {"HR": float("nan")}}, ValueError, r"prior\['HR'\] must be a finite"),
    ({"prior": {"HR": float("inf")}}, ValueError, r"prior\['HR'\] must be a finite"),
    ({"prior": {"CO": 1}}, ValueError, "target 'CO' cannot carry a prior"),
    ({"prior": ["HR"]}, TypeError, "prior must be a mapping"),
    ({"prior": {"HR": 1}, "candidates": ["BP", "TPR"]}, ValueError, "not among the candidates"),
    ({"threshold": 0}, ValueError, "threshold must be > 0"),
    ({"threshold": -0.1}, ValueError, "threshold must be > 0"),
    ({"threshold": "0.02"}, TypeError, "threshold must be a real number"),
    ({"threshold": float("inf")}, ValueError, "threshold must be finite"),
    ({"alpha_d": -1}, ValueError, "alpha_d must be >= 0"),
    ({"scale": "pvalue"}, ValueError, "scale must be one of"),
    ({"alpha": 2}, ValueError, "alpha"),
])
def test_bad_input(alarm, kwargs, error, match):
    with pytest.raises(error, match=match):
        iamb_ip(alarm, "CO", **kwargs)


def test_significance_scale_needs_a_chi_square_test_for_a_prior():
    net = random_dag(6, seed=1)
    v, other = net.nodes[0], net.nodes[1]
    with pytest.raises(ValueError, match="chi-square test"):
        iamb_ip(net, v, prior={other: 1}, test="oracle", scale="significance")


def test_vignette_quick(tmp_path, run_vignette):
    out = run_vignette("iamb_ip_priors.py", timeout=120)
    assert "2 TP" in out and "TPTN" in out and "TPFN" in out and "TPFP" in out
    assert "Table 1" in out
    pngs = list(tmp_path.glob("*.png"))
    assert pngs and all(p.stat().st_size > 1000 for p in pngs)
