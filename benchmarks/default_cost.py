"""What the default costs and buys: every CI learner's default beside its asymptotic run.

For each network and sample size (``sample_network(NAME, ROWS, seed=1)``, every node as
target, alpha 0.05): the mean F1 against the true blanket (parents and children for the PC
learners) and the seconds of all nodes, for

* ``default``: the learner's defaults (the calibrated test, ``selection="bonferroni"``);
* ``asymptotic``: the same with ``calibration="asymptotic"``;
* ``paper``: the paper's procedure, ``selection="none"`` with the asymptotic test (for
  the learners whose default corrects the selection);
* ``bnlearn``: bnlearn 4.9 (``test="mi"``) on the very same CSV, when ``Rscript`` with
  bnlearn is installed (never required): ``learn.mb`` for the blanket learners; for the PC
  learners the structure learner of the same name (``mmpc()``, ``si.hiton.pc()``), whose
  neighbourhoods bnlearn makes symmetric with the "AND" filter as mbstat's default
  ``symmetry="and"`` (``learn.nbr`` returns one node's TPC set, without that correction:
  mbstat's ``symmetry="none"``); its seconds are the whole skeleton's. A column constant in
  the sample (barley, 5,000 rows) is left out of bnlearn's data, which refuses it; its
  blanket there is empty, as it is independent of every other column.

It prints the ratio of the default's time to the asymptotic run's and the default's F1
margin over the better of the asymptotic run and bnlearn (issue #25). Each run starts
with the calibration's caches of cells' laws emptied (``reset_cell_caches``): a search
timed from a cold start, not helped by the rows before it. ``--cpu`` times process CPU
seconds (all threads) instead of wall seconds: steadier on a shared machine.

    python benchmarks/default_cost.py                        # 4 networks, 5,000 rows
    python benchmarks/default_cost.py --quick                # alarm, 500 rows, 4 learners
    python benchmarks/default_cost.py --networks alarm --rows 20000 --learners iamb
    python benchmarks/default_cost.py --networks hailfinder --rows 20000 --seeds 1,2,3,4,5

A single sample's F1 margin of a few thousandths is within the sampling noise: with
``--seeds`` each sample's table is printed, then per learner the margin's mean over the
samples (paired: the default and its rivals on the same data) with its standard error.
"""
from __future__ import annotations

import argparse
import inspect
import os
import shutil
import subprocess
import tempfile
import time
import warnings

import numpy as np

import mbstat
from mbstat.bn import blanket_scores
from mbstat.ci.tables._kernels import reset_cell_caches
from mbstat.datasets import load_network, sample_network

LEARNERS = ["iamb", "inter_iamb", "fast_iamb", "gs_m", "mbor", "fbed", "iamb_fdr", "mmpc",
            "mmmb", "hiton_pc", "hiton_mb", "si_hiton_pc"]
PC = {"mmpc", "hiton_pc", "si_hiton_pc"}
#: bnlearn's name of each learner it has: (function, method)
BNLEARN = {"iamb": ("learn.mb", "iamb"), "inter_iamb": ("learn.mb", "inter.iamb"),
           "fast_iamb": ("learn.mb", "fast.iamb"), "iamb_fdr": ("learn.mb", "iamb.fdr"),
           "gs_m": ("learn.mb", "gs"), "mmpc": ("structure", "mmpc"),
           "si_hiton_pc": ("structure", "si.hiton.pc")}
R_SCRIPT = r"""
suppressMessages(library(bnlearn))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = "character", check.names = FALSE)
d[] <- lapply(d, factor)
single <- names(d)[sapply(d, nlevels) < 2]  # bnlearn refuses a constant column: its
d <- d[setdiff(names(d), single)]  # blanket is empty (independent of everything)
for (v in single) cat(v, "\t\t0\n", sep = "")
if (args[2] == "structure") {  # the whole skeleton, neighbourhoods made symmetric ("AND")
  t0 <- proc.time()[["elapsed"]]
  fit <- get(args[3])(d, test = "mi", alpha = 0.05, undirected = TRUE)
  each <- (proc.time()[["elapsed"]] - t0) / ncol(d)
  for (v in names(d))
    cat(v, "\t", paste(fit$nodes[[v]]$nbr, collapse = ";"), "\t", each, "\n", sep = "")
  quit(save = "no")
}
fun <- get(args[2])
for (v in names(d)) {
  t0 <- proc.time()[["elapsed"]]
  mb <- fun(d, node = v, method = args[3], test = "mi", alpha = 0.05)
  cat(v, "\t", paste(mb, collapse = ";"), "\t", proc.time()[["elapsed"]] - t0, "\n", sep = "")
}
"""


def bnlearn_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    done = subprocess.run(["Rscript", "-e", "suppressMessages(library(bnlearn))"],
                          capture_output=True)
    return done.returncode == 0


