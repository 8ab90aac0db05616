"""Speed of ppfs against PyImpetus's PPIMBC (the paper's own code), measured side by side.

Both select a Markov blanket of the WDBC class with the paper's model (a
fully grown decision tree), 30 splits per PPI test and 5-fold MB aggregation,
on this machine in the same run:

* wall-clock seconds on all CPUs (PyImpetus ``n_jobs=-1``, ours
  ``n_jobs=os.cpu_count()``), the runs interleaved, median over repeats;
* CPU seconds of one sequential run of each (``n_jobs=1``), which other
  load on the machine hardly changes;
* downstream accuracy of a decision tree and an RBF SVM (C = 1, standardized)
  on each selected set: both select on 70% of the rows (stratified), and the
  models fitted there on the selected features are scored on the 30% held out;
* seconds and fits per second of ppfs with XGBoost on the CPU, and on a GPU
  when one answers.

And the defaults (issue 16), with ``--defaults`` (or ``--only-defaults``):

* ALARM, 3,000 rows x 37 columns, target HR: ``ppfs(data, "HR")`` with every
  default (the calibrated LOCO test, early-stopped XGBoost, all CPUs) and with
  ``test="crt"`` beside the paper's setting (``test="ppi", model="tree"``) and PyImpetus: wall and CPU
  seconds, precision/recall against the network's true blanket;
* ``make_classification(2000, 100, n_informative=5, shuffle=False)`` (the first
  5 columns informative, the rest noise): the same, with precision/recall of
  the informative columns and the downstream accuracy on 600 held-out rows.

Run by hand (minutes)::

    PYTHONPATH=. python benchmarks/ppfs.py
    PYTHONPATH=. python benchmarks/ppfs.py --repeats 3 --skip-cpu-time
    PYTHONPATH=. python benchmarks/ppfs.py --only-defaults

PyImpetus is optional: ``pip install pyimpetus seaborn`` (it imports seaborn
without declaring it).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd


def downstream(train, test, target, features, seed=0):
    """Held-out accuracy of a decision tree and an RBF SVM fitted on ``features`` of the
    ``train`` rows (the rows the features were selected on), scored on the ``test`` rows,
    which no selection saw (accuracy on the selection rows would reward overfitted picks)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    if not features:
        return float("nan"), float("nan")
    cols = list(features)
    out = []
    for model in (DecisionTreeClassifier(random_state=seed),
                  make_pipeline(StandardScaler(), SVC(C=1.0, kernel="rbf"))):
        model.fit(train[cols], train[target])
        out.append(float(model.score(test[cols], test[target])))
    return tuple(out)


def pyimpetus_class():
    try:
        from PyImpetus import PPIMBC
    except ImportError as exc:
        print(f"PyImpetus not available ({exc}); install it with "
              "`pip install pyimpetus seaborn` to compare")
        return None
    return PPIMBC


def run_pyimpetus(PPIMBC, X, y, B, K, seed, n_jobs=-1):
    from sklearn.tree import DecisionTreeClassifier

    model = PPIMBC(DecisionTreeClassifier(random_state=seed), p_val_thresh=0.05, num_simul=B,
                   cv=K, random_state=seed, n_jobs=n_jobs, verbose=0)
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y.to_numpy())
    return time.perf_counter() - wall, time.process_time() - cpu, [str(f) for f in model.MB]


def run_mbstat(df, B, K, seed, model="tree", n_jobs=None, **kw):
    from mbstat.algorithms.ppfs import ppfs

    n_jobs = n_jobs or os.cpu_count()
    wall, cpu = time.perf_counter(), time.process_time()
    res = ppfs(df, "class", test="ppi", B=B, K=K, model=model, n_jobs=n_jobs, seed=seed, **kw)
    return time.perf_counter() - wall, time.process_time() - cpu, res


