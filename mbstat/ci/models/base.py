"""What the model-based tests share: their checks, the query of one test resolved to
positions, the target as model labels, the test protocol's model-based base class
(:class:`ModelTest`) and the result base class (:class:`ModelResult`)."""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from ... import _validation as v
from ...data import CONTINUOUS, as_dataset, used_columns
from ..protocol import CITest
from ..result import CIResult, _p_text, _set_label
from .estimators import TASKS, check_model, infer_task

__all__ = ["ModelEngine", "ModelResult", "ModelTest", "check_ppi_args", "encode_target",
           "resolve_query"]


PARALLEL = ("auto", "threads", "processes")


def check_ppi_args(model, B, test_size, task, seed, n_jobs, parallel, device, model_params):
    """Validate the PPI settings; return (B, test_size, n_jobs)."""
    check_model(model)
    B = v.check_int("B", B, low=5)
    test_size = v.check_number("test_size", test_size, low=0.0, high=1.0, closed="neither")
    v.check_choice("task", task, ("auto", *TASKS))
    v.check_choice("parallel", parallel, PARALLEL)
    v.check_choice("device", device, ("auto", "cpu", "cuda"))
    if seed is not None and not isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        v.check_int("seed", seed, low=0)
    if model_params is not None and not isinstance(model_params, dict):
        raise TypeError(f"model_params must be a dict; got {type(model_params).__name__}")
    return B, test_size, resolve_jobs(n_jobs)


def resolve_jobs(n_jobs) -> int:
    """``n_jobs`` as a count of workers (-1: every CPU)."""
    n_jobs = v.check_int("n_jobs", n_jobs)
    if n_jobs == -1:
        return os.cpu_count() or 1
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1 or -1 (all CPUs); got {n_jobs}")
    return n_jobs


def feature_positions(dataset, categorical, target: int) -> tuple:
    """Positions of the columns named in ``categorical`` (None: none); the target's kind is
    set by ``task=``, so naming it is refused."""
    if categorical is None:
        return ()
    if isinstance(categorical, (str, int, np.integer)):
        categorical = [categorical]
    cols = dataset.indices(list(categorical), "categorical")
    if target in cols:
        raise ValueError(f"categorical names feature columns; the target "
                         f"{dataset.names[target]!r} is classified or regressed by task=")
    return tuple(cols)


def resolve_query(data, x, target, z, task: str, na: str, caller: str, categorical=None):
    """(dataset, target, x, z, categorical) of one model-based test, as positions, checked:
    x not empty, the target in neither x nor z, x and z disjoint; a float target that
    ``task="auto"`` reads as class labels re-encoded as classes. A DataFrame is encoded in
    the columns the test names only (x, target, z and ``categorical``), in the frame's
    order (as ``ci_test`` does): a test on a wide frame does not encode every column."""
    single = isinstance(z, (str, numbers.Integral)) or z is None
    z = [] if z is None else [z] if single else list(z)
    extra = [] if categorical is None else [categorical] if isinstance(
        categorical, (str, numbers.Integral)) else list(categorical)
    data, (x, target, named) = used_columns(data, (x, target, [*z, *extra]), na, None)
    z, categorical = named[:len(z)], (named[len(z):] if extra else None)
    ds = as_dataset(data, na=na)
    ds.require_complete(caller)
    t = ds.index(target, "target")
    if task == "auto":
        ds = labels_as_classes(ds, t)
    xs = ds.indices(x, "x")
    if not xs:
        raise ValueError("x must name at least one variable")
    zs = ds.indices(z, "z")
    if t in xs or t in zs:
        raise ValueError(f"the target {ds.names[t]!r} cannot be in x or z")
    if set(xs) & set(zs):
        raise ValueError("x and z overlap; they must be disjoint")
    return ds, t, xs, zs, feature_positions(ds, categorical, t)


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    return v.check_seed(seed)


def labels_as_classes(dataset, t: int):
    """The data with a float target re-encoded as classes where ``task="auto"`` reads it as
    class labels (:func:`mbstat.ci.models.estimators.infer_task`, scikit-learn's rule), so that a frame
    and its ``to_numpy()`` give the same task."""

    if dataset.kinds[t] != CONTINUOUS or infer_task(dataset.values[:, t]) != "classification":
        return dataset
    frame = dataset.to_frame()  # labelled as the data (Dataset.labels), unique
    frame[frame.columns[t]] = pd.Categorical(frame.iloc[:, t])
    return as_dataset(frame)


def encode_target(dataset, t: int, task: str):
    """The target as model labels: (task, y, n_classes).

    Classification: codes 0..k-1 of the classes present; regression: floats.
    """
    name, kind = dataset.names[t], dataset.kinds[t]
    if kind == "continuous":
        if task == "classification":
            raise ValueError(
                f"task='classification' but target {name!r} is continuous (float values), "
                "a regression target; use task='regression' (or 'auto'), or give the classes "
                "as integers, strings or categories"
            )
        y = np.asarray(dataset.values[:, t], dtype=np.float64)
        if np.ptp(y) == 0:
            raise ValueError(f"target {name!r} is constant: there is nothing to predict")
        return "regression", y, 0
    codes = np.asarray(dataset.codes[:, t], dtype=np.int64)
    present = np.unique(codes)
    if task == "regression":
        levels = dataset.levels[t]
        if not dataset._numeric_levels[t]:
            raise ValueError(f"task='regression' needs a numeric target; {name!r} has levels "
                             f"{list(levels)[:6]}")
        y = np.asarray(levels, dtype=np.float64)[codes]
        if len(present) < 2:
            raise ValueError(f"target {name!r} is constant: there is nothing to predict")
        return "regression", y, 0
    if len(present) < 2:
        level = dataset.levels[t][present[0]] if len(present) else None
        raise ValueError(f"target {name!r} has a single class ({level!r}): a classifier "
                         "needs at least two")
    return "classification", np.searchsorted(present, codes), len(present)


