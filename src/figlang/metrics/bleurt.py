"""BLEURT via ``bleurt-pytorch`` (the PyTorch port of Google's BLEURT), default checkpoint BLEURT-20.

FLUTE and its shared task scored explanations with BLEURT-20; ``lucadiliello/BLEURT-20`` is
its PyTorch conversion. Any checkpoint can be selected; three kinds are accepted:

* ``"bleurt"``: a checkpoint whose config has ``model_type == "bleurt"`` (BLEURT-20, BLEURT-20-D12,
  bleurt-base-512, ...), run with ``BleurtForSequenceClassification``;
* ``"sequence-regression"``: any transformers ``*ForSequenceClassification`` checkpoint with
  one label (a regression head), run with ``AutoModelForSequenceClassification``;
* ``"encoder+seeded-head"``: a bare BERT encoder (e.g. the offline MiniLM used by the tests)
  loaded into the BLEURT architecture with a regression head drawn from
  ``torch.Generator().manual_seed(untrained_head_seed)``. Opt-in only (``untrained_head_seed``):
  it exercises the real BLEURT code path, but its numbers mean nothing.

Only the default BLEURT-20 checkpoint is ``comparable_to_published``.

Compatibility shim (bleurt-pytorch 0.0.1 was written for transformers 4.x). Importing it
under transformers 5 fails, and even when it imports it would break at run time:

1. ``transformers.pytorch_utils.find_pruneable_heads_and_indices`` was removed;
2. ``transformers.models.bert.tokenization_bert_fast`` was removed (``BertTokenizerFast``
   now lives in ``tokenization_bert``);
3. ``PreTrainedModel.get_extended_attention_mask`` and ``get_head_mask`` were removed, and
   ``BleurtModel.forward`` calls both.

:func:`_import_bleurt_pytorch` provides 1 and 2 only for the duration of the import and
removes them again (transformers is left as it was), and adds 3 as methods of
bleurt-pytorch's own ``BleurtPreTrainedModel``. The replacements are the transformers 4.x
implementations. Nothing else in figlang sees the shim.

A second trap: under transformers 5, ``BleurtTokenizer.from_pretrained`` on a SentencePiece
checkpoint (BLEURT-20 ships ``spm.model``) silently returns a WordPiece tokenizer with an
empty vocabulary, mapping every word to ``[UNK]``. The tokenizer class is therefore chosen
from the checkpoint's files (``spm.model`` → ``BleurtSPTokenizer``, else the WordPiece
one). The SentencePiece conversion needs the ``protobuf`` package.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys
import types
from collections.abc import Sequence
from typing import Any

from figlang.metrics.generation import PairwiseMetric, Protocol, library_config
from figlang.core.progress import route_transformers_bars

__all__ = ["PAPER_BLEURT_CHECKPOINT", "Bleurt", "bleurt_config_from_encoder"]

PAPER_BLEURT_CHECKPOINT = "lucadiliello/BLEURT-20"

_BLEURT_MODULES: types.SimpleNamespace | None = None

# BertConfig fields that carry over one-to-one to BleurtConfig.
_ENCODER_FIELDS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "max_position_embeddings",
    "type_vocab_size",
    "initializer_range",
    "layer_norm_eps",
    "pad_token_id",
)


def _find_pruneable_heads_and_indices(heads: Any, n_heads: int, head_size: int, already_pruned_heads: set[int]) -> Any:
    """transformers 4.x ``find_pruneable_heads_and_indices`` (only used by head pruning)."""
    import torch

    mask = torch.ones(n_heads, head_size)
    heads = set(heads) - already_pruned_heads
    for head in heads:
        head = head - sum(1 if h < head else 0 for h in already_pruned_heads)
        mask[head] = 0
    mask = mask.view(-1).contiguous().eq(1)
    index = torch.arange(len(mask))[mask].long()
    return heads, index


def _get_extended_attention_mask(self: Any, attention_mask: Any, input_shape: Any, device: Any = None, dtype: Any = None) -> Any:
    """transformers 4.x ``ModuleUtilsMixin.get_extended_attention_mask`` for an encoder (no causal mask)."""
    import torch

    dtype = dtype if dtype is not None else self.dtype
    if attention_mask.dim() == 3:
        extended = attention_mask[:, None, :, :]
    elif attention_mask.dim() == 2:
        extended = attention_mask[:, None, None, :]
    else:
        raise ValueError(f"wrong shape for attention_mask (shape {tuple(attention_mask.shape)})")
    extended = extended.to(dtype=dtype)
    return (1.0 - extended) * torch.finfo(dtype).min


def _get_head_mask(self: Any, head_mask: Any, num_hidden_layers: int, is_attention_chunked: bool = False) -> Any:
    """transformers 4.x ``ModuleUtilsMixin.get_head_mask``."""
    if head_mask is None:
        return [None] * num_hidden_layers
    if head_mask.dim() == 1:
        head_mask = head_mask.unsqueeze(0).unsqueeze(0).unsqueeze(-1).unsqueeze(-1)
        head_mask = head_mask.expand(num_hidden_layers, -1, -1, -1, -1)
    elif head_mask.dim() == 2:
        head_mask = head_mask.unsqueeze(1).unsqueeze(-1).unsqueeze(-1)
    head_mask = head_mask.to(dtype=self.dtype)
    if is_attention_chunked:
        head_mask = head_mask.unsqueeze(-1)
    return head_mask


def _import_bleurt_pytorch() -> types.SimpleNamespace:
    """Import bleurt-pytorch with the transformers-5 shim (see the module docstring); cached."""
    global _BLEURT_MODULES
    if _BLEURT_MODULES is not None:
        return _BLEURT_MODULES
    import transformers
    import transformers.pytorch_utils as pytorch_utils

    added_attr = False
    added_module: str | None = None
    if not hasattr(pytorch_utils, "find_pruneable_heads_and_indices"):
        pytorch_utils.find_pruneable_heads_and_indices = _find_pruneable_heads_and_indices  # type: ignore[attr-defined]
        added_attr = True
    fast_name = "transformers.models.bert.tokenization_bert_fast"
    if fast_name not in sys.modules and importlib.util.find_spec(fast_name) is None:
        alias = types.ModuleType(fast_name)
        alias.BertTokenizerFast = transformers.BertTokenizerFast  # type: ignore[attr-defined]
        sys.modules[fast_name] = alias
        added_module = fast_name
    try:
        from bleurt_pytorch.bleurt import modeling_bleurt, tokenization_bleurt_fast, tokenization_bleurt_sp
        from bleurt_pytorch.bleurt.configuration_bleurt import BleurtConfig
    finally:
        if added_attr:
            del pytorch_utils.find_pruneable_heads_and_indices  # type: ignore[attr-defined]
        if added_module is not None:
            del sys.modules[added_module]

    base = modeling_bleurt.BleurtPreTrainedModel
    if not hasattr(base, "get_extended_attention_mask"):
        base.get_extended_attention_mask = _get_extended_attention_mask
    if not hasattr(base, "get_head_mask"):
        base.get_head_mask = _get_head_mask
    _BLEURT_MODULES = types.SimpleNamespace(
        BleurtConfig=BleurtConfig,
        BleurtForSequenceClassification=modeling_bleurt.BleurtForSequenceClassification,
        BleurtTokenizerFast=tokenization_bleurt_fast.BleurtTokenizerFast,
        BleurtSPTokenizer=tokenization_bleurt_sp.BleurtSPTokenizer,
    )
    return _BLEURT_MODULES


def _checkpoint_file(checkpoint: str, filename: str) -> str | None:
    """Path of ``filename`` in a local folder or hub repo, or None when the checkpoint has no such file."""
    if os.path.isdir(checkpoint):
        path = os.path.join(checkpoint, filename)
        return path if os.path.isfile(path) else None
    from transformers.utils import cached_file

    return cached_file(
        checkpoint,
        filename,
        _raise_exceptions_for_missing_entries=False,
        _raise_exceptions_for_connection_errors=False,
    )


def bleurt_config_from_encoder(encoder_config: dict[str, Any]) -> Any:
    """A one-label ``BleurtConfig`` with the shape of a BERT encoder config (for the seeded-head path)."""
    mods = _import_bleurt_pytorch()
    kwargs = {k: encoder_config[k] for k in _ENCODER_FIELDS if k in encoder_config}
    return mods.BleurtConfig(**kwargs, num_labels=1)


class Bleurt(PairwiseMetric):
    """BLEURT metric object: checkpoint and batching in the constructor, ``compute``/``score_pairs`` on text lists.

    Inputs are tokenised as (reference, candidate) pairs, as bleurt-pytorch documents, and
    truncated to the model's limit (``min(max_length, tokenizer limit, max_position_embeddings)``).
    Empty candidates score 0 without running the model (see :class:`PairwiseMetric`).
    """

    name = "bleurt"

    def __init__(
        self,
        checkpoint: str | os.PathLike[str] = PAPER_BLEURT_CHECKPOINT,
        *,
        batch_size: int = 16,
        device: str | None = None,
        max_length: int | None = None,
        untrained_head_seed: int | None = None,
        protocol: Protocol = "max",
    ):
        super().__init__(protocol=protocol)
        import torch
        from transformers import PretrainedConfig

        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.checkpoint = str(checkpoint)
        self.batch_size = int(batch_size)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.untrained_head_seed = untrained_head_seed
        raw_config, _ = PretrainedConfig.get_config_dict(self.checkpoint)
        model_type = raw_config.get("model_type")
        architectures = raw_config.get("architectures") or []
        num_labels = raw_config.get("num_labels", len(raw_config.get("id2label") or {}) or None)

        route_transformers_bars()
        if model_type == "bleurt":
            self.kind = "bleurt"
            mods = _import_bleurt_pytorch()
            model = mods.BleurtForSequenceClassification.from_pretrained(self.checkpoint)
            tokenizer = self._bleurt_tokenizer(mods)
        elif any(a.endswith("ForSequenceClassification") for a in architectures) and num_labels == 1:
            self.kind = "sequence-regression"
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            model = AutoModelForSequenceClassification.from_pretrained(self.checkpoint)
            tokenizer = AutoTokenizer.from_pretrained(self.checkpoint)
        elif model_type == "bert":
            if untrained_head_seed is None:
                raise ValueError(
                    f"{self.checkpoint!r} is a bare BERT encoder, not a BLEURT checkpoint: it has no trained "
                    "regression head. Pass untrained_head_seed=<int> to attach a deterministically seeded head "
                    "(exercises the BLEURT code path; the scores are meaningless), or use a BLEURT checkpoint."
                )
            self.kind = "encoder+seeded-head"
            mods = _import_bleurt_pytorch()
            model = self._encoder_with_seeded_head(mods, raw_config, int(untrained_head_seed))
            tokenizer = mods.BleurtTokenizerFast.from_pretrained(self.checkpoint)
        else:
            raise ValueError(
                f"cannot score BLEURT with {self.checkpoint!r} (model_type={model_type!r}, architectures={architectures}): "
                "expected a BLEURT checkpoint, a one-label *ForSequenceClassification checkpoint, or a bare BERT "
                "encoder with untrained_head_seed"
            )

        model.eval()
        self._model = model.to(self.device)
        self._tokenizer = tokenizer
        limits = [int(model.config.max_position_embeddings)]
        if isinstance(tokenizer.model_max_length, int) and tokenizer.model_max_length > 0:
            limits.append(tokenizer.model_max_length)
        if max_length is not None:
            limits.append(int(max_length))
        self.max_length = min(limits)
        self.tokenizer_class = type(tokenizer).__name__

    def _bleurt_tokenizer(self, mods: types.SimpleNamespace) -> Any:
        if _checkpoint_file(self.checkpoint, "spm.model") is not None:
            if importlib.util.find_spec("google.protobuf") is None:
                raise ImportError(
                    f"{self.checkpoint!r} uses a SentencePiece tokenizer (spm.model); under transformers 5 loading it "
                    "needs the protobuf package: pip install protobuf"
                )
            return mods.BleurtSPTokenizer.from_pretrained(self.checkpoint)
        if _checkpoint_file(self.checkpoint, "vocab.txt") or _checkpoint_file(self.checkpoint, "tokenizer.json"):
            return mods.BleurtTokenizerFast.from_pretrained(self.checkpoint)
        raise ValueError(f"{self.checkpoint!r} has neither spm.model nor vocab.txt/tokenizer.json for its tokenizer")

    def _encoder_with_seeded_head(self, mods: types.SimpleNamespace, raw_config: dict[str, Any], seed: int) -> Any:
        import torch
        from transformers import AutoModel

        encoder = AutoModel.from_pretrained(self.checkpoint)
        model = mods.BleurtForSequenceClassification(bleurt_config_from_encoder(raw_config))
        missing, unexpected = model.bleurt.load_state_dict(encoder.state_dict(), strict=False)
        # Buffers that only one side registers are fine; any missing *weight* is not.
        missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
        unexpected = [k for k in unexpected if not k.endswith(("position_ids", "token_type_ids"))]
        if missing or unexpected:
            raise ValueError(f"{self.checkpoint!r} does not have BERT's layout: missing {missing[:5]}, unexpected {unexpected[:5]}")
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            weight = torch.randn(model.classifier.weight.shape, generator=generator) * model.config.initializer_range
            model.classifier.weight.copy_(weight)
            model.classifier.bias.zero_()
        return model

    @property
    def comparable_to_published(self) -> bool:
        return self.kind == "bleurt" and self.checkpoint == PAPER_BLEURT_CHECKPOINT

    def _config(self) -> dict[str, Any]:
        return {
            **library_config("bleurt-pytorch"),
            "transformers_version": importlib.metadata.version("transformers"),
            "checkpoint": self.checkpoint,
            "kind": self.kind,
            "untrained_head_seed": self.untrained_head_seed,
            "tokenizer_class": self.tokenizer_class,
            "input_order": "(reference, candidate)",
            "max_length": self.max_length,
            "truncation": "longest_first",
            "batch_size": self.batch_size,
            "device": self.device,
            "comparable_to_published": self.comparable_to_published,
        }

    def score_pairs(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        """BLEURT of aligned (candidate, reference) pairs, as given (``compute`` is what zeroes empty candidates)."""
        import torch

        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} candidates for {len(references)} references")
        scores: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(predictions), self.batch_size):
                refs = [str(r) for r in references[start : start + self.batch_size]]
                cands = [str(c) for c in predictions[start : start + self.batch_size]]
                inputs = self._tokenizer(
                    refs,
                    cands,
                    padding="longest",
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                logits = self._model(**inputs).logits
                scores.extend(float(v) for v in logits[:, 0].tolist())
        return scores
