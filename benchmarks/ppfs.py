"""PPFS defaults beside the paper's setting and PyImpetus (issue 27), in one run.

Three cases with known members; each selection is made on 70% of the rows and scored by a
random forest (500 trees) fitted on the selected features of those rows and scored on the
other 30% (accuracy, or R^2 for the regression), which no selection saw:

* ``make_classification(2000, 100, n_informative=5, n_redundant=0, shuffle=False)``:
  members x0..x4, 95 noise features;
* Friedman-1 (``make_friedman1(2000, 60, noise=1)``): y = 10 sin(pi x0 x1) +
  20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + e; members x0..x4, 55 noise features;
* ALARM, 3,000 rows x 37 (``mbstat.datasets.sample_network("alarm", 3000)``), target HR
  (3 classes): members, the network's Markov blanket of HR.

Configurations: ``ppfs(data, target)`` with every default (the holdout CRT with early-stopped
XGBoost, the spouse phase, the majority vote over K = 5 folds); the paper's
``model="tree", test="ppi"`` (30 splits, the paper's Eqs. 6-8 merge, no spouse phase:
Algorithm 2 as published); ``test="loco"``; and PyImpetus
(PPIMBC / PPIMBR with a decision tree, 30 simulations, cv 5, all CPUs), the paper's code.
For each: seconds (wall), members found, precision, recall, held-out score; then the
checks of issue 27: the default's recall at least the paper setting's and PyImpetus's,
precision >= 0.9, held-out score within 0.01 of the best configuration, at least 5x faster
than PyImpetus, within 20 s on ALARM 3,000 x 37.

Run::

    PYTHONPATH=. python benchmarks/ppfs.py              # the three cases (minutes)
    PYTHONPATH=. python benchmarks/ppfs.py --quick      # CI-sized: 600 rows
    PYTHONPATH=. python benchmarks/ppfs.py --cases alarm --no-loco   # one case, no LOCO
    PYTHONPATH=. python benchmarks/ppfs.py --wdbc       # also the paper's WDBC timing

PyImpetus is optional (``pip install PyImpetus seaborn``; it imports seaborn without
declaring it): without it, its rows and checks are skipped and said so.
"""
from __future__ import annotations

import argparse
import os
import time

import pandas as pd


# ------------------------------------------------------------------ the cases
def classification_case(n, p, seed):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=p, n_informative=5, n_redundant=0,
                               shuffle=False, random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame["y"] = y
    return frame, "y", {f"x{j}" for j in range(5)}, "classification"


def friedman_case(n, p, seed):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=n, n_features=p, noise=1.0, random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame["y"] = y
    return frame, "y", {f"x{j}" for j in range(5)}, "regression"


def alarm_case(n, seed):
    from mbstat.datasets import load_network, sample_network

    return (sample_network("alarm", n, seed=seed), "HR",
            set(load_network("alarm").markov_blanket("HR")), "classification")


CASES = ("classification", "friedman", "alarm")


def cases(quick: bool, seed: int, which=CASES) -> dict:
    n = 600 if quick else None
    made = {
        f"make_classification {n or 2000} x {40 if quick else 100} (5 informative)":
            lambda: classification_case(n or 2000, 40 if quick else 100, seed),
        f"Friedman-1 {n or 2000} x {20 if quick else 60}":
            lambda: friedman_case(n or 2000, 20 if quick else 60, seed),
        f"ALARM {n or 3000} x 37, target HR": lambda: alarm_case(n or 3000, seed),
    }
    return {name: make() for (name, make), key in zip(made.items(), CASES) if key in which}


