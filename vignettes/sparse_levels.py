# %% [markdown]
# # Do the discrete CI tests hold their level on sparse tables?
#
# The chi-square approximation of G2 and X2 needs enough rows per cell. On sparse
# stratified tables G2 is biased upward (Williams 1976: about df (1 + 1/|X|)(1 + 1/|Y|)
# / 6m at m rows per cell) and the bias of the strata adds up, so a test with many
# strata rejects true nulls far more often than alpha, even at 10-20 rows per cell.
# This script measures the rejection rate under the null of every discrete test of
# :data:`mbstat.TESTS` at several sparsity levels:
#
# * x (2 levels), y (3 levels) and z (``--levels`` levels, 100 by default: df 200)
#   independent and uniform; rows = m x 2 x 3 x levels for m = 0.5 .. 50 rows per cell;
#   plus the case of issue #13 (z of 300 levels, 3,000 rows: 1.67 rows per cell);
# * each test at alpha = 0.05 on ``--reps`` independent data sets (200 by default),
#   with a Wilson 95% interval (statsmodels ``proportion_confint``);
# * the defaults: ``g2`` and ``x2`` take the asymptotic chi-square where it can be
#   trusted (5 rows per cell or more, and G2's estimated small-sample bias under 0.1
#   standard deviation) and the semiparametric one elsewhere: a chi-square fitted to the
#   mean and variance of 100 permuted statistics (``sp-g2``, ``sp-x2``); "sp-g2 (mean)"
#   fits the mean only, as bnlearn's ``sp-mi``. ``g2-adf`` and ``x2-adf`` skip the test
#   (assume independence) below 5 rows per cell, as bnlearn's ``mi-adf`` and ``x2-adf``;
#   "asymptotic" rows show ``g2``/``x2`` forced to the chi-square (bnlearn's ``mi``,
#   ``x2``); ``mc-g2``/``mc-x2`` run ``--mc-B`` permutations (500 by default: a
#   permutation p-value holds its level at any B).
#
# A second table repeats the null on skewed data, as real conditioning sets are: z of 200
# levels with Zipf frequencies (many near-empty strata), x and y of skewed margins. A
# third checks power: y depends on x in every stratum (``--effect``); the defaults must
# still detect it.
#
# Run: ``python vignettes/sparse_levels.py [--quick] [--out DIR] [--reps R]``
# (full mode: about 5 minutes on 2 cores; ``--quick``: about 10 seconds).

# %%
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from mbstat.ci.engine import CITester

ALPHA = 0.05
#: (label, registered test, its arguments)
TESTS = [
    ("g2 (default)", "g2", {}),
    ("g2 asymptotic", "g2", {"calibration": "asymptotic"}),
    ("g2-adf", "g2-adf", {}),
    ("sp-g2", "sp-g2", {}),
    ("sp-g2 (mean)", "sp-g2", {"match": "mean"}),
    ("mc-g2", "mc-g2", None),  # B from --mc-B
    ("x2 (default)", "x2", {}),
    ("x2 asymptotic", "x2", {"calibration": "asymptotic"}),
    ("x2-adf", "x2-adf", {}),
    ("sp-x2", "sp-x2", {}),
    ("mc-x2", "mc-x2", None),
]
DEFAULTS = ("g2 (default)", "x2 (default)")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="rejection rates of the discrete CI tests")
    parser.add_argument("--quick", action="store_true", help="few levels, few replicates")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "mbstat_vignettes"),
                        help="folder for the CSV (default: mbstat_vignettes in the temp folder)")
    parser.add_argument("--reps", type=int, default=None,
                        help="data sets per cell of the table (default 200, quick 20)")
    parser.add_argument("--levels", type=int, default=100, help="levels of z (default 100)")
    parser.add_argument("--mc-B", type=int, default=None,
                        help="permutations of mc-g2 and mc-x2 (default 500, quick 99)")
    parser.add_argument("--effect", type=float, default=0.15,
                        help="power table: P(y = x) raised by this much (default 0.15)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def settings(quick: bool, levels: int) -> list:
    """(label, rows per cell, z levels, rows) of each column of the table."""
    per_cell = [0.5, 2, 10] if quick else [0.5, 1, 2, 5, 10, 20, 50]
    out = [(f"{m:g}", m, levels, int(round(m * 6 * levels))) for m in per_cell]
    out.append(("1.67 (#13)", 3000 / 1800, 300, 3000))
    return out


def sample(rng, n, levels, effect=0.0) -> pd.DataFrame:
    """x, y, z independent and uniform; with ``effect`` > 0, y copies x (as 0/1 of its
    three levels) with that probability, in every stratum."""
    x = rng.integers(0, 2, n)
    y = rng.integers(0, 3, n)
    if effect:
        y = np.where(rng.random(n) < effect, x, y)
    return pd.DataFrame({"x": x, "y": y, "z": rng.integers(0, levels, n)})


def sample_skewed(rng, n, levels, effect=0.0) -> pd.DataFrame:
    """x (3 levels: 70/20/10%), y (4 levels: 50/30/15/5%) and z (Zipf frequencies, exponent
    1.3, over ``levels`` levels) independent."""
    w = 1.0 / np.arange(1, levels + 1) ** 1.3
    return pd.DataFrame({"x": rng.choice(3, n, p=[0.7, 0.2, 0.1]),
                         "y": rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05]),
                         "z": rng.choice(levels, n, p=w / w.sum())})


