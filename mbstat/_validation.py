"""Argument checks with one wording for the whole package.

Every public function validates its scalar arguments here, so that a user
meets the same message shape everywhere: ``<param> must be <rule>; got <value>``.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

__all__ = [
    "check_alpha",
    "check_choice",
    "check_features",
    "check_int",
    "check_n_jobs",
    "check_number",
    "check_seed",
]


def _fail(name: str, rule: str, value) -> ValueError:
    return ValueError(f"{name} must be {rule}; got {value!r}")


def check_number(name, value, *, low=None, high=None, closed="both", allow_none=False):
    """Return ``value`` as float after checking it lies in an interval.

    ``closed`` is one of "both", "left", "right", "neither" as in
    scikit-learn's ``Interval``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    value = float(value)
    if math.isnan(value):
        raise _fail(name, "a number, not NaN", value)
    left = closed in ("both", "left")
    right = closed in ("both", "right")
    if low is not None and (value < low or (value == low and not left)):
        raise _fail(name, _interval(low, high, left, right), value)
    if high is not None and (value > high or (value == high and not right)):
        raise _fail(name, _interval(low, high, left, right), value)
    return value


def _interval(low, high, left, right) -> str:
    if high is None:
        return f"{'>=' if left else '>'} {low}"
    if low is None:
        return f"{'<=' if right else '<'} {high}"
    return f"in {'[' if left else '('}{low}, {high}{']' if right else ')'}"


def check_int(name, value, *, low=None, high=None, allow_none=False):
    """Return ``value`` as int after checking it is an integer in [low, high]."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise _fail(name, _interval(low, high, True, True), value)
    return value


def check_alpha(alpha, name: str = "alpha") -> float:
    """Significance level: a number in the open interval (0, 1)."""
    return check_number(name, alpha, low=0.0, high=1.0, closed="neither")


def check_choice(name, value, options: Iterable[str]):
    """Check that ``value`` is one of ``options`` (strings)."""
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        listed = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value


def check_seed(seed):
    """Accept None, an int >= 0 or a numpy Generator; return a Generator."""
    import numpy as np

    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None:
        check_int("seed", seed, low=0)
    return np.random.default_rng(seed)


def drawn_seed(seed):
    """The seed a run uses: ``None`` draws a fresh int (so the result can record it and the
    run be replayed); integers become Python ints (``np.int64(3)`` is recorded as 3, not
    lost); Generators and SeedSequences are kept."""
    import numpy as np

    if seed is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return int(seed)
    return seed


def check_content_seed(seed) -> int:
    """The integer that, with a test's contents, seeds its permutations (None: 0). A
    Generator is refused by name: such p-values are functions of the data and this integer,
    the same in any order of tests, which a shared stream of draws would not be."""
    import numpy as np

    if isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        raise TypeError(f"seed must be an integer >= 0 (a CI test's permutations are seeded by "
                        f"its columns' contents and this integer, so that its p-value does not "
                        f"depend on the tests before it); got a {type(seed).__name__}")
    return 0 if seed is None else check_int("seed", seed, low=0)


def check_n_jobs(n_jobs, *, allow_none=False):
    """joblib workers: an int >= 1 or -1 (all CPUs), or None where ``allow_none``."""
    if n_jobs is None and allow_none:
        return None
    n_jobs = check_int("n_jobs", n_jobs, low=-1)
    if n_jobs == 0:
        raise _fail("n_jobs", "a positive number of workers or -1 (all CPUs)", n_jobs)
    return n_jobs


def check_features(dataset, target: int, features, param: str = "candidates") -> tuple:
    """Positions of the variables a learner searches (default: all but the target).

    Parameters
    ----------
    dataset : Dataset
    target : int
        Position of the target.
    features : str, int, sequence of them, or None
        Names, or integers as :meth:`~mbstat.data.Dataset.index` reads them (labels where
        some column label is a number, as ``df[k]``, else positions); None means every
        column but the target.
    param : str
        The argument's name in messages.

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        When they include the target or are empty (also when the data has no
        column besides the target).
    """
    name = dataset.names[target]
    if features is None:
        cols = tuple(j for j in range(dataset.n_cols) if j != target)
        if not cols:
            raise ValueError(f"data has no candidate variables besides the target {name!r}: "
                             "give it at least one other column")
        return cols
    cols = dataset.indices(features, param)
    if target in cols:
        raise ValueError(f"{param} include the target {name!r}")
    if not cols:
        raise ValueError(f"{param} must name at least one variable; got {features!r}")
    return cols
