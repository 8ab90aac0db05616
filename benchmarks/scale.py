"""Tall data and one data set on a Dask cluster: time and peak memory (issue #17).

Run by hand: ``python benchmarks/scale.py [--quick] [--sections frame,encode,tall,dask,wide]``.

* frame: IAMB over every ALARM node at 20,000 rows given the DataFrame on each call, against
  the same runs on its encoded Dataset (target: at most 1.3x), and ``ci_test`` on each;

* encode: ``as_dataset`` of a 1,000,000 x 100 categorical DataFrame and of a
  1,000,000 x 10 string one (vectorized per column: Categorical codes, pandas.factorize);
* tall: in memory at 10^6 and 10^7 rows (20 discrete columns, a chain network): encoding,
  one batch of G2 tests (19 candidates), 50 single tests, IAMB on one target, counted where
  ``--backend`` says (auto: on the GPU from 500,000 rows when one answers);
* dask: the same 10^7 rows in 10 partitions made lazily on the workers
  (``dask.dataframe.from_delayed``: no row passes through the client), on a LocalCluster of
  1 and 2 worker processes: encoding (one pass for the levels, one to encode and persist),
  the same tests and IAMB, rows counted per second per worker, each worker's peak memory;
  the blanket is checked against the in-memory one;
* wide: ``benchmarks/wide.py`` for iamb and mbor at 2,000 rows x 20,000 and 140,000 sparse
  binary features (``--quick``: 20,000), the default calibrated test, alpha 0.0001: time,
  peak memory and the true members found (each learner in its own process).

Each in-memory measurement runs in a fresh process, so that its peak resident memory
(``ru_maxrss``) is its own. ``--quick`` divides the rows by 10. Timings on a shared 2-core
machine vary with the other jobs on it: compare figures of one run.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

import numpy as np
import pandas as pd

P = 20  # columns of the tall data
LEVELS = ["a", "b", "c"]
PARTS = 10  # partitions of the tall data (made one at a time, in memory as on the cluster)


def chain_part(i: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """Partition i of the tall data: x0 uniform on 3 levels, x_j copies x_{j-1} with
    probability 0.5, else a uniform level (a chain: the blanket of x_j is x_{j-1}, x_{j+1})."""
    rng = np.random.default_rng([seed, i])
    codes = np.empty((rows, P), dtype=np.int8)
    codes[:, 0] = rng.integers(0, 3, rows)
    for j in range(1, P):
        keep = rng.random(rows) < 0.5
        codes[:, j] = np.where(keep, codes[:, j - 1], rng.integers(0, 3, rows))
    return pd.DataFrame({f"x{j}": pd.Categorical.from_codes(codes[:, j], LEVELS)
                         for j in range(P)})


def part_sizes(rows: int) -> list:
    step = -(-rows // PARTS)
    return [min(step, rows - s) for s in range(0, rows, step)]


def chain_frame(rows: int) -> pd.DataFrame:
    return pd.concat([chain_part(i, size) for i, size in enumerate(part_sizes(rows))],
                     ignore_index=True)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def workload(data, backend=None):
    """Encoding, one batch, 50 single tests and IAMB on x10: seconds of each and the blanket."""
    import mbstat

    out = {}
    t = time.perf_counter()
    ds = mbstat.as_dataset(data)
    out["encode"] = time.perf_counter() - t
    tester = mbstat.ci.CITester(ds, "g2", backend=backend)
    cands = [f"x{j}" for j in range(P) if j not in (9, 10)]
    tester.test_many(cands[:2], "x10", ["x9"])  # kernels loaded outside the clock
    t = time.perf_counter()
    tester.test_many(cands, "x10", ["x9"])
    out["batch"] = time.perf_counter() - t
    out["batch_rows"] = ds.n_rows * len(cands)
    t = time.perf_counter()
    for j in range(50):
        tester.test(f"x{j % P}", f"x{(j + 7) % P}", [f"x{(j + 3) % P}"])
    out["single"] = (time.perf_counter() - t) / 50
    t = time.perf_counter()
    res = mbstat.iamb(ds, "x10", test="g2", backend=backend)
    out["iamb"] = time.perf_counter() - t
    out["iamb_tests"] = res.n_tests
    out["blanket"] = tuple(res.selected)
    out["backend"] = res.backend
    return out


def _in_memory(kind, rows, queue, backend=None):
    import mbstat

    if kind == "encode-cat":
        rng = np.random.default_rng(0)
        frame = pd.DataFrame({f"v{j}": pd.Categorical.from_codes(
            rng.integers(0, 4, rows).astype(np.int8), ["a", "b", "c", "d"]) for j in range(100)})
    elif kind == "encode-str":
        rng = np.random.default_rng(0)
        words = np.array(["low", "normal", "high", "zero"])
        frame = pd.DataFrame({f"v{j}": pd.array(words[rng.integers(0, 4, rows)], dtype="str")
                              for j in range(10)})
    else:
        frame = chain_frame(rows)
    base = peak_mb()
    if kind.startswith("encode"):
        t = time.perf_counter()
        mbstat.as_dataset(frame)
        out = {"encode": time.perf_counter() - t}
    else:
        out = workload(frame, backend)
    out["peak_mb"] = peak_mb()
    out["data_mb"] = base
    queue.put(out)


def in_memory(kind, rows, backend=None):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_in_memory, args=(kind, rows, queue, backend))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def _worker_peak():
    return peak_mb()


def _warm():
    """Load mbstat and its compiled kernels on a worker (outside the clock)."""
    from mbstat.ci.tables import _kernels  # noqa: F401


def on_dask(rows, workers):
    import dask
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    meta = chain_part(0, 0)
    parts = [dask.delayed(chain_part)(i, size) for i, size in enumerate(part_sizes(rows))]
    frame = dd.from_delayed(parts, meta=meta)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        client.run(_warm)
        out = workload(frame)
        out["peak_mb"] = max(client.run(_worker_peak).values())
    return out


def frame_overhead(repeats: int):
    """Seconds of IAMB over every ALARM node (20,000 rows) on the DataFrame and on the
    Dataset, interleaved (median of ``repeats``), and of one ci_test on each."""
    import statistics

    import mbstat
    from mbstat.datasets import sample_network

    df = sample_network("alarm", 20000, seed=1)
    ds = mbstat.as_dataset(df)
    for data in (df, ds):  # kernels loaded outside the clock
        mbstat.iamb(data, df.columns[0], test="g2")
        mbstat.ci_test(data, "HR", "CO", ["HRBP"], test="g2")
    times = {"DataFrame": [], "Dataset": []}
    single = {"DataFrame": [], "Dataset": []}
    for _ in range(repeats):
        for label, data in (("DataFrame", df), ("Dataset", ds)):
            t = time.perf_counter()
            for node in df.columns:
                mbstat.iamb(data, node, test="g2")
            times[label].append(time.perf_counter() - t)
            t = time.perf_counter()
            for _ in range(100):
                mbstat.ci_test(data, "HR", "CO", ["HRBP"], test="g2")
            single[label].append((time.perf_counter() - t) / 100)
    return ({k: statistics.median(v) for k, v in times.items()},
            {k: statistics.median(v) for k, v in single.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="rows / 10")
    parser.add_argument("--sections", default="frame,encode,tall,dask,wide")
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                        help="where the tall section counts (auto: the GPU from 500,000 rows)")
    args = parser.parse_args()
    div = 10 if args.quick else 1
    sections = args.sections.split(",")
    if "frame" in sections:
        iamb_s, test_s = frame_overhead(2 if args.quick else 5)
        print("IAMB over the 37 ALARM nodes, 20,000 rows, G2: the data given on every call")
        for label in ("DataFrame", "Dataset"):
            print(f"  {label:<10} {iamb_s[label]:7.3f} s   ci_test {1e6 * test_s[label]:7.0f} us")
        print(f"  DataFrame / Dataset: {iamb_s['DataFrame'] / iamb_s['Dataset']:.2f}x "
              "(target <= 1.3x)\n")
    if "encode" in sections:
        print(f"as_dataset encoding ({'quick: ' if args.quick else ''}rows / {div})")
        for kind, shape in (("encode-cat", "x 100 categorical"), ("encode-str", "x 10 string")):
            rows = 1_000_000 // div
            r = in_memory(kind, rows)
            print(f"  {rows:>10,} {shape:<18} {r['encode']:8.3f} s   peak {r['peak_mb']:7.0f} MB "
                  f"(data alone {r['data_mb']:.0f} MB)")
    memory = {}
    if "tall" in sections:
        print("\nTall data in memory (20 columns of 3 levels, chain network), G2")
        print(f"  {'rows':>11} {'encode s':>9} {'batch s':>8} {'Mrows/s':>8} {'single ms':>10} "
              f"{'iamb s':>7} {'tests':>6} {'peak MB':>8}  backend")
        for rows in (1_000_000 // div, 10_000_000 // div):
            r = memory[rows] = in_memory("tall", rows, args.backend)
            print(f"  {rows:>11,} {r['encode']:9.3f} {r['batch']:8.3f} "
                  f"{r['batch_rows'] / r['batch'] / 1e6:8.1f} {1e3 * r['single']:10.2f} "
                  f"{r['iamb']:7.2f} {r['iamb_tests']:>6} {r['peak_mb']:8.0f}  {r['backend']}")
    if "dask" in sections:
        rows = 10_000_000 // div
        print(f"\nThe same {rows:,} rows on a Dask LocalCluster (worker processes, 1 thread each;"
              f" {PARTS} partitions made on the workers)")
        print(f"  {'workers':>7} {'encode s':>9} {'batch s':>8} {'Mrows/s/worker':>15} "
              f"{'single ms':>10} {'iamb s':>7} {'tests':>6} {'worker peak MB':>15} same blanket")
        for workers in (1, 2):
            r = on_dask(rows, workers)
            same = "-" if rows not in memory else str(r["blanket"] == memory[rows]["blanket"])
            print(f"  {workers:>7} {r['encode']:9.2f} {r['batch']:8.3f} "
                  f"{r['batch_rows'] / r['batch'] / workers / 1e6:15.1f} "
                  f"{1e3 * r['single']:10.1f} {r['iamb']:7.2f} {r['iamb_tests']:>6} "
                  f"{r['peak_mb']:15.0f} {same}")
    if "wide" in sections:
        import subprocess
        import sys
        from pathlib import Path

        features = ["20000"] if args.quick else ["20000", "140000"]
        print("\nWide data (benchmarks/wide.py): 2,000 rows, sparse binary features")
        subprocess.run([sys.executable, str(Path(__file__).with_name("wide.py")), "--features",
                        *features, "--learners", "iamb", "mbor", "--calibration", "auto"],
                       check=True)


if __name__ == "__main__":
    main()
