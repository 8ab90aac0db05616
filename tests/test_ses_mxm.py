"""SES against MXM's own output, recorded (CI never runs R).

MXM 1.5.5's ``SES(target, dataset, max_k = 3, threshold = 0.05, test = "gSquare")`` was run
by ``python benchmarks/equivalent.py --mxm`` (R 4.2; MXM from ``github:cran/MXM`` on a
reduced Rfast 2.0.6 that builds only its G2 tests, the functions SES calls with
gSquare) on the data below, written as level codes. The queues it returned are fixed
here; :func:`mbstat.ses` with MXM's rule (``selection="none"``) and MXM's test (G2,
asymptotic chi-square, df from the observed levels) must return the same classes,
hence the same signatures. Same run: the univariate log p-values agreed to 5e-12.
"""
import random

import pytest

import mbstat
from mbstat.bn.random_networks import random_dag
from mbstat.datasets import sample_network

#: MXM's queues (``r@queues``, by name), per target.
MXM_DAG = {
    "X11": [("X13",), ("X14",), ("X19",), ("X4",)],
    "X7": [("X15", "X15_c"), ("X16",), ("X6",)],
    "X1": [("X1_c",)],
    "X8": [("X15", "X15_c"), ("X18",)],
    "X18": [("X15", "X15_c"), ("X20",)],
    "X4": [("X11",), ("X12",), ("X16",), ("X19",)],
    "X9": [("X13",), ("X19",)],
    "X13": [("X11",), ("X14",), ("X15", "X15_c"), ("X19",), ("X9",)],
    "X14": [("X11",), ("X13",), ("X15", "X15_c")],
    "X15": [("X15_c",)],
    "X17": [("X1", "X1_c"), ("X16", "X4"), ("X20",), ("X6",)],
    "X16": [("X4",), ("X7",)],
    "X2": [("X15", "X15_c"), ("X18",)],
}
MXM_HAILFINDER = {
    "CombVerMo": [("AreaMeso_ALS",)],
    "CapChange": [("CompPlFcst",)],
    "ScenRelAMCIN": [("Scenario", "ScnRelPlFcst")],
    "N0_7muVerMo": [("AreaMeso_ALS", "CombVerMo")],
    "SatContMoist": [("CldShadeOth",), ("CombMoisture",)],
    "CombMoisture": [("AreaMoDryAir",), ("RaoContMoist",), ("SatContMoist",)],
    "AreaMoDryAir": [("AreaMeso_ALS", "CombVerMo"), ("CldShadeOth",), ("CombMoisture",)],
}
MXM_TEST = {"test": "g2", "calibration": "asymptotic"}


def _observed(data):
    return data.apply(lambda c: c.astype("category").cat.remove_unused_categories())


@pytest.fixture(scope="module")
def dag_data():
    """A random binary DAG of 20 nodes (seed 7), 2,000 rows, three columns recoded under
    new names (``X_c`` = 1 - X): benchmarks/equivalent.py's ``mxm_cases``."""
    net = random_dag(20, seed=7, max_parents=3)
    data = net.sample(2000, seed=7)
    for v in random.Random(7).sample(list(net.nodes), 3):
        data[f"{v}_c"] = (1 - data[v].astype(int)).astype("category")
    return _observed(data)


def _classes(res):
    return {frozenset(c) for c in res.classes}


def _expected(queues):
    return {frozenset(q) for q in queues}


@pytest.mark.parametrize("target", sorted(MXM_DAG))
def test_ses_equals_mxm_on_a_dag_with_copies(dag_data, target):
    res = mbstat.ses(dag_data, target, alpha=0.05, max_k=3, selection="none",
                     progress=False, **MXM_TEST)
    assert _classes(res) == _expected(MXM_DAG[target])
    n = 1
    for q in MXM_DAG[target]:
        n *= len(q)
    assert res.n_boundaries == n  # MXM's signatures: expand.grid of the queues
    assert {frozenset(b) for b in res.boundaries} == {
        frozenset(s) for s in _grid(MXM_DAG[target])}


def _grid(queues):
    out = [()]
    for q in queues:
        out = [(*s, v) for s in out for v in q]
    return out


def test_ses_equals_mxm_on_hailfinder():
    data = _observed(sample_network("hailfinder", 5000, seed=1))
    for target, queues in MXM_HAILFINDER.items():
        res = mbstat.ses(data, target, alpha=0.05, max_k=3, selection="none",
                         progress=False, **MXM_TEST)
        assert _classes(res) == _expected(queues), target
