"""Cloze methods that use what the narrative benchmark gives beside the story (issue 22).

* ``lm-score-meaning``: the LM scores each continuation after a meaning line and the narrative,
  "'go places' means to progress or find success in some area of one's life. <narrative>" (for a
  simile: "'like an unfinished nightmare' here means terrifying and enigmatic."). The meaning is the
  record's own (the idiom's gloss, the simile's property); where an item has none (the 27 simile
  records whose property is ``false``, a user's narrative) the meaning sources of
  :mod:`figlang.knowledge.meanings` are asked in turn (lexicon, simile pattern, WordNet, and an
  instruction model when ``meaning_model`` names one), and the prediction records which one supplied
  it (``meta.meaning_source``) or that none did (then the item is scored without a meaning line,
  or refused with ``missing=error``).
* ``qa-meaning`` / ``few-shot-meaning``: the ``qa`` and ``few-shot`` prompts with the meaning line
  before every narrative shown (the few-shot examples' too).
* ``lm-score-knowledge``: the paper's knowledge enhancement (Chakrabarty et al., TACL 2022, §4) for
  an LM: each continuation is scored under each of the record's 12 inferences (``context`` or
  ``literal``), and the 12 log-probabilities are pooled (``aggregate=lse``: log of the mean
  probability, a mixture over the inferences; ``mean``: the mean log-probability, the paper's sum
  up to a constant; ``max``).

The meaning line or the inference comes first by default, as the knowledge-enhanced encoders read
``Inf </s> N </s> C``; ``position=after`` (meaning) / ``order=narrative-first`` (knowledge) puts it
between the narrative and the continuation instead, so that every scored text of an item starts with
the same narrative: the backends encode that shared prefix once (the Transformers backend reuses its
key/value cache, llama.cpp its prompt cache), which makes the 12 inferences cost little more than
one plain scoring.

All requests of one ``predict()`` call go to the backend in one ``score()`` call, so any backend
that scores (Transformers, llama.cpp, an OpenAI-compatible server with echo/logprobs) runs them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.records import ClozeRecord, Record
from figlang.backends.base import ScoreRequest
from figlang.methods.base import MethodRegistry, Prediction
from figlang.core.options import option_names, options_from_signature
from figlang.methods.prompted.common import ModelMethod, parse_choice, parse_int
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.cloze import (
    FEW_SHOT_OPTIONS,
    NEUTRAL_HELP,
    NORMS,
    QA,
    QA_OPTIONS,
    FewShot,
    NeutralPrompt,
    _cloze,
    _context,
    _normalise,
    _prediction,
    lm_score_prediction,
    option_requests,
    score_options,
)
from figlang.knowledge.providers import get_provider
from figlang.knowledge.meanings import Meaning
from figlang.knowledge.meanings import DEFAULT_LEXICONS, DEFAULT_SOURCES, MeaningFinder
from figlang.knowledge.providers import KnowledgeInput

MEANING_LINE = {"idiom": "'{expression}' means {meaning}", "simile": "'{expression}' here means {meaning}"}
MEANING_LINE_NO_EXPRESSION = "The figurative expression here means {meaning}"
POSITIONS = ("before", "after")
MISSING = ("plain", "error")
MEANING_NORMS = (*NORMS, "meaning-pmi")  # meaning-pmi: log P(c | meaning, N) - log P(c | N)
KNOWLEDGE_KINDS = ("context", "literal")
ORDERS = ("inference-first", "narrative-first")
AGGREGATES = ("lse", "mean", "max")
PROVIDERS = ("none", "precomputed", "wordnet", "generative", "comet")


def _sentence(text: str) -> str:
    """A gloss made to sit in a sentence: spaces collapsed, a dictionary's capital dropped, one final full stop."""
    t = " ".join(str(text).split()).strip().rstrip(".;:, ")
    first = t.split(" ", 1)[0] if t else ""
    if first[:1].isupper() and first != "I" and not first.startswith("I'") and not (len(first) > 1 and first.isupper()):
        t = t[:1].lower() + t[1:]
    return t + "."


def meaning_line(record: ClozeRecord, meaning: str) -> str:
    """ "'X' means Y." (similes: "'X' here means Y."); without a known expression, "The figurative expression here means Y."."""

    try:
        inp = KnowledgeInput.from_record(record)
        expression, kind = inp.expression, inp.expression_type
    except FiglangError:
        expression, kind = record.expression, record.expression_type or "idiom"
    if not expression:
        return MEANING_LINE_NO_EXPRESSION.format(meaning=_sentence(meaning))
    template = MEANING_LINE["simile" if kind == "simile" else "idiom"]
    return template.format(expression=" ".join(expression.split()), meaning=_sentence(meaning))


