"""Supervised models for model-based tests (PPI): construction, devices, fitting, losses.

A :class:`ModelSpec` is an immutable recipe: which model, for which task, on
which device. It fits on arrays and predicts probabilities (classification)
or values (regression); :func:`per_sample_loss` turns predictions into the
per-row log-loss or squared error. Three kinds of model:

* ``"xgboost"``: gradient-boosted trees through XGBoost's native API
  (``hist`` on the CPU, ``device="cuda"`` when :func:`mbstat.backend.gpu_available`
  says a GPU answers, XGBoost was built with CUDA and, under ``"auto"``, the
  training data is large enough to gain). XGBoost falls back to
  the CPU silently, so :meth:`ModelSpec.device_of` reads the device a fitted
  booster really used.
* ``"tree"``: scikit-learn's CART decision tree, fully grown (the model of the
  PPFS paper's experiments). A Gini classification tree is grown as
  ``DecisionTreeRegressor`` on the class indicators (0/1, or one-hot): the
  squared error of indicators is the Gini impurity up to a constant factor,
  so the splits are the same CART splits and the leaf values are the class
  proportions ``predict_proba`` gives, without the classifier's per-fit label
  checks and with a faster criterion (about 2x per fit; floating-point ties
  may rarely break the other way: tests/test_ppi.py compares the two).
* any scikit-learn-compatible estimator object (``fit`` and ``predict``, plus
  ``predict_proba`` for classification): cloned for every fit, never mutated.

The model matrix (:func:`encode_features`): numbers (float, integer and bool
columns) as they are; categories (columns whose values are not numbers, and the
columns named in ``categorical=``) as 0/1 when binary, and with more than two
levels as XGBoost native categoricals for ``"xgboost"`` and one-hot blocks otherwise.
"""
from __future__ import annotations

import dataclasses
import json
import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

import numpy as np

from ..._validation import check_choice
from ...backend import gpu_available

__all__ = [
    "DEVICES", "MODELS", "TASKS", "TREE_DEFAULTS", "XGBOOST_DEFAULTS", "ModelSpec",
    "check_classifier", "check_model", "distinct_rows", "encode_features", "infer_task",
    "make_model", "per_sample_loss", "resolve_device", "weighted_rows", "xgboost_cuda_available",
]

MODELS = ("xgboost", "tree")
TASKS = ("classification", "regression")
DEVICES = ("auto", "cpu", "cuda")

#: XGBoost settings used unless ``model_params`` overrides them (scikit-learn names).
XGBOOST_DEFAULTS = MappingProxyType({
    "n_estimators": 50, "max_depth": 4, "learning_rate": 0.3, "max_bin": 64,
})
#: Decision-tree settings used unless ``model_params`` overrides them (a fully grown CART).
TREE_DEFAULTS = MappingProxyType({})

#: Log-loss clips probabilities at this value, as scikit-learn's ``log_loss`` does.
_EPS = float(np.finfo(np.float64).eps)
#: Below this many rows XGBoost runs one thread per fit (threads only add overhead).
_SMALL = 10_000
#: ``device="auto"`` trains XGBoost on a GPU from this many training rows; below it a GPU
#: fit costs more than it saves (H200 against 16 CPU cores, ``benchmarks/gpu.py``: 0.27x
#: at 8,000 training rows, 1.7x at 80,000, 3.7x at 400,000).
GPU_MIN_ROWS = 50_000


# ------------------------------------------------------------------ devices
@lru_cache(maxsize=1)
def xgboost_cuda_available() -> bool:
    """True when XGBoost was built with CUDA and :func:`mbstat.backend.gpu_available`."""

    try:
        import xgboost

        built = bool(xgboost.build_info().get("USE_CUDA", False))
    except Exception:  # pragma: no cover - broken install
        return False
    return built and gpu_available()


