"""A calibrated model-based CI test: the holdout conditional randomization test (HRT).

x is independent of the target y given z exactly when, for any model f fitted on
other rows, the held-out loss of f is the same in law whether f is given the
observed x or a fresh x~ drawn from the law of x given z. The test asks this of
a model, on held-out rows (Tansey, Veitch, Zhang, Rabadan & Blei 2022, "The
holdout randomization test for feature selection in black box models", JCGS
31:151; the conditional randomization test of Candes, Fan, Janson & Lv 2018,
JRSS-B 80:551, section 4.1, with the model fitted once):

1. The rows are split into ``folds`` parts (stratified by class for a
   classification target); for each part k the model is fitted once, on
   x + z, on the other parts.
2. The statistic is the held-out loss of part k, ``T0 = sum_i loss(y_i,
   f(x_i, z_i))`` (log-loss or squared error), and the same with x replaced
   by B draws x~ of x given z (rows of part k only), ``T_1..T_B``.
3. The part's p-value is the rank of T0 among the draws,
   ``(#{T_b < T0} + u (1 + #{T_b = T0})) / (B + 1)`` with u uniform: exact
   for a fixed model when x~ has the law of x given z (Candes et al. 2018,
   Lemma 4.1), ties (a model that ignores x) broken at random, where fewer than
   :data:`SEQUENTIAL_EXTREMES` draws are as extreme (see the sequential stop below).
4. ``repeats`` random splits give J = ``folds * repeats`` p-values, which are
   dependent; the test's p-value is Bonferroni's ``min(1, J min_j p_j)``:
   valid under any dependence when each part's p-value is.

Readings and choices, with what was measured (n = 500, alpha 0.05, the
default XGBoost; ``vignettes/ppi_calibration.py`` for the final figures):

* Why not one cross-fitted sum over the parts (LOCO's design): the model of
  part j was fitted on the observed (x, y) of part k, so the parts' statistics
  are positively correlated under H0 while the draws of each part are
  independent: the summed test rejected 5.5-8% of nulls (7% of 800 pooled).
* Why Bonferroni: each part's own p-value is exact (600 nulls of two
  scenarios, 3,600 parts: 4.7% and 5.1% rejected by a part at 0.05, uniform by
  Kolmogorov-Smirnov), and Bonferroni keeps the combination valid whatever the
  parts' correlation (0.2-0.5 here). The Cauchy combination (Liu & Xie 2020,
  :func:`cauchy_combination`) gained little power (0.975 against 0.96) and,
  at 0.05 with these correlations, rejected 3.8-11% of nulls.
* Why 2 parts x 3 repeats: one split into 5 parts had less power (0.78 with
  Bonferroni against 0.89-0.96), one split into 2 parts less again, at more or
  as many fits.
* B = 1000 draws per part, so that a part whose held-out loss beats every draw
  gives a p-value of at most 6 / 1001, below the usual levels. A part stops at the
  draw that is the 10th as extreme as the data (ties included), with Besag &
  Clifford's (1991) valid sequential p-value 10 / draws (at least 0.01: such a
  part never decides at the usual levels); the randomized rank p-value is used
  only where fewer than 10 of the B draws are as extreme. On 1,400 x 100
  continuous features this cut ``ppfs(test="crt")`` about fourfold; the tables and the
  early stop below, another 2.4x (one fold of 1,600 x 100: 44.4 s -> 18.5 s, LOCO 17.6 s).
* How x~ is drawn (the law of x given z is the test's assumption, as for
  every conditional randomization test):

  - z empty, or every z column discrete with at least :data:`STRATUM_ROWS`
    held-out rows per observed configuration on average: the held-out rows' x
    values are permuted within the strata of z (the conditional permutation of
    Berrett et al. 2020 JRSS-B 82:175 for discrete z): exact, no model of x
    (with fewer rows per stratum x barely moves and the test loses its power);
  - otherwise (a continuous z, or many configurations), x continuous (one or more columns): a linear
    regression of x on z (continuous z as numbers, discrete z as treatment
    dummies, all rows: y is not used) and the held-out rows' residual rows
    permuted (x~ = fitted + permuted residual);
  - otherwise, x discrete (one or more columns, joint levels; a column named in
    ``categorical`` counts as discrete, as for z, and so does a float x with two
    values or with whole numbers that ``task="auto"`` would read as classes:
    the linear draws would leave its support; a 0/1 float x rejected 38% of 60
    nulls at 0.05):
    a multinomial logistic regression of x on z (scikit-learn, weakly
    penalized, all rows) and x~ drawn from its probabilities. The levels are
    the distinct rows of x's encoded columns (one-hot, codes or numbers), so
    a draw is always a value the model has seen.

  A sampler that misses how x depends on z (a non-linear mean for continuous z)
  breaks the level the way the PPI test's marginal permutation does; only the
  residuals of the held-out part are permuted, because a tree model remembers
  the x values of its training rows.
* A part's p-value is randomized (ties and the rank within them), so it can fall
  below 1/(B + 1): it is uniform under H0, not bounded below. Ties count as extreme in the
  sequential stop (the conservative side): a model that ignores x ties every draw, so each
  part stops after 10 draws with p = 1, and so does the test.
* The model is refitted per part and per feature set (the models of a feature set are kept:
  a shrink phase tests every member in the blanket's models), part by part as the test
  needs them: a test stops at its first part whose draws reach the early stop below (the
  least p-value a part can take, every other part's p-value being larger), since its
  p-value is then J / (early + 1) whatever the other parts (the same p-values as drawing
  every part, tests/test_crt.py; its ``increase`` is the mean over the parts drawn). A
  clear member costs one fit and 239 draws, not six of each. (Stopping instead once the
  first split's parts are all far from alpha / J, which keeps the p-value valid, lost
  members on ALARM HR: ERRCAUTER's parts given the blanket were 0.77 on the first split
  and 0.004 on a later one.) Its held-out rows are
  predicted once, and the draws cost no further prediction where they can be read from a
  table (issue 27; each exact, tested against predicting every drawn row):

  - a shuffle of x within the strata of z (an empty or discrete z) gives row i the
    prediction of the row whose x it takes, since z is equal within a stratum: the
    predictions are shuffled;
  - a tree model (XGBoost, a scikit-learn tree) predicts a row alike for every x between two
    of its split points on x: each row is predicted once per interval, and a draw reads its
    interval (a continuous x given a continuous z);
  - where x takes few distinct values in a part (categories, 0/1), once per value.

* Given an empty z, every single-column x is tested in one pass, by the original CRT of
  Candes et al. (2018, section 4.1) with the model refitted for each draw: the model of y
  given x is a histogram (x's levels, or its :data:`MARGINAL_BINS` quantile bins; the class
  frequencies or the mean of y in each cell), the statistic its in-sample loss reduction
  against the constant model (G^2 / 2 for classes, the between-cells sum of squares for a
  regression: :func:`histogram_reductions`), and each draw permutes y, one permutation
  serving every x (the same law as permuting x). Exact, no held-out parts (one part: its
  p-value is the sequential one, with the early stop at ``ceil(2 / alpha) - 1`` = 39 draws).
* Given a discrete z whose strata are populated (every z column discrete, at least
  :data:`STRATUM_ROWS` rows per part and observed configuration on average), a discrete x
  (or one of few values) is tested the same way (:meth:`CRTEngine._histogram`, issue 27):
  the histogram model of y given (x, z), one cell per level of x and stratum of z, refitted
  for each permutation of y within the strata of z (one permutation serving every x tested
  given that z). Its statistic ranks as the conditional G^2 / 2 (the within-strata
  between-cells sum of squares for a number y): the saturated model's likelihood ratio, with
  all the rows and one p-value, where the held-out design fitted 6 models and paid
  Bonferroni's 6. Exact: the conditional permutation test of a discrete z (Berrett et al.
  2020), whatever the law of x given z. 400 nulls each (tests/test_crt.py, x and y both
  depending on a 3 x 2-strata z, n = 300): 0.030 [0.017, 0.052] for a 3-class y, 0.033
  [0.019, 0.055] for a number y (Wilson 95%). On ALARM's HR (3,000 rows) the parent
  CATECHOL given the four children is a weak dependence, 0.0037 nats of conditional
  information (from 400,000 rows): its G^2 test had p = 0.11-0.64 on three 2,400-row
  subsamples, so that every calibrated test misses it at that size.
* The models are fitted on the distinct rows of the training part weighted by their counts
  where at most three quarters of its rows are distinct (:meth:`ModelSpec.fit
  <mbstat.ci.models.estimators.ModelSpec.fit>`, ``distinct=True``; issue 27): the same
  objective, so the same model up to the rounding of its sums, and still a model fitted on
  the training part alone, which is all the test's validity asks of it. Discrete data
  repeat rows: ALARM HR's shrink phase fits on 8-57% of them (fits 2.3x faster with the
  boosting rounds sent straight to XGBoost's C functions). A part whose tree model never
  splits on x is p = 1 without drawing (every draw would tie the data).
* One set of draws per conditioning set: the shuffles of x given z come from a stream keyed
  by z alone, so every x tested given the same z (a growth phase: z empty) meets the same
  draws, made once and kept.
* The early stop (:func:`early_draws`, :func:`sequential_pvalue`): a part whose first
  ``ceil(2 J / alpha) - 1`` draws (239 for J = 6 parts at alpha 0.05) are all less extreme
  than the data stops there with p = alpha / (2 J), half of Bonferroni's level for a part;
  every other part's p-value gets alpha / (2 J) added, which keeps it valid (union bound).
  A clear member costs 239 draws per part instead of 1,000; a part then rejects at alpha
  when its p-value without the shift is at most alpha / (2 J). ``alpha`` is the test's (or
  the tester's); none where B is smaller than those draws. Test p-values of clear
  members are all J / (draws + 1) = alpha / 2: order them by ``increase``.
"""
from __future__ import annotations

