"""Pictures of results: graphs of blankets and networks (checked against the true ALARM
network), p-value charts readable when one member dominates, and the HTML display."""
import html
import math
from html.parser import HTMLParser

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

import mbstat  # noqa: E402
from mbstat.datasets import load_network, sample_network  # noqa: E402
from mbstat.plotting import graph_artists, radial_layout  # noqa: E402


@pytest.fixture(scope="module")
def alarm():
    return load_network("alarm")


@pytest.fixture(scope="module")
def alarm_data(alarm):
    return sample_network(alarm, 5000, seed=1)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _moral_edges(bn) -> set:
    """The moral graph of a DAG by hand: parent-child pairs and pairs of parents of a child,
    as unordered pairs."""
    pairs = set()
    for child in bn.nodes:
        parents = list(bn.parents[child])
        pairs |= {frozenset((p, child)) for p in parents}
        pairs |= {frozenset((a, b)) for i, a in enumerate(parents) for b in parents[i + 1:]}
    return pairs


def test_blanket_graph_with_roles_follows_the_true_network(alarm):
    """MBOR with the d-separation oracle: the target, its parents and children and its
    spouses; every spouse joined to a child it truly shares with the target."""
    res = mbstat.mbor(alarm, "HR", test="oracle")
    ax = res.plot(kind="graph")
    assert isinstance(ax, Axes)
    nodes, edges = graph_artists(ax)
    pc = set(alarm.parents["HR"]) | set(alarm.children("HR"))
    spouses = set(alarm.markov_blanket("HR")) - pc
    assert set(res.parents_children) == pc and set(res.spouses) == spouses
    assert nodes == {"HR"} | pc | spouses
    links = res.spouse_links()
    assert set(links) == spouses
    for spouse, children in links.items():
        assert children, spouse
        for child in children:  # a true collider HR -> child <- spouse
            assert {"HR", spouse} <= set(alarm.parents[child])
            assert edges[(spouse, child)] == "arc" and edges[("HR", child)] == "arc"
    assert {(a, b) for (a, b) in edges if a == "HR"} == {("HR", v) for v in pc}
    assert len(edges) == len(pc) + sum(len(c) for c in links.values())


def test_blanket_graph_labels_each_edge_with_its_deciding_pvalue(alarm_data):
    res = mbstat.iamb(alarm_data, "CO")
    ax = res.plot("graph")
    nodes, edges = graph_artists(ax)
    assert nodes == {"CO", *res.selected}
    assert edges == {("CO", v): "edge" for v in res.selected}
    labels = {t.get_gid()[len("label:"):]: t.get_text() for t in ax.texts
              if (t.get_gid() or "").startswith("label:")}
    ev = res.evidence
    for v in res.selected:
        text = labels[f"CO--{v}"]
        mantissa, _, exponent = text[len("p = "):].partition("e")
        value = math.log10(float(mantissa)) + (int(exponent) if exponent else 0)
        # the label is the deciding test's p-value, to its printed precision
        assert value == pytest.approx(ev.loc[v, "log_pvalue"] / math.log(10), abs=0.05)


def test_network_graph_of_oracle_blankets_is_the_moral_graph(alarm):
    coll = mbstat.blankets(alarm, method="iamb", test="oracle")
    ax = coll.plot()
    assert isinstance(ax, Axes)
    nodes, edges = graph_artists(ax)
    assert nodes == set(alarm.nodes)
    assert set(edges.values()) == {"edge"}  # every pair agrees
    assert {frozenset(pair) for pair in edges} == _moral_edges(alarm)
    assert len(edges) == len(_moral_edges(alarm))  # each agreeing pair drawn once


def test_network_graph_marks_asymmetric_pairs(alarm_data):
    targets = ["HR", "HRBP", "HREKG", "HRSAT", "CO", "CATECHOL", "ERRCAUTER", "ERRLOWOUTPUT",
               "STROKEVOLUME", "TPR", "BP"]
    coll = mbstat.blankets(alarm_data, targets, method="iamb")
    nodes, edges = graph_artists(coll.plot())
    asym = coll.asymmetric_pairs()
    assert {pair for pair, kind in edges.items() if kind == "asymmetric"} == set(
        zip(asym["missing_from_blanket_of"], asym["in_blanket_of"]))
    outside = {f for r in coll.results.values() for f in r.selected} - set(targets)
    assert nodes == set(targets) | outside
    assert {pair[1] for pair, kind in edges.items() if kind == "one-sided"} == outside
    agreeing = {frozenset(p) for p, kind in edges.items() if kind == "edge"}
    assert agreeing == {frozenset((t, f)) for t, r in coll.results.items() for f in r.selected
                        if f in coll.results and t in coll.results[f].selected}


