"""A fingerprint of mbstat's decisions, to show that a refactoring changed nothing.

For every learner of the learner table and every node of asia (5,000 rows), alarm and
insurance (2,000 rows each; ``sample_network``, seed 1), with the default test and
alpha = 0.05, it records the blanket, the number of tests, and every logged test (x, y, z,
statistic, p-value, decision). A few more rows cover the continuous, mixed and model-based
paths (``fisher_z``, ``spearman``, ``mi-cg``, ``reg-lr`` on generated data; ``ppfs``,
``fsdms``, ``wfsdms``, ``ppi_test``, ``loco_test``, ``crt_test``). p-values are compared to 1e-10 relative (log
p-values where p underflows).

Run by hand, before and after a change:

    PYTHONPATH=. python benchmarks/fingerprint.py --out before.json
    PYTHONPATH=. python benchmarks/fingerprint.py --out after.json --compare before.json
"""
from __future__ import annotations

import argparse
import json
import math
import time
import warnings

import numpy as np

import mbstat
from mbstat.datasets import make_linear_gaussian, make_mixed_network, sample_network

NETWORKS = {"asia": 5000, "alarm": 2000, "insurance": 2000}
RTOL = 1e-10


def _tests(result) -> list:
    """The logged tests as plain rows."""
    table = result.tests
    rows = []
    for row in table.itertuples(index=False):
        rows.append([str(row.x), str(row.y), str(row.z), float(row.statistic),
                     float(row.pvalue), float(row.log_pvalue), bool(row.independent)])
    return rows


def _record(result) -> dict:
    out = {"blanket": sorted(map(str, result.blanket)), "n_tests": int(result.n_tests)}
    if hasattr(result, "tests"):
        out["tests"] = _tests(result)
    if hasattr(result, "boundaries"):
        out["boundaries"] = sorted(sorted(map(str, b)) for b in result.boundaries)
    return out


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def ci_learners() -> list:
    return [name for name, row in mbstat.LEARNERS.items() if row.kind == "ci"]


def fingerprint(quick: bool) -> dict:
    out = {}
    for net, n in NETWORKS.items():
        data = sample_network(net, n, seed=1)
        nodes = list(data.columns)[: 6 if quick else None]
        for name in ci_learners():
            learner = getattr(mbstat, name)
            for node in nodes:
                out[f"{net}/{name}/{node}"] = _record(_quiet(learner, data, node))
    gauss = make_linear_gaussian(20, 1000, seed=2)
    for test in ("fisher_z", "spearman", "normal-scores"):
        for name in ("iamb", "iamb_fdr", "mmpc"):
            for node in list(gauss.columns)[:5]:
                res = _quiet(getattr(mbstat, name), gauss, node, test=test)
                out[f"gauss/{test}/{name}/{node}"] = _record(res)
    mixed = make_mixed_network(800, seed=3)
    for test in ("mi-cg", "reg-lr"):
        for node in list(mixed.columns)[:4]:
            res = _quiet(mbstat.iamb, mixed, node, test=test)
            out[f"mixed/{test}/iamb/{node}"] = _record(res)
    asia = sample_network("asia", 1000, seed=4)
    out["asia/fsdms/dysp"] = {"ranking": list(map(str, _quiet(mbstat.fsdms, asia, "dysp").selected))}
    res = _quiet(mbstat.ppfs, asia, "dysp", B=20, K=2, seed=0, model="tree")
    out["asia/ppfs/dysp"] = {"selected": sorted(map(str, res.selected))}
    for func in (mbstat.ppi_test, mbstat.loco_test, mbstat.crt_test):
        res = _quiet(func, asia, "dysp", "bronc", ["smoke"], seed=0)
        out[f"asia/{func.__name__}"] = {"pvalue": float(res.pvalue)}
    return out


def _close(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-300)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--compare")
    parser.add_argument("--quick", action="store_true", help="six nodes per network")
    args = parser.parse_args()
    start = time.perf_counter()
    now = fingerprint(args.quick)
    with open(args.out, "w") as fh:
        json.dump(now, fh)
    print(f"{len(now)} runs fingerprinted in {time.perf_counter() - start:.0f} s -> {args.out}")
    if args.compare:
        with open(args.compare) as fh:
            before = json.load(fh)
        differ = [k for k in before if k not in now or not _close(before[k], now[k])]
        missing = [k for k in now if k not in before]
        n_tests = sum(len(v.get("tests", [])) for v in now.values())
        print(f"{len(now)} runs, {n_tests} logged tests compared (rtol {RTOL}): "
              f"{len(differ)} differ, {len(missing)} new")
        for key in differ[:20]:
            print("  differs:", key)
        raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
