"""Markov-blanket and feature-selection algorithms, one module per paper."""
from types import MappingProxyType

from .fsdms import fsdms, wfsdms
from .iamb import iamb, inter_iamb

#: Learners by name, as the command line, ``blankets`` and the scikit-learn selector call them.
METHODS = MappingProxyType({
    "iamb": iamb,
    "inter_iamb": inter_iamb,
    "fsdms": fsdms,
})

__all__ = ["METHODS", "fsdms", "iamb", "inter_iamb", "wfsdms"]
