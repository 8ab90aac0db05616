"""A calibrated model-based CI test: the cross-fitted leave-covariate-out (LOCO) test.

x is independent of the target y given z exactly when x adds nothing to the
best prediction of y from z. The test asks this of a model, on held-out rows:

1. The rows are split once into ``folds`` parts (stratified by class for a
   classification target). For each part k, the model is fitted on the other
   parts twice: on the features z, and on the features x + z (same seed);
   both predict the rows of part k (cross-fitting: every row is predicted by
   models that never saw it).
2. Each row gets the loss reduction ``d_i = loss_z(i) - loss_xz(i)``
   (log-loss for classification, squared error for regression).
3. H0: E(d) <= 0 (x does not improve the held-out loss) against E(d) > 0,
   by the one-sided one-sample t-test on the n reductions
   (``scipy.stats.ttest_1samp(d, 0, alternative="greater")``).

This is the leave-covariate-out variable importance of Lei et al. (2018,
JASA 113:1094, section 6) and Williamson et al. (2021, Biometrics 77:9)
with the held-out loss of Watson & Wright's CPI (2021, Machine Learning
110:2107) as its statistic, and their t-test; with z empty, the model
given z is the same learner fitted on one constant column (its intercept).

Why this test and not the others (see also :func:`loco_test`):

* the PPI test (Hassan et al.) permutes x marginally and treats B
  overlapping splits as independent: under H0 it rejects at 22-57%
  (issue 16; ``vignettes/ppi_calibration.py``);
* the corrected resampled t-test (Nadeau & Bengio 2003) fixes the overlap
  but not the marginal permutation, which changes the joint law of (x, z);
* CPI with knockoffs (Watson & Wright 2021, R package ``cpi``) and the
  conditional randomization/permutation tests (Candes et al. 2018;
  Berrett et al. 2020) are exact when x can be sampled from its law given
  z, a second model that would be needed for every x kind (continuous,
  categorical, sets of columns) and every z; a wrong one breaks the level
  just as the marginal permutation does.

LOCO needs no model of x given z, so it takes any x (one column, several
jointly, continuous or categorical) and any z. Its assumption: under H0 a
model fitted on x + z predicts held-out rows no better in expectation than
the same model fitted on z. For a learner able to approximate E(y | z) this
holds (extra independent-given-z inputs only add estimation variance), so
the test is valid and usually conservative. It can fail for a learner
that cannot represent E(y | z) but can borrow a proxy of it from x (say a
linear model when y depends on z**2 and x = z**2 + noise): then the test
answers "does x improve this model?", which is not conditional
independence. The t-test takes the n reductions as independent, which
ignores the fluctuation of the fitted models between folds (Bayle et al.
2020 show the CLT for stable learners); its level is measured in
``vignettes/ppi_calibration.py`` and ``tests/test_loco.py``. With a three-class target
(logits 0, 1.5 z, -1.5 z), x = 1[z + e > 0] + 1[z > 1], n = 300 and the default XGBoost,
10 of 100 nulls were once rejected at 0.05 (issue 31 item 6); on 1,000 nulls of that
scenario (the vignette's "3 classes, x step") it rejected 48, 0.048 (Wilson 95%:
0.036-0.063), at its level (``tests/test_model_test_levels.py``): the 10 of 100 was a
chance excess (probability 0.03 at 0.05). Nadeau & Bengio's (2003) variance correction is
therefore not applied: it would cost much power (issue 16's classification alternative:
0.6 -> 0.18 at n = 500).
"""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from scipy import stats

from ... import _validation as v
from ...plotting import new_axes
from ..result import (ASYMPTOTIC, CIBatch, Query, _set_label, as_matrix, format_pvalue, plural,
                      results_table)
from .base import ModelEngine, ModelResult, ModelTest, _rng, check_ppi_args, encode_target, resolve_query
from .estimators import encode_features, make_model, per_sample_loss

__all__ = ["LOCO_XGBOOST", "LOCOEngine", "LOCOResult", "LOCOTest", "loco_test", "t_greater"]

METHOD = "Cross-fitted leave-covariate-out test"

