"""The Transformers backend's helpers that need no model: option parsing, per-sample seeds, the model kind, batching by
padded size, cache rows, prompt-lookup drafts and the token tree of packed continuations."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal, overload

from figlang.core.errors import FiglangError


KINDS = ("causal", "seq2seq", "masked", "classifier", "encoder")
DTYPES = ("auto", "float32", "bfloat16", "float16")


# --- option parsing (options may come from the command line as strings) ---------------------------


@overload
def _as_int(value: Any, name: str, minimum: int = 1, allow_none: Literal[False] = False) -> int: ...
@overload
def _as_int(value: Any, name: str, minimum: int = 1, *, allow_none: bool) -> int | None: ...
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
