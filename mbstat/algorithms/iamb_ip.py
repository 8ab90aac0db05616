"""IAMB-IP: IAMB with informative priors (Pocock, Lujan & Brown 2012, Eqs. 20-24)."""
from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import stats

from .._frozen import FrozenMapping
from .._validation import check_choice, check_number
from ..ci.chi2 import chi2_logsf
from ..results import MBResult
from .iamb import run_search
from .learners import Found, Learner, Run

__all__ = ["iamb_ip"]

SCALES = ("mi", "significance")


def _check_args(prior=None, threshold=0.02, alpha_d=math.log(99), scale="mi",
                start=None) -> dict:
    """IAMB-IP's own arguments, checked before the data is read (the prior is checked
    against the candidates by the search)."""
    threshold = check_number("threshold", threshold, low=0.0, closed="neither")
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite; got {threshold!r}")
    alpha_d = check_number("alpha_d", alpha_d, low=0.0)
    if not math.isfinite(alpha_d):
        raise ValueError(f"alpha_d must be finite; got {alpha_d!r}")
    check_choice("scale", scale, SCALES)
    return {"prior": prior, "threshold": threshold, "alpha_d": alpha_d, "scale": scale,
            "start": start}


def _search(run: Run, prior, threshold, alpha_d, scale, start) -> Found:
    """IAMB's loops with the decision rule of Eq. 24 on the chosen scale."""
    tester = run.tester
    weights = _check_prior(prior, tester.dataset, run.target, run.candidates)
    if scale == "mi":
        rule = mi_rule(weights, threshold, alpha_d, tester.n)
    else:
        rule = significance_rule(weights, alpha_d, tester.alpha)
    blanket = run_search(run, "iamb", rule, start)
    notes = ()
    if rule.criterion is not None:
        notes = (f"Criterion: {rule.criterion}.",)
    if scale == "mi":
        notes += ("Note: on the mi scale the threshold t decides (Eq. 24), not alpha: members "
                  "may have p > alpha, and the MI estimate is biased upwards by about "
                  "df / 2N at large df; scale='significance' decides at alpha.",)
    return Found(blanket, params={"prior": FrozenMapping(weights)}, notes=notes)


IAMB_IP = Learner("iamb_ip", "ci", "IAMB with informative priors (IAMB-IP), {scale} scale",
                  search=_search, check=_check_args)


@IAMB_IP.front_end
def iamb_ip(data, target, prior=None, threshold=0.02, alpha_d=math.log(99), *, scale="mi",
            test="auto", alpha=0.05, start=None, backend=None, candidates=None, whitelist=None,
            blacklist=None, max_sx=None, discretize=None, na="raise", progress=None,
            **test_args) -> MBResult:
    """IAMB with a factored Bernoulli prior over the features (IAMB-IP).

    The prior is ``p(theta) ~ exp(-alpha_s |theta| + alpha_d w' theta)``: a
    sparsity prior ``alpha_s = threshold * N`` (IAMB's threshold, Eq. 23) and
    a knowledge prior with one weight per feature (Eq. 22). IAMB's loops are
    unchanged; only the independence decision is (Eq. 24).

    ``scale="mi"`` (the paper): add the candidate maximising
    ``score = I(X_k; Y | X_theta) + (alpha_d w_k - alpha_s) / N`` while
    ``score > 0``; remove the member minimising the same score given the rest
    while ``score < 0`` (Theorem 2). ``I`` is the test's ``mi`` (G2 / 2N for
    "g2"), so with no prior this is IAMB with the threshold ``I > t``.

    ``scale="significance"``: the same log prior ratio moves the G2 statistic
    (``G2 = 2 N I``): a candidate is dependent when
    ``G2 + 2 alpha_d w_k > chi2_{1-alpha}(df)``, i.e. the sparsity prior is
    the test at level ``alpha`` (``alpha_s = chi2_{1-alpha}(df) / 2``) and
    candidates are ranked by the log p-value of the shifted statistic. With
    no prior this is exactly :func:`iamb`.

    On both scales the knowledge term is capped as the paper recommends:
    ``|alpha_d w_k| <= alpha_s``, so that a prior alone never adds a feature
    without evidence (weights in [-1, 1], as in the paper, cap ``alpha_d``
    itself; larger weights are capped the same way).

    Parameters
    ----------
    data : DataFrame, ndarray, Dataset or BayesianNetwork (with test="oracle")
    target : str or int
    prior : mapping feature -> weight, optional
        ``w > 0``: believed in the blanket, ``w < 0``: believed out, 0 or
        missing: no opinion. Features by name or position; the target and
        features outside ``candidates`` are errors.
    threshold : float
        IAMB's threshold ``t`` > 0 on the mutual information (nats), the
        sparsity prior ``alpha_s = t N`` (scale "mi"; paper default 0.02).
    alpha_d : float
        Strength of the knowledge prior, >= 0 (paper: log 99, i.e.
        p(theta_k = 1) = 0.99 for w_k = 1).
    scale : {"mi", "significance"}
    test : str
        A CI test from :data:`mbstat.TESTS`; any test on the "mi" scale, a
        chi-square test (finite df, e.g. "g2", "x2") on the significance scale
        when the prior has non-zero weights.
    alpha : float
        Level of the test on the significance scale; on both scales the level
        of the p-value table of the result.
    start, backend, candidates, whitelist, blacklist, max_sx, discretize, na, progress, **test_args
        As in :func:`mbstat.iamb`.

    Returns
    -------
    MBResult
        ``params`` holds ``prior`` (read-only), ``threshold``, ``alpha_d`` and
        ``scale``. ``evidence`` holds each decision's test and, in ``criterion``,
        the quantity Eq. 24 decided on (the score on the "mi" scale; -log p of
        the prior-shifted statistic on the significance scale with a prior).

    Notes
    -----
    With the d-separation oracle there are no rows (N = 0); on the "mi"
    scale the oracle's ``mi`` is 1 (dependent) or 0 and the knowledge term
    takes its capped value ``t |w_k|`` (the large-N limit), so the oracle's
    decisions hold for any prior while ``t < 1/2``.
    """


