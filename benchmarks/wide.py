"""Wide data (#17): every CI learner on 2,000 rows x 20,000 and 140,000 sparse binary features.

The data is :func:`mbstat.datasets.make_wide_binary` (THROMBIN-shaped: about 1.5% ones,
a binary target with 3 parents, 2 children and their 2 spouses, and noisy copies of the
parents and children outside the blanket), stored once as a ``scipy.sparse`` matrix. Each
learner runs in a fresh subprocess, so its peak resident memory (``ru_maxrss``) is its own
run's (loading and encoding the data included); the time is the learner's call on the
encoded ``Dataset`` (encoding is timed apart). Printed beside the figures the issue
measured before this work (2-core machine): ``iamb`` 3.2 s and ``gs_m`` 2.9 s at 20,000
features; ``mbor`` 76 s and 8,013,307 tests in one run, more than 600 s and 3.0 GB in
another; ``fsdms`` more than 600 s (2.4 GB). Targets: ``mbor`` (alpha 0.0001) within
5 minutes and ``iamb`` within 30 s at 140,000 features, at most 4 GB, true members found;
``fsdms`` within 60 s at 20,000.

``--calibration``: "auto" is the default of the discrete tests (sparse tables get the
semiparametric p-value; their 2 x 2 strata, all of them for binary x and y, add exact
hypergeometric moments, the other sparse strata 100 permutations; a test whose permuted
strata are all 2 x 2 takes the tail of their exact law, enumerated or by saddlepoint);
"auto-chi2" is "auto" with the scaled chi-square for those tests too (before the tails:
``contingency.SADDLEPOINT`` off); "asymptotic" is the paper's chi-square. "asymptotic" and
"auto" are run by default. Before the exact moments, "auto" took about 110 s for ``iamb``
at 20,000 features (every test permuted its rows 100 times). With ``--seed 1`` the scaled
chi-square admitted the false member X14048 at 20,000 features (p = 5.9e-5 against an
exact permutation p-value of 0.0021).

    PYTHONPATH=. python benchmarks/wide.py            # 20,000 and 140,000 features
    PYTHONPATH=. python benchmarks/wide.py --quick    # 20,000; iamb, mbor, fsdms; asymptotic
    PYTHONPATH=. python benchmarks/wide.py --features 20000 --learners iamb mbor \
        --calibration auto auto-chi2 --seed 1         # the 2 x 2 tails against the chi-square
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

CI_LEARNERS = ["iamb", "inter_iamb", "fast_iamb", "iamb_fdr", "gs_m", "fbed", "mbor",
               "mb_to_pc", "mmpc", "mmmb", "hiton_pc", "hiton_mb", "si_hiton_pc"]
#: The issue's figures before this work (20,000 features, 2 cores): seconds, tests, GB.
BEFORE = {("iamb", 20000): "3.2 s", ("gs_m", 20000): "2.9 s",
          ("mbor", 20000): "76 s, 8,013,307 tests; >600 s, 3.0 GB in another run",
          ("fsdms", 20000): ">600 s, 2.4 GB"}
TARGET = {("iamb", 140000): "<= 30 s, 4 GB", ("mbor", 140000): "<= 300 s, 4 GB",
          ("fsdms", 20000): "<= 60 s"}
PC_ONLY = {"mb_to_pc", "mmpc", "hiton_pc", "si_hiton_pc"}


def child(path: str, learner: str, calibration: str, alpha: float) -> None:
    """Run one learner on the stored data; print one JSON line."""
    import resource

    import numpy as np
    from scipy import sparse

    import mbstat
    from mbstat.data import as_dataset

    stored = np.load(path + ".npz", allow_pickle=False)
    names = [str(v) for v in stored["names"]]
    t0 = time.perf_counter()
    ds = as_dataset(sparse.load_npz(path + ".sparse.npz"), names=names)
    encode = time.perf_counter() - t0
    truth = set(str(v) for v in stored["blanket"])
    pc = {v for v in truth if v[0] in "PC"}
    if calibration == "auto-chi2":  # "auto" without the 2 x 2 tails (the scaled chi-square)
        from mbstat.ci.tables import contingency

        contingency.SADDLEPOINT, calibration = False, "auto"
    t0 = time.perf_counter()
    if learner == "fsdms":
        res = mbstat.fsdms(ds, "y", progress=False)
    else:
        args = {} if calibration == "auto" else {"calibration": calibration}
        res = getattr(mbstat, learner)(ds, "y", alpha=alpha, test="g2", progress=False,
                                       **args)
    seconds = time.perf_counter() - t0
    found = set(res.selected)
    want = pc if learner in PC_ONLY else truth
    print(json.dumps({
        "seconds": round(seconds, 2), "encode s": round(encode, 2), "tests": res.n_tests,
        "found": f"{len(found & want)}/{len(want)}", "false": len(found - truth),
        "selected": len(found), "complete": res.complete,
        "peak GB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}))


def make_data(path: str, n_rows: int, n_features: int, seed: int) -> None:
    import numpy as np
    from scipy import sparse

    from mbstat.datasets import make_wide_binary

    df = make_wide_binary(n_rows, n_features, seed=seed, sparse=True)
    sparse.save_npz(path + ".sparse.npz", df.sparse.to_coo().tocsc())
    np.savez(path + ".npz", names=np.array(df.columns, dtype=str),
             blanket=np.array(df.attrs["blanket"], dtype=str))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--features", type=int, nargs="+", default=[20000, 140000])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--learners", nargs="+", default=CI_LEARNERS + ["fsdms"])
    parser.add_argument("--calibration", nargs="+", default=["asymptotic", "auto"])
    parser.add_argument("--alpha", type=float, default=0.0001)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        path, learner, calibration, alpha = args.child
        return child(path, learner, calibration, float(alpha))
    if args.quick:
        args.features, args.learners = [20000], ["iamb", "mbor", "fsdms"]
        args.calibration, args.timeout = ["asymptotic"], min(args.timeout, 300.0)
    rows = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory() as tmp:
        for p in args.features:
            path = str(Path(tmp) / f"wide{p}")
            t0 = time.perf_counter()
            make_data(path, args.rows, p, args.seed)
            print(f"{args.rows} x {p:,} features generated in {time.perf_counter() - t0:.1f} s",
                  flush=True)
            for learner in args.learners:
                for cal in (["-"] if learner == "fsdms" else args.calibration):
                    cmd = [sys.executable, __file__, "--child", path, learner,
                           "auto" if cal == "-" else cal, str(args.alpha)]
                    try:
                        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                              timeout=args.timeout)
                        out = (json.loads(proc.stdout.strip().splitlines()[-1])
                               if proc.returncode == 0 else
                               {"seconds": "error: " + proc.stderr.strip().splitlines()[-1][:60]})
                    except subprocess.TimeoutExpired:
                        out = {"seconds": f"> {args.timeout:.0f} (stopped)"}
                    row = {"features": p, "learner": learner, "calibration": cal, **out,
                           "before (issue)": BEFORE.get((learner, p), ""),
                           "target": TARGET.get((learner, p), "")}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    table = pd.DataFrame(rows).set_index(["features", "learner", "calibration"])
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string())
    print(f"(alpha = {args.alpha:g}, test g2; 'found' counts the true blanket members "
          "selected (parents and children for PC learners); timings on a shared 2-core "
          "machine)")


if __name__ == "__main__":
    main()
