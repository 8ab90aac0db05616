"""FSDMS and WFSDMS: feature selection by dependency margin (Liu, Tang & Zeng 2015)."""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd

from .._progress import progress_bar
from .._validation import check_int, check_n_jobs, check_number, check_seed, drawn_seed
from ..data import as_dataset
from ..dependency import make_engine, prepare_dependency
from ..ci.models.estimators import check_classifier
from ..results.base import format_call
from ..ci.result import plural
from ..results.fsdms import FSDMSResult, WFSDMSResult
from .learners import Learner

__all__ = ["fsdms", "wfsdms"]

_RANKING_COLUMNS = ["feature", "set", "gain", "dependency", "remaining", "margin", "tie"]


FSDMS = Learner("fsdms", "ranking", "feature selection with dependency margin (FSDMS)",
                result=FSDMSResult)
WFSDMS = Learner("wfsdms", "ranking", "FSDMS cut by cross-validated accuracy (WFSDMS)",
                 result=WFSDMSResult)


@FSDMS.front_end
def fsdms(data, target, alpha=1.0, theta=None, *, candidates=None, k=None, full=False,
          discretize=None, na="raise", backend=None, progress=None,
          features=None) -> FSDMSResult:
    """Feature selection with dependency margin of subsets (FSDMS).

    Algorithm 1 puts in ``A1`` every feature with ``D(F) > D(F - {a})``
    (strongly relevant, Theorem 4); Algorithm 2 puts in ``B2`` every other
    feature ``b`` with ``D(F - {m}) > D(F - {m, b})`` for all ``m != b``
    (no Markov blanket in ``F``, Theorem 5); ``C3`` is the rest. Algorithm 3
    then ranks ``A1``, then ``B2``, then ``C3``, each by forward greedy search
    on the margin ``E(X) = D(X) - alpha D(F - X)``: at every step it adds the
    candidate with the largest gain
    ``[D(P + a) - D(P)] + alpha [D(F - P) - D(F - P - a)]``.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
    target : str or int
        The class column (discrete, at least two classes).
    alpha : float, default 1.0
        Weight (>= 0) of the remaining set's dependency (the paper uses 1).
    theta : float, optional
        Neighbourhood radius (> 0) of Definition 9 for numerical or mixed
        data (the paper: 0.14); None uses Definition 7 (discrete data).
    candidates : sequence, optional
        The candidate features ``F``, names or positions (default: every column but
        the target), as every learner's ``candidates``.
    k : int, optional
        Report the first ``k`` features of the sequence as ``selected``.
        By default: the shortest prefix ``P`` with ``D(P) = D(F)`` (our
        stopping rule; the paper leaves the cut to ``k`` or to a wrapper,
        see :func:`wfsdms`).
    full : bool, default False
        Rank every feature. By default Algorithm 3 stops after the step at which
        ``D(P) = D(F)`` (and after ``k`` steps when ``k`` is larger): the steps
        it makes are exactly the first steps of the full ranking (each depends only
        on the steps before it), and the selection is the same.
    discretize : int, optional
        Bin continuous columns into this many equal-frequency bins first.
    na : {"raise", "drop"}
    backend : {"auto", "cpu", "gpu"}, optional
        Where the dependency arrays live (CuPy on a GPU).
    progress : bool or None
        A progress bar (tqdm) of Algorithm 3's steps: True, False, or None (default):
        shown once the run has taken 10 s. On KeyboardInterrupt (Ctrl-C) the
        ranking made so far is returned, marked incomplete (``complete=False``).
    features : sequence, optional
        Deprecated name of ``candidates`` (a FutureWarning; both together are refused).

    Returns
    -------
    FSDMSResult
        ``.sequence`` (the features ranked: all of them with ``full=True``),
        ``.ranking`` (gain and dependencies at each step), ``.A1``, ``.B2``,
        ``.C3``, ``.summary()`` and ``.plot()``.

    Notes
    -----
    Ties: the paper breaks equal gains by ``D(P + a)`` in the ``C3`` loop
    only; we use that rule in every loop (ties there are unspecified) and
    break remaining ties by column order (``ranking["tie"]`` shows which
    steps were ties). When every large feature set already determines the
    class (many features, few rows: ``D(F - P - a) = D(F - P) = 1``), the
    margin term is zero and the search reduces to forward greedy on ``D``.
    See :func:`~mbstat.dependency` for the reading of Definition 9 on mixed data.

    Many features (discrete data, at least 64 features): ``D(F - P - {a})`` for
    every a comes from the cross-class pairs of samples that differ on at most
    ``|P| + 1`` features (a sample leaves the positive region of a set exactly when
    a sample of another class agrees with it on the whole set), Algorithm 2 from
    the pairs that differ on at most two, and ``D(P + {a})`` from the class counts
    of the cells of the impure groups of P only. These are the same counts as the
    paper's loop (tests compare both engines on random tables); they replace its
    ``|F|^2`` evaluations of Algorithm 2 and ``|F - P|`` re-partitions per step
    (``n_tests`` still counts the evaluations answered, as the paper's loop would).

    Columns with few rows per value: ``D`` counts the rows whose class is
    determined by their values, so a near-unique column (a row ID, a
    300-level code on 500 rows) determines the class on its own within most
    of its values, whatever its relation to the class, and FSDMS ranks it
    first as strongly relevant. This is a property of the rough-set measure,
    not of the search: ``fsdms`` warns (and leaves the ranking as it is) when
    a discrete feature has on average fewer than 5 rows per observed value;
    drop such columns or merge their rare values before selecting.

    References
    ----------
    Y. Liu, F. Tang, Z. Zeng, "Feature selection based on dependency margin",
    IEEE Trans. Cybernetics 45(6), 2015.

    Examples
    --------
    >>> from mbstat.datasets import make_corral
    >>> res = fsdms(make_corral("corral", seed=0), "class")
    >>> res.sequence[:4]
    ('A0', 'A1', 'B0', 'B1')
    """
    start = time.perf_counter()
    alpha = _check_alpha(alpha)
    candidates = _renamed_features(candidates, features, "fsdms")
    ds, t, cols = prepare_dependency(data, target, candidates, theta=theta,
                                     discretize=discretize, na=na, param="candidates")
    _warn_near_unique(ds, cols)
    d = len(cols)
    k = check_int("k", k, low=0, high=d, allow_none=True)
    eng = make_engine(ds, t, cols, theta, backend, pairs=_PAIRS)
    names = [ds.names[j] for j in cols]
    everything = eng.full()
    c_full = eng.count(everything)

    # Algorithm 1: strongly relevant features.
    c_minus = eng.count_remove(everything, range(d))  # D(F - {a}) for every a
    a1 = [a for a in range(d) if c_full > c_minus[a]]

    # Algorithm 2: b joins B2 when D(F - {m}) > D(F - {m, b}) for every m != b.
    b2 = eng.no_blanket([b for b in range(d) if b not in a1], c_minus)
    c3 = [j for j in range(d) if j not in a1 and j not in b2]

    # Algorithm 3: forward greedy on the margin, A1 first, then B2, then C3.
    rows, prefix = [], []  # prefix: count of D(P) after each step
    steps = d if full else None  # None: until D(P) = D(F) (and k steps)
    with progress_bar(progress, total=steps, desc=f"fsdms: ranking for {ds.names[t]}",
                      unit=" steps") as bar:
        complete = _rank(eng, alpha, (("A1", a1), ("B2", b2), ("C3", c3)), names, c_full,
                         rows, prefix, d if full else max(k or 0, 1), bar)
    ranking = pd.DataFrame(rows, columns=_RANKING_COLUMNS)
    ranking.index = pd.RangeIndex(1, len(rows) + 1, name="rank")

    if k is None:
        k = next((i + 1 for i, c in enumerate(prefix) if c >= c_full), 0) if c_full else 0
        rule = "the shortest prefix with D(P) = D(F)"
    else:
        rule = f"the first k = {k}"
    k = min(k, len(rows))
    if not complete:
        stopped = (f"interrupted (KeyboardInterrupt) after {plural(len(rows), 'step')} of "
                   f"{d}: the ranking made so far")
    elif len(rows) < d:
        stopped = (f"ranked {len(rows)} of {d} features: Algorithm 3 stops once D(P) = D(F) "
                   "(full=True ranks them all)")
    else:
        stopped = ""
    elapsed = time.perf_counter() - start
    call = format_call("fsdms", data, target=ds.names[t], alpha=alpha, theta=theta,
                       full=full or None)
    return FSDMSResult(
        method="fsdms", target=ds.names[t], selected=tuple(ranking["feature"][:k]),
        params={"alpha": alpha, "theta": theta, "k": k, "full": full},
        call=call, n_rows=eng.n, n_candidates=d, n_tests=eng.n_evals, elapsed=elapsed,
        backend=eng.backend.name, device=eng.backend.device, complete=complete,
        alpha=alpha, theta=None if theta is None else float(theta), ranking=ranking,
        A1=tuple(names[j] for j in a1), B2=tuple(names[j] for j in b2),
        C3=tuple(names[j] for j in c3), dependency_all=c_full / eng.n,
        n_classes=eng.n_classes, rule=rule, stopped=stopped,
    )


