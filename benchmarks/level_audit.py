"""Re-measure the user guide's level cells of the continuous and mixed-data tests (and a few
sparse contingency cells) under simulated nulls, with Wilson 95% intervals, on many cores.

Each null data set i of a cell is drawn from ``numpy.random.default_rng([seed, cell, i])``
(the cells' positions in :data:`CELLS`), so a cell's count does not depend on how the
replicates are split between processes, and more replicates extend the same sequence. The
scenarios are those of ``vignettes/mixed_tests.py``, ``benchmarks/mixed_tests.py`` and
``vignettes/sparse_levels.py`` (the same data-generating code, imported). For mi-cg's pair
logit cells the plain chi-square on the pair logit's df is counted beside the default.

``--replicates R`` saves instead, for each data set of a pair logit cell, mi-cg's statistic,
its default p-value and R replicates of its parametric bootstrap (the default's draws first),
from which the p-values with other draws and corrections are formed offline.

Run: ``python benchmarks/level_audit.py [--cells NAME ...] [--reps R] [--seed S] [--jobs J]
[--out FILE.json] [--replicates R]`` (``--list`` names the cells; ``--reps`` overrides
each cell's own count). The user guide's figures (seed 2026): every cell at its own count,
about 2.5 minutes on 16 cores; ``--replicates 200 --cells "mi-cg rarer 1000"``, 5 minutes.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mbstat.ci.engine import CITester  # noqa: E402


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_bench = _load("benchmarks/mixed_tests.py", "mixed_tests_bench")
_vign = _load("vignettes/mixed_tests.py", "mixed_tests_vignette")
_sparse = _load("vignettes/sparse_levels.py", "sparse_levels_vignette")


def _sparse_cell(rows_per_cell, levels=100):
    n = int(round(rows_per_cell * 2 * 3 * levels))
    return lambda rng, n_=None, alt=False: _sparse.sample(rng, n, levels)


def _skewed_g2(rng, n, alt=False):
    """The guide's known gap: x ~ (0.8, 0.2), y ~ (4, 1, 1) / 6, z of two levels."""
    import pandas as pd
    return pd.DataFrame({"x": rng.choice(2, n, p=[0.8, 0.2]),
                         "y": rng.choice(3, n, p=[4 / 6, 1 / 6, 1 / 6]),
                         "z": rng.integers(0, 2, n)})


def _rcot_z3(nonlinear):
    """Nulls given three z columns: x = sum z + e, y = sum z + e, or x = z1^2 + sin(z2) + e,
    y = cos(2 z1) + z3 + e (e ~ N(0, 0.25))."""
    import pandas as pd

    def make(rng, n, alt=False):
        Z = rng.normal(size=(n, 3))
        if nonlinear:
            x = Z[:, 0] ** 2 + np.sin(Z[:, 1]) + 0.5 * rng.normal(size=n)
            y = np.cos(2 * Z[:, 0]) + Z[:, 2] + 0.5 * rng.normal(size=n)
        else:
            x, y = Z.sum(axis=1) + rng.normal(size=n), Z.sum(axis=1) + rng.normal(size=n)
        return pd.DataFrame({"x": x, "y": y, "z1": Z[:, 0], "z2": Z[:, 1], "z3": Z[:, 2]})
    return make


#: name: (data maker (rng, n, alt), rows, tests, default replicates)
CELLS = {
    "mi-cg skewed 1000": (_bench._pair_2x4_skewed, 1000, ["mi-cg"], 2000),
    "mi-cg rarer 1000": (_bench._pair_2x4_rarer, 1000, ["mi-cg"], 1000),
    "mi-cg pair3x3 200": (_bench._pair_3x3, 200, ["mi-cg"], 1500),
    "heavy 200": (_vign.heavy, 200, ["fisher_z", "spearman", "normal-scores"], 4000),
    "gaussian 50": (_vign.gaussian, 50, ["fisher_z", "spearman", "normal-scores"], 4000),
    "cg 200": (_vign.cg, 200, ["mi-cg", "reg-lr"], 4000),
    "logistic 200": (_vign.logistic, 200, ["mi-cg", "reg-lr"], 4000),
    "g2 sparse 0.5/cell": (_sparse_cell(0.5), None, ["g2"], 2000),
    "g2 sparse 10/cell": (_sparse_cell(10), None, ["g2"], 2000),
    "g2 skewed margins 100": (_skewed_g2, 100, ["g2"], 4000),
    # appended after the guide's figures were measured (a cell's seed is its position)
    "pair2x2 200": (_vign.discrete_pair, 200, ["mi-cg", "reg-lr"], 1000),
    "rcot gaussian 200": (_vign.gaussian, 200, ["rcot"], 2000),
    "rcot nonlinear 200": (_vign.nonlinear, 200, ["rcot"], 4000),
    "rcot nonlinear 2000": (_vign.nonlinear, 2000, ["rcot"], 1000),
    # rcot's power on the vignette's alternatives (rejection rates, not levels)
    "rcot nonlinear alt 200": (lambda rng, n, alt=False: _vign.nonlinear(rng, n, True), 200,
                               ["rcot"], 500),
    "rcot gaussian alt 200": (lambda rng, n, alt=False: _vign.gaussian(rng, n, True), 200,
                              ["rcot"], 500),
    "rcot gaussian z3 200": (_rcot_z3(False), 200, ["rcot"], 1000),
    "rcot nonlinear z3 200": (_rcot_z3(True), 200, ["rcot"], 1000),
}
#: df of mi-cg's pair logit per cell (the plain chi-square counted beside the default)
_PAIR_DF = {"mi-cg skewed 1000": 27, "mi-cg rarer 1000": 27, "mi-cg pair3x3 200": 24,
            "pair2x2 200": 3}


