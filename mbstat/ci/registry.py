"""The single table of CI tests: names, what they take, what they mean."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from .. import _validation as v
from ..bn import BayesianNetwork
from ..data import Dataset
from .continuous.gaussian import FisherZ
from .continuous.kernel import RCoT
from .continuous.mixed import ConditionalGaussian
from .continuous.rank import NormalScores, Spearman
from .continuous.regression import RegressionLR
from .models.crt import CRTTest
from .models.loco import LOCOTest
from .models.ppi import PPITest
from .oracles.dseparation import DSeparationOracle
from .oracles.exact import ExactOracle
from .protocol import CITest
from .tables.contingency import ContingencyTest

__all__ = ["TESTS", "choose_test", "make_test", "rare_levels_warning", "tests_table"]


@dataclass(frozen=True)
class TestSpec:
    """A registered test: its factory, fixed settings, accepted arguments and their defaults
    where the registry sets its own."""

    factory: type
    fixed: dict
    accepts: tuple
    data: str
    description: str
    defaults: dict = field(default_factory=dict)


_CALIBRATED = ("calibration", "B", "seed", "match", "min_per_cell")
_PERMUTED = ("B", "seed", "min_per_cell")
_SEMIPARAMETRIC = ("B", "seed", "match", "min_per_cell")
#: The model-based tests' calibration: chi-square / normal, or permutations within strata.
_MODEL_PERMUTED = ("calibration", "B", "seed")
_PPI = ("model", "B", "test_size", "task", "seed", "device", "n_jobs", "parallel",
        "model_params", "categorical")
_LOCO = ("model", "folds", "task", "seed", "device", "n_jobs", "parallel", "model_params",
         "categorical")
_CRT = ("model", "folds", "repeats", "B", "task", "seed", "device", "n_jobs", "parallel",
        "model_params", "categorical")


def _contingency(statistic, df="bnlearn", calibration="asymptotic"):
    return {"statistic": statistic, "df": df, "calibration": calibration}


TESTS = MappingProxyType({
    "g2": TestSpec(ContingencyTest, {"statistic": "g2", "df": "bnlearn"}, _CALIBRATED,
                   "discrete", "G2 likelihood-ratio (mutual information) test, bnlearn df; "
                   "asymptotic, semiparametric where the table is too sparse (default)",
                   {"calibration": "auto"}),
    "g2-adf": TestSpec(ContingencyTest, _contingency("g2", "adjusted", "asymptotic"),
                       ("min_per_cell",), "discrete",
                       "G2 test with df adjusted for empty rows/columns per stratum; skipped "
                       "(independence) below 5 rows per cell, as bnlearn's mi-adf",
                       {"min_per_cell": 5}),
    "x2": TestSpec(ContingencyTest, {"statistic": "x2", "df": "bnlearn"}, _CALIBRATED,
                   "discrete", "Pearson X2 test, bnlearn df; asymptotic, semiparametric where "
                   "sparse", {"calibration": "auto"}),
    "x2-adf": TestSpec(ContingencyTest, _contingency("x2", "adjusted", "asymptotic"),
                       ("min_per_cell",), "discrete",
                       "Pearson X2 test with adjusted df; skipped below 5 rows per cell",
                       {"min_per_cell": 5}),
    "sp-g2": TestSpec(ContingencyTest, _contingency("g2", calibration="semiparametric"),
                      _SEMIPARAMETRIC, "discrete",
                      "semiparametric G2 test: chi-square with the mean and variance of the "
                      "statistic under permutations (match='mean': bnlearn's sp-mi)"),
    "sp-x2": TestSpec(ContingencyTest, _contingency("x2", calibration="semiparametric"),
                      _SEMIPARAMETRIC, "discrete",
                      "semiparametric X2 test (match='mean': bnlearn's sp-x2)"),
    "mc-g2": TestSpec(ContingencyTest, _contingency("g2", calibration="permutation"),
                      _PERMUTED, "discrete",
                      "Monte Carlo permutation G2 test (B = 5000 permutations within strata)"),
    "mc-x2": TestSpec(ContingencyTest, _contingency("x2", calibration="permutation"),
                      _PERMUTED, "discrete", "Monte Carlo permutation X2 test"),
    "fisher_z": TestSpec(FisherZ, {}, (), "continuous",
                         "Fisher's z test of zero partial correlation (Gaussian data)"),
    "spearman": TestSpec(Spearman, {}, _MODEL_PERMUTED, "continuous",
                         "Spearman's rank correlation: Fisher's z on r_s, variance 1.06 / (n "
                         "- 3); given z, the latent partial correlation of a Gaussian copula "
                         "(Harris & Drton 2013), influence-function variance",
                         {"calibration": "asymptotic"}),
    "normal-scores": TestSpec(NormalScores, {}, _MODEL_PERMUTED, "continuous",
                              "normal-scores (nonparanormal) partial correlation: Fisher's z "
                              "on van der Waerden scores", {"calibration": "asymptotic"}),
    "rcot": TestSpec(RCoT, {}, ("num_f", "num_f2", "calibration", "B", "seed"), "continuous",
                     "randomized conditional correlation test (Strobl et al. 2019): random "
                     "Fourier features, Hall-Buckley-Eagleson null; non-linear relations, "
                     "large n", {"num_f": "auto", "num_f2": 5, "calibration": "asymptotic"}),
    "mi-cg": TestSpec(ConditionalGaussian, {}, ("correction", *_MODEL_PERMUTED), "mixed",
                      "conditional Gaussian likelihood-ratio test, bnlearn's mi-cg: continuous "
                      "variables Gaussian and linear within the strata of the discrete ones",
                      {"correction": "moments", "calibration": "asymptotic"}),
    "reg-lr": TestSpec(RegressionLR, {}, ("model", *_MODEL_PERMUTED), "mixed",
                       "regression likelihood-ratio test of y on z with and without x (MXM's "
                       "testIndReg / testIndLogistic / testIndMultinom): least squares, "
                       "logistic or multinomial logit by y's kind; not symmetric",
                       {"model": "auto", "calibration": "asymptotic"}),
    "ppi": TestSpec(PPITest, {}, _PPI, "mixed",
                    "predictive permutation independence test (model-based; Hassan et al.); "
                    "p-values NOT calibrated (use crt or loco for inference)"),
    "loco": TestSpec(LOCOTest, {}, _LOCO, "mixed",
                     "cross-fitted leave-covariate-out test: held-out loss of a model given z "
                     "vs given x + z, one-sided t-test (model-based, calibrated)"),
    "crt": TestSpec(CRTTest, {}, _CRT, "mixed",
                    "holdout conditional randomization test: held-out loss of a model given "
                    "x + z ranked among its losses with x drawn given z, parts combined by "
                    "Bonferroni (model-based, calibrated)"),
    "auto": TestSpec(type(None), {}, ("those of the chosen test",), "any",
                     "chosen from the data's kinds, as bnlearn's check.test: all discrete: "
                     "g2; all continuous: fisher_z; mixed: mi-cg (arguments go to it)"),
    "oracle": TestSpec(DSeparationOracle, {}, ("dag",), "none",
                       "d-separation oracle in a known DAG (exact-correctness checks)"),
    "exact": TestSpec(ExactOracle, {}, ("table", "names", "tol"), "none",
                      "exact conditional mutual information of a joint probability table"),
})


_CHI2_TABLE = ("chi-square of the G2/X2 statistic: enough rows per cell of the table "
               "(about 5)")
#: When each test's p-value holds its level (the README's "Choosing a test").
ASSUMPTIONS = {
    "g2": _CHI2_TABLE + "; sparse tables calibrated by permutations",
    "g2-adf": _CHI2_TABLE, "x2": _CHI2_TABLE + "; sparse tables calibrated by permutations",
    "x2-adf": _CHI2_TABLE,
    "sp-g2": "exchangeability of x within the strata of z; chi-square shape of the null",
    "sp-x2": "exchangeability of x within the strata of z; chi-square shape of the null",
    "mc-g2": "exchangeability of x within the strata of z (exact up to Monte Carlo error)",
    "mc-x2": "exchangeability of x within the strata of z (exact up to Monte Carlo error)",
    "fisher_z": "linear relations, Gaussian (or light-tailed) data; n > |z| + 3",
    "spearman": "monotone relations; ranks of x and y linear in the ranks of z (holds its "
                "level for an empty z only: liberal as n grows otherwise)",
    "normal-scores": "a Gaussian copula (monotone transformations of jointly Gaussian "
                     "variables); few ties",
    "rcot": "numeric data; z's random features absorb E[f(x)|z] and E[f(y)|z]; large n",
    "mi-cg": "Gaussian, linear continuous variables within the strata of the discrete ones; "
             "many rows per stratum and coefficient",
    "reg-lr": "y's regression on z correctly specified (linear predictor; Gaussian errors: "
              "exact F p-value, more rows than parameters; logit link: large n per parameter)",
    "ppi": "none: p-values not calibrated (overlapping splits, marginal permutation)",
    "loco": "independent rows; under H0 adding x does not improve the model's held-out "
            "loss (a learner able to fit y from z); large n",
    "crt": "independent rows; x drawn given z with its true law: exact for discrete z "
           "(permuted within strata), a linear / multinomial logistic model of x on a "
           "continuous z",
    "auto": "those of the chosen test",
    "oracle": "a known DAG (d-separation); no data",
    "exact": "a known joint distribution; no data",
}


def tests_table():
    """The registry as a DataFrame (one row per test): the data kinds it takes, its
    arguments (with the registry's defaults), its assumptions and a description."""
    import pandas as pd

    def arguments(spec):
        return ", ".join(f"{a}={spec.defaults[a]!r}" if a in spec.defaults else a
                         for a in spec.accepts) or "-"

    return pd.DataFrame(
        [(name, s.data, arguments(s), ASSUMPTIONS.get(name, ""), s.description)
         for name, s in TESTS.items()],
        columns=["test", "data", "arguments", "assumptions", "description"],
    ).set_index("test")


def choose_test(kinds) -> tuple:
    """The test ``test="auto"`` runs on data of these column kinds, and why: (name, reason).

    As bnlearn's ``check.test``: all discrete -> "g2", all continuous -> "fisher_z", a mix
    -> "mi-cg" (the conditional Gaussian test)."""
    kinds = set(kinds)
    if "continuous" not in kinds:
        return "g2", "all variables are discrete"
    if kinds == {"continuous"}:
        return "fisher_z", "all variables are continuous"
    return "mi-cg", "the data mixes discrete and continuous variables"


#: A discrete column with a level seen in at most this many rows makes mi-cg singular.
_RARE_ROWS = 2


def rare_levels_warning(dataset, test: str):
    """A warning text when ``test="auto"`` chose mi-cg and a discrete column has a level seen
    in at most 2 rows (an integer column of counts or identifiers is discrete: 200 levels in
    300 rows): the regressions within that column's strata have no residual degrees of
    freedom, so mi-cg reads every test of it as independence (statistic 0, p = 1, bnlearn's
    rule for singular models). None otherwise."""
    import numpy as np

    if test != "mi-cg":
        return None
    found = []
    for j, kind in enumerate(dataset.kinds):
        if kind == "continuous":
            continue
        counts = np.bincount(np.asarray(dataset.codes[:, j], dtype=np.intp))
        seen = counts[counts > 0]
        if len(seen) and seen.min() <= _RARE_ROWS:
            found.append(f"{dataset.names[j]!r} ({len(seen)} levels, "
                         f"{int((seen <= _RARE_ROWS).sum())} seen in at most {_RARE_ROWS} rows)")
    if not found:
        return None
    return (f'test="auto" chose \'mi-cg\' but discrete column(s) {", ".join(found[:5])}'
            f'{" and more" if len(found) > 5 else ""} have rare levels: mi-cg\'s regressions '
            "within their strata are singular and read as independence (p = 1). Give count-"
            "like integer columns as floats (continuous), merge rare levels, or choose a test")


class UnknownTestArguments(TypeError):
    """Arguments that a CI test does not accept (a learner passes on the ones it does not
    take itself, so its message can say both)."""

    def __init__(self, test: str, unknown: list, accepts):
        self.test, self.unknown = test, unknown
        self.accepted = ", ".join(accepts) or "no arguments"
        super().__init__(f"test {test!r} does not accept {unknown}; it accepts: {self.accepted}")


def make_test(test, data=None, **args) -> CITest:
    """A CITest from a registered name (with its arguments) or a CITest object. The test
    checks its own arguments; an oracle takes its graph or table from ``data`` when it is
    a BayesianNetwork (or, for "exact", an :class:`ExactOracle`) and none is given."""
    if isinstance(test, CITest):
        if args:
            raise TypeError(f"arguments {sorted(args)} cannot be given with a test object")
        return test
    v.check_choice("test", test, TESTS)
    if test == "auto":
        if not isinstance(data, Dataset):
            raise ValueError("test 'auto' is chosen from a Dataset's kinds (CITester does "
                             "this); pass a test name with this data")
        test = choose_test(data.kinds)[0]
    spec = TESTS[test]
    unknown = sorted(set(args) - set(spec.accepts))
    if unknown:
        raise UnknownTestArguments(test, unknown, spec.accepts)
    if test == "oracle" and "dag" not in args:
        if not isinstance(data, BayesianNetwork):
            raise ValueError("test 'oracle' needs dag= (a BayesianNetwork or node -> parents "
                             "mapping)")
        args = {"dag": data}
    if test == "exact" and "table" not in args:
        if isinstance(data, ExactOracle) and not args:
            return data
        if isinstance(data, BayesianNetwork):
            return ExactOracle.from_network(data, **args)
        raise ValueError("test 'exact' needs table= (a joint probability table), or an "
                         "ExactOracle or a BayesianNetwork as the data")
    return spec.factory(**spec.fixed, **{**spec.defaults, **args})