def _renamed_features(candidates, features, who: str):
    """``candidates``, or ``features``, its deprecated name in fsdms and wfsdms (every other
    learner says ``candidates``): a FutureWarning naming the new one; both: refused."""
    if features is None:
        return candidates
    if candidates is not None:
        raise TypeError(f"{who}(): give candidates= only; features= is its deprecated name, "
                        "not a second set")
    # stacklevel 5: the caller's line (through the front end's public function and learn)
    warnings.warn(f"{who}(): features= is deprecated and will be removed; use candidates= "
                  "(the same meaning, the name every learner takes)", FutureWarning,
                  stacklevel=5)
    return features


#: Test hook: force (True) or forbid (False) the close-pairs engine; None: by the data.
_PAIRS = None


def _rank(eng, alpha, groups, names, c_full, rows, prefix, at_least, bar) -> bool:
    """Algorithm 3, appending one row per step to ``rows`` (and ``D(P)`` to ``prefix``):
    stops once ``D(P) = D(F)`` after at least ``at_least`` steps (``at_least = d``: the
    full ranking). Each step depends only on the steps before it, so the rows made are
    the first rows of the full ranking. Returns False when interrupted (Ctrl-C)."""
    p_state, r_state = eng.empty(), eng.full()
    c_p, c_r = 0, c_full
    try:
        for label, group in groups:
            queue = list(group)
            while queue:
                if len(rows) >= at_least and c_p >= c_full:
                    return True
                c_add = eng.count_add(p_state, queue)       # D(P + a)
                c_rem = eng.count_remove(r_state, queue)    # D(F - P - a)
                gain = (c_add - c_p) + alpha * (c_r - c_rem)
                best = gain.max()
                tied = np.flatnonzero(gain >= best - 1e-9 * max(1.0, abs(best)))
                tie = ""
                if len(tied) > 1:
                    top = tied[c_add[tied] == c_add[tied].max()]
                    tie = "D" if len(top) == 1 else "order"
                    tied = top
                i = int(tied[0])
                a = queue.pop(i)
                c_p, c_r = int(c_add[i]), int(c_rem[i])
                prefix.append(c_p)
                p_state, r_state = eng.add(p_state, a), eng.remove(r_state, a)
                rows.append((names[a], label, gain[i] / eng.n, c_p / eng.n, c_r / eng.n,
                             (c_p - alpha * c_r) / eng.n, tie))
                bar.update(1)
    except KeyboardInterrupt:
        return False
    return True


