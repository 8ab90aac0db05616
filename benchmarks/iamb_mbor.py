"""Speed of IAMB and MBOR on ALARM, against bnlearn's figure and pyCausalFS's MBOR.

1. IAMB for all 37 ALARM nodes at 20,000 rows (G2, alpha = 0.05). R's bnlearn
   (compiled C) takes about 0.3 s for this with about 6,500 tests on this
   machine type; it is run here too when ``Rscript`` with bnlearn is found,
   otherwise that reference figure is printed (marked as not measured).
2. MBOR against pyCausalFS's MBOR (``pip install pycausalfs``; its G2 test is a
   pure-Python loop over rows) on the same 5,000 rows and the same targets:
   time per target, tests and F1, side by side, with the ratio. The peer runs
   on a subset of targets (``--peer-targets``, default 3; "all" for 37).
3. Every other CI learner of the learner table timed beside IAMB on the same 37 nodes
   and 20,000 rows (default test, alpha = 0.05): seconds, tests, and the ratio to IAMB.

Run by hand (not by CI):

    PYTHONPATH=. python benchmarks/iamb_mbor.py [--repeats 5] [--peer-targets 3]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import timed  # benchmarks/_timing.py, beside this script

from mbstat.algorithms.iamb import iamb
from mbstat.algorithms.mbor import mbor
from mbstat.bn import blanket_scores
from mbstat.data import as_dataset
from mbstat.datasets import load_network, sample_network

BNLEARN_SECONDS, BNLEARN_TESTS = 0.3, 6500  # the figures for this machine type
PEER_ORDER = ["LVFAILURE", "HR", "CO", "VENTLUNG", "PCWP", "INTUBATION", "SAO2", "BP"]


def bnlearn_seconds(frame: pd.DataFrame, repeats: int):
    """bnlearn's IAMB on every node (median seconds, tests), or None without R/bnlearn."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "alarm.csv"
        frame.to_csv(csv, index=False)
        script = f"""
suppressMessages(library(bnlearn))
d <- read.csv("{csv}", stringsAsFactors = TRUE)
d[] <- lapply(d, factor)
run <- function() {{ n <- 0; for (v in names(d)) {{
  r <- learn.mb(d, v, method = "iamb", test = "mi", alpha = 0.05); n <- n + 1 }} }}
t <- replicate({repeats}, system.time(run())[["elapsed"]])
cat(median(t), test.counter(), "\\n")
"""
        proc = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True)
        if proc.returncode != 0:
            return None
        seconds, tests = proc.stdout.split()[:2]
        return float(seconds), int(float(tests)) // repeats


def iamb_part(args):
    net = load_network("alarm")
    frame = sample_network(net, 20000, seed=args.seed)
    data = as_dataset(frame)
    iamb(data, net.nodes[0])  # load the compiled kernels
    seconds, results = timed(lambda _: [iamb(data, v) for v in net.nodes], args.repeats)
    frame_seconds, _ = timed(lambda _: [iamb(frame, v) for v in net.nodes], args.repeats)
    tests = sum(r.n_tests for r in results)
    mean_f1 = np.mean([blanket_scores(r.blanket, net.markov_blanket(r.target))["F1"]
                       for r in results])
    print("IAMB, all 37 ALARM nodes, 20,000 rows, G2, alpha = 0.05")
    print(f"  mbstat (Dataset encoded once): {seconds:.3f} s, {tests} tests, "
          f"mean F1 {mean_f1:.3f}")
    print(f"  mbstat (DataFrame each call):  {frame_seconds:.3f} s")
    measured = bnlearn_seconds(frame, args.repeats)
    if measured is None:
        ref, ref_tests, note = BNLEARN_SECONDS, BNLEARN_TESTS, "reference figure, not measured here"
    else:
        (ref, ref_tests), note = measured, "measured in this run"
    print(f"  bnlearn learn.mb(method='iamb'): {ref:.3f} s, ~{ref_tests} tests ({note})")
    print(f"  ratio bnlearn / mbstat: {ref / seconds:.2f}x (Dataset), "
          f"{ref / frame_seconds:.2f}x (DataFrame)\n")


