"""G2 tests per second on ALARM at 20,000 rows, |Z| = 0..3: mbstat vs causal-learn.

Run by hand: ``python benchmarks/ci_throughput.py [--rows 20000] [--tests 300] [--repeats 5]
[--against DIR]``.
causal-learn is optional (``pip install causal-learn``); its per-test rate is measured on the
same tests in the same run and the ratio printed. Each rate is the median of ``--repeats``
interleaved measurements (fresh testers, kernels loaded beforehand), so that a noisy machine
hits both sides alike; "best" is the single test's time in the fastest repeat, "cpu" its
median thread CPU time (which a machine shared with other jobs inflates less). For
reference, bnlearn's C code runs about 16,000 to 35,000 such tests per second on this
machine type.

With ``--against DIR`` (a folder holding another version of the ``mbstat`` package, say
``git archive <commit> mbstat | tar -x -C DIR``), only the single tests are timed, in fresh
processes of that version and of this one, alternating ``--repeats`` times: the best thread
CPU time per test of each at |Z| = 0..3 and their ratio. A single test of one column takes
the contingency test's one compiled call (``mbstat/ci/tables/_query.py``, issue #25's
target: at most 30 us at |Z| <= 3); the batches take the batch kernels.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from mbstat.ci.engine import CITester
from mbstat.data import as_dataset
from mbstat.datasets import sample_network


def make_queries(names, n_tests, size, rng):
    """(x, y, z) triples with |z| = size, x and y distinct and outside z."""
    out = []
    for _ in range(n_tests):
        pick = rng.choice(len(names), size=2 + size, replace=False)
        out.append((int(pick[0]), int(pick[1]), tuple(int(i) for i in pick[2:])))
    return out


def warm_up(ds, queries):
    """Load the compiled kernels (every path these queries take) outside the clock."""
    tester = CITester(ds, "g2")
    for x, y, z in queries[:20]:
        tester.test(x, y, z)
        tester.test_many([j for j in range(ds.n_cols) if j != y and j not in z], y, z)


def rate_single(ds, queries):
    """Single tests per second (wall clock) and the thread's CPU seconds per test."""
    warm_up(ds, queries)
    tester = CITester(ds, "g2")
    t0, c0 = time.perf_counter(), time.thread_time()
    for x, y, z in queries:
        tester.test(x, y, z)
    return (len(queries) / (time.perf_counter() - t0),
            (time.thread_time() - c0) / len(queries))


def rate_batched(ds, queries, names):
    """Every query's y and z with all other candidates as one batch (an IAMB growth step)."""
    warm_up(ds, queries)
    tester = CITester(ds, "g2")
    total = 0
    t0 = time.perf_counter()
    for _, y, z in queries:
        xs = [j for j in range(len(names)) if j != y and j not in z]
        tester.test_many(xs, y, z)
        total += len(xs)
    return total / (time.perf_counter() - t0)


def rate_causallearn(data, queries, limit):
    try:
        from causallearn.utils.cit import CIT
    except ImportError:
        return None
    cit = CIT(data, "gsq")
    queries = queries[:limit]
    t0 = time.perf_counter()
    for x, y, z in queries:
        cit(x, y, list(z))
    return len(queries) / (time.perf_counter() - t0)


def single_cpu(rows, n_tests, repeats):
    """The best thread CPU microseconds per single test at |Z| = 0..3 (this process)."""
    ds = as_dataset(sample_network("alarm", rows, seed=1))
    rng = np.random.default_rng(0)
    out = []
    for size in range(4):
        queries = make_queries(ds.names, n_tests, size, rng)
        out.append(min(1e6 * rate_single(ds, queries)[1] for _ in range(repeats)))
    return out


def against(args):
    """Single tests of the version in ``args.against`` and of this one, alternating."""
    roots = {"other": args.against.resolve(), "this": Path(__file__).resolve().parents[1]}
    best = {name: [float("inf")] * 4 for name in roots}
    for _ in range(args.repeats):
        for name, root in roots.items():
            env = {**os.environ, "PYTHONPATH": str(root)}
            proc = subprocess.run([sys.executable, __file__, "--single-json", "--rows",
                                   str(args.rows), "--tests", str(args.tests)], env=env,
                                  capture_output=True, text=True, check=True)
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            best[name] = [min(a, b) for a, b in zip(best[name], got)]
    print(f"single test, thread CPU us (best of {args.repeats} processes x 3 runs of "
          f"{args.tests} tests); load {os.getloadavg()[0]:.1f}")
    print(f"{'|Z|':>4} {'other':>8} {'this':>8} {'ratio':>6}")
    for size in range(4):
        a, b = best["other"][size], best["this"][size]
        print(f"{size:>4} {a:8.1f} {b:8.1f} {a / b:6.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--tests", type=int, default=300)
    parser.add_argument("--peer-tests", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None,
                        help="a folder holding another version of the mbstat package")
    parser.add_argument("--single-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single_json:  # one process of --against
        print(json.dumps(single_cpu(args.rows, args.tests, 3)))
        return
    if args.against is not None:
        return against(args)
    frame = sample_network("alarm", args.rows, seed=1)
    ds = as_dataset(frame)
    codes = np.asarray(ds.codes, dtype=np.int64)
    rng = np.random.default_rng(0)
    print(f"ALARM, {args.rows} rows, {ds.n_cols} variables; G2 tests per second")
    print(f"{'|Z|':>4} {'single':>10} {'us/test':>8} {'best':>6} {'cpu':>6} {'batched':>10} "
          f"{'causal-learn':>13} {'batched/cl':>11} {'single/cl':>10}")
    for size in range(4):
        queries = make_queries(ds.names, args.tests, size, rng)
        runs = [(*rate_single(ds, queries),
                 rate_batched(ds, queries[: max(20, args.tests // 10)], ds.names),
                 rate_causallearn(codes, queries, args.peer_tests))
                for _ in range(args.repeats)]
        single, cpu, batched = (statistics.median(r[i] for r in runs) for i in (0, 1, 2))
        peer = statistics.median(r[3] for r in runs) if runs[0][3] else None
        peer_txt = f"{peer:13.0f}" if peer else f"{'not installed':>13}"
        ratio_b = f"{batched / peer:11.1f}" if peer else f"{'-':>11}"
        ratio_s = f"{single / peer:10.1f}" if peer else f"{'-':>10}"
        best = max(r[0] for r in runs)
        print(f"{size:>4} {single:10.0f} {1e6 / single:8.1f} {1e6 / best:6.1f} {1e6 * cpu:6.1f} "
              f"{batched:10.0f} "
              f"{peer_txt} {ratio_b} {ratio_s}")
    print("causal-learn: pip install causal-learn" if rate_causallearn(codes[:10], [(0, 1, ())], 1)
          is None else "")


if __name__ == "__main__":
    main()
