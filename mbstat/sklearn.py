"""A scikit-learn transformer that keeps the Markov blanket of the target.

>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.naive_bayes import CategoricalNB
>>> pipe = make_pipeline(MarkovBlanketSelector(method="iamb", alpha=0.01), CategoricalNB())
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import check_choice
from .algorithms import LEARNERS
from .algorithms.learners import target_label
from .ci import TESTS
from .stability import stability

__all__ = ["MarkovBlanketSelector"]

_TARGET = "__target__"  # y's name when it has none (or a column of X has it)


class MarkovBlanketSelector(SelectorMixin, BaseEstimator):
    """Select the features in the Markov blanket of ``y``, learned by an mbstat method.

    Parameters
    ----------
    method : str
        A learner of :data:`mbstat.LEARNERS` (default "iamb").
    alpha : float or None
        The method's ``alpha`` (the significance level of CI-test methods);
        None keeps the method's default.
    test : str or None
        CI test (None: the method's default).
    discretize : "auto", int or None
        Bins for continuous columns (and a continuous ``y``) before discrete
        tests: "auto" bins into 5 equal-frequency bins when ``test`` is a discrete
        CI test (e.g. "g2") and the data has float columns; the default test
        ("auto": fisher_z on continuous data, mi-cg on mixed data) and None leave
        them as they are (PPFS, for one, uses continuous features directly).
    params : dict, optional
        Further arguments of the method (e.g. ``{"m": 2}`` for gs_m); one that is also
        given as the selector's own (``alpha``, ``test``, ``backend``, ``discretize``) is an
        error.
    backend : {"auto", "cpu", "gpu"}, optional
    stability : int or dict, optional
        Keep the stable blanket instead of one run's: the number of resamples R, or the
        arguments of :func:`mbstat.stability` (``{"R": 200, "pfer": 1, "seed": 0}``,
        ``threshold``, ``resample``, ``n_jobs``). Without a ``seed`` in it, every fit
        draws its own resamples (the seed used is in ``result_.seed``) unless
        ``random_state`` is set.
    random_state : None, int, numpy RandomState or Generator
        The seed of a randomized method (one with a ``seed`` parameter: "ppfs", "rgs",
        "wfsdms"), or with ``stability`` the seed of the resamples (which seeds the
        method's runs in turn): scikit-learn's convention, an int is passed as ``seed``
        (same ``random_state``, same selection), a RandomState draws one, a Generator is
        passed as it is (each fit draws from it). None: every fit draws its own seed (the
        one used is in ``result_``). A ``seed`` in ``params`` (the method's) or in
        ``stability`` (the resamples') takes precedence, and a RandomState is then not
        drawn from (nor for a method without a seed): the state's later draws do not depend
        on the selector. With ``stability``, a ``seed`` in ``params`` seeds the method's
        run on every resample (``learner_args``), as :func:`mbstat.stability` takes it.

    Attributes
    ----------
    result_ : the method's result (summary, p-values, tests), or with ``stability`` the
        :class:`~mbstat.results.StabilityResult` (summary, inclusion frequencies)
    support_ : ndarray of bool
    feature_names_in_, n_features_in_ : as in scikit-learn
    """

    def __init__(self, method="iamb", alpha=None, test=None, discretize="auto", params=None,
                 backend=None, stability=None, random_state=None):
        self.method = method
        self.alpha = alpha
        self.test = test
        self.discretize = discretize
        self.params = params
        self.backend = backend
        self.stability = stability
        self.random_state = random_state

    def fit(self, X, y):
        """Learn the blanket of y among the columns of X."""

        check_choice("method", self.method, LEARNERS)
        if isinstance(X, pd.DataFrame):  # keep categorical and string columns as they are
            validate_data(self, X, y, skip_check_array=True)
            frame = X.reset_index(drop=True).copy()
        else:
            X, _ = validate_data(self, X, y, dtype=None, ensure_min_samples=2,
                                 ensure_all_finite=True, multi_output=False)
            frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        target = target_label(getattr(y, "name", None), frame.columns, default=_TARGET)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(frame):
            raise ValueError(f"y must be 1-D with one entry per row of X ({len(frame)}); "
                             f"got shape {y.shape}")
        frame[target] = y
        kwargs = dict(self.params or {})
        for name, default in (("alpha", None), ("test", None), ("backend", None),
                              ("discretize", "auto")):  # one of the two, not both (silently)
            value = getattr(self, name)
            if value != default and name in kwargs:
                raise ValueError(f"{name} is given twice: {name}={value!r} and "
                                 f"params[{name!r}]={kwargs[name]!r}; give one")
        if self.test is not None:
            kwargs["test"] = self.test
        if self.alpha is not None:
            kwargs["alpha"] = self.alpha
        bins = self._bins(frame, kwargs.get("test"))
        if bins is not None:
            kwargs["discretize"] = bins
        if self.backend is not None:
            kwargs["backend"] = self.backend
        if self.stability is None:
            # a randomized learner (ppfs, rgs, wfsdms) without a seed in params: random_state
            # seeds it; a RandomState is drawn from only here, where its draw is used
            if "seed" not in kwargs and "seed" in LEARNERS[self.method].parameters:
                seed = self._seed()
                if seed is not None:
                    kwargs["seed"] = seed
            self.result_ = LEARNERS[self.method].function(frame, target, **kwargs)
        else:
            args = self._stability_args()
            if "seed" in kwargs:  # params' seed is the method's: every run's, not the resamples'
                learner = dict(args.get("learner_args") or {})
                if "seed" in learner:
                    raise ValueError(f"the method's seed is given twice: params['seed']="
                                     f"{kwargs['seed']!r} and stability['learner_args']"
                                     f"['seed']={learner['seed']!r}; give one")
                learner["seed"] = kwargs.pop("seed")
                args["learner_args"] = learner
            self.result_ = stability(frame, target, self.method, **args, **kwargs)
        chosen = set(self.result_.selected)  # names as the data layer reads them: str(label)
        self.support_ = np.array([str(c) in chosen for c in frame.columns[:-1]], dtype=bool)
        return self

    def _stability_args(self) -> dict:
        """The arguments of :func:`mbstat.stability` that ``stability`` gives."""
        if isinstance(self.stability, dict):
            args = dict(self.stability)
        elif isinstance(self.stability, (int, np.integer)) and not isinstance(self.stability,
                                                                              bool):
            args = {"R": int(self.stability)}
        else:
            raise TypeError("stability must be the number of resamples R or a dict of "
                            "mbstat.stability's arguments; got "
                            f"{type(self.stability).__name__} {self.stability!r}")
        if "seed" not in args:  # drawn from a RandomState only where used
            seed = self._seed()
            if seed is not None:
                args["seed"] = seed
        return args

    def _seed(self):
        """The ``seed`` that ``random_state`` gives: None, an int (a RandomState draws one)
        or a Generator, checked by the function that takes it."""
        state = self.random_state
        if isinstance(state, np.random.RandomState):
            return int(state.randint(0, 2**31 - 1))
        return state

    def _bins(self, frame, test):
        if self.discretize != "auto":
            return self.discretize

        if LEARNERS[self.method].kind != "ci":
            return None  # not a CI-test learner (ppfs, fsdms): the data goes as it is
        # the learners' default test ("auto") takes continuous and mixed columns as they are
        discrete_test = isinstance(test, str) and TESTS[test].data == "discrete"
        has_float = any(pd.api.types.is_float_dtype(t) for t in frame.dtypes)
        return 5 if discrete_test and has_float else None

    def transform(self, X):
        """The selected columns; a DataFrame keeps its dtypes (categoricals stay categorical)."""
        if isinstance(X, pd.DataFrame):
            check_is_fitted(self, "support_")
            validate_data(self, X, skip_check_array=True, reset=False)
            return X.loc[:, self.get_support()]
        return super().transform(X)

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags
