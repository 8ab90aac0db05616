"""Result objects: frozen, R-style summary, p-value table, plots."""
import dataclasses

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import mbstat
from mbstat.datasets import sample_network
from mbstat.results import Summary, format_call, stars


@pytest.fixture(scope="module")
def result():
    data = sample_network("asia", 5000, seed=3)
    return mbstat.iamb(data, "either", alpha=0.05)


def test_result_is_frozen(result):
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.selected = ("x",)
    with pytest.raises(TypeError):
        result.params["alpha"] = 0.5


def test_repr_and_container_protocol(result):
    text = repr(result)
    assert text.startswith("<MBResult iamb: either <- {")
    assert f"({len(result.blanket)} of 7)" in text and "tests>" in text
    assert list(result) == list(result.blanket)
    assert len(result) == len(result.blanket)
    assert result.blanket[0] in result


def test_summary_reads_like_r(result):
    summary = result.summary()
    assert isinstance(summary, Summary)
    text = str(summary)
    assert text.startswith("Markov blanket: incremental association (IAMB)")
    assert 'Call:   iamb(data = <DataFrame 5000 x 8>, target = "either", test = "g2", alpha = 0.05)' in text
    assert "Data:   5000 rows, 8 variables (7 candidates)" in text
    assert "Tests:" in text and f"backend: {result.backend} ({result.device})" in text
    assert "Blanket of either:" in text and "p.adj (BH)" in text
    assert "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1" in text
    for feature in result.blanket:
        assert feature in text
    assert "<table>" in summary._repr_html_()


def test_pvalue_table(result):
    table = result.pvalues
    assert table.index.name == "feature"
    nodes = mbstat.datasets.load_network("asia").nodes
    assert sorted(table.index) == sorted(c for c in nodes if c != "either")
    assert len(table) == 7 and "either" not in table.index
    assert list(table.columns) == ["statistic", "df", "pvalue", "log_pvalue", "p_adj", "selected"]
    assert table["selected"].sum() == len(result.blanket)
    np.testing.assert_allclose(table["p_adj"], multipletests(table["pvalue"], method="fdr_bh")[1])
    # members are tested given the rest of the blanket
    member = result.blanket[0]
    rest = [b for b in result.blanket if b != member]
    direct = mbstat.ci_test(sample_network("asia", 5000, seed=3), member, "either", rest)
    assert table.loc[member, "statistic"] == pytest.approx(direct.statistic)


def test_tests_log_and_trace(result):
    assert result.n_tests > 0 and len(result.tests) >= result.n_tests
    assert set(result.tests["phase"]) <= {"grow", "shrink", "report"}
    trace = result.trace
    assert trace.index.name == "step"
    assert list(trace.columns) == ["phase", "action", "feature", "statistic", "pvalue", "log_pvalue"]
    added = trace[trace.action == "add"].feature.tolist()
    removed = trace[trace.action == "remove"].feature.tolist()
    assert sorted(set(added) - set(removed)) == sorted(result.blanket)


def test_plots_return_axes(result):
    ax = result.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    assert len(ax.patches) == 7
    fig, own = matplotlib.pyplot.subplots()
    assert result.plot(kind="trace", ax=own) is own
    with pytest.raises(ValueError, match="kind must be one of"):
        result.plot(kind="pie")
    matplotlib.pyplot.close("all")


def test_helpers():
    assert [stars(p) for p in (0.0001, 0.005, 0.03, 0.07, 0.5)] == ["***", "**", "*", ".", ""]
    call = format_call("iamb", pd.DataFrame({"a": [1, 2]}), target="a", alpha=0.05, flag=True)
    assert call == 'iamb(data = <DataFrame 2 x 1>, target = "a", alpha = 0.05, flag = TRUE)'


def test_summary_flags_low_power_tests():
    res = mbstat.mbor(sample_network("alarm", 2000, seed=1), "HR")
    assert (res.pvalues["df"] * 5 > 2000).any()
    assert "fewer than 5 rows per degree of freedom" in str(res.summary())
