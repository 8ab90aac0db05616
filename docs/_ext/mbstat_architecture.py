"""The architecture diagram of the documentation, drawn from the import contracts.

The layers and families come from ``[tool.importlinter]`` in pyproject.toml, the contracts
that ``lint-imports`` checks in CI, so the picture cannot drift from the code: each
contract is a column, its layers are rows (highest first), and the independent siblings
of a layer (``a | b``) share a row.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

#: The contracts drawn, in order, and their titles.
CONTRACTS = {"layers": "the package (mbstat)", "ci-layers": "inside mbstat.ci"}


def contracts(pyproject: Path) -> dict:
    """Contract id -> its layers, each a list of sibling modules (highest layer first)."""
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]
    out = {}
    for contract in config:
        if contract["id"] in CONTRACTS:
            out[contract["id"]] = [[m.strip() for m in layer.split("|")]
                                   for layer in contract["layers"]]
    return out


def draw(pyproject: Path, out: Path) -> Path:
    """Draw the diagram of ``pyproject``'s contracts into ``out`` (SVG); return ``out``."""
    found = contracts(pyproject)
    rows = max(len(layers) for layers in found.values())
    fig, axes = plt.subplots(1, len(found), figsize=(6.2 * len(found), 0.62 * rows + 1.2))
    for ax, (cid, layers) in zip(axes, found.items()):
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.5, rows + 0.2)
        ax.axis("off")
        ax.set_title(CONTRACTS[cid], fontsize=11)
        for r, siblings in enumerate(layers):
            y = rows - 1 - r - (rows - len(layers)) / 2
            width = 0.92 / len(siblings)
            for k, name in enumerate(siblings):
                x = 0.04 + k * width
                ax.add_patch(FancyBboxPatch((x + 0.01, y + 0.12), width - 0.02, 0.66,
                                            boxstyle="round,pad=0.01,rounding_size=0.04",
                                            facecolor="#dbe8f6" if len(siblings) == 1
                                            else "#f6e7d2", edgecolor="#3b5b7f", lw=1))
                ax.text(x + width / 2, y + 0.45, name, ha="center", va="center",
                        fontsize=9 if len(name) < 16 else 7.5, family="monospace")
        top = rows - 1 - (rows - len(layers)) / 2 + 0.5
        ax.annotate("", xy=(0.015, top - len(layers) + 0.7), xytext=(0.015, top + 0.2),
                    arrowprops=dict(arrowstyle="->", color="#555555"))
    fig.text(0.5, 0.01, "each row imports only the rows below it; boxes sharing a row "
             "(orange) import nothing of each other", ha="center", fontsize=9)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, bbox_inches="tight")
    plt.close(fig)
    return out