@WFSDMS.front_end
def wfsdms(data, target, estimator=None, cv=10, alpha=1.0, theta=None, *, candidates=None,
           max_features=None, seed=None, n_jobs=None, ranking=None, discretize=None,
           na="raise", backend=None, features=None) -> WFSDMSResult:
    """WFSDMS: the FSDMS sequence cut by cross-validated accuracy.

    Runs :func:`fsdms`, evaluates the nested subsets ``{f1}, {f1, f2}, ...``
    of its sequence by the ``cv``-fold cross-validated accuracy of
    ``estimator`` and returns the best (the smallest among equally accurate
    subsets), as in the paper's Section V.

    Parameters
    ----------
    data, target, alpha, theta, candidates, discretize, na, backend
        As in :func:`fsdms` (``features``: the deprecated name of ``candidates``).
    estimator : scikit-learn classifier, optional
        Cloned for every fit (default: ``DecisionTreeClassifier(random_state=0)``,
        CART). It sees the raw feature values (discrete columns as integer
        codes): wrap it in a ``Pipeline`` with a scaler if it needs one (the
        paper scales every column to [0, 1]).
    cv : int or scikit-learn splitter, default 10
        Number of stratified folds (>= 2 and at most the size of the smallest
        class, shuffled with ``seed``) or a splitter; every subset is scored
        on the same folds.
    max_features : int, optional
        Evaluate only the first ``max_features`` nested subsets.
    seed : None, int or numpy.random.Generator
        Shuffles the folds; same seed, same scores. None draws a seed, recorded in
        ``result.params`` and printed so that the run can be replayed.
    n_jobs : int, optional
        Workers of :func:`sklearn.model_selection.cross_val_score` (None, -1:
        all CPUs, or >= 1).
    ranking : FSDMSResult, optional
        The result of an earlier :func:`fsdms` call on the same data and
        target (ranked in full again if it stopped at ``D(P) = D(F)``),
        reused instead of recomputed (e.g. to score one sequence with several
        classifiers); ``alpha``, ``theta`` and ``candidates`` are then taken
        from it.

    Returns
    -------
    WFSDMSResult
        ``.selected``, ``.scores`` (accuracy of each nested subset),
        ``.accuracy_all`` (all features), ``.fsdms``, ``.summary()``, ``.plot()``.
    """
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    start = time.perf_counter()
    candidates = _renamed_features(candidates, features, "wfsdms")
    if estimator is None:
        from sklearn.tree import DecisionTreeClassifier

        estimator = DecisionTreeClassifier(random_state=0)
    check_classifier(estimator, "estimator")
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    ds = as_dataset(data, na=na, discretize=discretize)
    ds.require_complete("wfsdms")
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        cv = check_int("cv", cv, low=2)
        _check_folds(cv, ds, ds.index(target, "target"))
        seed = drawn_seed(seed)
        rng = check_seed(seed)
        splitter = StratifiedKFold(cv, shuffle=True, random_state=int(rng.integers(2**31 - 1)))
        cv_text = f"{cv}-fold stratified cross-validation (shuffled, seed = {seed!r})"
    elif hasattr(cv, "split"):
        splitter, cv_text = cv, repr(cv)
    else:
        raise TypeError(f"cv must be an integer >= 2 or a scikit-learn splitter; got {cv!r}")

    if ranking is None:
        fs = fsdms(ds, target, alpha=alpha, theta=theta, candidates=candidates,
                   backend=backend, full=True)
    elif not isinstance(ranking, FSDMSResult):
        raise TypeError(f"ranking must be an FSDMSResult; got {type(ranking).__name__}")
    elif ranking.target != ds.names[ds.index(target, "target")] or ranking.n_rows != ds.n_rows:
        raise ValueError(f"ranking was computed for target {ranking.target!r} on "
                         f"{ranking.n_rows} rows, not for this data and target")
    else:
        fs = ranking
        alpha, theta = fs.alpha, fs.theta
        if len(fs.sequence) < fs.n_candidates:  # stopped at D(P) = D(F): rank them all
            fs = fsdms(ds, fs.target, alpha=alpha, theta=theta, backend=backend, full=True,
                       candidates=[*fs.A1, *fs.B2, *fs.C3])
        ds.indices(fs.sequence, "ranking")  # its features must be columns of the data
    seq = fs.sequence
    max_features = check_int("max_features", max_features, low=1, high=len(seq),
                             allow_none=True) or len(seq)
    x = np.asarray(ds.numeric())
    y = np.asarray(ds.codes[:, ds.index(fs.target)], dtype=np.int64)
    pos = [ds.index(f) for f in seq]

    def score(cols):
        s = cross_val_score(clone(estimator), x[:, cols], y, cv=splitter, n_jobs=n_jobs,
                            scoring="accuracy")
        return float(s.mean()), float(s.std())

    rows = [score(pos[:j]) for j in range(1, max_features + 1)]
    acc_all = rows[-1][0] if max_features == len(seq) else score(pos)[0]
    scores = pd.DataFrame({"feature": list(seq[:max_features]),
                           "accuracy": [r[0] for r in rows], "sd": [r[1] for r in rows]},
                          index=pd.RangeIndex(1, max_features + 1, name="n_features"))
    best = int(np.argmax(scores["accuracy"].to_numpy())) + 1
    elapsed = time.perf_counter() - start
    call = format_call("wfsdms", data, target=fs.target, estimator=_short(estimator),
                       cv=cv if isinstance(cv, int) else type(cv).__name__,
                       alpha=alpha, theta=theta)
    return WFSDMSResult(
        method="wfsdms", target=fs.target, selected=tuple(seq[:best]),
        params={"estimator": _short(estimator), "cv": cv_text, "alpha": alpha, "theta": theta,
                "seed": seed},
        call=call, n_rows=fs.n_rows, n_candidates=len(seq), n_tests=fs.n_tests,
        elapsed=elapsed, backend=fs.backend, device=fs.device,
        fsdms=fs, scores=scores, estimator=_short(estimator), cv=cv_text, best_k=best,
        accuracy=float(scores["accuracy"].iloc[best - 1]), accuracy_all=acc_all,
    )