def resolve_device(device: str = "auto", kind: str = "xgboost", n_rows: int | None = None,
                   min_rows: int = GPU_MIN_ROWS) -> str:
    """Turn ``"auto"``/``"cpu"``/``"cuda"`` into the device a model is asked to use.

    Only XGBoost runs on a GPU; scikit-learn models always get ``"cpu"``.
    ``"auto"`` keeps fits on fewer than ``min_rows`` (:data:`GPU_MIN_ROWS`) training rows
    (``n_rows``) on the CPU. ``"cuda"`` without a usable device (or with a
    CPU-only model) raises.
    """
    check_choice("device", device, DEVICES)
    if kind != "xgboost":
        if device == "cuda":
            raise ValueError("device='cuda' needs model='xgboost'; scikit-learn models run "
                             "on the CPU")
        return "cpu"
    if device == "cpu" or (device == "auto" and n_rows is not None and n_rows < min_rows):
        return "cpu"
    if xgboost_cuda_available():
        return "cuda"
    if device == "cuda":
        raise RuntimeError(
            "device='cuda' needs a CUDA build of XGBoost, CuPy and an NVIDIA GPU, and none "
            "answered; use device='auto' or 'cpu'"
        )
    return "cpu"


# ------------------------------------------------------------------- models
def check_model(model) -> str:
    """The kind of ``model``: "xgboost", "tree" or "estimator"; raise when unusable."""
    if isinstance(model, str):
        return check_choice("model", model, MODELS)
    _check_not_a_class(model, "model")
    missing = [m for m in ("fit", "predict") if not callable(getattr(model, m, None))]
    if missing:
        raise TypeError(
            f"model must be 'xgboost', 'tree' or a scikit-learn-compatible estimator with "
            f"fit() and predict(); got {type(model).__name__} without {' and '.join(missing)}()"
        )
    return "estimator"


def check_classifier(estimator, name: str = "estimator"):
    """Raise a TypeError naming ``name`` unless ``estimator`` is a scikit-learn classifier
    object (``sklearn.base.is_classifier``: a classifier, or a pipeline ending in one)."""
    from sklearn.base import is_classifier

    _check_not_a_class(estimator, name)
    try:
        ok = is_classifier(estimator)
    except (AttributeError, TypeError):  # not a scikit-learn estimator at all
        ok = False
    if not ok:
        raise TypeError(f"{name} must be a scikit-learn classifier (sklearn.base.is_classifier), "
                        f"scored by accuracy; got {type(estimator).__name__}: {estimator!r}")
    return estimator


def infer_task(values) -> str:
    """The task ``task="auto"`` gives a float target, as scikit-learn would.

    Whole numbers are class labels ("binary"/"multiclass" in
    ``sklearn.utils.multiclass.type_of_target``) unless more than half of
    over 20 values are distinct (where scikit-learn warns that the target
    looks like a regression one); any other float target is "regression".

    Parameters
    ----------
    values : 1-D array of float

    Returns
    -------
    {"classification", "regression"}
    """
    from sklearn.utils.multiclass import type_of_target

    y = np.asarray(values, dtype=np.float64)
    n_distinct = len(np.unique(y))
    many = len(y) > 20 and n_distinct > round(0.5 * len(y))
    if type_of_target(y) in ("binary", "multiclass") and not many:
        return "classification"
    return "regression"


def _check_not_a_class(estimator, name: str) -> None:
    if isinstance(estimator, type):
        raise TypeError(f"{name} must be an estimator object, not the class "
                        f"{estimator.__name__}; write {estimator.__name__}() instead")


