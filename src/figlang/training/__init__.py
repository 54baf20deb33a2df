"""Training figlang's own models: the generic loop (:mod:`.trainer`) and named presets (:mod:`.presets`).

>>> from figlang.training import train
>>> result = train("idiom-cloze", "mc", "minilm", "runs/idiom-mc")          # doctest: +SKIP
>>> result.accuracy("dev-disjoint"), result.accuracy("dev")                 # doctest: +SKIP

Methods: ``mc``, ``mc-continuation``, ``mc-context``, ``mc-literal`` (narrative cloze tasks),
``nli``, ``nli-rationale`` (FLUTE, IMPLI), ``iro`` (FLUTE's self-rationalizing generator),
``generator``, ``generator-context``, ``generator-literal`` (narrative continuation generators).
``train_folds`` runs IMPLI's idiom-disjoint folds.
The trained directory answers ``figlang eval --method trained --model DIR``.
"""

from __future__ import annotations

from typing import Any

from figlang.training.presets import PRESETS, default_preset, get_preset

__all__ = ["PRESETS", "TrainConfig", "TrainResult", "default_preset", "get_preset", "make_config", "train", "train_folds"]


def __getattr__(name: str) -> Any:  # the trainer imports torch: load it on first use
    if name in ("TrainConfig", "TrainResult", "make_config", "train", "train_folds", "run_training", "epoch_plan"):
        from figlang.training import trainer

        return getattr(trainer, name)
    raise AttributeError(name)
