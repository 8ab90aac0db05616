"""Frozen result objects: R-style summaries, evidence tables, tests logs and plots."""
from .base import (MBResult, SelectionResult, Summary, adjust_pvalues, format_call, make_trace,
                   stars)
from .equivalent import EquivalentResult
from .stability import ArcStrengths, StabilityResult

__all__ = ["ArcStrengths", "EquivalentResult", "MBResult", "SelectionResult", "Summary",
           "adjust_pvalues", "format_call", "make_trace", "StabilityResult", "stars"]
