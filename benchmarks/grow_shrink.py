"""Speed of GS^(m) and RGS^(m,k) on the paper's 100-variable near-parity domain.

Margaritis (2009, Fig. 1) reports about 1,000 s for GS^(m) and about 10 s for
RGS^(m,1000) at 100 variables with asymptotic chi-square tests; the targets on a 2-core
machine are GS^(3) under 5 s and RGS^(3,1000) under 1 s with the same tests
(``--calibration asymptotic``, the default here; ``auto``, the package's default, permutes
the sparse tables, which are most of GS^(3)'s 157,000). GS^(1) (classic Grow-Shrink) is also
timed against pyCausalFS's GSMB, the only peer implementing it, on the same
data. Then RGS^(3,1000)'s F1 over seeds 0-9 beside GS^(3)'s, on the domain of
issue 13.5 (``make_parity(100, 1000, noise=0.1, seed=7)``, alpha 0.05), where
GS^(3) finds exactly {X2, X3, X4}. Run by hand:

    PYTHONPATH=. python benchmarks/grow_shrink.py [--repeats 3] [--seeds 10] [--profile]
    PYTHONPATH=. python benchmarks/grow_shrink.py --quick   # 1 repeat, seeds 0-2

``--profile`` prints where a GS^(3) run spends its time (cProfile, top 20).
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import warnings

import numpy as np

from _timing import timed  # benchmarks/_timing.py, beside this script

from mbstat.algorithms.grow_shrink import gs_m, rgs
from mbstat.bn import blanket_scores
from mbstat.datasets import make_parity

PAPER_SECONDS = {"GS^(3)": 1000.0, "RGS^(3,1000)": 10.0}
TARGET_SECONDS = {"GS^(3)": 5.0, "RGS^(3,1000)": 1.0}
TRUTH = {"X2", "X3", "X4"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--vars", type=int, default=100)
    parser.add_argument("--alpha", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--calibration", default="asymptotic",
                        help="calibration of the timed G2 tests: 'asymptotic' (default: the "
                             "paper's and GSMB's chi-square) or 'auto' (the package default, "
                             "which permutes the sparse tables: most of GS^(3)'s)")
    parser.add_argument("--seeds", type=int, default=10,
                        help="RGS seeds 0..N-1 of the F1 table (default 10)")
    parser.add_argument("--f1-data-seed", type=int, default=7,
                        help="seed of the F1 table's data set (default 7, issue 13.5)")
    parser.add_argument("--f1-alpha", type=float, default=0.05,
                        help="level of the F1 table (default 0.05, the learners' default)")
    parser.add_argument("--quick", action="store_true", help="1 repeat, 3 seeds")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.seeds = 1, min(args.seeds, 3)
    warnings.simplefilter("ignore", RuntimeWarning)  # constant distractor columns (df = 0)

    data = make_parity(args.vars, args.rows, noise=0.1, bit_p=0.6, seed=args.seed)
    cal = {"calibration": args.calibration}
    gs_m(make_parity(8, 200, seed=0), "X1", m=3, **cal)  # load the compiled kernels first
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"near-parity domain: {args.vars} variables, {args.rows} rows, noise 0.1, "
          f"alpha = {args.alpha:g}; {os.cpu_count()} CPUs, load average {load:.2f}; "
          f"median of {args.repeats} runs; G2 tests, calibration={args.calibration!r}")
    header = f"{'algorithm':<14}{'seconds':>9}{'tests':>9}{'us/test':>9}{'F1':>6}  " \
             f"{'vs paper':>9}{'target':>8}  blanket"
    print(header)
    print("-" * len(header))
    rows = {}
    for label, fn in (
        ("GS^(1)", lambda i: gs_m(data, "X1", m=1, alpha=args.alpha, **cal)),
        ("GS^(2)", lambda i: gs_m(data, "X1", m=2, alpha=args.alpha, **cal)),
        ("GS^(3)", lambda i: gs_m(data, "X1", m=3, alpha=args.alpha, **cal)),
        ("RGS^(1,1000)", lambda i: rgs(data, "X1", m=1, k=1000, seed=i, alpha=args.alpha, **cal)),
        ("RGS^(3,1000)", lambda i: rgs(data, "X1", m=3, k=1000, seed=i, alpha=args.alpha, **cal)),
    ):
        seconds, res = timed(fn, args.repeats)
        rows[label] = (seconds, res)
        paper = PAPER_SECONDS.get(label)
        target = TARGET_SECONDS.get(label)
        vs_paper = f"{paper / seconds:8.0f}x" if paper else f"{'':>9}"
        ok = ("" if target is None else ("ok" if seconds < target else "MISSED")).rjust(8)
        f1 = blanket_scores(res.blanket, TRUTH)["F1"]
        print(f"{label:<14}{seconds:9.3f}{res.n_tests:9d}{1e6 * seconds / max(res.n_tests, 1):9.1f}"
              f"{f1:6.2f}  {vs_paper}{ok}  {', '.join(res.blanket)}")

    # peer: classic Grow-Shrink in pyCausalFS (one G2 test per Python call)
    try:
        from pyCausalFS.CBD.MBs.GSMB import GSMB
    except ImportError:
        print("\npeer pyCausalFS not installed: pip install pycausalfs  (skipped)")
    else:
        values = data.to_numpy()
        target = list(data.columns).index("X1")
        seconds, (mb, n_ci) = timed(lambda i: GSMB(values, target, args.alpha), args.repeats)
        ours = rows["GS^(1)"][0]
        names = sorted(data.columns[j] for j in mb)
        print(f"\npyCausalFS GSMB (GS^(1)): {seconds:.3f} s, {n_ci} tests, blanket {names}; "
              f"mbstat gs_m(m=1) is {seconds / ours:.1f}x faster "
              f"({rows['GS^(1)'][1].n_tests} tests)")

    gs3 = rows["GS^(3)"][1]
    per_pass = gs3.tests.groupby(gs3.tests["z"]).size()
    print(f"\nGS^(3): {gs3.n_tests} tests in {len(per_pass)} conditioning sets; the largest "
          f"growth pass ran {per_pass.max()} tests (all subsets of size <= 3 of the rest).")
    f1_over_seeds(args)
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        gs_m(data, "X1", m=3, alpha=args.alpha, **cal)
        prof.disable()
        print("\nwhere GS^(3) spends its time (cProfile, cumulative):")
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)
    return rows


def f1_over_seeds(args):
    """RGS^(3,1000) over seeds 0..N-1 beside GS^(3) (deterministic) on one data set."""
    data = make_parity(args.vars, args.rows, noise=0.1, bit_p=0.6, seed=args.f1_data_seed)
    gs3 = gs_m(data, "X1", m=3, alpha=args.f1_alpha)
    gs_f1 = blanket_scores(gs3.blanket, TRUTH)["F1"]
    print(f"\nF1 of the boundary of X1, make_parity({args.vars}, {args.rows}, noise=0.1, "
          f"seed={args.f1_data_seed}), alpha = {args.f1_alpha:g}:")
    print(f"GS^(3): F1 {gs_f1:.2f}, {gs3.n_tests} tests, {gs3.elapsed:.2f} s, "
          f"blanket {sorted(gs3.blanket)}")
    header = f"{'RGS^(3,1000)':<14}{'F1':>6}{'tests':>8}{'seconds':>9}  false members"
    print(header)
    print("-" * len(header))
    scores = []
    for seed in range(args.seeds):
        res = rgs(data, "X1", m=3, k=1000, seed=seed, alpha=args.f1_alpha)
        f1 = blanket_scores(res.blanket, TRUTH)["F1"]
        scores.append(f1)
        false = sorted(set(res.blanket) - TRUTH)
        missed = sorted(TRUTH - set(res.blanket))
        extra = ", ".join(false) or "-"
        if missed:
            extra += f" (missed {', '.join(missed)})"
        print(f"{'seed ' + str(seed):<14}{f1:6.2f}{res.n_tests:8d}{res.elapsed:9.3f}  {extra}")
    perfect = sum(f == 1.0 for f in scores)
    print(f"RGS^(3,1000): F1 = 1 for {perfect} of {len(scores)} seeds, mean F1 "
          f"{np.mean(scores):.3f}; GS^(3): F1 {gs_f1:.2f}")
    return scores


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
