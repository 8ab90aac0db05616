"""Speed of stability(): R = 200 resamples of IAMB on a 5,000-row ALARM target.

The goal of issue #18: within 5 s on 2 cores. Timed (median of ``--repeats``) for the
target HR with subsamples of n/2 rows and with bootstrap resamples, for 1 and 2 threads,
with the default test (G2, calibration "auto": semiparametric p-values where a table is
sparse) and with bnlearn's asymptotic G2 (``calibration="asymptotic"``). Beside each figure:
the learner's own time (R runs of IAMB on the same resamples, encoded once, in a plain
loop), so the ratio shows what the resampling machinery adds.

Run by hand (not by CI); the machine may be shared, so say so with the figures:

    PYTHONPATH=. python benchmarks/stability.py [--quick] [--repeats 3] [--R 200]
"""
from __future__ import annotations

import argparse
import time

import pandas as pd

from _timing import timed  # benchmarks/_timing.py, beside this script

import mbstat
from mbstat.data import as_dataset
from mbstat.datasets import sample_network
from mbstat.results.stability import resample_rows
from mbstat.stability import _take_rows

GOAL_SECONDS = 5.0


def learner_only(ds, target, R, seed, size, replace, **test) -> float:
    """Seconds of R IAMB runs on the resamples' rows, nothing else."""
    subs = [_take_rows(ds, resample_rows(seed, r, ds.n_rows, size, replace))
            for r in range(R)]
    start = time.perf_counter()
    for sub in subs:
        mbstat.iamb(sub, target, **test)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="R = 20, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--R", type=int, default=200)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--target", default="HR")
    args = parser.parse_args(argv)
    if args.quick:
        args.R, args.repeats = 20, 1
    data = sample_network("alarm", args.rows, seed=1)
    ds = as_dataset(data)
    rows = []
    for test_name, test in (("g2, calibration auto (default)", {}),
                            ("g2, calibration asymptotic", {"calibration": "asymptotic"})):
        for resample in ("subsample", "bootstrap"):
            size = args.rows if resample == "bootstrap" else args.rows // 2
            mbstat.stability(ds, args.target, R=2, seed=0, resample=resample, threshold=0.5,
                             **test)  # compiled and warm
            alone = learner_only(ds, args.target, args.R, 7, size, resample == "bootstrap",
                                 **test)
            for n_jobs in (1, 2):
                seconds, res = timed(
                    lambda i, n_jobs=n_jobs, resample=resample, test=test: mbstat.stability(
                        data, args.target, R=args.R, seed=7, resample=resample,
                        n_jobs=n_jobs, threshold=0.5, **test), args.repeats)
                rows.append({"test": test_name, "resample": resample, "n_jobs": n_jobs,
                             "seconds": seconds, "learner alone (1 thread)": alone,
                             "ratio": seconds / alone, "tests": res.n_tests,
                             "goal met": seconds <= GOAL_SECONDS})
                print(f"{test_name:<32} {resample:<9} n_jobs={n_jobs}: {seconds:6.2f} s "
                      f"(IAMB alone {alone:6.2f} s)", flush=True)
    table = pd.DataFrame(rows).set_index(["test", "resample", "n_jobs"])
    print(f"\nR = {args.R} resamples of IAMB for {args.target} on {args.rows} ALARM rows "
          f"(median of {args.repeats}); goal: {GOAL_SECONDS:g} s on 2 cores.")
    print(table.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
