"""FSDMS speed: CorrAL-47, WDBC and a scaling table in n and d, against a naive peer.

Run by hand: ``python benchmarks/fsdms.py [--quick] [--repeat 3]``.

No package implements FSDMS, so the peer is the naive implementation the
issue rules out: the same Algorithms 1-3, but every ``D(X)`` recomputed from
scratch (pandas ``groupby`` for Definition 7, a full ``scipy`` distance matrix
for Definition 9). It runs in the same process, must return the same
sequence, and the ratio naive / mbstat is printed. The scaling table fits
``time ~ n^a`` and ``time ~ d^b`` on a log-log scale.
Targets (2-core machine): CorrAL-47 under 2 s, WDBC under 10 s.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist

from _timing import timed  # benchmarks/_timing.py, beside this script

from mbstat.algorithms.fsdms import fsdms
from mbstat.backend import gpu_available
from mbstat.datasets import load_wdbc, make_corral


# ---------------------------------------------------------------------------
# The naive peer: the paper's pseudocode with D recomputed for every set
# ---------------------------------------------------------------------------


def naive_dependency(df, cols, theta, norm):
    if not cols:
        return 0.0
    if theta is None:
        return float((df.groupby(list(cols))["class"].transform("nunique") == 1).mean())
    dist = cdist(norm[list(cols)].to_numpy(), norm[list(cols)].to_numpy())
    y = df["class"].to_numpy()
    enemy = (dist <= theta) & (y[:, None] != y[None, :])
    return float(1.0 - enemy.any(axis=1).mean())


def naive_fsdms(df, theta=None, alpha=1.0):
    feats = [c for c in df.columns if c != "class"]
    norm = None
    if theta is not None:
        x = df[feats]
        norm = (x - x.min()) / (x.max() - x.min()).replace(0, 1)

    def dep(cols):
        return naive_dependency(df, cols, theta, norm)

    full = dep(feats)
    minus = {a: dep([f for f in feats if f != a]) for a in feats}
    a1 = [a for a in feats if full > minus[a]]
    b2 = []
    for b in feats:
        if b in a1:
            continue
        if all(minus[m] > dep([f for f in feats if f not in (m, b)]) for m in feats if m != b):
            b2.append(b)
    c3 = [f for f in feats if f not in a1 and f not in b2]
    chosen = []
    for group in (a1, b2, c3):
        queue = list(group)
        while queue:
            d_p, d_r = dep(chosen), dep([f for f in feats if f not in chosen])
            scores = []
            for a in queue:
                d_add = dep(chosen + [a])
                gain = (d_add - d_p) + alpha * (d_r - dep([f for f in feats
                                                           if f not in chosen and f != a]))
                scores.append((gain, d_add))
            best = max(scores)
            i = next(i for i, s in enumerate(scores)
                     if abs(s[0] - best[0]) <= 1e-9 and s[1] == best[1])
            chosen.append(queue.pop(i))
    return tuple(chosen)


# ---------------------------------------------------------------------------


def synthetic_numerical(n, d, seed=0):
    from sklearn.datasets import make_classification

    x, y = make_classification(n_samples=n, n_features=d, n_informative=min(5, d),
                               n_redundant=min(5, d - min(5, d)), random_state=seed)
    df = pd.DataFrame(x, columns=[f"X{j}" for j in range(d)])
    df["class"] = y
    return df


def synthetic_discrete(n, d, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, d))
    y = (x[:, 0] & x[:, 1]) | (x[:, 2] & x[:, 3])
    df = pd.DataFrame(x, columns=[f"X{j}" for j in range(d)])
    df["class"] = y
    return df


def slope(sizes, times):
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller scaling grid")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    print("== Headline figures (median of", args.repeat, "runs, after one warm-up) ==")
    rows = []
    corral = make_corral("corral47", seed=0)
    wdbc = load_wdbc()
    for name, df, theta, target in (("CorrAL-47 (1024 x 47, discrete)", corral, None, 2.0),
                                    ("WDBC (569 x 30, theta 0.14)", wdbc, 0.14, 10.0)):
        t0 = time.perf_counter()
        first = fsdms(df, "class", theta=theta, full=True)
        t_first = time.perf_counter() - t0
        t_ours, res = timed(lambda _: fsdms(df, "class", theta=theta, full=True), args.repeat)
        t0 = time.perf_counter()
        naive = naive_fsdms(df, theta)
        t_naive = time.perf_counter() - t0
        rows.append((name, round(t_first, 3), round(t_ours, 3), target, t_ours < target,
                     res.n_tests, round(t_naive, 2), round(t_naive / t_ours, 1),
                     naive == res.sequence == first.sequence))
    print(pd.DataFrame(rows, columns=[
        "data", "first call s", "mbstat s", "target s", "under target", "evaluations",
        "naive peer s", "naive / mbstat", "same sequence"]).set_index("data").to_string())
    print("(first call: includes loading or compiling the numba kernel)")

    if gpu_available():
        t_gpu, res_gpu = timed(lambda _: fsdms(wdbc, "class", theta=0.14, backend="gpu"),
                               args.repeat)
        t_cpu, res_cpu = timed(lambda _: fsdms(wdbc, "class", theta=0.14, backend="cpu"),
                               args.repeat)
        print(f"WDBC on {res_gpu.device}: {t_gpu:.3f} s, CPU {t_cpu:.3f} s, "
              f"ratio CPU / GPU {t_cpu / t_gpu:.2f}, same sequence: "
              f"{res_gpu.sequence == res_cpu.sequence}")
    else:
        print("No GPU: install CuPy (pip install 'mbstat[gpu]') on a CUDA machine for the GPU row.")

    print()
    print("== Scaling ==")
    ns_num = [250, 500, 1000] if args.quick else [250, 500, 1000, 2000]
    ds_num = [10, 20] if args.quick else [10, 20, 40]
    ns_dis = [1024, 4096] if args.quick else [1024, 4096, 16384]
    ds_dis = [12, 24] if args.quick else [12, 24, 48, 96]
    fsdms(synthetic_numerical(100, 5), "class", theta=0.14)  # kernel warm-up
    for label, make, theta, ns, n_fixed, ds, d_fixed in (
            ("numerical (theta 0.14)", synthetic_numerical, 0.14, ns_num, 500, ds_num, 20),
            ("discrete (binary)", synthetic_discrete, None, ns_dis, 1024, ds_dis, 24)):
        rows, times = [], []
        for n, d in [(n, d_fixed) for n in ns] + [(n_fixed, d) for d in ds]:
            df = make(n, d)
            t, res = timed(lambda _: fsdms(df, "class", theta=theta), 1)
            times.append(t)
            rows.append((f"n = {n}, d = {d}", round(t, 3), res.n_tests))
        t_n, t_d = times[:len(ns)], times[len(ns):]
        print(label)
        print(pd.DataFrame(rows, columns=["size", "seconds", "evaluations"])
              .set_index("size").to_string())
        print(f"  growth: time ~ n^{slope(ns, t_n):.2f} (d = {d_fixed}), "
              f"time ~ d^{slope(ds, t_d):.2f} (n = {n_fixed})")
        print()
    print("Expected: numerical ~ n^2 d^2 (O(d^2) evaluations, each over all ~n^2/2 "
          "cross-class pairs); discrete ~ n log n d^2 (O(d^2) group refinements by sorting).")


if __name__ == "__main__":
    main()
