"""Markov-blanket and feature-selection algorithms, one module per paper."""
from types import MappingProxyType

from .fsdms import fsdms, wfsdms
from .grow_shrink import gs_m, rgs
from .iamb import iamb, inter_iamb
from .ppfs import ppfs

#: Learners by name, as the command line, ``blankets`` and the scikit-learn selector call them.
METHODS = MappingProxyType({
    "iamb": iamb,
    "inter_iamb": inter_iamb,
    "gs_m": gs_m,
    "rgs": rgs,
    "ppfs": ppfs,
    "fsdms": fsdms,
})

__all__ = ["METHODS", "fsdms", "gs_m", "iamb", "inter_iamb", "ppfs", "rgs", "wfsdms"]
