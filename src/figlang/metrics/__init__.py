"""Metrics for the figurative-language benchmarks.

Small metric objects (configuration in the constructor, ``config()`` for result files,
``compute`` on lists) wrapping the libraries that define each metric. Importing this package
is cheap: the model-based metrics (``BertScore``, ``Bleurt``) import torch, transformers,
bert_score and bleurt-pytorch only when constructed.
"""

from figlang.metrics.bertscore import PAPER_BERTSCORE_MODEL, BertScore, BertScoreResult
from figlang.metrics.bleurt import PAPER_BLEURT_CHECKPOINT, Bleurt, bleurt_config_from_encoder
from figlang.metrics.classification import Accuracy, AccuracyResult, accuracy, accuracy_by_group, correctness
from figlang.metrics import flute
from figlang.metrics.flute import *  # noqa: F403 (the package re-exports flute's __all__, listed once there)
from figlang.metrics.generation import (
    CorpusBleu,
    CorpusBleuResult,
    GenerationScore,
    NltkSentenceBleu,
    PairwiseMetric,
    Protocol,
    RougeL,
    SacreSentenceBleu,
)
from figlang.metrics.generation_scores import generation_scores_from_records
from figlang.metrics.significance import (
    MCNEMAR_EXACT_BELOW,
    McNemarResult,
    TestResult,
    mcnemar,
    paired_t_test,
    wilcoxon_signed_rank,
)
from figlang.metrics.simulatability import SimulatabilityResult, simulatability, simulatability_report

__all__ = [
    "MCNEMAR_EXACT_BELOW",
    "PAPER_BERTSCORE_MODEL",
    "PAPER_BLEURT_CHECKPOINT",
    "Accuracy",
    "AccuracyResult",
    "BertScore",
    "BertScoreResult",
    "Bleurt",
    "CorpusBleu",
    "CorpusBleuResult",
    "GenerationScore",
    "McNemarResult",
    "NltkSentenceBleu",
    "PairwiseMetric",
    "Protocol",
    "RougeL",
    "SacreSentenceBleu",
    "SimulatabilityResult",
    "TestResult",
    "accuracy",
    "accuracy_by_group",
    "bleurt_config_from_encoder",
    "correctness",
    "generation_scores_from_records",
    "mcnemar",
    "paired_t_test",
    "simulatability",
    "simulatability_report",
    "wilcoxon_signed_rank",
]
__all__ += flute.__all__
