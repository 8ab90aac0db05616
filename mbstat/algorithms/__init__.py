"""Markov-blanket and feature-selection algorithms, one module per paper."""
from .iamb import iamb, inter_iamb

__all__ = ["iamb", "inter_iamb"]