def join_context(narrative: str, extra: str | None, extra_first: bool) -> str:
    """The narrative with a meaning line or an inference before (``extra_first``) or after it."""
    if not extra:
        return narrative
    return f"{extra} {narrative}" if extra_first else f"{narrative} {extra}"


if TYPE_CHECKING:  # the mixins below are mixed into a ModelMethod (their super() calls reach it); at run time, object
    _MixedIntoMethod = ModelMethod
else:
    _MixedIntoMethod = object


class MeaningMixin(_MixedIntoMethod):
    """Meaning options shared by the meaning-aware methods: where meanings come from, where the line goes.

    ``sources`` (comma-separated, in order; default record,lexicon,pattern,wordnet, and lm when
    ``meaning_model`` is given), ``lexicons`` (benchmark,pie or TSV/JSONL files; read from
    the run's data folder, ``--data-dir``, or ``-O data_dir``), ``missing=plain`` (score an item no source knows without a meaning line, saying
    so in its prediction) or ``error``.
    """

    _meanings: dict[str, Any]

    def _init_meaning(
        self,
        position: str = "before",
        sources: Any = None,
        lexicons: Any = None,
        meaning_model: str | None = None,
        missing: str = "plain",
        data_dir: str | None = None,
    ) -> None:
        """The meaning options, declared here once (:data:`MEANING_OPTIONS` is read from this signature)."""
        self.position = parse_choice(position, "position", POSITIONS)
        self.missing = parse_choice(missing, "missing", MISSING)
        chosen = _split_list(sources) if sources is not None else [*DEFAULT_SOURCES, *(["lm"] if meaning_model else [])]
        lex = _split_list(lexicons) if lexicons is not None else list(DEFAULT_LEXICONS)
        self.finder = MeaningFinder(chosen, lex, data_dir=data_dir, model=meaning_model)
        self._lexicon_dir_given = data_dir is not None
        self._meanings = {}

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        """The lexicons are read from the run's data folder (``--data-dir``), unless ``-O data_dir`` named another."""
        if ctx is not None and not self._lexicon_dir_given:
            self.finder.use_data_dir(ctx.data_dir)
        super().bind(task, ctx)

    def resolve_meanings(self, items: Sequence[ClozeRecord]) -> None:
        """Find each item's meaning once (kept by id); ``missing=error`` refuses items no source knows."""
        todo = [r for r in items if r.id not in self._meanings]
        for r in todo:
            self._meanings[r.id] = self.finder.find(r)
        if self.missing == "error":
            lacking = [r for r in items if self._meanings[r.id].text is None]
            if lacking:
                first = self._meanings[lacking[0].id]
                raise FiglangError(
                    f"{self.name}: {len(lacking)} of {len(items)} item(s) have no meaning and no meaning source knew one "
                    f"(first: {lacking[0].id!r}, {first.note}). Give the records a 'meaning' field, add a lexicon "
                    "(-O lexicons=benchmark,pie,FILE.tsv), ask an instruction model (-O meaning_model=qwen2.5-1.5b), "
                    "or pass -O missing=plain to score them without a meaning line"
                )

    def meaning_of(self, record: ClozeRecord) -> str | None:
        found = self._meanings.get(record.id)
        if found is None:
            self.resolve_meanings([record])
            found = self._meanings[record.id]
        return found.text

    def meaning_context(self, record: ClozeRecord) -> str:
        meaning = self.meaning_of(record)
        line = meaning_line(record, meaning) if meaning else None
        return join_context(_context(record), line, self.position == "before")

    def meaning_meta(self, record: ClozeRecord) -> dict[str, Any]:
        found = self._meanings[record.id]
        meta: dict[str, Any] = {"meaning": found.text, "meaning_source": found.source}
        if found.text is None:
            meta["meaning_note"] = f"{found.note}; scored without a meaning line"
        return meta

    def meaning_config(self) -> dict[str, Any]:
        return {
            "meaning_line": MEANING_LINE,
            "meaning_position": self.position,
            "meaning_missing": self.missing,
            "meaning_sources": self.finder.describe(),
        }


