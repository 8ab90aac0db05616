"""What ``print(crt_test(...))`` shows: the held-out design's model, splits and parts where
it ran, and only the histogram model and its permutations where the test ran on all rows
(a single-column x given an empty z, or a discrete x given a stratified discrete z)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from mbstat import crt_test

LOGIT = LogisticRegression(solver="liblinear")


def data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    x = rng.normal(size=n) + z
    return pd.DataFrame({"x": x, "w": rng.normal(size=n), "zd": pd.Categorical(z),
                         "xd": pd.Categorical((x > 1).astype(int)),
                         "z": z + 0.1 * rng.normal(size=n),
                         "y": (x + rng.normal(size=n) > 1).astype(int)})


def lines(result) -> dict:
    """The printout's lines by their leading word(s)."""
    out = {}
    for line in str(result).splitlines():
        key = line.split(":")[0] if ":" in line else line
        out[key.strip()] = line
    return out


def test_given_nothing_shows_the_histogram_model_not_the_holdout_settings():
    r = crt_test(data(), "x", "y", model=LOGIT, folds=4, repeats=5, B=200, seed=3)
    assert r.histogram and len(r.part_pvalues) == 1
    text = str(r)
    assert text.splitlines()[1] == "\tConditional randomization test (histogram model, all rows)"
    shown = lines(r)
    assert shown["data"] == "data:  x ~ y"
    assert shown["model"] == ("model: histogram of the target over x's levels or bins, "
                              "refitted for each of up to B = 200 permutations of the target; "
                              "seed 3")
    assert shown["alternative hypothesis"].startswith(
        "alternative hypothesis: x is not independent of the target (")
    assert f"permutation p = {r.statistic:.4g}, p-value = " in text
    assert f"in-sample log-loss increase per row under the permutations: {r.increase:.6g}" in text
    for held_out in ("Holdout", "held-out", "Bonferroni", "splits", "parts", "4 parts", "5 splits",
                     "liblinear", "LogisticRegression", "cpu", "given z"):
        assert held_out not in text, held_out


def test_discrete_x_given_stratified_z_permutes_within_the_strata():
    r = crt_test(data(1), "xd", "y", ["zd"], model=LOGIT, B=100, seed=2)
    assert r.histogram
    shown = lines(r)
    assert shown["data"] == "data:  xd ~ y | zd"
    assert shown["model"] == ("model: histogram of the target over x's levels or bins within "
                              "the strata of z, refitted for each of up to B = 100 permutations "
                              "of the target within the strata of z; seed 2")
    assert "x is not independent of the target given z" in shown["alternative hypothesis"]
    assert "held-out" not in str(r) and "Bonferroni" not in str(r)


def test_held_out_design_shows_its_model_splits_and_parts():
    r = crt_test(data(2), "x", "y", ["z"], model=LOGIT, folds=2, repeats=2, B=50, seed=4)
    assert not r.histogram and len(r.part_pvalues) == 4
    text = str(r)
    assert text.splitlines()[1] == "\tHoldout conditional randomization test"
    shown = lines(r)
    assert shown["model"] == (f"model: {r.model} on {r.device}; 2 splits into 2 parts, "
                              f"B = 50 draws of x given z per part; seed 4")
    assert shown["alternative hypothesis"] == (
        "alternative hypothesis: x is not independent of the target given z "
        "(x drawn given z raises the held-out loss)")
    assert f"smallest of 4 parts' p-values = {r.statistic:.4g} (Bonferroni)" in text
    assert "held-out parts' p-values (" in text
    assert f"mean held-out log-loss increase per row under the draws: {r.increase:.6g}" in text


def test_held_out_design_given_nothing_permutes_x():
    """Two columns of x given nothing: held-out parts, x's held-out rows permuted."""
    r = crt_test(data(3), ["x", "w"], "y", model=LOGIT, repeats=1, B=50, seed=5)
    assert not r.histogram
    shown = lines(r)
    assert shown["data"] == "data:  {x, w} ~ y"
    assert shown["model"].endswith("1 split into 2 parts, B = 50 permutations of x per part; "
                                   "seed 5")
    assert shown["alternative hypothesis"] == (
        "alternative hypothesis: x is not independent of the target "
        "(x permuted raises the held-out loss)")
