"""The text side of a local model: a Hugging Face tokenizer, chat template, end tokens and sampling.

Shared by the backends that run a model here (Transformers; llama.cpp on a GGUF file) so that the
same request becomes the same token ids, whichever engine computes the logits.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.backends.base import BackendError, CapabilityError, ChatMessage, ContinuationScore, GenerationRequest, ScoreRequest


class TruncationWarning(UserWarning):
    """A prompt was longer than the model's window and lost tokens from its start."""


# End-of-turn markers of common chat templates: generation stops at them when they are special tokens.
END_OF_TURN_TOKENS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "<|end_of_text|>")


class HFTextMixin:
    """Tokenization, chat prompts and token choice over ``self.tokenizer`` (a transformers tokenizer).

    The host sets ``tokenizer``, ``name``, ``max_length``, ``_prefix_ids``/``_suffix_ids`` (from
    :meth:`_special_affixes`) and ``_eos_ids`` (from :meth:`_end_ids`).
    """

    tokenizer: Any
    name: str
    max_length: int
    _prefix_ids: list[int]
    _eos_ids: set[int]

    def _special_affixes(self) -> tuple[list[int], list[int]]:
        """The special tokens the tokenizer puts before and after a text (BOS; CLS/SEP; EOS)."""
        with_ = self.tokenizer("a b", add_special_tokens=True)["input_ids"]
        without = self.tokenizer("a b", add_special_tokens=False)["input_ids"]
        n = len(without)
        for i in range(len(with_) - n + 1):
            if with_[i : i + n] == without:
                return list(with_[:i]), list(with_[i + n :])
        return [], []

    def _generation_eos(self) -> int | Sequence[int] | None:
        """The model's own end token(s) beside the tokenizer's (its generation config's eos_token_id)."""
        return None

    def _end_ids(self) -> set[int]:
        """Tokens that end a generation: EOS, the generation config's ends, a chat template's end of turn."""
        ids: set[int] = set()
        tok = self.tokenizer
        if tok.eos_token_id is not None:
            ids.add(int(tok.eos_token_id))
        eos = self._generation_eos()
        if isinstance(eos, int):
            ids.add(eos)
        elif isinstance(eos, (list, tuple)):
            ids.update(int(e) for e in eos)
        if self.has_chat_template:
            special = set(getattr(tok, "all_special_tokens", []) or [])
            special.update(str(t) for t in (getattr(tok, "added_tokens_decoder", {}) or {}).values() if getattr(t, "special", False))
            for marker in END_OF_TURN_TOKENS:
                if marker in special:
                    token_id = tok.convert_tokens_to_ids(marker)
                    if isinstance(token_id, int) and token_id != tok.unk_token_id:
                        ids.add(token_id)
        return ids

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def chat_prompt(self, messages: Sequence[ChatMessage]) -> str:
        if not self.has_chat_template:
            raise CapabilityError(f"{self.name} has no chat template (it is not an instruction-tuned chat model)")
        convo = [{"role": m.role, "content": m.content} for m in messages]
        if not convo:
            raise FiglangError("a chat prompt needs at least one message")
        prefill = convo[-1]["role"] == "assistant"
        try:
            return self.tokenizer.apply_chat_template(
                convo, tokenize=False, add_generation_prompt=not prefill, continue_final_message=prefill
            )
        except Exception as err:  # jinja errors: roles the template does not accept, …
            raise BackendError(f"{self.name}'s chat template rejected the messages: {err}") from err

    def _encode_prompt(self, text: str) -> list[int]:
        """Token ids of a causal context/prompt: the tokenizer's leading specials (BOS) + the text.

        A text that already starts with the BOS token (a rendered chat template) gets no second one;
        an empty text becomes BOS (or EOS, GPT-2's document separator)."""
        tok = self.tokenizer
        body = tok(text, add_special_tokens=False)["input_ids"] if text else []
        prefix = list(self._prefix_ids)
        bos = tok.bos_token
        if prefix and bos and text.startswith(bos):
            prefix = []
        ids = prefix + list(body)
        if not ids:
            fallback = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
            if fallback is None:
                raise BackendError(f"{self.name}: cannot score after an empty context (the tokenizer has no BOS or EOS token)")
            ids = [int(fallback)]
        return ids

    def _encode_continuation(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []

    def _encode_joint(self, context: str, continuation: str) -> list[int]:
        """The continuation's tokens as lm-evaluation-harness takes them: those of ``context + continuation``
        after the context's own tokens (a token spanning the boundary counts as the continuation's)."""
        if not continuation:
            return []
        if not context:
            return self._encode_continuation(continuation)
        whole = self._encode_continuation(context + continuation)
        return whole[len(self._encode_continuation(context)) :]

    def _encode_requests(
        self, requests: Sequence[ScoreRequest]
    ) -> tuple[list[ContinuationScore | None], list[tuple[int, list[int], list[int]]]]:
        """Token ids of score requests, each context encoded once: (results with the empty continuations
        already scored, [(index, context ids fitted to max_length, continuation ids)])."""
        results: list[ContinuationScore | None] = [None] * len(requests)
        contexts: dict[str, list[int]] = {}
        encoded: list[tuple[int, list[int], list[int]]] = []
        cut = 0
        for i, req in enumerate(requests):
            if not isinstance(req, ScoreRequest):
                raise FiglangError(f"score() takes ScoreRequest objects, got {type(req).__name__}")
            cont = self._encode_continuation(req.continuation) if not req.joint else self._encode_joint(req.context, req.continuation)
            if not cont:
                results[i] = ContinuationScore(0.0, 0, len(req.continuation), (), True)
                continue
            if req.context not in contexts:
                contexts[req.context] = self._encode_prompt(req.context)
            fitted = self._fit(contexts[req.context], cont)
            cut += len(fitted) < len(contexts[req.context])
            encoded.append((i, fitted, cont))
        self._warn_truncated("scored contexts", cut, len(encoded))
        return results, encoded

    def _fit_prompt(self, ids: list[int], max_new_tokens: int) -> tuple[list[int], bool]:
        """A generation prompt cut from the left so that it and its new tokens fit ``max_length``; and whether it was cut."""
        keep = max(1, self.max_length - max_new_tokens)
        return ids[-keep:], len(ids) > keep

    def _warn_truncated(self, what: str, cut: int, total: int) -> None:
        """Say when prompts lost their start: results are then about a shorter text than the one asked."""
        if cut:
            warnings.warn(
                f"{self.name}: {cut} of {total} {what} were longer than max_length={self.max_length} and lost tokens "
                "from their start (raise max_length, or n_ctx for llama.cpp, or shorten the prompts)",
                TruncationWarning,
                stacklevel=3,
            )

    @staticmethod
    def _check_generation_requests(requests: Sequence[GenerationRequest]) -> None:
        for req in requests:
            if not isinstance(req, GenerationRequest):
                raise FiglangError(f"generate() takes GenerationRequest objects, got {type(req).__name__}")
            if req.n < 1 or req.max_new_tokens < 0:
                raise FiglangError(
                    f"a generation request needs n >= 1 and max_new_tokens >= 0 (got n={req.n}, max_new_tokens={req.max_new_tokens})"
                )
            if req.do_sample and req.temperature <= 0:
                raise FiglangError(f"sampling needs a temperature > 0 (got {req.temperature}); use do_sample=False for greedy decoding")

    def _fit(self, ctx: list[int], cont: list[int]) -> list[int]:
        """Drop context tokens from the left so that context + continuation fits ``max_length``."""
        room = self.max_length - len(cont)
        if room < 1:
            raise BackendError(f"{self.name}: a continuation of {len(cont)} tokens does not fit max_length={self.max_length}")
        return ctx[-room:] if len(ctx) > room else ctx

    @staticmethod
    def _finish(score: tuple[list[float], bool], req: ScoreRequest) -> ContinuationScore:
        token_lps, greedy = score
        return ContinuationScore(math.fsum(token_lps), len(token_lps), len(req.continuation), tuple(token_lps), greedy)

    def _sampler(self, seed: int) -> Any:
        import torch

        gen = torch.Generator(device="cpu")
        gen.manual_seed(seed)
        return gen

    def _choose(self, logits: Any, req: GenerationRequest, generator: Any) -> int:
        """The next token for one row: argmax, or a draw after temperature / top-k / top-p."""
        import torch

        if not req.do_sample:
            return int(logits.argmax())
        scores = logits.float().cpu() / float(req.temperature)
        if req.top_k is not None and 0 < req.top_k < scores.numel():
            kth = torch.topk(scores, req.top_k).values[-1]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        if req.top_p is not None and 0 < req.top_p < 1:
            sorted_scores, sorted_idx = torch.sort(scores, descending=True)
            probs = torch.softmax(sorted_scores, dim=-1)
            cumulative = probs.cumsum(-1)
            drop = cumulative - probs >= req.top_p  # keep the smallest prefix whose mass reaches top_p
            drop[0] = False
            scores = scores.scatter(0, sorted_idx[drop], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        return int(torch.multinomial(probs, 1, generator=generator))

    @staticmethod
    def _cut(text: str, stop: Sequence[str]) -> tuple[str, bool]:
        cut = min((text.find(s) for s in stop if s and s in text), default=-1)
        return (text[:cut], True) if cut >= 0 else (text, False)

    def _advance(
        self,
        logits: Any,
        live: list[int],
        reqs: list[GenerationRequest],
        generators: list[Any],
        generated: list[list[int]],
        texts: list[str | None],
        limits: list[int],
    ) -> list[int]:
        """Choose each live row's next token; returns the positions (within ``live``) of rows that go on."""
        keep = []
        for k, r in enumerate(live):
            row = logits[k]
            if len(generated[r]) < reqs[r].min_new_tokens and self._eos_ids:  # too early to end
                row = row.clone()
                row[list(self._eos_ids)] = float("-inf")
            token = self._choose(row, reqs[r], generators[r])
            if token in self._eos_ids:
                texts[r] = self._cut(self.tokenizer.decode(generated[r], skip_special_tokens=True), reqs[r].stop)[0]
                continue
            generated[r].append(token)
            if reqs[r].stop:
                text, stopped = self._cut(self.tokenizer.decode(generated[r], skip_special_tokens=True), reqs[r].stop)
                if stopped:
                    texts[r] = text
                    continue
            if len(generated[r]) >= limits[r]:
                continue
            keep.append(k)
        return keep


class ModelHost(HFTextMixin):
    """What TransformersBackend sets (in ``__init__``, or with the weights) and both its generation and scoring
    mixins read: declarations for the type checker; nothing is set here at run time."""

    kind: str
    device: Any  # a torch.device
    _torch: Any  # the torch module
    model: Any
    batch_size: int
    max_batch_tokens: int
    _positions: bool
    _logits_to_keep: bool