_MEANING_HELP = {
    "position": "where the meaning line goes: before or after the narrative",
    "sources": "where meanings come from, in order (comma-separated): record, lexicon, pattern, wordnet, lm",
    "lexicons": "the lexicons of source 'lexicon' (comma-separated): benchmark, pie, or TSV/JSONL files",
    "meaning_model": "an instruction model for source 'lm' (e.g. qwen2.5-1.5b)",
    "missing": "an item no source knows: plain (scored without a meaning line) or error",
    "data_dir": "the lexicons' folder, when not the run's data folder (--data-dir)",
}
_MEANING_CHOICES = {"position": POSITIONS, "missing": MISSING}
#: The options every meaning-aware method takes (through its ``**options``), from :meth:`MeaningMixin._init_meaning`.
MEANING_OPTIONS = options_from_signature(MeaningMixin._init_meaning, _MEANING_HELP, _MEANING_CHOICES)


def _pop_meaning_options(options: dict[str, Any]) -> dict[str, Any]:
    """The meaning options taken out of a method's ``**options`` (the rest go on to its backend or its parent method)."""
    return {name: options.pop(name) for name in option_names(MEANING_OPTIONS) if name in options}


def _split_list(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in str(value).split(",") if v.strip()]


# --------------------------------------------------------------------------------------------
class MeaningLMScore(NeutralPrompt, MeaningMixin, ModelMethod):
    """log P(continuation | meaning line + narrative), normalised by sum / token / char, or PMI.

    ``norm=token`` (default: the best meaning-aware choice on idiom ``selection`` with smollm2-135m, see
    docs/research/meaning_aware.md) divides by the continuation's tokens; ``norm=pmi`` subtracts
    log P(continuation | neutral prompt) (as ``lm-score``'s default);
    ``norm=meaning-pmi`` subtracts log P(continuation | narrative alone): how much the meaning raises it.
    """

    name = "lm-score-meaning"
    shapes = ("cloze",)

    def __init__(
        self,
        model: Any = None,
        norm: str = "token",
        neutral: str = P.DEFAULT_NEUTRAL,
        **options: Any,  # the meaning options (MEANING_OPTIONS), then the backend's
    ) -> None:
        meaning = _pop_meaning_options(options)
        super().__init__(model, options)
        self.norm = parse_choice(norm, "norm", MEANING_NORMS)
        self.init_neutral(neutral)
        self._init_meaning(**meaning)

    def requests_for(self, record: ClozeRecord) -> list[ScoreRequest]:
        """The conditional requests of one item (the scored text: meaning line + narrative, then each option)."""
        return option_requests(self.meaning_context(record), record.options)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        self.require("score")
        self.resolve_meanings(items)
        base_of = {"pmi": lambda r: self.neutral, "meaning-pmi": _context}.get(self.norm)
        scored = score_options(self.lm, items, self.meaning_context, base_of)
        base_key = "neutral_logprob" if self.norm == "pmi" else "narrative_logprob"
        return [lm_score_prediction(r, s, self.norm, base_key, self.meaning_meta(r)) for r, s in zip(items, scored)]

    def config(self) -> dict[str, Any]:
        return self.lm_score_config("meaning line + narrative without markup", self.meaning_config())


if TYPE_CHECKING:

    class _MeaningMixedIntoPrompt(MeaningMixin):
        """For the checker: _MeaningPrompt is mixed into ``qa`` or ``few-shot``, whose predict() and config() its
        super() calls reach (not ModelMethod's abstract ones). At run time _MeaningPrompt derives from MeaningMixin."""

        def predict(self, records: Sequence[Record]) -> list[Prediction]:
            raise NotImplementedError

        def config(self) -> dict[str, Any]:
            raise NotImplementedError
else:
    _MeaningMixedIntoPrompt = MeaningMixin


class _MeaningPrompt(_MeaningMixedIntoPrompt):
    """What ``qa-meaning`` and ``few-shot-meaning`` add to their prompting method: the meaning options, the meaning
    line in every narrative the prompt shows, and each prediction's meaning and its source."""

    def __init__(self, model: Any = None, **options: Any) -> None:  # the meaning options (MEANING_OPTIONS), then the method's
        meaning = _pop_meaning_options(options)
        super().__init__(model, **options)
        self._init_meaning(**meaning)

    def context_of(self, record: ClozeRecord) -> str:
        return self.meaning_context(record)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        self.resolve_meanings(items)
        preds = super().predict(items)
        for p, r in zip(preds, items):
            p.meta.update(self.meaning_meta(r))
        return preds

    def config(self) -> dict[str, Any]:
        return {**super().config(), **self.meaning_config()}


class MeaningQA(_MeaningPrompt, QA):
    """``qa`` with the meaning line before the narrative (same options as ``qa``, plus the meaning options)."""

    name = "qa-meaning"


