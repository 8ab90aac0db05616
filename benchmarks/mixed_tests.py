"""Speed of the batched mixed-data CI tests beside statsmodels fitting one model per
candidate (issue #19).

One batch: K candidates (half continuous, half discrete of 3 levels) tested against a
target y given z = (2 continuous columns, 1 discrete of 3 levels), n rows. The reference
fits y's null model given z once and one statsmodels model per candidate (OLS, Logit or
MNLogit: ``fit(disp=0)``), the likelihood ratio 2 (llf1 - llf0); ``mi-cg`` is set beside
statsmodels OLS fits within each stratum of the discrete columns (its definition). The
figure is the ratio of the median wall-clock times (statsmodels / mbstat), and the largest
difference of the statistics is printed to show both compute the same thing.

Second section (``--sections moments``, issue #26): a search's worth of single tests on one
data set (every candidate against y given each pair of continuous columns, with and
without a discrete column), timed with the tests from sufficient statistics (mi-cg's
per-stratum moments, reg-lr's correlation matrix; computed on the first test, counted)
and with the former path that reads the rows for every test (``USE_MOMENTS = False``);
the largest relative difference of the statistics and p-values is printed.

Third section (``--sections levels``, issue #31): the rejection rates of every continuous
and mixed-data test under simulated nulls, Wilson 95% intervals (the README's level
table), in the scenarios of vignettes/mixed_tests.py, a discrete pair of 3 x 3 levels
given two continuous columns (mi-cg's pair logit at 24 df) and one of 2 x 4 skewed levels
given a 3-level discrete and one continuous column at 1,000 rows (27 df, a few rows in the
rarest cells).

Run: ``python benchmarks/mixed_tests.py [--quick] [--n N] [--k K] [--repeats R]
[--sections statsmodels moments levels] [--reps R] [--sizes 200 2000] [--scenarios W ...]
[--tests T ...]`` (timings on a shared machine: read the ratios, not the
seconds).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import timed  # noqa: E402

from mbstat.ci.engine import CITester  # noqa: E402


def frame(n, k, seed=0):
    rng = np.random.default_rng(seed)
    z1, z2 = rng.normal(size=n), rng.normal(size=n)
    zd = rng.integers(0, 3, n)
    cols = {"z1": z1, "z2": z2, "zd": pd.Categorical(zd)}
    for i in range(k):
        if i % 2:
            cols[f"x{i}"] = pd.Categorical(rng.integers(0, 3, n))
        else:
            cols[f"x{i}"] = 0.3 * z1 + rng.normal(size=n)
    eta = z1 - 0.5 * z2 + 0.4 * (zd == 1) + 0.3 * cols["x0"]
    cols["yc"] = eta + rng.normal(size=n)
    cols["yb"] = pd.Categorical((rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int))
    lv = np.column_stack([np.zeros(n), eta, -eta]) + rng.gumbel(size=(n, 3))
    cols["ym"] = pd.Categorical(lv.argmax(axis=1))
    return pd.DataFrame(cols)


def design(df, cols):
    """[1, columns]: numeric columns as they are, categoricals as treatment dummies."""
    dummies = pd.get_dummies(df[list(cols)], drop_first=True, dtype=float)
    return np.column_stack([np.ones(len(df)), dummies.to_numpy(dtype=float)])


Z = ["z1", "z2", "zd"]


def statsmodels_lr(df, xs, y, model):
    """One statsmodels fit of y given z, then one per candidate: the LR statistics."""
    target = df[y].cat.codes.to_numpy() if model is not sm.OLS else df[y].to_numpy()
    kw = {} if model is sm.OLS else {"disp": 0}
    ll0 = model(target, design(df, Z)).fit(**kw).llf
    return np.array([2 * (model(target, design(df, Z + [x])).fit(**kw).llf - ll0)
                     for x in xs])


def statsmodels_cg(df, xs, y):
    """mi-cg's statistic from statsmodels OLS fits within the strata of zd (continuous y:
    y on (z1, z2[, x]) per stratum of zd, or of (x, zd) for a discrete x), with bnlearn's
    residual sd sqrt(RSS / (n_s - p))."""
    from scipy import stats

    def loglik(groups, cols):
        total = 0.0
        for g in np.unique(groups):
            rows = groups == g
            res = sm.OLS(df[y].to_numpy()[rows], design(df[rows], cols)).fit()
            sd = np.sqrt(res.ssr / (rows.sum() - res.model.exog.shape[1]))
            total += stats.norm.logpdf(res.model.endog, res.fittedvalues, sd).sum()
        return total

    zd = df.zd.cat.codes.to_numpy()
    ll0 = loglik(zd, ["z1", "z2"])
    out = []
    for x in xs:
        if isinstance(df[x].dtype, pd.CategoricalDtype):
            out.append(2 * (loglik(zd * 3 + df[x].cat.codes.to_numpy(), ["z1", "z2"]) - ll0))
        else:
            out.append(2 * (loglik(zd, ["z1", "z2", x]) - ll0))
    return np.array(out)


def mbstat_batch(df, xs, y, test):
    return CITester(df, test).test_many(xs, y, Z).statistic


def search_frame(n, p=12, seed=0):
    """p continuous columns (a chain with noise), a 3-level and a 2-level discrete one."""
    rng = np.random.default_rng(seed)
    d1, d2 = rng.integers(0, 3, n), rng.integers(0, 2, n)
    cols = {"d1": pd.Categorical(d1), "d2": pd.Categorical(d2)}
    prev = rng.normal(size=n)
    for j in range(p):
        prev = 0.5 * prev + 0.3 * d1 - 0.2 * d2 + rng.normal(size=n)
        cols[f"c{j}"] = prev
    return pd.DataFrame(cols)


def search_queries(df, test):
    """(x, y, z) of a search: y = c0; z every pair of the other continuous columns, alone
    and with d1; x every other column that reg-lr (continuous only) or mi-cg takes."""
    cont = [c for c in df.columns if c.startswith("c") and c != "c0"]
    out = []
    for pair in __import__("itertools").combinations(cont, 2):
        for z in ([*pair], [*pair, "d1"]) if test == "mi-cg" else ([*pair],):
            xs = [c for c in df.columns if c != "c0" and c not in z and
                  (test == "mi-cg" or c.startswith("c"))]
            out += [(x, "c0", z) for x in xs]
    return out


def moments_section(n_values, repeats):
    """Per-test times with and without sufficient statistics, one search per data set."""
    import mbstat.ci.continuous.mixed as mixed
    import mbstat.ci.continuous.regression as regression

    rows = []
    for n in n_values:
        for test, module in (("mi-cg", mixed), ("reg-lr", regression)):
            queries = search_queries(search_frame(n), test)
            results = {}
            times = {}
            for flag in (False, True):
                def run(i, flag=flag):
                    module.USE_MOMENTS = flag
                    tester = CITester(search_frame(n), test)  # a fresh data set: no cache
                    return np.array([[r.statistic, r.pvalue] for r in
                                     (tester.test(x, y, z) for x, y, z in queries)])
                times[flag], results[flag] = timed(run, repeats)
            module.USE_MOMENTS = True
            a, b = results[True], results[False]
            diff = np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))
            rows.append({"test": test, "n": n, "tests": len(queries),
                         "rows us/test": 1e6 * times[False] / len(queries),
                         "moments us/test": 1e6 * times[True] / len(queries),
                         "ratio": times[False] / times[True], "max rel diff": diff})
    table = pd.DataFrame(rows).set_index(["test", "n"])
    print("A search's single tests, rows read per test (before) vs sufficient statistics "
          f"(after): median of {repeats}")
    print(table.to_string(float_format=lambda v: f"{v:.3g}"))
    return table


def _pair_3x3(rng, n, alt=False):
    """x and y of 3 levels, each a multinomial logit of its own in two continuous z
    columns, independent given them (24 df of mi-cg's pair logit)."""
    Z = rng.normal(size=(n, 2))
    cols = {}
    for name in ("x", "y"):
        eta = Z @ rng.normal(scale=0.8, size=(2, 3))
        P = np.exp(eta - eta.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        cols[name] = pd.Categorical((rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1)
                                    .clip(0, 2))
    return pd.DataFrame({**cols, "zc": Z[:, 0], "zc2": Z[:, 1]})


def _pair_2x4_rarer(rng, n, alt=False):
    """:func:`_pair_2x4_skewed` with rarer levels: y's base probabilities 86 / 9 / 3.5 /
    1.5% (about 83 / 11 / 4 / 2% of the rows), x about 25% ones (a plain chi-square
    rejecting about 70% of nulls)."""
    return _pair_2x4_skewed(rng, n, alt, y_levels=(0.86, 0.09, 0.035, 0.015), x_shift=1.4)


def _pair_2x4_skewed(rng, n, alt=False, y_levels=(0.75, 0.15, 0.07, 0.03), x_shift=0.3):
    """x of 2 levels and y of 4 skewed levels (about 72 / 17 / 7 / 4%), each a logit of its
    own in a continuous column zc and a 3-level discrete zd, independent given them (the
    pair logit at 27 df: 3 strata of zd, [1, zc, zc^2] per logit; the rarest cells of (x, y)
    hold a few rows per stratum at 1,000 rows). The #31 scenario where the pair logit's
    plain chi-square rejected 24.5% of nulls."""
    zd = rng.integers(0, 3, n)
    zc = rng.normal(size=n)
    x = (rng.random(n) < 1 / (1 + np.exp(x_shift - 0.8 * zc - 0.4 * (zd - 1)))).astype(int)
    eta = (np.log(y_levels)[None, :] + np.outer(zc, [0, 0.6, -0.5, 0.8])
           + np.outer(zd - 1, [0, 0.3, 0.4, -0.3]))
    P = np.exp(eta)
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(0, 3)
    return pd.DataFrame({"x": pd.Categorical(x), "y": pd.Categorical(y),
                         "zd": pd.Categorical(zd), "zc": zc})


def levels_section(reps, sizes, seed, only=None, tests_only=None):
    """Rejection rates at 0.05 over ``reps`` null data sets per cell, Wilson 95% intervals:
    the scenarios of vignettes/mixed_tests.py (each test run where the README offers it,
    and beside it) and a discrete pair of 3 x 3 levels given two continuous columns."""
    from statsmodels.stats.proportion import proportion_confint
    from threadpoolctl import threadpool_limits

    import importlib.util

    path = Path(__file__).resolve().parent.parent / "vignettes" / "mixed_tests.py"
    spec = importlib.util.spec_from_file_location("mixed_tests_vignette", path)
    vignette = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vignette)

    scenarios = [*vignette.SCENARIOS, ("discrete pair 3x3, 2 cont z", _pair_3x3,
                                       vignette.MIXED),
                 ("discrete pair 2x4 skewed, zd + 1 cont z", _pair_2x4_skewed,
                  vignette.MIXED, [1000]),
                 ("discrete pair 2x4 rarer levels, zd + 1 cont z", _pair_2x4_rarer,
                  vignette.MIXED, [1000])]
    rows = []
    for name, make, tests, *own_sizes in scenarios:
        if only is not None and not any(o in name for o in only):
            continue
        tests = [t for t in tests if tests_only is None or t in tests_only]
        for n in (own_sizes[0] if own_sizes else sizes):
            rng = np.random.default_rng(seed)
            hits = dict.fromkeys(tests, 0)
            seconds = dict.fromkeys(tests, 0.0)
            with threadpool_limits(1):
                for _ in range(reps):
                    df = make(rng, n, False)
                    z = [c for c in df.columns if c not in ("x", "y")]
                    for t in tests:
                        t0 = time.perf_counter()
                        hits[t] += CITester(df, t).test("x", "y", z).pvalue <= 0.05
                        seconds[t] += time.perf_counter() - t0
            for t in tests:
                low, high = proportion_confint(hits[t], reps, 0.05, method="wilson")
                rows.append({"scenario": name, "n": n, "test": t, "rejected": hits[t],
                             "nulls": reps, "rate": hits[t] / reps, "low": low, "high": high,
                             "holds": low <= 0.05 <= high or high < 0.05,
                             "ms/test": 1000 * seconds[t] / reps})
            print(pd.DataFrame(rows[-len(tests):]).to_string(index=False), flush=True)
    table = pd.DataFrame(rows).set_index(["scenario", "n", "test"])
    print(f"Rejection rates at alpha = 0.05 over {reps} null data sets per cell (Wilson 95%)")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="rows (default 5,000; quick 1,000)")
    parser.add_argument("--k", type=int, default=None,
                        help="candidates (default 100; quick 20)")
    parser.add_argument("--repeats", type=int, default=None, help="default 3; quick 1")
    parser.add_argument("--sections", nargs="+", default=["statsmodels", "moments"],
                        choices=["statsmodels", "moments", "levels"])
    parser.add_argument("--reps", type=int, default=None,
                        help="levels: null data sets per cell (default 500; quick 40)")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="levels: rows (default 200 2000; quick 200)")
    parser.add_argument("--scenarios", nargs="+", default=None,
                        help="levels: scenarios whose name contains one of these words")
    parser.add_argument("--tests", nargs="+", default=None,
                        help="levels: only these tests (default every one a scenario offers)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if "levels" in args.sections:
        levels_section(args.reps or (40 if args.quick else 500),
                       args.sizes or ([200] if args.quick else [200, 2000]), args.seed,
                       args.scenarios, args.tests)
    n = args.n or (1000 if args.quick else 5000)
    k = args.k or (20 if args.quick else 100)
    repeats = args.repeats or (1 if args.quick else 3)
    if "moments" in args.sections:
        moments_section([args.n] if args.n else [2000, 20000], repeats)
    if "statsmodels" not in args.sections:
        return None
    df = frame(n, k)
    xs = [f"x{i}" for i in range(k)]
    rows = []
    for test in ("reg-lr", "mi-cg"):  # compiled kernels loaded before timing
        mbstat_batch(df, xs[:2], "yb", test)
    cases = [("reg-lr, Gaussian (OLS)", "yc", "reg-lr",
              lambda: statsmodels_lr(df, xs, "yc", sm.OLS)),
             ("reg-lr, logistic (Logit)", "yb", "reg-lr",
              lambda: statsmodels_lr(df, xs, "yb", sm.Logit)),
             ("reg-lr, multinomial (MNLogit)", "ym", "reg-lr",
              lambda: statsmodels_lr(df, xs, "ym", sm.MNLogit)),
             ("mi-cg (OLS per stratum)", "yc", "mi-cg", lambda: statsmodels_cg(df, xs, "yc"))]
    for label, y, test, reference in cases:
        t_ref, ref = timed(lambda i: reference(), repeats)
        t_mb, ours = timed(lambda i: mbstat_batch(df, xs, y, test), repeats)
        rows.append({"test": label, "n": n, "candidates": k, "statsmodels s": t_ref,
                     "mbstat s": t_mb, "ratio": t_ref / t_mb,
                     "max |diff| of statistics": float(np.max(np.abs(ref - ours)))})
    table = pd.DataFrame(rows).set_index("test")
    pd.set_option("display.width", 160)
    print(f"One batch of {k} candidates against y given z (2 continuous, 1 discrete), "
          f"n = {n}: median of {repeats}")
    print(table.to_string(float_format=lambda v: f"{v:.3g}"))
    return table


if __name__ == "__main__":
    main()
