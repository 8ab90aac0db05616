"""Command line: ``python -m mbstat demo`` (more subcommands come with later releases)."""
from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def demo(n: int = 5000, seed: int = 1, targets=("HR", "CO", "PVSAT")) -> int:
    """Learn a few ALARM blankets from a sample and compare them with the truth."""
    import mbstat
    from mbstat.datasets import load_network

    net = load_network("alarm")
    data = net.sample(n, seed=seed)
    print(f"ALARM network ({len(net.nodes)} nodes, {net.n_arcs} arcs), {n} rows sampled "
          f"with seed {seed}.\n")
    print(mbstat.ci_test(data, "HR", "CO", z=["STROKEVOLUME"]))
    for target in targets:
        res = mbstat.iamb(data, target, alpha=0.05)
        truth = sorted(net.markov_blanket(target))
        print(res.summary())
        found = set(res.blanket)
        print(f"True blanket of {target}: {{{', '.join(truth)}}}")
        print(f"  missed: {sorted(set(truth) - found) or 'none'}; "
              f"extra: {sorted(found - set(truth)) or 'none'}\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="mbstat", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="learn ALARM blankets from a sample and check them")
    p_demo.add_argument("--rows", type=int, default=5000)
    p_demo.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.rows, args.seed)
    return 2


if __name__ == "__main__":
    sys.exit(main())