class MeaningFewShot(_MeaningPrompt, FewShot):
    """``few-shot`` with the meaning line before every narrative shown, the examples' and the item's."""

    name = "few-shot-meaning"

    def fit(self, train: Sequence[Record]) -> None:
        super().fit(train)
        for ex in self.pool or []:  # the examples' own meanings (train records carry them); never an LM call per example
            if ex.id not in self._meanings:
                own = ex.meaning if isinstance(ex.meaning, str) and ex.meaning.strip() else None
                self._meanings[ex.id] = Meaning(own, "record" if own else None, None if own else "train record without a meaning")


# --------------------------------------------------------------------------------------------
def aggregate(values: Sequence[float], how: str) -> float:
    """Pool one option's log-probabilities over the inferences: lse = log mean exp, mean, or max."""
    if how == "mean":
        return sum(values) / len(values)
    if how == "max":
        return max(values)
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values) / len(values))


class KnowledgeLMScore(NeutralPrompt, ModelMethod):
    """The paper's knowledge-enhanced scoring for an LM: each continuation under each of the 12 inferences, pooled.

    ``knowledge=context|literal`` picks the inference files; ``order=inference-first`` scores
    "Inf_j. N" -> C (the encoders' order), ``narrative-first`` "N Inf_j." -> C (all 12 contexts share the
    narrative, so its key/value cache is computed once); ``aggregate=lse|mean|max`` pools over j;
    ``norm=sum|token|pmi`` (pmi subtracts log P(C | neutral prompt), once per option). A record without
    inferences of that kind is refused with the fix, unless ``provider`` (wordnet, generative, comet)
    computes them.
    """

    name = "lm-score-knowledge"
    shapes = ("cloze",)

    def __init__(
        self,
        model: Any = None,
        knowledge: str = "context",
        order: str = "inference-first",
        aggregate: str = "lse",
        norm: str = "sum",
        neutral: str = P.DEFAULT_NEUTRAL,
        max_inferences: int = 12,
        provider: str = "none",
        provider_model: str | None = None,
        **backend_options: Any,
    ) -> None:
        super().__init__(model, backend_options)
        self.knowledge = parse_choice(knowledge, "knowledge", KNOWLEDGE_KINDS)
        self.order = parse_choice(order, "order", ORDERS)
        self.aggregate = parse_choice(aggregate, "aggregate", AGGREGATES)
        self.norm = parse_choice(norm, "norm", ("sum", "token", "pmi"))
        self.init_neutral(neutral)
        self.max_inferences = parse_int(max_inferences, "max_inferences", 1)
        self.provider_name = parse_choice(provider, "provider", PROVIDERS)
        self.provider_model = provider_model
        self._provider: Any = None
        self._ctx: RunContext | None = None

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        """The run's context: the precomputed provider reads the benchmark's inferences from its data folder (--data-dir)."""
        self._ctx = ctx

    def inferences_of(self, items: Sequence[ClozeRecord]) -> list[tuple[str, ...]]:
        """Each item's inferences of the chosen kind (at most ``max_inferences``), from the record or the provider."""
        out: list[tuple[str, ...] | None] = [tuple(r.inferences.get(self.knowledge, ()))[: self.max_inferences] or None for r in items]
        lacking = [i for i, x in enumerate(out) if x is None]
        if lacking and self.provider_name != "none":
            if self._provider is None:
                opts = {"model": self.provider_model} if self.provider_model else {}
                self._provider = get_provider(self.provider_name, ctx=self._ctx, **opts)
            got = self._provider.infer([items[i] for i in lacking], self.knowledge)
            for i, infs in zip(lacking, got):
                out[i] = tuple(infs)[: self.max_inferences] or None
        missing = [items[i].id for i, x in enumerate(out) if x is None]
        if missing:
            raise FiglangError(
                f"{self.name}: {len(missing)} item(s) have no {self.knowledge} inferences (first: {missing[0]!r}). "
                f"The figurative-narrative tasks load them from data/*_inferences_{self.knowledge}/; for other narratives "
                "let a knowledge provider compute them (-O provider=wordnet for literal knowledge, -O provider=generative "
                "-O provider_model=qwen2.5-1.5b for either kind), or use lm-score"
            )
        return out  # type: ignore[return-value]

    def context(self, record: ClozeRecord, inference: str) -> str:
        """One scored prefix: the inference (as a sentence) with the narrative, in ``order``."""
        inf = " ".join(inference.split()).rstrip(" .") + "."
        return join_context(_context(record), inf, self.order == "inference-first")

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        self.require("score")
        infs = self.inferences_of(items)
        requests: list[ScoreRequest] = []
        for r, these in zip(items, infs):
            for inf in these:
                requests += option_requests(self.context(r, inf), r.options)
        n_conditional = len(requests)
        if self.norm == "pmi":
            for r in items:
                requests += option_requests(self.neutral, r.options)
        results = self.lm.score(requests)
        out, k, u = [], 0, n_conditional
        for r, these in zip(items, infs):
            n = len(r.options)
            per_inf = [
                [_normalise(results[k + j * n + i], "token" if self.norm == "token" else "sum") for i in range(n)]
                for j in range(len(these))
            ]
            k += n * len(these)
            pooled = [aggregate([row[i] for row in per_inf], self.aggregate) for i in range(n)]
            meta: dict[str, Any] = {"inferences": len(these), "per_inference": per_inf}
            if self.norm == "pmi":
                neutral = [results[u + i].logprob for i in range(n)]
                u += n
                meta["neutral_logprob"] = neutral
                pooled = [p - b for p, b in zip(pooled, neutral)]
            out.append(_prediction(r, pooled, meta))
        return out

    def config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "knowledge": self.knowledge,
            "order": self.order,
            "aggregate": self.aggregate,
            "norm": self.norm,
            "max_inferences": self.max_inferences,
            "provider": self.provider_name,
            "provider_model": self.provider_model,
            "context": "inference + narrative without markup" if self.order == "inference-first" else "narrative + inference",
            "continuation": P.LM_SCORE_CONTINUATION,
            "ties": "lowest index",
        }
        return {**cfg, **self.neutral_config(), **self.model_config()}


