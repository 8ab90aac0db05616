"""PPFS: predictive permutation feature selection (Hassan et al., Algorithm 2)."""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import pandas as pd

from .._progress import progress_bar
from .._validation import (check_alpha, check_choice, check_features, check_int, check_number,
                           drawn_seed)
from ..ci.engine import CITester
from ..ci.models.base import feature_positions, labels_as_classes
from ..ci.models.crt import CRT_FOLDS, CRTTest
from ..ci.models.loco import LOCO_FOLDS, LOCOTest, check_folds
from ..ci.models.ppi import PPITest, check_ppi_args, encode_target
from ..data import Dataset, as_dataset
from ..results import format_call, make_trace
from ..results.ppfs import PPFSResult
from .learners import Learner

__all__ = ["ppfs"]


PPFS = Learner("ppfs", "model", "predictive permutation feature selection (PPFS)",
               result=PPFSResult)


@PPFS.front_end
def ppfs(data, target, alpha=0.05, B=None, K=5, model="xgboost", n_jobs=None, seed=None, *,
         test="crt", merge="vote", spouses=True, folds=None, test_size=None, task="auto",
         device="auto", parallel="auto", model_params=None, categorical=None, candidates=None,
         na="raise", progress=None) -> PPFSResult:
    """Predictive permutation feature selection with Markov-blanket aggregation.

    On each of K folds: growth (Eq. 5) tests every candidate against the
    target given the empty set with the model-based test ``test`` and keeps those with
    p <= alpha; they are ordered by increasing importance log(1/p); the
    improved shrink tests each in turn given the rest of the current blanket
    and removes it when p > alpha, without restarting; then (``spouses=True``) the
    spouse phase tests, given the found blanket, the candidates that depend on one of its
    members given the target (:func:`spouse_phase`). With K >= 2 the fold
    blankets are merged (``merge``): by default a feature is kept when a majority
    of the fold blankets hold it; ``merge="paper"`` returns the blanket of the
    fold with the highest z-score (Eqs. 6-8).

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
        Continuous, discrete or mixed features; see :func:`mbstat.ppi_test`. Or the
        features alone, scikit-learn style, with the target as values (below).
    target : str, int, Series or 1-D array
        The target column, or its values (one per row of ``data``): ``ppfs(X, y)``.
    alpha : float
        Significance level of the tests.
    B : int, optional
        Splits per PPI test (>= 5; default 30), or draws of x given z per part of a
        ``test="crt"`` test (default 1000); refused with ``test="loco"`` (that test
        takes ``folds``).
    K : int
        Folds of the MB aggregation; 0 or 1: no aggregation, one run on all rows.
    model : {"xgboost", "tree"} or estimator
        The tests' model (see :func:`mbstat.ppi_test`); the paper used "tree".
        "xgboost" is the CPU ``hist`` booster (a CUDA one for large data where
        a GPU answers); with ``test="crt"`` and ``test="loco"`` it stops early
        (:data:`mbstat.ci.models.crt.CRT_XGBOOST`, eta 0.5;
        :data:`mbstat.ci.models.loco.LOCO_XGBOOST`, eta 0.3).
    n_jobs : int, optional
        Fits running at once (-1: all CPUs). Default: all CPUs for "xgboost"
        (threads), 1 for other models (worker processes cost more than small
        fits). Processes take whole folds when K >= n_jobs; threads (and processes
        when K < n_jobs) share the tests of each phase, or the splits of one test.
    seed : None, int or numpy Generator
        Folds, splits, permutations and model seeds; same seed, same result
        (whatever ``n_jobs``). None draws a seed, recorded in ``result.seed`` and
        printed by ``summary()``, so that any run can be replayed.
    test : {"crt", "loco", "ppi"}
        "crt" (default): the calibrated conditional randomization test
        (:func:`mbstat.ci.models.crt.crt_test`): exact given the law of x given z, the
        most powerful of the three on ``vignettes/ppi_calibration.py`` (power 0.99
        against LOCO's 0.58 there; levels 0.028-0.040 on 1,000 nulls per scenario).
        Its cost here is below LOCO's (``benchmarks/ppfs.py``): the growth step (z
        empty) tests every candidate in one pass (a histogram model of the target given
        each candidate, refitted for each permutation of the target, one permutation
        serving every candidate), and so does a discrete candidate given a discrete rest
        with populated strata (permutations within its strata: the conditional permutation
        test, its statistic the conditional G^2); a shrink step's models (the holdout test, with
        ``model``) serve every member, and XGBoost fits them on the distinct rows weighted
        by their counts where rows repeat (discrete data; the same objective); the draws of
        x given z are made once per conditioning set and kept; a shuffle given a discrete z
        shuffles the model's predictions, and a tree model's draws are read from one
        prediction per interval between its split points on x; a test stops drawing once
        ten draws are as extreme as the data (Besag & Clifford 1991), or once its first
        draws make the decision at ``alpha`` clear
        (:func:`mbstat.ci.models.crt.early_draws`), and such a clear part ends the test (its
        p-value is then fixed: the other parts are neither fitted nor drawn). The CRT's
        folds run at once on ``n_jobs`` workers.
        "loco": the calibrated cross-fitted leave-covariate-out test
        (:func:`mbstat.ci.models.loco.loco_test`), less power.
        "ppi": the paper's predictive permutation test (Algorithm 1), to
        reproduce the paper; its p-values are not calibrated (true nulls where
        x depends on z are rejected in 14-47% of data sets at alpha = 0.05,
        B = 10-100; ``vignettes/ppi_calibration.py``).
    spouses : bool
        True (default): after the shrink, the spouse phase (:func:`spouse_phase`): a spouse
        of the target (a parent of a common child) that is independent of it on its own
        never passes growth (Eq. 5 conditions on the empty set), so Algorithm 2 misses it;
        the phase screens the candidates left out for dependence on a member given the
        target (G^2 on binned columns, Bonferroni), tests those given the member and then
        given the blanket, and runs the improved shrink again if any entered. With a
        perfect test the search is then exact on every faithful target (the paper's: on
        the targets without such a spouse; tests/test_ppfs.py). False: Algorithm 2 as
        published.
    merge : {"vote", "paper"} or float in (0, 1]
        How the K fold blankets (K >= 2) make one. "vote" (default): the features in
        more than half of the fold blankets (at least m = K // 2 + 1 of K). Its guarantee,
        whatever the dependence between the folds (Markov's inequality on the count of
        folds holding a feature): the expected number of false members is at most K / m
        times the mean number in one fold blanket (5/3 at K = 5), and the expected number
        of missed members at most K / (K - m + 1) times one fold's (5/3). A float pi:
        the features in at least ceil(pi K) folds (the same bounds with that m).
        "paper": the fold blanket with the highest z-score (Eqs. 6-8), as Algorithm 2;
        it bounds the false members only by K times one fold's (the chosen fold depends
        on the data) and drops members that most folds found.
    folds : int, optional
        Parts of each LOCO test (default 5) or of each split of a CRT test (default 2).
    task : {"auto", "classification", "regression"}
        "auto": classes if discrete or whole-number floats not mostly distinct (as sklearn).
    test_size, device, parallel, model_params :
        As in :func:`mbstat.ppi_test`.
    categorical : list of names, optional
        Feature columns the model treats as categories. The rule otherwise:
        text, categorical (pandas) and other non-number columns are categories;
        numbers, integers and bools included, are numbers (split by thresholds),
        so integer codes of unordered classes must be named here.
    candidates : list, optional
        Restrict the search to these features (default: all but the target).
    na : {"raise", "drop"}
    progress : bool or None
        A progress bar (tqdm) with one tick per test: None (default) shows it
        when the run is estimated, from its first tests, to take over 10 s;
        True always, False never.

    Returns
    -------
    PPFSResult
        ``selected`` (the blanket, most important first), ``importance`` (with
        ``folds``: how many fold blankets hold each candidate), ``fold_blankets``,
        ``frequency``, ``zscores``, ``chosen_fold`` (``merge="paper"``), the
        ``tests`` log and ``trace``; ``summary()`` and ``plot()``.

    Notes
    -----
    Reading taken: the k-th "fold" of Algorithm 2 is the k-th K-fold
    training part ((K-1)/K of the rows), as in the authors' PyImpetus; ties
    in p-value are ordered by the mean risk increase; an empty fold
    blanket scores z = 0.

    Limits, whatever the proof sketch says (checked in tests/test_ppfs.py and
    the PPI notes): growth conditions on the empty set, so a spouse that is
    independent of the target on its own never enters Algorithm 2 (with a perfect CI
    oracle its search is exact on every other target; the spouse phase, the default,
    closes that gap: exact on every target); and PPI tests
    marginal permutation, so a non-member correlated with members (e.g. a
    grandparent of the target) tends to be kept (``test="ppi"``; the LOCO test
    compares models with and without the feature, so it has no such bias).
    The aggregation (K >= 2) removes rare false positives.

    References: Hassan, Paik, Khare & Hassan (2021), PPFS, Algorithm 2 and Eqs. 5-8;
    the vote's bound is Markov's inequality on a count of K indicators.
    """
    start = time.perf_counter()
    alpha = check_alpha(alpha)
    check_choice("test", test, ("crt", "loco", "ppi"))
    merge = _check_merge(merge)
    if not isinstance(spouses, (bool, np.bool_)):
        raise TypeError(f"spouses must be True or False; got {spouses!r}")
    spouses = bool(spouses)
    if test != "ppi" and (test_size is not None or (test == "loco" and B is not None)):
        given = " and ".join(n for n, a in (("B", B if test == "loco" else None),
                                            ("test_size", test_size)) if a is not None)
        raise TypeError(f"ppfs(): {given} set the paper's PPI test; pass test='ppi' to use it "
                        f"(test={test!r} takes folds=)")
    draws = B
    B = 30 if B is None or test != "ppi" else B
    if n_jobs is None:
        n_jobs = -1 if isinstance(model, str) and model == "xgboost" else 1
    test_size = 0.2 if test_size is None else test_size
    B, test_size, n_jobs = check_ppi_args(model, B, test_size, task, seed, n_jobs, parallel,
                                          device, model_params)
    K = check_int("K", K, low=0)
    default_folds = CRT_FOLDS if test == "crt" else LOCO_FOLDS
    cross_folds = check_folds(default_folds if folds is None else folds)
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (auto); got {progress!r}")
    seed = drawn_seed(seed)
    ds = as_dataset(data, na=na)
    ds.require_complete("ppfs")
    t = ds.index(target, "target")
    if task == "auto":
        ds = labels_as_classes(ds, t)
    target_name = ds.names[t]
    cands = [ds.names[j] for j in check_features(ds, t, candidates)]
    as_category = [ds.names[j] for j in feature_positions(ds, categorical, t)]
    task_used = encode_target(ds, t, task)[0]  # fails early on a bad target
    if K >= 2 and K > ds.n_rows // 2:
        raise ValueError(f"K = {K} folds need at least {2 * K} rows; got {ds.n_rows}")
    root = np.random.SeedSequence(_entropy(seed))
    fold_seeds = root.spawn(max(K, 1) + 1)
    if K >= 2:
        order = np.random.default_rng(fold_seeds[-1]).permutation(ds.n_rows)
        held_out = np.array_split(order, K)
        rows = [np.sort(np.setdiff1d(order, h)) for h in held_out]
        labels = list(range(1, K + 1))
    else:
        rows, labels = [None], ["all"]
    test_args = dict(model=model, task=task_used, device=device, parallel=parallel,
                     model_params=model_params, categorical=as_category or None)
    test_args.update(dict(B=B, test_size=test_size) if test == "ppi" else dict(folds=cross_folds))
    if test == "crt" and draws is not None:
        test_args["B"] = draws
    threads = _threads(model, parallel)
    across_folds = _across_folds(n_jobs, len(rows), threads, test)
    workers = min(n_jobs, len(rows)) if across_folds else 1
    inner_jobs = max(1, n_jobs // workers) if across_folds else n_jobs
    bar = _AutoBar(progress, len(rows) * (len(cands) + 1), f"ppfs: blanket of {target_name}")
    jobs = [(_subset_rows(ds, r), target_name, cands, alpha, fold_seeds[i], test,
             {**test_args, "n_jobs": inner_jobs}, spouses) for i, r in enumerate(rows)]
    if across_folds:  # workers take whole folds: the bar ticks once per fold
        from joblib import Parallel, delayed

        backend = "threading" if threads else "loky"
        spare = _Spare(len(jobs), workers, inner_jobs) if threads and test == "crt" else None
        runs = Parallel(n_jobs=workers, backend=backend, return_as="generator")(
            delayed(_run_fold)(*j, spare=spare) for j in jobs)
    else:
        runs = (_run_fold(*j, tick=bar.update) for j in jobs)
    fold_runs = []
    with bar:
        for fold in runs:
            fold_runs.append(fold)
            if across_folds:
                bar.update(len(cands) + 1)
    folds = fold_runs

    blankets = tuple(tuple(f["blanket"]) for f in folds)
    frequency, zscores = _aggregate(blankets, labels)
    tests = pd.concat([f["log"].assign(fold=lab) for f, lab in zip(folds, labels)],
                      ignore_index=True)
    tests.index = pd.RangeIndex(1, len(tests) + 1, name="test")
    trace = pd.concat([f["trace"].assign(fold=lab) for f, lab in zip(folds, labels)],
                      ignore_index=True)
    trace = trace[["fold", *[c for c in trace.columns if c != "fold"]]]
    trace.index = pd.RangeIndex(1, len(trace) + 1, name="step")
    fold_importance = pd.DataFrame({lab: f["importance"]["grow"].reindex(cands)
                                    for f, lab in zip(folds, labels)})
    fold_importance.index.name = "feature"
    fold_importance.columns.name = "fold"
    counts = frequency.reindex(cands, fill_value=0).astype(np.int64)
    chosen, votes = None, None
    if K < 2:
        importance, selected = folds[0]["importance"], tuple(folds[0]["blanket"])
    elif merge == "paper":
        chosen = int(np.argmax(zscores.to_numpy()))
        importance, selected = folds[chosen]["importance"], tuple(folds[chosen]["blanket"])
    else:
        votes = K // 2 + 1 if merge == "vote" else max(1, math.ceil(merge * K - 1e-9))
        importance, selected = _vote(folds, cands, counts, votes)
    importance = importance.assign(folds=counts.reindex(importance.index).to_numpy())
    importance = importance[["grow", "shrink", "pvalue", "increase", "folds", "selected"]]
    importance.columns.name = None
    best = folds[chosen if chosen is not None else 0]
    used_seed = seed if isinstance(seed, int) else None
    params = {"test": test, "merge": merge, "spouses": spouses, "alpha": alpha, "K": K,
              "task": task_used,
              "model": model if isinstance(model, str) else type(model).__name__,
              "model_params": dict(model_params or {}), "seed": used_seed, "n_jobs": n_jobs,
              **({"B": B, "test_size": test_size} if test == "ppi" else {"folds": cross_folds}),
              **({"categorical": as_category} if as_category else {})}
    call = format_call("ppfs", data, target=target_name, alpha=alpha, test=test, merge=merge,
                       **({} if spouses else {"spouses": False}),
                       **({"B": B} if test == "ppi" else {}), K=K, model=params["model"],
                       seed=used_seed, categorical=as_category or None,
                       candidates=None if candidates is None else cands)
    return PPFSResult(
        method="ppfs",
        target=target_name,
        selected=selected,
        params=params,
        call=call,
        n_rows=ds.n_rows,
        n_candidates=len(cands),
        n_tests=int(sum(f["n_tests"] for f in folds)),
        n_fits=int(sum(f["n_fits"] for f in folds)),
        elapsed=time.perf_counter() - start,
        backend="xgboost" if model == "xgboost" else "scikit-learn",
        device=best["device"],
        tests=tests,
        alpha=alpha, B=B, K=K, test_size=test_size,
        model=best["model"], task=task_used, test=test, folds=cross_folds, seed=used_seed,
        test_label=best["test_label"], test_settings=best["test_settings"],
        increase_note=best["increase_note"], merge=merge if K >= 2 else None, votes=votes,
        importance=importance,
        fold_blankets=blankets,
        frequency=frequency,
        zscores=zscores,
        chosen_fold=labels[chosen] if chosen is not None else None,
        fold_importance=fold_importance,
        trace=trace,
    )


# ------------------------------------------------------------------ helpers
class _AutoBar:
    """A progress bar ticking once per test: always (``mode=True``), never (False), or
    (None) once the run is estimated, from its first second, to take over
    :data:`_SHOW_AFTER` seconds in all. ``total`` is an estimate that grows as needed."""

    def __init__(self, mode, total: int, desc: str):
        self.mode, self.total, self.desc, self.done = mode, max(int(total), 1), desc, 0
        self.start = _clock()
        self.bar = progress_bar(True, total=self.total, desc=desc, unit=" test") if mode \
            else None

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.done >= self.total:  # more shrink tests than guessed: a fifth more to go
            self.total = self.done + max(1, self.done // 5)
            if self.bar is not None:
                self.bar.total = self.total
        if self.bar is None and self.mode is None:
            elapsed = _clock() - self.start
            if elapsed > 1.0 and elapsed * self.total / self.done > _SHOW_AFTER:
                self.bar = progress_bar(True, total=self.total, desc=self.desc, unit=" test")
                self.bar.update(self.done)
            return
        if self.bar is not None:
            self.bar.update(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


#: Equal-frequency bins of a continuous column in the spouse phase's screen
#: (:func:`pairwise_screen`).
SCREEN_BINS = 5
#: progress=None shows a bar when a run is estimated to take longer than this (seconds).
_SHOW_AFTER = 10.0
_clock = time.perf_counter


def _entropy(seed):
    """An int for SeedSequence from None, an int or a Generator."""
    if seed is None:
        return None
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, np.random.SeedSequence):
        return seed.entropy
    return int(seed)


def _across_folds(n_jobs: int, n_folds: int, threads: bool, test: str = "ppi") -> bool:
    """Whole folds per worker: processes when there are at least as many folds as
    processes; and for the CRT, threads (or processes) whenever several workers and folds
    are there (its shrink phase tests one member at a time, in few parts: too little work
    to fill the threads of one fold), each with ``n_jobs // workers`` threads; once every fold
    has started, a thread worker with no fold left lends its threads to the CRT folds still
    running (:class:`_Spare`: the last folds' parts run in waves of more workers, never more
    than ``n_jobs`` at once, the results unchanged).

    Otherwise threads, which cost nothing to start and share the data, split the work
    of each fold instead (better balanced); processes pay for every dispatch.
    """
    if n_jobs <= 1 or n_folds <= 1:
        return False
    return (not threads and n_folds >= n_jobs) or test == "crt"


def _threads(model, parallel) -> bool:
    """Threads for XGBoost (its fitting releases the GIL), processes otherwise."""
    if parallel == "auto":
        return model == "xgboost"
    return parallel == "threads"


def _subset_rows(ds: Dataset, rows) -> Dataset:
    """The data restricted to some rows (all when ``rows`` is None)."""
    if rows is None:
        return ds
    return Dataset(
        codes=np.asfortranarray(ds.codes[rows]),
        levels=ds.levels, names=ds.names, kinds=ds.kinds,
        values=None if ds.values is None else np.asfortranarray(ds.values[rows]),
    )


def _check_merge(merge):
    """``merge`` as "vote", "paper" or a share of folds in (0, 1]."""
    if isinstance(merge, str):
        check_choice("merge", merge, ("vote", "paper"))
        return merge
    if isinstance(merge, (bool, np.bool_)) or not isinstance(merge, (int, float, np.number)):
        raise TypeError(f"merge must be 'vote', 'paper' or a share of folds in (0, 1]; "
                        f"got {merge!r}")
    return check_number("merge", float(merge), low=0.0, high=1.0, closed="right")


def _vote(folds, cands, counts, votes: int):
    """The features in at least ``votes`` fold blankets, and their importance table: the
    median over the folds of each fold's ``grow``, ``shrink`` (over the folds that ran a
    shrink test of the feature; NaN if none), ``pvalue`` and ``increase``.

    Members first, by folds holding them, then importance; the rest by importance."""
    tables = [f["importance"].reindex(cands) for f in folds]

    def median(col):
        stack = np.column_stack([t[col].to_numpy(dtype=np.float64) for t in tables])
        out = np.full(len(cands), np.nan)
        seen = ~np.isnan(stack).all(axis=1)
        out[seen] = np.nanmedian(stack[seen], axis=1)
        return out

    imp = pd.DataFrame({c: median(c) for c in ("grow", "shrink", "pvalue", "increase")},
                       index=pd.Index(cands, name="feature"))
    imp["selected"] = counts.to_numpy() >= votes
    score = imp["shrink"].fillna(imp["grow"]).to_numpy()
    order = np.lexsort((-imp["increase"].to_numpy(), -score,
                        -np.where(imp["selected"], counts.to_numpy(), 0),
                        ~imp["selected"].to_numpy()))
    imp = imp.iloc[order]
    return imp, tuple(imp.index[imp["selected"].to_numpy()])


def _aggregate(blankets, labels):
    """Frequencies (Eq. 7) of the features of the union (Eq. 6) and fold z-scores (Eq. 8)."""
    union = list(dict.fromkeys(f for b in blankets for f in b))
    freq = pd.Series([sum(f in b for b in blankets) for f in union],
                     index=pd.Index(union, name="feature"), name="frequency", dtype=np.int64)
    z = [float(np.mean([freq[f] for f in b])) if b else 0.0 for b in blankets]
    return freq, pd.Series(z, index=pd.Index(labels, name="fold"), name="z")


def _effect(res):
    """The effect a test reports: PPI's mean risk increase, else its mutual information
    (the d-separation oracle that checks the search logic)."""
    return res.increase if "increase" in res.columns else res.mi


def search(tester, target, candidates, alpha, screen=None):
    """Growth, ordering and improved shrink (Algorithm 2, lines 5-19) with any CI tester,
    then (``screen`` given) the spouse phase (:func:`spouse_phase`).

    Returns (blanket, growth CIBatch, {member: CIResult given the rest of the blanket},
    trace rows). The PPI tester gives PPFS; the d-separation oracle checks the search logic.
    """
    trace = []
    grow = tester.test_many(candidates, target, (), phase="grow")
    for c, res in zip(candidates, grow):
        trace.append(("grow", "add" if res.pvalue <= alpha else "drop", c, res))
    # Eq. 5 / line 8: p <= alpha enters; ascending importance log(1/p), ties by risk increase
    members = [i for i in range(len(candidates)) if grow.pvalue[i] <= alpha]
    members.sort(key=lambda i: (-grow.log_pvalue[i], _effect(grow)[i], i))
    blanket = [candidates[i] for i in members]
    shrink = {}
    for x in [candidates[i] for i in members]:
        rest = [b for b in blanket if b != x]
        res = tester.test(x, target, rest, phase="shrink")
        shrink[x] = res
        if res.pvalue > alpha:  # line 16: no restart after a removal
            blanket.remove(x)
            trace.append(("shrink", "remove", x, res))
        else:
            trace.append(("shrink", "keep", x, res))
    if screen is not None:
        spouse_phase(tester, target, candidates, alpha, screen, blanket, shrink, trace)
    # most important first: shrink log(1/p), ties by risk increase
    blanket.sort(key=lambda f: (shrink[f].log_pvalue, -_effect(shrink[f])))
    return blanket, grow, shrink, trace


def spouse_phase(tester, target, candidates, alpha, screen, blanket, given, trace) -> None:
    """The spouses that growth given the empty set cannot see (``blanket`` and ``given``
    updated in place; ``trace`` rows appended).

    A spouse s of the target y (a parent of a common child c, not adjacent to y) is
    independent of y given the empty set when no other path joins them, so Eq. 5 never
    admits it and the shrink phase (lines 15-19), which tests only what growth admitted,
    never sees it: the proof sketch's claim that growth admits every spouse fails there.
    What holds under the Markov condition and faithfulness: s is adjacent to c, so
    dependent on c given any set; and s is dependent on y given any set that holds c and
    not s (the path s -> c <- y is open when its collider c is given). So, as MMMB and
    HITON-MB look for spouses among the neighbours of the children:

    1. ``screen(target, members, others)``: for each candidate left out, the members it
       depends on given y (a necessary condition for a spouse of y through that member);
    2. each such candidate is tested against y given each of those members alone (with the
       search's test: given a discrete member with populated strata, the CRT makes these
       tests in one pass, without fits); those with a p-value at most alpha go on (a
       filter: it only saves tests);
    3. each of those is tested against y given the blanket and the other candidates that
       went on (line 16's conditioning set for the enlarged blanket, which holds the
       spouse's child: a spouse stays dependent, a parent of a spouse becomes independent
       once the spouse is given) and enters when p <= alpha; the tests share one set of
       models (the enlarged blanket's), where testing each given the blanket alone would
       fit a set per candidate;
    4. if any entered, the improved shrink (line 16, in increasing importance, one at a
       time, no restart) runs again over the enlarged blanket: what entered through a path
       a spouse closes (a parent of a spouse depends on y given the children alone) and
       what the first shrink kept for want of the spouses leave. Its models serve every
       member until one leaves.

    With a perfect test the search then returns the blanket of every faithful target
    (tests/test_ppfs.py: the d-separation oracle on random DAGs).
    """
    others = [c for c in candidates if c not in blanket]
    if not blanket or not others:
        return
    near = screen(target, list(blanket), others)
    if not near:
        return
    best = {}
    for m in blanket:
        group = [c for c in near if m in near[c]]
        if not group:
            continue
        for c, res in zip(group, tester.test_many(group, target, [m], phase="spouse")):
            if c not in best or res.log_pvalue < best[c].log_pvalue:
                best[c] = res
    for c in near:
        given[c] = best[c]  # left out here: its test given a member decided it
    passed = [c for c in near if best[c].pvalue <= alpha]
    added = []
    for c in passed:  # given the blanket and the other candidates: one set of models
        res = tester.test(c, target, list(blanket) + [p for p in passed if p != c],
                          phase="spouse")
        given[c] = res
        if res.pvalue <= alpha:
            added.append(c)
    for c in near:
        trace.append(("spouse", "add" if c in added else "drop", c, given[c]))
    if not added:
        return
    blanket.extend(added)
    for x in sorted(blanket, key=lambda c: (-given[c].log_pvalue, _effect(given[c]))):
        res = tester.test(x, target, [b for b in blanket if b != x], phase="shrink")
        given[x] = res
        if res.pvalue > alpha:
            blanket.remove(x)
            trace.append(("shrink", "remove", x, res))
        else:
            trace.append(("shrink", "keep", x, res))


def pairwise_screen(dataset, alpha: float, bins: int = SCREEN_BINS):
    """The spouse phase's screen on ``dataset``: ``screen(target, members, others)`` gives
    each candidate that depends on at least one member given the target the list of those
    members (in the members' order), by the G^2 test
    (asymptotic chi-square) of the pair's tables within the target's levels (or bins),
    continuous columns in ``bins``
    equal-frequency bins, at Bonferroni's level alpha / (members x others): a candidate
    independent of every member passes with probability at most alpha in all (a pass only
    costs its test given the blanket). Binning keeps independence (so the level holds)
    and misses only a dependence invisible between the bins' cells."""
    binned = CITester(dataset, "g2", alpha=alpha,
                      discretize=bins if "continuous" in dataset.kinds else None)

    def screen(target, members, others):
        level = alpha / (len(members) * len(others))
        near = {}
        for m in members:
            hit = binned.test_many(others, m, (target,), phase="screen").pvalue <= level
            for c in np.asarray(others, dtype=object)[hit]:
                near.setdefault(c, []).append(m)
        return {c: near[c] for c in others if c in near}
    return screen


class _Spare:
    """The workers that threads running whole folds (``workers`` of them, ``jobs`` each) can
    lend: once every fold has started, each worker without a fold lends its ``jobs`` to the
    folds still running, shared among them, so that the last folds do not run on one
    worker's threads while the others wait (never more than ``workers * jobs`` at once)."""

    def __init__(self, folds: int, workers: int, jobs: int):
        self.folds, self.workers, self.jobs = folds, workers, jobs
        self.started = self.finished = 0
        self.lock = threading.Lock()

    def start(self) -> None:
        with self.lock:
            self.started += 1

    def finish(self) -> None:
        with self.lock:
            self.finished += 1

    def __call__(self) -> int:
        """Workers lent to one running fold now."""
        with self.lock:
            running = self.started - self.finished
            if self.started < self.folds or running < 1:
                return 0
            return (self.workers - running) * self.jobs // running


def _run_fold(dataset, target, cands, alpha, seed, test_name, test_args, spouses,
              tick=None, spare=None) -> dict:
    """One fold of PPFS: the search with the model-based test, and its importance table;
    ``spare`` (:class:`_Spare`): the workers it may borrow while it runs."""
    if spare is None:
        return _fold(dataset, target, cands, alpha, seed, test_name, test_args, spouses, tick)
    spare.start()
    try:
        return _fold(dataset, target, cands, alpha, seed, test_name, test_args, spouses, tick,
                     spare)
    finally:
        spare.finish()


def _fold(dataset, target, cands, alpha, seed, test_name, test_args, spouses, tick,
          spare=None) -> dict:
    test = {"ppi": PPITest, "crt": CRTTest, "loco": LOCOTest}[test_name](seed=seed, **test_args)
    test.progress = tick
    if spare is not None:  # the CRT's engine: its waves of parts take the lent workers
        test.engine(dataset, dataset.index(target)).spare = spare
    tester = CITester(dataset, test, alpha=alpha)
    screen = pairwise_screen(dataset, alpha) if spouses else None
    blanket, grow, shrink, trace = search(tester, target, cands, alpha, screen)
    deciding = {c: shrink.get(c, grow[i]) for i, c in enumerate(cands)}
    importance = pd.DataFrame(
        {
            "grow": -grow.log_pvalue,
            "shrink": [-shrink[c].log_pvalue if c in shrink else np.nan for c in cands],
            "pvalue": [deciding[c].pvalue for c in cands],
            "increase": [_effect(deciding[c]) for c in cands],
            "selected": [c in blanket for c in cands],
        },
        index=pd.Index(cands, name="feature"),
    )
    score = importance["shrink"].fillna(importance["grow"]).to_numpy()
    importance = importance.iloc[np.lexsort((-importance["increase"].to_numpy(), -score,
                                             ~importance["selected"].to_numpy()))]
    engine = test.engine(dataset, dataset.index(target))
    return {
        "blanket": blanket,
        "importance": importance,
        "log": tester.log,
        "trace": make_trace(trace),
        "n_tests": tester.n_tests,
        "n_fits": engine.n_fits,
        "device": engine.device,
        "model": engine.model_label,
        "test_label": test.label,
        "test_settings": test.settings_text(),
        "increase_note": test.increase_note,
    }