#: ``device="auto"`` trains the XGBoost fits of LOCO and the CRT on a GPU from this many
#: training rows, more than the PPI test's :data:`mbstat.ci.models.estimators.GPU_MIN_ROWS`: their
#: early-stopped fits and the CRT's predictions of the draws gain less from a GPU (one H100
#: against its 16 CPU cores, ``benchmarks/gpu.py``: LOCO ran at 0.79x the CPU's speed at
#: 80,000 training rows and 1.71x at 320,000; the CRT at 0.70x at 50,000 and 1.28x at 200,000).
GPU_MIN_ROWS = 200_000

#: XGBoost settings of the LOCO test unless ``model_params`` overrides them: depth 3,
#: eta 0.3, rounds chosen by early stopping (patience 5) on a fifth of each training part.
#: The held-out loss is the statistic, so an overfitted model costs power; eta 0.1 and
#: patience 10 gain some power at n = 500 at 2-3x the time (benchmarks/ppfs.py,
#: vignettes/ppi_calibration.py).
LOCO_XGBOOST = MappingProxyType({
    "n_estimators": 100, "max_depth": 3, "learning_rate": 0.3, "max_bin": 64,
    "early_stopping_rounds": 5,
})


#: Cross-fitting parts of a LOCO test.
LOCO_FOLDS = 5


def check_folds(folds) -> int:
    """``folds`` as an int >= 2."""
    return v.check_int("folds", folds, low=2)


def deal_folds(rng, y, folds: int, task: str) -> np.ndarray:
    """The part 0..folds-1 of each row: a random order, stratified by class for a
    classification target (each class dealt round the parts)."""
    n = len(y)
    order = rng.permutation(n)
    if task == "classification":
        order = order[np.argsort(y[order], kind="stable")]
    part = np.empty(n, dtype=np.intp)
    part[order] = np.arange(n) % folds
    return part


# --------------------------------------------------------------- statistic
def t_greater(d, tol: float = 0.0):
    """One-sided one-sample t-test that the mean of ``d`` is greater than 0.

    Returns (t, p-value, log p-value). Differences within ``tol`` of 0 count as 0
    (rounding: :meth:`LOCOEngine.test_many` passes 1e-12 times the mean held-out
    loss, so two models that predict alike up to rounding, e.g. a linear model given
    z and given z + 2z, differ by nothing). Differences that do not vary (sd at most
    1e-12 of |mean|) give t = 0 and p = 1 when their mean is not positive (all zero:
    x changed nothing), t = inf and p = 0 when it is; any other ``d`` gets the
    t-test, however small its values (no absolute floor: tiny differences are
    rounding or signal according to ``tol``, never a sure rejection).
    """
    d = np.asarray(d, dtype=np.float64)
    if tol > 0:
        d = np.where(np.abs(d) <= tol, 0.0, d)
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if not sd > 1e-12 * abs(mean):
        if mean > 0:
            return math.inf, 0.0, -math.inf
        return 0.0, 1.0, 0.0
    t = mean / (sd / math.sqrt(n))
    logp = float(stats.t.logsf(t, n - 1))
    return t, math.exp(logp), logp


#: Loss reductions within this share of the mean held-out loss are rounding (:func:`t_greater`).
ROUNDING = 1e-12


