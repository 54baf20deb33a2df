"""Models figlang trains itself: a multiple-choice scorer for the narrative cloze tasks, an
NLI cross-encoder for FLUTE/IMPLI (and the rationale-quality classifiers I→O / IR→O), and
generating LMs (FLUTE's self-rationalizing I→OR model, the narrative continuation generators;
:mod:`.generator`).

A trained model is a directory: a normal Transformers checkpoint (``save_pretrained`` of the
encoder and the tokenizer), plus, for the multiple-choice scorer, its linear head
(``choice_head.safetensors``), plus ``figlang.json`` (task shape, method, input format, base
model, training configuration, data checksums, dev metrics). ``figlang eval --method trained
--model DIR`` answers with it (see :mod:`figlang.methods.trained.methods`).

This module holds what every trained model shares and that needs no torch: the input
assembly (segments joined by the tokenizer's separator token, with a truncation order) and
the knowledge relations of the narrative benchmark's inferences.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from figlang.core.devices import resolve_device  # re-exported: the trainer names it from here
from figlang.methods.trained.common import (
    FIGLANG_JSON,
    FORMAT_VERSION,
    KNOWLEDGE,
    THRESHOLD_OBJECTIVES,
    TRAINED_METHODS,
    assemble,
    choose_threshold,
    parse_threshold_objective,
    check_method,
    fit_segments,
    is_trained_dir,
    read_figlang_json,
    relation_of,
    special_ids,
)


def load_trained(directory: str | Path, device: str | None = None, **options: Any):
    """A loaded trained model (a ChoiceScorerModel, NLIClassifierModel or GeneratorModel) from its directory.

    ``device`` ("cpu", "cuda", "cuda:1", "auto"): where the weights go; inputs follow them.
    """
    meta = read_figlang_json(directory)
    kind = TRAINED_METHODS[meta["method"]][1]
    if kind == "choice-scorer":
        from figlang.methods.trained.multiple_choice import ChoiceScorerModel as cls
    elif kind == "fold-heads":
        from figlang.methods.trained.fold_heads import FoldHeadsModel as cls  # type: ignore[assignment]
    elif kind == "generator":
        from figlang.methods.trained.generator import GeneratorModel as cls  # type: ignore[assignment]
    else:
        from figlang.methods.trained.nli_classifier import NLIClassifierModel as cls  # type: ignore[assignment]
    model = cls.load(directory, **options)
    target = resolve_device(device)
    if target != "cpu":
        model.module.to(target)
    return model


__all__ = [
    "FIGLANG_JSON",
    "FORMAT_VERSION",
    "KNOWLEDGE",
    "THRESHOLD_OBJECTIVES",
    "TRAINED_METHODS",
    "assemble",
    "choose_threshold",
    "parse_threshold_objective",
    "check_method",
    "fit_segments",
    "is_trained_dir",
    "load_trained",
    "read_figlang_json",
    "relation_of",
    "resolve_device",
    "special_ids",
]
