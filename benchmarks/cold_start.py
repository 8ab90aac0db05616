"""Cold start: the first learner call in a fresh environment (issue #25).

Run by hand: ``python benchmarks/cold_start.py [--network alarm] [--rows 5000]
[--target HR] [--read-only] [--against DIR]``.

Each measurement is a fresh Python process, so that nothing compiled in this one is reused:

* **cold**: numba's cache directory empty (``NUMBA_CACHE_DIR`` a new temporary folder): the
  first ``iamb`` compiles every kernel it reaches; the compiles are timed one by one
  (numba's ``numba:compile`` events: each kernel's own time, its callees' excluded, and the
  total with them) and the slowest are listed;
* **warm**: a second process on the same cache directory: the kernels load from it;
* with ``--read-only``, the same two runs of a copy of the package whose folder is made
  read-only (as a system site-packages; its ``__pycache__`` folders replaced by plain files,
  which binds even for root), ``NUMBA_CACHE_DIR`` unset and ``XDG_CACHE_HOME`` a new
  folder: numba then caches under ``$XDG_CACHE_HOME/numba`` (its per-user locator), and
  the second run loads from there (``tests/test_cold_start.py`` checks this on one kernel).

With ``--against DIR`` (a folder holding another version of the ``mbstat`` package, say
``git archive <commit> | tar -x -C DIR``), the cold run of that version and of this one
alternate, ``--repeats`` times each, and the ratios of their first calls' CPU and wall
time are printed: a machine shared with other jobs loads both alike.

Printed: seconds to import mbstat and draw the data, the first ``iamb`` (wall clock, and
the process's CPU time, which a machine shared with other jobs inflates less), a second
``iamb`` in the same process, the number of compiles and where their time went (wall
clock), and the ratio of the cold to the warm first call. Issue #25's target is a cold
first call within 5 s.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import collections, json, sys, time
t0 = time.perf_counter()
from numba.core import event
listener = event.RecordingListener()
event.register("numba:compile", listener)
import mbstat
from mbstat.datasets import sample_network
network, rows, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = sample_network(network, rows, seed=1)
t1 = time.perf_counter()
c1 = time.process_time()
first = mbstat.iamb(data, target, progress=False)
t2 = time.perf_counter()
c2 = time.process_time()
mbstat.iamb(data, target, progress=False)
t3 = time.perf_counter()
stack, own, total, count = [], collections.Counter(), collections.Counter(), collections.Counter()
for ts, ev in listener.buffer:
    f = ev.data["dispatcher"].py_func
    name = f"{f.__module__}.{f.__qualname__}"
    if ev.is_start:
        stack.append([name, ts, 0.0])
    else:
        name, start, inner = stack.pop()
        own[name] += ts - start - inner
        count[name] += 1
        if stack:
            stack[-1][2] += ts - start
        else:
            total[name] += ts - start
print(json.dumps({"setup": t1 - t0, "first": t2 - t1, "first_cpu": c2 - c1,
                  "second": t3 - t2,
                  "blanket": list(first.blanket), "compiles": sum(count.values()),
                  "compile_total": sum(total.values()), "mbstat": mbstat.__file__,
                  "own": own.most_common(8), "top": total.most_common(5)}))
'''


def run(env, args, cwd):
    proc = subprocess.run([sys.executable, "-c", CHILD, args.network, str(args.rows),
                           args.target], capture_output=True, text=True, env=env, cwd=cwd)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(label, out):
    print(f"{label:>6}: setup {out['setup']:.2f} s, first iamb {out['first']:.2f} s "
          f"({out['first_cpu']:.2f} s CPU), second "
          f"{out['second']:.3f} s, {out['compiles']} compiles ({out['compile_total']:.1f} s "
          f"at top level); blanket {out['blanket']}")


def where(out):
    print("        slowest compiles with their callees: " + ", ".join(
        f"{name.rsplit('.', 1)[-1]} {t:.1f} s" for name, t in out["top"]))
    print("        slowest own times: " + ", ".join(
        f"{name.rsplit('.', 1)[-1]} {t:.1f} s" for name, t in out["own"]))


def pair(env, args, cwd, label):
    cold = run(env, args, cwd)
    report(f"cold{label}", cold)
    where(cold)
    warm = run(env, args, cwd)
    report(f"warm{label}", warm)
    print(f"        cold / warm first call: {cold['first'] / max(warm['first'], 1e-9):.0f}x "
          f"(target: cold within 5 s; mbstat from {Path(cold['mbstat']).parent})")
    return cold, warm


def against(args):
    """Cold first calls of the version in ``args.against`` and of this one, alternating."""
    versions = {"other": args.against.resolve(), "this": ROOT}
    firsts = {name: [] for name in versions}
    for rep in range(args.repeats):
        for name, root in versions.items():
            with tempfile.TemporaryDirectory() as tmp:
                env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba"),
                       "PYTHONPATH": str(root)}
                out = run(env, args, tmp)
            report(name, out)
            where(out)
            firsts[name].append(out)
    for key, label in (("first_cpu", "CPU"), ("first", "wall")):
        a = min(o[key] for o in firsts["other"])
        b = min(o[key] for o in firsts["this"])
        print(f"        first call, {label} (best of {args.repeats}): {a:.1f} s ({args.against}) "
              f"-> {b:.1f} s (this), {a / max(b, 1e-9):.2f}x")
    c = min(o["compiles"] for o in firsts["other"])
    d = min(o["compiles"] for o in firsts["this"])
    print(f"        compiles: {c} -> {d}; load now {os.getloadavg()[0]:.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="alarm")
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--target", default="HR")
    parser.add_argument("--read-only", action="store_true",
                        help="also time a read-only copy of the package (per-user cache)")
    parser.add_argument("--against", type=Path, default=None,
                        help="a folder holding another version of the mbstat package: "
                             "cold runs of both, alternating")
    parser.add_argument("--repeats", type=int, default=1,
                        help="cold runs of each version with --against")
    args = parser.parse_args(argv)
    print(f"{args.network}, {args.rows:,} rows, iamb(target={args.target!r}), default test; "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    if args.against is not None:
        return against(args)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba"),
               "PYTHONPATH": str(ROOT)}
        pair(env, args, tmp, "")
        if args.read_only:
            site = Path(tmp) / "site"
            shutil.copytree(ROOT / "mbstat", site / "mbstat",
                            ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
            for folder in [p for p in site.rglob("*") if p.is_dir()]:
                (folder / "__pycache__").write_text("not a folder")  # binds even for root
            for path in [site, *site.rglob("*")]:
                mode = path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
                path.chmod(mode)
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
            env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(Path(tmp) / "user-cache"))
            try:
                pair(env, args, tmp, " (r/o)")
                cached = list((Path(tmp) / "user-cache").rglob("*.nbi"))
                in_tree = list(site.rglob("*.nbi"))
                print(f"        cache index files: {len(cached)} under $XDG_CACHE_HOME/numba, "
                      f"{len(in_tree)} beside the read-only sources")
            finally:
                for path in [site, *site.rglob("*")]:
                    path.chmod(path.stat().st_mode | stat.S_IWUSR)


if __name__ == "__main__":
    main()
