"""The contingency-table family: G2 and X2 tests of discrete data, counted by compiled
kernels (numba on the CPU, CuPy on a GPU, per partition on Dask), calibrated by exact
permutation moments or permutations within strata where tables are sparse."""
from .contingency import ContingencyTest, PermutationTest

__all__ = ["ContingencyTest", "PermutationTest"]
