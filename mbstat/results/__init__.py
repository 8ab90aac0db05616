"""Frozen result objects: R-style summaries, evidence tables, tests logs and plots."""
from .base import (MBResult, SelectionResult, Summary, adjust_pvalues, format_call, make_trace,
                   stars)

__all__ = ["MBResult", "SelectionResult", "Summary", "adjust_pvalues", "format_call",
           "make_trace", "stars"]