# ------------------------------------------------------------------ engine
class LOCOEngine(ModelEngine):
    """One data set and one target, ready for many LOCO tests.

    The model matrix, the labels and the fold assignment are made once; the
    held-out per-row losses of every feature set are computed once and kept
    (the z-model of a growth test, the empty set, serves every candidate; the
    whole blanket's model serves every member of a shrink phase).

    Parameters are those of :func:`loco_test`; ``categorical`` holds column
    positions; ``n_jobs`` is a count of workers.
    """

    def __init__(self, dataset, target: int, *, model="xgboost", folds=LOCO_FOLDS, task="auto",
                 seed=None, device="auto", n_jobs=1, parallel="auto", model_params=None,
                 categorical=()):
        _, _, n_jobs = check_ppi_args(model, 5, 0.2, task, seed, n_jobs, parallel, device,
                                      model_params)
        folds = check_folds(folds)
        n = dataset.n_rows
        if n < 2 * folds:
            raise ValueError(f"folds = {folds} need at least {2 * folds} rows; got {n}")
        self.dataset, self.target, self.folds = dataset, int(target), folds
        self.task, y, self.n_classes = encode_target(dataset, self.target, task)
        if isinstance(model, str) and model == "xgboost":
            model_params = {**LOCO_XGBOOST, **(model_params or {})}
        self.learner = make_model(model, self.task, self.n_classes, device=device,
                                    params=model_params, n_jobs=n_jobs,
                                    n_rows=n - n // folds, gpu_min_rows=GPU_MIN_ROWS)
        X, self.groups, self.types = encode_features(
            dataset, self.learner.native_categorical, self.learner.dtype, categorical)
        rng = self.rng = _rng(seed)
        self.part = deal_folds(rng, y, folds, self.task)
        self.seeds = rng.integers(0, 2**31 - 1, size=folds).tolist()
        self.n_jobs = 1 if self.learner.device == "cuda" else n_jobs
        if parallel == "auto":
            parallel = "threads" if self.learner.kind == "xgboost" else "processes"
        self.parallel = parallel
        self.X = X
        self.y = y if self.task == "regression" else y.astype(np.int32)
        self.labels = self.learner.training_labels(self.y)
        self.device_used = None
        self.n_fits = 0
        self.progress = None  # called with the number of feature sets done
        self._cache = OrderedDict()

    def fold_losses(self, features, k: int):
        """Held-out per-row losses of part k for the model on data columns ``features``."""
        test = np.flatnonzero(self.part == k)
        train = np.flatnonzero(self.part != k)
        if features:
            cols = np.concatenate([self.groups[c] for c in features])
            Xc = np.ascontiguousarray(self.X[:, cols])
            types = [self.types[c] for c in cols]
            types = types if "c" in types else None
        else:  # z empty: the same learner on one constant column, i.e. its intercept
            Xc, types = np.zeros((len(self.y), 1), dtype=self.X.dtype), None
        fitted = self.learner.fit(Xc[train], self.labels[train], self.seeds[k], types)
        pred = self.learner.predict(fitted, Xc[test])
        return per_sample_loss(pred, self.y[test], self.task), self.learner.device_of(fitted)

    def losses(self, feature_sets):
        """Held-out per-row losses (n,) of each feature set (tuples of data columns)."""
        keys = [tuple(sorted(int(c) for c in f)) for f in feature_sets]
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if todo:
            self._compute(todo)
        out = [self._cache[k] for k in keys]
        while len(self._cache) > _CACHE:
            self._cache.popitem(last=False)
        return out

    def _compute(self, todo):
        tasks = [(f, k) for f in todo for k in range(self.folds)]
        if self.n_jobs == 1:
            done = []
            for i, f in enumerate(todo):
                done.extend(self.fold_losses(f, k) for k in range(self.folds))
                if self.progress is not None:
                    self.progress(1)
        else:
            from joblib import Parallel, delayed

            backend = "threading" if self.parallel == "threads" else "loky"
            done = Parallel(n_jobs=self.n_jobs, backend=backend)(
                delayed(_fold_losses)(self, f, k) for f, k in tasks)
            if self.progress is not None:
                self.progress(len(todo))
        self.n_fits += len(tasks)
        for i, f in enumerate(todo):
            loss = np.empty(len(self.y))
            for k in range(self.folds):
                loss[self.part == k] = done[i * self.folds + k][0]
            loss.flags.writeable = False
            self._cache[f] = loss
        devices = {d for _, d in done if d}
        if devices:
            self.device_used = sorted(devices)[0]

    def test_many(self, xs, z=()):
        """LOCO tests of each x (a tuple of data columns) given z.

        Returns a list of (t, p, log p, loss given z, loss given x + z).
        """
        z = tuple(sorted(int(c) for c in z))
        sets = [tuple(sorted(set(int(c) for c in x) | set(z))) for x in xs]
        base, *full = self.losses([z, *sets])
        out = []
        for lf in full:
            tol = ROUNDING * 0.5 * float(np.mean(np.abs(base) + np.abs(lf)))
            t, p, logp = t_greater(base - lf, tol)
            out.append((t, p, logp, base, lf))
        return out

    def __getstate__(self):
        state = self.__dict__.copy()
        state["dataset"], state["progress"], state["_cache"] = None, None, OrderedDict()
        state["rng"] = None
        return state


#: Feature sets whose held-out losses an engine keeps.
_CACHE = 256


def _fold_losses(engine, features, k):
    return engine.fold_losses(features, k)


def _table(out) -> np.ndarray:
    """The results table of LOCO tests: t, df = n - 1, one-sided p, ``mi`` NaN, and the
    mean loss reduction by x in ``increase`` (the column PPI's risk increase uses)."""
    return results_table(
        len(out), extra=LOCOTest.extra_columns, statistic=[o[0] for o in out],
        df=[len(o[3]) - 1 for o in out], pvalue=[o[1] for o in out],
        log_pvalue=[o[2] for o in out], mi=np.nan,
        increase=[float(np.mean(o[3] - o[4])) for o in out], calibration=ASYMPTOTIC)


# ------------------------------------------------------------- public API
def loco_test(data, x, target, z=(), model="xgboost", folds=LOCO_FOLDS, task="auto", seed=None, *,
              alpha=0.05, device="auto", n_jobs=1, parallel="auto", model_params=None,
              categorical=None, na="raise"):
    """Cross-fitted leave-covariate-out test of x and the target given z (calibrated).

    The rows are split into ``folds`` parts; on each, ``model`` is fitted on
    the other parts given z and given x + z, and both predict the part. The
    p-value is the one-sided t-test that the mean per-row reduction of the
    held-out loss (log-loss or squared error) by adding x is greater than 0.
    See :mod:`mbstat.ci.models.loco` for the reasons behind this design and its
    assumption (under H0, adding x does not improve the model's held-out
    loss in expectation); the level is measured in
    ``vignettes/ppi_calibration.py``. Also ``ppi_test(..., test="loco")``
    and ``ci_test(..., test="loco")``.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
    x : variable or list of variables
        Several names are tested jointly (one variable).
    target : variable
    z : variables, optional
    model : {"xgboost", "tree"} or estimator
        As in :func:`mbstat.ppi_test`; "xgboost" takes :data:`LOCO_XGBOOST`
        (early stopping) unless ``model_params`` overrides it. A flexible learner
        is the safe choice for the level (see the module notes); a model suited
        to the data gives more power (e.g. ``LogisticRegression()`` for a smooth
        logit); a fully grown tree ("tree") gives valid but low-power tests
        (its held-out log-loss is very noisy).
    folds : int
        Cross-fitting parts (>= 2).
    task : {"auto", "classification", "regression"}
    seed : None, int or numpy Generator
        Folds and model seeds; None draws one, recorded in ``result.seed``.
    alpha, device, n_jobs, parallel, model_params, na :
        As in :func:`mbstat.ppi_test`.
    categorical : list of names, optional
        Feature columns to treat as categories; otherwise text and categorical
        columns are categories and numbers (integers included) are numbers.

    Returns
    -------
    LOCOResult
        A :class:`~mbstat.ci.CIResult` (``statistic`` is t, ``df`` = n - 1,
        ``increase`` the mean loss reduction) that keeps the per-row held-out
        losses given z and given x + z.
    """
    alpha = v.check_alpha(alpha)
    check_ppi_args(model, 5, 0.2, task, seed, n_jobs, parallel, device, model_params)
    folds = check_folds(folds)
    seed = v.drawn_seed(seed)
    ds, t, xs, zs, cats = resolve_query(data, x, target, z, task, na, "loco_test", categorical)
    engine = LOCOEngine(ds, t, model=model, folds=folds, task=task, seed=seed, device=device,
                        n_jobs=n_jobs, parallel=parallel, model_params=model_params,
                        categorical=cats)
    out = engine.test_many([xs], zs)
    (_, _, _, base, full), = out
    table = _table(out)
    query = Query("loco", METHOD, "t", alpha, ds.n_rows, ds.names, table.dtype.names)
    batch = CIBatch(query, (tuple(sorted(xs)),), t, tuple(sorted(zs)), as_matrix(table))
    return LOCOResult(batch, loss_z=base, loss_xz=full, model=engine.model_label,
                      task=engine.task, device=engine.device, folds=folds,
                      seed=seed if isinstance(seed, int) else None)


class LOCOTest(ModelTest):
    """The LOCO test as a :class:`~mbstat.ci.CITest` (registry name ``"loco"``).

    ``statistic`` is t, ``df`` n - 1, ``mi`` NaN, ``increase`` the mean reduction of the
    held-out loss by x. Tests of one target share one engine (same folds, cached
    losses). Not symmetric: ask with the target as y. Arguments as in :func:`loco_test`
    (``categorical`` by column names).
    """

    name = "loco"
    method = METHOD
    statistic_name = "t"
    engine_class = LOCOEngine
    label = "LOCO test"
    increase_note = "increase: mean reduction of the held-out loss when the feature is added"

    def settings_text(self) -> str:
        return f"{plural(self.settings['folds'], 'fold')} each, cross-fitted"

    def __init__(self, model="xgboost", folds=LOCO_FOLDS, task="auto", seed=None, *, device="auto",
                 n_jobs=1, parallel="auto", model_params=None, categorical=None):
        check_ppi_args(model, 5, 0.2, task, seed, n_jobs, parallel, device, model_params)
        super().__init__(dict(model=model, folds=check_folds(folds), task=task, device=device,
                              n_jobs=n_jobs, parallel=parallel, model_params=model_params),
                         seed, categorical)

    table = staticmethod(_table)


# ------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False, repr=False)
class LOCOResult(ModelResult):
    """A cross-fitted leave-covariate-out test, as a :class:`~mbstat.ci.CIResult`.

    Extra attributes
    ----------------
    loss_z, loss_xz : ndarray (n,)
        Held-out loss of each row for the model given z and given x + z (read-only).
    model, task, device : str
    folds : int
    seed : int or None
        The seed used (drawn when none was given): ``seed=result.seed`` replays the test.
    """

    loss_z: np.ndarray = field(default=None)
    loss_xz: np.ndarray = field(default=None)
    folds: int = 5

    _shown = ("model", "task", "folds", "seed")

    @property
    def reduction(self) -> np.ndarray:
        """Per-row reduction of the held-out loss by x (``loss_z - loss_xz``)."""
        return self.loss_z - self.loss_xz

    def conf_int(self, level: float = 0.95) -> tuple:
        """One-sided confidence interval (lower, inf) for the mean loss reduction."""
        d = self.reduction
        se = d.std(ddof=1) / math.sqrt(d.size)
        return float(d.mean() - stats.t.ppf(level, d.size - 1) * se), math.inf

    def __str__(self) -> str:
        lo, _ = self.conf_int()
        estimates = self._estimates({"loss given z": self.loss_z, "given x + z": self.loss_xz,
                                     "reduction": self.reduction})
        lines = [
            *self._head(METHOD, f"t = {self.statistic:.6g}, df = {self.df:.0f}"),
            "alternative hypothesis: adding x reduces the held-out loss "
            "(true mean reduction is greater than 0)",
            "95 percent confidence interval:",
            f" {lo:.6g}  Inf",
            f"model: {self.model} on {self.device}; {plural(self.folds, 'fold')} "
            f"(cross-fitted), {self.loss}; seed {self.seed}",
            "sample estimates (mean over rows):",
            estimates,
        ]
        return "\n".join(lines) + "\n"

    def plot(self, ax=None):
        """Histogram of the per-row loss reductions, with their mean. Returns the Axes."""

        ax = new_axes(ax, figsize=(5, 3.5))
        d = self.reduction
        ax.hist(d, bins=min(60, max(10, d.size // 20)), color="C0")
        ax.axvline(0.0, color="k", lw=1, ls="--")
        ax.axvline(d.mean(), color="C3", lw=2, label=f"mean = {d.mean():.3g}")
        ax.set_xlabel(f"held-out {self.loss} given z minus given x + z")
        ax.set_ylabel("rows")
        cond = f" | {', '.join(self.z)}" if self.z else ""
        ax.set_title(f"LOCO: {_set_label(self.x)} ~ {self.y}{cond}  (p = "
                     f"{format_pvalue(self.pvalue, 3)})")
        ax.legend(loc="best", fontsize=8)
        return ax
