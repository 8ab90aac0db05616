"""Continuous tests from sufficient statistics (issue 26): before and after, as ratios.

1. One ``fisher_z`` test at |z| = 3 on an encoded 60-column data set
   (``make_linear_gaussian``) at 2,000 and 20,000 rows: the test's own cost
   (``FisherZ.batch``, distinct queries, after the one-time statistics) before (the
   previous commit's per-row QR, loaded from git, and the rows path kept behind
   ``FisherZ._from_rows``) and after; the one-time statistics; the engine's cost per
   query (``CITester.test``) and a whole ``ci_test`` call beside them. Largest difference
   of the statistics before/after.
2. ``iamb`` and ``iamb_fdr`` over every node of a linear Gaussian network (50 nodes in
   quick mode, 100 with ``--full``) at 2,000 and 20,000 rows, before and after, the
   blankets compared; bnlearn's ``learn.mb(method = "iamb" / "iamb.fdr", test = "zf")``
   on the same CSV (17 digits) as an optional column when ``Rscript`` with bnlearn is
   found (never required).
3. ``spearman`` and ``normal-scores``: one test before/after (the same ranks), largest
   difference of the statistics.
4. The one-time statistics (every row of the correlation matrix) on the CPU and, when
   CuPy answers, the GPU (``--statistics-rows``).
5. The engine (``CITester``: lookups, store, log, results) before and after: ``iamb`` over
   the nodes of a linear Gaussian network (``fisher_z``, ``spearman``, ``normal-scores``)
   and of ``make_mixed_network`` (``mi-cg``, ``reg-lr``), run once by the code of
   ``--engine-before`` (``git archive`` of that commit, in a subprocess) and once by this
   tree; seconds, blankets, test counts and every logged statistic and p-value compared
   (relative 1e-10).
6. ``iamb`` with ``spearman`` (given z: the latent partial correlation of Harris & Drton)
   over a few nodes: every test from the rows (before) and from the per-data-set
   statistics (after), ``fisher_z`` beside, the logged statistics compared.

Run by hand (not by CI): ``PYTHONPATH=. python benchmarks/continuous.py [--full]
[--before-commit d68a8de]``. Timings are medians of wall-clock time on whatever machine
runs it; compare the ratios of one run.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mbstat import ci_test
from mbstat.algorithms import iamb, iamb_fdr
from mbstat.ci.engine import CITester
from mbstat.ci import FisherZ
from mbstat.ci.continuous.moments import column_moments
from mbstat.ci.continuous.rank import NormalScores, Spearman, _Ranked
from mbstat.data import as_dataset
from mbstat.datasets import make_linear_gaussian, make_mixed_network

REPO = Path(__file__).resolve().parent.parent
BEFORE = "d68a8de"  # the commit before the sufficient statistics
ENGINE_BEFORE = "aacc16b"  # the commit before the engine's lean path (issue 26, step 2)


def load_before(commit: str, path=None):
    """The FisherZ class of ``commit`` (its gaussian.py loaded beside mbstat.ci; or the
    file ``path``, a copy of it where git is not at hand), or None."""
    if path is not None:
        source = Path(path).read_text()
    else:
        if shutil.which("git") is None:
            return None
        proc = subprocess.run(["git", "show", f"{commit}:mbstat/ci/gaussian.py"], cwd=REPO,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None
        source = proc.stdout
    spec = importlib.util.spec_from_loader("mbstat.ci._gaussian_before", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "mbstat.ci"
    try:
        exec(compile(source, f"{commit}:mbstat/ci/gaussian.py", "exec"), module.__dict__)
    except ImportError:
        return None
    return module.FisherZ


def rows_fisher_z():
    test = FisherZ()
    test._from_rows = True
    return test


def queries(p: int, k: int, m: int = 3, seed: int = 0):
    """k distinct (x, y, z) of column positions, |z| = m."""
    rng = np.random.default_rng(seed)
    out, seen = [], set()
    while len(out) < k:
        cols = rng.choice(p, m + 2, replace=False)
        key = (int(cols[0]), int(cols[1]), tuple(sorted(cols[2:].tolist())))
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def per_test(test, tester, qs, cpu=False):
    """Seconds per call of ``test.batch`` over the queries, and the statistics; with
    ``cpu``, also the calling thread's CPU seconds per call (on a shared, loaded machine
    the wall clock counts the time other processes held the core)."""
    stats = np.empty(len(qs))
    start, start_cpu = time.perf_counter(), time.thread_time()
    for i, (x, y, z) in enumerate(qs):
        stats[i] = test.batch(tester, [(x,)], y, z)["statistic"][0]
    wall = (time.perf_counter() - start) / len(qs)
    if cpu:
        return wall, stats, (time.thread_time() - start_cpu) / len(qs)
    return wall, stats


def single_tests(rows_list, quick: bool, before_cls):
    print("\n1. One fisher_z test, |z| = 3, 60 columns (microseconds per test)")
    print(f"{'rows':>7} {'before':>9} {'rows path':>9} {'after':>7} {'cpu':>6} {'ratio':>6} "
          f"{'max |dz|':>9} {'one-time':>9} {'engine':>8} {'ci_test':>8}")
    for n in rows_list:
        ds = as_dataset(make_linear_gaussian(60, n, seed=1))
        k_slow = 60 if quick else 300
        k_fast = 2000 if quick else 10000
        slow_q, fast_q = queries(60, k_slow), queries(60, k_fast, seed=1)
        tester = CITester(ds, "fisher_z")
        before = per_test(before_cls(), tester, slow_q) if before_cls else (np.nan, None)
        rows = per_test(rows_fisher_z(), tester, slow_q)
        start = time.perf_counter()
        moments = column_moments(ds)
        moments.rows(range(60))
        one_time = time.perf_counter() - start
        after_slow = per_test(FisherZ(), tester, slow_q)[1]
        after, _, after_cpu = per_test(FisherZ(), tester, fast_q, cpu=True)
        ref = before[1] if before[1] is not None else rows[1]
        diff = float(np.max(np.abs(after_slow - ref)))
        start = time.perf_counter()
        for x, y, z in fast_q[:1000]:
            tester.test(x, y, z)
        engine = (time.perf_counter() - start) / 1000
        start = time.perf_counter()
        for x, y, z in fast_q[:200]:
            ci_test(ds, x, y, z, test="fisher_z")
        whole = (time.perf_counter() - start) / 200
        base = before[0] if before_cls else rows[0]
        print(f"{n:>7} {before[0] * 1e6:>9.1f} {rows[0] * 1e6:>9.1f} {after * 1e6:>7.1f} "
              f"{after_cpu * 1e6:>6.1f} "
              f"{base / after:>6.0f} {diff:>9.1e} {one_time * 1e3:>7.1f}ms {engine * 1e6:>8.1f} "
              f"{whole * 1e6:>8.1f}")
    print("before: the previous commit's QR per test; after: FisherZ.batch from the shared "
          "correlation matrix (cpu: the thread's CPU time per test); ratio before/after; "
          "engine: CITester.test per distinct query (cache lookups, logging); ci_test: a "
          "whole call (builds a tester)")


def bnlearn(csv: Path, methods, repeats: int):
    """{method: (median seconds, blankets)} from bnlearn, or None without R/bnlearn."""
    if shutil.which("Rscript") is None:
        return None
    out = {}
    for method in methods:
        script = f"""