def rejection_rates(columns, reps, mc_b, seed, effect=0.0, tests=TESTS,
                    draw=sample) -> pd.DataFrame:
    """One row per (test, column): rejections at ALPHA over ``reps`` data sets."""
    rows = []
    for c, (label, m, levels, n) in enumerate(columns):
        rng = np.random.default_rng([seed, c, int(effect * 1000)])
        counts = {name: 0 for name, *_ in tests}
        calibrations = {name: set() for name, *_ in tests}
        seconds = {name: 0.0 for name, *_ in tests}
        for _ in range(reps):
            data = draw(rng, n, levels, effect)
            for name, test, args in tests:
                args = {"B": mc_b} if args is None else args
                t0 = time.perf_counter()
                res = CITester(data, test, alpha=ALPHA, **args).test("x", "y", ["z"])
                seconds[name] += time.perf_counter() - t0
                counts[name] += res.pvalue <= ALPHA and not res.skipped
                calibrations[name].add(res.calibration)
        for name, *_ in tests:
            lo, hi = proportion_confint(counts[name], reps, alpha=0.05, method="wilson")
            rows.append({"test": name, "column": label, "rows_per_cell": m, "z_levels": levels,
                         "rows": n, "rate": counts[name] / reps, "lo": lo, "hi": hi,
                         "reps": reps, "calibration": "/".join(sorted(calibrations[name])),
                         "ms_per_test": 1e3 * seconds[name] / reps})
    return pd.DataFrame(rows)


def wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Rejection rate with its Wilson interval, in %, one column per sparsity level."""
    cell = frame.apply(lambda r: f"{100 * r.rate:4.1f} [{100 * r.lo:4.1f}, {100 * r.hi:4.1f}]",
                       axis=1)
    table = frame.assign(cell=cell).pivot(index="test", columns="column", values="cell")
    order = list(dict.fromkeys(frame["test"]))
    return table.loc[order, list(dict.fromkeys(frame["column"]))]


def show(frame: pd.DataFrame) -> None:
    """Print the wide table of ``frame``."""
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(wide(frame).to_string())


def main(argv=None) -> pd.DataFrame:
    args = parse_args(argv)
    reps = args.reps or (20 if args.quick else 200)
    mc_b = args.mc_B or (99 if args.quick else 500)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    columns = settings(args.quick, args.levels)
    rejection_rates(columns[:1], 1, 9, args.seed)  # load the compiled kernels off the clock
    t0 = time.perf_counter()
    null = rejection_rates(columns, reps, mc_b, args.seed)
    print(f"Rejection rates under the null at alpha = {ALPHA} (%, Wilson 95% interval), "
          f"{reps} data sets per cell;")
    print(f"x: 2 levels, y: 3, z: {args.levels} (df {2 * args.levels}); columns: rows per "
          f"cell of the full table (rows = that x {6 * args.levels}); mc tests: B = {mc_b}.")
    show(null)
    defaults = null[null["test"].isin(DEFAULTS)]
    held = (defaults["lo"] <= ALPHA).all()
    worst = defaults.loc[defaults["rate"].idxmax()]
    print(f"\ndefaults within the level (every Wilson interval reaches {ALPHA:g}): {held}; "
          f"highest rate {100 * worst.rate:.1f}% ({worst.test}, {worst.column} rows per cell)")
    calib = null[null["test"].isin(DEFAULTS)].pivot(index="test", columns="column",
                                                    values="calibration")
    print("calibration the defaults used:")
    print(calib[list(dict.fromkeys(null["column"]))].to_string())
    timing = null.pivot(index="test", columns="column", values="ms_per_test")
    print("\nmilliseconds per test:")
    print(timing.loc[list(dict.fromkeys(null["test"])), list(dict.fromkeys(null["column"]))]
          .round(2).to_string())

    skew_tests = [t for t in TESTS if t[0] in ("g2 (default)", "g2 asymptotic", "g2-adf",
                                                "mc-g2", "x2 (default)", "x2 asymptotic")]
    skew_columns = [(f"{n}", n / (3 * 4 * 200), 200, n) for n in
                    ((1000, 10000) if args.quick else (1000, 3000, 10000))]
    skewed = rejection_rates(skew_columns, reps, mc_b, args.seed + 2, tests=skew_tests,
                             draw=sample_skewed)
    print(f"\nSkewed data under the null: z of 200 Zipf levels, x 3 and y 4 skewed levels "
          f"(df 1200); columns: rows ({reps} data sets per cell; %, Wilson 95% interval)")
    show(skewed)
    skew_defaults = skewed[skewed["test"].isin(DEFAULTS)]
    print(f"defaults within the level on skewed data: {(skew_defaults['lo'] <= ALPHA).all()}")

    power_tests = [t for t in TESTS if t[0] in ("g2 (default)", "g2 asymptotic",
                                                 "sp-g2 (mean)", "mc-g2", "x2 (default)")]
    power = rejection_rates(columns, max(10, reps // 4), mc_b, args.seed + 1, args.effect,
                            power_tests)
    print(f"\nPower: y copies x with probability {args.effect:g} in every stratum "
          f"({max(10, reps // 4)} data sets per cell; %, Wilson 95% interval)")
    show(power)
    pd.concat([null.assign(kind="null"), skewed.assign(kind="null, skewed")]).to_csv(
        out / "sparse_levels.csv", index=False)
    power.assign(kind="power").to_csv(out / "sparse_levels_power.csv", index=False)
    print(f"\n{time.perf_counter() - t0:.0f} s; tables written to {out}")
    return null


if __name__ == "__main__":
    main()
