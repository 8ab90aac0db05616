"""The single table of CI tests: names, what they take, what they mean."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .. import _validation as v
from .base import CITest
from .contingency import ContingencyTest, PermutationTest
from .gaussian import FisherZ
from .oracle import DSeparationOracle

__all__ = ["TESTS", "make_test", "tests_table"]


@dataclass(frozen=True)
class TestSpec:
    """A registered test: its factory, fixed settings and accepted arguments."""

    factory: type
    fixed: dict
    accepts: tuple
    data: str
    description: str


TESTS = MappingProxyType({
    "g2": TestSpec(ContingencyTest, {"statistic": "g2", "df": "bnlearn"}, ("min_per_cell",),
                   "discrete", "G2 likelihood-ratio (mutual information) test, bnlearn df (default)"),
    "g2-adf": TestSpec(ContingencyTest, {"statistic": "g2", "df": "adjusted"}, ("min_per_cell",),
                       "discrete", "G2 test with df adjusted for empty rows/columns per stratum"),
    "x2": TestSpec(ContingencyTest, {"statistic": "x2", "df": "bnlearn"}, ("min_per_cell",),
                   "discrete", "Pearson X2 test, bnlearn df"),
    "x2-adf": TestSpec(ContingencyTest, {"statistic": "x2", "df": "adjusted"}, ("min_per_cell",),
                       "discrete", "Pearson X2 test with adjusted df"),
    "mc-g2": TestSpec(PermutationTest, {"statistic": "g2"}, ("B", "seed"),
                      "discrete", "Monte Carlo permutation G2 test (B permutations within strata)"),
    "mc-x2": TestSpec(PermutationTest, {"statistic": "x2"}, ("B", "seed"),
                      "discrete", "Monte Carlo permutation X2 test"),
    "fisher_z": TestSpec(FisherZ, {}, (), "continuous",
                         "Fisher's z test of zero partial correlation (Gaussian data)"),
    "oracle": TestSpec(DSeparationOracle, {}, ("dag",), "none",
                       "d-separation oracle in a known DAG (exact-correctness checks)"),
})


def tests_table():
    """The registry as a DataFrame (one row per test)."""
    import pandas as pd

    return pd.DataFrame(
        [(name, s.data, ", ".join(s.accepts) or "-", s.description) for name, s in TESTS.items()],
        columns=["test", "data", "arguments", "description"],
    ).set_index("test")


def _check_args(name: str, args: dict) -> dict:
    if "B" in args:
        v.check_int("B", args["B"], low=1)
    if "seed" in args and args["seed"] is not None:
        v.check_int("seed", args["seed"], low=0)
    if args.get("min_per_cell") is not None:
        v.check_number("min_per_cell", args["min_per_cell"], low=0)
    return args


class UnknownTestArguments(TypeError):
    """Arguments that a CI test does not accept (a learner passes on the ones it does not
    take itself, so its message can say both)."""

    def __init__(self, test: str, unknown: list, accepts):
        self.test, self.unknown = test, unknown
        self.accepted = ", ".join(accepts) or "no arguments"
        super().__init__(f"test {test!r} does not accept {unknown}; it accepts: {self.accepted}")


def make_test(test, data=None, **args) -> CITest:
    """A CITest from a registered name (with its arguments) or a CITest object."""
    if isinstance(test, CITest):
        if args:
            raise TypeError(f"arguments {sorted(args)} cannot be given with a test object")
        return test
    v.check_choice("test", test, TESTS)
    spec = TESTS[test]
    unknown = sorted(set(args) - set(spec.accepts))
    if unknown:
        raise UnknownTestArguments(test, unknown, spec.accepts)
    if test == "oracle" and "dag" not in args:
        from ..bn import BayesianNetwork

        if not isinstance(data, BayesianNetwork):
            raise ValueError("test 'oracle' needs dag= (a BayesianNetwork or node -> parents mapping)")
        args = {"dag": data}
    return spec.factory(**spec.fixed, **_check_args(test, args))
