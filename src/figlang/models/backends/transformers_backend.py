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
full), the correctness reference. Results do not depend on batching beyond float noise (~1e-6).
A sliding-window mask (Gemma-3) counts cache slots, padding included: a continuation that would
reach past the window behind its batch's widest context is scored on the naive path instead, and
generation batches prompts of different lengths only when every row stays inside the window.

Generation runs its own decoding loop so that every sample has its own ``torch.Generator``
(seeded from the request's seed and the sample's index): batching cannot change what is drawn.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import math
import warnings
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ...data.errors import FiglangError
from ..devices import auto_cpu_dtype, bf16_is_emulated, resolve_device
from ..gguf import prepare_gguf
from ..hf_quiet import quiet_cache_rename
from ...progress import route_transformers_bars
from ..prefix import shared_prefix_length
from .base import (
    MASK,
    BackendError,
    BackendInfo,
    CapabilityError,
    ClassificationRequest,
    ContinuationScore,
    GenerationRequest,
    LanguageModel,
    LazyWeights,
    MaskedScoreRequest,
    ScoreRequest,
)
from .hf_text import HFTextMixin

KINDS = ("causal", "seq2seq", "masked", "classifier", "encoder")
DTYPES = ("auto", "float32", "bfloat16", "float16")


# --- option parsing (options may come from the command line as strings) ---------------------------


def _as_int(value: Any, name: str, minimum: int = 1, allow_none: bool = False) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in {"", "none", "auto"}):
        if allow_none:
            return None
        raise FiglangError(f"option {name!r} needs an integer")
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise FiglangError(f"option {name!r} must be an integer, got {value!r}") from None
    if out < minimum:
        raise FiglangError(f"option {name!r} must be at least {minimum}, got {out}")
    return out


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "1", "yes", "on"}:
        return True
    if text in {"false", "0", "no", "off"}:
        return False
    raise FiglangError(f"option {name!r} must be true or false, got {value!r}")