def run_bnlearn(csv: str, learner: str):
    """bnlearn's blankets {node: set} and its seconds (summed over nodes); raises
    CalledProcessError (with R's message) where R fails."""
    fun, method = BNLEARN[learner]
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as f:
        f.write(R_SCRIPT)
    try:
        out = subprocess.run(["Rscript", f.name, csv, fun, method], capture_output=True,
                             text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    found, seconds = {}, 0.0
    for line in out.splitlines():
        node, members, sec = line.split("\t")
        found[node] = {m for m in members.split(";") if m}
        seconds += float(sec)
    return found, seconds


def truth(net, v, learner):
    return net.parents_children(v) if learner in PC else net.markov_blanket(v)


CLOCK = time.perf_counter


def score(net, data, learner, **kwargs):
    func = getattr(mbstat, learner)
    reset_cell_caches()  # a cold start (see the module docstring)
    f1, start = [], CLOCK()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in net.nodes:
            res = func(data, v, alpha=0.05, progress=False, **kwargs)
            f1.append(blanket_scores(res.blanket, truth(net, v, learner))["F1"])
    return float(np.mean(f1)), CLOCK() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default="alarm,insurance,hailfinder,barley")
    parser.add_argument("--rows", default="5000")
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--no-bnlearn", action="store_true", help="skip bnlearn even if R has it")
    parser.add_argument("--quick", action="store_true", help="alarm, 500 rows, 4 learners")
    parser.add_argument("--seeds", default="1",
                        help="samples (comma-separated seeds of sample_network); several: "
                             "also the margins' mean and standard error over them")
    parser.add_argument("--cpu", action="store_true",
                        help="process CPU seconds (all threads), not wall seconds")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    if args.quick:
        args.networks, args.rows, args.learners = "alarm", "500", "iamb,fbed,mmmb,iamb_fdr"
    with_r = not args.no_bnlearn and bnlearn_available()
    seeds = [int(s) for s in args.seeds.split(",")]
    for name in args.networks.split(","):
        net = load_network(name)
        for rows in (int(r) for r in args.rows.split(",")):
            margins = {}  # learner -> [(default F1, rival F1, time ratio)] per seed
            for seed in seeds:
                for learner, row in run_sample(net, name, rows, seed, args.learners, with_r):
                    margins.setdefault(learner, []).append(row)
            if len(seeds) > 1:
                print_over_seeds(name, rows, seeds, margins)


def run_sample(net, name, rows, seed, learners, with_r):
    """Print the table of one sample (``sample_network(name, rows, seed)``); yield per
    learner (default F1, the better of asymptotic and bnlearn F1, time ratio)."""
    frame = sample_network(name, rows, seed=seed)
    data = mbstat.as_dataset(frame)
    csv = None
    if with_r:
        csv = tempfile.NamedTemporaryFile(suffix=".csv", delete=False).name
        frame.to_csv(csv, index=False)
    mbstat.iamb(data, net.nodes[0], progress=False)  # compile before the clock
    print(f"\n{name}, {rows:,} rows (seed {seed}): mean F1 / seconds, all {len(net.nodes)} "
          "nodes")
    print(f"  {'learner':12s} {'default':>15s} {'asymptotic':>15s} {'paper':>15s} "
          f"{'bnlearn':>15s}   time ratio  F1 margin")
    for learner in learners.split(","):
        cols = {"default": score(net, data, learner),
                "asymptotic": score(net, data, learner, calibration="asymptotic")}
        if "selection" in inspect.signature(getattr(mbstat, learner)).parameters:
            cols["paper"] = score(net, data, learner, calibration="asymptotic",
                                  selection="none")
        found = None
        if csv and learner in BNLEARN:
            try:
                found, sec = run_bnlearn(csv, learner)
            except subprocess.CalledProcessError as exc:  # say why, go on without
                print(f"  bnlearn {learner} failed: {exc.stderr.strip()[-200:]}")
        if found is not None:
            f1 = np.mean([blanket_scores(sorted(found[v]), truth(net, v, learner))["F1"]
                          for v in net.nodes])
            cols["bnlearn"] = (float(f1), sec)
        cells = [f"{cols[c][0]:.3f} {cols[c][1]:7.2f}s" if c in cols else f"{'-':>15s}"
                 for c in ("default", "asymptotic", "paper", "bnlearn")]
        ratio = cols["default"][1] / cols["asymptotic"][1]
        rival = max(cols["asymptotic"][0], cols.get("bnlearn", (-1.0, 0))[0])
        print(f"  {learner:12s} {' '.join(f'{c:>15s}' for c in cells)}   "
              f"{ratio:9.2f}x  {cols['default'][0] - rival:+.3f}", flush=True)
        yield learner, (cols["default"][0], rival, ratio)
    if csv:
        os.unlink(csv)


def print_over_seeds(name, rows, seeds, margins) -> None:
    """Per learner over the samples: the mean F1 margin of the default over the better of
    its asymptotic run and bnlearn (paired by sample) with its standard error, the samples
    where the margin is >= 0, and the median time ratio."""
    print(f"\n{name}, {rows:,} rows, seeds {','.join(map(str, seeds))}: the default's F1 "
          "margin over the better of asymptotic and bnlearn, paired by sample")
    print(f"  {'learner':12s} {'mean margin':>12s} {'s.e.':>7s} {'margin >= 0':>12s} "
          f"{'median time ratio':>18s}")
    for learner, got in margins.items():
        diff = np.array([d - r for d, r, _ in got])
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        print(f"  {learner:12s} {diff.mean():+12.4f} {se:7.4f} "
              f"{np.count_nonzero(diff >= 0):>5d} of {len(diff):<4d} "
              f"{np.median([t for *_, t in got]):17.2f}x", flush=True)


if __name__ == "__main__":
    main()
