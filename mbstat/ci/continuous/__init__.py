"""The continuous and mixed family: partial correlations (Fisher's z, ranks, normal
scores) from cached moments, the conditional Gaussian and regression likelihood-ratio
tests, and the kernel test (RCoT)."""
from .gaussian import FisherZ
from .kernel import RCoT
from .mixed import ConditionalGaussian
from .rank import NormalScores, Spearman
from .regression import RegressionLR

__all__ = ["ConditionalGaussian", "FisherZ", "NormalScores", "RCoT", "RegressionLR", "Spearman"]