def learners_part(args):
    from mbstat import LEARNERS

    net = load_network("alarm")
    data = as_dataset(sample_network(net, 20000, seed=args.seed))
    print("Every CI learner beside IAMB, all 37 ALARM nodes, 20,000 rows, alpha = 0.05")
    base = None
    for name, row in LEARNERS.items():
        if row.kind != "ci" or name in ("rgs", "mb_to_pc"):  # rgs: anytime, by its budget
            continue
        func = row.function
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(data, net.nodes[0])  # load the compiled kernels
            seconds, results = timed(lambda _: [func(data, v) for v in net.nodes], args.repeats)
        base = seconds if name == "iamb" else base
        ratio = f"{seconds / base:5.2f}x IAMB" if base else ""
        tests = sum(r.n_tests for r in results)
        print(f"  {name:12s} {seconds:7.3f} s  {tests:7d} tests  {ratio}", flush=True)
    print()


def mbor_part(args):
    net = load_network("alarm")
    frame = sample_network(net, args.rows, seed=args.seed)
    data = as_dataset(frame)
    mbor(data, "HR")  # load the compiled kernels
    ours = {}
    for v in net.nodes:
        start = time.perf_counter()
        res = mbor(data, v, alpha=0.05)
        ours[v] = (time.perf_counter() - start, res.n_tests,
                   blanket_scores(res.blanket, net.markov_blanket(v))["F1"])
    total = sum(t for t, _, _ in ours.values())
    print(f"MBOR, ALARM, {args.rows} rows, G2, alpha = 0.05")
    print(f"  mbstat, all 37 targets: {total:.2f} s ({1000 * total / 37:.1f} ms per target), "
          f"{sum(n for _, n, _ in ours.values())} tests, "
          f"mean F1 {np.mean([s for _, _, s in ours.values()]):.3f}")
    try:
        from pyCausalFS.CBD.MBs.MBOR import MBOR as peer_mbor
    except ImportError:
        print("  pyCausalFS not installed: pip install pycausalfs  (peer skipped)")
        return
    k = len(net.nodes) if args.peer_targets == "all" else int(args.peer_targets)
    targets = (PEER_ORDER + [v for v in net.nodes if v not in PEER_ORDER])[:k]
    codes = pd.DataFrame(data.codes.astype(int))  # the peer takes integer codes by position
    rows = []
    warnings.simplefilter("ignore")
    for v in targets:
        start = time.perf_counter()
        found, n_tests = peer_mbor(codes, data.names.index(v), 0.05, True)
        seconds = time.perf_counter() - start
        peer_f1 = blanket_scores([data.names[i] for i in found], net.markov_blanket(v))["F1"]
        t, n, s = ours[v]
        rows.append((v, t, seconds, seconds / t, n, n_tests, s, peer_f1))
        print(f"  {v:<12} mbstat {1000 * t:7.1f} ms  pyCausalFS {seconds:7.1f} s  "
              f"ratio {seconds / t:7.0f}x  tests {n:5d} / {n_tests:5d}  F1 {s:.3f} / {peer_f1:.3f}")
    table = pd.DataFrame(rows, columns=["target", "mbstat_s", "peer_s", "ratio", "tests",
                                        "peer_tests", "F1", "peer_F1"]).set_index("target")
    ours_s, peer_s = table["mbstat_s"].mean(), table["peer_s"].mean()
    print(f"  same {len(table)} targets: mbstat {1000 * ours_s:.1f} ms vs pyCausalFS "
          f"{peer_s:.1f} s per target -> {peer_s / ours_s:.0f}x faster (target >= 50x); "
          f"mean F1 {table['F1'].mean():.3f} vs {table['peer_F1'].mean():.3f}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=5000, help="rows for the MBOR comparison")
    parser.add_argument("--peer-targets", default="3", help="targets for pyCausalFS, or 'all'")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-iamb", action="store_true")
    parser.add_argument("--skip-mbor", action="store_true")
    parser.add_argument("--skip-learners", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_iamb:
        iamb_part(args)
    if not args.skip_learners:
        learners_part(args)
    if not args.skip_mbor:
        mbor_part(args)


if __name__ == "__main__":
    main()
