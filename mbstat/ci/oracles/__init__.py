"""Oracle tests that answer from a model instead of rows: d-separation in a DAG, its
extension to functionally determined variables, and an exact joint probability table."""
from .deterministic import DeterministicOracle
from .dseparation import DSeparationOracle
from .exact import ExactOracle

__all__ = ["DSeparationOracle", "DeterministicOracle", "ExactOracle"]