@dataclass(frozen=True)
class ModelSpec:
    """A model recipe: kind, task, parameters, device and threads.

    Use :func:`make_model` to build one. ``fit`` returns a fitted model;
    ``predict`` gives class probabilities ``(m, n_classes)`` for
    classification and values ``(m,)`` for regression, on the array module
    of its input (NumPy, or CuPy on a GPU).
    """

    kind: str
    task: str
    n_classes: int
    params: object = field(repr=False)
    estimator: object = field(default=None, repr=False)
    device: str = "cpu"
    nthread: int = 1

    @property
    def native_categorical(self) -> bool:
        """Whether discrete columns go in as categoricals (XGBoost) instead of one-hot."""
        return self.kind == "xgboost"

    @property
    def dtype(self):
        """Float dtype of the model matrix this learner wants."""
        return np.float64 if self.kind == "estimator" else np.float32

    @property
    def indicator_tree(self) -> bool:
        """Whether a classification tree is grown on the class indicators (see the module notes)."""
        return (self.kind == "tree" and self.task == "classification"
                and self.params.get("criterion", "gini") == "gini"
                and "class_weight" not in self.params)

    def training_labels(self, y):
        """The labels ``fit`` expects, from class codes 0..k-1 or values.

        XGBoost: float32 (its matrix builds fastest from them); indicator
        trees: the 0/1 indicator of class 1 (two classes) or the one-hot
        indicators; otherwise codes (int64) or values (float64).
        """
        xp = _xp_of(y)
        if self.kind == "xgboost":
            return y.astype(xp.float32)
        if self.task == "regression":
            return y.astype(xp.float64)
        if self.indicator_tree:
            if self.n_classes == 2:
                return y.astype(xp.float64)
            return xp.eye(self.n_classes, dtype=xp.float64)[y]
        return y.astype(xp.int64)

    @property
    def label(self) -> str:
        """A short description, e.g. ``xgboost (50 rounds, depth 4, eta 0.3)``."""
        p = self.params
        if self.kind == "xgboost":
            rounds = (f"up to {p['n_estimators']} rounds, early stopping"
                      if p.get("early_stopping_rounds") else f"{p['n_estimators']} rounds")
            return f"xgboost ({rounds}, depth {p['max_depth']}, eta {p['learning_rate']:g})"
        if self.kind == "tree":
            depth = p.get("max_depth")
            return f"decision tree ({'fully grown' if depth is None else f'depth {depth}'})"
        return type(self.estimator).__name__

    # -- fitting -------------------------------------------------------------
    def fit(self, X, y, seed: int, feature_types=None, distinct: bool = False):
        """Fit on model matrix ``X`` (rows x model columns) and target ``y``.

        ``distinct=True`` (XGBoost on the CPU): where at most :data:`DISTINCT_SHARE` of the
        rows of (X, y) are distinct, train on the distinct rows weighted by their counts
        (:func:`weighted_rows`; the early stop's validation rows too, drawn first): the same
        objective, gradient and Hessian sums (XGBoost weights each row's gradient pair and
        its metrics), so the same trees up to the rounding of those sums, at the cost of the
        distinct rows (discrete data repeat rows: ALARM HR's shrink phase trains on 8-57% of
        them). The bins of a numeric column with more than ``max_bin`` values come from the
        weighted sketch. Otherwise ``X`` as it is, bit for bit.
        """
        if self.kind == "xgboost":
            return self._fit_xgboost(X, y, seed, feature_types, distinct)
        if self.kind == "tree":
            task = "regression" if self.indicator_tree else self.task
            model = _tree_class(task)(random_state=_random_state(seed), **self.params)
            # float32 and finite by construction, parameters checked by make_model:
            # skip scikit-learn's per-fit validation (most of a small tree's cost)
            with _skip_validation():
                model.fit(X, y, check_input=False)
            return model
        from sklearn.base import clone

        model = clone(self.estimator)
        if "random_state" in model.get_params(deep=False) and \
                model.get_params(deep=False)["random_state"] is None:
            model.set_params(random_state=seed)
        model.fit(X, y)
        return model

    def _fit_xgboost(self, X, y, seed, feature_types, distinct=False):
        import xgboost as xgb

        p = dict(self.params)
        rounds = p.pop("n_estimators")
        patience = p.pop("early_stopping_rounds", None)
        share = p.pop("validation_fraction", 0.2)
        params = {
            "tree_method": "hist", "device": self.device, "nthread": self.nthread,
            "seed": seed, "verbosity": 0, **p,
        }
        if self.task == "regression":
            params["objective"] = "reg:squarederror"
        elif self.n_classes == 2:
            params["objective"] = "binary:logistic"
        else:
            params.update(objective="multi:softprob", num_class=self.n_classes)
        categorical = feature_types is not None and "c" in feature_types
        distinct = distinct and self.device == "cpu" and isinstance(X, np.ndarray)
        if patience is not None:
            return _early_stopped(xgb, params, X, y, feature_types, categorical, rounds,
                                  patience, share, seed, distinct)
        if distinct:
            dtrain = _matrix(xgb.DMatrix, X, y, True, feature_types=feature_types,
                             enable_categorical=categorical, nthread=self.nthread)
        elif self.device == "cuda":  # built on the device, no host copy
            dtrain = xgb.QuantileDMatrix(X, label=y, max_bin=params["max_bin"],
                                         feature_types=feature_types,
                                         enable_categorical=categorical)
        else:  # small CPU data: a plain DMatrix is several times faster to build
            dtrain = xgb.DMatrix(X, label=y, feature_types=feature_types,
                                 enable_categorical=categorical, nthread=self.nthread)
        # the boosting loop of xgb.train without its callback machinery
        booster = xgb.Booster(params, [dtrain])
        for i in range(rounds):
            booster.update(dtrain, i)
        return booster

    def predict(self, model, X):
        """Probabilities ``(m, n_classes)`` or predicted values ``(m,)``."""
        if self.kind == "xgboost":
            pred = model.inplace_predict(X)
            if self.task == "classification" and self.n_classes == 2:
                xp = _xp_of(pred)
                pred = xp.stack([1.0 - pred, pred], axis=1)
            return pred
        if self.kind == "tree":
            if self.indicator_tree:  # leaf values are the class proportions
                pred = model.predict(X, check_input=False)
                return np.column_stack([1.0 - pred, pred]) if pred.ndim == 1 else pred
            if self.task == "regression":
                return model.predict(X, check_input=False)
            return _full_proba(model.predict_proba(X, check_input=False), model.classes_,
                               self.n_classes)
        if self.task == "regression":
            return np.asarray(model.predict(X), dtype=np.float64)
        classes = getattr(model, "classes_", None)
        return _full_proba(np.asarray(model.predict_proba(X)), classes, self.n_classes)

    def device_of(self, model) -> str:
        """The device a fitted model really ran on ("cpu", "cuda", "cuda:0", ...)."""
        if self.kind != "xgboost":
            return "cpu"
        config = json.loads(model.save_config())
        return str(config["learner"]["generic_param"].get("device", "cpu"))


