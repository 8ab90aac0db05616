"""Markov-blanket and feature-selection algorithms, one module per paper."""
from types import MappingProxyType

from .iamb import iamb, inter_iamb

#: Learners by name, as the command line, ``blankets`` and the scikit-learn selector call them.
METHODS = MappingProxyType({
    "iamb": iamb,
    "inter_iamb": inter_iamb,
})

__all__ = ["METHODS", "iamb", "inter_iamb"]