def derive_seed(seed: int, index: int) -> int:
    """The seed of sample ``index`` of a request seeded ``seed`` (63 bits, stable across runs)."""
    if index == 0:
        return int(seed) & 0x7FFF_FFFF_FFFF_FFFF
    digest = hashlib.sha256(f"{int(seed)}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & 0x7FFF_FFFF_FFFF_FFFF


def detect_kind(config: Any) -> str:
    """causal | seq2seq | masked | classifier | encoder, from a model config's architectures."""
    archs = [a for a in (getattr(config, "architectures", None) or []) if isinstance(a, str)]
    for arch in archs:
        if arch.endswith("ForSequenceClassification"):
            return "classifier"
        if arch.endswith("ForMaskedLM"):
            return "masked"
        if arch.endswith(("ForCausalLM", "LMHeadModel")) and not getattr(config, "is_encoder_decoder", False):
            return "causal"
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, MODEL_FOR_MASKED_LM_MAPPING

    if archs:
        # e.g. BertModel / MPNetModel: a bare encoder; a bare decoder (LlamaModel) is still a causal LM
        if type(config) in MODEL_FOR_CAUSAL_LM_MAPPING and type(config) not in MODEL_FOR_MASKED_LM_MAPPING:
            return "causal"
        return "encoder"
    if type(config) in MODEL_FOR_CAUSAL_LM_MAPPING:
        return "causal"
    if type(config) in MODEL_FOR_MASKED_LM_MAPPING:
        return "masked"
    return "encoder"


def _auto_class(kind: str):
    import transformers

    return {
        "causal": transformers.AutoModelForCausalLM,
        "seq2seq": transformers.AutoModelForSeq2SeqLM,
        "masked": transformers.AutoModelForMaskedLM,
        "classifier": transformers.AutoModelForSequenceClassification,
        "encoder": transformers.AutoModel,
    }[kind]


def _batches(items: Sequence[Any], length: Any, max_rows: int, max_tokens: int, min_share: float = 0.0) -> Iterator[list[Any]]:
    """Consecutive batches of at most ``max_rows`` items and ``max_tokens`` padded tokens (items pre-sorted,
    longest first); with ``min_share``, an item shorter than that share of its batch's longest starts a
    new batch (padding at most 1 - min_share of a batch's slots)."""
    batch: list[Any] = []
    longest = 0
    for item in items:
        n = length(item)
        if batch and (len(batch) + 1 > max_rows or max(longest, n) * (len(batch) + 1) > max_tokens or n < min_share * longest):
            yield batch
            batch, longest = [], 0
        batch.append(item)
        longest = max(longest, n)
    if batch:
        yield batch


def _select_cache_rows(cache: Any, index: Any) -> Any:
    """A new cache holding rows ``index`` (repeats allowed) of ``cache``; ``cache`` itself is untouched."""
    new = copy.copy(cache)
    new.layers = [copy.copy(layer) for layer in cache.layers]
    new.batch_select_indices(index)
    return new


LOOKUP_NGRAM = 3  # prompt lookup: the longest n-gram matched (then shorter ones, down to one token)


def prompt_lookup_draft(seq: Sequence[int], max_tokens: int, max_ngram: int = LOOKUP_NGRAM) -> list[int]:
    """Draft tokens for prompt-lookup decoding: what followed the latest earlier occurrence of ``seq``'s last
    n tokens (n from ``max_ngram`` down to 1), at most ``max_tokens`` of them; [] when nothing matches.

    Greedy answers that quote their prompt (FLUTE explanations repeat the premise, the hypothesis and the
    examples' wording) are drafted a run at a time. The latest occurrence is preferred: the pair being
    answered sits at the prompt's end. Chosen on FLUTE selection's greedy answers (k=6): 0.57 forward
    passes a token against 1 (docs/research/flute_explanations.md).
    """
    if max_tokens <= 0:
        return []
    n_seq = len(seq)
    for n in range(min(max_ngram, n_seq - 1), 0, -1):
        tail = list(seq[n_seq - n :])
        for start in range(n_seq - n - 1, -1, -1):
            if seq[start] == tail[0] and list(seq[start : start + n]) == tail:
                draft = list(seq[start + n : start + n + max_tokens])
                if draft:
                    return draft
    return []


class TokenTree:
    """One packed scoring row: contexts and their continuations as a prefix tree of tokens.

    Nodes are numbered in insertion order (a parent before its children); ``depth`` is a token's
    position in its own sequence; ``picks`` holds, per request, the nodes whose outputs predict its
    continuation's tokens, and those tokens.
    """

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.parent: list[int] = []
        self.depth: list[int] = []
        self._children: list[dict[int, int]] = [{}]  # [0]: the roots; [k + 1]: node k's children
        self.picks: list[tuple[int, list[int], list[int]]] = []

    @classmethod
    def of(cls, members: Sequence[tuple[Sequence[int], Sequence[tuple[int, list[int]]]]]) -> TokenTree:
        """The tree of contexts (each ≥ 1 token) and their (request, continuation ≥ 1 token) pairs."""
        tree = cls()
        for ctx, conts in members:
            last = tree.insert(ctx, -1)[-1]
            for i, cont in conts:
                nodes = tree.insert(cont, last)
                tree.picks.append((i, [last, *nodes[:-1]], list(cont)))
        return tree

    def __len__(self) -> int:
        return len(self.tokens)

    def insert(self, seq: Sequence[int], at: int) -> list[int]:
        """The nodes of ``seq`` continuing node ``at`` (-1: from the root), new ones added."""
        nodes = []
        for token in seq:
            kids = self._children[at + 1]
            node = kids.get(token)
            if node is None:
                node = kids[token] = len(self.tokens)
                self.tokens.append(token)
                self.parent.append(at)
                self.depth.append(self.depth[at] + 1 if at >= 0 else 0)
                self._children.append({})
            nodes.append(node)
            at = node
        return nodes

    def ancestry(self) -> Any:
        """[n, n] booleans: node k is node q or one of its ancestors (what q may attend to)."""
        import numpy as np

        n = len(self.tokens)
        out = np.zeros((n, n), dtype=bool)
        q = 0
        while q < n:
            # a chain (each node the child of the one before) fills as one block: its start's line, then a triangle
            end = q + 1
            while end < n and self.parent[end] == end - 1:
                end += 1
            p = self.parent[q]
            if p >= 0:
                out[q:end] = out[p]
            out[q:end, q:end] |= np.tri(end - q, dtype=bool)
            q = end
        return out


class TransformersBackend(LazyWeights, HFTextMixin, LanguageModel):
    """A local Transformers model (hub id or directory; see :func:`figlang.models.loading.load_backend`).

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
        float32 (default on CPU), bfloat16, float16, or auto (on CPU bfloat16 where it runs in hardware, AVX512-BF16/AMX, else float32; bfloat16/float16 on CUDA).
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

        dtype = str(dtype).strip().lower()
        if dtype not in DTYPES:
            raise FiglangError(f"option 'dtype' must be one of {', '.join(DTYPES)}; got {dtype!r}")
        device = resolve_device(str(device), missing_error=BackendError)
        if dtype == "auto":
            if device.startswith("cuda"):
                dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
            else:
                dtype = auto_cpu_dtype()
        elif dtype == "bfloat16" and bf16_is_emulated(device):
            warnings.warn(
                "dtype=bfloat16 on a CPU without AVX512-BF16/AMX: torch emulates bfloat16 here, several times slower "
                "than float32 (use dtype=float32, or dtype=auto to pick the faster one)",
                stacklevel=3,
            )
        self.dtype = dtype
        self.device = torch.device(device)
        self._torch_dtype = getattr(torch, dtype)

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

    # --- scoring --------------------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[ContinuationScore]:
        """Log-probability of each continuation given its context (natural log, summed over tokens)."""
        if self.kind == "seq2seq":
            return self._score_seq2seq(requests)
        if self.kind != "causal":
            raise CapabilityError(
                f"{self.name} is a {self.kind} model: it cannot score continuations "
                f"({'use score_masked' if self.kind == 'masked' else 'use classify' if self.kind == 'classifier' else 'it is a bare encoder'})"
            )
        results, encoded = self._encode_requests(requests)
        naive: list[tuple[int, list[int], list[int]]] = []
        groups: dict[tuple[int, ...], list[tuple[int, list[int]]]] = defaultdict(list)
        for i, ctx, cont in encoded:
            # The cache holds ctx[:-1]; :meth:`_score_run` checks again against its batch's widest context.
            too_long = self._outside_window(len(ctx) - 1, len(cont))
            if not self.prefix_reuse or not self._positions or len(ctx) < 2 or too_long:
                naive.append((i, ctx, cont))
            else:
                groups[tuple(ctx)].append((i, cont))
        with self._torch.inference_mode():
            for i, score in self._score_naive(naive):
                results[i] = self._finish(score, requests[i])
            for i, score in self._score_shared(groups):
                results[i] = self._finish(score, requests[i])
        return results  # type: ignore[return-value]

    def _token_scores(self, logits: Any, targets: Any) -> tuple[Any, Any]:
        """Log-probabilities of ``targets`` [R, T] under ``logits`` [R, T, V], and whether each is the argmax."""
        logits = logits.float()
        lse = self._torch.logsumexp(logits, dim=-1)
        picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        greedy = logits.argmax(dim=-1) == targets
        return (picked - lse).cpu(), greedy.cpu()

    def _pad(self, rows: Sequence[Sequence[int]], value: int | None = None) -> tuple[Any, Any]:
        """Right-padded ids and a 0/1 mask, on the model's device."""
        torch = self._torch
        width = max(len(r) for r in rows)
        pad = self.pad_id if value is None else value
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[r, : len(row)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _score_naive(self, items: list[tuple[int, list[int], list[int]]]) -> Iterator[tuple[int, tuple[list[float], bool]]]:
        """Each context+continuation in full, right-padded batches sorted by length."""
        torch = self._torch
        order = sorted(items, key=lambda x: -(len(x[1]) + len(x[2])))
        for batch in _batches(order, lambda x: len(x[1]) + len(x[2]), self.batch_size, self.max_batch_tokens):
            rows = [ctx + cont for _, ctx, cont in batch]
            ids, mask = self._pad(rows)
            width = ids.shape[1]
            keep = max(width - len(ctx) + 1 for _, ctx, _ in batch)  # logits from the first continuation's predictor on
            kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "use_cache": False}
            if self._positions:
                kwargs["position_ids"] = torch.arange(width, device=self.device).unsqueeze(0).expand(len(rows), -1)
            if self._logits_to_keep:
                kwargs["logits_to_keep"] = keep
            logits = self.model(**kwargs).logits
            offset = width - logits.shape[1]  # position of logits[:, 0]
            n_cont = max(len(cont) for _, _, cont in batch)
            index = torch.zeros((len(rows), n_cont), dtype=torch.long)
            targets = torch.full((len(rows), n_cont), self.pad_id, dtype=torch.long)
            for r, (_, ctx, cont) in enumerate(batch):
                start = len(ctx) - 1 - offset
                index[r, : len(cont)] = torch.arange(start, start + len(cont))
                index[r, len(cont) :] = start
                targets[r, : len(cont)] = torch.tensor(cont)
            index, targets = index.to(self.device), targets.to(self.device)
            picked = logits.gather(1, index.unsqueeze(-1).expand(-1, -1, logits.shape[-1]))
            lps, greedy = self._token_scores(picked, targets)
            for r, (i, _, cont) in enumerate(batch):
                n = len(cont)
                yield i, (lps[r, :n].tolist(), bool(greedy[r, :n].all()))

    def _encode_prefixes(self, prefixes: Sequence[Sequence[int]], base: tuple[Any, int] | None = None) -> tuple[Any, Any, Any]:
        """Run right-padded prefixes (each ≥ 1 token) once; their cache, padding mask and lengths.

        ``base`` is a one-row cache of ``L`` tokens that every prefix continues (see
        :meth:`_common_prefix`): it is copied to each row and only the rest of each prefix runs.
        The returned mask and lengths then count the base's tokens too.
        """
        torch = self._torch
        ids, mask = self._pad(prefixes)
        start = 0 if base is None else base[1]
        kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "use_cache": True}
        if base is not None:
            rows = torch.zeros(ids.shape[0], dtype=torch.long, device=self.device)
            mask = torch.cat([torch.ones((ids.shape[0], start), dtype=torch.long, device=self.device), mask], dim=1)
            kwargs.update(past_key_values=_select_cache_rows(base[0], rows), attention_mask=mask)
        if self._positions:
            kwargs["position_ids"] = start + torch.arange(ids.shape[1], device=self.device).unsqueeze(0).expand(ids.shape[0], -1)
        if self._logits_to_keep:
            kwargs["logits_to_keep"] = 1
        out = self.model(**kwargs)
        if out.past_key_values is None or not hasattr(out.past_key_values, "batch_select_indices"):
            raise CapabilityError(f"{self.name} returns no reusable key/value cache; use prefix_reuse=false")
        lengths = torch.tensor([start + len(p) for p in prefixes], dtype=torch.long, device=self.device)
        return out.past_key_values, mask, lengths

    # A common token prefix at least this long (a chat template's system turn, few-shot examples,
    # an instruction) is encoded once for all contexts of a score() call.
    MIN_COMMON_PREFIX = 16

    def _common_prefix(self, contexts: Sequence[Sequence[int]]) -> tuple[Any, int] | None:
        """Encode the token prefix that all ``contexts`` share (leaving each ≥ 2 own tokens), once.

        Returns (one-row cache, length) or None when there is no worthwhile shared prefix.
        """
        if len(contexts) < 2:
            return None
        n = shared_prefix_length(contexts)
        if n < self.MIN_COMMON_PREFIX:
            return None
        cache, _, _ = self._encode_prefixes([list(contexts[0][:n])])
        return cache, n

    def _extend(
        self, cache: Any, prefix_mask: Any, prefix_len: Any, rows: Any, new_ids: Any, new_mask: Any, keep: int | None = None
    ) -> Any:
        """Forward ``new_ids`` [R, T] after the cached prefixes ``rows`` [R]; returns the model output."""
        torch = self._torch
        attention = torch.cat([prefix_mask[rows], new_mask], dim=1)
        positions = prefix_len[rows].unsqueeze(1) + torch.arange(new_ids.shape[1], device=self.device).unsqueeze(0)
        kwargs: dict[str, Any] = {
            "input_ids": new_ids,
            "attention_mask": attention,
            "position_ids": positions,
            "past_key_values": _select_cache_rows(cache, rows) if cache is not None else None,
            "use_cache": True,
        }
        if keep is not None and self._logits_to_keep:
            kwargs["logits_to_keep"] = keep
        return self.model(**kwargs)

    def _score_shared(self, groups: dict[tuple[int, ...], list[tuple[int, list[int]]]]) -> Iterator[tuple[int, tuple[list[float], bool]]]:
        """Contexts encoded once (batched), continuations batched on copies of their context's cache; or,
        where no prefix is common to all contexts and the model allows it, contexts packed with their
        continuations into rows (:meth:`_score_packed`, the same scores with less work)."""
        if not groups:
            return
        contexts = sorted(groups, key=len, reverse=True)
        base = self._common_prefix(contexts)
        skip = 0 if base is None else base[1]
        runs = self._prefix_runs(contexts, skip)
        if base is None and self._packable:
            # A run of contexts that share a prefix packs into one row (the prefix once) when that row
            # stays within a packed row's width; else its contexts pack one by one (the prefix again in
            # each) when that repeats at most a quarter of the run's tokens; else (long few-shot examples
            # before short items) the run keeps the cache path, which encodes its prefix once.
            clusters: list[list[tuple[int, ...]]] = []
            cached: list[tuple[list[tuple[int, ...]], int]] = []
            for members, shared in runs:
                tokens = self._tree_width(groups, members, shared)
                if shared and tokens <= self._pack_width(max(map(len, members))):
                    clusters.append(members)
                elif shared * (len(members) - 1) * 4 <= tokens:
                    clusters += [[ctx] for ctx in members]
                else:
                    cached.append((members, shared))
            yield from self._score_packed(groups, clusters)
            runs = cached
        for members, shared in runs:
            run_base = base
            if shared > skip:  # the run's own longer prefix, once, on top of the call's common one
                cache, _, _ = self._encode_prefixes([list(members[0][skip:shared])], base)
                run_base = (cache, shared)
            yield from self._score_run(groups, sorted(members, key=len, reverse=True), run_base)  # stable: ties keep their order
            del run_base
        del base

    # A packed row holds its context and continuations up to this many tokens past the context (or the
    # context's own length, if longer): a context shared by hundreds of options spreads over several rows.
    PACK_ROOM = 64
    PACK_MIN_SHARE = 0.95

    def _pack_width(self, context_length: int) -> int:
        """The widest packed row for a context this long (its room for continuations included)."""
        return context_length + max(context_length, self.PACK_ROOM)

    @staticmethod
    def _tree_width(groups: dict[tuple[int, ...], list[tuple[int, list[int]]]], members: Sequence[tuple[int, ...]], shared: int) -> int:
        """Tokens of one row holding ``members`` (sharing ``shared`` tokens) and all their continuations, at most."""
        return shared + sum(len(ctx) - shared + sum(len(c) for _, c in groups[ctx]) for ctx in members)

    def _score_packed(
        self, groups: dict[tuple[int, ...], list[tuple[int, list[int]]]], clusters: list[list[tuple[int, ...]]]
    ) -> Iterator[tuple[int, tuple[list[float], bool]]]:
        """Each cluster of contexts once, followed in the same row by their continuations, as a token tree.

        A row is a prefix tree (:class:`TokenTree`): contexts of one cluster share their common prefix,
        the continuations of a context share their common first tokens, and every token sits at the
        position it would have in its own sequence. A 4D attention mask lets each token see only its
        ancestors and itself, so every continuation is scored as if it ran alone after its context; the
        context's last token predicts each continuation's first. Only the unique tokens run (no key/value
        copies, no recomputed context token, no padding beyond the batch's widest row), and the LM head
        runs once per distinct predicting token. A one-context cluster whose continuations pass its room
        (:meth:`_pack_width`) spreads over several rows, each with the context again.
        """
        import numpy as np

        torch = self._torch
        trees: list[TokenTree] = []
        for cluster in clusters:
            if len(cluster) > 1:
                trees.append(TokenTree.of([(ctx, groups[ctx]) for ctx in cluster]))
                continue
            ctx = cluster[0]
            room = self._pack_width(len(ctx)) - len(ctx)
            current: list[tuple[int, list[int]]] = []
            used = 0
            for i, cont in groups[ctx]:
                if current and used + len(cont) > room:
                    trees.append(TokenTree.of([(ctx, current)]))
                    current, used = [], 0
                current.append((i, cont))
                used += len(cont)
            trees.append(TokenTree.of([(ctx, current)]))

        trees.sort(key=len, reverse=True)
        base, head = self.model.base_model, self.model.get_output_embeddings()
        # Rows of one pass within 5% of its widest: padding costs what a token costs, and the widths of
        # a few dozen narratives spread enough that batches of 16 by rank alone padded 28% of their slots.
        for batch in _batches(trees, len, self.batch_size, self.max_batch_tokens, min_share=self.PACK_MIN_SHARE):
            w = len(batch[0])
            ids = np.full((len(batch), w), self.pad_id, dtype=np.int64)
            pos = np.zeros((len(batch), w), dtype=np.int64)
            mask = np.zeros((len(batch), w, w), dtype=bool)
            predictors: dict[tuple[int, int], int] = {}  # (row, node) -> index among the LM head's inputs
            picks: list[tuple[int, list[int]]] = []  # (request, head input of each continuation token)
            targets: list[int] = []
            for b, tree in enumerate(batch):
                n = len(tree)
                ids[b, :n] = tree.tokens
                pos[b, :n] = tree.depth
                mask[b, :n, :n] = tree.ancestry()
                mask[b, range(n, w), range(n, w)] = True  # padding attends to itself (no empty rows)
                for i, nodes, cont in tree.picks:
                    picks.append((i, [predictors.setdefault((b, node), len(predictors)) for node in nodes]))
                    targets += cont
            hidden = base(
                input_ids=torch.from_numpy(ids).to(self.device),
                attention_mask=torch.from_numpy(mask).unsqueeze(1).to(self.device),
                position_ids=torch.from_numpy(pos).to(self.device),
                use_cache=False,
            ).last_hidden_state
            where = torch.tensor(list(predictors), dtype=torch.long, device=self.device)
            logits = head(hidden[where[:, 0], where[:, 1]]).float()
            index = torch.tensor([u for _, us in picks for u in us], dtype=torch.long, device=self.device)
            wanted = torch.tensor(targets, dtype=torch.long, device=self.device)
            lps = (logits[index, wanted] - torch.logsumexp(logits, dim=-1)[index]).cpu()
            greedy = (logits.argmax(dim=-1)[index] == wanted).cpu()
            start = 0
            for i, us in picks:
                n = len(us)
                yield i, (lps[start : start + n].tolist(), bool(greedy[start : start + n].all()))
                start += n

    def _prefix_runs(self, contexts: Sequence[tuple[int, ...]], skip: int) -> list[tuple[list[tuple[int, ...]], int]]:
        """Contexts split into runs that each share a long prefix beyond the first ``skip`` tokens.

        Few-shot prompts built per item often repeat the same examples for many items, with a
        different query after them: such a run encodes its shared examples once. In token order,
        neighbouring contexts' common prefixes form a tree; a segment either becomes one run
        (sharing its smallest common prefix) or splits where that prefix is smallest, whichever
        recomputes fewer tokens. A run shares at least ``MIN_COMMON_PREFIX`` tokens past ``skip``.
        Contexts in no run come last, in the caller's order, as one run sharing only ``skip``.
        Any split gives the same scores; it only changes how much is recomputed.
        """
        order = sorted(contexts)
        lcp = [shared_prefix_length(pair) for pair in zip(order, order[1:])]

        def plan(lo: int, hi: int, depth: int) -> tuple[int, list[tuple[int, int, int]]]:
            """(tokens saved, runs as (lo, hi, shared)) for order[lo:hi]."""
            if hi - lo < 2:
                return 0, []
            shared = min(lcp[lo : hi - 1])
            flat = (hi - lo - 1) * (shared - skip) if shared - skip >= self.MIN_COMMON_PREFIX else 0
            cuts = [k + 1 for k in range(lo, hi - 1) if lcp[k] == shared]
            if depth > 64 or len(cuts) == hi - lo - 1:  # no finer structure (or too deep to look)
                return flat, [(lo, hi, shared)] if flat else []
            saved, runs = 0, []
            for a, b in zip([lo, *cuts], [*cuts, hi]):
                s, r = plan(a, b, depth + 1)
                saved, runs = saved + s, runs + r
            if flat >= saved:
                return flat, [(lo, hi, shared)] if flat else []
            return saved, runs

        _, chosen = plan(0, len(order), 0)
        runs = [(order[a:b], shared) for a, b, shared in chosen]
        in_runs = {c for members, _ in runs for c in members}
        rest = [c for c in contexts if c not in in_runs]
        if rest:
            runs.append((rest, skip))
        return runs

    def _score_run(
        self, groups: dict[tuple[int, ...], list[tuple[int, list[int]]]], contexts: list[tuple[int, ...]], base: tuple[Any, int] | None
    ) -> Iterator[tuple[int, tuple[list[float], bool]]]:
        """Score the continuations of ``contexts`` (longest first), each context continuing ``base``."""
        torch = self._torch
        skip = 0 if base is None else base[1]
        outside: list[tuple[int, list[int], list[int]]] = []  # rows the padded batch would push past a sliding window
        for ctx_batch in _batches(contexts, len, self.batch_size, self.max_batch_tokens):
            width_ctx = max(len(c) for c in ctx_batch) - 1  # cache slots before every continuation (base included)
            rows = []
            for g, ctx in enumerate(ctx_batch):
                for i, cont in groups[ctx]:
                    if self._outside_window(width_ctx, len(cont)):
                        outside.append((i, list(ctx), cont))
                    else:
                        rows.append((g, i, cont))
            if not rows:
                continue
            cache, prefix_mask, prefix_len = self._encode_prefixes([list(c[skip:-1]) for c in ctx_batch], base)
            rows.sort(key=lambda x: -len(x[2]))
            for batch in _batches(rows, lambda x: len(x[2]) + 1 + width_ctx, self.batch_size, self.max_batch_tokens):
                seqs = [[ctx_batch[g][-1]] + cont[:-1] for g, _, cont in batch]
                ids, mask = self._pad(seqs)
                index = torch.tensor([g for g, _, _ in batch], dtype=torch.long, device=self.device)
                logits = self._extend(cache, prefix_mask, prefix_len, index, ids, mask).logits
                targets, _ = self._pad([cont for _, _, cont in batch])
                lps, greedy = self._token_scores(logits, targets)
                for r, (_, i, cont) in enumerate(batch):
                    n = len(cont)
                    yield i, (lps[r, :n].tolist(), bool(greedy[r, :n].all()))
            del cache
        yield from self._score_naive(outside)  # each in full, at its own positions: what it scores alone

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

    # --- generation -----------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[str]]:
        """``n`` continuations per request, without the prompt, cut before the first stop string."""
        if self.kind not in ("causal", "seq2seq"):
            raise CapabilityError(f"{self.name} is a {self.kind} model: it cannot generate text")
        self._check_generation_requests(requests)
        results: list[list[str]] = [[""] * req.n for req in requests]
        # one row per distinct sample: greedy decoding gives n identical answers, computed once
        rows: list[tuple[int, int]] = []
        for i, req in enumerate(requests):
            if req.max_new_tokens == 0:
                continue
            for j in range(req.n if req.do_sample else 1):
                rows.append((i, j))
        prompts = {
            i: (self._encode_prompt(requests[i].prompt) if self.kind == "causal" else self._encode_source(requests[i].prompt))
            for i in {i for i, _ in rows}
        }
        cut = 0
        for i in prompts:
            if self.kind == "causal":
                prompts[i], was_cut = self._fit_prompt(prompts[i], requests[i].max_new_tokens)
                cut += was_cut
        self._warn_truncated("generation prompts", cut, len(prompts))
        texts: dict[tuple[int, int], str] = {}
        max_new = {i: requests[i].max_new_tokens for i in prompts}
        order = sorted(rows, key=lambda x: (len(prompts[x[0]]) < 2, -len(prompts[x[0]]), x))
        with self._torch.inference_mode():
            for batch in self._generation_batches(order, prompts, max_new):
                texts.update(self._decode_batch(batch, prompts, requests))
        for (i, j), text in texts.items():
            results[i][j] = text
        for i, req in enumerate(requests):
            if not req.do_sample and req.n > 1:
                results[i] = [results[i][0]] * req.n
        return results

    def _generation_batches(
        self, order: list[tuple[int, int]], prompts: dict[int, list[int]], max_new: dict[int, int]
    ) -> Iterator[list[tuple[int, int]]]:
        """Batches of rows; one-token causal prompts (nothing to cache) never share a batch with longer ones."""

        def length(row: tuple[int, int]) -> int:
            return len(prompts[row[0]])

        short = [r for r in order if self.kind == "causal" and length(r) < 2]
        long_ = [r for r in order if not (self.kind == "causal" and length(r) < 2)]
        for part in (long_, short):
            if self.kind == "causal" and not self._uneven_ok(part, prompts, max_new):
                by_length: dict[int, list[tuple[int, int]]] = defaultdict(list)
                for row in part:
                    by_length[length(row)].append(row)
                for rows in by_length.values():  # equal lengths: no padding, positions are the slots
                    yield from _batches(rows, length, self.batch_size, self.max_batch_tokens)
            else:
                yield from _batches(part, length, self.batch_size, self.max_batch_tokens)

    def _uneven_ok(self, rows: list[tuple[int, int]], prompts: dict[int, list[int]], max_new: dict[int, int]) -> bool:
        """Whether prompts of different lengths may share a batch (position ids; within a sliding window)."""
        if not self._positions:
            return False
        if self._sliding_window is None or not rows:
            return True
        # every row's steps come after the widest prompt's cache slots (see _outside_window)
        widest = max(len(prompts[i]) for i, _ in rows) - 1
        return not any(self._outside_window(widest, 1 + max_new[i]) for i, _ in rows)

    def _decode_batch(
        self, batch: list[tuple[int, int]], prompts: dict[int, list[int]], requests: Sequence[GenerationRequest]
    ) -> dict[tuple[int, int], str]:
        torch = self._torch
        tok = self.tokenizer
        reqs = [requests[i] for i, _ in batch]
        generators = [self._sampler(derive_seed(requests[i].seed, j)) if requests[i].do_sample else None for i, j in batch]
        generated: list[list[int]] = [[] for _ in batch]
        texts: list[str | None] = [None] * len(batch)
        limits = [r.max_new_tokens for r in reqs]
        live = list(range(len(batch)))  # rows still decoding, in the order of the model's batch

        if self._lookup_ok(batch, prompts, reqs):
            i = batch[0][0]
            return {batch[0]: self._decode_lookup(prompts[i], reqs[0])}
        if self.kind == "causal":
            unique = sorted({i for i, _ in batch}, key=lambda i: -len(prompts[i]))
            slot = {i: k for k, i in enumerate(unique)}
            if all(len(prompts[i]) >= 2 for i in unique):
                cache, prefix_mask, prefix_len = self._encode_prefixes([prompts[i][:-1] for i in unique])
                index = torch.tensor([slot[i] for i, _ in batch], dtype=torch.long, device=self.device)
                cache = _select_cache_rows(cache, index)
                prefix_mask, prefix_len = prefix_mask[index], prefix_len[index]
            else:
                from transformers import DynamicCache

                cache = DynamicCache(config=self.model.config)
                prefix_mask = torch.zeros((len(batch), 0), dtype=torch.long, device=self.device)
                prefix_len = torch.zeros(len(batch), dtype=torch.long, device=self.device)
            current = torch.tensor([[prompts[i][-1]] for i, _ in batch], dtype=torch.long, device=self.device)
            step = 0
            while live:
                attention = torch.cat([prefix_mask, torch.ones((len(live), step + 1), dtype=torch.long, device=self.device)], dim=1)
                kwargs: dict[str, Any] = {"input_ids": current, "attention_mask": attention, "past_key_values": cache, "use_cache": True}
                if self._positions:
                    kwargs["position_ids"] = (prefix_len + step).unsqueeze(1)
                if self._logits_to_keep:
                    kwargs["logits_to_keep"] = 1
                out = self.model(**kwargs)
                cache = out.past_key_values
                logits = out.logits[:, -1, :]
                keep = self._advance(logits, live, reqs, generators, generated, texts, limits)
                step += 1
                if len(keep) < len(live):
                    if not keep:
                        break
                    sel = torch.tensor(keep, dtype=torch.long, device=self.device)
                    cache.batch_select_indices(sel)
                    prefix_mask, prefix_len = prefix_mask[sel], prefix_len[sel]
                    live = [live[k] for k in keep]
                current = torch.tensor([[generated[r][-1]] for r in live], dtype=torch.long, device=self.device)
        else:
            from transformers.modeling_outputs import BaseModelOutput

            hidden, src_mask = self._run_encoder([prompts[i] for i, _ in batch])
            current = torch.full((len(batch), 1), self._decoder_start(), dtype=torch.long, device=self.device)
            cache = None
            while live:
                out = self.model(
                    encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
                    attention_mask=src_mask,
                    decoder_input_ids=current,
                    past_key_values=cache,
                    use_cache=True,
                )
                cache = out.past_key_values
                keep = self._advance(out.logits[:, -1, :], live, reqs, generators, generated, texts, limits)
                if len(keep) < len(live):
                    if not keep:
                        break
                    sel = torch.tensor(keep, dtype=torch.long, device=self.device)
                    cache.batch_select_indices(sel)
                    hidden, src_mask = hidden[sel], src_mask[sel]
                    live = [live[k] for k in keep]
                current = torch.tensor([[generated[r][-1]] for r in live], dtype=torch.long, device=self.device)
        out_texts = {}
        for r, row in enumerate(batch):
            text = texts[r]
            if text is None:
                text = self._cut(tok.decode(generated[r], skip_special_tokens=True), reqs[r].stop)[0]
            out_texts[row] = text
        return out_texts

    def _lookup_ok(self, batch: list[tuple[int, int]], prompts: dict[int, list[int]], reqs: Sequence[GenerationRequest]) -> bool:
        """Whether this batch decodes by prompt lookup: one greedy causal row, explicit positions, a prompt of ≥ 2 tokens,
        and no sliding window that the prompt, the answer and a draft could outgrow (a window cache cut back after a
        rejected draft would have dropped keys the next tokens need)."""
        if not (self.prompt_lookup > 0 and self.kind == "causal" and len(batch) == 1 and not reqs[0].do_sample and self._positions):
            return False
        prompt = prompts[batch[0][0]]
        return len(prompt) >= 2 and not self._outside_window(len(prompt) - 1, 1 + reqs[0].max_new_tokens + self.prompt_lookup)

    def _decode_lookup(self, prompt: list[int], req: GenerationRequest) -> str:
        """Greedy decoding of one prompt, drafting by prompt lookup (:func:`prompt_lookup_draft`).

        Each pass feeds the last chosen token and a draft; the logits at each position are the greedy
        choice there, so the draft is kept while it agrees with them, the first disagreeing choice is
        taken instead, and the cache loses the rejected draft's slots. The text is the one token-by-token
        greedy decoding gives (same stop strings, end tokens, min/max_new_tokens).
        """
        torch = self._torch
        cache, _, _ = self._encode_prefixes([prompt[:-1]])
        seq = list(prompt)
        generated: list[int] = []
        cached = len(prompt) - 1  # cache slots: every token of seq but the last
        eos = list(self._eos_ids)
        while True:
            draft = prompt_lookup_draft(seq, min(self.prompt_lookup, req.max_new_tokens - len(generated) - 1))
            fed = [seq[-1], *draft]
            kwargs: dict[str, Any] = {
                "input_ids": torch.tensor([fed], dtype=torch.long, device=self.device),
                "attention_mask": torch.ones((1, cached + len(fed)), dtype=torch.long, device=self.device),
                "position_ids": torch.arange(cached, cached + len(fed), device=self.device).unsqueeze(0),
                "past_key_values": cache,
                "use_cache": True,
            }
            if self._logits_to_keep:
                kwargs["logits_to_keep"] = len(fed)
            out = self.model(**kwargs)
            cache = out.past_key_values
            logits = out.logits[0, -len(fed) :, :]
            for j in range(len(fed)):
                row = logits[j]
                if len(generated) < req.min_new_tokens and eos:  # too early to end
                    row = row.clone()
                    row[eos] = float("-inf")
                token = int(row.argmax())
                if token in self._eos_ids:
                    return self._cut(self.tokenizer.decode(generated, skip_special_tokens=True), req.stop)[0]
                generated.append(token)
                seq.append(token)
                if req.stop:
                    text, stopped = self._cut(self.tokenizer.decode(generated, skip_special_tokens=True), req.stop)
                    if stopped:
                        return text
                if len(generated) >= req.max_new_tokens:
                    return self._cut(self.tokenizer.decode(generated, skip_special_tokens=True), req.stop)[0]
                if j >= len(draft) or token != draft[j]:
                    break
            rejected = len(fed) - (j + 1)  # fed tokens after this choice's input: the draft's wrong part
            cached += j + 1
            if rejected:
                cache.crop(-rejected)  # Transformers ≥ 5: a negative count of slots to drop


def backend_options_help() -> dict[str, str]:
    """The options ``load_backend`` passes to TransformersBackend, with a line each (for CLI help)."""
    return {
        "dtype": "float32 (CPU default) | bfloat16 | float16 | auto (bfloat16 on CPUs with AVX512-BF16/AMX and on CUDA, else float32)",
        "device": "cpu (default) | cuda | cuda:N | auto",
        "threads": "torch threads (process-wide)",
        "batch_size": "rows per forward pass (default 16)",
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
