"""LoRA adapters for the NLI classifier: a few MB that ship, on a catalog base that users install.

`figlang train -t flute -m nli --model mpnet --lora-rank 8` fine-tunes low-rank updates of every linear layer
of the encoder (attention and feed-forward) and the whole classification head, with the base's own weights
fixed (peft's LoRA). The trained model folder holds only what was trained, ``adapter.safetensors`` (float16:
the low-rank factors and the head), and ``figlang.json``, whose ``lora`` block says how to rebuild the
module and whose ``base_model`` names the base (its revision is checked when the model loads, as for a
frozen-base probe). The tokenizer is the base's.

float16 is the format of the saved weights, not of training: the model a run keeps (and scores on its
report splits) is the one read back from the saved file, so what ships is exactly what was measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError

ADAPTER_FILE = "adapter.safetensors"
# BERT's and RoBERTa's linear layers (the same module names)
_BERT_LINEAR = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
# the linear layers that get low-rank updates, by name suffix, per encoder family (peft matches suffixes)
TARGETS: dict[str, list[str]] = {
    "mpnet": ["attn.q", "attn.k", "attn.v", "attn.o", "intermediate.dense", "output.dense"],
    "bert": list(_BERT_LINEAR),
    "roberta": list(_BERT_LINEAR),
}
HEAD_MODULES = ["classifier", "score"]  # trained whole (peft's modules_to_save for sequence classification)


def lora_spec(model_type: str, rank: int, alpha: float | None = None, dropout: float = 0.1) -> dict[str, Any]:
    """The adapter's shape, as figlang.json records it (``lora``)."""
    if rank < 1:
        raise FiglangError(f"lora_rank must be at least 1, got {rank}")
    if model_type not in TARGETS:
        raise FiglangError(f"LoRA adapters are defined for {', '.join(sorted(TARGETS))} encoders, not {model_type!r}")
    return {
        "rank": int(rank),
        "alpha": float(alpha if alpha is not None else 2 * rank),
        "dropout": float(dropout),
        "targets": list(TARGETS[model_type]),
        "trained_whole": list(HEAD_MODULES),
        "file": ADAPTER_FILE,
        "dtype": "float16",
    }


def add_lora(module: Any, spec: dict[str, Any]) -> Any:
    """The sequence classifier with LoRA layers on ``spec['targets']`` and its head trainable; all else frozen."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        task_type="SEQ_CLS",
        r=spec["rank"],
        lora_alpha=spec["alpha"],
        lora_dropout=spec["dropout"],
        target_modules=list(spec["targets"]),
        modules_to_save=list(spec["trained_whole"]),  # copies: peft extends the list it is given
    )
    wrapped = get_peft_model(module, config)
    # torch's stubs type Module.__setattr__ for tensors and modules only; any attribute may be set on a module
    wrapped.lora_spec = dict(spec)  # type: ignore[assignment]
    return wrapped


def trainable_state(module: Any) -> dict[str, Any]:
    """The trained tensors (LoRA factors and head), by parameter name."""
    return {name: p.detach() for name, p in module.named_parameters() if p.requires_grad}


def save_adapter(module: Any, directory: str | Path) -> Path:
    """Write the trained tensors as float16 safetensors; returns the file."""
    from safetensors.torch import save_file

    path = Path(directory) / ADAPTER_FILE
    save_file({k: v.to("cpu").half().contiguous() for k, v in trainable_state(module).items()}, str(path))
    return path


def load_adapter(module: Any, directory: str | Path) -> None:
    """Read the trained tensors into a module built by :func:`add_lora` with the same spec (every one must match)."""
    import torch
    from safetensors.torch import load_file

    saved = load_file(str(Path(directory) / ADAPTER_FILE))
    params = dict(module.named_parameters())
    missing = sorted(set(trainable_state(module)) - set(saved))
    unknown = sorted(set(saved) - set(params))
    if missing or unknown:
        raise FiglangError(f"{directory}: the adapter does not fit its module (missing {missing[:3]}, unknown {unknown[:3]})")
    with torch.no_grad():
        for name, tensor in saved.items():
            params[name].copy_(tensor.to(params[name].dtype))


__all__ = ["ADAPTER_FILE", "TARGETS", "add_lora", "load_adapter", "lora_spec", "save_adapter", "trainable_state"]