suppressMessages(library(bnlearn))
d <- read.csv("{csv}")
run <- function() lapply(names(d), function(v) learn.mb(d, v, method = "{method}",
                                                        test = "zf", alpha = 0.05))
t <- replicate({repeats}, system.time(res <<- run())[["elapsed"]])
cat(median(t), "\\n")
for (i in seq_along(res)) cat(names(d)[i], ":", paste(sort(res[[i]]), collapse = ","), "\\n",
                              sep = "")
"""
        proc = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True)
        if proc.returncode != 0:
            return None
        lines = proc.stdout.strip().splitlines()
        found = {}
        for line in lines[1:]:
            node, _, members = line.partition(":")
            found[node] = tuple(sorted(m for m in members.split(",") if m))
        out[method] = (float(lines[0]), found)
    return out


def learners(n_nodes: int, rows_list, repeats: int, before_cls, skip_before=False):
    print(f"\n2. iamb and iamb_fdr over every node of a {n_nodes}-node linear Gaussian network "
          "(alpha 0.05; seconds)")
    print(f"{'rows':>7} {'learner':>9} {'tests':>7} {'before':>8} {'after':>8} {'ratio':>6} "
          f"{'same':>5} {'bnlearn':>8} {'after/bnl':>9} {'same as bnl':>11}")
    for n in rows_list:
        frame = make_linear_gaussian(n_nodes, n, seed=2)
        ds = as_dataset(frame)
        tmp = tempfile.TemporaryDirectory()
        csv = Path(tmp.name) / "network.csv"
        frame.to_csv(csv, index=False, float_format="%.17g")
        for name, learner, r_name in (("iamb", iamb, "iamb"), ("iamb_fdr", iamb_fdr,
                                                                "iamb.fdr")):
            # bnlearn's IAMB enters the strongest candidate at alpha (no Bonferroni step)
            plain = ({"selection": "none"} if name == "iamb" and "selection" in
                     inspect.signature(learner).parameters else {})

            def run(test):
                found, tests = {}, 0
                for v in frame.columns:
                    res = learner(ds, v, test=test, alpha=0.05, **plain)
                    found[v] = tuple(sorted(res.blanket))
                    tests += res.n_tests
                return found, tests

            def timed(make):
                _clear(ds)
                start = time.perf_counter()
                out = run(make())
                return time.perf_counter() - start, out

            # each repeat: bnlearn once, then mbstat at once, so that a ratio compares two
            # runs under the same load (a shared machine's load moves within a minute)
            t_after, t_r, ratios, ref = [], [], [], None
            for _ in range(repeats):
                got = bnlearn(csv, (r_name,), 1)
                seconds, (b_after, tests) = timed(FisherZ)
                t_after.append(seconds)
                if got is not None:
                    ref = got[r_name][1]
                    t_r.append(got[r_name][0])
                    ratios.append(seconds / got[r_name][0])
            t_after = float(np.median(t_after))
            if skip_before:
                t_before, same = np.nan, "-"
            else:
                t_before, (b_before, _) = timed(before_cls or rows_fisher_z)
                same = b_before == b_after
            if ref is not None:
                col = (f"{np.median(t_r):>8.2f} {np.median(ratios):>9.2f} "
                       f"{sum(ref[v] == b_after[v] for v in frame.columns):>6}/{n_nodes}")
            else:
                col = f"{'-':>8} {'-':>9} {'-':>11}"
            print(f"{n:>7} {name:>9} {tests:>7} {t_before:>8.2f} {t_after:>8.2f} "
                  f"{t_before / t_after:>6.1f} {str(same):>5} {col}", flush=True)
        tmp.cleanup()
    print("after includes the one-time statistics (cleared before every repeat); same: "
          "blankets identical before/after; bnlearn: learn.mb per node on the same CSV, its "
          "elapsed time in R (reading the CSV and loading bnlearn not counted); after/bnl: the "
          "median over the repeats of after / bnlearn, each pair run one after the other")


def _clear(ds):
    from mbstat.ci.continuous import moments

    moments._CACHE.pop(ds, None)


def rank_tests(rows_list, quick: bool, before_cls):
    print("\n3. spearman and normal-scores, one test at |z| = 3, 60 columns (us per test; "
          "spearman's before: its latent partial correlation from the rows, per test)")
    print(f"{'rows':>7} {'test':>14} {'before':>9} {'after':>7} {'ratio':>6} {'max |dz|':>9}")
    old = before_cls or (lambda: rows_fisher_z())
    for n in rows_list:
        ds = as_dataset(np.exp(make_linear_gaussian(60, n, seed=3)))
        qs = queries(60, 60 if quick else 300)
        for cls in (Spearman, NormalScores):
            test = cls()
            tester = CITester(ds, test)
            ranked = _Ranked(tester, test.ranks(tester))
            factor = np.sqrt(test.variance_factor)
            start = time.perf_counter()
            if cls is Spearman:  # given z: the latent partial correlation, from the rows
                rows = Spearman()
                rows._from_rows = True
                before = np.array([rows.batch(tester, [(x,)], y, z)["statistic"][0]
                                   for x, y, z in qs])
            else:
                before = np.array([old().batch(ranked, [(x,)], y, z)["statistic"][0]
                                   for x, y, z in qs]) / factor
            t_before = (time.perf_counter() - start) / len(qs)
            test.batch(tester, [qs[0][:1]], qs[0][1], qs[0][2])  # the one-time statistics
            t_after, after = per_test(test, tester, qs)
            print(f"{n:>7} {cls.name:>14} {t_before * 1e6:>9.1f} {t_after * 1e6:>7.1f} "
                  f"{t_before / t_after:>6.0f} {np.max(np.abs(after - before)):>9.1e}")


def one_time_statistics(rows_list):
    """The correlation matrix of 60 columns, on the CPU and (when one answers) the GPU."""
    from mbstat.backend import gpu_available

    print("\n4. One-time statistics: every row of the correlation matrix, 60 columns (seconds)")
    gpu = gpu_available()
    if gpu:
        import cupy
    print(f"{'rows':>9} {'cpu':>8} {'gpu':>8} {'cpu/gpu':>8} {'max |dr|':>9}")
    for n in rows_list:
        ds = as_dataset(make_linear_gaussian(60, n, seed=4))
        start = time.perf_counter()
        cpu = column_moments(ds)
        cpu.rows(range(60))
        t_cpu = time.perf_counter() - start
        if not gpu:
            print(f"{n:>9} {t_cpu:>8.3f} {'-':>8} {'-':>8} {'-':>9}")
            continue
        column_moments(as_dataset(make_linear_gaussian(60, 1000, seed=4)), cupy).rows([0])
        start = time.perf_counter()
        dev = column_moments(ds, cupy)
        dev.rows(range(60))
        t_gpu = time.perf_counter() - start
        diff = np.max(np.abs(dev.state[0][dev.state[1]] - cpu.state[0][cpu.state[1]]))
        print(f"{n:>9} {t_cpu:>8.3f} {t_gpu:>8.3f} {t_cpu / t_gpu:>8.1f} {diff:>9.1e}")
    print("gpu: the centring on the CPU, the GEMMs on CuPy (the tester's backend 'gpu')")


def spearman_search(n_nodes: int, n: int, k: int):
    """``iamb`` with ``spearman`` over the first k nodes of a linear Gaussian network (each
    column exp-transformed): every test given z from the rows (``Spearman._from_rows``, the
    per-test influence functions) and from the per-data-set statistics
    (:class:`~mbstat.ci.continuous.rank.InfluenceMoments`), ``fisher_z`` beside; every
    logged statistic and log p-value compared (relative 1e-10)."""
    print(f"\n6. iamb with spearman over {k} nodes of a {n_nodes}-node network, {n} rows "
          "(seconds; the ranks and statistics of a fresh data set in each)")
    frame = np.exp(make_linear_gaussian(n_nodes, n, seed=7))
    nodes = list(frame.columns[:k])

    def run(test):
        ds = as_dataset(frame)  # a fresh data set: its one-time statistics in the timing
        start = time.perf_counter()
        res = [iamb(ds, v, test=test, selection="none") for v in nodes]
        return time.perf_counter() - start, res

    rows = Spearman()
    rows._from_rows = True
    t_rows, a = run(rows)
    t_fast, b = run("spearman")
    t_fz, c = run("fisher_z")
    tests = sum(r.n_tests for r in b)
    same = all(x.blanket == y.blanket and x.n_tests == y.n_tests
               and _same(x.tests["statistic"], y.tests["statistic"])
               and _same(x.tests["log_pvalue"], y.tests["log_pvalue"]) for x, y in zip(a, b))
    print(f"{'tests':>7} {'rows path':>10} {'statistics':>10} {'ratio':>6} {'same':>5} "
          f"{'fisher_z':>9} {'spearman/fisher_z':>17}")
    print(f"{tests:>7} {t_rows:>10.2f} {t_fast:>10.2f} {t_rows / t_fast:>6.1f} {str(same):>5} "
          f"{t_fz:>9.2f} {t_fast / t_fz:>17.1f}")


ENGINE_CASES = (("gauss", "fisher_z"), ("gauss", "spearman"), ("gauss", "normal-scores"),
                ("mixed", "mi-cg"), ("mixed", "reg-lr"))


def engine_runs(quick: bool, only=None) -> dict:
    """{test: (seconds, {node: (blanket, tests, statistics, log p-values)})}: iamb
    (selection "none") over every node, each test's data shared by its runs (its one-time
    statistics paid once, in a first run outside the timing)."""
    import warnings

    gauss = make_linear_gaussian(30 if quick else 50, 2000, seed=5)
    mixed = make_mixed_network(600 if quick else 2000, seed=6)
    frames = {"gauss": gauss, "mixed": mixed}
    out = {}
    for data, test in ENGINE_CASES:
        if only and test not in only:
            continue
        frame = frames[data]
        ds = as_dataset(frame)
        nodes = list(frame.columns)
        if data == "mixed":  # continuous targets: the least-squares and CG branches
            nodes = [v for v in nodes if frame[v].dtype.kind == "f"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iamb(ds, nodes[0], test=test, selection="none")  # one-time statistics, kernels
            start = time.perf_counter()
            runs = {v: iamb(ds, v, test=test, selection="none") for v in nodes}
            seconds = time.perf_counter() - start
        found = {}
        for v, res in runs.items():
            log = res.tests
            found[v] = (sorted(map(str, res.blanket)), int(res.n_tests),
                        log["statistic"].tolist(), log["log_pvalue"].tolist())
        out[test] = (seconds, found)
    return out


def _same(a, b, rtol=1e-10) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.isclose(a, b, rtol=rtol, atol=1e-300)
                                              | (np.isnan(a) & np.isnan(b))))


def engine_before(commit: str, quick: bool, only=None):
    """:func:`engine_runs` by the code of ``commit`` (exported by ``git archive``; this
    script run on it in a subprocess), or None without git or that commit."""
    import json

    if shutil.which("git") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True)
        if archive.returncode != 0:
            return None
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        dump = Path(tmp) / "engine.json"
        env = {**os.environ, "PYTHONPATH": tmp}
        proc = subprocess.run([sys.executable, __file__, "--engine-dump", str(dump)]
                              + ([] if quick else ["--full"])
                              + (["--engine-tests", *only] if only else []), env=env, cwd=tmp,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            return None
        return {k: (v[0], {n: tuple(r) for n, r in v[1].items()})
                for k, v in json.loads(dump.read_text()).items()}


def engine(commit: str, quick: bool, only=None):
    print(f"\n5. The engine before ({commit}) and after: iamb over every node (seconds; "
          "results compared to 1e-10)")
    before = engine_before(commit, quick, only)
    after = engine_runs(quick, only)
    print(f"{'test':>14} {'nodes':>5} {'tests':>7} {'before':>8} {'after':>8} {'ratio':>6} "
          f"{'same':>5}")
    for test, (t_after, found) in after.items():
        tests = sum(r[1] for r in found.values())
        if before is None or test not in before:
            print(f"{test:>14} {len(found):>5} {tests:>7} {'-':>8} {t_after:>8.2f}")
            continue
        t_before, old = before[test]
        same = old.keys() == found.keys() and all(
            old[v][0] == found[v][0] and old[v][1] == found[v][1]
            and _same(old[v][2], found[v][2]) and _same(old[v][3], found[v][3])
            for v in found)
        print(f"{test:>14} {len(found):>5} {tests:>7} {t_before:>8.2f} {t_after:>8.2f} "
              f"{t_before / t_after:>6.2f} {str(same):>5}")
    print("same: blankets, test counts and every logged statistic and log p-value equal "
          "(relative 1e-10); before: that commit's tree in a subprocess, its own warm-up")


def warm_up(before_cls):
    """The first GEMM of a process starts BLAS's threads (0.75 s on a loaded machine) and
    the first call of each compiled kernel loads it: paid here, outside every timing."""
    frame = make_linear_gaussian(8, 300, seed=0)
    ds = as_dataset(frame)
    for test in [FisherZ(), rows_fisher_z()] + ([before_cls()] if before_cls else []):
        CITester(ds, test).test_many(list(frame.columns[3:]), frame.columns[0],
                                     list(frame.columns[1:3]))
    for cls in (Spearman, NormalScores):
        ci_test(ds, frame.columns[3], frame.columns[0], list(frame.columns[1:3]),
                test=cls.name)
    iamb(ds, frame.columns[0], test="fisher_z")
    iamb_fdr(ds, frame.columns[0], test="fisher_z")
    _clear(ds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true",
                        help="100 nodes, more queries and 3 repeats (the issue's sizes)")
    parser.add_argument("--before-commit", default=BEFORE)
    parser.add_argument("--before-file", help="that commit's mbstat/ci/gaussian.py (no git)")
    parser.add_argument("--skip-learners", action="store_true")
    parser.add_argument("--skip-before", action="store_true",
                        help="section 2 without the before column (the rows path is slow)")
    parser.add_argument("--rows", type=int, nargs="*", default=[2000, 20000])
    parser.add_argument("--nodes", type=int, help="nodes of section 2 (default 50; 100 full)")
    parser.add_argument("--repeats", type=int,
                        help="section 2: runs per learner, the median shown (default 1; 3 full)")
    parser.add_argument("--statistics-rows", type=int, nargs="*", default=[200_000],
                        help="rows of section 4 (the one-time statistics, CPU and GPU)")
    parser.add_argument("--engine-before", default=ENGINE_BEFORE,
                        help="the commit whose engine section 5 compares with this tree")
    parser.add_argument("--sections", type=int, nargs="*", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--engine-tests", nargs="*",
                        help="section 5: only these tests (default fisher_z, spearman, "
                             "normal-scores, mi-cg, reg-lr)")
    parser.add_argument("--spearman-nodes", type=int,
                        help="section 6: nodes searched (default 3; 10 full)")
    parser.add_argument("--engine-dump", help=argparse.SUPPRESS)  # section 5's subprocess
    args = parser.parse_args()
    if args.engine_dump:
        import json

        Path(args.engine_dump).write_text(json.dumps(engine_runs(not args.full,
                                                                 args.engine_tests)))
        return
    before_cls = load_before(args.before_commit, args.before_file)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"continuous tests, before = {args.before_commit if before_cls else 'rows path'}; "
          f"{os.cpu_count()} cores, load average {load:.1f}; python {sys.version.split()[0]}")
    rows_list = tuple(args.rows)
    sections = set(args.sections)
    warm_up(before_cls)
    if 1 in sections:
        single_tests(rows_list, not args.full, before_cls)
    if 3 in sections:
        rank_tests(rows_list, not args.full, before_cls)
    if 2 in sections and not args.skip_learners:
        learners(args.nodes or (100 if args.full else 50), rows_list,
                 args.repeats or (3 if args.full else 1), before_cls, args.skip_before)
    if 4 in sections:
        one_time_statistics(args.statistics_rows)
    if 5 in sections:
        engine(args.engine_before, not args.full, args.engine_tests)
    if 6 in sections:
        spearman_search(30 if not args.full else 50, 2000,
                        args.spearman_nodes or (10 if args.full else 3))


if __name__ == "__main__":
    main()