# -------------------------------------------------------------- the measures
def codes(frame: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as their integer codes (for the forest and PyImpetus)."""
    return frame.apply(lambda c: c.cat.codes if isinstance(c.dtype, pd.CategoricalDtype)
                       else c)


def held_out_score(train, test, target, features, task, seed) -> float:
    """Accuracy (classification) or R^2 of a random forest fitted on ``features`` of the
    ``train`` rows, on the ``test`` rows."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    if not features:
        return float("nan")
    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    model = cls(n_estimators=500, random_state=seed, n_jobs=-1)
    cols = sorted(features)
    model.fit(codes(train[cols]), codes(train[[target]])[target])
    return float(model.score(codes(test[cols]), codes(test[[target]])[target]))


def precision_recall(found, truth) -> tuple:
    found, truth = set(found), set(truth)
    hit = len(found & truth)
    return (hit / len(found) if found else float("nan")), hit / len(truth)


def pyimpetus_classes():
    try:
        from PyImpetus import PPIMBC, PPIMBR
    except ImportError as exc:
        print(f"PyImpetus not available ({exc}): its rows and checks are skipped; install it "
              "with `pip install PyImpetus seaborn`")
        return None
    return PPIMBC, PPIMBR


def configurations(task, seed, peer, loco=True) -> dict:
    from mbstat.algorithms.ppfs import ppfs

    runs = {
        "ppfs defaults (crt, xgboost, vote)":
            lambda d, t: ppfs(d, t, seed=seed, progress=False).selected,
        "ppfs model='tree', test='ppi' (paper)":
            lambda d, t: ppfs(d, t, model="tree", test="ppi", merge="paper", spouses=False,
                              seed=seed, n_jobs=-1, progress=False).selected,
    }
    if loco:
        runs["ppfs test='loco'"] = lambda d, t: ppfs(d, t, test="loco", seed=seed,
                                                     progress=False).selected
    if peer is not None:
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        def pyimpetus(d, t):
            cls, tree = ((peer[0], DecisionTreeClassifier) if task == "classification"
                         else (peer[1], DecisionTreeRegressor))
            model = cls(tree(random_state=seed), p_val_thresh=0.05, num_simul=30, cv=5,
                        random_state=seed, n_jobs=-1, verbose=0)
            X = codes(d.drop(columns=t))
            model.fit(X, codes(d[[t]])[t].to_numpy())
            return [str(f) for f in model.MB]

        runs["PyImpetus (tree, 30 simulations, cv 5)"] = pyimpetus
    return runs


def run_case(name, case, seed, peer, loco=True) -> pd.DataFrame:
    from sklearn.model_selection import train_test_split

    frame, target, truth, task = case
    strat = frame[target] if task == "classification" else None
    train, test = train_test_split(frame, test_size=0.3, random_state=seed, stratify=strat)
    rows = []
    for label, fn in configurations(task, seed, peer, loco).items():
        start = time.perf_counter()
        try:
            found = list(fn(train, target))
        except Exception as exc:  # a refusal or a peer's failure: reported, not fatal
            print(f"  {label}: failed ({type(exc).__name__}: {exc})", flush=True)
            continue
        seconds = time.perf_counter() - start
        precision, recall = precision_recall(found, truth)
        rows.append({"configuration": label, "seconds": seconds, "n selected": len(found),
                     "precision": precision, "recall": recall,
                     "held-out score": held_out_score(train, test, target, found, task, seed),
                     "selected": ", ".join(sorted(found))})
        print(f"  {label}: {seconds:.1f} s, {sorted(found)}", flush=True)
    table = pd.DataFrame(rows).set_index("configuration")
    print(f"\n{name} ({task}; selection on {len(train)} rows, score "
          f"{'accuracy' if task == 'classification' else 'R^2'} on {len(test)}; truth "
          f"{sorted(truth)}):")
    print(table.drop(columns="selected").to_string(float_format=lambda v: f"{v:.3g}"))
    return table


def checks(name, table, alarm: bool) -> list:
    """The issue's checks for one case: (description, passed)."""
    default = table.iloc[0]
    out = [("precision >= 0.9", default["precision"] >= 0.9),
           ("held-out score within 0.01 of the best",
            default["held-out score"] >= table["held-out score"].max() - 0.01)]
    for other in table.index[1:]:
        if "loco" in other:
            continue
        out.append((f"recall >= {other}'s", default["recall"] >= table.loc[other, "recall"]))
    peer = [c for c in table.index if c.startswith("PyImpetus")]
    if peer:
        ratio = table.loc[peer[0], "seconds"] / default["seconds"]
        out.append((f"at least 5x faster than PyImpetus ({ratio:.1f}x)", ratio >= 5))
    if alarm:
        out.append((f"within 20 s on ALARM ({default['seconds']:.1f} s)",
                    default["seconds"] <= 20))
    return [(f"{name}: {d}", ok) for d, ok in out]


# ------------------------------------------------------- the paper's WDBC timing
def wdbc(seed, peer):
    """ppfs (the paper's tree and PPI test, B = 30, K = 5) beside PyImpetus's PPIMBC on WDBC:
    wall seconds on all CPUs and the held-out accuracy of a random forest."""
    from sklearn.model_selection import train_test_split

    from mbstat.algorithms.ppfs import ppfs
    from mbstat.datasets import load_wdbc

    full = load_wdbc()
    train, test = train_test_split(full, test_size=0.3, stratify=full["class"],
                                   random_state=seed)
    runs = {"ppfs (tree, ppi, B = 30, K = 5, paper merge)": lambda: ppfs(
        train, "class", model="tree", test="ppi", merge="paper", seed=seed, n_jobs=-1,
        progress=False).selected,
        "ppfs defaults": lambda: ppfs(train, "class", seed=seed, progress=False).selected}
    if peer is not None:
        from sklearn.tree import DecisionTreeClassifier

        def pyimpetus():
            model = peer[0](DecisionTreeClassifier(random_state=seed), p_val_thresh=0.05,
                            num_simul=30, cv=5, random_state=seed, n_jobs=-1, verbose=0)
            model.fit(train.drop(columns="class"), train["class"].to_numpy())
            return [str(f) for f in model.MB]
        runs["PyImpetus PPIMBC"] = pyimpetus
    rows = []
    for label, fn in runs.items():
        start = time.perf_counter()
        found = list(fn())
        rows.append({"configuration": label, "seconds": time.perf_counter() - start,
                     "n selected": len(found),
                     "held-out accuracy": held_out_score(train, test, "class", found,
                                                         "classification", seed)})
    print(f"\nWDBC ({len(train)} rows to select on, {len(test)} held out):")
    print(pd.DataFrame(rows).set_index("configuration").to_string(
        float_format=lambda v: f"{v:.3g}"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="CI-sized: 600 rows, fewer features")
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated, among {', '.join(CASES)} (default: all)")
    parser.add_argument("--no-loco", action="store_true", help="skip test='loco'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-pyimpetus", action="store_true")
    parser.add_argument("--wdbc", action="store_true", help="also the paper's WDBC timing")
    args = parser.parse_args(argv)
    peer = None if args.no_pyimpetus else pyimpetus_classes()
    which = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(which) - set(CASES))
    if unknown:
        parser.error(f"--cases: unknown {unknown}; choose among {list(CASES)}")
    print(f"ppfs (issue 27) on {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at start; seed {args.seed}\n", flush=True)
    results = []
    for name, case in cases(args.quick, args.seed, which).items():
        print(name, flush=True)
        table = run_case(name, case, args.seed, peer, not args.no_loco)
        results += checks(name, table, name.startswith("ALARM") and not args.quick)
        print(flush=True)
    print("Checks (issue 27):")
    for description, ok in results:
        print(f"  [{'pass' if ok else 'FAIL'}] {description}")
    if peer is None:
        print("  (PyImpetus not run: its checks skipped)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    if args.wdbc:
        wdbc(args.seed, peer)
    return results


if __name__ == "__main__":
    main()