import copy
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ... import _validation as v
from ...data.dataset import column_values, is_discrete
from ..result import NOTES, PERMUTATION, CIBatch, Query, as_matrix, plural, results_table
from ._shuffle import class_reductions, level_draw_sums, shuffled_sums, shuffles_within
from .base import ModelResult, ModelTest, check_ppi_args, resolve_query
from .estimators import infer_task, per_sample_loss
from .estimators import distinct_rows, weighted_rows as _weighted_rows
from .loco import LOCO_XGBOOST, LOCOEngine, check_folds, deal_folds

__all__ = ["CRT_XGBOOST", "CRTEngine", "CRTResult", "CRTTest", "cauchy_combination", "crt_test",
           "rank_pvalue", "sequential_pvalue"]

METHOD = "Holdout conditional randomization test"

#: Parts of each split (each serves once as the held-out part).
CRT_FOLDS = 2
#: XGBoost settings of the test unless ``model_params`` overrides them: LOCO's
#: (:data:`mbstat.ci.models.loco.LOCO_XGBOOST`: depth 3, rounds chosen by early stopping,
#: patience 5, on a fifth of each training part) at eta 0.5 instead of 0.3. The test is exact
#: whatever the model, which sets only its power; early stopping picks the rounds for the step
#: size, and at 0.5 it stops after 17 rounds on average where 0.3 took 28 (ALARM HR's PPFS:
#: fits a third cheaper, and so the held-out predictions), with the same power on the
#: calibration vignette's alternatives (40 data sets each, n = 500: 38 and 40 rejected at
#: 0.05, as at 0.3) and the same selections on the three cases of ``benchmarks/ppfs.py``
#: (issue 27).
CRT_XGBOOST = MappingProxyType({**LOCO_XGBOOST, "learning_rate": 0.5})
#: Draws of x given z per part (a part's smallest p-value is about 1 / (B + 1)).
B_DRAWS = 1000
#: Discrete z: x is shuffled within the strata of z when the held-out parts hold this many
#: rows per observed configuration on average, else drawn from a model of x given z.
STRATUM_ROWS = 10
#: A part's draws stop at the draw that is the H-th with a held-out loss at most the data's
#: (Besag & Clifford's 1991 sequential p-value, H / draws): a part far from significance
#: costs tens of draws, not B.
SEQUENTIAL_EXTREMES = 10


def histogram_reductions(cells, n_classes: int):
    """``reduction(y)``: for each column of ``cells`` (n, p; cell codes 0..), the in-sample
    loss reduction of the histogram model of y (the class frequencies, or the mean, in each
    cell) against the constant model: for classes (``n_classes`` >= 2) the log-likelihood
    ratio sum n_bc log(n n_bc / (n_b n_c)) = G^2 / 2, else the between-cells sum of squares
    sum n_b (mean_b - mean)^2. All columns in one pass (one bincount)."""
    n, p = cells.shape
    sizes = cells.max(axis=0) + 1
    starts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.intp)
    keys = cells + starts[None, :]
    total = int(sizes.sum())
    if 2 <= n_classes < 8:  # compiled, the same sums (class sums in numpy's order below 8)
        flat = np.ascontiguousarray(keys * n_classes, dtype=np.int64)
        with np.errstate(divide="ignore"):  # log 0 = -inf: never read (an empty cell is 0)
            logs = np.log(np.arange(n + 1, dtype=np.int64))  # numpy's log of each count
        starts64, log_n = starts.astype(np.int64), math.log(n)

        def reduction(y):
            klass = np.log(np.maximum(np.bincount(y, minlength=n_classes), 1))
            return class_reductions(flat, np.asarray(y, dtype=np.int64), n_classes, total,
                                    starts64, logs, klass, log_n)
        return reduction
    if n_classes:
        return _class_reduction(keys, starts, total, n_classes)
    flat_keys = keys.ravel()
    cell = np.bincount(flat_keys, minlength=total)

    def reduction(y):
        sums = np.bincount(flat_keys, weights=np.repeat(y, p), minlength=total)
        with np.errstate(divide="ignore", invalid="ignore"):
            between = np.where(cell > 0, sums * sums / cell, 0.0)
        return np.add.reduceat(between, starts) - y.sum() ** 2 / n
    return reduction


