"""Discrete Bayesian networks: structure queries, d-separation, sampling, BIF.

A :class:`BayesianNetwork` holds a DAG over named discrete variables and one
conditional probability table (CPT) per node. It answers structural queries
(parents, children, spouses, Markov blankets, d-separation) and draws i.i.d.
samples by vectorized forward (ancestral) sampling. :func:`read_bif` parses
networks in the BIF interchange format used by the bnlearn repository;
:func:`from_edges` and :func:`random_dag` build networks with random CPTs;
:func:`blanket_scores` compares a learned blanket with the true one.

d-separation is also available on a bare DAG, given as a mapping from each node
to its parents, through :func:`d_separated` and :class:`DSeparator`, so that
oracle conditional-independence tests can use it without CPTs.

One module per concern, lowest first: :mod:`.dag` (topological order,
d-separation), :mod:`.network` (the network class, sampling),
:mod:`.random_networks`, :mod:`.bif` (reader) and :mod:`.scores`. Import the
public names from here.
"""
from .bif import RENORMALIZE_TOL, read_bif
from .dag import DSeparator, d_separated
from .network import ROW_SUM_TOL, BayesianNetwork
from .random_networks import from_edges, random_dag
from .scores import blanket_scores

__all__ = [
    "BayesianNetwork",
    "DSeparator",
    "blanket_scores",
    "d_separated",
    "from_edges",
    "random_dag",
    "read_bif",
]
