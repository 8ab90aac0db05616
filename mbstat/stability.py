"""How sure is the blanket? A learner rerun on R resamples of the data.

:func:`stability` reports how often each candidate joins one target's blanket (with the
stable blanket of stability selection, Meinshausen & Bühlmann 2010); :func:`arc_strengths`
does it for many targets on the same resamples and reports each pair's strength, as
bnlearn's ``boot.strength`` does for the arcs of a network.

The data are encoded once (:class:`mbstat.data.Dataset`); a resample takes rows of the
codes, so every resample has the levels of the full data. Resample r's rows come from
``SeedSequence(seed, spawn_key=(r, 0))`` (a randomized learner's seed from
``spawn_key=(r, 1)``; in the full-data run from ``(0, 2)``), so the result is the same for any ``n_jobs`` and any joblib backend
(threads, loky processes, or Dask through ``joblib.parallel_config(backend="dask")``), and
the first R' resamples of a run with R > R' are those of the run with R'.
"""
from __future__ import annotations

import dataclasses
import math
import time
import warnings

import numpy as np
import pandas as pd

from ._progress import progress_bar
from ._validation import check_choice, check_int, check_n_jobs, check_number
from .algorithms import LEARNERS
from .algorithms.learners import _constant, resolve_target
from .bn import BayesianNetwork
from .ci.result import plural
from .data import as_dataset
from .results.base import format_call
from .results.stability import (ArcStrengths, StabilityResult, learner_seed, mb_threshold,
                                resample_rows, strength_table)

__all__ = ["stability", "arc_strengths"]

#: How a CI learner's result says that Ctrl-C stopped its search (learners.py, _search).
_INTERRUPTED = "Note: interrupted (KeyboardInterrupt)"


def stability(data, target, method="iamb", R=200, *, resample="subsample", fraction=0.5,
              threshold=None, pfer=None, n_jobs=1, seed=None, progress=False,
              learner_args=None, **learner_params) -> StabilityResult:
    """Inclusion frequencies of a learner's Markov blanket over R resamples.

    The learner runs once on all the data (which checks its arguments before any resample
    runs), then on R resamples; each candidate's inclusion frequency is the fraction of
    resamples whose blanket holds it.

    Parameters
    ----------
    data : DataFrame, ndarray or Dataset
    target : str, int, Series or 1-D array
        As a learner takes it.
    method : str
        A learner of :data:`mbstat.LEARNERS` (default "iamb").
    R : int
        Resamples (default 200).
    resample : {"subsample", "bootstrap"}
        "subsample" (default): ``floor(fraction * n)`` rows drawn without replacement, the
        scheme of Meinshausen & Bühlmann's theorem (fraction 1/2) on which the default
        threshold rests; "bootstrap": n rows drawn with replacement, as bnlearn's
        ``boot.strength`` (duplicated rows make a CI test overstate its sample size, and
        the Meinshausen-Bühlmann bound is then a heuristic, which the summary says).
    fraction : float
        The subsample's share of the rows (default 1/2, as in the theorem).
    threshold : float in (0, 1], optional
        Keep the candidates selected in at least this fraction of the resamples (a plain
        frequency cut, e.g. 0.5). Default: stability selection at ``pfer``.
    pfer : float, optional
        The bound on the expected number of false members E[V] (per-family error rate;
        default 1) that sets the threshold when ``threshold`` is not given. With q the mean
        number of candidates selected per resample (estimating Meinshausen & Bühlmann's
        q_Lambda, the expected size of the selection on a subsample) and p the number of
        candidates, Theorem 1 of Meinshausen & Bühlmann (2010) bounds
        E[V] <= q^2 / ((2 pi_thr - 1) p) for pi_thr in (1/2, 1]; setting the bound to
        ``pfer`` gives ``pi_thr = (1 + q^2 / (p * pfer)) / 2``. The theorem assumes
        subsamples of n/2 rows without replacement, exchangeable noise variables and a
        learner no worse than random guessing. When q^2 / p > pfer no pi_thr <= 1 meets the
        bound: a warning says so and the stable blanket holds the candidates selected in
        every resample (pi_thr = 1, for which the bound is q^2 / p; give a larger ``pfer``).
    n_jobs : int
        joblib workers over the resamples (-1: all cores): threads unless the caller's
        ``joblib.parallel_config`` names another backend (loky processes, Dask). The result
        does not depend on it.
    seed : None, int >= 0 or numpy.random.Generator
        Entropy of the ``numpy.random.SeedSequence`` the resamples are drawn from; None draws
        one (a Generator draws an int), recorded in the result's ``seed``: rerun with it to
        reproduce the result.
    progress : bool
        A tqdm progress bar over the resamples. Ctrl-C returns the result over the
        resamples finished so far (``complete=False``, a warning and a note).
    learner_args : dict, optional
        Arguments of the learner whose names stability takes for itself (e.g. IAMB-IP's
        ``threshold``; a randomized learner's ``seed``, which otherwise gets its own seed
        in every resample from the SeedSequence).
    **learner_params
        The learner's arguments (``alpha``, ``test``, ``candidates``, ...); ``na`` and
        ``discretize`` act once, on the full data, before resampling.

    Returns
    -------
    StabilityResult
        ``selected`` is the stable blanket; ``table`` the frequencies with Wilson 95%
        intervals (the Monte Carlo error of R resamples, given the data), the full-data run's
        choice and, for learners that separate them (MBOR, MMMB, HITON-MB), how often each
        candidate was a parent or child and how often a spouse.

    Examples
    --------
    >>> from mbstat.datasets import sample_network
    >>> data = sample_network("alarm", 2000, seed=1)
    >>> res = stability(data, "HR", R=50, seed=1)
    >>> float(res.frequency["HRBP"])
    0.98
    """
    return _stability_runs(data, [target], method, R, resample=resample, fraction=fraction,
                           threshold=threshold, pfer=pfer, n_jobs=n_jobs, seed=seed,
                           progress=progress, learner_args=learner_args,
                           learner_params=learner_params, name="stability")[0]