LM_SCORE_MEANING_OPTIONS = options_from_signature(
    MeaningLMScore,
    {"norm": "sum | token | char | pmi, or meaning-pmi: minus log P(continuation | narrative alone)", "neutral": NEUTRAL_HELP},
    {"norm": MEANING_NORMS},
    include=[MEANING_OPTIONS],
)
QA_MEANING_OPTIONS = options_from_signature(MeaningQA, {}, include=[MEANING_OPTIONS, QA_OPTIONS])
FEW_SHOT_MEANING_OPTIONS = options_from_signature(MeaningFewShot, {}, include=[MEANING_OPTIONS, FEW_SHOT_OPTIONS])
LM_SCORE_KNOWLEDGE_OPTIONS = options_from_signature(
    KnowledgeLMScore,
    {
        "knowledge": "which of the record's inferences: context or literal",
        "order": "inference-first or narrative-first",
        "aggregate": "how the scores under each inference are pooled: lse, mean or max",
        "norm": "sum, token or pmi",
        "neutral": NEUTRAL_HELP,
        "max_inferences": "inferences used an item at most",
        "provider": "where inferences come from when the record has none: none, precomputed, wordnet, generative, comet",
        "provider_model": "the provider's model (generative, comet)",
    },
    {"knowledge": KNOWLEDGE_KINDS, "order": ORDERS, "aggregate": AGGREGATES, "norm": ("sum", "token", "pmi"), "provider": PROVIDERS},
)


def register(registry: MethodRegistry) -> None:
    """Add this module's methods to ``registry`` (called by the registry on first use)."""
    meaning_opts = (
        "position=before|after, sources=record,lexicon,pattern,wordnet[,lm], lexicons=benchmark,pie[,FILE], "
        "meaning_model=NAME, missing=plain|error"
    )
    registry.add(
        MeaningLMScore,
        f"lm-score after a meaning line (\"'X' means Y.\"); the prediction says which source gave the meaning; -O norm=sum|token|char|pmi|meaning-pmi (default token, chosen on idiom selection: docs/meaning_aware.md), {meaning_opts}.",
        options=LM_SCORE_MEANING_OPTIONS,
    )
    registry.add(
        MeaningQA,
        f"qa with the meaning line before the narrative; qa's options plus {meaning_opts}.",
        options=QA_MEANING_OPTIONS,
    )
    registry.add(
        MeaningFewShot,
        f"few-shot with the meaning line before every narrative; few-shot's options plus {meaning_opts}.",
        options=FEW_SHOT_MEANING_OPTIONS,
    )
    registry.add(
        KnowledgeLMScore,
        "The paper's knowledge enhancement for an LM: each continuation scored under each of the 12 inferences, pooled; -O knowledge=context|literal, order=inference-first|narrative-first, aggregate=lse|mean|max, norm=sum|token|pmi, provider=none|wordnet|generative|comet.",
        options=LM_SCORE_KNOWLEDGE_OPTIONS,
    )
