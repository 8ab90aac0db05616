"""Markov-blanket and feature-selection algorithms, one module per paper."""
from types import MappingProxyType

from .fsdms import fsdms, wfsdms
from .grow_shrink import gs_m, rgs
from .iamb import iamb, inter_iamb
from .iamb_ip import iamb_ip
from .mbor import mb_to_pc, mbor, pc_superset, sp_superset
from .ppfs import ppfs

#: Learners by name, as the command line, ``blankets`` and the scikit-learn selector call them.
METHODS = MappingProxyType({
    "iamb": iamb,
    "inter_iamb": inter_iamb,
    "iamb_ip": iamb_ip,
    "mbor": mbor,
    "gs_m": gs_m,
    "rgs": rgs,
    "ppfs": ppfs,
    "fsdms": fsdms,
})

__all__ = ["METHODS", "fsdms", "gs_m", "iamb", "iamb_ip", "inter_iamb", "mb_to_pc", "mbor", "pc_superset",
           "ppfs", "rgs", "sp_superset", "wfsdms"]