def arc_strengths(data, targets=None, method="iamb", R=200, *, resample="subsample",
                  fraction=0.5, threshold=None, pfer=None, n_jobs=1, seed=None, progress=False,
                  learner_args=None, **learner_params) -> ArcStrengths:
    """Markov-blanket arc strengths: every target's blanket learned on the same R resamples.

    For each pair of targets X, Y: how often X is in MB(Y), how often Y is in MB(X), and how
    often both (the symmetric AND rule: the ``strength``, as bnlearn's ``boot.strength``
    reports an arc's), as a DataFrame (``.strength``) and a heat map (``.plot()``).

    Parameters
    ----------
    targets : list of names or positions, optional
        Default: every variable.
    Other parameters
        As :func:`stability` (the same resamples for every target: ``results[t]`` equals
        ``stability(data, t, ...)`` with the same seed).

    Returns
    -------
    ArcStrengths

    Examples
    --------
    >>> from mbstat.datasets import sample_network
    >>> data = sample_network("asia", 2000, seed=1)
    >>> arcs = arc_strengths(data, R=20, seed=1, threshold=0.5)
    >>> list(arcs.strength.columns)
    ['from', 'to', 'strength', 'either', 'from_in_to', 'to_in_from', 'full']
    """
    start = time.perf_counter()
    results = _stability_runs(data, targets, method, R, resample=resample, fraction=fraction,
                              threshold=threshold, pfer=pfer, n_jobs=n_jobs, seed=seed,
                              progress=progress, learner_args=learner_args,
                              learner_params=learner_params, name="arc_strengths")
    collected = {r.target: r for r in results}
    return ArcStrengths(method, collected, strength_table(collected),
                        time.perf_counter() - start)