def _check_folds(cv: int, ds, t: int) -> None:
    """Stratified folds need a class of at least ``cv`` rows, as scikit-learn's
    ``StratifiedKFold`` (which warns when only the smallest class is short); a continuous
    target is left to :func:`fsdms`, which refuses it."""
    if not ds.levels[t]:
        return
    counts = np.bincount(ds.codes[:, t])
    largest = int(counts.max())
    if cv > largest:
        raise ValueError(
            f"cv = {cv} folds need a class of at least {cv} rows; the data has {ds.n_rows} "
            f"rows and its largest class has {largest}: use cv <= {largest}"
        )


def _warn_near_unique(ds, cols, rows_per_value: int = 5) -> None:
    """Warn about discrete features with fewer than ``rows_per_value`` rows per observed value:
    the dependency measure finds them relevant whatever their relation to the class."""
    found = []
    for j in cols:
        if ds.levels[j]:  # discrete
            k = int(np.count_nonzero(np.bincount(ds.codes[:, j])))
            if k * rows_per_value > ds.n_rows:
                found.append(f"{ds.names[j]!r} ({k} values)")
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        warnings.warn(
            f"fsdms: features with fewer than {rows_per_value} rows per value on "
            f"{ds.n_rows} rows: {shown}. A near-unique column determines the class on its own "
            "in the rough-set dependency, whatever its relation to the class, so FSDMS ranks "
            "it high (strongly relevant); drop ID-like columns or merge rare values",
            UserWarning, stacklevel=3)


def _check_alpha(alpha) -> float:
    alpha = check_number("alpha", alpha, low=0.0)
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number >= 0; got {alpha!r}")
    return alpha


def _short(estimator) -> str:
    text = repr(estimator)
    return " ".join(text.split())
