"""The predictive permutation independence (PPI) test of Hassan et al. (Algorithm 1).

For each of B random train/test splits a model is fitted on [x, z] -> y on
the training part; its mean loss on the test part (log-loss or squared
error) is the risk R_j, and again with x permuted within the test part, the
risk R~_j. H0 (Eq. 4): E(R) >= E(R~), i.e. x adds nothing to predicting y
given z; it is rejected by the one-sided paired Wilcoxon signed-rank test.

Speed by design: a :class:`PPIEngine` converts the data once (model matrix,
target, splits, permutations), shares the same B splits across every test it
runs, and spreads fits over ``n_jobs`` threads or processes; on a GPU the
model matrix stays on the device and only the B risks come back.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ... import _validation as v
from ...plotting import new_axes
from ..result import (ASYMPTOTIC, EXACT, CIBatch, Query, _set_label, as_matrix, format_pvalue,
                      plural, results_table)
from .base import ModelEngine, ModelResult, ModelTest, _rng, check_ppi_args, encode_target, resolve_query
from .crt import B_DRAWS, CRT_FOLDS, crt_test
from .estimators import encode_features, make_model, per_sample_loss
from .loco import LOCO_FOLDS, loco_test

__all__ = ["PPIEngine", "PPIResult", "PPITest", "ppi_test",
           "wilcoxon_greater"]

METHOD = "Predictive permutation independence test"


# ------------------------------------------------------------------ checks














# --------------------------------------------------------------- statistic
def wilcoxon_greater(risk, risk_permuted):
    """One-sided paired Wilcoxon signed-rank test that permuting increases the risk.

    Returns (V, p-value, log p-value). V sums the ranks of |d| over the
    positive differences ``d = risk_permuted - risk``, ties taking mid-ranks;
    zero differences are ranked and their ranks split half to each sign
    (``zero_method="zsplit"``, as the authors' PyImpetus does), so B zero
    differences give p = 1. The p-value is P(V* >= V) over the 2^m equally
    likely sign flips of the m nonzero differences: exact for m <= 50
    (ties and zeros included, as ``scipy.stats.wilcoxon``'s exact and
    permutation methods), normal with continuity correction otherwise.
    """
    from scipy.stats import rankdata

    d = np.asarray(risk_permuted, dtype=np.float64) - np.asarray(risk, dtype=np.float64)
    ranks2 = np.rint(2.0 * rankdata(np.abs(d))).astype(np.int64)  # doubled mid-ranks
    nonzero = d != 0
    w = ranks2[nonzero]
    s_obs = int(ranks2[d > 0].sum())  # S: doubled ranks of the positive differences
    V = s_obs / 2.0 + int(ranks2[~nonzero].sum()) / 4.0
    m = w.size
    if m == 0:
        return V, 1.0, 0.0
    if m <= _EXACT:
        counts = np.zeros(int(w.sum()) + 1)
        counts[0] = 1.0
        for wi in w:  # distribution of S: add each rank with sign + or -
            counts[wi:] = counts[wi:] + counts[:-wi]
        tail = float(counts[s_obs:].sum())
        logp = min(math.log(tail) - m * math.log(2.0), 0.0)
        return V, math.exp(logp), logp
    mean = w.sum() / 2.0
    sd = math.sqrt(float((w.astype(np.float64) ** 2).sum()) / 4.0)
    z = (s_obs - mean - 1.0) / sd  # continuity: half a rank, one unit of S
    logp = float(special.log_ndtr(-z))
    return V, math.exp(logp), logp


#: Sign flips enumerated exactly up to this many nonzero differences.
_EXACT = 50


# ------------------------------------------------------------------ engine
class PPIEngine(ModelEngine):
    """One data set and one target, ready for many PPI tests.

    The model matrix, the target labels, the B splits, the test-part
    permutations and the model seeds are made once; every test (any x, any
    z) uses the same splits. Risks come from :meth:`fit_risks`, tests from
    :meth:`test_many`.

    Parameters
    ----------
    dataset : Dataset
    target : int
        Column position of the target.
    model, B, test_size, task, seed, device, model_params :
        As in :func:`ppi_test`.
    n_jobs : int
        Workers for the fits (1: sequential).
    parallel : {"auto", "threads", "processes"}
        Worker kind; "auto": threads for "xgboost" (its fitting releases the
        GIL), processes for scikit-learn models (small fits spend much of
        their time in Python). On a GPU fits run one at a time.
    """

    def __init__(self, dataset, target: int, *, model="xgboost", B=30, test_size=0.2,
                 task="auto", seed=None, device="auto", n_jobs=1, parallel="auto",
                 model_params=None, categorical=()):
        B, test_size, n_jobs = check_ppi_args(model, B, test_size, task, seed, n_jobs,
                                              parallel, device, model_params)
        n = dataset.n_rows
        n_test = math.ceil(test_size * n)
        if n_test < 2 or n - n_test < 2:
            raise ValueError(f"test_size = {test_size:g} of {n} rows leaves {n - n_test} rows to "
                             f"train on and {n_test} to test on; each part needs at least 2")
        self.dataset, self.target = dataset, int(target)
        self.task, y, self.n_classes = encode_target(dataset, self.target, task)
        self.learner = make_model(model, self.task, self.n_classes, device=device,
                                    params=model_params, n_jobs=n_jobs, n_rows=n - n_test)
        X, self.groups, self.types = encode_features(dataset, self.learner.native_categorical,
                                                     self.learner.dtype, categorical)
        self.B, self.test_size = B, test_size
        rng = _rng(seed)
        train, test, perm = [], [], []
        for _ in range(B):
            order = rng.permutation(n)
            test.append(np.sort(order[:n_test]))
            train.append(np.sort(order[n_test:]))
            perm.append(rng.permutation(n_test))
        self.seeds = rng.integers(0, 2**31 - 1, size=B).tolist()
        on_gpu = self.learner.device == "cuda"
        self.n_jobs = 1 if on_gpu else n_jobs
        if parallel == "auto":  # XGBoost releases the GIL; small sklearn fits hold it
            parallel = "threads" if self.learner.kind == "xgboost" else "processes"
        self.parallel = parallel
        self.on_gpu = on_gpu  # the data stays on the device: only the B risks come back
        xp = self.xp
        self.X = xp.asarray(X)
        y = xp.asarray(y if self.task == "regression" else y.astype(np.int32))
        self.train = [xp.asarray(t) for t in train]
        self.test = [xp.asarray(t) for t in test]
        self.perm = [xp.asarray(p) for p in perm]
        labels = self.learner.training_labels(y)
        self.y_train = [labels[t] for t in self.train]
        self.y_test = [y[t] for t in self.test]
        self.device_used = None
        self.n_fits = 0
        self.progress = None  # called with the number of feature sets done
        self._risk_cache = {}

    @property
    def xp(self):
        """The array module holding the data: numpy, or cupy on a GPU."""
        if self.on_gpu:
            import cupy

            return cupy
        return np

    def model_columns(self, cols) -> np.ndarray:
        """Model-matrix columns of data columns ``cols``."""
        if not len(cols):
            return np.zeros(0, dtype=np.intp)
        return np.concatenate([self.groups[c] for c in cols])

    # -- risks ---------------------------------------------------------------
    def fit_risks(self, features, blocks, splits=None):
        """Risks of the splits for a model on ``features``, and with each block permuted.

        One model per split is fitted on the data columns ``features``; its
        mean test loss is R, and its mean test loss with the columns of each
        block (a tuple of data columns within ``features``) permuted within
        the test part is one row of R~. Every block uses the split's one
        permutation, so the test of x given z is the same whichever other
        blocks are computed beside it.

        Returns (R (n_splits,), R~ (n_blocks, n_splits), device of the fits).
        """
        xp = self.xp
        splits = range(self.B) if splits is None else splits
        features = tuple(features)
        cols = self.model_columns(features)
        where = {f: np.arange(len(self.groups[f])) + sum(len(self.groups[g])
                                                         for g in features[:i])
                 for i, f in enumerate(features)}
        block_cols = [xp.asarray(np.concatenate([where[f] for f in b])) for b in blocks]
        Xc = xp.ascontiguousarray(self.X[:, xp.asarray(cols)])
        types = [self.types[c] for c in cols]
        types = types if "c" in types else None
        out = xp.empty((1 + len(blocks), len(splits)), dtype=xp.float64)
        device = None
        for i, j in enumerate(splits):
            test = self.test[j]
            m = len(test)
            part = Xc[test]
            shuffled = part[self.perm[j]]
            evaluate = xp.concatenate([part] * (1 + len(blocks)))
            for b, bc in enumerate(block_cols, start=1):
                evaluate[b * m:(b + 1) * m, bc] = shuffled[:, bc]
            fitted = self.learner.fit(Xc[self.train[j]], self.y_train[j], self.seeds[j], types)
            if device is None:
                device = self.learner.device_of(fitted)
            pred = self.learner.predict(fitted, evaluate)
            loss = per_sample_loss(pred, xp.tile(self.y_test[j], 1 + len(blocks)), self.task)
            out[:, i] = loss.reshape(1 + len(blocks), m).mean(axis=1)
        out = out.get() if xp is not np else out
        return out[0], out[1:], device

    def test_many(self, xs, z=(), speculate=True):
        """PPI tests of each x (a tuple of data columns) given z, on the shared splits.

        A model on x + z serves the test of every single variable of x + z
        (the shrink phase of PPFS asks for each member given the rest: one
        fit per split until a member is removed), so single-variable tests
        are answered from the risks of the whole feature set, computed once
        and kept for the most recent sets.

        ``speculate=False`` computes only the blocks asked for.

        Returns a list of (V, p, log p, R, R~).
        """
        z = tuple(int(c) for c in z)
        keys = []
        for x in xs:
            x = tuple(int(c) for c in x)
            features = tuple(sorted(set(x) | set(z)))
            single = len(x) == 1 and speculate
            blocks = tuple((f,) for f in features) if single else (x,)
            keys.append(((features, blocks), x[0] if single else x))
        todo = list(dict.fromkeys(k for k, _ in keys if k not in self._risk_cache))
        if todo:
            for key, value in zip(todo, self._compute(todo)):
                self._risk_cache[key] = value
        out = []
        for (features, blocks), x in keys:
            r, rp, _ = self._risk_cache[(features, blocks)]
            rp = rp[blocks.index((x,) if isinstance(x, int) else x)]
            stat, p, logp = wilcoxon_greater(r, rp)
            out.append((stat, p, logp, r, rp))
        while len(self._risk_cache) > _CACHE:
            self._risk_cache.pop(next(iter(self._risk_cache)))
        return out

    def _compute(self, keys):
        """fit_risks for each (features, blocks) key, in parallel when n_jobs > 1."""
        if self.n_jobs == 1:
            done = []
            for f, b in keys:
                done.append(self.fit_risks(f, b))
                if self.progress is not None:
                    self.progress(1)
        else:
            done = self._parallel(keys)
            if self.progress is not None:
                self.progress(len(keys))
        self.n_fits += self.B * len(keys)
        devices = {d for *_, d in done if d}
        if devices:
            self.device_used = sorted(devices)[0]
        return done

    def _parallel(self, keys):
        """Whole keys per worker, or slices of the splits when keys are fewer than workers."""
        from joblib import Parallel, delayed

        pieces = min(self.B, max(1, -(-self.n_jobs // len(keys))))
        bounds = np.linspace(0, self.B, pieces + 1).astype(int)
        tasks = [(i, range(a, b)) for i in range(len(keys)) for a, b in zip(bounds, bounds[1:])]
        chunks = [tasks[c::self.n_jobs] for c in range(min(self.n_jobs, len(tasks)))]
        backend = "threading" if self.parallel == "threads" else "loky"
        done = Parallel(n_jobs=len(chunks), backend=backend)(
            delayed(_run_chunk)(self, [(*keys[i], s) for i, s in chunk]) for chunk in chunks
        )
        risk = [np.empty(self.B) for _ in keys]
        risk_p = [np.empty((len(k[1]), self.B)) for k in keys]
        device = [None] * len(keys)
        for chunk, results in zip(chunks, done):
            for (i, s), (r, rp, d) in zip(chunk, results):
                risk[i][s.start:s.stop] = r
                risk_p[i][:, s.start:s.stop] = rp
                device[i] = device[i] or d
        return list(zip(risk, risk_p, device))

    def __getstate__(self):
        state = self.__dict__.copy()
        state["dataset"] = None  # workers need the arrays only
        state["_risk_cache"], state["progress"] = {}, None
        return state


#: Feature sets whose risks an engine keeps (a PPFS shrink needs the latest one).
_CACHE = 64


def _run_chunk(engine, tasks):
    return [engine.fit_risks(features, blocks, s) for features, blocks, s in tasks]


# ------------------------------------------------------------- public API
def ppi_test(data, x, target, z=(), model="xgboost", B=None, test_size=0.2, task="auto",
             seed=None, *, alpha=0.05, device="auto", n_jobs=1, parallel="auto",
             model_params=None, categorical=None, test="ppi", folds=None, na="raise"):
    """Predictive permutation independence test of x and the target given z (Algorithm 1).

    ``test="ppi"`` (default) is the paper's test, whose p-values are **not
    calibrated** (below); for inference use ``test="crt"``, the calibrated
    holdout conditional randomization test (:func:`mbstat.ci.models.crt.crt_test`), or
    ``test="loco"``, the cross-fitted leave-covariate-out test
    (:func:`mbstat.ci.models.loco.loco_test`); both then take ``folds`` and ignore
    ``test_size``; the CRT takes ``B`` as its draws of x per part (LOCO refuses it).

    For each of B random train/test splits, fit ``model`` on [x, z] -> target
    on the training part, compute the per-sample loss on the test part
    (log-loss for classification, squared error for regression), permute x
    within the test part and compute it again. The p-value is the one-sided
    paired Wilcoxon signed-rank test of H0: "the permuted risk is not larger"
    (Eq. 4) over the B pairs of mean losses.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
        Continuous (float) and discrete (int, bool, string, categorical)
        columns in any mix.
    x : variable or list of variables
        Name or position; several names are permuted jointly (one variable).
    target : variable
    z : variables, optional
        Conditioning set (empty: marginal test).
    model : {"xgboost", "tree"} or estimator
        "xgboost" (default; CUDA when a GPU answers and the training parts have
        at least :data:`mbstat.ci.models.estimators.GPU_MIN_ROWS` rows, CPU ``hist`` otherwise),
        "tree" (scikit-learn's fully grown CART, the paper's model) or any
        scikit-learn-compatible estimator (cloned for every fit, never
        mutated; classification needs ``predict_proba``).
    B : int, optional
        Number of splits (>= 5: one 20% test part per fifth of the data; default 30);
        with ``test="crt"`` the draws of x given z per part (default 1000).
    test_size : float in (0, 1)
        Share of the rows in each test part.
    task : {"auto", "classification", "regression"}
        "auto": classification for a discrete target, regression for a float one.
    seed : None, int or numpy Generator
        Splits, permutations and model seeds; same seed, same result. None
        draws a seed, recorded in ``result.seed`` (the run can be replayed).
    alpha : float
        Level of ``result.independent``.
    device : {"auto", "cpu", "cuda"}
        Where XGBoost runs; ``result.device`` says where it really ran.
    n_jobs : int
        Fits running at once (-1: all CPUs).
    parallel : {"auto", "threads", "processes"}
    model_params : dict, optional
        Overrides of the XGBoost settings (:data:`mbstat.ci.models.estimators.XGBOOST_DEFAULTS`,
        e.g. ``{"n_estimators": 100, "max_depth": 6}``) or of the tree's.
    categorical : list of names, optional
        Feature columns the model treats as categories. The rule otherwise:
        text, categorical and other non-number columns are categories; numbers,
        integers and bools included, are numbers (split by thresholds), never
        one-hot encoded unless named here.
    test : {"ppi", "crt", "loco"}
        The paper's PPI test, or a calibrated one.
    folds : int, optional
        Parts of ``test="crt"`` (default 2) or ``test="loco"`` (default 5).
    na : {"raise", "drop"}

    Returns
    -------
    PPIResult
        A :class:`~mbstat.ci.CIResult` (``statistic`` is Wilcoxon's V) that
        also keeps the B paired risks (``risk``, ``risk_permuted``) and plots them.

    Notes
    -----
    Categorical features: XGBoost native categoricals; one-hot columns for
    the other models (binary ones as 0/1). Continuous features as they are.

    Calibration, measured (``vignettes/ppi_calibration.py``: 200 nulls of
    n = 500, tree, alpha = 0.05): the p-values are not calibrated. The B
    splits share rows, so the B pairs are not independent (x independent of
    everything: 7.5% at B = 10, 13.5% at B = 30, 26.5% at B = 100); and the
    knockoff is a marginal permutation: when x depends on z the permuted rows
    leave the data's support and the risk rises even if x and y are
    independent given z (x = 0.7 z + noise, y from z: classification 18.5%,
    32% and 46.5% at B = 10, 30, 100; regression 14%, 30.5%, 40.5%; a
    categorical x 14.5%, 24%, 38%). Larger B makes it worse. ``test="crt"`` and
    ``test="loco"`` hold the level on the same data (``vignettes/ppi_calibration.py``).
    """
    v.check_choice("test", test, ("ppi", "crt", "loco"))
    if test != "ppi":
        settings = dict(model=model, task=task, seed=seed, alpha=alpha, device=device,
                        n_jobs=n_jobs, parallel=parallel, model_params=model_params,
                        categorical=categorical, na=na)
        if test == "crt":
            return crt_test(data, x, target, z, folds=CRT_FOLDS if folds is None else folds,
                            B=B_DRAWS if B is None else B, **settings)
        if B is not None:
            raise TypeError("ppi_test(): B sets the PPI test's splits or the CRT's draws; "
                            "test='loco' takes folds=")
        return loco_test(data, x, target, z, folds=LOCO_FOLDS if folds is None else folds,
                         **settings)
    B = 30 if B is None else B
    alpha = v.check_alpha(alpha)
    check_ppi_args(model, B, test_size, task, seed, n_jobs, parallel, device, model_params)
    seed = v.drawn_seed(seed)
    ds, t, xs, zs, cats = resolve_query(data, x, target, z, task, na, "ppi_test", categorical)
    engine = PPIEngine(ds, t, model=model, B=B, test_size=test_size, task=task, seed=seed,
                       device=device, n_jobs=n_jobs, parallel=parallel,
                       model_params=model_params, categorical=cats)
    out = engine.test_many([xs], zs, speculate=False)
    (_, _, _, r, rp), = out
    table = _table(out)
    query = Query("ppi", METHOD, "V", alpha, ds.n_rows, ds.names, table.dtype.names)
    batch = CIBatch(query, (tuple(sorted(xs)),), t, tuple(sorted(zs)), as_matrix(table))
    return PPIResult(batch, risk=r, risk_permuted=rp, model=engine.model_label,
                     task=engine.task, device=engine.device, B=engine.B,
                     test_size=engine.test_size, seed=seed if isinstance(seed, int) else None)


def _table(out) -> np.ndarray:
    """The results table of PPI tests from the engine's (V, p, log p, R, R~) tuples:
    ``mi`` NaN, the mean risk increase in ``increase``, exact Wilcoxon p-values up to
    :data:`_EXACT` nonzero differences (the normal approximation beyond)."""
    nonzero = np.array([np.count_nonzero(o[4] - o[3]) for o in out])
    return results_table(
        len(out), extra=PPITest.extra_columns, statistic=[o[0] for o in out], df=np.nan,
        pvalue=[o[1] for o in out], log_pvalue=[o[2] for o in out], mi=np.nan,
        increase=[float(np.mean(o[4] - o[3])) for o in out],
        calibration=np.where(nonzero <= _EXACT, EXACT, ASYMPTOTIC))




class PPITest(ModelTest):
    """The PPI test as a :class:`~mbstat.ci.CITest`: ``CITester(data, PPITest(...))``.

    Accepts continuous, discrete and mixed data. ``statistic`` is Wilcoxon's
    V, ``df`` and ``mi`` NaN, ``increase`` the mean risk increase when x is permuted
    (nats for the log-loss). Tests of one target share one engine (same splits).
    PPI is not symmetric in x and y: ask with the target as y (the tester's cache
    keeps the order). Arguments as in :func:`ppi_test`.
    """

    name = "ppi"
    method = METHOD
    statistic_name = "V"
    engine_class = PPIEngine
    label = "PPI test"
    increase_note = "increase: mean rise of the test risk when the feature is permuted"

    def settings_text(self) -> str:
        return (f"{plural(self.settings['B'], 'split')} each, test size "
                f"{self.settings['test_size']:g}")

    def __init__(self, model="xgboost", B=30, test_size=0.2, task="auto", seed=None, *,
                 device="auto", n_jobs=1, parallel="auto", model_params=None,
                 categorical=None):
        check_ppi_args(model, B, test_size, task, seed, n_jobs, parallel, device, model_params)
        super().__init__(dict(model=model, B=B, test_size=test_size, task=task, device=device,
                              n_jobs=n_jobs, parallel=parallel, model_params=model_params),
                         seed, categorical)

    table = staticmethod(_table)


# ------------------------------------------------------------------ result
#: What a result built on the paper's test says about its p-values.
UNCALIBRATED = ("Note: the PPI test's p-values are not calibrated: the B splits share rows and "
                "x is permuted\nmarginally, so true nulls are rejected far more often than "
                "alpha (24-47% at alpha = 0.05,\nB = 30-100, when x depends on z; "
                "vignettes/ppi_calibration.py). For inference use test='crt'.")





@dataclass(frozen=True, eq=False, repr=False)
class PPIResult(ModelResult):
    """A predictive permutation independence (PPI) test, as a :class:`~mbstat.ci.CIResult`.

    ``statistic`` is the Wilcoxon signed-rank statistic V (sum of the ranks of
    the splits where permuting x increased the risk), ``pvalue`` its one-sided
    p-value, ``increase`` the mean risk increase (nats for the log-loss); ``mi`` is NaN
    (a model-based test estimates no mutual information).

    Extra attributes
    ----------------
    risk, risk_permuted : ndarray (B,)
        Mean test loss of each split with x as it is and with x permuted
        (read-only; Eqs. 2-3 of the paper).
    model, task, device : str
        The model, "classification" or "regression", and the device that ran
        the fits ("cpu", "cuda:0", ...).
    B : int
        Number of random train/test splits.
    test_size : float
    seed : int or None
        The seed used (drawn when none was given; None for a Generator).

    The p-values are not calibrated (see :func:`ppi_test`); the printout says so.
    """

    risk: np.ndarray = field(default=None)
    risk_permuted: np.ndarray = field(default=None)
    B: int = 0
    test_size: float = 0.2

    _shown = ("model", "task", "device", "B")

    @property
    def risk_increase(self) -> np.ndarray:
        """Per-split increase of the risk when x is permuted."""
        return self.risk_permuted - self.risk

    def __str__(self) -> str:
        estimates = self._estimates({"risk": self.risk, "permuted": self.risk_permuted,
                                     "increase": self.risk_increase})
        lines = [
            *self._head(self.method or METHOD, f"{self.statistic_name} = {self.statistic:.6g}"),
            "alternative hypothesis: permuting x increases the risk "
            "(true location shift is greater than 0)",
            f"model: {self.model} on {self.device}; {plural(self.B, 'split')}, test size "
            f"{self.test_size:g}; {self.loss}; seed {self.seed}",
            "sample estimates (mean over splits):",
            estimates,
            "",
            UNCALIBRATED,
        ]
        return "\n".join(lines) + "\n"

    def plot(self, ax=None):
        """Paired risks of the splits: original (x axis) vs permuted (y axis).

        Points above the diagonal are splits where permuting x hurt the
        model. Returns the matplotlib Axes.
        """

        ax = new_axes(ax, figsize=(4.5, 4.5))
        r, rp = self.risk, self.risk_permuted
        up = rp > r
        ax.scatter(r[up], rp[up], color="C3", label="permuting x increased the risk", zorder=3)
        ax.scatter(r[~up], rp[~up], color="C0", label="not increased", zorder=3)
        lo = float(min(r.min(), rp.min()))
        hi = float(max(r.max(), rp.max()))
        pad = 0.05 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="k", lw=1, ls="--")
        ax.set_xlabel(f"risk ({self.loss}), x as it is")
        ax.set_ylabel(f"risk ({self.loss}), x permuted")
        cond = f" | {', '.join(self.z)}" if self.z else ""
        ax.set_title(f"PPI: {_set_label(self.x)} ~ {self.y}{cond}  (p = "
                     f"{format_pvalue(self.pvalue, 3)})")
        ax.legend(loc="best", fontsize=8)
        return ax