class ModelEngine:
    """What the model-based tests' engines share (PPI, LOCO, the CRT): the model's label
    and the device that ran the fits. Subclasses set ``learner`` and ``device_used``."""

    learner = None
    device_used = None

    @property
    def model_label(self) -> str:
        """The model, as a report names it (e.g. ``xgboost (50 rounds, depth 4, eta 0.3)``)."""
        return self.learner.label

    @property
    def device(self) -> str:
        """The device that really ran the fits (the requested one before any fit)."""
        return self.device_used or self.learner.device


class ModelTest(CITest):
    """What the model-based tests share: any column kind, one engine per data set and
    target (made on first use, same splits or folds for every test), a progress hook.
    Subclasses set ``engine_class``, ``table`` (the engine's tuples -> a results table)
    and their settings."""

    kind = "mixed"
    joint_x = True
    symmetric = False
    extra_columns = ("increase",)
    engine_class = None
    #: The engine's test tuples -> a results table (set by each test, a plain function).
    table = None
    #: What a report calls one test of this kind ("PPI test"), and what its ``increase``
    #: column measures: the results name the test from the test object.
    label = "model-based test"
    increase_note = "increase: the test's effect size"

    def settings_text(self) -> str:
        """The settings of each test, for a report (e.g. "30 splits each, test size 0.2")."""
        return ", ".join(f"{k} = {v!r}" for k, v in self.settings.items()
                         if k in ("B", "folds", "test_size"))

    def __init__(self, settings: dict, seed, categorical):
        # None draws the seed now: ``test.seed`` says how to replay the tests it makes
        self.settings, self.seed, self.categorical = settings, v.drawn_seed(seed), categorical
        self._engines = {}
        self.progress = None  # called with the number of feature sets an engine computed

    def check(self, tester, columns) -> None:
        """Any column kind is fine: the model takes continuous and discrete features."""

    def engine(self, dataset, y: int):
        """The engine for this data set and target (made on first use)."""
        key = (id(dataset), int(y))
        hit = self._engines.get(key)
        if hit is None or hit[0] is not dataset:
            seed = self.seed
            if isinstance(seed, np.random.SeedSequence):
                seed = np.random.default_rng(seed.spawn(1)[0])
            cats = feature_positions(dataset, self.categorical, y)
            engine = self.engine_class(dataset, y, seed=seed, categorical=cats, **self.settings)
            engine.progress = self.progress
            hit = (dataset, engine)
            self._engines[key] = hit
        return hit[1]

    @classmethod
    def make_table(cls, out):
        """The results table of the engine's test tuples ``out``."""
        return cls.table(out)

    def batch(self, tester, xs, y, z):
        return self.make_table(self.engine(tester.dataset, y).test_many(xs, z))


_LOSSES = {"classification": "log-loss", "regression": "squared error"}


@dataclass(frozen=True, eq=False, repr=False)
class ModelResult(CIResult):
    """What the model-based tests' results share: the model, task, device and seed; their
    own fields (after ``batch``) take part in equality, array fields are read-only copies,
    and ``loss`` names the loss."""

    model: str = ""
    task: str = ""
    device: str = ""
    seed: int | None = None

    #: The fields the repr shows after the query's.
    _shown = ("model", "task")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{super().__repr__()[:-1]}, {shown})"

    def __post_init__(self):
        for f in fields(self)[1:]:
            if f.type == "np.ndarray":
                arr = np.array(getattr(self, f.name), dtype=float)
                arr.flags.writeable = False
                object.__setattr__(self, f.name, arr)

    def _values(self) -> tuple:
        own = (getattr(self, f.name) for f in fields(self)[1:])
        return (*super()._values(),
                *(tuple(v.tolist()) if isinstance(v, np.ndarray) else v for v in own))

    @property
    def loss(self) -> str:
        """The per-sample loss: "log-loss" or "squared error"."""
        return _LOSSES.get(self.task, "loss")

    @staticmethod
    def _estimates(means: dict) -> str:
        """One row of sample estimates (name -> array, shown by its mean)."""
        return pd.DataFrame({k: [v.mean()] for k, v in means.items()}).to_string(
            index=False, float_format=lambda v: f"{v:.6g}")

    def _head(self, method: str, statistic: str) -> list:
        """The first lines of the printout, as R's htest: method, data, statistic, p-value."""
        cond = f" | {' + '.join(self.z)}" if self.z else ""
        return ["", f"\t{method}", "", f"data:  {_set_label(self.x)} ~ {self.y}{cond}",
                f"{statistic}, {_p_text(self.pvalue)}"]