def _early_stopped(xgb, params, X, y, feature_types, categorical, rounds, patience, share,
                   seed, distinct=False):
    """Boosting stopped early: a random ``share`` of the training rows (drawn from ``seed``)
    scores each round; the rounds up to the best one are kept (the booster is sliced).
    ``distinct``: each part on its distinct rows, weighted (:meth:`ModelSpec.fit`)."""
    xp = _xp_of(X)
    n = X.shape[0]
    n_valid = min(max(1, int(round(share * n))), n - 1)
    order = xp.asarray(np.random.default_rng(seed).permutation(n))
    valid, train = order[:n_valid], order[n_valid:]
    build = dict(feature_types=feature_types, enable_categorical=categorical,
                 nthread=params["nthread"])
    matrix, booster_class = _read_once(xgb)
    dtrain = _matrix(matrix, X[train], y[train], distinct, **build)
    dvalid = _matrix(matrix, X[valid], y[valid], distinct, **build)
    booster = booster_class(params, [dtrain, dvalid])
    update, evaluate = _boosting_calls(booster, dtrain, dvalid)
    best, best_round, sign = np.inf, 0, 1.0
    for i in range(rounds):  # xgb.train's early stopping without its callbacks (2x faster)
        update(i)
        # the last metric decides, as in xgb.train: "[i]\tvalid-logloss:0.69\tvalid-auc:0.7"
        name, score = evaluate(i).split("\t")[-1].rsplit(":", 1)
        if i == 0 and name.split("-", 1)[-1].startswith(_MAXIMIZED):
            sign = -1.0  # a metric where higher is better (auc, map, ndcg, ...)
        score = sign * float(score)
        if score < best:
            best, best_round = score, i
        elif i - best_round >= patience:
            break
    if best_round + 1 < booster.num_boosted_rounds():
        return booster[:best_round + 1]  # a plain Booster
    booster.__class__ = xgb.Booster  # no cached names: it pickles and behaves as any booster
    for name in _FEATURE_INFO:
        booster.__dict__.pop(_CACHED + name, None)
    return booster