def _check_prior(prior, dataset, target, candidates) -> dict:
    """The prior as {feature name: float weight}, checked against the data."""
    if prior is None:
        return {}
    if not hasattr(prior, "items") or isinstance(prior, (str, bytes)):
        raise TypeError(f"prior must be a mapping feature -> weight (or None); "
                        f"got {type(prior).__name__}")
    allowed = set(candidates)
    weights = {}
    for key, w in prior.items():
        name = dataset.names[dataset.index(key, "prior")]
        if name == target:
            raise ValueError(f"prior: the target {target!r} cannot carry a prior weight")
        if name not in allowed:
            raise ValueError(f"prior: feature {name!r} is not among the candidates")
        if name in weights:
            raise ValueError(f"prior names feature {name!r} twice")
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            raise TypeError(f"prior[{key!r}] must be a real number (the weight); "
                            f"got {type(w).__name__} {w!r}")
        if not math.isfinite(w):
            raise ValueError(f"prior[{key!r}] must be a finite number; got {w!r}")
        weights[name] = float(w)
    return weights


def _weights(xs, weights) -> np.ndarray:
    return np.array([weights.get(x, 0.0) for x in xs], dtype=np.float64)


def mi_rule(weights, threshold, alpha_d, n_rows):
    """Eq. 24 as a decision rule: ``score = mi - t + sign(w) min(alpha_d |w| / N, t)``.

    ``(alpha_d w - alpha_s) / N`` with ``alpha_s = t N`` and the cap
    ``|alpha_d w| <= alpha_s``; N = 0 (oracle) takes the capped value.
    """

    def shift(w):
        if w == 0:
            return 0.0
        strength = alpha_d * abs(w) / n_rows if n_rows else math.inf
        return math.copysign(min(strength, threshold), w)

    shifts = {x: shift(w) for x, w in weights.items()}

    def rule(xs, res):
        score = res.mi - threshold + _weights(xs, shifts)
        return ~np.asarray(res.skipped, dtype=bool) & (score > 0), (res.log_pvalue, -score)

    rule.criterion = ("the score I(X; T | z) - t + prior shift (Eq. 24), in nats: kept when "
                      "> 0")
    return rule


def significance_rule(weights, alpha_d, alpha):
    """Eq. 24 on the G2 scale: shift the statistic by ``2 alpha_d w`` (capped), test at alpha."""
    def rule(xs, res):
        w = _weights(xs, weights)
        stat = np.asarray(res.statistic, dtype=np.float64).copy()
        log_p = np.asarray(res.log_pvalue, dtype=np.float64).copy()
        dependent = ~np.asarray(res.independent)
        moved = w != 0
        if moved.any():
            df = np.asarray(res.df, dtype=np.float64)[moved]
            if not np.all(np.isfinite(df) & (df > 0)):
                raise ValueError("scale='significance' needs a chi-square test with finite df "
                                 "(e.g. 'g2', 'x2') when the prior has non-zero weights; "
                                 "use scale='mi'")
            crit = stats.chi2.isf(alpha, df)
            shift = 2.0 * np.sign(w[moved]) * np.minimum(alpha_d * np.abs(w[moved]), crit / 2.0)
            shifted = np.maximum(stat[moved] + shift, 0.0)
            stat[moved] = shifted
            log_p[moved] = chi2_logsf(shifted, df)
            dependent[moved] = ~np.asarray(res.skipped, dtype=bool)[moved] & (shifted > crit)
        return dependent, (-stat, log_p)

    rule.criterion = ("-log p of the statistic shifted by the prior (Eq. 24 on the G2 scale): "
                      f"kept when > -log alpha = {-math.log(alpha):.4g}") if weights else None
    return rule
