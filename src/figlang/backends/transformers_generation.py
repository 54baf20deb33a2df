"""Generation with a Transformers model (:class:`Generation`, a part of
:class:`~figlang.backends.transformers_backend.TransformersBackend`): its own decoding loop, one
``torch.Generator`` per sample, batching that cannot change what is drawn, and prompt-lookup drafts for a lone greedy prompt."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from figlang.backends.base import CapabilityError, GenerationRequest
from figlang.backends.hf_text import ModelHost
from figlang.backends.transformers_support import _batches, _select_cache_rows, derive_seed, prompt_lookup_draft


@dataclass
class _DecodeRows:
    """The rows of one decoding batch: their requests and samplers, and what they have generated so far (filled in place)."""

    reqs: list[GenerationRequest]
    generators: list[Any]
    generated: list[list[int]]
    texts: list[str | None]
    limits: list[int]

    def state(self) -> tuple[list[GenerationRequest], list[Any], list[list[int]], list[str | None], list[int]]:
        return self.reqs, self.generators, self.generated, self.texts, self.limits


class Generation(ModelHost):
    """The generation methods of TransformersBackend (it holds the model, tokenizer and options they use)."""

    # What the host class sets (in ``__init__``, or with the weights) and only these methods read (the rest: ModelHost).
    prompt_lookup: int
    _sliding_window: int | None

    if TYPE_CHECKING:  # the host's methods (TransformersBackend; _encode_prefixes from CausalScoring)

        def _outside_window(self, slots_before: int, n_new: int) -> bool: ...
        def _encode_source(self, text: str) -> list[int]: ...
        def _decoder_start(self) -> int: ...
        def _run_encoder(self, sources: Sequence[Sequence[int]]) -> tuple[Any, Any]: ...
        def _encode_prefixes(self, prefixes: Sequence[Sequence[int]], base: tuple[Any, int] | None = None) -> tuple[Any, Any, Any]: ...
        def _common_prefix(self, contexts: Sequence[Sequence[int]]) -> tuple[Any, int] | None: ...

        prefix_reuse: bool

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
        # a sampled request's n rows share one encoding of its prompt, so a batch holds at least n rows
        per_batch = max([self.batch_size] + [requests[i].n for i in prompts if requests[i].do_sample])
        with self._torch.inference_mode():
            for batch in self._generation_batches(order, prompts, max_new, per_batch):
                texts.update(self._decode_batch(batch, prompts, requests))
        for (i, j), text in texts.items():
            results[i][j] = text
        for i, req in enumerate(requests):
            if not req.do_sample and req.n > 1:
                results[i] = [results[i][0]] * req.n
        return results

    def _generation_batches(
        self, order: list[tuple[int, int]], prompts: dict[int, list[int]], max_new: dict[int, int], per_batch: int
    ) -> Iterator[list[tuple[int, int]]]:
        """Batches of at most ``per_batch`` rows; one-token causal prompts (nothing to cache) never share a batch with
        longer ones."""

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
                    yield from _batches(rows, length, per_batch, self.max_batch_tokens)
            else:
                yield from _batches(part, length, per_batch, self.max_batch_tokens)

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
        """The texts of a batch of (request, sample) rows, decoded together."""
        tok = self.tokenizer
        reqs = [requests[i] for i, _ in batch]
        generators = [self._sampler(derive_seed(requests[i].seed, j)) if requests[i].do_sample else None for i, j in batch]
        generated: list[list[int]] = [[] for _ in batch]
        texts: list[str | None] = [None] * len(batch)
        limits = [r.max_new_tokens for r in reqs]

        if self._lookup_ok(batch, prompts, reqs):
            i = batch[0][0]
            return {batch[0]: self._decode_lookup(prompts[i], reqs[0])}
        decode = self._decode_causal if self.kind == "causal" else self._decode_seq2seq
        decode(batch, prompts, _DecodeRows(reqs, generators, generated, texts, limits))
        out_texts = {}
        for r, row in enumerate(batch):
            text = texts[r]
            if text is None:
                text = self._cut(tok.decode(generated[r], skip_special_tokens=True), reqs[r].stop)[0]
            out_texts[row] = text
        return out_texts

    def _decode_causal(self, batch: list[tuple[int, int]], prompts: dict[int, list[int]], rows: _DecodeRows) -> None:
        """A causal LM's decoding loop: the prompts' caches (all but their last token) encoded once, then one token a step
        for the rows still live (``generated`` and ``texts`` filled in place)."""
        torch = self._torch
        live = list(range(len(batch)))  # rows still decoding, in the order of the model's batch
        unique = sorted({i for i, _ in batch}, key=lambda i: -len(prompts[i]))
        slot = {i: k for k, i in enumerate(unique)}
        if all(len(prompts[i]) >= 2 for i in unique):
            cache, prefix_mask, prefix_len = self._encode_shared([prompts[i][:-1] for i in unique])
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
            keep = self._advance(logits, live, *rows.state())
            step += 1
            if not keep:
                break
            live, (prefix_mask, prefix_len) = self._narrow(keep, live, cache, (prefix_mask, prefix_len))
            current = torch.tensor([[rows.generated[r][-1]] for r in live], dtype=torch.long, device=self.device)

    def _reuse_prefixes(self) -> bool:
        """Whether a generation prompt's prefix may come from a cache made apart from it: asked (``prefix_reuse``), explicit
        positions, and no sliding window (whose cache slots, not positions, decide what a token sees)."""
        return self.prefix_reuse and self._positions and self._sliding_window is None

    def _encode_shared(self, heads: Sequence[Sequence[int]]) -> tuple[Any, Any, Any]:
        """:meth:`_encode_prefixes` of a batch's prompt heads, their common token prefix (a chat's system turn, an
        instruction said once before the examples) encoded once and copied to each row (``prefix_reuse``)."""
        base = self._common_prefix(heads) if self._reuse_prefixes() else None
        skip = 0 if base is None else base[1]
        return self._encode_prefixes([list(h[skip:]) for h in heads], base)

    def _encode_lone(self, head: Sequence[int]) -> Any:
        """The cache of one prompt's head (a lone greedy prompt), encoded whole. Not continued from the previous lone
        prompt's cache: slots encoded inside another prompt differ from the prompt's own in the last bits (a long
        prompt's kernels split the work by its length), so the answer would depend on which prompt came before it."""
        cache, _, _ = self._encode_prefixes([list(head)])
        return cache

    def _narrow(self, keep: list[int], live: list[int], cache: Any, rows: tuple[Any, ...]) -> tuple[list[int], tuple[Any, ...]]:
        """The rows still decoding (``keep``: their positions in ``live``), with the cache and the per-row tensors cut to them."""
        if len(keep) == len(live):
            return live, rows
        sel = self._torch.tensor(keep, dtype=self._torch.long, device=self.device)
        cache.batch_select_indices(sel)
        return [live[k] for k in keep], tuple(t[sel] for t in rows)

    def _decode_seq2seq(self, batch: list[tuple[int, int]], prompts: dict[int, list[int]], rows: _DecodeRows) -> None:
        """A seq2seq model's decoding loop: the sources encoded once, the decoder one token a step."""
        from transformers.modeling_outputs import BaseModelOutput

        torch = self._torch
        live = list(range(len(batch)))
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
            keep = self._advance(out.logits[:, -1, :], live, *rows.state())
            if not keep:
                break
            live, (hidden, src_mask) = self._narrow(keep, live, cache, (hidden, src_mask))
            current = torch.tensor([[rows.generated[r][-1]] for r in live], dtype=torch.long, device=self.device)

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
        cache = self._encode_lone(prompt[:-1])
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
