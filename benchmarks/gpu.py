"""The GPU against the CPU, measured side by side in one run.

1. Counting (CuPy against the compiled CPU kernel): for ALARM sampled at several
   sizes, each |Z| = 0..3, batched G2 tests per second (every query's y and z with
   all other variables as candidates, an IAMB growth step) on ``backend="cpu"`` and
   ``backend="gpu"``, the ratio, and the largest relative difference of the statistics.
2. IAMB over every ALARM node on both backends: seconds and agreement.
3. The model-based tests with XGBoost (``device="cuda"`` against ``"cpu"``): one
   ``ppi_test``, ``loco_test`` and ``crt_test`` on a synthetic regression at several sizes,
   seconds and p-values.

Run by hand on a machine with an NVIDIA GPU, CuPy and a CUDA build of XGBoost::

    PYTHONPATH=. python benchmarks/gpu.py [--rows 20000 200000 2000000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from mbstat import iamb
from mbstat.backend import gpu_available, resolve_backend
from mbstat.ci.engine import CITester
from mbstat.data import as_dataset
from mbstat.datasets import sample_network


def queries(p, n_queries, size, rng):
    """(y, z) pairs with |z| = size and the candidates: every other variable."""
    out = []
    for _ in range(n_queries):
        pick = rng.choice(p, size=1 + size, replace=False)
        y, z = int(pick[0]), tuple(int(i) for i in pick[1:])
        out.append(([j for j in range(p) if j != y and j not in z], y, z))
    return out


def rate(ds, backend, qs):
    """Batched tests per second, microseconds per single test and the batches' statistics."""
    batch, single = CITester(ds, "g2", backend=backend), CITester(ds, "g2", backend=backend)
    for xs, y, z in qs:  # compile / load every kernel these queries take, outside the clock
        batch.test_many(xs, y, z)
        single.test(xs[0], y, z)
    tester = CITester(ds, "g2", backend=backend)
    stats, total = [], 0
    t0 = time.perf_counter()
    for xs, y, z in qs:
        stats.append(tester.test_many(xs, y, z).statistic)
        total += len(xs)
    batched = total / (time.perf_counter() - t0)
    tester = CITester(ds, "g2", backend=backend)
    t0 = time.perf_counter()
    for xs, y, z in qs:
        tester.test(xs[0], y, z)
    single = 1e6 * (time.perf_counter() - t0) / len(qs)
    return batched, single, np.concatenate(stats)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[20_000, 200_000, 2_000_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--iamb-rows", type=int, default=None,
                        help="rows for the IAMB comparison (default: the largest of --rows)")
    parser.add_argument("--ppi-rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--B", type=int, default=10, help="splits per PPI test")
    parser.add_argument("--sections", nargs="+", default=["counting", "iamb", "ppi"],
                        choices=["counting", "iamb", "ppi"])
    args = parser.parse_args()
    if not gpu_available():
        print("no GPU answered (CuPy and a CUDA device are needed); nothing to compare")
        return
    print(f"GPU: {resolve_backend('gpu').device}")
    if "counting" in args.sections:
        counting_section(args.rows, args.queries)
    if "iamb" in args.sections:
        iamb_section(args.iamb_rows or max(args.rows))
    if "ppi" in args.sections:
        ppi_section(args.ppi_rows, args.B)


def counting_section(sizes, n_queries):
    print("batched: tests/s of one y, z against all other variables; single: us per test")
    print(f"{'rows':>9} {'|Z|':>4} {'cpu batched':>12} {'gpu batched':>12} {'gpu/cpu':>8} "
          f"{'cpu single':>11} {'gpu single':>11} {'max rel diff':>13}")
    rng = np.random.default_rng(0)
    for n in sizes:
        ds = as_dataset(sample_network("alarm", n, seed=1))
        for size in range(4):
            qs = queries(ds.n_cols, n_queries, size, rng)
            cpu, one_cpu, s_cpu = rate(ds, "cpu", qs)
            gpu, one_gpu, s_gpu = rate(ds, "gpu", qs)
            diff = np.max(np.abs(s_gpu - s_cpu) / np.maximum(np.abs(s_cpu), 1e-300))
            print(f"{n:>9} {size:>4} {cpu:12.0f} {gpu:12.0f} {gpu / cpu:8.2f} {one_cpu:11.0f} "
                  f"{one_gpu:11.0f} {diff:13.2e}", flush=True)


def iamb_section(n):
    ds = as_dataset(sample_network("alarm", n, seed=1))
    print(f"\nIAMB, all {ds.n_cols} ALARM nodes, {n} rows")
    found = {}
    for backend in ("cpu", "gpu"):
        for t in ds.names:  # compile every kernel the runs take (numba's cache may be cold)
            iamb(ds, t, backend=backend, progress=False)
        t0 = time.perf_counter()
        found[backend] = [iamb(ds, t, backend=backend, progress=False).selected
                          for t in ds.names]
        print(f"  {backend}: {time.perf_counter() - t0:.2f} s", flush=True)
    same = sum(set(a) == set(b) for a, b in zip(found["cpu"], found["gpu"]))
    print(f"  same blanket on both backends: {same} of {ds.n_cols} nodes")


def regression(n, p=20, seed=0):
    """y = x0 + x1 - x2 + noise; x3.. are distractors."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame["y"] = X[:, 0] + X[:, 1] - X[:, 2] + rng.standard_normal(n)
    return frame


def ppi_section(sizes, B, crt_B=200):
    """The model-based tests with XGBoost on the CPU and on the GPU: the paper's PPI test (B
    splits), LOCO (5 folds, early stopping) and the CRT (``crt_B`` draws per part)."""
    from mbstat import ppi_test
    from mbstat.ci import crt_test, loco_test
    from mbstat.ci.models.estimators import xgboost_cuda_available

    if not xgboost_cuda_available():
        print("\nXGBoost has no CUDA build here: PPI figures not measured")
        return
    tests = {f"ppi B={B}": lambda f, z, **kw: ppi_test(f, "x0", "y", z, B=B, **kw),
             "loco": lambda f, z, **kw: loco_test(f, "x0", "y", z, **kw),
             f"crt B={crt_B}": lambda f, z, **kw: crt_test(f, "x0", "y", z, B=crt_B, **kw)}
    print("\nx0 ~ y | x1..x19, XGBoost defaults of each test, all CPUs for device='cpu'")
    print(f"{'test':>10} {'rows':>9} {'cpu s':>8} {'gpu s':>8} {'cpu/gpu':>8} {'p cpu':>10} "
          f"{'p gpu':>10}")
    for name, run in tests.items():
        for n in sizes:
            frame = regression(n)
            z = [f"x{j}" for j in range(1, 20)]
            seconds, pvalues = {}, {}
            for device in ("cpu", "cuda"):
                run(frame.iloc[:2000], z, seed=0, device=device)  # warm up
                t0 = time.perf_counter()
                res = run(frame, z, seed=0, device=device, n_jobs=1 if device == "cuda" else -1)
                seconds[device], pvalues[device] = time.perf_counter() - t0, res.pvalue
            print(f"{name:>10} {n:>9} {seconds['cpu']:8.2f} {seconds['cuda']:8.2f} "
                  f"{seconds['cpu'] / seconds['cuda']:8.2f} {pvalues['cpu']:10.3g} "
                  f"{pvalues['cuda']:10.3g}", flush=True)


if __name__ == "__main__":
    main()
