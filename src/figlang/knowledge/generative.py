"""Model-made knowledge: an instruction model prompted per relation, or a COMET/ParaCOMET checkpoint.

:class:`GenerativeProvider` (``generative``) asks any figlang generation backend
(:func:`figlang.methods.prompted.backend_for`: a catalog name such as ``smollm2-135m``, a local
directory, a hub id or an endpoint) one question per relation and pre-fills the answer's start,
so the model completes the shipped template's own words:

* context (about the narrator, from the narrative minus its last sentence): xNeed "Before this,
  the narrator needed to …", xIntent "The narrator intended to …", xWant "After this, the narrator
  will want to …", xReact "The narrator feels …", xEffect "As a result, the narrator …", xAttr
  "The narrator is …"; written as the shipped "The narrator needed to …", "… reacted …", "The
  effect on narrator is …", "… has an attribute of being …";
* literal, idiom: per content word, "{Word} is usually / can / wants / can be found in / is used
  for / is made of …" for HasProperty, CapableOf, Desires, AtLocation, UsedFor, MadeUpOf, laid out
  like the shipped files;
* literal, simile: "{A vehicle} is …", up to 12 distinct answers ("The associated property is …").

Top 2 per relation: the greedy answer plus ``samples`` sampled answers (per-item seeds, so batching
and order do not matter), each cut at the first clause boundary and at ``max_words`` words,
trailing function words dropped, de-duplicated case-insensitively; the first two distinct
answers are kept (greedy first). A chat model gets its chat template with the pre-filled answer
as the assistant's turn; a plain model gets "question\\n\\nanswer start".

:class:`CometProvider` (``comet``) runs a COMET-ATOMIC-2020 / ParaCOMET-style BART checkpoint
(hub id or local directory, loaded through the same resolver) with the COMET input format
``"{head} {relation} [GEN]"``: the head is the narrative minus its last sentence for the ATOMIC
relations (kept from its end when longer than ``max_source_tokens``), the content word (idiom) or
the vehicle (simile) for the ConceptNet relations (HasProperty, CapableOf, Desires, AtLocation,
UsedFor, MadeUpOf). Beam search (``num_beams``, default 5), the top 2 distinct beams per relation
("none" dropped), 12 for a simile's HasProperty. Tails are used as COMET writes them ("to buy a
ticket" -> "The narrator needed to buy a ticket").
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from figlang.core.errors import FiglangError
from figlang.backends.base import CapabilityError, ChatMessage, GenerationRequest
from figlang.backends.backend_cache import backend_for
from figlang.knowledge.base import (
    CONTEXT_RELATIONS,
    LITERAL_RELATIONS,
    MAX_INFERENCES,
    PER_RELATION,
    KnowledgeError,
    KnowledgeInput,
    KnowledgeProvider,
    content_words,
    context_inference,
    layout_literal,
    simile_inference,
    simile_vehicle,
)

__all__ = ["CONTEXT_PROMPTS", "DEFAULT_MODEL", "CometProvider", "GenerativeProvider", "LITERAL_PROMPTS", "clean_tail"]

DEFAULT_MODEL = "smollm2-135m"


@dataclass(frozen=True)
class RelationPrompt:
    question: str  # the user's question ({word}, {phrase}, {simile} filled in)
    prefill: str  # the start of the answer the model completes
    tail_prefix: str = ""  # put before the completion in the inference ("to " after "needed to")
    max_words: int | None = None  # a tighter word limit than the provider's (feelings, attributes)


CONTEXT_PROMPTS: dict[str, RelationPrompt] = {
    "xNeed": RelationPrompt(
        "What did the narrator need to do before the events of the story?", "Before this, the narrator needed to", "to "
    ),
    "xIntent": RelationPrompt(
        "Why did the narrator act as they did in the story? What did they intend?", "The narrator intended to", "to "
    ),
    "xWant": RelationPrompt("What will the narrator want to do after the story?", "After this, the narrator will want to", "to "),
    "xReact": RelationPrompt(
        "How does the narrator feel at the end of the story? Answer with one or two words.", "The narrator feels", "", 4
    ),
    "xEffect": RelationPrompt("What happens to the narrator as a result of the story?", "As a result, the narrator"),
    "xAttr": RelationPrompt("Describe the narrator's personality with one adjective.", "The narrator is", "", 3),
}
CONTEXT_USER = "Read this story.\n\n{head}\n\n{question} Answer with a short phrase."
LITERAL_USER = 'Complete the sentence with a common fact about "{word}" (the everyday thing or action). Answer with a short phrase.'
LITERAL_PROMPTS: dict[str, str] = {
    "HasProperty": "{Word} is usually",
    "CapableOf": "{Word} can",
    "Desires": "{Word} wants",
    "AtLocation": "{Word} can be found in",
    "UsedFor": "{Word} is used for",
    "MadeUpOf": "{Word} is made of",
}
SIMILE_USER = 'Think of {phrase}, as in the comparison "{simile}". Name a property that {phrase} has. Answer with a short phrase.'
SIMILE_PREFILL = "{Phrase} is"
STOP = ("\n", ".", ",", ";", ":", "!", "?", "(")

_TRAILING = frozenset(
    "a an the of to in on at by for with from and or but that which who is are was were be their his her its my your "
    "our them they it as so very than then when while because if".split()
)


def clean_tail(text: str, max_words: int = 8) -> str:
    """A model's completion as an inference tail: first clause, at most ``max_words`` words, no trailing function word."""
    text = str(text).replace("\u2019", "'")
    for stop in STOP:
        text = text.split(stop, 1)[0]
    text = re.split(r"\s+(?:but|because|which|who|so that|although)\s+", " " + text + " ")[0]
    words = [w.strip("\"'*`") for w in text.split()]
    words = [w for w in words if w][:max_words]
    while words and words[-1].lower() in _TRAILING:
        words.pop()
    return " ".join(words).lower()


