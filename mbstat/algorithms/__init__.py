"""Markov-blanket and feature-selection algorithms, one module per paper.

Each learner registers one row of :data:`LEARNERS` (see :mod:`.learners`); ``METHODS``
maps the names to the public functions, as the command line, ``blankets`` and the
scikit-learn selector call them.
"""
from types import MappingProxyType

# isort: off  (the import order is the order of the learner table)
from .iamb import iamb, inter_iamb
from .iamb_ip import iamb_ip
from .mbor import mb_to_pc, mbor, pc_superset, sp_superset
from .grow_shrink import gs_m, rgs
from .iamb_fdr import iamb_fdr
from .fast_iamb import fast_iamb
from .fbed import fbed
from .pc_based import hiton_mb, hiton_pc, mmmb, mmpc, si_hiton_pc
from .ppfs import ppfs
from .fsdms import fsdms, wfsdms
from .ses import ses
from .tie import tie
# isort: on
from .learners import LEARNERS, Learner, learners_table
from .member_tests import member_tests

#: Learners by name (public functions), in the order of :data:`LEARNERS`.
METHODS = MappingProxyType({name: row.function for name, row in LEARNERS.items()})

__all__ = ["LEARNERS", "Learner", "METHODS", "fast_iamb", "fbed", "fsdms", "gs_m", "hiton_mb",
           "hiton_pc", "iamb", "iamb_fdr", "iamb_ip", "inter_iamb", "learners_table", "mb_to_pc",
           "mbor", "member_tests", "mmmb", "mmpc", "pc_superset", "ppfs", "rgs", "ses",
           "si_hiton_pc", "sp_superset", "tie", "wfsdms"]
