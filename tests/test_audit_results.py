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