# ----------------------------------------------------------------------------- the runs
def _check_own(R, resample, fraction, threshold, pfer, seed):
    """stability's own arguments, checked before any data is touched."""
    R = check_int("R", R, low=2)
    check_choice("resample", resample, ("subsample", "bootstrap"))
    fraction = check_number("fraction", fraction, low=0.0, high=1.0, closed="neither")
    threshold = check_number("threshold", threshold, low=0.0, high=1.0, closed="right",
                             allow_none=True)
    if threshold is not None and pfer is not None:
        raise ValueError("give threshold (a frequency cut) or pfer (stability selection's "
                         "bound), not both")
    pfer = check_number("pfer", 1.0 if pfer is None else pfer, low=0.0, closed="neither")
    if isinstance(seed, np.random.Generator):  # reproducible from the Generator's state
        seed = int(seed.integers(0, 2**63 - 1))
    seed = check_int("seed", seed, low=0, allow_none=True)
    entropy = np.random.SeedSequence().entropy if seed is None else seed
    return R, fraction, threshold, pfer, int(entropy)


def _stability_runs(data, targets, method, R, *, resample, fraction, threshold, pfer, n_jobs,
                    seed, progress, learner_args, learner_params, name):
    start = time.perf_counter()
    check_choice("method", method, LEARNERS)
    R, fraction, threshold, pfer, entropy = _check_own(R, resample, fraction, threshold, pfer,
                                                       seed)
    n_jobs = check_n_jobs(n_jobs)
    row = LEARNERS[method]
    if isinstance(data, BayesianNetwork):
        raise TypeError(f"{name}() resamples rows of data; got a BayesianNetwork (sample it "
                        "first, e.g. net.sample(n))")
    params = dict(learner_params)
    if learner_args is not None:
        if not hasattr(learner_args, "items"):
            raise TypeError(f"learner_args must be a dict; got {type(learner_args).__name__}")
        params.update(learner_args)
    original = data
    if name == "stability":
        data, targets[0] = resolve_target(data, targets[0])
    ds = as_dataset(data, na=params.pop("na", None) or "raise",
                    discretize=params.pop("discretize", None))
    if targets is None:
        targets = list(ds.names)
    positions = ds.indices(targets, "targets" if name != "stability" else "target")
    if not positions:
        raise ValueError(f"targets must name at least one variable; got {targets!r}")
    targets = [ds.names[j] for j in positions]
    n = ds.n_rows
    replace = resample == "bootstrap"
    size = n if replace else int(math.floor(fraction * n))
    if not replace and not 2 <= size < n:
        raise ValueError(f"fraction = {fraction:g} of {n} rows leaves {size} rows per "
                         "subsample; it needs at least 2 and fewer than all")
    randomized = "seed" in row.parameters and "seed" not in params
    if row.kind == "ci" or "progress" in row.parameters:  # no bar per run: one over resamples
        params.setdefault("progress", False)
    # the full-data runs first: they check the learner's arguments before any resample
    full = {t: row.function(ds, t, **params, **_seed_arg(randomized, entropy, None))
            for t in targets}
    runs = _run_resamples(ds, targets, row.function, params, randomized, entropy, R, n, size,
                          replace, n_jobs, progress, desc=f"{method}: {name}")
    interrupted = len(runs) < R  # Ctrl-C: the resamples finished before it, in order
    if interrupted:
        warnings.warn(f"{name}() interrupted after {len(runs)} of {R} resamples: the result "
                      "holds those", UserWarning, stacklevel=3)
    shown = {k: v for k, v in learner_params.items() if v is not None}
    call_args = {"R": R, "resample": resample,
                 "fraction": None if replace else fraction,
                 "threshold": threshold, "pfer": None if threshold is not None else pfer,
                 "seed": seed if not isinstance(seed, np.random.Generator) else entropy,
                 "learner_args": learner_args, **shown}
    results = []
    for j, t in enumerate(targets):
        call = format_call(name, original, **({"target": t} if name == "stability" else {}),
                           method=method, **call_args)
        results.append(_assemble(row, ds, t, full[t], [run[j] for run in runs], call=call,
                                 R=len(runs), resample=resample, size=size, entropy=entropy,
                                 threshold=threshold, pfer=pfer, params=params,
                                 call_args=call_args, elapsed=time.perf_counter() - start))
    return results


