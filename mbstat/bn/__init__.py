"""Discrete Bayesian networks: structure queries, d-separation, sampling, BIF.

The former module ``mbstat/bn.py``, now a package; its public names are imported from
here.
"""
from .network import *  # noqa: F401,F403
from .network import RENORMALIZE_TOL, ROW_SUM_TOL, __all__  # noqa: F401
