# %% [markdown]
# # IAMB-IP: does prior knowledge help IAMB, even when half of it is wrong?
#
# The protocol of Pocock, Lujan & Brown (2012), Algorithm 2, on ALARM and
# HAILFINDER. For every node with a Markov blanket of 2 or more members, and
# every data sample, IAMB (threshold t = 0.02 on the conditional mutual
# information) is compared with IAMB-IP under 40 random priors of each kind:
#
# * **2 TP**: two blanket members upweighted (w = +1);
# * **TPTN**: one member upweighted, one non-member downweighted (w = -1);
# * **TPFN**: one member upweighted, another member downweighted (a false negative);
# * **TPFP**: one member upweighted, one non-member upweighted (a false positive).
#
# alpha_d = log 99, capped at alpha_s = t N as the paper does. IAMB-IP "wins"
# on a sample when the 95% confidence interval of its mean F1 over the 40
# priors lies above IAMB's F1, "loses" when it lies below, and draws
# otherwise. Table 1 gives, per sample size, the mean over nodes of the
# number of wins/draws/losses among the data samples (30 samples per size for
# 10..100 rows, 10 for 200..1000, as in the paper); Fig. 2 the fractions,
# pooled over both networks, for small/large samples and correct (2 TP,
# TPTN) / flawed (TPFN, TPFP) priors.
#
# The protocol runs millions of IAMB-IP searches, so it does not call
# :func:`mbstat.iamb_ip` for each: it runs the same search (``search`` with
# the ``mi_rule`` decision of :mod:`mbstat.algorithms.iamb_ip`) on one CI
# tester per sample, whose cache answers the tests the runs share.
#
# Run: ``python vignettes/iamb_ip_priors.py [--quick] [--out DIR]
# [--networks alarm hailfinder] [--data-repeats S L] [--prior-repeats R]``
# (full mode: about an hour on 2 cores, 60 min measured; ``--quick``: seconds).

# %%
from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from mbstat.algorithms.iamb import search
from mbstat.algorithms.iamb_ip import mi_rule
from mbstat.bn import blanket_scores
from mbstat.ci.engine import CITester
from mbstat.datasets import load_network, sample_network