def _seed_arg(randomized: bool, entropy: int, r: int | None) -> dict:
    return {"seed": learner_seed(entropy, r)} if randomized else {}


def _run_resamples(ds, targets, func, params, randomized, entropy, R, n, size, replace,
                   n_jobs, progress, desc):
    """Per resample r (in order), per target: (selected, parents_children, spouses, tests,
    complete, constant target). Chunks of resamples go to joblib workers, each with the
    encoded data once."""
    from joblib import Parallel, delayed, effective_n_jobs


    workers = 1 if n_jobs == 1 else effective_n_jobs(n_jobs)
    n_chunks = min(R, 20 if workers == 1 else 4 * workers)
    chunks = [c.tolist() for c in np.array_split(np.arange(R), n_chunks)]
    job = (ds, targets, func, params, randomized, entropy, n, size, replace)
    if workers == 1:
        done = (_run_chunk(chunk, *job) for chunk in chunks)
    else:
        done = Parallel(n_jobs=n_jobs, return_as="generator", prefer="threads")(
            delayed(_run_chunk)(chunk, *job) for chunk in chunks)
    out = []
    with progress_bar(progress, total=R, desc=desc, unit=" resample") as bar:
        try:
            for part in done:
                out += part
                bar.update(len(part))
        except KeyboardInterrupt:  # the resamples done so far make the result
            if not out:
                raise
    return out


def _run_chunk(rs, ds, targets, func, params, randomized, entropy, n, size, replace):
    """Resamples ``rs``: each one's rows taken from the codes once, every target learned."""

    out = []
    for r in rs:
        sub = _take_rows(ds, resample_rows(entropy, r, n, size, replace))
        seed = _seed_arg(randomized, entropy, r)
        per_target = []
        for t in targets:
            if _constant(sub, t):  # as the learners decide it, without a warning per resample
                per_target.append(((), None, None, 0, True, True))
                continue
            res = func(sub, t, **params, **seed)
            if not res.complete and any(note.startswith(_INTERRUPTED)
                                        for note in getattr(res, "notes", ())):
                raise KeyboardInterrupt  # Ctrl-C stops every resample, not one learner's run
            per_target.append((tuple(res.selected), getattr(res, "parents_children", None),
                               getattr(res, "spouses", None), int(res.n_tests),
                               bool(res.complete), False))
        out.append(per_target)
    return out


def _take_rows(ds, rows):
    """The encoded data at ``rows`` (repeats allowed): every per-row array of the Dataset
    (codes, values, missing-cell masks) taken, the levels and names kept as they are."""
    n = ds.n_rows
    taken = {}
    for f in dataclasses.fields(ds):
        value = getattr(ds, f.name)
        if f.init and isinstance(value, np.ndarray) and value.shape[:1] == (n,):
            taken[f.name] = np.asfortranarray(value[rows])
    return dataclasses.replace(ds, **taken)


def _candidates(ds, target, params) -> list:
    """The candidates a learner searched: ``candidates`` (``features`` for FSDMS) or every
    column but the target, less the blacklist."""
    given = params.get("candidates", params.get("features"))
    t = ds.index(target)
    if given is None:
        names = [v for j, v in enumerate(ds.names) if j != t]
    else:
        names = [ds.names[j] for j in ds.indices(given, "candidates")]
    black = params.get("blacklist")
    if black is not None:
        black = {ds.names[j] for j in ds.indices([black] if isinstance(black, (str, int))
                                                 else black, "blacklist")}
        names = [v for v in names if v not in black]
    return names


