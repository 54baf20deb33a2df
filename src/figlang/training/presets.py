"""Named training configurations: CPU defaults that finish in reasonable time, and the papers' settings.

A preset fills the configuration; options given explicitly (CLI flags, keyword arguments)
override it. ``figlang train --preset NAME``; ``default_preset(method)`` is what runs without one.

CPU numbers (2 shared cores, all-MiniLM-L6-v2, measured for docs/research/trained_models.md): one epoch of
the idiom task's train-disjoint split (2,437 narratives × 2 options, ~120 tokens each) is about
4,900 encoder passes; with ``max_length=160`` and length-bucketed batches an epoch of ``cpu-cloze``
takes roughly 30–50 minutes there, depending on the load.
"""

from __future__ import annotations

from typing import Any

from figlang.core.errors import FiglangError

# the multiple-choice scorers of Chakrabarty et al. (TACL 2022): paper-mc, and paper-knowledge over all 12 inferences
_PAPER_MC: dict[str, Any] = {
    "epochs": 10,
    "lr": 1e-5,
    "batch_size": 8,
    "grad_accum": 1,
    "max_length": 256,
    "warmup_ratio": 0.06,
    "weight_decay": 0.0,
    "patience": 3,
    "eval_every": 0,
}

PRESETS: dict[str, dict[str, Any]] = {
    # --- CPU defaults -------------------------------------------------------------------------------
    "cpu-cloze": {
        "description": "CPU default for the narrative cloze scorer (mc, mc-continuation): 2 epochs, lr 3e-5, batch 16, 160 tokens.",
        "epochs": 2,
        "lr": 3e-5,
        "batch_size": 16,
        "grad_accum": 1,
        "max_length": 160,
        "warmup_ratio": 0.1,
        "weight_decay": 0.01,
        "patience": 2,
        "eval_every": 0,
    },
    "cpu-knowledge": {
        "description": "CPU default for knowledge-enhanced scorers (24 sequences an item): 1 epoch on 600 narratives, "
        "batch 2 items × accumulation 4, 160 tokens. Start from a trained mc model (--model DIR) to make it count.",
        "epochs": 1,
        "lr": 2e-5,
        "batch_size": 2,
        "grad_accum": 4,
        "max_length": 160,
        "warmup_ratio": 0.1,
        "weight_decay": 0.01,
        "patience": 2,
        "eval_every": 0,
        "limit": 600,
        "eval_batch_size": 4,
    },
    "cpu-nli": {
        "description": "CPU default for NLI classifiers (nli, nli-rationale): 2 epochs, lr 3e-5, batch 32, 128 tokens.",
        "epochs": 2,
        "lr": 3e-5,
        "batch_size": 32,
        "grad_accum": 1,
        "max_length": 128,
        "warmup_ratio": 0.1,
        "weight_decay": 0.01,
        "patience": 2,
        "eval_every": 0,
    },
    "cpu-impli-folds": {
        # 1 epoch on 2,000 pairs (63 steps) left minilm at the label prior (always entailment) in all 10 folds
        "description": "CPU default for IMPLI's 10 idiom-disjoint folds: 2 epochs on 8,000 sampled training pairs per fold, "
        "lr 5e-5, batch 32, 96 tokens (about 9 minutes a fold for minilm here); every test fold is scored in full.",
        "epochs": 2,
        "lr": 5e-5,
        "batch_size": 32,
        "grad_accum": 1,
        "max_length": 96,
        "warmup_ratio": 0.1,
        "weight_decay": 0.01,
        "patience": 1,
        "eval_every": 0,
        "limit": 8000,
        "dev_limit": 500,
    },
    "cpu-iro": {
        "description": "CPU default for FLUTE's self-rationalizing I→OR generator (a small causal LM such as smollm2-135m, "
        "or T5): 1 epoch on 2,000 sampled pairs, lr 1e-4, batch 8, 160 tokens (64 for the target), "
        "selection on the dev loss of 150 carved pairs every 50 steps; reports val.",
        "epochs": 1,
        "lr": 1e-4,
        "batch_size": 8,
        "grad_accum": 1,
        "max_length": 160,
        "max_target_length": 64,
        "warmup_ratio": 0.05,
        "weight_decay": 0.0,
        "patience": 3,
        "eval_every": 50,
        "limit": 2000,
        "dev_limit": 150,
        "report_splits": ("val",),
        "eval_batch_size": 16,
    },
    "cpu-generator": {
        "description": "CPU default for the narrative continuation generator (causal LM): 1 epoch, lr 1e-4, batch 8, "
        "160 tokens (32 for the continuation), selection on dev-disjoint loss every 50 steps; reports 60 items.",
        "epochs": 1,
        "lr": 1e-4,
        "batch_size": 8,
        "grad_accum": 1,
        "max_length": 160,
        "max_target_length": 32,
        "warmup_ratio": 0.05,
        "weight_decay": 0.0,
        "patience": 3,
        "eval_every": 50,
        "dev_limit": 60,
        "report_limit": 60,
        "eval_batch_size": 16,
    },
    "cpu-generator-knowledge": {
        "description": "CPU default for the knowledge-enhanced generators (12 sequences a narrative): 1 epoch on 300 "
        "narratives (3,600+ sequences), lr 1e-4, batch 8, 176 tokens, selection on the dev loss of 20 "
        "narratives every 100 steps; reports 40 items (batches of 24 prompts: 2 items decoded together).",
        "epochs": 1,
        "lr": 1e-4,
        "batch_size": 8,
        "grad_accum": 1,
        "max_length": 176,
        "max_target_length": 32,
        "warmup_ratio": 0.05,
        "weight_decay": 0.0,
        "patience": 3,
        "eval_every": 100,
        "limit": 300,
        "dev_limit": 20,
        "report_limit": 40,
        "eval_batch_size": 24,
    },
    "cpu-probe": {
        "description": "A linear probe for the cloze scorer on a large frozen base (qwen2.5-1.5b, gemma3-270m): only the head "
        "trains; every sequence is encoded once (bfloat16 on CPUs with AMX or AMD's AVX512-BF16, else float32; the narrative once per item, its options from "
        "its key/value cache) and its features kept, so 30 epochs cost about one pass over the data.",
        "freeze_base": True,
        "bf16": True,
        "epochs": 30,
        "lr": 1e-3,
        "batch_size": 16,
        "grad_accum": 1,
        "max_length": 160,
        "warmup_ratio": 0.0,
        "weight_decay": 0.01,
        "patience": 8,
        "eval_every": 0,
        "eval_batch_size": 16,
    },
    # --- the papers ------------------------------------------------------------------------------------
    "paper-mc": {
        "description": "Chakrabarty et al. (TACL 2022) RoBERTa multiple-choice scorer: 10 epochs, lr 1e-5, batch 8 "
        "(GPU-scale: about 20× the cpu-cloze compute).",
        **_PAPER_MC,
    },
    "paper-knowledge": {
        "description": "Chakrabarty et al. (TACL 2022) knowledge-enhanced scorers: the paper-mc settings over all 12 inferences "
        "(24 sequences an item; about 12× paper-mc).",
        **_PAPER_MC,
        "eval_batch_size": 4,
    },
    "paper-nli": {
        "description": "RoBERTa NLI fine-tuning as in IMPLI (Stowe et al., ACL 2022), which starts from the standard "
        "MNLI recipe (lr 1e-5, batch 32, 3 epochs; the paper does not list every value, these are the "
        "RoBERTa GLUE defaults).",
        "epochs": 3,
        "lr": 1e-5,
        "batch_size": 32,
        "grad_accum": 1,
        "max_length": 128,
        "warmup_ratio": 0.06,
        "weight_decay": 0.1,
        "patience": 2,
        "eval_every": 0,
    },
}

DEFAULT_FOR_METHOD = {
    "mc": "cpu-cloze",
    "mc-continuation": "cpu-cloze",
    "mc-meaning": "cpu-cloze",
    "mc-context": "cpu-knowledge",
    "mc-literal": "cpu-knowledge",
    "nli": "cpu-nli",
    "nli-rationale": "cpu-nli",
    "iro": "cpu-iro",
    "generator": "cpu-generator",
    "generator-context": "cpu-generator-knowledge",
    "generator-literal": "cpu-generator-knowledge",
}


def get_preset(name: str) -> dict[str, Any]:
    """A preset's settings (without its description)."""
    if name not in PRESETS:
        raise FiglangError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
    return {k: v for k, v in PRESETS[name].items() if k != "description"}


def default_preset(method: str) -> str:
    return DEFAULT_FOR_METHOD.get(method, "cpu-cloze")


__all__ = ["DEFAULT_FOR_METHOD", "PRESETS", "default_preset", "get_preset"]
