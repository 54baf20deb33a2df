"""A local Hugging Face Transformers model behind the LanguageModel interface.

Kinds
-----
``causal``      score continuations, generate (GPT-2, Llama, Qwen, Gemma, SmolLM …)
``seq2seq``     score a target given a source, generate (T5, UnifiedQA, BART)
``masked``      fill a blank with candidate words (:meth:`score_masked`; BERT, RoBERTa, DeBERTa)
``classifier``  label probabilities of a text (pair) (:meth:`classify`; roberta-large-mnli …)
``encoder``     a bare encoder (sentence encoders): loads, but neither scores nor generates

Scoring with a shared prefix
----------------------------
Requests that share a context (the narrative of both options; later the narrative of a dozen
knowledge prompts) share its encoding: contexts are encoded once, right-padded in batches, and
their key/value caches are copied row by row to the continuations, which then run batched with
explicit position ids (each row continues at its own context length) and an attention mask
that hides the padding slots. The context's last token is fed again with the continuation (the
cache holds context[:-1]) so that its logits predict the continuation's first token. Batches are
length-sorted. A token prefix that all contexts of one ``score()`` call share (a chat template's
system turn, an instruction, few-shot examples) is encoded once more upstream, and every
context batch continues a copy of its cache. ``prefix_reuse=False`` selects the naive path (each context+continuation run in
full), the correctness reference. In float32, results do not depend on batching beyond float noise (up to about
1e-5 nats for qwen2.5-1.5b); in bfloat16 a score moves with its batch by up to about 0.25 nats, as the kernels split
their work by the batch's shape (benchmarks/call_dependence.py).
A sliding-window mask (Gemma-3) counts cache slots, padding included: a continuation that would
reach past the window behind its batch's widest context is scored on the naive path instead, and
generation batches prompts of different lengths only when every row stays inside the window.

Generation runs its own decoding loop so that every sample has its own ``torch.Generator``
(seeded from the request's seed and the sample's index): batching cannot change what is drawn.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.devices import auto_cpu_dtype, bf16_is_emulated, resolve_device
from figlang.backends.gguf import prepare_gguf
from figlang.backends.hf_quiet import quiet_cache_rename
from figlang.core.progress import route_transformers_bars
from figlang.backends.base import (
    MASK,
    BackendError,
    BackendInfo,
    CapabilityError,
    ClassificationRequest,
    ContinuationScore,
    LanguageModel,
    LazyWeights,
    MaskedScoreRequest,
    ScoreRequest,
)
from figlang.backends.hf_text import HFTextMixin

from figlang.backends.transformers_generation import Generation
from figlang.backends.transformers_scoring import CausalScoring
from figlang.backends.transformers_support import (
    DTYPES,
    KINDS,
    TokenTree,
    _as_bool,
    _as_int,
    _auto_class,
    _batches,
    derive_seed,
    detect_kind,
    prompt_lookup_draft,
)


def _dtype_option(dtype: Any) -> str:
    dtype = str(dtype).strip().lower()
    if dtype not in DTYPES:
        raise FiglangError(f"option 'dtype' must be one of {', '.join(DTYPES)}; got {dtype!r}")
    return dtype


def _resolve_dtype(dtype: str, device: str) -> str:
    """The weights' dtype name: ``auto`` chosen for the device (bfloat16 where it is faster), a warning for an
    emulated bfloat16."""
    import torch

    if dtype == "auto":
        if device.startswith("cuda"):
            return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        return auto_cpu_dtype()
    if dtype == "bfloat16" and bf16_is_emulated(device):
        warnings.warn(
            "dtype=bfloat16 on a CPU without AVX512-BF16/AMX: torch emulates bfloat16 here, several times slower "
            "than float32 (use dtype=float32, or dtype=auto to pick the faster one)",
            stacklevel=4,
        )
    return dtype


class TransformersBackend(CausalScoring, Generation, LazyWeights, HFTextMixin, LanguageModel):
    """A local Transformers model (hub id or directory; see :func:`figlang.backends.loading.load_backend`).

    Parameters
    ----------
    model:
        A directory ``from_pretrained`` reads, or a hub id. A GGUF file goes through ``gguf_file``
        (``model`` is then its folder) and is converted once into figlang's cache.
    name, revision:
        What ``info()`` reports (the catalog name or hub id; the commit or file hash).
    kind:
        causal | seq2seq | masked | classifier | encoder; detected from the config when None.
    dtype:
        float32 (default on CPU), bfloat16, float16, or auto (on CPU bfloat16 where it is faster, with AMX or AMD's AVX512-BF16, else float32; bfloat16/float16 on CUDA).
    device:
        cpu (default), cuda, cuda:N, or auto (CUDA when available).
    threads:
        torch's intra-op thread count (process-wide).
    batch_size, max_batch_tokens:
        At most this many rows, and this many padded tokens, in one forward pass.
    max_length:
        Longest sequence the model sees (default: the model's maximum positions); longer contexts
        lose tokens from the left.
    prefix_reuse:
        Encode a shared context once and reuse its key/value cache (default); False runs every
        context+continuation in full.
    prompt_lookup:
        Greedy generation of a lone prompt (a batch of one row, e.g. ``figlang explain`` on one pair)
        drafts up to this many tokens by prompt lookup (:func:`prompt_lookup_draft`) and checks them in
        one forward pass, keeping the longest run the model itself would have chosen (default 10; 0
        decodes token by token). The text is the greedy text; only the number of forward passes changes.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        name: str | None = None,
        revision: str | None = None,
        kind: str | None = None,
        dtype: str = "float32",
        device: str = "cpu",
        threads: int | None = None,
        batch_size: int = 16,
        max_batch_tokens: int = 32768,
        max_length: int | None = None,
        prefix_reuse: bool = True,
        prompt_lookup: int = 10,
        gguf_file: str | None = None,
        local_files_only: bool | None = None,
        trust_remote_code: bool = False,
        attn_implementation: str | None = None,
        allow_missing_weights: bool = False,
        extra_info: dict[str, Any] | None = None,
    ) -> None:
        import torch
        import transformers

        quiet_cache_rename()  # figlang's own past_key_values= calls: not the user's business
        route_transformers_bars()  # its "Loading weights" bars as lines of figlang's display
        self._torch = torch
        if gguf_file:
            prepared = prepare_gguf(Path(model) / gguf_file)
            model = prepared.path
            revision = revision or prepared.sha256
            name = name or str(Path(gguf_file).name)
        self.path = str(model)
        self.name = name or self.path
        self.revision = revision
        self.batch_size = _as_int(batch_size, "batch_size")
        self.max_batch_tokens = _as_int(max_batch_tokens, "max_batch_tokens", minimum=16)
        self.prefix_reuse = _as_bool(prefix_reuse, "prefix_reuse")
        self.prompt_lookup = _as_int(prompt_lookup, "prompt_lookup", minimum=0)
        threads = _as_int(threads, "threads", allow_none=True)
        if threads:
            torch.set_num_threads(threads)
        self.threads = threads
        self.extra_info = dict(extra_info or {})

        dtype = _dtype_option(dtype)
        device = resolve_device(str(device), missing_error=BackendError)
        self.dtype = _resolve_dtype(dtype, device)
        self.device = torch.device(device)
        self._torch_dtype = getattr(torch, self.dtype)

        load_kwargs: dict[str, Any] = {"trust_remote_code": _as_bool(trust_remote_code, "trust_remote_code")}
        if local_files_only is not None:
            load_kwargs["local_files_only"] = _as_bool(local_files_only, "local_files_only")
        try:
            self.config = transformers.AutoConfig.from_pretrained(self.path, **load_kwargs)
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, **load_kwargs)
        except (OSError, ValueError) as err:
            raise BackendError(f"cannot load the configuration/tokenizer of {self.name!r} from {self.path}: {err}") from err

        self.kind = kind.strip().lower() if isinstance(kind, str) and kind.strip() else detect_kind(self.config)
        if self.kind not in KINDS:
            raise FiglangError(f"option 'kind' must be one of {', '.join(KINDS)}; got {kind!r}")
        model_kwargs = dict(load_kwargs, dtype=self._torch_dtype, output_loading_info=True)
        if attn_implementation:
            model_kwargs["attn_implementation"] = attn_implementation
        self._model_kwargs = model_kwargs
        self._allow_missing_weights = _as_bool(allow_missing_weights, "allow_missing_weights")

        self.max_length = _as_int(max_length, "max_length", minimum=2, allow_none=True) or self._default_max_length()
        tok = self.tokenizer
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id if tok.eos_token_id is not None else 0)
        self._prefix_ids, self._suffix_ids = self._special_affixes()
        self._sliding_window = self._find_sliding_window()
        self.can_score = self.kind in ("causal", "seq2seq")
        self.can_generate = self.kind in ("causal", "seq2seq")
        self.can_score_masked = self.kind == "masked"
        self.can_classify = self.kind == "classifier"
        self.defer_weights()  # the identity above needs only the configuration and the tokenizer (LazyWeights)

    AFTER_WEIGHTS = frozenset({"model", "_logits_to_keep", "_positions", "_packable", "_eos_ids"})

    def _load_weights(self) -> None:
        try:
            model, loading_info = _auto_class(self.kind).from_pretrained(self.path, **self._model_kwargs)
        except (OSError, ValueError) as err:
            raise BackendError(f"cannot load {self.name!r} as a {self.kind} model from {self.path}: {err}") from err
        missing = [k for k in loading_info.get("missing_keys", []) if k]
        if missing and not self._allow_missing_weights:
            shown = ", ".join(sorted(missing)[:5]) + (" …" if len(missing) > 5 else "")
            raise BackendError(
                f"{self.name!r} has no weights for {len(missing)} parameter(s) of a {self.kind} model ({shown}): "
                f"the checkpoint lacks this head (pass kind= for another kind, or allow_missing_weights=true to "
                "use randomly initialised weights)"
            )
        model.to(self.device)
        model.eval()
        forward = inspect.signature(model.forward).parameters
        self._logits_to_keep = "logits_to_keep" in forward
        # Right-padded rows continue at their own positions; a model that takes no position ids
        # (ALiBi models such as BLOOM) gets no prefix reuse and equal-length generation batches.
        self._positions = "position_ids" in forward
        self.model = model
        self._packable = self._find_packable()
        self._eos_ids = self._end_ids()

    # --- identity -------------------------------------------------------------------------------

    def info(self) -> BackendInfo:
        options: dict[str, Any] = {"dtype": self.dtype, "device": self.device.type, "max_length": self.max_length}
        options.update(self.extra_info)
        return BackendInfo(backend="transformers", model=self.name, revision=self.revision, kind=self.kind, options=options)

    def runtime_options(self) -> dict[str, Any]:
        """Options that change speed, not results (kept out of the fingerprint)."""
        return {
            "batch_size": self.batch_size,
            "max_batch_tokens": self.max_batch_tokens,
            "prefix_reuse": self.prefix_reuse,
            "prompt_lookup": self.prompt_lookup,
            "threads": self.threads or self._torch.get_num_threads(),
            "path": self.path,
        }

    def __repr__(self) -> str:
        return f"TransformersBackend({self.name!r}, kind={self.kind!r}, dtype={self.dtype!r}, device={self.device.type!r})"

    # --- setup helpers ---------------------------------------------------------------------------

    def _default_max_length(self) -> int:
        cfg = self.config.get_text_config() if hasattr(self.config, "get_text_config") else self.config
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(cfg, attr, None)
            if isinstance(value, int) and value > 0:
                if self.kind in ("masked", "classifier", "encoder") and getattr(cfg, "model_type", "") in (
                    "roberta",
                    "xlm-roberta",
                    "camembert",
                ):
                    value -= 2  # RoBERTa reserves two positions (padding offset)
                return value
        tok_max = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
            return tok_max
        return 2048

    def _generation_eos(self) -> int | Sequence[int] | None:
        gen = getattr(self.model, "generation_config", None)
        return getattr(gen, "eos_token_id", None) if gen is not None else None

    def _find_sliding_window(self) -> int | None:
        cfg = self.config.get_text_config() if hasattr(self.config, "get_text_config") else self.config
        window = getattr(cfg, "sliding_window", None)
        return window if isinstance(window, int) and window > 0 else None

    # Decoders whose logits are a plain linear head over the last hidden state and that take a 4D
    # attention mask with explicit positions: their scoring may pack a context and its continuations
    # into one row (:meth:`_score_packed`).
    PACKABLE_TYPES = ("llama", "qwen2", "qwen3", "mistral")

    def _find_packable(self) -> bool:
        cfg = self.config.get_text_config() if hasattr(self.config, "get_text_config") else self.config
        attn = getattr(self.model.config, "_attn_implementation", None)
        return (
            self.kind == "causal"
            and self._positions
            and self._sliding_window is None
            and getattr(cfg, "model_type", "") in self.PACKABLE_TYPES
            and attn in ("sdpa", "eager")
            and self.model.get_output_embeddings() is not None
        )

    def _outside_window(self, slots_before: int, n_new: int) -> bool:
        """Whether ``n_new`` tokens run after ``slots_before`` cache slots (padding included) could lose
        keys to a sliding window.

        A sliding-window mask counts cache slots, not positions: a right-padded row whose prefix is
        shorter than the batch's widest sees its first tokens leave the window sooner than it would
        alone. Such rows must not share a padded batch (one slot of margin on the window's edge).
        """
        return self._sliding_window is not None and slots_before + n_new >= self._sliding_window

    # --- tokenization ---------------------------------------------------------------------------

    # --- seq2seq --------------------------------------------------------------------------------

    def _encode_source(self, text: str) -> list[int]:
        ids = list(self.tokenizer(text, add_special_tokens=True)["input_ids"])
        if len(ids) > self.max_length:  # keep the specials at the ends, drop from the left of the text
            head = len(self._prefix_ids)
            ids = ids[:head] + ids[len(ids) - (self.max_length - head) :]
        return ids

    def _encode_target(self, text: str) -> list[int]:
        return list(self.tokenizer(text_target=text, add_special_tokens=True)["input_ids"])

    def _decoder_start(self) -> int:
        cfg = self.model.config
        start = getattr(cfg, "decoder_start_token_id", None)
        if start is None:
            gen = getattr(self.model, "generation_config", None)
            start = getattr(gen, "decoder_start_token_id", None)
        if start is None:
            start = cfg.pad_token_id if cfg.pad_token_id is not None else self.pad_id
        return int(start)

    def _run_encoder(self, sources: Sequence[Sequence[int]]) -> tuple[Any, Any]:
        ids, mask = self._pad(sources)
        encoder = self.model.get_encoder()
        return encoder(input_ids=ids, attention_mask=mask).last_hidden_state, mask

    def _score_seq2seq(self, requests: Sequence[ScoreRequest]) -> list[ContinuationScore]:
        """log P(target | source): the context is the encoder's input, the continuation the decoder's
        target with the tokenizer's end-of-sequence token (counted in n_tokens)."""
        torch = self._torch
        from transformers.modeling_outputs import BaseModelOutput

        results: list[ContinuationScore | None] = [None] * len(requests)
        sources: dict[str, list[int]] = {}
        groups: dict[str, list[tuple[int, list[int]]]] = defaultdict(list)
        for i, req in enumerate(requests):
            target = self._encode_target(req.continuation)
            if not target:
                results[i] = ContinuationScore(0.0, 0, len(req.continuation), (), True)
                continue
            if req.context not in sources:
                sources[req.context] = self._encode_source(req.context)
            groups[req.context].append((i, target))
        start = self._decoder_start()
        order = sorted(groups, key=lambda s: -len(sources[s]))
        with torch.inference_mode():
            for src_batch in _batches(order, lambda s: len(sources[s]), self.batch_size, self.max_batch_tokens):
                hidden, src_mask = self._run_encoder([sources[s] for s in src_batch])
                rows = [(g, i, tgt) for g, s in enumerate(src_batch) for i, tgt in groups[s]]
                rows.sort(key=lambda x: -len(x[2]))
                for batch in _batches(rows, lambda x: len(x[2]), self.batch_size, self.max_batch_tokens):
                    index = torch.tensor([g for g, _, _ in batch], dtype=torch.long, device=self.device)
                    dec_ids, dec_mask = self._pad([[start] + tgt[:-1] for _, _, tgt in batch])
                    out = self.model(
                        encoder_outputs=BaseModelOutput(last_hidden_state=hidden[index]),
                        attention_mask=src_mask[index],
                        decoder_input_ids=dec_ids,
                        decoder_attention_mask=dec_mask,
                        use_cache=False,
                    )
                    targets, _ = self._pad([tgt for _, _, tgt in batch])
                    lps, greedy = self._token_scores(out.logits, targets)
                    for r, (_, i, tgt) in enumerate(batch):
                        n = len(tgt)
                        results[i] = self._finish((lps[r, :n].tolist(), bool(greedy[r, :n].all())), requests[i])
        return results  # type: ignore[return-value]

    # --- masked LMs -----------------------------------------------------------------------------

    @property
    def mask_token(self) -> str | None:
        return getattr(self.tokenizer, "mask_token", None)

    def _split_blank(self, text: str) -> tuple[str, str]:
        markers = [m for m in (MASK, self.mask_token) if m]
        for marker in markers:
            count = text.count(marker)
            if count == 1:
                left, right = text.split(marker)
                return left, right
            if count > 1:
                raise FiglangError(f"a masked pattern must have exactly one blank ({marker}); this one has {count}: {text[:120]!r}")
        raise FiglangError(f"a masked pattern needs a blank written {MASK} (or {self.mask_token}): {text[:120]!r}")

    def score_masked(self, requests: Sequence[MaskedScoreRequest]) -> list[list[ContinuationScore]]:
        """Per request, per candidate: the candidate's tokens' log-probabilities with all of them masked."""
        if self.kind != "masked":
            raise CapabilityError(f"{self.name} is a {self.kind} model, not a masked language model")
        torch = self._torch
        tok = self.tokenizer
        if not getattr(tok, "is_fast", False):
            raise CapabilityError(f"{self.name}: masked scoring needs a fast tokenizer (for character offsets)")
        if tok.mask_token_id is None:
            raise CapabilityError(f"{self.name}'s tokenizer has no mask token")
        inputs: dict[tuple[int, ...], int] = {}  # masked input ids -> index of the unique input
        jobs: list[tuple[int, int, int, list[int], list[int]]] = []  # request, candidate, input, positions, targets
        results: list[list[ContinuationScore | None]] = []
        for r, req in enumerate(requests):
            left, right = self._split_blank(req.text)
            results.append([None] * len(req.candidates))
            for c, cand in enumerate(req.candidates):
                if not cand:
                    raise FiglangError("a masked candidate cannot be empty")
                filled = left + cand + right
                enc = tok(filled, add_special_tokens=True, return_offsets_mapping=True)
                ids = list(enc["input_ids"])
                lo, hi = len(left), len(left) + len(cand)
                positions = [p for p, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < hi and e > lo]
                if not positions:
                    raise BackendError(f"{self.name}: the candidate {cand!r} produced no tokens at the blank")
                targets = [ids[p] for p in positions]
                if len(ids) > self.max_length:
                    cut = len(ids) - self.max_length
                    head = len(self._prefix_ids)
                    if positions[0] - cut < head:
                        raise BackendError(f"{self.name}: the blank lies beyond max_length={self.max_length} tokens")
                    ids = ids[:head] + ids[head + cut :]
                    positions = [p - cut for p in positions]
                masked = list(ids)
                for p in positions:
                    masked[p] = tok.mask_token_id
                key = tuple(masked)
                if key not in inputs:
                    inputs[key] = len(inputs)
                jobs.append((r, c, inputs[key], positions, targets))
        unique = list(inputs)
        by_input: dict[int, list[tuple[int, int, list[int], list[int]]]] = defaultdict(list)
        for r, c, u, positions, targets in jobs:
            by_input[u].append((r, c, positions, targets))
        order = sorted(range(len(unique)), key=lambda u: -len(unique[u]))
        with torch.inference_mode():
            for batch in _batches(order, lambda u: len(unique[u]), self.batch_size, self.max_batch_tokens):
                ids, mask = self._pad([list(unique[u]) for u in batch])
                logits = self.model(input_ids=ids, attention_mask=mask).logits
                for b, u in enumerate(batch):
                    lp = torch.log_softmax(logits[b].float(), dim=-1)
                    for r, c, positions, targets in by_input[u]:
                        rows = lp[positions]
                        t = torch.tensor(targets, device=rows.device)
                        values = rows.gather(1, t.unsqueeze(1)).squeeze(1).cpu().tolist()
                        greedy = bool((rows.argmax(dim=-1) == t).all())
                        results[r][c] = ContinuationScore(
                            math.fsum(values), len(values), len(requests[r].candidates[c]), tuple(values), greedy
                        )
        return results  # type: ignore[return-value]

    # --- classifiers ----------------------------------------------------------------------------

    @property
    def labels(self) -> list[str]:
        id2label = getattr(self.model.config, "id2label", None) or {}
        return [str(id2label[i]) for i in sorted(id2label)]

    def classify(self, requests: Sequence[ClassificationRequest]) -> list[dict[str, float]]:
        if self.kind != "classifier":
            raise CapabilityError(f"{self.name} is a {self.kind} model, not a sequence classifier")
        torch = self._torch
        labels = self.labels
        encoded = [self.tokenizer(req.text, req.text_pair, truncation=True, max_length=self.max_length) for req in requests]
        use_types = "token_type_ids" in inspect.signature(self.model.forward).parameters
        out: list[dict[str, float] | None] = [None] * len(requests)
        order = sorted(range(len(requests)), key=lambda i: -len(encoded[i]["input_ids"]))
        with torch.inference_mode():
            for batch in _batches(order, lambda i: len(encoded[i]["input_ids"]), self.batch_size, self.max_batch_tokens):
                ids, mask = self._pad([encoded[i]["input_ids"] for i in batch])
                kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
                if use_types and all(encoded[i].get("token_type_ids") is not None for i in batch):
                    kwargs["token_type_ids"], _ = self._pad([encoded[i]["token_type_ids"] for i in batch], value=0)
                lp = torch.log_softmax(self.model(**kwargs).logits.float(), dim=-1).cpu()
                for b, i in enumerate(batch):
                    out[i] = {label: float(lp[b, k]) for k, label in enumerate(labels)}
        return out  # type: ignore[return-value]


def backend_options_help() -> dict[str, str]:
    """The options ``load_backend`` passes to TransformersBackend, with a line each (for CLI help)."""
    return {
        "dtype": "float32 (CPU default) | bfloat16 | float16 | auto (bfloat16 on CPUs with AMX or AMD's AVX512-BF16 and on CUDA, else float32)",
        "device": "cpu (default) | cuda | cuda:N | auto",
        "threads": "torch threads (process-wide)",
        "batch_size": "rows per forward pass (default 16; a sampled request's n rows go together)",
        "max_batch_tokens": "padded tokens per forward pass (default 32768)",
        "max_length": "longest sequence; contexts lose tokens from the left (default: the model's)",
        "prefix_reuse": "encode a shared context once (default true); false = naive full recompute",
        "prompt_lookup": "greedy generation of one lone prompt: draft up to N tokens by prompt lookup, check them in one pass (default 10; 0 = token by token; same text)",
        "kind": "causal | seq2seq | masked | classifier | encoder (default: from the config)",
    }


__all__ = [
    "KINDS",
    "TokenTree",
    "TransformersBackend",
    "backend_options_help",
    "derive_seed",
    "detect_kind",
    "prompt_lookup_draft",
]