def _class_reduction(keys, starts, total: int, n_classes: int):
    """:func:`histogram_reductions`' ``reduction(y)`` for classes in numpy (``keys`` (n, p)
    the rows' cells, column j's from ``starts[j]``, ``total`` cells): one bincount of cells x
    classes, the log terms with ``nan_to_num``, ``reduceat`` over each column's cells; the
    compiled :func:`~mbstat.ci.models._shuffle.class_reductions` gives the same bits below 8
    classes."""
    n = keys.shape[0]
    flat = keys * n_classes

    def reduction(y):
        counts = np.bincount((flat + y[:, None]).ravel(),
                             minlength=total * n_classes).reshape(total, n_classes)
        cell = counts.sum(axis=1, keepdims=True)
        klass = np.log(np.maximum(np.bincount(y, minlength=n_classes), 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = counts * (np.log(counts) - np.log(cell) - klass[None, :] + math.log(n))
        return np.add.reduceat(np.nan_to_num(terms).sum(axis=1), starts)
    return reduction


def early_draws(alpha: float, parts: int) -> int:
    """Draws after which a part with none as extreme as the data stops (the early stop):
    ``ceil(2 parts / alpha) - 1``, so that its p-value 1 / (draws + 1) = alpha / (2 parts)
    is half of Bonferroni's level for a part (239 for the default 6 parts at alpha 0.05).
    Every other part's p-value gets that much added (:func:`sequential_pvalue`)."""
    return max(1, math.ceil(2 * parts / alpha - 1e-9) - 1)

#: Relative distance within which a draw's held-out loss ties the data's.
TIES = 1e-12
#: The first chunk of such draws (doubling after each).
FIRST_DRAWS = 32
#: Quantile bins of a continuous x in the histogram model of y given x (z empty).
MARGINAL_BINS = 10
#: Rows predicted per model call when draws are predicted row by row.
_CHUNK_ROWS = 250_000
#: Feature sets whose fitted models an engine keeps.
_MODELS = 4
#: A tree model's held-out rows are predicted once per interval between its split points on
#: a continuous x when there are fewer intervals than this (and than draws).
_INTERVALS = 1024
#: A part's x is tabulated (predicted once per distinct value) up to this many values.
_TABULATE = 64
#: The htest note of the test's p-values (calibration "permutation": Monte Carlo, not asymptotic).
CRT_NOTES = {**NOTES, PERMUTATION: "p-value from B draws of x given z per held-out part (Monte "
                                   "Carlo rank of the held-out loss), Bonferroni over the parts"}


def cauchy_combination(pvalues):
    """Cauchy combination of dependent p-values (Liu & Xie 2020, Eq. 2 with equal weights):
    (statistic, p-value, log p-value)."""
    p = np.clip(np.asarray(pvalues, dtype=np.float64), 1e-300, 1.0)
    t = float(np.mean(np.tan((0.5 - p) * math.pi)))
    if t > 1e15:  # the tail 1 / (pi t), without the rounding of 0.5 - arctan
        logp = -math.log(math.pi * t)
    else:
        logp = math.log(max(0.5 - math.atan(t) / math.pi, 1e-300))
    return t, math.exp(logp), logp


def _tie_tolerance(observed: float) -> float:
    """Draws' losses within this of the data's are ties (a model that ignores x predicts
    alike up to rounding)."""
    return TIES * abs(observed)


def rank_pvalue(observed: float, null, u: float) -> float:
    """The randomization p-value of a held-out loss ``observed`` among the draws' losses
    ``null`` (small is extreme): ``(#{T_b < T0} + (1 - u) (1 + #{T_b = T0})) / (B + 1)``,
    ties (within :data:`TIES` of T0, relative: a model that ignores x) broken by ``u`` uniform on
    [0, 1) (numpy's ``random()``), so that the p-value is uniform under H0 and never 0."""
    null = np.asarray(null)
    tol = _tie_tolerance(observed)
    below = np.count_nonzero(null < observed - tol)
    ties = np.count_nonzero(np.abs(null - observed) <= tol)
    return (below + (1.0 - u) * (1 + ties)) / (len(null) + 1)


def check_repeats(repeats) -> int:
    return v.check_int("repeats", repeats, low=1)


class CRTEngine(LOCOEngine):
    """One data set and one target, ready for many holdout randomization tests.

    Parameters are those of :func:`crt_test`; ``categorical`` holds column positions.
    The splits (``repeats`` of ``folds`` parts) are dealt once and serve every test.
    """

    def __init__(self, dataset, target: int, *, model="xgboost", folds=CRT_FOLDS, repeats=3,
                 B=B_DRAWS, task="auto", seed=None, device="auto", n_jobs=1, parallel="auto",
                 model_params=None, categorical=(), alpha=0.05):
        if isinstance(model, str) and model == "xgboost":
            model_params = {**CRT_XGBOOST, **(model_params or {})}
        super().__init__(dataset, target, model=model, folds=folds, task=task, seed=seed,
                         device=device, n_jobs=n_jobs, parallel=parallel,
                         model_params=model_params, categorical=categorical)
        self.repeats, self.B = check_repeats(repeats), v.check_int("B", B, low=1)
        self.set_level(alpha)
        self.parts = [self.part] + [deal_folds(self.rng, self.y, self.folds, self.task)
                                    for _ in range(self.repeats - 1)]
        self.fit_seeds = self.rng.integers(0, 2**31 - 1, size=(self.repeats, self.folds))
        self.draw_seed = int(self.rng.integers(0, 2**63 - 1))
        named = set(int(c) for c in categorical)  # the model's categories are x's levels
        self.discrete = [is_discrete(dataset, j) or j in named for j in range(dataset.n_cols)]
        self._drawn_as_levels = {}  # continuous column -> drawn among its values?
        self._data = dataset  # the sampler's view (kinds, codes, numbers); kept when pickled
        self._models = OrderedDict()
        self._level_cache = {}  # data columns -> _levels(columns)
        #: Stop a test's parts at the first that reaches the least p-value a part can take
        #: (its early stop's); False draws every part (tests compare the two).
        self.staged = True
        #: None, or ``spare() -> int``: workers lent now on top of ``n_jobs`` (threads only;
        #: the results are the same whatever the workers, tests/test_crt.py).
        self.spare = None

    def set_level(self, alpha: float) -> None:
        """The level the early stop serves (:func:`early_draws`; none when B is smaller)."""
        self.alpha = v.check_alpha(alpha)
        early = early_draws(self.alpha, self.folds * self.repeats)
        self.early = early if early < self.B else 0  # 0: no early stop

    def test_many(self, xs, z=()):
        """Holdout randomization tests of each x (a tuple of data columns) given z.

        Returns a list of (smallest part p-value, p, log p, mean loss increase, part
        p-values).
        """
        z = tuple(sorted(int(c) for c in z))
        xs = [tuple(sorted(int(c) for c in x)) for x in xs]
        strata = self._histogram_strata(xs, z)
        if strata is not None:
            out = self._histogram(xs, z, strata)
            if self.progress is not None:
                self.progress(len(xs))
            return out
        out = []
        for x in xs:
            out.append(self._test(x, z))
            if self.progress is not None:
                self.progress(1)
        return out

    # ----------------------------------- z empty or discrete: histogram models, all x
    def _strata(self, z):
        """The stratum (0..G-1) of each row given the discrete columns z, where every z
        column is discrete and the rows hold at least :data:`STRATUM_ROWS` per part and
        observed configuration on average (an empty z: one stratum); else None."""
        if not all(self.discrete[j] for j in z):
            return None
        g, G = self._levels(z)[1:]
        return g if self._data.n_rows >= STRATUM_ROWS * self.folds * G else None

    def _histogram_strata(self, xs, z):
        """The strata of z when every x is tested by the histogram models
        (:meth:`_histogram`): each x a single column, and either z empty or each x
        discrete (or a few values, :meth:`_few_values`) given a stratified discrete z."""
        if not xs or any(len(x) != 1 for x in xs):
            return None
        if not z:
            return np.zeros(self._data.n_rows, dtype=np.intp)
        if not all(self.discrete[x[0]] or self._few_values(x[0]) for x in xs):
            return None
        return self._strata(z)

    def _bins(self, j: int) -> np.ndarray:
        """The cells of the histogram model of column j: its levels (discrete), else its
        :data:`MARGINAL_BINS`-quantile bins (fewer where values repeat)."""
        if self.discrete[j] and self._data.kinds[j] != "continuous":
            return np.unique(self._data.codes[:, j], return_inverse=True)[1].reshape(-1)
        values = column_values(self._data, [j])[:, 0]
        edges = np.unique(np.quantile(values, np.linspace(0, 1, MARGINAL_BINS + 1)[1:-1]))
        return np.searchsorted(edges, values, side="right")

    def _histogram(self, xs, z, strata) -> list:
        """Conditional randomization tests of each single column x against the target given
        a z that is empty or discrete with populated strata (``strata``, :meth:`_strata`),
        all at once (Candes et al. 2018, section 4.1, with the model refitted for every
        draw). The model of y given (x, z) is a histogram: a cell per level (or
        :data:`MARGINAL_BINS`-quantile bin) of x and stratum of z, with the class
        frequencies or the mean of y in each; the statistic is its in-sample loss reduction
        against the constant model (log-loss: G^2 / 2; squared error: the between-cells sum
        of squares), whose part due to z alone does not move under the draws, so that its
        rank is that of the conditional G^2 / 2 (or the within-strata between-cells sum of
        squares): the likelihood-ratio statistic of the saturated model. The draws permute
        y within the strata of z, one permutation serving every x: the same law of the
        statistic as x drawn given z by permuting x within the strata, the conditional
        permutation test of a discrete z (Berrett et al. 2020), exact whatever the law of
        x given z. Exact under H0 with the sequential and early stops
        (:func:`sequential_pvalue`, one part: no held-out parts)."""
        y = self.y
        n = len(y)
        classes = self.task == "classification"
        ys = y if classes else y.astype(np.float64)
        G = int(strata.max()) + 1 if len(strata) else 1
        if G > 1:
            cells = np.column_stack([np.unique(self._bins(x[0]) * G + strata,
                                               return_inverse=True)[1].reshape(-1)
                                     for x in xs])
            order = np.argsort(strata, kind="stable")
            sorted_strata = strata[order]
        else:
            cells = np.column_stack([self._bins(x[0]) for x in xs])
        reduction = histogram_reductions(cells, self.n_classes if classes else 0)
        observed = reduction(ys)
        # one stream per conditioning set (z = (): the marginal tests' stream)
        rng = np.random.default_rng([self.draw_seed, self.dataset_width, len(z), *z])
        early = early_draws(self.alpha, 1)
        early = early if early < self.B else 0
        null = np.zeros((self.B, len(xs)))
        tol = TIES * np.abs(observed)
        extreme = np.zeros(len(xs), dtype=np.int64)
        made = np.zeros(len(xs), dtype=np.intp)  # draws made for each x (until its stop)
        open_ = np.ones(len(xs), dtype=bool)
        active, reduce = np.arange(len(xs)), reduction  # the columns the histograms refit
        done = 0
        while done < self.B:  # until every x has met a stop
            if G > 1:  # within strata: rows sorted by stratum, then by a random key
                perm = np.empty(n, dtype=np.intp)
                perm[order] = order[_within_strata(sorted_strata, rng.random(n))]
            else:
                perm = rng.permutation(n)
            if np.count_nonzero(open_) <= 3 * len(active) // 4:  # refit the open x only
                active = np.flatnonzero(open_)
                reduce = histogram_reductions(cells[:, active],
                                              self.n_classes if classes else 0)
            null[done, active] = reduce(ys[perm])
            made[open_] = done + 1
            extreme[active] += null[done, active] >= observed[active] - tol[active]
            done += 1
            open_ &= extreme < SEQUENTIAL_EXTREMES
            if early and done == early:
                idx = np.flatnonzero(open_)
                open_[idx] = (null[:early, idx] >= observed[idx] - tol[idx]).any(axis=0)
            if not open_.any():
                break
        u = rng.random(len(xs))
        out = []
        for j in range(len(xs)):  # each x's p-value and increase from its own draws
            p = sequential_pvalue(-observed[j], -null[:made[j], j], u[j], early)
            increase = (observed[j] - float(null[:made[j], j].mean())) / n
            out.append((p, p, math.log(p), increase, np.array([p])))
        return out

    # ---------------------------------------------------------------- one test
    def _test(self, x, z):
        features = tuple(sorted(set(x) | set(z)))
        cols = np.concatenate([self.groups[c] for c in features])
        X = np.ascontiguousarray(self.X[:, cols])
        types = [self.types[c] for c in cols]
        types = types if "c" in types else None
        xpos = np.flatnonzero(np.isin(cols, np.concatenate([self.groups[c] for c in x])))
        rng = np.random.default_rng([self.draw_seed, *x, self.dataset_width, *z])
        # shuffles of x given z come from a stream of z alone: one set of draws per
        # conditioning set and part, the same for every x tested given that z
        shared = np.random.default_rng([self.draw_seed, self.dataset_width, len(z), *z])
        draw = self._sampler(x, z, X[:, xpos])
        models = self._models_of(features)
        # the least p-value a part can take: its early stop's (every other part's is larger)
        clear = 1.0 / (self.early + 1) if self.early else -1.0
        done = []

        xcols = np.concatenate([self.groups[c] for c in x])
        layouts = {features: (X, xpos)}

        def layout(columns):  # the model matrix of the columns a (carried) model was fitted on
            hit = layouts.get(columns)
            if hit is None:
                c = np.concatenate([self.groups[j] for j in columns])
                hit = layouts[columns] = (np.ascontiguousarray(self.X[:, c]),
                                          np.flatnonzero(np.isin(c, xcols)))
            return hit

        def task(r, k):  # drawn here, in part order, from one stream: the same whatever n_jobs
            test = np.flatnonzero(self.parts[r] == k)
            drawn = draw(test, self.B, rng)
            own = int(rng.integers(0, 2**31 - 1))
            common = int(shared.integers(0, 2**31 - 1))
            seed = common if np.ndim(drawn[1]) == 1 else own
            fitted, columns = models[r, k]
            Xl, xl = layout(columns)
            return (self.learner, self.task, self.B, fitted, Xl[test], xl,
                    self.y[test], drawn, seed, rng.random(), self.early)

        added = []  # the models this test put in: fitted or carried
        for r in range(self.repeats):  # a split at a time, its parts in waves of n_jobs
            lo = 0
            while lo < self.folds:
                jobs = self._jobs()
                keys = [(r, k) for k in range(lo, min(lo + jobs, self.folds))]
                lo += len(keys)
                added += self._fit(features, X, types, models, keys, jobs)
                done += self._map(_part_pvalue, [task(*key) for key in keys], jobs)
                if self.staged and any(p <= clear for p, _ in done):
                    break
            if self.staged and any(p <= clear for p, _ in done):  # p is J / (early + 1)
                done = done[:next(i for i, (p, _) in enumerate(done) if p <= clear) + 1]
                break
        # a wave's models after the part that ended the test leave, as if fitted one part at
        # a time: the models kept (and so those carried later) are the same whatever n_jobs
        used = {(r, k) for r in range(self.repeats) for k in range(self.folds)
                if r * self.folds + k < len(done)}
        for key in added:
            if key not in used:
                del models[key]
        J = self.repeats * self.folds
        pvalues = np.full(J, np.nan)
        pvalues[:len(done)] = [p for p, _ in done]
        least = float(np.nanmin(pvalues))
        p = min(1.0, J * least)
        increase = float(np.mean([d for _, d in done]))
        return least, p, math.log(p), increase, pvalues

    def _jobs(self) -> int:
        """Workers for the next wave: ``n_jobs``, plus those that :attr:`spare` lends now
        (workers of the caller's that are idle; ``ppfs`` lends a worker that has no fold
        left to the folds still running)."""
        return max(1, self.n_jobs + (self.spare() if self.spare is not None else 0))

    def _map(self, fn, tasks, jobs=None) -> list:
        """``fn(*task)`` of each task, on ``jobs`` (default ``n_jobs``) threads or processes
        (in order)."""
        jobs = self.n_jobs if jobs is None else jobs
        if jobs == 1 or len(tasks) == 1:
            return [fn(*t) for t in tasks]
        from joblib import Parallel, delayed

        backend = "threading" if self.parallel == "threads" else "loky"
        return Parallel(n_jobs=min(jobs, len(tasks)), backend=backend)(
            delayed(fn)(*t) for t in tasks)

    def _models_of(self, features: tuple) -> dict:
        """The fitted models on ``features`` so far, by (split, part): kept for the next tests
        on the same columns (a shrink phase tests every member in one set of models), and
        fitted as the tests need them (:meth:`_fit`)."""
        models = self._models.get(features)
        if models is None:
            models = self._models[features] = {}
            while len(self._models) > _MODELS:
                self._models.popitem(last=False)
        return models

    def _fit(self, features, X, types, models, keys, jobs=None) -> list:
        """The models of the (split, part) ``keys`` not yet in ``models``, as (model, the
        data columns it was fitted on): carried from a larger feature set where
        :meth:`_carried` finds one, else fitted. Returns the keys put in."""
        keys = [key for key in keys if key not in models]
        added = list(keys)
        for key in keys:
            hit = self._carried(features, key)
            if hit is not None:
                models[key] = hit
        keys = [key for key in keys if key not in models]
        if not keys:
            return added
        fits = self._map(self.learner.fit, [
            (X[self.parts[r] != k], self.labels[self.parts[r] != k], int(self.fit_seeds[r, k]),
             types, True) for r, k in keys], jobs)
        models.update((key, (fit, features)) for key, fit in zip(keys, fits))
        self.n_fits += len(keys)
        if self.device_used is None:
            self.device_used = self.learner.device_of(fits[0])
        return added

    def _carried(self, features: tuple, key):
        """The model of part ``key`` of a larger feature set kept, with its columns, when it
        splits on none of the columns that ``features`` lacks; else None (issue 27: the
        shrink phase refits only what a removal changes).

        XGBoost grows each tree greedily, the split of largest gain over every column, and the
        same rows, seed and validation rows make the same fit: a column it never split on
        changed no choice, so the fit on ``features`` (without it) is the same trees, node
        for node (tests/test_crt.py; fitted on the distinct rows, up to the rounding of the
        weighted sums, since fewer columns merge more rows). Whatever a refit would give,
        the model reads those columns and ignores them: its predictions are a function of
        ``features``, fitted on the training part only, which is all the test's validity
        needs. A column removed from the blanket (independent of y given the rest)
        is often never split on: on ALARM HR, 2-5 of 17 columns per part."""
        if self.learner.kind != "xgboost" or self.learner.device != "cpu":
            return None
        wanted = set(features)
        for other, models in reversed(self._models.items()):  # the latest sets first
            if other == features or not wanted < set(other) or key not in models:
                continue
            fitted, columns = models[key]
            extra = [j for j in columns if j not in wanted]
            cols = np.concatenate([self.groups[j] for j in columns])
            unused = np.flatnonzero(np.isin(cols, np.concatenate([self.groups[j]
                                                                  for j in extra])))
            if not np.isin(unused, _split_columns(fitted)).any():
                return fitted, columns
        return None

    @property
    def dataset_width(self) -> int:
        return len(self.groups)

    def _losses(self, fitted, Xt, xpos, yt, drawn, seed: int):
        """Held-out loss sums: observed, and (B,) with x replaced by the draws ``drawn``
        (:meth:`_sampler`); see :func:`_held_out_losses`."""
        return _held_out_losses(self.learner, self.task, self.B, fitted, Xt, xpos, yt, drawn,
                                seed, self.early)

    def _sampler(self, x, z, xblock):
        """``draw(test_rows, B, rng) -> (values, which[, base])``: x~ of the held-out row i in
        draw b is ``values[which[b, i]]``; or, for shuffles within strata, ``which`` (m,)
        holds the held-out rows' strata and x~ of row i is ``values[j]`` (plus ``base[i]``
        where given) for the row j it takes in the shuffle (see the module notes)."""
        ds = self._data
        g = self._strata(z)
        if g is not None:
            return lambda test, B, rng: (xblock[test], g[test])
        design = self._design(z)
        if all(self.discrete[j] or self._few_values(j) for j in x):
            # the joint levels as the model reads them (its encoded columns), so that a draw
            # is always one of them, whatever the encoding (one-hot, codes, numbers)
            levels, code, G = self._levels(tuple(x))  # np.unique(xblock, axis=0)'s, kept
            if G < 2:
                return lambda test, B, rng: (xblock[test], np.zeros((B, len(test)), np.intp))
            from sklearn import config_context
            from sklearn.linear_model import LogisticRegression

            # Newton steps on the Cholesky factor (the design is narrow, the rows many): the
            # same fit as lbfgs in a tenth of its time (0.011 s against 0.14 s on 3,000 rows);
            # on one BLAS thread: its small products lose to the threads' start-up and, on a
            # busy machine, to their waits (2,400 x 41, 3 levels, 2 cores at load 14: 0.15 s
            # against 2.0 s with OpenBLAS's 2 threads). On the distinct rows of (z, x),
            # weighted by their counts: the same likelihood (a discrete z repeats rows:
            # ALARM's shrink tests 2-17x fewer rows), and the probabilities of each distinct
            # z, read back by row
            rows, counts, _ = _design_rows(design, code)
            zrows, _, z_of = _design_rows(design)
            with _one_blas_thread(), config_context(skip_parameter_validation=True,
                                                    assume_finite=True):
                model = LogisticRegression(C=100.0, solver="newton-cholesky",
                                           fit_intercept=False, max_iter=100).fit(
                    rows[:, :-1], rows[:, -1].astype(np.intp), sample_weight=counts)
                prob = np.zeros((len(zrows), G))
                prob[:, model.classes_] = model.predict_proba(zrows)
            prob = prob[z_of]

            def draw(test, B, rng):  # drawn when read, as far as the stops read
                return levels, _LevelDraws(np.cumsum(prob[test], axis=1), B,
                                           int(rng.integers(0, 2**63 - 1)))
            return draw
        if any(self.discrete[j] or self._few_values(j) for j in x):
            raise ValueError("the conditional randomization test draws x given a continuous z "
                             "for x all continuous or all discrete; test the columns of a "
                             "mixed x one by one")
        values = column_values(ds, x)
        coef = np.linalg.lstsq(design, values, rcond=None)[0]
        fitted_x = design @ coef
        resid = values - fitted_x

        def draw(test, B, rng):  # fitted + the part's residuals shuffled (one stratum)
            return (resid[test].astype(xblock.dtype), np.zeros(len(test), dtype=np.intp),
                    fitted_x[test].astype(xblock.dtype))
        return draw

    def __getstate__(self):
        state = super().__getstate__()
        state["_data"], state["_models"], state["_level_cache"] = self._data, OrderedDict(), {}
        state["spare"] = None
        return state

    def _levels(self, cols) -> tuple:
        """The distinct rows of the model columns of the discrete data columns ``cols``
        (columns named in ``categorical`` included) and each row's code 0..G-1: (levels,
        codes (n,), G)."""
        n = self.X.shape[0]
        if not cols:
            return np.zeros((1, 0), self.X.dtype), np.zeros(n, dtype=np.intp), 1
        key = tuple(int(j) for j in cols)
        hit = self._level_cache.get(key)
        if hit is not None:
            return hit
        block = self.X[:, np.concatenate([self.groups[j] for j in cols])]
        # the rows' ranks in lexicographic order from one integer key per row (each model
        # column's value ranks, mixed radix, the first column most significant): the same
        # levels and codes as np.unique(block, axis=0), without its sort of row records
        key_of_row = np.zeros(n, dtype=np.int64)
        radix = 1
        for c in range(block.shape[1]):
            ranks = np.unique(block[:, c], return_inverse=True)[1].reshape(-1)
            size = int(ranks.max()) + 1
            if radix * size >= 2**62:  # too many combinations for one integer key
                key_of_row = None
                break
            key_of_row = key_of_row * size + ranks
            radix *= size
        if key_of_row is None:
            levels, codes = np.unique(block, axis=0, return_inverse=True)
        else:
            first, codes = np.unique(key_of_row, return_index=True, return_inverse=True)[1:]
            levels = block[first]
        hit = (levels, codes.reshape(-1).astype(np.intp), len(levels))
        if len(self._level_cache) >= _MODELS * 16:
            self._level_cache.pop(next(iter(self._level_cache)))
        self._level_cache[key] = hit
        return hit

    def _few_values(self, j: int) -> bool:
        """Whether x~ of the continuous column j is drawn among its values, as a discrete x's:
        two values, or whole numbers that ``task="auto"`` would read as classes
        (:func:`mbstat.ci.models.estimators.infer_task`). The linear model's draws would leave their support
        (a 0/1 float x given a continuous z: 38% of 60 nulls rejected at 0.05)."""
        hit = self._drawn_as_levels.get(j)
        if hit is None:
            values = self._data.values[:, j]
            hit = len(np.unique(values)) <= 2 or infer_task(values) == "classification"
            self._drawn_as_levels[j] = hit
        return hit

    def _design(self, z) -> np.ndarray:
        """The design of x given z (n, p): intercept, continuous z standardized, treatment
        dummies of each discrete z (or named categorical) column, first level the reference."""
        cont = [j for j in z if not self.discrete[j]]
        vals = column_values(self._data, cont)
        if vals.shape[1]:
            sd = vals.std(axis=0)
            vals = (vals - vals.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        blocks = [np.ones((self.X.shape[0], 1)), vals]
        for j in z:
            if self.discrete[j]:
                codes, G = self._levels((j,))[1:]
                blocks.append((codes[:, None] == np.arange(1, G)[None, :]).astype(np.float64))
        return np.hstack(blocks)


def _design_rows(design, code=None) -> tuple:
    """:func:`~mbstat.ci.models.estimators.weighted_rows` of ``design`` (or of ``design`` with
    the integer ``code`` as a last column, as float64), the same three arrays, faster where
    every entry of the design is 0.0 or 1.0 (intercept and dummies of a discrete z): the rows'
    bytes then sort as their 0/1 entries do, column by column (0.0's bytes are below 1.0's at
    the first that differs), so the rows' bits packed (first column first), then the code's
    rank among its values' bytes, sort alike: one integer per row, where ``np.unique`` of
    the rows' bytes sorts 8 bytes per entry."""
    def full():
        return design if code is None else np.column_stack([design, code])
    if design.dtype != np.float64 or not design.shape[1] or np.signbit(design).any():
        return _weighted_rows(full())
    one = design == 1.0
    if np.count_nonzero(one) + np.count_nonzero(design == 0.0) != design.size:
        return _weighted_rows(full())
    packed = np.packbits(one, axis=1)  # (n, bytes), the first column the top bit
    if code is not None:
        values = np.unique(code)
        if len(values) > 256:
            return _weighted_rows(full())
        as_bytes = np.ascontiguousarray(values.astype(np.float64)).view(
            np.dtype((np.void, 8)))
        rank = np.empty(len(values), dtype=np.uint8)
        rank[np.argsort(as_bytes, kind="stable")] = np.arange(len(values))
        packed = np.column_stack([packed, rank[np.searchsorted(values, code)]])
    if packed.shape[1] > 8:
        return _weighted_rows(full())
    wide = np.zeros((len(packed), 8), dtype=np.uint8)
    wide[:, :packed.shape[1]] = packed
    key = wide.view(">u8").reshape(-1)  # big-endian: bytes compare as the integers
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True,
                                          return_counts=True)
    rows = design[first] if code is None else np.column_stack([design[first], code[first]])
    return rows, counts.astype(np.float64), inverse.reshape(-1)


def _one_blas_thread():
    """A context in which BLAS runs on one thread, from one threadpoolctl controller made on
    first use (making one scans the loaded libraries: 5 ms, as much as a sampler's fit)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


_CONTROLLER = None


class _LevelDraws:
    """The draws of a discrete x given z, ``which`` (B, m): the level of held-out row i in
    draw b, by inverse CDF from the cumulative probabilities ``cum`` (m, levels), one level
    at a time. Drawn when read (by a slice of draws, as the sequential and early stops read
    them; or whole, ``np.asarray``), in blocks of :data:`FIRST_DRAWS` draws from streams
    keyed by (``seed``, block): a draw is the same however the draws are read, and a part
    that stops after 39 draws draws 39 rows' worth, not B (issue 27: drawing all B took a
    fifth of ALARM HR's time)."""

    ndim = 2

    def __init__(self, cum, B: int, seed: int):
        self.cum, self.seed = cum, int(seed)
        self.shape = (int(B), cum.shape[0])

    def __len__(self) -> int:
        return self.shape[0]

    def _uniforms(self, k: int) -> np.ndarray:
        rows = min(FIRST_DRAWS, self.shape[0] - k * FIRST_DRAWS)
        return np.random.default_rng([self.seed, k]).random((rows, self.shape[1]))

    def _block(self, k: int) -> np.ndarray:
        u = self._uniforms(k)
        which = np.zeros(u.shape, dtype=np.intp)
        for g in range(self.cum.shape[1] - 1):  # the last level takes what is left (rounding)
            which += u > self.cum[None, :, g]
        return which

    def __getitem__(self, key):
        rows, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if not isinstance(rows, slice):
            raise TypeError("the draws are read by a slice of draws")
        lo, hi, step = rows.indices(self.shape[0])
        if step != 1:
            raise TypeError("the draws are read by a slice of consecutive draws")
        if hi <= lo:
            out = np.zeros((0, self.shape[1]), dtype=np.intp)
        else:
            first = lo // FIRST_DRAWS
            blocks = [self._block(k) for k in range(first, (hi - 1) // FIRST_DRAWS + 1)]
            out = np.concatenate(blocks)[lo - first * FIRST_DRAWS:hi - first * FIRST_DRAWS]
        return out[(slice(None), *rest)] if rest else out

    def __array__(self, dtype=None, copy=None):
        out = self[:]
        return out if dtype is None else out.astype(dtype)

    def sums(self, lo: int, size: int, table) -> np.ndarray:
        """``table[which[b, i], i].sum()`` for the draws b = lo .. lo + size - 1 (``table``
        (levels, m) float64 C-contiguous: each row's loss at each level), the draws read and
        summed in one compiled pass (:func:`mbstat.ci.models._shuffle.level_draw_sums`, the
        same sums as numpy's, bit for bit) without the (size, m) table of levels."""
        hi = min(lo + size, self.shape[0])
        if hi <= lo:
            return np.zeros(0)
        first = lo // FIRST_DRAWS
        out = np.concatenate([level_draw_sums(self._uniforms(k), self.cum, table)
                              for k in range(first, (hi - 1) // FIRST_DRAWS + 1)])
        return out[lo - first * FIRST_DRAWS:hi - first * FIRST_DRAWS]


def _split_points(learner, fitted, col: int):
    """The thresholds at which a fitted tree model splits model column ``col`` (sorted,
    float32 for XGBoost, float64 for a scikit-learn tree), with the side a value equal to
    one goes ("right": XGBoost's ``x < t`` goes left; "left": scikit-learn's ``x <= t``);
    None for other models or a categorical split on the column. Between two thresholds the
    model's prediction does not depend on the column's value."""
    if learner.kind == "xgboost":
        if learner.device != "cpu":
            return None
        index, condition, kind = _xgboost_splits(fitted)
        on = index == col
        if np.any(kind[on] != 0):
            return None  # a categorical split: not thresholds
        return np.unique(condition[on]), "right"
    if learner.kind == "tree":
        tree = fitted.tree_
        return np.unique(tree.threshold[tree.feature == col]).astype(np.float64), "left"
    return None


def _ignores(learner, fitted, xpos) -> bool:
    """Whether a fitted tree model (XGBoost on the CPU, a scikit-learn tree) never splits on
    the model columns ``xpos``: its predictions do not depend on them."""
    if learner.kind == "xgboost" and learner.device == "cpu":
        used = _split_columns(fitted)
    elif learner.kind == "tree":
        used = fitted.tree_.feature
    else:
        return False
    return not np.isin(xpos, used).any()


def _used_columns(learner, fitted, width: int) -> np.ndarray:
    """The model columns whose values a fitted model's predictions read: those a tree model
    (XGBoost on the CPU, a scikit-learn tree) splits on; every column for other models."""
    if learner.kind == "xgboost" and learner.device == "cpu":
        return _split_columns(fitted)
    if learner.kind == "tree":
        used = fitted.tree_.feature
        return np.unique(used[used >= 0])
    return np.arange(width)


def _split_columns(booster) -> np.ndarray:
    """The model columns a booster splits on, from XGBoost's split counts (``get_score``,
    "weight": 0.1 ms, where reading the trees' JSON costs 3 ms or more), kept on the booster
    (a shrink phase asks each model for them at every test and removal)."""
    hit = booster.__dict__.get(_SPLIT_COLUMNS)
    if hit is not None:
        return hit
    names = booster.get_score(importance_type="weight")
    if all(k[:1] == "f" and k[1:].isdigit() for k in names):
        hit = np.array(sorted(int(k[1:]) for k in names), dtype=np.int64)
    else:
        hit = np.unique(_xgboost_splits(booster)[0])  # named columns: read the trees
    hit.flags.writeable = False
    booster.__dict__[_SPLIT_COLUMNS] = hit
    return hit


_SPLIT_COLUMNS = "_mbstat_split_columns"


def _xgboost_splits(booster) -> tuple:
    """The inner nodes of a booster's trees: (column, threshold float32, split type), read
    once from its JSON and kept with the booster (the models of a shrink phase serve every
    member)."""
    hit = _SPLITS.get(id(booster))
    if hit is not None and hit[0] is booster:
        return hit[1]
    import json

    trees = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]
    index, condition, kind = [], [], []
    for tree in trees["trees"]:
        inner = np.asarray(tree["left_children"]) != -1
        index.append(np.asarray(tree["split_indices"])[inner])
        condition.append(np.asarray(tree["split_conditions"], dtype=np.float32)[inner])
        kind.append(np.asarray(tree["split_type"])[inner])
    out = tuple(np.concatenate(a) if a else np.zeros(0) for a in (index, condition, kind))
    with _SHUFFLE_LOCK:
        _SPLITS[id(booster)] = (booster, out)
        while len(_SPLITS) > 4 * _MODELS:
            _SPLITS.popitem(last=False)
    return out


_SPLITS: OrderedDict = OrderedDict()


def _interval_values(points, side: str, dtype):
    """One value (of ``dtype``) inside each interval that the thresholds ``points`` make, in
    order, and a function giving the interval of values."""
    if side == "right":  # XGBoost: t_j <= x < t_j+1 is interval j (#thresholds <= x)
        t = points.astype(dtype)
        reps = np.concatenate([[np.nextafter(t[0], dtype(-np.inf))], t]) if len(t) else \
            np.zeros(1, dtype)

        def interval(v):
            return np.searchsorted(t, v.astype(dtype), side="right")
    else:  # scikit-learn: t_j < x <= t_j+1 is interval j (#thresholds < x), in float64
        t = points
        upper = t.astype(dtype)
        upper = np.where(upper.astype(np.float64) > t, np.nextafter(upper, dtype(-np.inf)),
                         upper)
        last = np.nextafter(dtype(t[-1]), dtype(np.inf)) if len(t) else dtype(0)
        while len(t) and np.float64(last) <= t[-1]:
            last = np.nextafter(last, dtype(np.inf))
        reps = np.concatenate([upper, [last]]).astype(dtype)

        def interval(v):
            return np.searchsorted(t, v.astype(np.float64), side="left")
    return reps.astype(dtype), interval


def _held_out_losses(learner, task, B: int, fitted, Xt, xpos, yt, drawn, seed: int,
                     early: int = 0):
    """Held-out loss sums of a fitted model on a part's rows ``Xt``: observed, and (B,) with
    x (the columns ``xpos``) replaced by the draws ``drawn`` (:meth:`CRTEngine._sampler`;
    shuffles within strata are drawn here from ``seed``). Drawing stops at the
    :data:`SEQUENTIAL_EXTREMES`-th draw as extreme as the data, or after ``early`` draws
    (0: never) when none is."""
    m = len(yt)
    values, which, base = (*drawn, None)[:3]
    uniq, inverse = _distinct_rows(values) if base is None else (None, None)
    if uniq is not None:  # few values: predict each held-out row once per value
        loss = _value_losses(learner, task, fitted, Xt, xpos, yt, uniq)
        if which.ndim == 1:  # shuffles within strata, summed as they are drawn

            order, starts = _strata_order(which)
            observed = float(loss[0].sum())
            null, done = shuffled_sums(order, starts, inverse.astype(np.int64), loss[1:], B,
                                       seed, observed + _tie_tolerance(observed),
                                       SEQUENTIAL_EXTREMES)
            return observed, null[:done]
        table = np.ascontiguousarray(loss[1:][inverse], dtype=np.float64)
        if isinstance(which, _LevelDraws):  # drawn and summed in one compiled pass
            return _sequential_sums(B, float(loss[0].sum()), early, B,
                                    lambda lo, size: which.sums(lo, size, table))
        # the loss of row i at level g of the draws, flat: one gather per chunk of draws
        flat, offsets = table.ravel(), np.arange(m)
        return _sequential_sums(B, float(loss[0].sum()), early, B, lambda lo, size: np.take(
            flat, which[lo:lo + size] * m + offsets).sum(axis=1))
    if which.ndim == 1:  # shuffles within strata, drawn chunk by chunk (from ``seed``)
        order, starts = _strata_order(which)
    pred = learner.predict(fitted, Xt)
    observed = float(per_sample_loss(pred, yt, task).sum())
    # a shuffle within the strata of z (z the model's other columns, equal within a stratum)
    # gives row i the prediction of the row whose x it takes: shuffle the predictions
    shuffle_predictions = which.ndim == 1 and base is None
    if shuffle_predictions:  # the loss of row i predicted as row j: (m,) or (m, classes)
        pred = pred.get() if hasattr(pred, "get") else np.asarray(pred)
        if task == "regression":
            own_loss = pred.astype(np.float64)[None, :]  # (y_i - pred_j)^2 below
        else:
            own_loss = np.column_stack([per_sample_loss(pred, np.full(m, c), task)
                                        for c in range(pred.shape[1])])
    # a tree model's prediction of a row moves only when x crosses a split point: predict
    # each row once per interval between them and read the draws from that table
    table = None
    if not shuffle_predictions and len(xpos) == 1:
        found = _split_points(learner, fitted, int(xpos[0]))
        if found is not None and len(found[0]) + 1 < min(B, _INTERVALS):
            reps, interval = _interval_values(*found, Xt.dtype.type)
            Xu = np.repeat(Xt[None], len(reps), axis=0)
            Xu[:, :, xpos[0]] = reps[:, None]
            table = per_sample_loss(_predict_distinct(learner, fitted,
                                                      Xu.reshape(-1, Xt.shape[1])),
                                    np.tile(yt, len(reps)), task).reshape(len(reps), m)
            table = table.get() if hasattr(table, "get") else np.asarray(table)
            rows = np.arange(m)[None, :]
    def chunk(lo, size):  # the held-out loss sums of draws lo .. lo + size - 1
        w = _shuffle_chunk(order, starts, seed, lo, size) if which.ndim == 1 else \
            which[lo:lo + size]
        if shuffle_predictions:
            if task == "regression":
                diff = own_loss[0][w] - yt[None, :]
                loss = diff * diff
            else:
                loss = own_loss[w, yt[None, :].astype(np.intp)]
        elif table is not None:
            v = values[w][..., 0] if base is None else base[None, :, 0] + values[w][..., 0]
            loss = table[interval(v), rows]
        else:  # each draw predicted row by row
            Xb = np.repeat(Xt[None], len(w), axis=0)
            Xb[:, :, xpos] = values[w] if base is None else base[None] + values[w]
            loss = per_sample_loss(learner.predict(fitted, Xb.reshape(-1, Xt.shape[1])),
                                   np.tile(yt, len(w)), task)
        return loss.reshape(len(w), m).sum(axis=1)
    return _sequential_sums(B, observed, early, max(1, _CHUNK_ROWS // max(m, 1)), chunk)


def _predict_distinct(learner, fitted, X):
    """The model's predictions of the rows of ``X``, each distinct row (byte for byte)
    predicted once: a fitted model predicts a row alone, so a repeated row's prediction is
    its first's. Discrete data repeat rows (ALARM HR's held-out rows at each value of x:
    a third distinct), and a prediction costs a pass through every tree."""
    if not isinstance(X, np.ndarray) or X.ndim != 2 or len(X) < 2:
        return learner.predict(fitted, X)
    distinct, _, inverse = distinct_rows(X)
    if len(distinct) == len(X):
        return learner.predict(fitted, X)
    pred = learner.predict(fitted, distinct)
    pred = pred.get() if hasattr(pred, "get") else np.asarray(pred)
    return pred[inverse]


def _value_losses(learner, task, fitted, Xt, xpos, yt, uniq) -> np.ndarray:
    """(1 + len(uniq), m) per-row held-out losses: with the observed x, then with x set to
    each of the values ``uniq``. The model predicts a row alone, so the rows to predict are
    the distinct rows of the other columns (z) with x set to each value, once each (the
    observed row of each row among them, where its x is one of ``uniq``): the distinct z
    rows are found once, on m rows, not among the m len(uniq) rows made, and only on the
    columns that a tree model splits on (its prediction reads no other: rows alike there are
    predicted alike; a sixth to a half of ALARM HR's held-out rows are distinct there)."""
    m = len(yt)
    own = Xt[:, xpos]
    level = np.full(m, -1, dtype=np.intp)  # the value of uniq each row's x holds
    for g, u in enumerate(uniq):
        level[(own == u[None, :]).all(axis=1)] = g
    if m == 0 or (level < 0).any():
        return _moved_losses(learner, task, fitted, Xt, xpos, yt, uniq)
    rest = np.zeros(Xt.shape[1], dtype=bool)
    rest[_used_columns(learner, fitted, Xt.shape[1])] = True
    rest[xpos] = False
    if rest.any():
        zi = distinct_rows(Xt[:, rest])[2]
        first = np.unique(zi, return_index=True)[1]  # a row of each distinct z, in order
    else:
        zi, first = np.zeros(m, dtype=np.intp), np.zeros(1, dtype=np.intp)
    L, D = len(uniq), len(first)
    Xu = np.repeat(Xt[first][None], L, axis=0)  # (values, distinct z, columns)
    Xu[:, :, xpos] = uniq[:, None, :]
    pred = learner.predict(fitted, Xu.reshape(L * D, Xt.shape[1]))
    pred = pred.get() if hasattr(pred, "get") else np.asarray(pred)
    pred = pred.reshape(L, D, *pred.shape[1:])[:, zi]  # (values, m[, classes])
    found = per_sample_loss(pred.reshape(L * m, *pred.shape[2:]), np.tile(yt, L), task)
    found = np.asarray(found).reshape(L, m)
    return np.concatenate([found[level, np.arange(m)][None], found])


def _moved_losses(learner, task, fitted, Xt, xpos, yt, uniq) -> np.ndarray:
    """:func:`_value_losses` where a row's x is none of ``uniq``: the observed rows, and the
    rows each value moves, predicted in one call (each distinct row once)."""
    m = len(yt)
    own = Xt[:, xpos]
    moved = [np.flatnonzero((own != u[None, :]).any(axis=1)) for u in uniq]
    counts = np.array([len(r) for r in moved], dtype=np.intp)
    rows = np.concatenate([np.arange(m), *moved])
    Xu = Xt[rows]  # a copy: the observed rows, then the rows each value moves
    Xu[m:, xpos] = np.repeat(uniq, counts, axis=0)
    found = per_sample_loss(_predict_distinct(learner, fitted, Xu), yt[rows], task)
    found = found.get() if hasattr(found, "get") else np.asarray(found)
    loss = np.repeat(found[None, :m], len(uniq) + 1, axis=0)
    ends = m + np.cumsum(counts)
    for k, r in enumerate(moved):
        loss[k + 1, r] = found[ends[k] - counts[k]:ends[k]]
    return loss


def _sequential_sums(B: int, observed: float, early: int, most: int, chunk) -> tuple:
    """(observed, the held-out loss sums of the draws made): ``chunk(lo, size)`` gives those
    of draws lo .. lo + size - 1, asked in chunks of :data:`FIRST_DRAWS` doubling (at most
    ``most``), until the :data:`SEQUENTIAL_EXTREMES`-th draw as extreme as the data (loss at
    most its, ties included: Besag & Clifford 1991), or the ``early``-th draw (0: never)
    when none is, or B draws: the draws that :func:`sequential_pvalue` reads."""
    null = np.empty(B)
    tol = _tie_tolerance(observed)
    lo, step, extreme = 0, FIRST_DRAWS, 0
    while lo < B:
        size = min(step, most, B - lo)
        if early and lo < early:
            size = min(size, early - lo)
        null[lo:lo + size] = chunk(lo, size)
        hits = np.flatnonzero(null[lo:lo + size] <= observed + tol)
        if extreme + len(hits) >= SEQUENTIAL_EXTREMES:
            return observed, null[:lo + hits[SEQUENTIAL_EXTREMES - extreme - 1] + 1]
        extreme += len(hits)
        lo += size
        if early and lo == early and extreme == 0:  # clearly beyond the draws: stop early
            return observed, null[:lo]
        step *= 2
    return observed, null


def _part_pvalue(learner, task, B: int, fitted, Xt, xpos, yt, drawn, seed: int,
                 u: float, early: int = 0) -> tuple:
    """One held-out part: its p-value (:func:`sequential_pvalue`) and its mean loss increase
    per row under the draws. A tree model that never splits on x predicts alike whatever x:
    every draw ties the data, so the part stops at the :data:`SEQUENTIAL_EXTREMES`-th draw
    with p = 1 and no increase, which is returned without predicting or drawing (where B
    holds that many draws)."""
    if B >= SEQUENTIAL_EXTREMES and _ignores(learner, fitted, xpos):
        return 1.0, 0.0
    observed, null = _held_out_losses(learner, task, B, fitted, Xt, xpos, yt, drawn, seed,
                                      early)
    return (sequential_pvalue(observed, null, u, early),
            (float(null.mean()) - observed) / len(yt))


def sequential_pvalue(observed: float, null, u: float, early: int = 0) -> float:
    """The p-value of a part from the draws made (``null``, in the order drawn).

    * ``early`` > 0 (:func:`early_draws`, fewer than B) and none of the first ``early``
      draws as extreme as the data (loss at most the data's, ties included): c = 1 /
      (early + 1);
    * else, with h = :data:`SEQUENTIAL_EXTREMES` draws as extreme, Besag & Clifford's (1991)
      h / (draws up to the h-th), or else the randomized rank :func:`rank_pvalue` among the B
      draws; plus c when the early stop was possible.

    Valid whenever the two stops' p-values are: P(p <= t) <= P(early stop) + P(p' <= t - c)
    <= c + (t - c) = t, since P(early stop) = c under H0 (the data's loss the smallest of
    early + 1 exchangeable ones; ties count as extreme).
    """
    null = np.asarray(null)
    extreme = null <= observed + _tie_tolerance(observed)
    shift = 0.0
    if early:
        shift = 1.0 / (early + 1)
        if len(null) >= early and not extreme[:early].any():
            return shift
    hits = np.flatnonzero(extreme)
    if len(hits) >= SEQUENTIAL_EXTREMES:  # the H-th draw as extreme as the data: H / draws
        return min(1.0, SEQUENTIAL_EXTREMES / (hits[SEQUENTIAL_EXTREMES - 1] + 1) + shift)
    return min(1.0, rank_pvalue(observed, null, u) + shift)


def _shuffle_chunk(order, starts, seed: int, lo: int, size: int) -> np.ndarray:
    """Draws ``lo .. lo + size - 1`` of the shuffles within strata from ``seed`` (``which``
    (size, m), :func:`mbstat.ci.tables._shuffle.shuffles_within`), kept for the next test that asks
    for the same ones: the tests of one conditioning set share their draws (same seed)."""

    key = (int(seed), int(lo), int(size), hash(order.tobytes()), hash(starts.tobytes()))
    hit = _SHUFFLE_CACHE.get(key)
    if hit is None:
        chunk_seed = int(np.random.default_rng([int(seed), int(lo)]).integers(0, 2**31 - 1))
        hit = shuffles_within(order, starts, int(size), chunk_seed)
        hit.flags.writeable = False
        with _SHUFFLE_LOCK:
            if key not in _SHUFFLE_CACHE:
                _SHUFFLE_CACHE[key] = hit
                _SHUFFLE_HELD[0] += hit.size
            while _SHUFFLE_HELD[0] > _SHUFFLE_CACHE_SIZE and len(_SHUFFLE_CACHE) > 1:
                _SHUFFLE_HELD[0] -= _SHUFFLE_CACHE.popitem(last=False)[1].size
    return hit


_SHUFFLE_CACHE: OrderedDict = OrderedDict()
_SHUFFLE_HELD = [0]  # entries held in _SHUFFLE_CACHE
_SHUFFLE_LOCK = threading.Lock()
#: Entries of shuffles kept (int64: 8 bytes each), the draws of every part of a growth phase.
_SHUFFLE_CACHE_SIZE = 16_000_000


def _within_strata(sorted_strata, key) -> np.ndarray:
    """``np.lexsort((key, sorted_strata))`` for strata codes in increasing order and keys in
    [0, 1): one argsort of ``stratum + key`` (a fifth of lexsort's time), which orders alike
    wherever its sorted values are distinct (rounding is monotone); where two coincide
    (neighbouring keys closer than the sum's rounding), lexsort itself."""
    composite = sorted_strata + key
    found = np.argsort(composite)
    if np.all(np.diff(composite[found]) > 0):
        return found
    return np.lexsort((key, sorted_strata))


def _strata_order(stratum) -> tuple:
    """The rows listed stratum by stratum, and the strata's starts in that list (and the end)."""
    order = np.argsort(stratum, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(stratum[order]) != 0, True])
    return order.astype(np.int64), starts.astype(np.int64)


def _shuffles(stratum, B: int, seed: int) -> np.ndarray:
    """(B, m) shuffles of m rows within their strata (``which`` of the draws)."""

    return shuffles_within(*_strata_order(stratum), int(B), int(seed))


def _distinct_rows(values):
    """(distinct rows, index of each row) when ``values`` has at most :data:`_TABULATE`
    distinct rows, else (None, None)."""
    if len(values) > 4 * _TABULATE:  # cheap exit: many rows, likely many values
        head = np.unique(values[: 4 * _TABULATE], axis=0)
        if len(head) > _TABULATE:
            return None, None
    uniq, inverse = np.unique(values, axis=0, return_inverse=True)
    if len(uniq) > _TABULATE:
        return None, None
    return uniq, inverse.reshape(-1)


def _table(out) -> np.ndarray:
    """The results table of holdout randomization tests: the smallest part p-value, df NaN,
    p, ``mi`` NaN, calibration "permutation" (Monte Carlo) and the mean loss increase under
    the draws in ``increase``."""
    return results_table(
        len(out), extra=CRTTest.extra_columns, statistic=[o[0] for o in out], df=np.nan,
        pvalue=[o[1] for o in out], log_pvalue=[o[2] for o in out], mi=np.nan,
        increase=[o[3] for o in out], calibration=PERMUTATION)


# ------------------------------------------------------------- public API
def crt_test(data, x, target, z=(), model="xgboost", folds=CRT_FOLDS, repeats=3, B=B_DRAWS,
             task="auto", seed=None, *, alpha=0.05, device="auto", n_jobs=1, parallel="auto",
             model_params=None, categorical=None, na="raise"):
    """Holdout conditional randomization test of x and the target given z (calibrated).

    On each of ``repeats`` random splits into ``folds`` parts, ``model`` is fitted
    on x + z on all parts but one; its held-out loss with the observed x is ranked
    among its losses with B draws of x given z (a part's p-value); the
    ``folds * repeats`` p-values are combined by Bonferroni.
    See :mod:`mbstat.ci.models.crt` for the reasons, the draws of x given z (the test's
    assumption) and the measured level. Also ``ppi_test(..., test="crt")``,
    ``ci_test(..., test="crt")`` and ``ppfs(..., test="crt")``.

    Parameters
    ----------
    data : DataFrame, 2-D ndarray or Dataset
    x : variable or list of variables
        Several names are tested jointly (all continuous or all discrete when z
        has a continuous column).
    target : variable
    z : variables, optional
    model : {"xgboost", "tree"} or estimator
        As in :func:`mbstat.ppi_test`; "xgboost" takes :data:`CRT_XGBOOST` (early
        stopping, eta 0.5) unless ``model_params`` overrides it.
    folds : int
        Parts of each split (>= 2); each serves once as the held-out part.
    repeats : int
        Random splits (>= 1).
    B : int
        Draws of x given z per part (>= 1); the smallest p-value is about 1 / (B + 1).
    task : {"auto", "classification", "regression"}
    seed : None, int or numpy Generator
        Splits, model seeds and draws; None draws one, recorded in ``result.seed``.
    alpha : float
        The level the early stop serves (:func:`early_draws`): a part with none of its
        first ``ceil(2 J / alpha) - 1`` draws as extreme as the data stops with p =
        alpha / (2 J) (J = folds x repeats parts); the others' p-values get that added.
    device, n_jobs, parallel, model_params, na :
        As in :func:`mbstat.ppi_test`.
    categorical : list of names, optional
        Feature columns the model takes as categories (see :func:`mbstat.ci.loco_test`).

    Returns
    -------
    CRTResult
        A :class:`~mbstat.ci.CIResult` (``statistic`` is the smallest part
        p-value, ``increase`` the mean held-out loss increase per row under the
        draws) that keeps the parts' p-values.
    """
    alpha = v.check_alpha(alpha)
    check_ppi_args(model, 5, 0.2, task, seed, n_jobs, parallel, device, model_params)
    folds, repeats = check_folds(folds), check_repeats(repeats)
    B = v.check_int("B", B, low=1)
    seed = v.drawn_seed(seed)
    ds, t, xs, zs, cats = resolve_query(data, x, target, z, task, na, "crt_test", categorical)
    engine = CRTEngine(ds, t, model=model, folds=folds, repeats=repeats, B=B, task=task,
                       seed=seed, device=device, n_jobs=n_jobs, parallel=parallel,
                       model_params=model_params, categorical=cats, alpha=alpha)
    out = engine.test_many([xs], zs)
    table = _table(out)
    query = Query("crt", METHOD, "min p", alpha, ds.n_rows, ds.names, table.dtype.names,
                  CRT_NOTES)
    batch = CIBatch(query, (tuple(sorted(xs)),), t, tuple(sorted(zs)), as_matrix(table))
    parts = out[0][4]
    parts.flags.writeable = False
    return CRTResult(batch, part_pvalues=parts, model=engine.model_label, task=engine.task,
                     device=engine.device, folds=folds, repeats=repeats, B=B,
                     seed=seed if isinstance(seed, int) else None)


class CRTTest(ModelTest):
    """The holdout randomization test as a :class:`~mbstat.ci.CITest` (registry name
    ``"crt"``). ``statistic`` is the smallest part p-value, ``increase`` the mean
    held-out loss increase per row when x is drawn given z. Tests of one target share one
    engine (same splits). Its early stop serves ``alpha``, or the tester's level when None.
    Not symmetric: ask with the target as y. Arguments as in :func:`crt_test`
    (``categorical`` by column names).
    """

    name = "crt"
    method = METHOD
    statistic_name = "min p"
    engine_class = CRTEngine
    notes = CRT_NOTES
    label = "holdout randomization test"
    increase_note = ("increase: mean rise of the held-out loss per row when the feature is "
                     "drawn given the rest")

    def settings_text(self) -> str:
        s = self.settings
        return (f"{plural(s['repeats'], 'split')} into {s['folds']} parts each, up to "
                f"{s['B']} draws of x given z per part, Bonferroni over the parts")

    def __init__(self, model="xgboost", folds=CRT_FOLDS, repeats=3, B=B_DRAWS, task="auto",
                 seed=None, *, device="auto", n_jobs=1, parallel="auto", model_params=None,
                 categorical=None, alpha=None):
        check_ppi_args(model, 5, 0.2, task, seed, n_jobs, parallel, device, model_params)
        super().__init__(dict(model=model, folds=check_folds(folds),
                              repeats=check_repeats(repeats), B=v.check_int("B", B, low=1),
                              task=task, device=device, n_jobs=n_jobs, parallel=parallel,
                              model_params=model_params), seed, categorical)
        self.alpha = None if alpha is None else v.check_alpha(alpha)

    def least_pvalue(self, alpha: float) -> float:
        """The early stop's p-value at this test's ``alpha`` or else the tester's (about
        alpha / 2, :func:`early_draws`), or 1 / (B + 1) without an early stop."""
        early = early_draws(self.alpha if self.alpha is not None else alpha, 1)
        return 1.0 / (min(early, self.settings["B"]) + 1.0)

    def floor_advice(self, level: float) -> str:
        return f"pass B >= {math.floor(1.0 / level)} draws"

    def served(self, level: float):
        """A copy whose early stop serves ``level`` (a search's first entry level: clear
        members then draw until their p-value reaches it), unless ``alpha`` was set."""
        if self.alpha is not None or 1.0 / (self.settings["B"] + 1.0) >= level:
            return None
        out = copy.copy(self)
        out.alpha = level
        return out

    def batch(self, tester, xs, y, z):
        """The tests, with the early stop at this test's ``alpha`` or else the tester's."""
        engine = self.engine(tester.dataset, y)
        engine.set_level(self.alpha if self.alpha is not None else getattr(tester, "alpha", 0.05))
        return self.make_table(engine.test_many(xs, z))

    table = staticmethod(_table)


# ------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False, repr=False)
class CRTResult(ModelResult):
    """A holdout conditional randomization test, as a :class:`~mbstat.ci.CIResult`.

    Extra attributes
    ----------------
    part_pvalues : ndarray (folds * repeats,) or (1,)
        The p-value of each held-out part (read-only), combined by Bonferroni; NaN for the
        parts after one that stopped early (the least p-value a part can take: the test's
        p-value is then J / (early + 1) whatever the others). One p-value where the test ran
        on all rows with the histogram model (:attr:`histogram`): model, device, folds and
        repeats then took no part, and the printout leaves them out.
    model, task, device : str
    folds, repeats, B : int
    seed : int or None
        The seed used (drawn when none was given): ``seed=result.seed`` replays the test.
    """

    part_pvalues: np.ndarray = None
    folds: int = 2
    repeats: int = 3
    B: int = B_DRAWS

    _shown = ("model", "task", "folds", "repeats", "B", "seed")

    @property
    def histogram(self) -> bool:
        """Whether the test ran on all rows with the histogram model and permutations of the
        target (one part: a single-column x given an empty z, or a discrete x given a
        stratified discrete z; :meth:`CRTEngine._histogram`) rather than on held-out parts."""
        return len(self.part_pvalues) == 1

    def __str__(self) -> str:
        given = " given z" if self.z else ""
        if self.histogram:
            strata = " within the strata of z" if self.z else ""
            lines = [
                *self._head("Conditional randomization test (histogram model, all rows)",
                            f"permutation p = {self.statistic:.4g}"),
                f"alternative hypothesis: x is not independent of the target{given} (the "
                f"histogram model fits the data better than the permuted targets)",
                f"model: histogram of the target over x's levels or bins{strata}, refitted "
                f"for each of up to B = {self.B} permutations of the target{strata}; "
                f"seed {self.seed}",
                "sample estimates:",
                f"mean in-sample {self.loss} increase per row under the permutations: "
                f"{self.increase:.6g}",
            ]
            return "\n".join(lines) + "\n"
        parts = self.part_pvalues
        draws = "permutations of x" if not self.z else "draws of x given z"
        lines = [
            *self._head(METHOD, f"smallest of {len(parts)} parts' p-values = "
                                f"{self.statistic:.4g} (Bonferroni)"),
            f"alternative hypothesis: x is not independent of the target{given} "
            f"({'x permuted' if not self.z else 'x drawn given z'} raises the held-out loss)",
            f"model: {self.model} on {self.device}; {plural(self.repeats, 'split')} into "
            f"{self.folds} parts, B = {self.B} {draws} per part; seed {self.seed}",
            f"held-out parts' p-values ({int(np.isfinite(parts).sum())} of {len(parts)} "
            f"drawn): min {np.nanmin(parts):.4g}, median {float(np.nanmedian(parts)):.4g}, "
            f"max {np.nanmax(parts):.4g}",
            "sample estimates:",
            f"mean held-out {self.loss} increase per row under the draws: "
            f"{self.increase:.6g}",
        ]
        return "\n".join(lines) + "\n"
