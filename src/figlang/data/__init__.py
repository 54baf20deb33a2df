"""The data layer: typed records, loaders for the three benchmarks, user tasks, splits, hygiene and downloads.

It depends on no model code.
"""

from .errors import DataError, FiglangError, LoadReport
from .records import ClozeRecord, GenerationRecord, NLIPair, Record
from .registry import all_tasks, get_task

__all__ = ["ClozeRecord", "DataError", "FiglangError", "GenerationRecord", "LoadReport", "NLIPair", "Record", "all_tasks", "get_task"]
