"""Speed of the semiparametric calibration of the default discrete tests (g2, "auto").

Three runs where many tests are too sparse for the asymptotic chi-square, timed with the
mbstat found first on the path (run once with the branch, once with a checkout of the
version to compare, alternately: the machine may be shared, so say so with the figures):

1. ``iamb(data, "y", alpha=0.0001)`` on ``make_wide_binary(2000, 5000, seed=1)``
   (``--features`` to change 5000);
2. IAMB over every node of ALARM, 5,000 rows (``blankets(..., method="iamb")``);
3. the same over HAILFINDER.

Besides the time: the tests that were calibrated and a checksum (sum of the log p-values) (equal
checksums: equal results). Run by hand (not by CI):

    PYTHONPATH=. python benchmarks/calibration.py [--case wide|alarm|hailfinder|all]
        [--repeats 1] [--features 5000]
"""
from __future__ import annotations

import argparse

from _timing import timed  # benchmarks/_timing.py, beside this script

import mbstat
from mbstat.datasets import make_wide_binary, sample_network


def run_case(case: str, features: int, repeats: int):
    if case == "wide":
        data = make_wide_binary(n_rows=2000, n_features=features, seed=1)
        mbstat.iamb(data.iloc[:300, -60:], "y", alpha=0.0001)  # compile the kernels

        def fn(_):
            return [mbstat.iamb(data, "y", alpha=0.0001)]
    else:
        data = sample_network(case, 5000, seed=1)
        mbstat.iamb(data.iloc[:300], data.columns[0])  # compile the kernels

        def fn(_):
            return list(mbstat.blankets(data, method="iamb").results.values())
    seconds, results = timed(fn, repeats)
    return seconds, results


def summary(results):
    """Calibrated tests and a checksum of every logged log p-value."""
    calibrated, checksum = 0, 0.0
    for res in results:
        tests = getattr(res, "tests", None)
        if tests is None:
            continue
        if "calibration" in tests:
            calibrated += int((tests["calibration"] == "semiparametric").sum())
        if "log_pvalue" in tests:
            checksum += float(tests["log_pvalue"].sum())
    return calibrated, checksum


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="all", choices=["wide", "alarm", "hailfinder", "all"])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--features", type=int, default=5000)
    args = parser.parse_args()
    cases = ["wide", "alarm", "hailfinder"] if args.case == "all" else [args.case]
    print(f"mbstat from {mbstat.__file__}")
    for case in cases:
        seconds, results = run_case(case, args.features, args.repeats)
        calibrated, checksum = summary(results)
        print(f"{case:<11} {seconds:8.2f} s   semiparametric tests logged: {calibrated:>7}   "
              f"sum of log p: {checksum:.12g}")


if __name__ == "__main__":
    main()
