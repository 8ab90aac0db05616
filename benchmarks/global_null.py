"""Level of the whole search: false members of every CI learner under a global null.

Every candidate is independent of the target (binary, fair coins), so every member a learner
returns is a false one. For each learner, its default and the papers' uncorrected procedure
(``selection="none"``), the mean number of false members over the replicates with a 95%
interval (normal, from the replicates' variance), and P(any false member) with a Wilson
interval. Issue #25 asks the defaults for at most 0.1 at alpha 0.05.

    python benchmarks/global_null.py                 # 500 rows, 50 candidates, 200 replicates
    python benchmarks/global_null.py --quick         # 40 replicates, 5 learners
    python benchmarks/global_null.py --calibration asymptotic
"""
from __future__ import annotations

import argparse
import inspect
import math
import time
import warnings

import numpy as np
import pandas as pd

import mbstat
from mbstat.algorithms import LEARNERS

#: The learners whose default controls what the search admits, and the argument that
#: restores the paper's uncorrected forward selection.
CI_LEARNERS = [name for name, row in LEARNERS.items() if row.kind == "ci"]


def null_data(rows: int, p: int, seed: int) -> pd.DataFrame:
    """``p`` binary candidates and a binary target T, all mutually independent."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, size=(rows, p + 1))
    cols = [f"X{j + 1}" for j in range(p)] + ["T"]
    return pd.DataFrame(codes, columns=cols).astype("category")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def run(learner: str, datasets, **kwargs) -> dict:
    """False members of ``learner`` on each null data set."""
    func = mbstat.METHODS[learner]
    counts, start = [], time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in datasets:
            counts.append(len(func(d, "T", alpha=0.05, **kwargs).blanket))
    counts = np.array(counts, dtype=float)
    r = len(counts)
    half = 1.96 * counts.std(ddof=1) / math.sqrt(r) if r > 1 else float("nan")
    any_k = int(np.count_nonzero(counts))
    lo, hi = wilson(any_k, r)
    return {"mean": counts.mean(), "ci": f"[{max(0, counts.mean() - half):.3f}, "
                                          f"{counts.mean() + half:.3f}]",
            "P(any)": any_k / r, "P(any) Wilson": f"[{lo:.3f}, {hi:.3f}]",
            "s": time.perf_counter() - start}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--learners", default=",".join(CI_LEARNERS))
    parser.add_argument("--calibration", default=None,
                        help="the test's calibration (default: the test's default)")
    parser.add_argument("--quick", action="store_true",
                        help="40 replicates; iamb, inter_iamb, fbed, mmmb, iamb_fdr")
    args = parser.parse_args(argv)
    learners = args.learners.split(",")
    if args.quick:
        args.replicates = 40
        learners = ["iamb", "inter_iamb", "fbed", "mmmb", "iamb_fdr"]
    datasets = [mbstat.as_dataset(null_data(args.rows, args.candidates, seed))
                for seed in range(args.replicates)]
    extra = {} if args.calibration is None else {"calibration": args.calibration}
    rows = []
    for name in learners:
        for selection in ("default", "none"):
            kwargs = dict(extra)
            if selection == "none":
                if "selection" not in inspect.signature(mbstat.METHODS[name]).parameters:
                    continue  # no papers' rule to report beside (its own rule)
                kwargs["selection"] = "none"
            out = run(name, datasets, **kwargs)
            rows.append({"learner": name, "selection": selection, **out})
            print(f"{name:12s} {selection:8s} mean {out['mean']:.3f} {out['ci']}  "
                  f"P(any) {out['P(any)']:.3f} {out['P(any) Wilson']}  {out['s']:.1f} s",
                  flush=True)
    table = pd.DataFrame(rows).set_index(["learner", "selection"])
    print()
    print(f"Global null: {args.rows} rows, {args.candidates} independent binary candidates, "
          f"{args.replicates} replicates, alpha 0.05")
    print(table.to_string(float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