def _boosting_calls(booster, dtrain, dvalid) -> tuple:
    """``update(i)`` and ``evaluate(i) -> str``: ``booster.update(dtrain, i)`` and
    ``booster.eval(dvalid, "valid")``, the first of each through those methods and the rest
    straight through the C functions they call (``XGBoosterUpdateOneIter``,
    ``XGBoosterEvalOneIter``): the same calls on the same matrices, without the Python checks
    of the matrices' feature names and types that the methods repeat every round (a tenth of
    a small early-stopped fit). The methods themselves where XGBoost's C library is not
    reachable as in XGBoost 2 and 3."""
    import ctypes

    try:
        from xgboost import core

        check = core._check_call
        update_one, eval_one = core._LIB.XGBoosterUpdateOneIter, core._LIB.XGBoosterEvalOneIter
        handles = core.c_array(ctypes.c_void_p, [dvalid.handle])
        names = core.c_array(ctypes.c_char_p, [b"valid"])
        one = core.c_bst_ulong(1)
    except (ImportError, AttributeError):
        return (lambda i: booster.update(dtrain, i),
                lambda i: booster.eval(dvalid, "valid"))
    first = [True, True]

    def update(i):
        if first[0]:
            first[0] = False
            return booster.update(dtrain, i)
        check(update_one(booster.handle, ctypes.c_int(i), dtrain.handle))

    def evaluate(i):
        if first[1]:
            first[1] = False
            return booster.eval(dvalid, "valid")
        message = ctypes.c_char_p()
        check(eval_one(booster.handle, ctypes.c_int(0), handles, names, one,
                       ctypes.byref(message)))
        return message.value.decode()
    return update, evaluate


#: The DMatrix and Booster properties that XGBoost reads from its C library, string by
#: string, at every ``update`` and ``eval`` (checking the data against the model).
_FEATURE_INFO = ("feature_names", "feature_types")
_CACHED = "_read_once_"
_READ_ONCE = {}


def _read_once(xgb) -> tuple:
    """XGBoost's DMatrix and Booster with their feature names and types read from the C
    library once and kept until set again: an early-stopped fit calls ``update`` and ``eval``
    each round, and each reads them 5 times (ALARM HR's shrink phase: 2.5 s of a fold's
    15 s). The same data and model; only the Python-side reads are cached."""
    hit = _READ_ONCE.get(xgb.__version__)
    if hit is None:
        def cached(base, name):
            prop = getattr(base, name)

            def get(self):
                store = self.__dict__
                if _CACHED + name not in store:
                    store[_CACHED + name] = prop.fget(self)
                return store[_CACHED + name]

            def put(self, value):
                prop.fset(self, value)
                self.__dict__.pop(_CACHED + name, None)
            return property(get, put, doc=prop.__doc__)

        hit = tuple(type(base.__name__, (base,), {
            "__module__": __name__, "__doc__": base.__doc__,
            **{name: cached(base, name) for name in _FEATURE_INFO}})
            for base in (xgb.DMatrix, xgb.Booster))
        _READ_ONCE[xgb.__version__] = hit
    return hit


def weighted_rows(values) -> tuple:
    """The distinct rows of ``values`` (byte for byte, in np.unique's order), their counts
    (float64) and the index of each row among them."""
    keys = np.ascontiguousarray(values).view(
        np.dtype((np.void, values.dtype.itemsize * values.shape[1]))).reshape(-1)
    _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                          return_counts=True)
    return values[first], counts.astype(np.float64), inverse.reshape(-1)


