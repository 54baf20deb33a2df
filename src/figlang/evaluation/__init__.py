"""The evaluation harness: run any method on any task, or score a prediction file, and write results that say how they were made."""

from figlang.evaluation.harness import RunResult, build_results, evaluate, evaluate_records, score_predictions_file, write_run

__all__ = ["RunResult", "build_results", "evaluate", "evaluate_records", "score_predictions_file", "write_run"]
