"""The data layer: typed records, loaders for the three benchmarks, user tasks, splits, hygiene and downloads.

It depends on no model code. The package itself holds only the records and errors, so that importing any
data module stays cheap and never loads the task registry (``figlang.data.registry``: ``get_task``,
``all_tasks``), which reads the built-in tasks, user spec files and plugins' entry points.
"""

from figlang.core.errors import DataError, FiglangError, LoadReport
from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair, Record

__all__ = ["ClozeRecord", "DataError", "FiglangError", "GenerationRecord", "LoadReport", "NLIPair", "Record"]
