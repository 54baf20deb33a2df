"""The multiple-choice scorer of the narrative cloze tasks (Chakrabarty et al., TACL 2022).

Each option is encoded separately with the narrative, ``[CLS] N [SEP] C_i [SEP]`` (the
tokenizer's own start and separator tokens, ``<s> … </s>`` for RoBERTa/MPNet; the narrative
without its ``<b>`` markup); the start token's final representation goes through dropout 0.1
and a linear layer to one score; a softmax over the options and cross-entropy train it. Any
encoder that ``AutoModel`` loads works.

Variants (``method``):

* ``mc``: narrative + continuation.
* ``mc-continuation``: the continuation alone, to measure annotation artifacts.
* ``mc-meaning``: ``[CLS] M [SEP] N [SEP] C_i [SEP]`` with M the dataset's own gloss of the
  expression (the idiom's dictionary meaning, the simile's property; present in every split,
  test included). Not one of the paper's models: a cheap knowledge source, reported separately.
* ``mc-context`` / ``mc-literal`` (knowledge-enhanced): for each of up to 12 inferences,
  ``[CLS] Inf_j [SEP] N [SEP] C_i [SEP]`` is scored, and option i's score is the sum over j.
  All 12 × 2 sequences of an item go through the encoder in one batch; when a sequence is too
  long the narrative is cut first (from its start: its end holds the expression), then the
  inference, then the continuation.

A saved model is the encoder's and tokenizer's ``save_pretrained`` directory plus
``choice_head.safetensors`` (the linear scorer) and ``figlang.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
from torch import nn

from figlang.core.errors import FiglangError
from figlang.core.io import iter_jsonl
from figlang.data.records import ClozeRecord, strip_markup
from figlang.methods.base import Prediction
from figlang.backends.hf_quiet import quiet_cache_rename
from figlang.core.progress import route_transformers_bars
from figlang.backends.loading import resolve
from figlang.backends.prefix import shared_prefix_length
from figlang.backends.revision import directory_revision
from figlang.methods.trained.common import (
    FIGLANG_JSON,
    KNOWLEDGE,
    HFModel,
    SegmentEncoderModel,
    no_inferences,
    read_figlang_json,
    relation_of,
    special_ids,
)

HEAD_FILE = "choice_head.safetensors"
DEFAULT_MAX_INFERENCES = 12


class ChoiceScorer(nn.Module):
    """encoder → pooled representation → dropout → linear → one score per sequence.

    ``pooling="first"`` takes the start token (encoders: the paper's setup); ``"last"`` takes the
    last real token, which is the only one that has seen the whole sequence in a decoder-only LM.

    ``frozen=True`` trains the head alone on a fixed encoder (a linear probe): the encoder never
    changes, so each distinct sequence is encoded once and its pooled vector kept
    (``features``); later epochs and dev evaluations cost only the head. For a decoder-only
    encoder, the sequences of one item that share a prefix (the narrative, ahead of each
    option) encode it once and run the options from its key/value cache.
    """

    def __init__(self, encoder: HFModel, dropout: float = 0.1, pooling: str | None = None, frozen: bool = False) -> None:
        super().__init__()
        self.encoder = encoder
        self.pooling = pooling or default_pooling(encoder.config)
        if self.pooling not in ("first", "last"):
            raise FiglangError(f"unknown pooling {self.pooling!r}: first or last")
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, 1)
        self.frozen = bool(frozen)
        self.features: dict[bytes, torch.Tensor] = {}  # frozen: sequence key → pooled vector (float32, CPU)
        self.min_shared_prefix = 16  # tokens; below this a group is not worth a cache
        if self.frozen:
            self.encoder.requires_grad_(False)
            self.encoder.eval()

    def train(self, mode: bool = True) -> ChoiceScorer:
        super().train(mode)
        if self.frozen:  # a fixed encoder has no dropout: its features are the same in every epoch
            self.encoder.eval()
        return self

    def trainable_state_dict(self) -> dict[str, torch.Tensor]:
        """What a checkpoint must keep: everything, or only the head when the encoder is frozen."""
        state = self.state_dict()
        return {k: v for k, v in state.items() if not (self.frozen and k.startswith("encoder."))}

    def _encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        states = self.encoder(**kwargs).last_hidden_state
        if self.pooling == "last":  # right-padded: the last real token of each row
            return states[torch.arange(states.shape[0], device=states.device), attention_mask.sum(-1) - 1]
        return states[:, 0]

    def _encode_shared(self, rows: list[list[int]], device: torch.device) -> list[torch.Tensor]:
        """Last-token vectors of decoder rows; consecutive rows sharing a prefix run it once (its KV cache)."""
        quiet_cache_rename()
        out: list[torch.Tensor | None] = [None] * len(rows)
        plain: list[int] = []
        i = 0
        while i < len(rows):
            j, p = i + 1, len(rows[i]) - 1
            while j < len(rows):
                q = min(p, shared_prefix_length((rows[i], rows[j]), keep=1))
                if q < self.min_shared_prefix:
                    break
                p, j = q, j + 1
            if j - i < 2:
                plain.append(i)
                i += 1
                continue
            group = list(range(i, j))
            prefix = torch.tensor([rows[i][:p]], dtype=torch.long, device=device)
            cache = self.encoder(input_ids=prefix, attention_mask=torch.ones_like(prefix), use_cache=True).past_key_values
            cache.batch_repeat_interleave(len(group))
            tails = [rows[g][p:] for g in group]
            ids = pad(tails, 0).to(device)
            tail_mask = pad([[1] * len(t) for t in tails], 0).to(device)
            mask = torch.cat([torch.ones(len(group), p, dtype=torch.long, device=device), tail_mask], 1)
            states = self.encoder(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True).last_hidden_state
            for k, g in enumerate(group):
                out[g] = states[k, len(tails[k]) - 1]
            i = j
        if plain:
            ids = pad([rows[g] for g in plain], 0).to(device)
            mask = pad([[1] * len(rows[g]) for g in plain], 0).to(device)
            vecs = self._encode(ids, mask, None)
            for k, g in enumerate(plain):
                out[g] = vecs[k]
        return out  # type: ignore[return-value]

    def pooled(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """One vector per row; a frozen encoder's come from (and go to) ``features``."""
        if not self.frozen:
            return self._encode(input_ids, attention_mask, token_type_ids)
        lengths = attention_mask.sum(-1).tolist()
        ids_cpu = input_ids.cpu()
        types_cpu = token_type_ids.cpu() if token_type_ids is not None else None
        keys = []
        for r, n in enumerate(lengths):
            key = ids_cpu[r, :n].numpy().tobytes()
            if types_cpu is not None:
                key += b"|" + types_cpu[r, :n].numpy().tobytes()
            keys.append(key)
        missing = list({k: r for r, k in enumerate(keys) if k not in self.features}.values())  # one row per distinct sequence
        if missing:
            with torch.no_grad():
                if self.pooling == "last" and types_cpu is None:
                    # sorted, rows that share a prefix are neighbours: Inf_j N C_1 next to Inf_j N C_2
                    rows = sorted((ids_cpu[r, : lengths[r]].tolist(), r) for r in missing)
                    missing = [r for _, r in rows]
                    vecs = self._encode_shared([ids for ids, _ in rows], input_ids.device)
                else:
                    sub = torch.tensor(missing, device=input_ids.device)
                    vecs = list(self._encode(input_ids[sub], attention_mask[sub], None if token_type_ids is None else token_type_ids[sub]))
            for r, v in zip(missing, vecs):
                self.features[keys[r]] = v.detach().float().cpu()
        return torch.stack([self.features[k] for k in keys]).to(input_ids.device)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        hidden = self.pooled(input_ids, attention_mask, token_type_ids)
        return self.head(self.dropout(hidden.to(self.head.weight.dtype))).squeeze(-1).float()


def keep_first_layers(encoder: nn.Module, n: int) -> nn.Module:
    """Cut a transformer to its first ``n`` layers (its final norm kept), in place.

    A probe reads the last kept layer: in a decoder LM the middle layers carry more of what a
    plausibility probe needs than the last, which is shaped for the next token (and the cut
    halves the cost).
    """
    holder: nn.Module | None = None
    name = ""  # the layer list's attribute on holder (read only once holder is found)
    for path in ("layers", "model.layers", "language_model.layers", "encoder.layer", "transformer.h", "h", "layer"):
        obj = encoder
        try:
            *parents, last = path.split(".")
            for part in parents:
                obj = getattr(obj, part)
            if isinstance(getattr(obj, last), nn.ModuleList):
                holder, name = obj, last
                break
        except AttributeError:
            continue
    if holder is None:
        raise FiglangError(f"cannot find the layer list of {type(encoder).__name__} to keep its first {n} layers")
    layers = getattr(holder, name)
    if not 1 <= n <= len(layers):
        raise FiglangError(f"base_layers must be between 1 and {len(layers)} for this model, got {n}")
    setattr(holder, name, nn.ModuleList(list(layers)[:n]))
    config = getattr(encoder, "config", None)
    for cfg in (config, getattr(config, "text_config", None)):
        if cfg is None or not hasattr(cfg, "num_hidden_layers"):
            continue
        cfg.num_hidden_layers = n
        if isinstance(getattr(cfg, "layer_types", None), list):
            cfg.layer_types = cfg.layer_types[:n]
    return encoder


_HEAD_KEYS = ("lm_head.", "cls.", "classifier.", "score.", "qa_outputs.")


def load_encoder(path: str) -> nn.Module:
    """``AutoModel.from_pretrained`` without transformers' load report for a dropped task head.

    Loading a causal or masked LM checkpoint as the bare encoder leaves its ``lm_head`` unused, which
    transformers reports as a table of UNEXPECTED keys on every load; that is by design here. Any other
    unexpected or missing key still gets a warning, ours.
    """
    import logging

    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    route_transformers_bars()  # its "Loading weights" bar as a line of figlang's display (a shipped head's first load)
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        encoder, info = AutoModel.from_pretrained(path, output_loading_info=True)
    finally:
        hf_logging.set_verbosity(level)
    unexpected = sorted(k for k in info.get("unexpected_keys", ()) if not k.startswith(_HEAD_KEYS))
    missing = sorted(info.get("missing_keys", ()))
    if unexpected or missing:
        logging.getLogger(__name__).warning(
            "loading %s as an encoder: %d missing key(s) %s, %d unexpected key(s) %s",
            path,
            len(missing),
            missing[:5],
            len(unexpected),
            unexpected[:5],
        )
    return encoder


_FROZEN_ENCODERS: dict[tuple[str, int, bool], nn.Module] = {}


def frozen_encoder(path: str, layers: int, bf16: bool) -> nn.Module:
    """A frozen base cut to its first ``layers`` (0: all), loaded once per process and shared by the heads on it.

    A frozen base never changes, so two probes on the same base and layer (the idiom and simile heads of the
    suite) need one copy of a 1.5B model, not two loads of it. :func:`clear_frozen_encoders` frees them.
    """
    key = (str(Path(path).resolve()), int(layers), bool(bf16))
    encoder = _FROZEN_ENCODERS.get(key)
    if encoder is not None and module_device(encoder).type != "cpu":  # moved by a load onto a GPU: load afresh
        encoder = None
    if encoder is None:
        encoder = load_encoder(path)
        if layers:
            keep_first_layers(encoder, layers)
        if bf16:
            encoder.to(torch.bfloat16)
        encoder.requires_grad_(False)
        encoder.eval()
        _FROZEN_ENCODERS[key] = encoder
    return encoder


def clear_frozen_encoders() -> None:
    """Forget the shared frozen bases (their memory is freed once no loaded model holds them)."""
    _FROZEN_ENCODERS.clear()


def frozen_base_path(meta: dict[str, Any]) -> str:
    """Where a frozen-encoder model's base lives now: its recorded path, else its reference resolved again.

    The weights must be the ones trained on (the head was fitted to their features): when the
    training run recorded a content revision, the base found now must have the same.
    """
    base = meta.get("base_model") or {}
    path = base.get("path")
    if not (path and Path(path).is_dir()):
        reference = base.get("reference")
        try:
            path = resolve(reference).path if reference else None
        except Exception as err:  # noqa: BLE001 - any resolver failure: say what to install
            raise FiglangError(
                f"this model trained a head on the frozen base {reference!r}, which is not available here ({err}); "
                f"install it (figlang models install {reference}) or put it at {base.get('path')}"
            ) from err
    if not path:
        raise FiglangError("figlang.json names no base model for this frozen-encoder model")
    revision, now = base.get("revision"), None
    if revision and str(revision).startswith("sha256:") and Path(path).is_dir():
        now = directory_revision(path)
    elif revision and base.get("source") == "catalog":
        now = resolve(base["reference"]).revision
    if now is not None and now != revision:
        raise FiglangError(f"the frozen base at {path} is not the one this head was trained on (revision {now} != {revision})")
    return str(path)


def default_pooling(config: Any) -> str:
    """'last' for decoder-only language models (their first token sees nothing after it), else 'first'."""
    return "last" if is_decoder_only(config) else "first"


def is_decoder_only(config: Any) -> bool:
    """A causal LM family with no masked-LM form (GPT-2, Llama, Qwen, Gemma; not BERT/RoBERTa/MPNet, not T5)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_MASKED_LM_MAPPING_NAMES

    model_type = getattr(config, "model_type", None)
    if getattr(config, "is_encoder_decoder", False) or model_type is None:
        return False
    text_type = getattr(getattr(config, "text_config", None), "model_type", None)
    return any(t in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and t not in MODEL_FOR_MASKED_LM_MAPPING_NAMES for t in (model_type, text_type) if t)


def pad(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), value, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out


def module_device(module: nn.Module) -> torch.device:
    """Where a model's weights live (cpu unless it was moved: ``device=cuda``)."""
    try:
        return next(module.parameters()).device
    except StopIteration:  # pragma: no cover - a model without weights
        return torch.device("cpu")


def to_device(batch: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """The batch's tensors on ``device`` (collate builds them on the CPU)."""
    if device.type == "cpu":
        return batch
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def autocast(bf16: bool, device: torch.device | str = "cpu"):
    device_type = device.type if isinstance(device, torch.device) else str(device)
    return torch.autocast(device_type, dtype=torch.bfloat16) if bf16 else nullcontext()


def scores_by_length(
    model: Any,
    feats: Sequence[dict[str, Any]],
    batch_size: int,
    keep: Callable[[list[float], dict[str, Any]], list[float]] = lambda row, feat: row,
) -> list[list[float]]:
    """A trained model's score rows per feature, in the features' order, computed in batches of similar length (less
    padding); ``keep`` cuts each row to what the feature has (a cloze item's options)."""
    model.module.eval()
    order = sorted(range(len(feats)), key=lambda i: feats[i]["length"])
    out: list[list[float] | None] = [None] * len(feats)
    for start in range(0, len(order), max(1, batch_size)):
        idx = order[start : start + batch_size]
        scores = model.scores(model.collate([feats[i] for i in idx]))
        for row, i in zip(scores.tolist(), idx):
            out[i] = keep(row, feats[i])
    return out  # type: ignore[return-value]


def save_pretrained(module: Any, tokenizer: Any, directory: str | Path) -> Path:
    """``save_pretrained`` of a Transformers model and its tokenizer into ``directory`` (made when missing)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    module.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory


class ChoiceScorerModel(SegmentEncoderModel):
    """A multiple-choice scorer with its tokenizer and input format: featurize, collate, loss, predict, save, load."""

    shape = "cloze"
    model_class = "choice-scorer"

    def __init__(
        self,
        module: ChoiceScorer,
        tokenizer: Any,
        method: str,
        max_length: int = 256,
        max_inferences: int = DEFAULT_MAX_INFERENCES,
        bf16: bool = False,
        inference_floor: int = 8,
        narrative_floor: int = 32,
    ) -> None:
        kinds = "a multiple-choice method (choose mc, mc-continuation, mc-meaning, mc-context, mc-literal)"
        super().__init__(module, tokenizer, method, kinds)
        self.knowledge = KNOWLEDGE.get(method)
        self.max_length = int(max_length)
        self.max_inferences = int(max_inferences)
        self.bf16 = bool(bf16)
        self.inference_floor = int(inference_floor)
        self.narrative_floor = int(narrative_floor)
        self.cls_id, self.sep_id = special_ids(tokenizer, decoder_only=module.pooling == "last")
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.use_token_types = getattr(module.encoder.config, "type_vocab_size", 1) > 1
        self._ids_cache: dict[str, list[int]] = {}

    # --- construction ------------------------------------------------------------------------------
    @classmethod
    def from_base(
        cls, path: str, method: str, dropout: float = 0.1, frozen: bool = False, base_layers: int | None = None, **options: Any
    ) -> ChoiceScorerModel:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path)
        encoder = load_encoder(path)
        if base_layers:
            keep_first_layers(encoder, base_layers)
        if frozen and options.get("bf16"):  # a fixed encoder runs in bfloat16 outright (no autocast copies of the weights)
            encoder.to(torch.bfloat16)
        return cls(ChoiceScorer(encoder, dropout, frozen=frozen), tokenizer, method, **options)

    @classmethod
    def load(cls, directory: str | Path, **overrides: Any) -> ChoiceScorerModel:
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        meta = read_figlang_json(directory)
        fmt = meta["input_format"]
        frozen = bool(fmt.get("frozen_base"))
        base_path = frozen_base_path(meta) if frozen else str(directory)
        # a shipped head (figlang:NAME) carries no tokenizer: a frozen base's own is the one it was trained with
        has_tokenizer = (Path(directory) / "tokenizer_config.json").is_file()
        tokenizer = AutoTokenizer.from_pretrained(str(directory) if has_tokenizer or not frozen else base_path)
        if frozen:
            encoder = frozen_encoder(base_path, int(fmt.get("base_layers") or 0), bool(meta.get("training", {}).get("bf16")))
        else:
            encoder = load_encoder(base_path)
        module = ChoiceScorer(encoder, fmt.get("dropout", 0.1), fmt.get("pooling", "first"), frozen=frozen)
        head = load_file(str(Path(directory) / HEAD_FILE))
        module.head.load_state_dict({"weight": head["weight"], "bias": head["bias"]})
        module.eval()
        options = {
            "max_length": fmt["max_length"],
            "max_inferences": fmt.get("max_inferences") or DEFAULT_MAX_INFERENCES,
            "bf16": meta.get("training", {}).get("bf16", False),
            "inference_floor": fmt.get("inference_floor", 8),
            "narrative_floor": fmt.get("narrative_floor", 32),
        }
        options.update({k: v for k, v in overrides.items() if v is not None})
        return cls(module, tokenizer, meta["method"], **options)

    def save(self, directory: str | Path) -> None:
        """``save_pretrained`` of encoder and tokenizer, plus the head (figlang.json is the trainer's)."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if not self.module.frozen:  # a frozen encoder is the base model itself: figlang.json names it
            self.module.encoder.save_pretrained(str(directory))
        self.tokenizer.save_pretrained(str(directory))
        head = self.module.head
        save_file(
            {"weight": head.weight.detach().contiguous().clone(), "bias": head.bias.detach().contiguous().clone()},
            str(directory / HEAD_FILE),
        )

    def describe(self) -> dict[str, Any]:
        """The input format, as figlang.json records it."""
        sep = self.tokenizer.convert_ids_to_tokens(self.sep_id)
        cls_tok = self.tokenizer.convert_ids_to_tokens(self.cls_id)
        if self.method == "mc-continuation":
            template = f"{cls_tok} {{continuation}} {sep}"
        elif self.method == "mc-meaning":
            template = f"{cls_tok} {{meaning}} {sep} {{narrative}} {sep} {{continuation}} {sep}"
        elif self.knowledge:
            template = f"{cls_tok} {{inference_j}} {sep} {{narrative}} {sep} {{continuation}} {sep}"
        else:
            template = f"{cls_tok} {{narrative}} {sep} {{continuation}} {sep}"
        return {
            "template": template,
            "separator": sep,
            "start_token": cls_tok,
            "narrative": "markup (<b>…</b>) removed",
            "knowledge": self.knowledge,
            "max_inferences": self.max_inferences if self.knowledge else None,
            "aggregate": "sum over inferences" if self.knowledge else None,
            "max_length": self.max_length,
            "truncation": "narrative first (from its start, keeping the end), then inference/meaning, then continuation",
            "narrative_floor": self.narrative_floor,
            "inference_floor": self.inference_floor,
            "representation": "start token of the last layer" if self.module.pooling == "first" else "last real token of the last layer",
            "pooling": self.module.pooling,
            "frozen_base": self.module.frozen,
            "base_layers": self.module.encoder.config.num_hidden_layers if self.module.frozen else None,
            "encoder": "the base model, unchanged and not copied (figlang.json base_model)"
            if self.module.frozen
            else "fine-tuned, saved here",
            "dropout": self.module.dropout.p,
            "score": "linear(hidden, 1); softmax over the options; cross-entropy",
            "token_type_ids": "1 from the continuation on" if self.use_token_types else "not used",
        }

    # --- features ------------------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        ids = self._ids_cache.get(text)
        if ids is None:
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            if len(self._ids_cache) < 200_000:
                self._ids_cache[text] = ids
        return ids

    def inferences_of(self, record: ClozeRecord, subset: Sequence[int] | None = None) -> list[str]:
        if not self.knowledge:
            return []
        infs = list(record.inferences.get(self.knowledge, ()))[: self.max_inferences]
        if subset is not None:
            available = len(infs)
            infs = [infs[j] for j in subset if 0 <= j < available]
            if available and not infs:  # the record has inferences, just none in these slots (predict marks such items)
                raise FiglangError(self.missing_slots(record, subset) or f"record {record.id!r}: no inference in the selected slots")
        if not infs:
            raise no_inferences(record.id, self.knowledge, self.method)
        return infs

    def unusable(self, record: ClozeRecord) -> str | None:
        """Why a knowledge model cannot score ``record`` at all (no inference of its kind), or None."""
        if self.knowledge and not record.inferences.get(self.knowledge):
            return (
                f"record {record.id!r} has no {self.knowledge} inferences (the knowledge provider found none): "
                "no knowledge-enhanced score, marked invalid"
            )
        return None

    def missing_slots(self, record: ClozeRecord, subset: Sequence[int] | None) -> str | None:
        """Why the inference slots ``subset`` (0-based) select nothing from ``record`` although it has inferences
        (it has fewer than the slot asks for: 21 idiom dev records have 9–11 literal ones); None when at least one
        slot exists, when no subset is given, or when the record has no inferences at all (that is missing data)."""
        if not self.knowledge or subset is None:
            return None
        n = min(len(record.inferences.get(self.knowledge, ())), self.max_inferences)
        if n == 0 or any(0 <= j < n for j in subset):
            return None
        slots = ", ".join(str(j + 1) for j in subset)
        return (
            f"record {record.id!r} has {n} {self.knowledge} inferences, none in the selected slot(s) {slots}: "
            "skipped for this slot (marked invalid)"
        )

    def sequence(self, narrative: str | None, continuation: str, inference: str | None = None) -> tuple[list[int], list[int]]:
        """The token ids (and token types) of one scored sequence."""
        cont = self._ids(continuation)
        if narrative is None:  # continuation only
            segments, order, floors, ends = [cont], [0], None, [False]
        elif inference is None:
            segments, order, floors, ends = [self._ids(narrative), cont], [0, 1], [0, 0], [True, False]
        else:
            segments = [self._ids(inference), self._ids(narrative), cont]
            order, floors, ends = [1, 0, 2], [self.inference_floor, self.narrative_floor, 0], [False, True, False]
        second = len(segments) - 1 if self.use_token_types and len(segments) > 1 else None
        return self.assemble(segments, order, floors, keep_end=ends, second_segment_from=second)

    def featurize(self, record: ClozeRecord, inference_subset: Sequence[int] | None = None) -> dict[str, Any]:
        narrative = None if self.method == "mc-continuation" else strip_markup(record.narrative)
        infs: Sequence[str | None] = self.inferences_of(record, inference_subset) if self.knowledge else [None]
        if self.method == "mc-meaning":
            infs = [str(record.meaning or "")]  # 8 simile train records have no property: an empty segment
        seqs: list[tuple[list[int], list[int]]] = []
        choice: list[int] = []
        for k, option in enumerate(record.options):
            for inf in infs:
                seqs.append(self.sequence(narrative, option, inf))
                choice.append(k)
        label = record.label if (record.label is not None and not record.label_is_placeholder) else -100
        return {
            "id": record.id,
            "seqs": seqs,
            "choice": choice,
            "n_options": len(record.options),
            "label": label,
            "length": sum(len(s[0]) for s in seqs),
        }

    @staticmethod
    def _check_cloze(records: Sequence[Any]) -> None:
        for r in records:
            if not isinstance(r, ClozeRecord):
                raise FiglangError(f"the multiple-choice scorer answers cloze records, got {type(r).__name__}")

    def features(self, records: Sequence[ClozeRecord]) -> list[dict[str, Any]]:
        self._check_cloze(records)
        return [self.featurize(r) for r in records]

    def collate(self, feats: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [s[0] for f in feats for s in f["seqs"]]
        types = [s[1] for f in feats for s in f["seqs"]]
        kmax = max(f["n_options"] for f in feats)
        slot = [i * kmax + k for i, f in enumerate(feats) for k in f["choice"]]
        valid = torch.zeros(len(feats), kmax, dtype=torch.bool)
        for i, f in enumerate(feats):
            valid[i, : f["n_options"]] = True
        input_ids = pad(ids, self.pad_id)
        batch = {
            "input_ids": input_ids,
            "attention_mask": pad([[1] * len(r) for r in ids], 0),
            "slot": torch.tensor(slot, dtype=torch.long),
            "valid": valid,
            "labels": torch.tensor([f["label"] for f in feats], dtype=torch.long),
        }
        if self.use_token_types:
            batch["token_type_ids"] = pad(types, 0)
        return batch

    def scores(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Option scores [items, options]: the sum of each option's sequence scores (-inf where no option)."""
        device = module_device(self.module)
        batch = to_device(batch, device)
        with autocast(self.bf16, device):
            seq = self.module(batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"))
        valid = batch["valid"]
        flat = torch.zeros(valid.numel(), dtype=seq.dtype, device=seq.device).index_add(0, batch["slot"], seq)
        out = flat.view(valid.shape)
        return out.masked_fill(~valid, float("-inf"))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        scores = self.scores(batch)
        return nn.functional.cross_entropy(scores, batch["labels"].to(scores.device), ignore_index=-100)

    # --- prediction ----------------------------------------------------------------------------------
    @torch.no_grad()
    def predict_features(self, feats: Sequence[dict[str, Any]], batch_size: int = 16) -> list[list[float]]:
        """Option scores per feature, in order (batched by length to save padding)."""
        return scores_by_length(self, feats, batch_size, lambda row, feat: row[: feat["n_options"]])

    def predict(
        self, records: Sequence[ClozeRecord], batch_size: int = 16, inference_subset: Sequence[int] | None = None
    ) -> list[Prediction]:
        """The chosen option per record. With ``inference_subset`` (0-based inference slots) a record that has fewer
        inferences than the slots ask for gets an invalid prediction saying so (the run goes on). A knowledge model
        given some records without any inference (a provider found nothing for a rare word) marks those invalid
        too; only when no record has any is that an error (the inference files are missing, not one item)."""
        self._check_cloze(records)
        bare = [self.unusable(r) for r in records]
        if records and all(bare):
            self.inferences_of(records[0])  # raises the error that says which files are missing
        skipped = [b or self.missing_slots(r, inference_subset) for r, b in zip(records, bare)]
        feats = [self.featurize(r, inference_subset) for r, why in zip(records, skipped) if why is None]
        scores = iter(self.predict_features(feats, batch_size))
        preds = []
        for r, why, b in zip(records, skipped, bare):
            if why is not None:
                meta: dict[str, Any] = (
                    {"skipped": "no inferences"}
                    if b
                    else {"skipped": "inference slot missing", "inference_slots": [j + 1 for j in inference_subset or ()]}
                )
                meta["inferences"] = len(r.inferences.get(self.knowledge or "", ()))
                preds.append(Prediction(id=r.id, prediction=None, valid=False, error=why, meta=meta))
                continue
            s = next(scores)
            best = max(range(len(s)), key=lambda k: (s[k], -k))  # first index on ties
            preds.append(Prediction(id=r.id, prediction=best, scores=[float(x) for x in s]))
        return preds


# --- the paper's Table 3: which relation helps where the baseline fails ----------------------------------


def relation_groups(record: ClozeRecord, kind: str, max_inferences: int = DEFAULT_MAX_INFERENCES) -> dict[str, list[int]]:
    """relation -> indexes of the record's inferences of that relation."""
    groups: dict[str, list[int]] = {}
    for j, inf in enumerate(list(record.inferences.get(kind, ()))[:max_inferences]):
        groups.setdefault(relation_of(inf), []).append(j)
    return groups


def relation_analysis(
    model: ChoiceScorerModel | str | Path,
    records: Sequence[ClozeRecord],
    baseline_correct: dict[str, bool] | None = None,
    *,
    by: str = "relation",
    batch_size: int = 16,
) -> dict[str, Any]:
    """Accuracy of a knowledge-enhanced model fed one relation (or one inference slot) at a time.

    ``baseline_correct`` (record id → whether the baseline got it right) restricts the analysis
    to the items the baseline got wrong, as in the paper's Table 3; None analyses every item.
    ``by='relation'`` feeds the inferences of one relation (xNeed, HasProperty …) summed;
    ``by='inference'`` feeds inference slot j alone.
    """
    if not isinstance(model, ChoiceScorerModel):
        model = ChoiceScorerModel.load(model)
    if not model.knowledge:
        raise FiglangError(f"relation analysis needs a knowledge-enhanced model (mc-context/mc-literal), not {model.method!r}")
    if by not in ("relation", "inference"):
        raise FiglangError(f"by must be 'relation' or 'inference', got {by!r}")
    items = [r for r in records if r.label is not None and not r.label_is_placeholder]
    if baseline_correct is not None:
        missing = [r.id for r in items if r.id not in baseline_correct]
        if missing:
            raise FiglangError(f"the baseline has no prediction for {len(missing)} items (first {missing[0]!r})")
        items = [r for r in items if not baseline_correct[r.id]]
    buckets: dict[str, list[tuple[ClozeRecord, list[int]]]] = {}
    for r in items:
        if by == "relation":
            for rel, idx in relation_groups(r, model.knowledge, model.max_inferences).items():
                buckets.setdefault(rel, []).append((r, idx))
        else:
            n = min(len(r.inferences.get(model.knowledge, ())), model.max_inferences)
            for j in range(n):
                buckets.setdefault(f"inference_{j + 1:02d}", []).append((r, [j]))
    result: dict[str, Any] = {}
    for name in sorted(buckets):
        pairs = buckets[name]
        feats = [model.featurize(r, idx) for r, idx in pairs]
        scores = model.predict_features(feats, batch_size)
        correct = [max(range(len(s)), key=lambda k: (s[k], -k)) == r.label for (r, _), s in zip(pairs, scores)]
        result[name] = {"accuracy": sum(correct) / len(correct), "n": len(correct), "n_correct": sum(correct)}
    all_feats = [model.featurize(r) for r in items]
    all_scores = model.predict_features(all_feats, batch_size) if all_feats else []
    all_correct = [max(range(len(s)), key=lambda k: (s[k], -k)) == r.label for r, s in zip(items, all_scores)]
    return {
        "knowledge": model.knowledge,
        "by": by,
        "items": len(items),
        "restricted_to_baseline_errors": baseline_correct is not None,
        "all_inferences": {"accuracy": (sum(all_correct) / len(all_correct)) if all_correct else None, "n": len(all_correct)},
        "per_group": result,
    }


def baseline_correctness(predictions_jsonl: str | Path) -> dict[str, bool]:
    """record id → correct, from a `figlang eval --out` predictions.jsonl (its 'correct' column)."""
    out: dict[str, bool] = {}
    for _, row in iter_jsonl(predictions_jsonl):
        if "correct" not in row:
            raise FiglangError(f"{predictions_jsonl}: rows need a 'correct' field (write it with `figlang eval --out DIR`)")
        out[str(row["id"])] = bool(row["correct"])
    return out


__all__ = ["ChoiceScorer", "ChoiceScorerModel", "FIGLANG_JSON", "HEAD_FILE", "baseline_correctness", "relation_analysis", "relation_groups"]
