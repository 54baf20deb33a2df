"""The model a run trains: the base it starts from (catalog name, path, hub id, figlang-trained directory) and the fresh trainable model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.backends.loading import resolve
from figlang.backends.revision import directory_revision
from figlang.methods.trained import KNOWLEDGE, TRAINED_METHODS, is_trained_dir, read_figlang_json
from figlang.training.config import TrainConfig


# --- model construction ----------------------------------------------------------------------------------


def resolve_base(reference: str) -> dict[str, Any]:
    """Where a base-model reference points (catalog name, path, hub id) and its identity, via the resolver."""
    path = Path(reference).expanduser()
    if path.is_dir() and is_trained_dir(path):
        meta = read_figlang_json(path)
        return {
            "reference": reference,
            "source": "figlang-trained",
            "path": str(path.resolve()),
            "init_from_method": meta["method"],
            "base_model": meta.get("base_model"),
            "revision": _dir_revision(path),
        }
    r = resolve(reference)
    return {
        "reference": reference,
        "source": r.source,
        "path": r.path,
        "name": r.name,
        "revision": r.revision,
        "hub_id": (r.details or {}).get("hub_id") or (r.path if r.source == "hub" else None),
    }


def _dir_revision(path: Path) -> str | None:
    try:
        return directory_revision(path)
    except Exception:  # pragma: no cover - best effort
        return None


def build_model(cfg: TrainConfig, base: dict[str, Any], labels: Sequence[str]):
    """A fresh trainable model for ``cfg.method`` from the base (or a figlang-trained directory)."""
    shape, model_class = TRAINED_METHODS[cfg.method]
    if model_class == "generator":
        from figlang.methods.trained.generator import GeneratorModel, add_separators

        opts: dict[str, Any] = {
            "max_length": cfg.max_length,
            "max_target_length": cfg.max_target_length,
            "max_inferences": cfg.max_inferences,
            "bf16": cfg.bf16,
            "examples": cfg.examples,
        }
        if base["source"] == "figlang-trained":
            init = read_figlang_json(base["path"])
            if TRAINED_METHODS[init["method"]][1] != "generator":
                raise FiglangError(f"cannot start a {cfg.method} model from a {init['method']} model at {base['path']}")
            model = GeneratorModel.load(base["path"], **opts)
            if model.knowledge is None and KNOWLEDGE.get(cfg.method):
                add_separators(model.module, model.tokenizer)
            return GeneratorModel(model.module, model.tokenizer, cfg.method, **opts)
        return GeneratorModel.from_base(base["path"], cfg.method, **opts)
    if model_class == "choice-scorer":
        from figlang.methods.trained.multiple_choice import ChoiceScorerModel

        opts = {"max_length": cfg.max_length, "max_inferences": cfg.max_inferences, "bf16": cfg.bf16}
        if base["source"] == "figlang-trained":
            init = read_figlang_json(base["path"])
            if TRAINED_METHODS[init["method"]][1] != "choice-scorer":
                raise FiglangError(f"cannot start a {cfg.method} model from a {init['method']} model at {base['path']}")
            scorer = ChoiceScorerModel.load(base["path"], **opts)
            module = scorer.module
            if cfg.freeze_base and not module.frozen:  # probe a trained encoder: keep its head, fix the rest
                from figlang.methods.trained.multiple_choice import ChoiceScorer, keep_first_layers

                if cfg.base_layers:
                    keep_first_layers(module.encoder, cfg.base_layers)
                frozen = ChoiceScorer(module.encoder, cfg.dropout, module.pooling, frozen=True)
                frozen.head.load_state_dict(module.head.state_dict())
                module = frozen
            scorer = ChoiceScorerModel(module, scorer.tokenizer, cfg.method, **opts)
            scorer.module.dropout.p = cfg.dropout
            return scorer
        return ChoiceScorerModel.from_base(
            base["path"], cfg.method, dropout=cfg.dropout, frozen=cfg.freeze_base, base_layers=cfg.base_layers, **opts
        )
    from figlang.methods.trained.nli_classifier import NLIClassifierModel

    opts = {"max_length": cfg.max_length, "bf16": cfg.bf16}
    if base["source"] == "figlang-trained":
        init = read_figlang_json(base["path"])
        if TRAINED_METHODS[init["method"]][1] != "sequence-classifier":
            raise FiglangError(f"cannot start a {cfg.method} model from a {init['method']} model at {base['path']}")
        if list(init["labels"]) != list(labels):
            raise FiglangError(f"the model at {base['path']} has labels {init['labels']}, the task {list(labels)}")
        if cfg.lora_rank:
            raise FiglangError("LoRA adapters train on a catalog or hub base, not on a figlang-trained classifier")
        classifier = NLIClassifierModel.load(base["path"], **opts)
        return NLIClassifierModel(classifier.module, classifier.tokenizer, cfg.method, labels, **opts)
    lora = {"rank": cfg.lora_rank, "alpha": cfg.lora_alpha} if cfg.lora_rank else None
    return NLIClassifierModel.from_base(base["path"], cfg.method, labels, lora=lora, **opts)