def timed(fn):
    """(result, wall seconds, CPU seconds of this process and its threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def scores(found, truth) -> tuple:
    found, truth = set(found), set(truth)
    hit = len(found & truth)
    return (hit / len(found) if found else float("nan")), hit / len(truth)


def defaults_case(name, data, target, truth, PPIMBC, seed, held_out=None):
    """ppfs with every default, with the CRT, the paper's setting and PyImpetus on one
    problem; with ``held_out`` rows, the downstream accuracy of each selection on them."""
    from sklearn.tree import DecisionTreeClassifier

    from mbstat.algorithms.ppfs import ppfs

    runs = {
        "mbstat ppfs, defaults (LOCO, xgboost)": lambda: list(
            ppfs(data, target, seed=seed, progress=False).selected),
        "mbstat ppfs, test='crt' (xgboost)": lambda: list(
            ppfs(data, target, test="crt", seed=seed, progress=False).selected),
        "mbstat ppfs, paper (PPI, tree, B = 30)": lambda: list(
            ppfs(data, target, test="ppi", model="tree", seed=seed, n_jobs=-1,
                 progress=False).selected),
    }
    if PPIMBC is not None:
        X = data.drop(columns=target)
        codes = X.apply(lambda c: c.cat.codes if hasattr(c, "cat") else c)
        y = data[target].cat.codes if hasattr(data[target], "cat") else data[target]

        def peer():
            model = PPIMBC(DecisionTreeClassifier(random_state=seed), p_val_thresh=0.05,
                           num_simul=30, cv=5, random_state=seed, n_jobs=-1, verbose=0)
            model.fit(codes, y.to_numpy())
            return [str(f) for f in model.MB]

        runs["PyImpetus PPIMBC (tree, 30)"] = peer
    rows = []
    for label, fn in runs.items():
        found, wall, cpu = timed(fn)
        precision, recall = scores(found, truth)
        row = {"method": label, "seconds": wall, "CPU s (main process)": cpu,
               "n selected": len(found), "precision": precision, "recall": recall}
        if held_out is not None:
            row["tree accuracy"], row["SVM accuracy"] = downstream(data, held_out, target,
                                                                   found, seed)
        rows.append(row)
        print(f"  {label}: {wall:.1f} s, {sorted(found)}", flush=True)
    table = pd.DataFrame(rows).set_index("method")
    print(f"\n{name}:")
    print(table.to_string(float_format=lambda v: f"{v:.3g}"))
    base = table["seconds"].iloc[0]
    print("time ratio to the defaults: " + ", ".join(
        f"{m}: {s / base:.2g}x" for m, s in table["seconds"].items()))
    return table


def defaults(seed, PPIMBC):
    from sklearn.datasets import make_classification

    from mbstat.datasets import load_network, sample_network

    print(f"ppfs defaults (issue 16) on {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at start")
    alarm = sample_network("alarm", 3000, seed=0)
    defaults_case("ALARM 3,000 x 37, target HR (truth: the network's blanket)", alarm, "HR",
                  load_network("alarm").markov_blanket("HR"), PPIMBC, seed)
    X, y = make_classification(n_samples=2000, n_features=100, n_informative=5,
                               n_redundant=0, shuffle=False, random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(100)])
    frame["class"] = y
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(frame, test_size=0.3, stratify=y, random_state=seed)
    defaults_case("make_classification 2,000 x 100, 5 informative (x0..x4); selection on "
                  "1,400 rows, accuracy on the 600 held out", train, "class",
                  {f"x{j}" for j in range(5)}, PPIMBC, seed, held_out=test)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--B", type=int, default=30)
    parser.add_argument("--K", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2, help="interleaved timed runs (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-cpu-time", action="store_true",
                        help="skip the sequential (n_jobs=1) CPU-time comparison")
    parser.add_argument("--skip-xgboost", action="store_true")
    parser.add_argument("--defaults", action="store_true",
                        help="also the defaults cases of issue 16 (ALARM, 2,000 x 100)")
    parser.add_argument("--only-defaults", action="store_true")
    args = parser.parse_args(argv)
    if args.only_defaults:
        defaults(args.seed, pyimpetus_class())
        return

    from mbstat.backend import gpu_available
    from mbstat.datasets import load_wdbc

    from sklearn.model_selection import train_test_split

    full = load_wdbc()
    df, held_out = train_test_split(full, test_size=0.3, stratify=full["class"],
                                    random_state=args.seed)
    X, y = df.drop(columns="class"), df["class"]
    cpus = os.cpu_count()
    print(f"WDBC: {len(df)} rows to select on ({len(held_out)} held out), {X.shape[1]} features; B = {args.B} splits, K = {args.K} "
          f"folds, decision tree (the paper's PPI model); {cpus} CPUs; "
          f"load average {os.getloadavg()[0]:.2f} at start\n")

    PPIMBC = pyimpetus_class()
    ours_wall, peer_wall = [], []
    for _ in range(args.repeats):  # interleaved, so that other load hits both alike
        sec, _, res = run_mbstat(df, args.B, args.K, args.seed)
        ours_wall.append(sec)
        if PPIMBC is not None:
            sec, _, peer_features = run_pyimpetus(PPIMBC, X, y, args.B, args.K, args.seed)
            peer_wall.append(sec)
    rows = {"mbstat ppfs (tree)": (statistics.median(ours_wall), list(res.selected))}
    if PPIMBC is not None:
        rows["PyImpetus PPIMBC"] = (statistics.median(peer_wall), peer_features)
    rows["all features"] = (np.nan, list(X.columns))

    table = []
    for name, (sec, feats) in rows.items():
        tree, svm = downstream(df, held_out, "class", feats, args.seed)
        table.append({"method": name, "seconds": sec, "n features": len(feats),
                      "tree accuracy": tree, "SVM accuracy": svm})
    table = pd.DataFrame(table).set_index("method")
    print(f"wall clock on {cpus} CPUs (median of {args.repeats} interleaved runs); accuracy: "
          f"on the {len(held_out)} held-out rows")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"runs (s): mbstat {[round(s, 1) for s in ours_wall]}, "
          f"PyImpetus {[round(s, 1) for s in peer_wall]}")
    fits_per_s = res.n_fits / table.loc["mbstat ppfs (tree)", "seconds"]
    print(f"mbstat: {res.n_fits} fits, {fits_per_s:.0f} fits/s")
    if PPIMBC is not None:
        ours, peer = table.loc["mbstat ppfs (tree)"], table.loc["PyImpetus PPIMBC"]
        print(f"speed-up over PyImpetus (wall): {peer['seconds'] / ours['seconds']:.1f}x; "
              f"accuracy difference (mbstat - PyImpetus): tree "
              f"{100 * (ours['tree accuracy'] - peer['tree accuracy']):+.2f} points, SVM "
              f"{100 * (ours['SVM accuracy'] - peer['SVM accuracy']):+.2f} points")

    if PPIMBC is not None and not args.skip_cpu_time:
        _, ours_cpu, _ = run_mbstat(df, args.B, args.K, args.seed, n_jobs=1)
        _, peer_cpu, _ = run_pyimpetus(PPIMBC, X, y, args.B, args.K, args.seed, n_jobs=1)
        print(f"\nCPU seconds, one sequential run each (n_jobs=1): mbstat {ours_cpu:.1f}, "
              f"PyImpetus {peer_cpu:.1f}: {peer_cpu / ours_cpu:.1f}x less CPU")

    if args.defaults:
        print()
        defaults(args.seed, PPIMBC)
    if args.skip_xgboost:
        return
    print("\nppfs with XGBoost (defaults: 50 rounds, depth 4, eta 0.3), same B and K:")
    devices = ["cpu"] + (["cuda"] if gpu_available() else [])
    for device in devices:
        sec, _, res = run_mbstat(df, args.B, args.K, args.seed, model="xgboost", device=device,
                                 n_jobs=1 if device == "cuda" else None)
        print(f"  device={device!r} (ran on {res.device}): {sec:.1f} s, {res.n_fits} fits, "
              f"{res.n_fits / sec:.0f} fits/s, {len(res.selected)} features selected")
    if len(devices) == 1:
        print("  no GPU answered here: CUDA figures not measured")


if __name__ == "__main__":
    main()