def distinct_rows(values) -> tuple:
    """``weighted_rows(values)`` in another order (by a hash of each row), in half its time:
    each row of 4- or 8-byte items is hashed to one 64-bit integer (its words times fixed odd
    constants, summed modulo 2**64) and the integers are sorted, where ``np.unique`` sorts
    the rows' bytes; every row is then checked against its group's first row, and a
    collision (rows alike in hash, not in bytes) falls back to :func:`weighted_rows`."""
    values = np.ascontiguousarray(values)
    if values.ndim != 2 or values.dtype.itemsize not in (4, 8) or not values.shape[1]:
        return weighted_rows(values)
    words = values.view(np.uint32 if values.dtype.itemsize == 4 else np.uint64)
    key = (words.astype(np.uint64) * _HASH[:words.shape[1]]).sum(axis=1, dtype=np.uint64) \
        if words.shape[1] <= len(_HASH) else None
    if key is None:
        return weighted_rows(values)
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True,
                                          return_counts=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(words, words[first][inverse]):
        return weighted_rows(values)
    return values[first], counts.astype(np.float64), inverse


#: Odd 64-bit multipliers of :func:`distinct_rows`'s row hash (fixed: same rows, same order).
_HASH = np.random.default_rng(20261127).integers(1, 2**63, size=4096, dtype=np.uint64) | \
    np.uint64(1)


#: ``fit(..., distinct=True)`` trains on the distinct rows where they are at most this share
#: of the rows (fewer rows to pass over, for a new rounding of the sums).
DISTINCT_SHARE = 0.75


def _matrix(matrix, X, y, distinct: bool, **build):
    """XGBoost's ``matrix`` of the rows ``X`` and labels ``y``; with ``distinct``, of the
    distinct rows of (X, y) weighted by their counts where they are at most
    :data:`DISTINCT_SHARE` of the rows (a first look at 256 rows skips data whose rows are
    all distinct, as continuous data's)."""
    n = len(X)
    if distinct and n >= 2:
        both = np.column_stack([X, np.asarray(y, dtype=X.dtype)])
        head = min(n, 256)
        if len(distinct_rows(both[:head])[0]) <= DISTINCT_SHARE * head:
            rows, counts, _ = distinct_rows(both)
            if len(rows) <= DISTINCT_SHARE * n:
                return matrix(rows[:, :-1], label=rows[:, -1].astype(y.dtype), weight=counts,
                              **build)
    return matrix(X, label=y, **build)


#: XGBoost evaluation metrics that early stopping maximizes (as xgboost.callback.EarlyStopping).
_MAXIMIZED = ("auc", "aucpr", "pre", "map", "ndcg")


def _tree_class(task):
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    return DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor


def _skip_validation():
    import sklearn

    return sklearn.config_context(skip_parameter_validation=True, assume_finite=True)


_LOCAL = threading.local()


def _random_state(seed: int) -> np.random.RandomState:
    """A RandomState seeded with ``seed``, reused per thread (constructing one costs more
    than fitting a small tree; reseeding is cheap and keeps fits order-independent)."""
    rs = getattr(_LOCAL, "random_state", None)
    if rs is None:
        rs = _LOCAL.random_state = np.random.RandomState()
    rs.seed(seed)
    return rs


def _full_proba(proba, classes, n_classes: int) -> np.ndarray:
    """Probabilities with one column per class code 0..n_classes-1 (absent classes: 0)."""
    if proba.shape[1] == n_classes and (classes is None or
                                        np.array_equal(classes, np.arange(n_classes))):
        return proba
    out = np.zeros((proba.shape[0], n_classes), dtype=np.float64)
    cols = np.arange(proba.shape[1]) if classes is None else np.asarray(classes, dtype=np.intp)
    out[:, cols] = proba
    return out


def _xp_of(array):
    """numpy or cupy, whichever owns ``array``."""
    return np if isinstance(array, np.ndarray) else __import__("cupy")