KINDS = ["2 TP", "TPTN", "TPFN", "TPFP"]
THRESHOLD = 0.02
ALPHA_D = math.log(99)
SMALL = list(range(10, 101, 10))
LARGE = list(range(200, 1001, 100))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="IAMB-IP win/draw/loss protocol")
    parser.add_argument("--quick", action="store_true", help="ALARM, 2 sizes, few repeats")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "mbstat_vignettes"),
                        help="folder for the PNG and CSV (default: mbstat_vignettes in the "
                             "temp folder)")
    parser.add_argument("--networks", nargs="+", default=None)
    parser.add_argument("--data-repeats", nargs=2, type=int, default=None,
                        metavar=("SMALL", "LARGE"), help="samples per size (paper: 30 10)")
    parser.add_argument("--prior-repeats", type=int, default=None, help="priors (paper: 40)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def random_prior(kind, members, others, rng) -> dict:
    """One random prior of a kind: (feature, weight) pairs as the paper builds them."""
    if kind in ("2 TP", "TPFN"):
        a, b = rng.choice(members, size=2, replace=False)
        return {a: 1.0, b: 1.0 if kind == "2 TP" else -1.0}
    a, b = rng.choice(members), rng.choice(others)
    return {a: 1.0, b: -1.0 if kind == "TPTN" else 1.0}


def wdl(scores, baseline) -> str:
    """Win, draw or loss of IAMB-IP's mean F1 (95% normal interval) against IAMB's F1."""
    mean = np.mean(scores)
    half = 1.96 * np.std(scores, ddof=1) / math.sqrt(len(scores)) if len(scores) > 1 else 0.0
    if mean - half > baseline:
        return "win"
    if mean + half < baseline:
        return "loss"
    return "draw"


class BatchMemo:
    """A CI tester that answers a batch asked before from memory.

    The runs on one sample ask the same batches over and over (a prior changes
    few decisions); the tester's own cache would answer each test again.
    """

    def __init__(self, tester):
        self.tester = tester
        self.memo = {}

    def test_many(self, xs, y, z=(), phase=""):
        key = (tuple(xs), y, tuple(z))
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self.tester.test_many(xs, y, z, phase)
        return hit

    def test(self, x, y, z=(), phase=""):
        return self.test_many([x], y, z, phase)[0]


def run_sample(net, truth, valid, n, seed, prior_repeats, rng) -> list:
    """IAMB and IAMB-IP on one sample for every valid node; one record per node and kind."""
    tester = BatchMemo(CITester(sample_network(net, n, seed=seed)))
    alpha_d = min(ALPHA_D, THRESHOLD * n)  # the paper's cap alpha_d <= alpha_s = t N
    records = []
    for node in valid:
        cands = [c for c in net.nodes if c != node]
        mb = truth[node]
        members, others = sorted(mb), [c for c in cands if c not in mb]
        memo = {}

        def blanket(prior):
            key = frozenset(prior.items())
            if key not in memo:
                rule = mi_rule(prior, THRESHOLD, alpha_d, n)
                memo[key] = search(tester, node, cands, "iamb", rule=rule)
            return memo[key]

        base = blanket_scores(blanket({}), mb)["F1"]
        for kind in KINDS:
            scores = [blanket_scores(blanket(random_prior(kind, members, others, rng)), mb)["F1"]
                      for _ in range(prior_repeats)]
            records.append({"node": node, "rows": n, "seed": seed, "kind": kind,
                            "iamb": base, "iamb_ip": float(np.mean(scores)),
                            "result": wdl(scores, base)})
    return records


def run(networks, sizes, data_repeats, prior_repeats, seed) -> pd.DataFrame:
    records = []
    start = time.perf_counter()
    for code, name in enumerate(networks):
        net = load_network(name)
        truth = net.markov_blankets()
        valid = [v for v in net.nodes if len(truth[v]) >= 2]
        for group, group_sizes in sizes.items():
            for n in group_sizes:
                for rep in range(data_repeats[group]):
                    rng = np.random.default_rng([seed, code, n, rep])
                    data_seed = int(rng.integers(2**31))
                    for rec in run_sample(net, truth, valid, n, data_seed, prior_repeats, rng):
                        records.append({"network": name, "group": group, "repeat": rep, **rec})
                print(f"  {name}, {n} rows: {data_repeats[group]} samples "
                      f"({time.perf_counter() - start:.0f} s)", flush=True)
    return pd.DataFrame.from_records(records)


def table1(frame: pd.DataFrame, network: str) -> pd.DataFrame:
    """Mean over nodes of the wins/draws/losses among the samples of each size."""
    part = frame[frame["network"] == network]
    counts = (part.assign(one=1)
              .pivot_table(index=["rows", "kind", "node"], columns="result", values="one",
                           aggfunc="sum", fill_value=0)
              .reindex(columns=["win", "draw", "loss"], fill_value=0))
    means = counts.groupby(level=["rows", "kind"]).mean()
    cell = means.apply(lambda r: f"{r['win']:.1f}/{r['draw']:.1f}/{r['loss']:.1f}", axis=1)
    out = cell.unstack("kind")[KINDS]
    out.index.name = "size"
    for group, sizes in (("small mean", SMALL), ("large mean", LARGE)):
        rows = means.loc[means.index.get_level_values("rows").isin(sizes)]
        if len(rows):
            m = rows.groupby(level="kind").mean()
            out.loc[group] = [f"{m.loc[k, 'win']:.1f}/{m.loc[k, 'draw']:.1f}/"
                              f"{m.loc[k, 'loss']:.1f}" for k in KINDS]
    return out


def fractions(frame: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2: fraction of wins/draws/losses by sample group and prior correctness."""
    prior = np.where(frame["kind"].isin(["2 TP", "TPTN"]), "Correct", "Flawed")
    label = frame["group"].str.capitalize() + ", " + prior
    share = pd.crosstab(label, frame["result"], normalize="index")
    order = [f"{g}, {p}" for p in ("Correct", "Flawed") for g in ("Small", "Large")]
    share = share.reindex(index=[o for o in order if o in share.index],
                          columns=["win", "draw", "loss"], fill_value=0.0)
    share.index.name = "experiment"
    return share


def plot(share: pd.DataFrame, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    bottom = np.zeros(len(share))
    for col, color, label in (("win", "C2", "Wins"), ("draw", "0.7", "Draws"),
                              ("loss", "C3", "Losses")):
        ax.bar(range(len(share)), share[col], bottom=bottom, color=color, label=label)
        bottom += share[col].to_numpy()
    ax.set_xticks(range(len(share)))
    ax.set_xticklabels(share.index)
    ax.set_ylim(0, 1)
    ax.set_ylabel("Fraction")
    ax.set_xlabel("Experiment")
    ax.set_title("IAMB-IP against IAMB (win/draw/loss, 95% CI)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return ax


def main(argv=None):
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.quick:
        networks = args.networks or ["alarm"]
        sizes = {"small": [30], "large": [500]}
        data_repeats = dict(zip(("small", "large"), args.data_repeats or (2, 2)))
        prior_repeats = args.prior_repeats or 10
    else:
        networks = args.networks or ["alarm", "hailfinder"]
        sizes = {"small": SMALL, "large": LARGE}
        data_repeats = dict(zip(("small", "large"), args.data_repeats or (30, 10)))
        prior_repeats = args.prior_repeats or 40
    start = time.perf_counter()
    frame = run(networks, sizes, data_repeats, prior_repeats, args.seed)
    elapsed = time.perf_counter() - start

    print(f"IAMB-IP vs IAMB: t = {THRESHOLD}, alpha_d = log 99 (capped at t N), "
          f"{prior_repeats} priors per kind; samples per size: {data_repeats['small']} "
          f"(small), {data_repeats['large']} (large)\n")
    for name in networks:
        print(f"Table 1 ({name}): mean wins/draws/losses of IAMB-IP among the samples")
        print(table1(frame, name).to_string())
        print()
    share = fractions(frame)
    print("Fig. 2: fractions pooled over networks and nodes")
    print(share.round(3).to_string())
    mean_f1 = frame.groupby(["group", "kind"])[["iamb", "iamb_ip"]].mean().round(3)
    print("\nMean F1 of IAMB and of IAMB-IP (mean over priors)")
    print(mean_f1.to_string())
    frame.to_csv(out / "iamb_ip_priors.csv", index=False)
    plot(share, out / "iamb_ip_priors.png")
    print(f"\n{len(frame)} comparisons in {elapsed:.1f} s; wrote {out / 'iamb_ip_priors.png'} "
          f"and {out / 'iamb_ip_priors.csv'}")


# %%
if __name__ == "__main__":
    main()