_GENERIC = frozenset("person man woman character individual one narrator".split())


def _drop_copula(tail: str, relation: Any = None) -> str:
    """ "is consumed by guilt" -> "consumed by guilt" (the template already says "is"); a possessive fragment -> '';
    for feelings and attributes, "a kind person" -> "kind"."""
    if tail.startswith(("s ", "'s ")):
        return ""
    tail = re.sub(r"^(?:is|was|are|were)\s+", "", tail)
    if relation in ("xAttr", "xReact"):
        words = tail.split()
        if words and words[0] in ("a", "an", "very"):
            words = words[1:]
        if len(words) > 1 and words[-1] in _GENERIC:
            words = words[:-1]
        tail = " ".join(words)
    return tail


def _distinct(tails: Sequence[str], n: int) -> list[str]:
    out: list[str] = []
    for t in tails:
        if t and t.lower() != "none" and t.lower() not in (x.lower() for x in out):
            out.append(t)
            if len(out) == n:
                break
    return out


def _assemble(inp: KnowledgeInput, kind: str, tails: dict[Any, list[str]], max_content_words: int) -> list[str]:
    """One input's inferences in the shipped surface forms, from its tails per slot (a context relation, or a
    (word, literal relation) pair; a simile's under HasProperty)."""
    if kind == "context":
        return [context_inference(rel, t) for rel in CONTEXT_RELATIONS for t in tails.get(rel, [])]
    if inp.expression_type == "simile":
        return [simile_inference(t) for t in tails.get("HasProperty", [])]
    words = content_words(inp.expression or "", max_content_words)
    candidates: dict[str, dict[str, list[str]]] = {w: {} for w in words}
    for (word, rel), ts in tails.items():
        candidates[word][rel] = ts
    return layout_literal(candidates, words)


def _seed(seed: int, *parts: Any) -> int:
    digest = hashlib.sha256(json.dumps([seed, *parts], ensure_ascii=False).encode()).hexdigest()
    return int(digest[:8], 16)