def one(args):
    """The p-values of the tests of cell ``name`` (those of ``only`` if given) on null data
    set ``i``."""
    name, i, seed, only = args
    make, n, tests, _ = CELLS[name]
    tests = [t for t in tests if only is None or t in only]
    rng = np.random.default_rng([seed, list(CELLS).index(name), i])
    df = make(rng, n, False)
    z = [c for c in df.columns if c not in ("x", "y")]
    out = {}
    for t in tests:
        r = CITester(df, t).test("x", "y", z)
        out[t] = float(r.pvalue)
        if t == "mi-cg" and name in _PAIR_DF:
            out["mi-cg plain"] = float(stats.chi2.sf(r.statistic, _PAIR_DF[name]))
    return out


def replicates(args):
    """mi-cg's statistic, p-value and ``R`` parametric bootstrap replicates (stages 0, 1, ...,
    the first ones those the default draws) on null data set ``i`` of a pair logit cell;
    no replicates (an empty row) where the pair logit keeps its plain chi-square."""
    from mbstat.ci.continuous import mixed

    name, i, seed, R = args
    make, n, _, _ = CELLS[name]
    rng = np.random.default_rng([seed, list(CELLS).index(name), i])
    df = make(rng, n, False)
    z = [c for c in df.columns if c not in ("x", "y")]
    seen = []
    original = mixed.PairBootstrap.null_moments

    def spy(self, cx, cy, *rest, **kw):
        seen.append((self, cx, cy))
        return original(self, cx, cy, *rest, **kw)

    mixed.PairBootstrap.null_moments = spy
    try:
        r = CITester(df, "mi-cg").test("x", "y", z)
    finally:
        mixed.PairBootstrap.null_moments = original
    reps = np.full(R, np.nan)
    if seen:
        boot, cx, cy = seen[0]
        reps = np.concatenate([boot.replicates(cx, cy, s)
                               for s in range(R // mixed.BOOTSTRAP_STAGE)])
    return float(r.statistic), float(r.pvalue), reps


def wilson(k, n):
    low, high = proportion_confint(k, n, 0.05, method="wilson")
    return [100 * k / n, 100 * low, 100 * high]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=list(CELLS))
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--out", default=None)
    parser.add_argument("--tests", nargs="+", default=None,
                        help="only these of each cell's tests (the same data sets)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--replicates", type=int, default=0,
                        help="pair logit cells: save R bootstrap replicates per data set "
                             "(statistic, default p-value, replicates) to OUT_<cell>.npz")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(CELLS))
        return None
    from multiprocessing import get_context
    if args.replicates:
        with get_context("fork").Pool(args.jobs) as pool:
            for name in args.cells:
                reps = args.reps or CELLS[name][3]
                t0 = time.perf_counter()
                got = pool.map(replicates, [(name, i, args.seed, args.replicates)
                                            for i in range(reps)], chunksize=2)
                stem = args.out or "level_audit"
                np.savez_compressed(f"{stem}_{name.replace(' ', '_').replace('/', '-')}.npz",
                                    statistic=np.array([g[0] for g in got]),
                                    pvalue=np.array([g[1] for g in got]),
                                    replicates=np.array([g[2] for g in got]))
                print(f"{name}: {reps} data sets, {time.perf_counter() - t0:.0f} s", flush=True)
        return None
    for name in args.cells:  # compile every kernel once before forking
        one((name, 10 ** 6, args.seed, args.tests))
    results = {}
    with get_context("fork").Pool(args.jobs) as pool:
        for name in args.cells:
            reps = args.reps or CELLS[name][3]
            t0 = time.perf_counter()
            ps = pool.map(one, [(name, i, args.seed, args.tests) for i in range(reps)],
                          chunksize=4)
            cell = {}
            for t in ps[0]:
                p = np.array([d[t] for d in ps])
                cell[t] = {"reps": reps, "at 0.05": wilson(int((p <= 0.05).sum()), reps),
                           "at 0.01": wilson(int((p <= 0.01).sum()), reps),
                           "p": p.round(6).tolist()}
                lo = cell[t]["at 0.05"]
                print(f"{name:24s} {t:14s} {reps:5d}  {lo[0]:5.2f}% [{lo[1]:.2f}, {lo[2]:.2f}]"
                      f"  at 0.01: {cell[t]['at 0.01'][0]:.2f}%", flush=True)
            cell["seconds"] = time.perf_counter() - t0
            results[name] = cell
            if args.out:
                Path(args.out).write_text(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