def make_model(model, task: str, n_classes: int = 0, *, device: str = "auto",
                 params=None, n_jobs: int = 1, n_rows: int = 0,
                 gpu_min_rows: int = GPU_MIN_ROWS) -> ModelSpec:
    """Build the :class:`ModelSpec` for ``model`` and ``task``.

    Parameters
    ----------
    model : {"xgboost", "tree"} or estimator
        An estimator object is validated (``fit``/``predict``, and
        ``predict_proba`` for classification) and later cloned.
    task : {"classification", "regression"}
    n_classes : int
        Number of classes (classification).
    device : {"auto", "cpu", "cuda"}
        Where XGBoost is asked to run (see :func:`resolve_device`).
    params : dict, optional
        Settings overriding :data:`XGBOOST_DEFAULTS` (scikit-learn names such
        as ``n_estimators``, ``max_depth``, ``learning_rate``, or any native
        XGBoost parameter) or the decision tree's constructor arguments.
        Not accepted with an estimator object (configure the object).
    n_jobs : int
        Fits running at once: XGBoost gets ``cpu_count // n_jobs`` threads
        per fit (one for data under 10,000 rows, where threads only add overhead).
    n_rows : int
        Rows of the training data (chooses the threads, and the device under
        ``device="auto"``).
    gpu_min_rows : int
        ``device="auto"`` trains on a GPU from this many training rows.
    """
    kind = check_model(model)
    check_choice("task", task, TASKS)
    dev = resolve_device(device, kind, n_rows, gpu_min_rows)
    params = dict(params or {})
    if kind == "estimator":
        if params:
            raise TypeError("model_params cannot be given with an estimator object; "
                            "set the parameters on the object itself")
        if task == "classification" and not callable(getattr(model, "predict_proba", None)):
            raise TypeError(
                f"model {type(model).__name__} has no predict_proba(), which the log-loss of "
                "a classification task needs (e.g. SVC(probability=True))"
            )
        return ModelSpec("estimator", task, n_classes, {}, estimator=model)
    if kind == "tree":
        params = {**TREE_DEFAULTS, **params}
        if "random_state" in params:
            raise TypeError("model_params: the seed comes from seed=, not random_state")
        try:  # scikit-learn checks the parameters here, once, with its own messages
            _tree_class(task)(**params).fit(np.array([[0.0], [1.0]]), np.array([0, 1]))
        except TypeError as exc:
            raise TypeError(f"model_params: {exc}") from None
        return ModelSpec("tree", task, n_classes, params)
    merged = {**XGBOOST_DEFAULTS, **params}
    if "random_state" in merged:
        raise TypeError("model_params: the seed comes from seed=, not random_state")
    nthread = merged.pop("n_jobs", merged.pop("nthread", None))
    if nthread is None:
        cpus = os.cpu_count() or 1
        nthread = 1 if n_rows < _SMALL else max(1, cpus // max(1, n_jobs))
    learner = ModelSpec("xgboost", task, n_classes, merged, device="cpu", nthread=int(nthread))
    _check_xgboost(learner)
    return ModelSpec("xgboost", task, n_classes, merged, device=dev, nthread=int(nthread))


def _check_xgboost(learner: ModelSpec) -> None:
    """One tiny fit, so that a misspelt or bad parameter fails now, with a clear message."""
    import warnings

    import xgboost as xgb

    if not isinstance(learner.params.get("n_estimators"), int) or \
            learner.params["n_estimators"] < 1:
        raise ValueError("model_params: n_estimators must be an integer >= 1; got "
                         f"{learner.params.get('n_estimators')!r}")
    patience = learner.params.get("early_stopping_rounds")
    if patience is not None and (not isinstance(patience, int) or patience < 1):
        raise ValueError(f"model_params: early_stopping_rounds must be an integer >= 1 or None; "
                         f"got {patience!r}")
    share = learner.params.get("validation_fraction", 0.2)
    if not isinstance(share, float) or not 0 < share < 1:
        raise ValueError(f"model_params: validation_fraction must be a float in (0, 1); got "
                         f"{share!r}")
    if patience is None and "validation_fraction" in learner.params:
        raise TypeError("model_params: validation_fraction needs early_stopping_rounds")
    X = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    y = np.array([0, 1, 0, 1] if learner.task == "classification" else [0.0, 1.0, 2.0, 3.0])
    if learner.task == "classification" and learner.n_classes > 2:
        y = np.array([0, 1, 2, learner.n_classes - 1])
    trial = dataclasses.replace(learner, params={**learner.params, "n_estimators": 1,
                                                 "verbosity": 1, "validate_parameters": True})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            trial.fit(X, y.astype(np.float32), 0)
        except xgb.core.XGBoostError as exc:
            raise ValueError(f"model_params: {str(exc).splitlines()[0]}") from None
    unused = [str(w.message) for w in caught if "are not used" in str(w.message)]
    if unused:
        names = unused[0][unused[0].index("{"):unused[0].index("}") + 1]
        raise TypeError(f"model_params: XGBoost does not know the parameters {names}")


def per_sample_loss(pred, y, task: str):
    """Log-loss (classification) or squared error (regression) of each row.

    ``pred`` comes from :meth:`ModelSpec.predict`; ``y`` holds class codes
    0..k-1 or values. Probabilities are clipped at machine epsilon as in
    scikit-learn's ``log_loss``.
    """
    xp = _xp_of(pred)
    if task == "regression":
        diff = pred.astype(xp.float64) - y
        return diff * diff
    rows = xp.arange(pred.shape[0])
    p = pred[rows, y.astype(xp.int64)].astype(xp.float64)
    return -xp.log(xp.clip(p, _EPS, 1.0))


# -------------------------------------------------------------- model matrix
def encode_features(dataset, native_categorical: bool, dtype=np.float32, categorical=()):
    """The model matrix of every column of ``dataset``, built once.

    Column kinds are stated, not guessed: a column is a category when its
    values are not numbers (strings, pandas categoricals of text, ...) or when
    its position is in ``categorical``; every other column is a number (floats
    as they are, integers and bools by their values, so an integer column is
    split by thresholds like a float one, never one-hot encoded unless named).

    Parameters
    ----------
    dataset : Dataset
    native_categorical : bool
        Categories as XGBoost native categoricals (codes) instead of one-hot blocks.
    dtype : float dtype
    categorical : iterable of int
        Positions of the columns to treat as categories whatever their values
        (a float column named here is coded by its distinct values).

    Returns
    -------
    X : ndarray (n, m), Fortran order
        Numbers as they are; categories with two levels as 0/1 codes; more
        levels: the codes (native categorical) or one 0/1 column per level (one-hot).
    groups : tuple of int arrays
        ``groups[j]``: the model columns of data column ``j``.
    feature_types : list of {"q", "c"}
        XGBoost feature types of the model columns.
    """
    n = dataset.n_rows
    forced = {int(c) for c in categorical}
    numeric = dataset._numeric_levels
    blocks, groups, types, start = [], [], [], 0
    for j, kind in enumerate(dataset.kinds):
        if j not in forced and numeric[j]:  # a number: its values (level values if discrete)
            block, ftype = dataset.numeric()[:, j:j + 1], ["q"]
        else:
            if kind == "continuous":
                levels, codes = np.unique(dataset.values[:, j], return_inverse=True)
                card = len(levels)
            else:
                card, codes = len(dataset.levels[j]), dataset.codes[:, j]
            if card <= 2 or native_categorical:
                block = codes.reshape(n, 1)
                ftype = ["c" if card > 2 else "q"]
            else:
                block = np.zeros((n, card), dtype=dtype)
                block[np.arange(n), codes] = 1.0
                ftype = ["q"] * card
        blocks.append(block)
        groups.append(np.arange(start, start + block.shape[1]))
        types.extend(ftype)
        start += block.shape[1]
    X = np.empty((n, start), dtype=dtype, order="F")
    for g, block in zip(groups, blocks):
        X[:, g] = block
    return X, tuple(groups), types
