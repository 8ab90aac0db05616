"""Far-tail level of the default discrete test (g2, calibration "auto") under sparse nulls.

The design of tests/test_table_sampling.py::test_level_under_sparse_nulls at n = 2,000:
7 binary z, y and sparse binary x (1-5% ones) dependent on z alone, so that every test is
null and calibrated (under 5 rows per cell). Each data set tests 250 candidates; 400 data
sets give about 100,000 null tests (80 with ``--quick``: 20,000). Printed: rejections at
0.05, 0.01, 1e-3 and 1e-4 with 95% Wilson intervals, with the 2 x 2 tails (tests whose
permuted strata are all 2 x 2 take the tail of their exact permutation law: enumerated,
code "exact", or Lugannani-Rice saddlepoint) and without them (the scaled chi-square,
``contingency.SADDLEPOINT`` off), on the same data.

    PYTHONPATH=. python benchmarks/calibration_tail.py [--quick]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from mbstat import ci_test_batch
from mbstat.ci.tables import contingency
from mbstat.ci.result import CALIBRATIONS


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="80 data sets (20,000 tests)")
    parser.add_argument("--sets", type=int, default=400)
    args = parser.parse_args(argv)
    sets = 80 if args.quick else args.sets
    n, n_z, shares, k = 2000, 7, (0.003, 0.05), 250
    rng = np.random.default_rng(n)
    names = [f"x{j}" for j in range(k)]
    zs = [f"z{j}" for j in range(n_z)]
    found = {True: [], False: []}
    t0 = time.perf_counter()
    for rep in range(sets):
        z = rng.integers(0, 2, (n, n_z))
        signal = z @ rng.normal(0.0, 0.7, n_z)
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(1.0 - signal))).astype(int)
        share = rng.uniform(*shares, k)[None, :] * np.exp(0.5 * signal)[:, None]
        frame = pd.DataFrame((rng.random((n, k)) < share).astype(int), columns=names)
        frame["y"] = y
        frame[zs] = z
        frame = frame.astype("category")
        for tails in (True, False):
            contingency.SADDLEPOINT = tails
            table = ci_test_batch(frame, names, "y", zs, test="g2", seed=rep).table
            found[tails].append(table[table[:, 1] > 0][:, [2, 5]])  # df 0: nothing tested
    contingency.SADDLEPOINT = True
    print(f"{sets} data sets in {time.perf_counter() - t0:.0f} s")
    for tails in (False, True):
        got = np.concatenate(found[tails])
        m = len(got)
        codes = {CALIBRATIONS[int(c)]: int(v) for c, v in
                 zip(*np.unique(got[:, 1], return_counts=True))}
        print(("2 x 2 tails (exact / saddlepoint)" if tails else "scaled chi-square"),
              f"{m} null tests, calibrations {codes}")
        for alpha in (0.05, 0.01, 1e-3, 1e-4):
            r = int(np.count_nonzero(got[:, 0] < alpha))
            lo, hi = proportion_confint(r, m, alpha=0.05, method="wilson")
            print(f"  p < {alpha:g}: {r} rejections ({alpha * m:.1f} expected), rate "
                  f"{r / m:.2e}, 95% Wilson [{lo:.2e}, {hi:.2e}]")


if __name__ == "__main__":
    main()
