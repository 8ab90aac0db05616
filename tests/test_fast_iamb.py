"""Fast-IAMB's readings: speculative additions held to their entry level in the shrink, and
the rows-per-cell rule ending the search only with the asymptotic test."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbstat
from mbstat.datasets import sample_network

SPARSE = "stopped: too few rows per cell"


def _weak_second(seed=1, n=1000):
    """T depends on A strongly and on W weakly given A; W copies A 80% of the time, so it
    is strongly associated with T marginally and enters in A's speculative round; 18
    independent binary candidates besides."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    w = np.where(rng.random(n) < 0.8, a, 1 - a)
    t = (rng.random(n) < 0.2 + 0.5 * a + 0.07 * w).astype(int)
    return pd.DataFrame({"T": t, "A": a, "W": w,
                         **{f"N{j}": rng.integers(0, 2, n) for j in range(18)}})


def _g2_given(frame, x, y, z):
    """G2 of x against y within the strata of z, by hand, and its chi-square p-value
    (binary columns, no empty cell: df = levels of z)."""
    g2 = 0.0
    for _, s in frame.groupby(z):
        obs = pd.crosstab(s[x], s[y]).to_numpy(dtype=float)
        exp = obs.sum(1, keepdims=True) * obs.sum(0, keepdims=True) / obs.sum()
        g2 += 2.0 * float(np.sum(obs * np.log(obs / exp)))
    return g2, float(stats.chi2.sf(g2, frame[z].nunique()))


def test_a_speculative_addition_keeps_its_entry_level_in_the_shrink():
    """A and W enter in one round (W second of m = 20: Holm's level alpha / 19). Given A,
    W's p-value lies between alpha / 19 and alpha: the paper's shrink (selection="none")
    keeps it, the default removes it at its entry level, and its evidence carries the
    margin log(alpha / 19) - log p."""
    frame = _weak_second()
    g2, p = _g2_given(frame, "W", "T", "A")
    assert 0.05 / 19 < p < 0.05
    paper = mbstat.fast_iamb(frame, "T", selection="none", calibration="asymptotic")
    assert list(paper.trace["feature"][:2]) == ["A", "W"]
    assert paper.blanket == ("A", "W")
    res = mbstat.fast_iamb(frame, "T", calibration="asymptotic")
    assert res.blanket == ("A",)
    trace = res.trace
    assert list(trace["action"][:2]) == ["add", "add"]
    removed = trace[(trace["phase"] == "shrink") & (trace["feature"] == "W")]
    assert len(removed) == 1
    assert removed["statistic"].iloc[0] == pytest.approx(g2, rel=1e-9)
    assert removed["pvalue"].iloc[0] == pytest.approx(p, rel=1e-9)
    row = res.evidence.loc["W"]  # W's last test: given {A} in the next round, rank 0 of 19
    assert row["criterion"] == pytest.approx(math.log(0.05 / 19) - math.log(p), rel=1e-9)
    assert "Criterion (entry)" in str(res.summary())


def test_the_data_rule_ends_the_search_only_with_the_asymptotic_test():
    """ALARM, 300 rows, min_per_cell = 50 (no table beyond HR x one binary candidate): the
    asymptotic test stops at once, as bnlearn's fast.iamb; the calibrated default goes on
    one addition per round and says how many rounds the rule cut short."""
    data = sample_network("alarm", 300, seed=1)
    asym = mbstat.fast_iamb(data, "HR", min_per_cell=50, calibration="asymptotic")
    assert asym.blanket == ()
    assert SPARSE in set(asym.evidence["phase"])
    assert any("the search stopped where a larger blanket" in n for n in asym.notes)
    res = mbstat.fast_iamb(data, "HR", min_per_cell=50)
    assert SPARSE not in set(res.evidence["phase"])
    assert any("round(s) the speculative growth stopped" in n for n in res.notes)
    adds = int((res.trace["action"] == "add").sum())
    rounds = res.tests.loc[res.tests["phase"] == "grow", "z"].nunique()
    assert 2 <= adds <= rounds  # at most one addition per round
    free = mbstat.fast_iamb(data, "HR", min_per_cell=None)
    assert not any("min_per_cell" in n for n in free.notes)
