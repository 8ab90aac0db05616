"""How a learned Markov blanket compares with the true one."""
from __future__ import annotations

from .dag import _is_single

__all__ = ["blanket_scores"]


def blanket_scores(found, truth) -> dict:
    """How a learned Markov blanket compares with the true one.

    Parameters
    ----------
    found, truth : iterables of nodes
        The learned and the true blanket (e.g. ``result.blanket`` and
        ``net.markov_blanket(target)``).

    Returns
    -------
    dict
        ``precision`` and ``recall`` (1 for an empty ``found`` / ``truth``), their
        harmonic mean ``F1`` (0 when they are both 0), and the counts of false
        positives ``FP`` and false negatives ``FN``.

    Examples
    --------
    >>> round(blanket_scores(["a", "b", "x"], ["a", "b", "c", "d"])["F1"], 4)
    0.5714
    """
    for param, value in (("found", found), ("truth", truth)):
        if _is_single(value):
            raise TypeError(f"{param} must be an iterable of nodes; got {value!r}")
    found, truth = set(found), set(truth)
    tp = len(found & truth)
    precision = tp / len(found) if found else 1.0
    recall = tp / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "F1": f1,
            "FP": len(found - truth), "FN": len(truth - found)}