def test_arc_strength_graph_weights_edges_by_strength(alarm_data):
    targets = ["HR", "HRBP", "HREKG", "HRSAT", "CO", "ERRCAUTER", "STROKEVOLUME"]
    arcs = mbstat.arc_strengths(alarm_data, targets, "iamb", R=6, seed=3)
    ax = arcs.plot(kind="graph", threshold=0.5, min_strength=0.1)
    assert isinstance(ax, Axes)
    nodes, edges = graph_artists(ax)
    assert nodes == set(targets)
    table = arcs.strength
    shown = table[table["strength"] >= 0.1]
    assert edges == {(a, b): "strong" if s >= 0.5 else "weak"
                     for a, b, s in zip(shown["from"], shown["to"], shown["strength"])}
    widths = {p.get_gid().split(":", 2)[2]: p.arrow_patch.get_linewidth() for p in ax.texts
              if (p.get_gid() or "").startswith("edge:")}
    for a, b, s in zip(shown["from"], shown["to"], shown["strength"]):
        assert widths[f"{a}--{b}"] == pytest.approx(0.4 + 3.6 * s)  # in proportion
    with pytest.raises(ValueError, match="min_strength"):
        arcs.plot(kind="graph", min_strength=2)
    assert isinstance(arcs.plot(), Axes) and isinstance(arcs.plot(kind="directed"), Axes)


def test_radial_layout_places_spouses_outside_near_their_child():
    pos = radial_layout("T", ["a", "b", "c", "d"], {"s": ("b",), "u": ()})
    assert np.allclose(pos["T"], 0)
    assert all(np.isclose(np.hypot(*pos[v]), 1) for v in "abcd")
    assert np.isclose(np.hypot(*pos["s"]), 2) and np.isclose(np.hypot(*pos["u"]), 2)
    assert np.allclose(pos["s"], 2 * pos["b"])  # alone on its child's direction


def test_pvalue_chart_turns_symlog_when_one_member_dominates(alarm_data):
    res = mbstat.iamb(alarm_data, "CO")  # STROKEVOLUME at p ~ 1e-569 (calibrated)
    ax = res.plot()
    assert ax.get_yscale() == "symlog" and "symlog" in ax.get_ylabel()
    heights = [p.get_height() for p in ax.patches]
    assert max(heights) > 500 and min(heights) < 1  # both visible on one axis
    assert res.plot(kind="trace").get_yscale() == "symlog"
    assert res.plot(scale="linear").get_yscale() == "linear"
    weak = mbstat.iamb(alarm_data.iloc[:300], "HISTORY")  # strongest p ~ 1e-15
    assert -weak.pvalues["log_pvalue"].min() / math.log(10) < 20
    assert weak.plot().get_yscale() == "linear" and "symlog" not in weak.plot().get_ylabel()
    with pytest.raises(ValueError, match="scale"):
        res.plot(scale="log10")
    with pytest.raises(ValueError, match="kind"):
        res.plot(kind="network")


class _Text(HTMLParser):
    """The text of an HTML fragment, cell by cell."""

    def __init__(self):
        super().__init__()
        self.chunks = []

    def handle_data(self, data):
        if data.strip():
            self.chunks.append(data.strip())


def _html_text(fragment: str) -> str:
    parser = _Text()
    parser.feed(fragment)
    return " ".join(parser.chunks)


def _same_content(summary):
    """Every header value, table cell and footer line of the text is in the HTML."""
    page = summary._repr_html_()
    text = _html_text(page)
    assert summary.title in text
    for key, value in summary.header:
        assert str(value) in text
    for caption, table in summary.tables.items():
        assert caption in text
        if isinstance(table, str):
            assert table.strip() in text
        else:
            for cell in table.astype(str).to_numpy().ravel():
                assert cell in text
            assert all(str(i) in text for i in table.index)
    for line in summary.footer:
        assert line in text
    return page


def test_html_display_has_the_content_of_the_text(alarm_data):
    res = mbstat.mbor(alarm_data, "HR")
    page = _same_content(res.summary())
    assert res._repr_html_() == page
    assert "&lt;DataFrame 5000 x 37&gt;" in page  # the call escaped, not taken for a tag
    assert page.count("<table") == 2  # the header and the blanket's table
    coll = mbstat.blankets(alarm_data, ["HR", "CO"], method="iamb")
    assert coll._repr_html_() == _same_content(coll.summary())
    stab = mbstat.stability(alarm_data, "CO", "iamb", R=4, seed=1)
    assert stab._repr_html_() == _same_content(stab.summary())
    arcs = mbstat.arc_strengths(alarm_data, ["HR", "CO", "BP"], "iamb", R=4, seed=1)
    assert arcs._repr_html_() == _same_content(arcs.summary())


def test_html_display_escapes_names():
    from mbstat.results.base import Summary
    import pandas as pd

    s = Summary("<b>", [("Call", 'f(x = "<a & b>")')], {"t <1>": pd.DataFrame({"<c>": ["<v>"]}),
                                                     "s": "  x<y"}, ["1 < 2 & 3"])
    page = s._repr_html_()
    assert "<b>" not in page.replace("<b>t", "").replace("<b>s", "")
    assert html.escape('f(x = "<a & b>")') in page and "1 &lt; 2 &amp; 3" in page
    assert _html_text(page).count("<v>") == 1