def _membership(rows, candidates, column: int) -> pd.DataFrame:
    """Boolean frame (resample x candidate) of the runs' sets in ``column`` of each row."""
    index = {v: k for k, v in enumerate(candidates)}
    mat = np.zeros((len(rows), len(candidates)), dtype=bool)
    for r, row in enumerate(rows):
        for v in row[column] or ():
            if v not in index:
                raise RuntimeError(f"internal error: {v!r} selected but not a candidate")
            mat[r, index[v]] = True
    return pd.DataFrame(mat, index=pd.RangeIndex(len(rows), name="resample"),
                        columns=pd.Index(candidates, name="feature"))


def _assemble(row, ds, target, full, rows, *, call, R, resample, size, entropy, threshold,
              pfer, params, call_args, elapsed) -> StabilityResult:
    """The StabilityResult of one target from its full-data run and its R resampled runs."""
    candidates = _candidates(ds, target, params)
    selections = _membership(rows, candidates, 0)
    separates = getattr(full, "parents_children", None) is not None or any(
        x[1] is not None for x in rows)
    pc = _membership(rows, candidates, 1) if separates else None
    spouses = _membership(rows, candidates, 2) if separates else None
    counts = selections.sum(axis=0).to_numpy()
    q = float(counts.sum()) / R
    p = len(candidates)
    notes = []
    if threshold is None:
        rule, cut = "pfer", mb_threshold(q, p, pfer)
        if cut > 1:
            message = (f"no frequency threshold bounds the expected number of false members "
                       f"of {target!r} by pfer = {pfer:g} (q = {q:.3g} mean selected of p = "
                       f"{p}: the threshold would be {cut:.3g} > 1); the stable blanket holds "
                       f"the candidates selected in every resample, for which the bound is "
                       f"q^2 / p = {q * q / p:.3g}: give a larger pfer, or a threshold")
            warnings.warn(message, UserWarning, stacklevel=4)
            notes.append(f"Note: {message}.")
            cut = 1.0
        if resample == "bootstrap":
            notes.append("Note: the Meinshausen-Buhlmann bound assumes subsamples of n/2 rows "
                         "without replacement; with bootstrap resamples it is a heuristic.")
        elif size != ds.n_rows // 2:
            notes.append(f"Note: the Meinshausen-Buhlmann bound assumes subsamples of n/2 rows; "
                         f"these have {size} of {ds.n_rows}.")
    else:
        rule, cut = "frequency", threshold
    need = cut * R * (1 - 1e-12)  # frequencies are counts / R: compare counts
    order = np.lexsort((np.arange(p), -counts))
    stable = tuple(candidates[k] for k in order if counts[k] >= need)
    constant = sum(x[5] for x in rows)
    if constant:
        notes.append(f"Note: {target} is constant in {plural(constant, 'resample')}: an empty "
                     "blanket there (no test made).")
    incomplete = sum(not x[4] for x in rows)
    if incomplete:
        notes.append(f"Note: {plural(incomplete, 'resampled run')} stopped early (time budget "
                     "or a cap).")
    if R < call_args["R"]:
        notes.append(f"Note: interrupted (Ctrl-C) after {R} of {call_args['R']} resamples; "
                     "frequencies are over those.")
    return StabilityResult(
        method=row.name, target=target, selected=stable,
        params={"method": row.name, **{k: v for k, v in call_args.items() if v is not None
                                       and k not in ("learner_args", "seed")},
                "seed": entropy},
        call=call, n_rows=ds.n_rows, n_candidates=p, n_tests=sum(x[3] for x in rows),
        elapsed=elapsed, backend=full.backend, device=full.device,
        complete=not incomplete and R == call_args["R"], n_variables=ds.n_cols,
        R=R, resample=resample, size=size, seed=entropy, rule=rule, threshold=float(cut),
        pfer=pfer if rule == "pfer" else None, q=q, candidates=tuple(candidates),
        selections=selections, parents_children=pc, spouses=spouses, full=full,
        learner_title=getattr(full, "title", "") or row.title, notes=tuple(notes))