def _article_phrase(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


class GenerativeProvider(KnowledgeProvider):
    """Context and literal knowledge from an instruction model, prompted per relation (top 2 per relation)."""

    name = "generative"
    VERSION = 2

    def __init__(
        self,
        model: Any = DEFAULT_MODEL,
        *,
        samples: int = 3,
        max_new_tokens: int = 8,
        temperature: float = 0.7,
        top_k: int = 40,
        seed: int = 0,
        max_words: int = 8,
        max_content_words: int = 4,
        simile_samples: int = 15,
        chunk_size: int = 16,
        cache: Any = None,
        **backend_options: Any,
    ) -> None:
        super().__init__(cache=cache)
        if not model:
            raise FiglangError("the generative provider needs a model (catalog name, local path, hub id or endpoint)")
        self.model = model
        self.samples = int(samples)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.top_k = int(top_k)
        self.seed = int(seed)
        self.max_words = int(max_words)
        self.max_content_words = int(max_content_words)
        self.simile_samples = int(simile_samples)
        self.chunk_size = int(chunk_size)
        self.backend_options = dict(backend_options)
        self._lm: Any = None
        if self.samples < 0 or self.max_new_tokens < 1 or self.temperature <= 0:
            raise FiglangError("generative provider: samples >= 0, max_new_tokens >= 1 and temperature > 0 are required")

    @property
    def lm(self) -> Any:
        if self._lm is None:
            self._lm = backend_for(self.model, **self.backend_options)
            if not getattr(self._lm, "can_generate", True):
                raise KnowledgeError(f"{self._lm.info().model} cannot generate text: the generative provider needs a generation model")
        return self._lm

    def fingerprint(self) -> dict[str, Any]:
        runtime = getattr(self.lm, "runtime_options", None)
        speed_only = set(runtime()) if callable(runtime) else set()
        prompts = {
            "context_user": CONTEXT_USER,
            "context": {k: vars(v) for k, v in CONTEXT_PROMPTS.items()},
            "literal_user": LITERAL_USER,
            "literal": LITERAL_PROMPTS,
            "simile_user": SIMILE_USER,
            "simile_prefill": SIMILE_PREFILL,
        }
        return {
            "provider": self.name,
            "version": self.VERSION,
            "backend": self.lm.fingerprint(),
            "backend_options": {k: v for k, v in sorted(self.backend_options.items()) if k not in speed_only},
            "chat": bool(self.lm.has_chat_template),
            "samples": self.samples,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "top_k": self.top_k,
            "seed": self.seed,
            "max_words": self.max_words,
            "max_content_words": self.max_content_words,
            "simile_samples": self.simile_samples,
            "stop": list(STOP),
            "prompts_sha": hashlib.sha256(json.dumps(prompts, sort_keys=True).encode()).hexdigest()[:16],
        }

    # -- prompts
    def prompt(self, user: str, prefill: str) -> str:
        if self.lm.has_chat_template:
            return self.lm.chat_prompt([ChatMessage("user", user), ChatMessage("assistant", prefill)])
        return f"{user}\n\n{prefill}"

    def _requests(self, prompt: str, n_samples: int, seed: int) -> list[Any]:
        reqs = [GenerationRequest(prompt, max_new_tokens=self.max_new_tokens, do_sample=False, stop=STOP, n=1, seed=seed)]
        if n_samples > 0:
            reqs.append(
                GenerationRequest(
                    prompt,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=True,
                    temperature=self.temperature,
                    top_k=self.top_k,
                    stop=STOP,
                    n=n_samples,
                    seed=seed,
                )
            )
        return reqs

    def queries(self, inp: KnowledgeInput, kind: str) -> list[tuple[Any, str, str, int]]:
        """(slot, prompt, tail prefix, how many tails) per question the input needs; slot = relation or (word, relation)."""
        out: list[tuple[Any, str, str, int]] = []
        if kind == "context":
            head = inp.head
            for rel in CONTEXT_RELATIONS:
                p = CONTEXT_PROMPTS[rel]
                out.append((rel, self.prompt(CONTEXT_USER.format(head=head, question=p.question), p.prefill), p.tail_prefix, PER_RELATION))
            return out
        if not inp.expression:
            raise KnowledgeError("literal knowledge needs the record's idiom or simile")
        if inp.expression_type == "simile":
            phrase = _article_phrase(simile_vehicle(inp.expression)[0])
            user = SIMILE_USER.format(phrase=phrase, simile=" ".join(inp.expression.split()))
            out.append(
                ("HasProperty", self.prompt(user, SIMILE_PREFILL.format(Phrase=phrase[:1].upper() + phrase[1:])), "", MAX_INFERENCES)
            )
            return out
        for word in content_words(inp.expression, self.max_content_words):
            for rel in LITERAL_RELATIONS:
                prefill = LITERAL_PROMPTS[rel].format(Word=word[:1].upper() + word[1:])
                out.append(((word, rel), self.prompt(LITERAL_USER.format(word=word), prefill), "", PER_RELATION))
        return out

    # -- work
    def compute(self, inputs: Sequence[KnowledgeInput], kind: str) -> list[list[str]]:
        self.check_kind(kind)
        plan: list[tuple[int, Any, str, int, int]] = []  # (input index, slot, prefix, wanted, first request index)
        requests: list[Any] = []
        for i, inp in enumerate(inputs):
            for slot, prompt, prefix, wanted in self.queries(inp, kind):
                n_samples = self.simile_samples if wanted > PER_RELATION else self.samples
                plan.append((i, slot, prefix, wanted, len(requests)))
                requests += self._requests(prompt, n_samples, _seed(self.seed, kind, inp.key(kind), slot))
        outputs = self.lm.generate(requests) if requests else []
        tails: list[dict[Any, list[str]]] = [{} for _ in inputs]
        for k, (i, slot, prefix, wanted, first) in enumerate(plan):
            last = plan[k + 1][4] if k + 1 < len(plan) else len(requests)
            texts = [t for out in outputs[first:last] for t in out]
            limit = self.max_words
            if kind == "context" and CONTEXT_PROMPTS[slot].max_words:
                limit = min(limit, CONTEXT_PROMPTS[slot].max_words or limit)
            cleaned = [_drop_copula(clean_tail(t, limit), slot) for t in texts]
            tails[i][slot] = [prefix + t for t in _distinct(cleaned, wanted)]
        return [_assemble(inp, kind, t, self.max_content_words) for inp, t in zip(inputs, tails)]


class CometProvider(KnowledgeProvider):
    """COMET / ParaCOMET (BART seq2seq) knowledge: "{head} {relation} [GEN]", beam search, top 2 per relation."""

    name = "comet"
    VERSION = 1
    GEN_TOKEN = "[GEN]"

    def __init__(
        self,
        model: Any,
        *,
        num_beams: int = 5,
        top: int = PER_RELATION,
        simile_top: int = MAX_INFERENCES,
        max_new_tokens: int = 24,
        max_source_tokens: int = 256,
        batch_size: int = 16,
        max_content_words: int = 4,
        cache: Any = None,
        **backend_options: Any,
    ) -> None:
        super().__init__(cache=cache)
        if not model:
            raise KnowledgeError("the comet provider needs a COMET/ParaCOMET BART checkpoint (hub id or local directory)")
        self.model = model
        self.num_beams = int(num_beams)
        self.top = int(top)
        self.simile_top = int(simile_top)
        self.max_new_tokens = int(max_new_tokens)
        self.max_source_tokens = int(max_source_tokens)
        self.batch_size = int(batch_size)
        self.chunk_size = 64
        self.max_content_words = int(max_content_words)
        self.backend_options = dict(backend_options)
        self._lm: Any = None
        if self.top < 1 or self.num_beams < self.top:
            raise FiglangError(f"comet provider: need 1 <= top <= num_beams (got top={self.top}, num_beams={self.num_beams})")

    @property
    def lm(self) -> Any:
        if self._lm is None:
            lm = backend_for(self.model, **self.backend_options)
            if getattr(lm, "kind", None) != "seq2seq" or not hasattr(lm, "model") or not hasattr(lm, "tokenizer"):
                raise CapabilityError(
                    f"{lm.info().model} is not a local seq2seq (BART/T5) Transformers model: the comet provider runs "
                    "COMET/ParaCOMET checkpoints with beam search"
                )
            self._lm = lm
        return self._lm

    def fingerprint(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "version": self.VERSION,
            "backend": self.lm.fingerprint(),
            "format": "{head} {relation} [GEN]",
            "num_beams": self.num_beams,
            "top": self.top,
            "simile_top": self.simile_top,
            "max_new_tokens": self.max_new_tokens,
            "max_source_tokens": self.max_source_tokens,
            "max_content_words": self.max_content_words,
        }

    @classmethod
    def comet_input(cls, head: str, relation: str) -> str:
        """The COMET-ATOMIC-2020 input: ``"{head} {relation} [GEN]"``."""
        return f"{' '.join(head.split())} {relation} {cls.GEN_TOKEN}"

    def queries(self, inp: KnowledgeInput, kind: str) -> list[tuple[Any, str, int]]:
        """(slot, COMET input, how many tails) per relation the input needs."""
        if kind == "context":
            return [(rel, self.comet_input(inp.head, rel), self.top) for rel in CONTEXT_RELATIONS]
        if not inp.expression:
            raise KnowledgeError("literal knowledge needs the record's idiom or simile")
        if inp.expression_type == "simile":
            return [("HasProperty", self.comet_input(simile_vehicle(inp.expression)[0], "HasProperty"), self.simile_top)]
        return [
            ((w, rel), self.comet_input(w, rel), self.top)
            for w in content_words(inp.expression, self.max_content_words)
            for rel in LITERAL_RELATIONS
        ]

    def encode(self, sources: Sequence[str]) -> dict[str, Any]:
        """Tokenized COMET inputs (padded tensors); a source longer than ``max_source_tokens`` loses its
        start, never its end ("{relation} [GEN]" and the end-of-sequence token)."""
        tok = self.lm.tokenizer
        side = getattr(tok, "truncation_side", "right")
        try:
            tok.truncation_side = "left"
            enc = tok(list(sources), return_tensors="pt", padding=True, truncation=True, max_length=self.max_source_tokens)
        finally:
            tok.truncation_side = side
        return {k: v.to(self.lm.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}

    def beams(self, sources: Sequence[str], n_return: int) -> list[list[str]]:
        """The ``n_return`` best beams (decoded, stripped) for each COMET input, in beam order."""
        lm = self.lm
        torch = __import__("torch")
        beams = max(self.num_beams, n_return)
        out: list[list[str]] = []
        with torch.inference_mode():
            for start in range(0, len(sources), max(1, self.batch_size)):
                batch = list(sources[start : start + self.batch_size])
                gen = lm.model.generate(
                    **self.encode(batch),
                    num_beams=beams,
                    num_return_sequences=n_return,
                    do_sample=False,
                    early_stopping=True,
                    max_new_tokens=self.max_new_tokens,
                )
                texts = lm.tokenizer.batch_decode(gen, skip_special_tokens=True, clean_up_tokenization_spaces=True)
                for b in range(len(batch)):
                    out.append([" ".join(t.split()) for t in texts[b * n_return : (b + 1) * n_return]])
        return out

    def compute(self, inputs: Sequence[KnowledgeInput], kind: str) -> list[list[str]]:
        self.check_kind(kind)
        plans = [self.queries(inp, kind) for inp in inputs]
        by_n: dict[int, list[str]] = {}
        for plan in plans:
            for _slot, source, n in plan:
                by_n.setdefault(n, [])
                if source not in by_n[n]:
                    by_n[n].append(source)
        decoded: dict[tuple[int, str], list[str]] = {}
        for n, sources in by_n.items():
            n_return = max(n, min(self.num_beams, n + 2))  # a few spare beams for "none" and repeats
            for source, beams in zip(sources, self.beams(sources, n_return)):
                decoded[(n, source)] = beams
        results = []
        for inp, plan in zip(inputs, plans):
            tails = {slot: _distinct(decoded[(n, source)], n) for slot, source, n in plan}
            results.append(_assemble(inp, kind, tails, self.max_content_words))
        return results
