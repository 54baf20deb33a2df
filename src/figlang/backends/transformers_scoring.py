"""Scoring continuations with a causal LM (:class:`CausalScoring`, a part of
:class:`~figlang.backends.transformers_backend.TransformersBackend`): the naive path, shared-prefix key/value
caches, and packed continuation trees; see the backend module's docstring."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from figlang.backends.prefix import shared_prefix_length
from figlang.backends.base import CapabilityError, ContinuationScore, ScoreRequest
from figlang.backends.hf_text import ModelHost
from figlang.backends.transformers_support import TokenTree, _batches, _select_cache_rows


class CausalScoring(ModelHost):
    """The causal-LM scoring methods of TransformersBackend (it holds the model, tokenizer and options they use)."""

    # What the host class sets (in ``__init__``, or with the weights) and only these methods read (the rest: ModelHost).
    pad_id: int
    prefix_reuse: bool
    _packable: bool

    if TYPE_CHECKING:  # the host's methods (TransformersBackend)

        def _outside_window(self, slots_before: int, n_new: int) -> bool: ...
        def _score_seq2seq(self, requests: Sequence[ScoreRequest]) -> list[ContinuationScore]: ...

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
            saved = 0
            runs: list[tuple[int, int, int]] = []
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
            for batch in _batches(rows, lambda x, width=width_ctx: len(x[2]) + 1 + width, self.batch_size, self.max_batch_tokens):
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
