"""mi-cg and reg-lr from sufficient statistics (issue #26): per-stratum moments for mi-cg,
the correlation matrix (cross-products) for reg-lr's least-squares branch, equal to the
rows path to 1e-10 and to statsmodels where the rows path was wrong."""
import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import mbstat.ci.continuous.mixed as mixed
import mbstat.ci.continuous.regression as regression
from mbstat import ci_test, ci_test_batch
from mbstat.ci.continuous._design import stratum_moments
from mbstat.data import as_dataset

from test_mi_cg_networks import sample_cg
from test_mixed_tests import mixed_frame


def _both(monkeypatch, module, run):
    monkeypatch.setattr(module, "USE_MOMENTS", True)
    fast = run()
    monkeypatch.setattr(module, "USE_MOMENTS", False)
    rows = run()
    monkeypatch.setattr(module, "USE_MOMENTS", True)
    return fast, rows


def _table(r):
    return np.column_stack([r.statistic, r.pvalue, r.df])


@pytest.mark.parametrize("frame", [lambda: sample_cg(400, 3), lambda: mixed_frame(200, 1)])
def test_mi_cg_from_stratum_moments_equals_the_rows(monkeypatch, frame):
    df = frame()
    cols = list(df.columns)
    cont = [c for c in cols if df[c].dtype.kind == "f"]
    for y in cols:  # every target, every z of at most two columns, every other candidate
        others = [c for c in cols if c != y]
        for z in itertools.chain([()], itertools.combinations(others, 1),
                                 itertools.combinations(others, 2)):
            # (a discrete pair is G2 or logits, not least squares: left out)
            xs = [c for c in (others if y in cont else cont) if c not in z and c != y]
            fast, rows = _both(monkeypatch, mixed, lambda: _table(
                ci_test_batch(df, xs, y, list(z), test="mi-cg")))
            np.testing.assert_allclose(fast, rows, rtol=1e-10, atol=1e-10, err_msg=f"{y} {z}")


def test_stratum_moments_are_computed_once_per_data_set_and_strata():
    ds = as_dataset(mixed_frame(200, 1))
    d1, d2 = ds.index("d1"), ds.index("d2")
    a = stratum_moments(ds, [d1, d2])
    assert stratum_moments(ds, [d2, d1]) is a  # any order of the strata's columns
    c1 = ds.index("c1")
    rows = ds.numeric()[:, c1][a.g == 0]
    assert a.counts[0] == len(rows)
    assert a.cross[0, a.pos[c1], a.pos[c1]] == pytest.approx(((rows - rows.mean()) ** 2).sum(),
                                                              rel=1e-12)


def _offsets(n=400, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 5))
    Z[:, 1] += Z[:, 0]
    Z[:, 4] *= 1e-9  # a tiny scale
    df = pd.DataFrame(Z, columns=list("abcef"))
    df["y"] = Z[:, 0] - Z[:, 2] + rng.normal(size=n)
    return df


def test_reg_lr_gaussian_from_cross_products_equals_the_rows(monkeypatch):
    df = _offsets()
    cols = list("abcef")
    for z in itertools.chain([()], *(itertools.combinations(cols, k) for k in (1, 2, 3))):
        xs = [c for c in cols if c not in z]
        fast, rows = _both(monkeypatch, regression, lambda: _table(
            ci_test_batch(df, xs, "y", list(z), test="reg-lr")))
        np.testing.assert_allclose(fast, rows, rtol=1e-10, atol=1e-10, err_msg=str(z))
    # a candidate block of two columns, and a collinear one (the rows path answers)
    fast, rows = _both(monkeypatch, regression, lambda: _table(
        ci_test_batch(df, [("b", "c"), ("a", "b")], "y", [], test="reg-lr")))
    np.testing.assert_allclose(fast, rows, rtol=1e-10, atol=1e-10)


def test_reg_lr_gaussian_at_a_large_offset_equals_statsmodels():
    # 1e8 + 1e-3 s: the rows path took it for a constant (statistic 0, issue 31 item 1)
    df = _offsets()
    rng = np.random.default_rng(1)
    s = rng.normal(size=len(df))
    df["d"] = 1e8 + 1e-3 * s
    df["y"] += 0.3 * s
    shift = df.d.to_numpy() - 1e8  # exact (Sterbenz): the stored signal
    full = sm.OLS(df.y, sm.add_constant(np.column_stack([df.a, shift]))).fit()
    small = sm.OLS(df.y, sm.add_constant(df[["a"]])).fit()
    r = ci_test(df, "d", "y", ["a"], test="reg-lr")
    assert r.statistic == pytest.approx(full.compare_lr_test(small)[0], rel=1e-8)
