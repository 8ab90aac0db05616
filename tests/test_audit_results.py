"""Defects found by the user-level audit of the result objects, the data sets and the
front ends: each test failed before its fix."""

import pickle

import numpy as np
import pandas as pd
import pytest

import mbstat
from mbstat.datasets import make_corral


@pytest.fixture(scope="module")
def corral():
    return make_corral("corral", seed=0, n_samples=128)


def test_fsdms_results_compare_by_value(corral):
    # SelectionResult.__eq__ read ``trace``, a field only MBResult has: comparing two
    # FSDMS or WFSDMS results raised AttributeError.
    a, b = mbstat.fsdms(corral, "class"), mbstat.fsdms(corral, "class")
    assert a == b and a == pickle.loads(pickle.dumps(a))
    w1 = mbstat.wfsdms(corral, "class", cv=3, seed=1)
    w2 = mbstat.wfsdms(corral, "class", cv=3, seed=1)
    assert w1 == w2


@pytest.mark.parametrize("column", [pd.date_range("2020-01-01", periods=12, freq="h"),
                                    pd.to_timedelta(np.arange(12), unit="s")])
def test_date_and_time_columns_are_refused_by_name(column):
    # a datetime64 column became a discrete variable with one level per instant, silently
    data = pd.DataFrame({"a": np.arange(12.0), "when": column})
    with pytest.raises(TypeError, match="column 'when' holds dates or times"):
        mbstat.as_dataset(data)
    with pytest.raises(TypeError, match="'when'"):
        mbstat.iamb(data, "a")


def test_make_parity_checks_distractor_p_without_distractors():
    # with n_vars = 4 there are no distractors, and any distractor_p passed (2, NaN)
    from mbstat.datasets import make_parity

    for bad in (2.0, float("nan"), [-0.5]):
        with pytest.raises(ValueError, match="distractor_p"):
            make_parity(4, 10, seed=0, distractor_p=bad)
    assert make_parity(4, 10, seed=0, distractor_p=0.5).shape == (10, 4)


def test_cli_select_draws_no_progress_bar_into_a_captured_stderr(tmp_path, capsys):
    # select set progress=True whatever stderr was: a log file got tqdm's carriage returns
    # (its --stability branch already asked stderr.isatty())
    from mbstat.cli import main
    from mbstat.datasets import sample_network

    path = tmp_path / "asia.csv"
    sample_network("asia", 500, seed=1).to_csv(path, index=False)
    capsys.readouterr()
    assert main(["select", str(path), "--target", "either", "--method", "gs_m"]) == 0
    out = capsys.readouterr()
    assert "Markov blanket" in out.out
    assert "\r" not in out.err and "subsets/s" not in out.err


def test_pvalue_chart_marks_decisions_made_against_the_alpha_line():
    # selection="bonferroni" excludes at p > alpha / m: such candidates drew plain "not
    # selected" bars above the alpha line, contradicting the line without a word
    import matplotlib

    matplotlib.use("Agg")
    from mbstat.datasets import sample_network

    res = mbstat.iamb(sample_network("alarm", 2000, seed=3), "PAP")
    table = res.pvalues
    against = int(((table["pvalue"] <= res.alpha) != table["selected"]).sum())
    assert against >= 1  # LVFAILURE, CO: p < 0.05, excluded at entry
    ax = res.plot()
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == against
    assert any("own rule" in t.get_text() for t in ax.get_legend().get_texts())
    plain = mbstat.iamb(sample_network("asia", 2000, seed=1), "either", selection="none")
    ax = plain.plot()
    assert not [p for p in ax.patches if p.get_hatch()]
    assert not any("own rule" in t.get_text() for t in ax.get_legend().get_texts())


def test_call_lines_print_numpy_scalars_as_r_does():
    # format_call printed numpy scalars by their repr: "seed = np.int64(2)"
    from mbstat.results.base import format_call

    call = format_call("stability", np.zeros((4, 2)), R=np.int64(3), seed=np.int64(2),
                       alpha=np.float32(0.25), flag=np.bool_(True), keep=np.array([1, 2]))
    assert call == ('stability(data = <ndarray 4 x 2>, R = 3, seed = 2, alpha = 0.25, '
                    'flag = TRUE, keep = c(1, 2))')


def test_summary_says_why_a_member_has_no_test():
    # a whitelisted member printed "given {}" and "statistic nan": a set it was never tested
    # given, and Python's NaN in an R-style table
    from mbstat.datasets import sample_network

    res = mbstat.iamb(sample_network("asia", 1000, seed=1), "either", whitelist=["asia"])
    table = next(iter(res.summary().tables.values()))
    from mbstat.results.base import _fmt_table

    shown = _fmt_table(res.pvalues.loc[["asia"]])
    assert shown.loc["asia", "given"] == "(whitelist)"
    assert shown.loc["asia", "statistic"] == "NA" and shown.loc["asia", "p-value"] == "NA"
    assert "nan" not in str(res.summary())
    assert table.loc["lung", "given"].startswith("{")


def test_load_network_says_a_missing_file_is_missing(tmp_path):
    # a path to a missing .bif file got "name must be one of alarm, ..., or the path to a
    # .bif/.bif.gz file", which it was
    from mbstat.datasets import load_network

    with pytest.raises(ValueError, match="does not exist"):
        load_network(tmp_path / "nets" / "mine.bif")
    with pytest.raises(ValueError, match="is a folder"):
        load_network(tmp_path)
    with pytest.raises(ValueError, match="alarm, asia"):
        load_network("alarmx")


def test_selector_refuses_an_argument_given_twice():
    # MarkovBlanketSelector(alpha=0.01, params={"alpha": 0.2}) ran at 0.01 without a word
    from mbstat.datasets import sample_network
    from mbstat.sklearn import MarkovBlanketSelector

    data = sample_network("asia", 300, seed=1)
    X, y = data.drop(columns="either"), data["either"]
    with pytest.raises(ValueError, match=r"alpha is given twice: alpha=0.01 and params\['alpha'\]"):
        MarkovBlanketSelector(alpha=0.01, params={"alpha": 0.2}).fit(X, y)
    with pytest.raises(ValueError, match="test is given twice"):
        MarkovBlanketSelector(test="g2", params={"test": "x2"}).fit(X, y)
    assert MarkovBlanketSelector(params={"alpha": 0.01}).fit(X, y).result_.alpha == 0.01
