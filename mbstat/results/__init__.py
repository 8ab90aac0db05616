"""Result objects: frozen, printable, with p-value tables and plots."""
from .base import (MBResult, SelectionResult, Summary, format_call, make_mb_result, make_trace,
                   pvalue_table, stars)

__all__ = ["MBResult", "SelectionResult", "Summary", "format_call", "make_mb_result",
           "make_trace", "pvalue_table", "stars"]
