"""The evaluation harness: run any method on any task, or score a prediction file, and write results that say how they were made."""

from .harness import RunResult, evaluate, score_predictions_file

__all__ = ["RunResult", "evaluate", "score_predictions_file"]
