"""Accuracy of every CI-test learner on the shipped networks, beside bnlearn's figures.

Mean F1 against the true Markov blanket over every node of ``sample_network(NAME, rows,
seed)``, alpha 0.05, the default test, averaged over seeds (with the spread over seeds),
the F1 on seed 1 (the sample of the peers' figures; the margin is taken there) and the
seconds for all nodes. bnlearn 4.9's figures (``iamb``, ``inter.iamb``, ``fast.iamb``,
``iamb.fdr``, ``gs`` with ``mi`` on the very same samples at seed 1, issue #15) are quoted: R is
not available here. pyCausalFS's MMMB and HITON-MB (``pip install pycausalfs``; its G2 test,
alpha 0.05) run beside mbstat on the same samples with ``--peers`` (slow: one Python test at a
time). PC learners also report F1 against the true parents and children.

    python benchmarks/accuracy.py                       # 3 networks, 500 / 5,000 / 20,000, 5 seeds
    python benchmarks/accuracy.py --quick               # alarm, 500 rows, 1 seed, 4 learners
    python benchmarks/accuracy.py --networks hailfinder --rows 5000 --learners iamb_fdr,mbor
    python benchmarks/accuracy.py --rows 500,5000 --peers   # with pyCausalFS's MMMB, HITON-MB
"""
from __future__ import annotations

import argparse
import functools
import time
import warnings

import numpy as np
import pandas as pd

import mbstat
from mbstat.bn import blanket_scores
from mbstat.datasets import load_network, sample_network

LEARNERS = ["iamb", "inter_iamb", "mbor", "gs_m", "iamb_fdr", "fast_iamb", "fbed", "mmmb",
            "hiton_mb", "mmpc", "hiton_pc", "si_hiton_pc"]
PEERS = ("MMMB", "HITON_MB")
#: bnlearn 4.9, alpha 0.05, mi (iamb / inter.iamb / fast.iamb / iamb.fdr / gs), seed 1 (issue #15)
BNLEARN = {
    ("alarm", 500): (.693, .693, .580, .662, .597),
    ("alarm", 5000): (.821, .830, .713, .855, .709),
    ("alarm", 20000): (.820, .842, .813, .908, .732),
    ("insurance", 500): (.538, .538, .426, .521, .458),
    ("insurance", 5000): (.700, .724, .673, .724, .558),
    ("insurance", 20000): (.751, .800, .722, .794, .614),
    ("hailfinder", 500): (.646, .646, .633, .680, .431),
    ("hailfinder", 5000): (.716, .721, .593, .801, .465),
    ("hailfinder", 20000): (.746, .757, .630, .820, .527),
}


@functools.lru_cache(maxsize=4)
def sample(name: str, rows: int, seed: int):
    """The network and its encoded sample, drawn once for every learner and peer."""
    return load_network(name), mbstat.as_dataset(sample_network(name, rows, seed=seed))


def score(name: str, rows: int, seed: int, learner: str):
    """(mean F1 of the blanket, mean F1 of parents/children, seconds) over every node."""
    net, data = sample(name, rows, seed)
    func = getattr(mbstat, learner)
    start = time.perf_counter()
    f1_mb, f1_pc = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in net.nodes:
            res = func(data, v, alpha=0.05)
            f1_mb.append(blanket_scores(res.blanket, net.markov_blanket(v))["F1"])
            pc = res.parents_children if res.parents_children is not None else res.blanket
            f1_pc.append(blanket_scores(pc, net.parents_children(v))["F1"])
    return float(np.mean(f1_mb)), float(np.mean(f1_pc)), time.perf_counter() - start


def peer_score(name: str, rows: int, seed: int, peer: str):
    """pyCausalFS's learner ``peer`` on the same sample: (mean F1, nan, seconds), or None."""
    try:
        from pyCausalFS.CBD.MBs.HITON.HITON_MB import HITON_MB
        from pyCausalFS.CBD.MBs.MMMB.MMMB import MMMB
    except ImportError:
        return None
    func = {"MMMB": MMMB, "HITON_MB": HITON_MB}[peer]
    net, data = sample(name, rows, seed)
    codes = pd.DataFrame(data.codes.astype(int))  # the peer takes integer codes by position
    start = time.perf_counter()
    f1 = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in net.nodes:
            found = func(codes, data.names.index(v), 0.05, True)[0]
            f1.append(blanket_scores([data.names[i] for i in found],
                                     net.markov_blanket(v))["F1"])
    return float(np.mean(f1)), np.nan, time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default="alarm,insurance,hailfinder")
    parser.add_argument("--rows", default="500,5000,20000")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1..N")
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--peers", action="store_true",
                        help="also run pyCausalFS's MMMB and HITON-MB (if installed)")
    parser.add_argument("--peer-seeds", type=int, default=1,
                        help="seeds 1..N for the pyCausalFS peers (slow)")
    parser.add_argument("--quick", action="store_true", help="alarm, 500 rows, one seed")
    args = parser.parse_args(argv)
    if args.quick:
        args.networks, args.rows, args.seeds = "alarm", "500", 1
        args.learners = "iamb,mbor,iamb_fdr,mmmb"
    learners = args.learners.split(",")
    for name in args.networks.split(","):
        for rows in (int(r) for r in args.rows.split(",")):
            print(f"\n{name}, {rows:,} rows, {args.seeds} seed(s): mean F1 (sd over seeds), "
                  "seconds for all nodes")
            best = ("", -1.0)  # by F1 on seed 1, the sample bnlearn's figures come from
            peers = {}
            for learner in learners:
                runs = np.array([score(name, rows, s, learner) for s in range(1, args.seeds + 1)])
                mb, pc, sec = runs.mean(axis=0)
                sd = runs[:, 0].std(ddof=1) if len(runs) > 1 else 0.0
                extra = f"  PC F1 {pc:.3f}" if learner in ("mmpc", "hiton_pc",
                                                           "si_hiton_pc") else ""
                print(f"  {learner:12s} F1 {mb:.3f} ({sd:.3f})  seed 1: {runs[0, 0]:.3f}  "
                      f"{sec:7.2f} s{extra}", flush=True)
                best = max(best, (learner, runs[0, 0]), key=lambda t: t[1])
            for peer in PEERS if args.peers else ():
                runs = [peer_score(name, rows, s, peer) for s in range(1, args.peer_seeds + 1)]
                if runs[0] is None:
                    print("  pyCausalFS not installed: pip install pycausalfs  (peers skipped)")
                    break
                runs = np.array(runs)
                sd = runs[:, 0].std(ddof=1) if len(runs) > 1 else 0.0
                peers[f"pyCausalFS {peer}"] = runs[0, 0]
                print(f"  pyCausalFS {peer:9s} F1 {runs[:, 0].mean():.3f} ({sd:.3f})  "
                      f"seed 1: {runs[0, 0]:.3f}  {runs[:, 2].mean():7.2f} s  "
                      f"({len(runs)} seed(s))", flush=True)
            quoted = BNLEARN.get((name, rows))
            if quoted:
                print(f"  bnlearn 4.9 (quoted, seed 1) iamb / inter.iamb / fast.iamb / iamb.fdr / "
                      f"gs: {' / '.join(f'{q:.3f}' for q in quoted)}")
                peers["bnlearn"] = max(quoted)
            if peers:
                who, top = max(peers.items(), key=lambda t: t[1])
                print(f"  seed 1: best mbstat {best[0]} {best[1]:.3f} - best peer ({who}) "
                      f"{top:.3f} = {best[1] - top:+.3f} (goal: +0.030)")

if __name__ == "__main__":
    main()
