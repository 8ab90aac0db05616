"""SES's level of entry (``selection``) and the variables that alone determine the
target (``without_determining``), for SES and TIE*."""
import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat.datasets import sample_network


def _null(rows, p, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, size=(rows, p + 1))
    return pd.DataFrame(codes, columns=[f"X{j}" for j in range(p)] + ["T"]).astype("category")


def test_global_null_false_members():
    """Every candidate independent of T: MXM's rule (selection="none") admits the
    strongest of 30 null candidates at alpha on nearly every data set; the default
    (alpha / m) on at most a few. 40 data sets of 300 rows: P(any) <= alpha per data set
    gives at most 7 with probability 0.99; the uncorrected rule at least 0.78 per data
    set (1 - 0.95^30) in theory."""
    default = none = 0
    for seed in range(40):
        data = _null(300, 30, seed)
        default += len(mbstat.ses(data, "T", test="g2").blanket)
        none += len(mbstat.ses(data, "T", test="g2", selection="none").blanket)
    assert default <= 7
    assert none >= 25


def test_entry_refused_is_explained():
    """A weak dependence (p between alpha / m and alpha) stays out under the default,
    with the entry margin as its criterion and the note; MXM's rule admits it."""
    rng = np.random.default_rng(2)
    n = 400
    data = pd.DataFrame(rng.integers(0, 2, size=(n, 20)), columns=[f"X{j}" for j in range(20)])
    flip = rng.random(n) < 0.44
    data["T"] = np.where(flip, 1 - data["X0"], data["X0"])
    data = data.astype("category")
    p0 = mbstat.ci_test(data, "X0", "T", test="g2").pvalue
    assert 0.05 / 20 < p0 < 0.05  # the situation the test is about
    res = mbstat.ses(data, "T", test="g2")
    assert "X0" not in res.blanket
    row = res.evidence.loc["X0"]
    assert row["decision"] == "exclude" and row["phase"] == "entry"
    assert np.isclose(row["criterion"], np.log(0.05 / 20) - np.log(p0))
    assert any("stayed out at alpha / m" in note for note in res.notes)
    mxm = mbstat.ses(data, "T", test="g2", selection="none")
    assert "X0" in mxm.blanket
    with pytest.raises(ValueError, match="selection"):
        mbstat.ses(data, "T", selection="holm")


def test_strong_signals_unchanged():
    """Where every member's p-value is far below alpha / m the default is MXM's SES."""
    data = sample_network("asia", 3000, seed=0)
    data["lung_copy"] = data["lung"]
    a = mbstat.ses(data, "either", test="g2")
    b = mbstat.ses(data, "either", test="g2", selection="none")
    assert a.boundaries == b.boundaries and a.classes == b.classes


@pytest.mark.parametrize("name", ["ses", "tie"])
def test_determining_named_and_searched_on_request(name):
    """A copy of the target determines it: it is the boundary (the paper's TIE*, MXM's
    SES), named with a note; without_determining=True searches the others too."""
    data = sample_network("asia", 3000, seed=0)
    data["lung_copy"] = data["lung"]
    fn = getattr(mbstat, name)
    res = fn(data, "lung", test="g2")
    assert res.boundaries == (("lung_copy",),) and res.determining == ("lung_copy",)
    assert res.reduced_boundaries == ()
    assert any("without_determining=True" in note for note in res.notes)
    more = fn(data, "lung", test="g2", without_determining=True)
    assert more.boundaries == res.boundaries and more.determining == ("lung_copy",)
    assert more.reduced_boundaries
    assert all("lung_copy" not in b and "either" in b for b in more.reduced_boundaries)
    with pytest.raises(TypeError, match="without_determining"):
        fn(data, "lung", without_determining="yes")
