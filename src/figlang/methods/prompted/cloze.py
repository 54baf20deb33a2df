"""Cloze methods (the figurative-narrative paper, TACL 2022, §5): pick the plausible continuation.

* ``lm-score``: log P(continuation | narrative), normalised by sum / token / char, or PMI
  against a neutral prompt (the paper's GPT-2 baseline).
* ``qa``: the UnifiedQA question "Which is more plausible between the two based on the
  context?" with lettered options, answered by scoring letters or option texts.
* ``few-shot``: "Q: N (1) C1 (2) C2 A: (1)" with training examples up to a budget.
* ``pet``: PET's zero-shot pattern-verbalizer pairs ("… You are right/wrong").

All scoring requests of one ``predict()`` call go to the backend in one ``score()`` call.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import ClozeRecord, Record
from figlang.backends.base import MASK, CapabilityError, ContinuationScore, MaskedScoreRequest, ScoreRequest
from figlang.methods.base import MethodRegistry, Prediction
from figlang.core.options import options_from_signature
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.common import (
    EXCLUDE_CHOICES,
    ModelMethod,
    argmax_first,
    excluded_by_figure,
    parse_bool,
    parse_chat,
    parse_choice,
    parse_int,
    pool_digest,
    same_text,
)
from figlang.methods.prompted.lm_eval_input import LM_EVAL_DELIMITER, LM_EVAL_NORMS, lm_eval_request, lm_eval_score

NORMS = ("sum", "token", "char", "pmi")
INPUTS = ("figlang", "lm-eval")


def _cloze(records: Sequence[Record], method: str) -> list[ClozeRecord]:
    out = []
    for r in records:
        if not isinstance(r, ClozeRecord):
            raise FiglangError(f"method {method!r} answers cloze records, got {type(r).__name__} {getattr(r, 'id', '?')!r}")
        if len(r.options) < 2:
            raise FiglangError(f"cloze record {r.id!r} has {len(r.options)} option(s); {method!r} needs at least two")
        out.append(r)
    return out


def _context(record: ClozeRecord) -> str:
    """The narrative without the expression's markup, whitespace-normalised at its ends."""
    return record.context.strip()


def narrative_text(record: ClozeRecord) -> str:
    """The text every cloze method conditions on; `figlang export lm-eval` writes it as the doc's context."""
    return _context(record)


def _normalise(score: ContinuationScore, norm: str) -> float:
    if norm == "token":
        return score.logprob / max(score.n_tokens, 1)
    if norm == "char":
        return score.logprob / max(score.n_chars, 1)
    return score.logprob


def _prediction(record: ClozeRecord, scores: list[float], meta: dict[str, Any]) -> Prediction:
    best, tie = argmax_first(scores)
    return Prediction(record.id, best, scores=[float(s) for s in scores], meta={**meta, "tie": tie})


def option_requests(context: str, options: Sequence[str]) -> list[ScoreRequest]:
    """One scoring request per option: the option, as ``P.LM_SCORE_CONTINUATION`` words it, after ``context``."""
    return [ScoreRequest(context, P.LM_SCORE_CONTINUATION.format(option=o)) for o in options]


ScoredOptions = tuple[list[ContinuationScore], list[ContinuationScore] | None]


def score_options(
    lm: Any, items: Sequence[ClozeRecord], context_of: Callable[[ClozeRecord], str], base_of: Callable[[ClozeRecord], str] | None
) -> list[ScoredOptions]:
    """Each item's options scored after ``context_of(item)`` and, when ``base_of`` is given, after ``base_of(item)``
    too (the baseline a PMI subtracts), all in one ``lm.score()`` call: per item, the two lists of scores."""
    requests: list[ScoreRequest] = []
    for r in items:  # one context string per narrative: the backend encodes it once
        requests += option_requests(context_of(r), r.options)
    n_conditional = len(requests)
    if base_of is not None:
        for r in items:
            requests += option_requests(base_of(r), r.options)
    results = lm.score(requests)
    out: list[ScoredOptions] = []
    k = 0
    for r in items:
        n = len(r.options)
        base = results[n_conditional + k : n_conditional + k + n] if base_of is not None else None
        out.append((results[k : k + n], base))
        k += n
    return out


def lm_score_prediction(
    record: ClozeRecord,
    scored: ScoredOptions,
    norm: str,
    base_key: str = "neutral_logprob",
    meta: dict[str, Any] | None = None,
) -> Prediction:
    """The prediction from an item's scores: the conditional log-probability less the baseline's (under ``base_key``
    in the meta) where there is one, else the conditional one normalised by ``norm``."""
    cond, base = scored
    out: dict[str, Any] = {**(meta or {}), "logprob": [c.logprob for c in cond], "n_tokens": [c.n_tokens for c in cond]}
    if base is not None:
        scores = [c.logprob - u.logprob for c, u in zip(cond, base)]
        out[base_key] = [u.logprob for u in base]
    else:
        scores = [_normalise(c, norm) for c in cond]
    return _prediction(record, scores, out)


class NeutralPrompt:
    """The neutral prompt that ``norm=pmi`` subtracts: a name in ``P.NEUTRAL_PROMPTS`` or the prompt's own text."""

    norm: str

    def init_neutral(self, neutral: str) -> None:
        """Keep the name given and the prompt it stands for."""
        self.neutral_name = str(neutral)
        self.neutral = P.NEUTRAL_PROMPTS.get(self.neutral_name, self.neutral_name)

    def neutral_config(self) -> dict[str, Any]:
        """The neutral prompt's entries of a method's config (none unless ``norm=pmi``)."""
        return {"neutral": self.neutral_name, "neutral_prompt": self.neutral} if self.norm == "pmi" else {}

    def lm_score_config(self, context: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The config of a method that scores each option after ``context``: the norm, the context, the continuation,
        ``extra``, the tie rule, the neutral prompt (``norm=pmi``), and the model's config."""
        cfg = {"norm": self.norm, "context": context, "continuation": P.LM_SCORE_CONTINUATION, **(extra or {})}
        return {**cfg, "ties": "lowest index", **self.neutral_config(), **self.model_config()}  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
class LMScore(NeutralPrompt, ModelMethod):
    """Score each option as the continuation of the narrative; the best-scoring option wins.

    ``input=lm-eval`` asks what lm-evaluation-harness asks of a task `figlang export lm-eval` wrote:
    the same context, the " " target delimiter, joint tokenization, and its normalisations
    (``norm=sum`` is ``acc``, the default there; ``norm=char`` is ``acc_norm``; ``norm=byte`` is
    ``acc_bytes``), so the predictions equal lm-eval's item for item. The default (``input=figlang``)
    tokenizes context and option apart and divides ``char`` by the continuation's length with its space.
    """

    name = "lm-score"
    shapes = ("cloze",)

    def __init__(
        self, model: Any = None, norm: str | None = None, neutral: str = P.DEFAULT_NEUTRAL, input: str = "figlang", **backend_options: Any
    ) -> None:
        super().__init__(model, backend_options)
        self.input = parse_choice(input, "input", INPUTS)
        if self.input == "lm-eval":
            self.norm = parse_choice(norm or "sum", "norm", tuple(LM_EVAL_NORMS))
        else:
            self.norm = parse_choice(norm or "pmi", "norm", NORMS)
        self.init_neutral(neutral)

    def _predict_lm_eval(self, items: list[ClozeRecord]) -> list[Prediction]:
        requests = [lm_eval_request(_context(r), o) for r in items for o in r.options]
        results = self.lm.score(requests)
        out, k = [], 0
        for r in items:
            cond = results[k : k + len(r.options)]
            scores = [lm_eval_score(c.logprob, o, self.norm) for c, o in zip(cond, r.options)]
            meta: dict[str, Any] = {
                "logprob": [c.logprob for c in cond],
                "n_tokens": [c.n_tokens for c in cond],
                "is_greedy": [c.is_greedy for c in cond],
            }
            out.append(_prediction(r, scores, meta))
            k += len(r.options)
        return out

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        self.require("score")
        if self.input == "lm-eval":
            return self._predict_lm_eval(items)
        neutral = (lambda r: self.neutral) if self.norm == "pmi" else None
        scored = score_options(self.lm, items, _context, neutral)
        return [lm_score_prediction(r, s, self.norm) for r, s in zip(items, scored)]

    def config(self) -> dict[str, Any]:
        if self.input == "lm-eval":
            return {
                "norm": self.norm,
                "input": "lm-eval",
                "lm_eval_metric": LM_EVAL_NORMS[self.norm],
                "context": "narrative without markup",
                "target_delimiter": LM_EVAL_DELIMITER,
                "tokenization": "joint",
                "ties": "lowest index",
                **self.model_config(),
            }
        return self.lm_score_config("narrative without markup")


# --------------------------------------------------------------------------------------------
class QA(ModelMethod):
    """The paper's UnifiedQA setup: a question over the narrative with lettered options.

    Causal models (chat template when the model has one) answer by scoring the letters
    ("(A)"/"(B)") or the option texts as the answer's continuation; a seq2seq backend
    scores the option text as the target of UnifiedQA's own input. With ``permute=true``
    (default) every option is shown in every position (cyclic rotations) and its scores
    are averaged, so a model's preference for a letter cannot decide the answer.
    """

    name = "qa"
    shapes = ("cloze",)

    def __init__(
        self,
        model: Any = None,
        answer: str = "letter",
        chat: str | bool = "auto",
        permute: bool = True,
        norm: str = "token",
        fmt: str = "auto",
        **backend_options: Any,
    ) -> None:
        super().__init__(model, backend_options)
        self.answer = parse_choice(answer, "answer", ("letter", "text"))
        self.chat_option = parse_chat(chat)
        self.permute = parse_bool(permute, "permute")
        self.norm = parse_choice(norm, "norm", ("sum", "token", "char"))
        self.fmt_option = parse_choice(fmt, "fmt", ("auto", "causal", "seq2seq"))

    @property
    def fmt(self) -> str:
        if self.fmt_option != "auto":
            return self.fmt_option
        return "seq2seq" if self.lm.info().kind == "seq2seq" else "causal"

    @property
    def applied_norm(self) -> str:
        """The normalisation the scores get: ``norm`` where option texts are scored (answer=text, or any
        seq2seq prompt, which always scores the option text), the plain sum for letters."""
        return self.norm if (self.answer == "text" or self.fmt == "seq2seq") else "sum"

    def _prompt(self, context: str, options: Sequence[str]) -> tuple[str, list[str]]:
        """(prompt, continuation per shown position)."""
        if len(options) > len(P.QA_LETTERS):
            raise FiglangError(f"qa handles at most {len(P.QA_LETTERS)} options")
        letters = P.QA_LETTERS[: len(options)]
        if self.fmt == "seq2seq":
            shown = " ".join(P.QA_SEQ2SEQ_OPTION.format(letter=lt.lower(), option=o) for lt, o in zip(letters, options))
            prompt = P.QA_SEQ2SEQ.format(question=P.QA_QUESTION, options=shown, context=context).lower()
            return prompt, [P.QA_SEQ2SEQ_CONTINUATION.format(option=o).lower() for o in options]
        shown = "\n".join(P.QA_OPTION.format(letter=lt, option=o) for lt, o in zip(letters, options))
        if self.use_chat(self.chat_option):
            prompt = self.chat(P.QA_CHAT.format(context=context, question=P.QA_QUESTION, options=shown))
            letter_t, text_t = P.QA_CHAT_LETTER_CONTINUATION, P.QA_CHAT_TEXT_CONTINUATION
        else:
            prompt = P.QA_PLAIN.format(context=context, question=P.QA_QUESTION, options=shown)
            letter_t, text_t = P.QA_PLAIN_LETTER_CONTINUATION, P.QA_PLAIN_TEXT_CONTINUATION
        if self.answer == "letter":
            return prompt, [letter_t.format(letter=lt) for lt in letters]
        return prompt, [text_t.format(option=o) for o in options]

    def context_of(self, record: ClozeRecord) -> str:
        """The text the question is asked about (the narrative; meaning-aware subclasses prepend the meaning)."""
        return _context(record)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        self.require("score")
        requests: list[ScoreRequest] = []
        layout: list[list[tuple[int, list[int]]]] = []  # per item: (first request index, option at each shown position)
        for r in items:
            n = len(r.options)
            rotations = range(n) if self.permute else range(1)
            views = []
            for rot in rotations:
                order = [(rot + j) % n for j in range(n)]
                prompt, conts = self._prompt(self.context_of(r), [r.options[i] for i in order])
                views.append((len(requests), order))
                requests += [ScoreRequest(prompt, c) for c in conts]
            layout.append(views)
        results = self.lm.score(requests)
        norm = self.applied_norm
        out = []
        for r, views in zip(items, layout):
            n = len(r.options)
            totals = [0.0] * n
            per_view = []
            for start, order in views:
                view = [0.0] * n
                for pos, option in enumerate(order):
                    view[option] = _normalise(results[start + pos], norm)
                    totals[option] += view[option]
                per_view.append(view)
            scores = [t / len(views) for t in totals]
            out.append(_prediction(r, scores, {"per_order": per_view}))
        return out

    def config(self) -> dict[str, Any]:
        fmt = self.fmt
        chat = self.use_chat(self.chat_option) if fmt == "causal" else False
        if fmt == "seq2seq":
            templates = {
                "prompt": P.QA_SEQ2SEQ,
                "option": P.QA_SEQ2SEQ_OPTION,
                "continuation": P.QA_SEQ2SEQ_CONTINUATION,
                "lowercase": True,
            }
        elif chat:
            templates = {
                "user": P.QA_CHAT,
                "option": P.QA_OPTION,
                "continuation": P.QA_CHAT_LETTER_CONTINUATION if self.answer == "letter" else P.QA_CHAT_TEXT_CONTINUATION,
            }
        else:
            templates = {
                "prompt": P.QA_PLAIN,
                "option": P.QA_OPTION,
                "continuation": P.QA_PLAIN_LETTER_CONTINUATION if self.answer == "letter" else P.QA_PLAIN_TEXT_CONTINUATION,
            }
        return {
            "question": P.QA_QUESTION,
            "answer": self.answer if fmt == "causal" else "text",
            "chat": self.chat_option,
            "chat_used": chat,
            "permute": self.permute,
            "norm": self.applied_norm,
            "fmt": fmt,
            "templates": templates,
            "ties": "lowest index",
            **self.model_config(),
        }


# --------------------------------------------------------------------------------------------
class FewShot(ModelMethod):
    """The paper's few-shot format: solved training examples, then the item; " (1)" vs " (2)" scored.

    Examples come from the task's train split in one seeded order; for each item they are
    taken in that order while they fit the character budget (prompt included; one too long
    for what is left is skipped), up to ``max_shots``, never the item itself (same
    narrative) and, with ``exclude=linked`` (default), never one with the same idiom/simile
    or a variant of it (``exclude=expression``: the same expression only, the rule before
    2026-11-24; ``exclude=item``: only the item itself). Answer positions among the examples are balanced (the gold option is
    moved to an evenly spread, seeded position). ``permute=true`` (default) also scores the
    item with its options rotated and averages, cancelling a preference for "(1)" or "(2)"
    (small models otherwise answer "(1)" to everything); ``permute=false`` is the paper's
    single order.
    """

    name = "few-shot"
    shapes = ("cloze",)
    needs_train = True

    def __init__(
        self,
        model: Any = None,
        budget: int = 3000,
        max_shots: int = 8,
        seed: int = 0,
        exclude: str = "linked",
        permute: bool = True,
        **backend_options: Any,
    ) -> None:
        super().__init__(model, backend_options)
        self.budget = parse_int(budget, "budget", 0)
        self.max_shots = parse_int(max_shots, "max_shots", 0)
        self.seed = parse_int(seed, "seed")
        self.exclude = parse_choice(exclude, "exclude", EXCLUDE_CHOICES)
        self.permute = parse_bool(permute, "permute")
        self.pool: list[ClozeRecord] | None = None
        self.pool_size = 0
        self.pool_sha256: str | None = None

    def fit(self, train: Sequence[Record]) -> None:
        pool = [r for r in train if isinstance(r, ClozeRecord) and r.label is not None and not r.label_is_placeholder]
        if not pool:
            raise FiglangError("few-shot needs a labelled cloze train split for its examples")
        rng = random.Random(self.seed)
        pool = sorted(pool, key=lambda r: r.id)
        rng.shuffle(pool)
        self.pool = pool
        self.pool_size = len(pool)
        self.pool_sha256 = pool_digest(pool)

    @staticmethod
    def _options(options: Sequence[str]) -> str:
        return " ".join(P.FEW_SHOT_OPTION.format(number=i + 1, option=o) for i, o in enumerate(options))

    def context_of(self, record: ClozeRecord) -> str:
        """The text shown for an example or the item (the narrative; meaning-aware subclasses prepend the meaning)."""
        return _context(record)

    def _excluded(self, example: ClozeRecord, item: ClozeRecord) -> bool:
        if example.id == item.id or same_text(example.context, item.context):
            return True
        return excluded_by_figure(example, item, self.exclude)

    def examples_for(self, item: ClozeRecord) -> tuple[list[tuple[ClozeRecord, int]], str]:
        """The (example, gold position shown) pairs used for ``item`` and the prompt prefix they make."""
        if self.pool is None:
            raise FiglangError("few-shot was not fitted: the harness must call fit() with the train split")
        query_len = len(P.FEW_SHOT_QUERY.format(context=self.context_of(item), options=self._options(item.options)))
        chosen: list[ClozeRecord] = []
        used = query_len
        for ex in self.pool:
            if len(chosen) >= self.max_shots:
                break
            if self._excluded(ex, item):
                continue
            # the longest rendering of the example (answer digits are one character)
            length = len(P.FEW_SHOT_EXAMPLE.format(context=self.context_of(ex), options=self._options(ex.options), answer=1))
            if used + length + len(P.FEW_SHOT_SEPARATOR) > self.budget:
                continue  # too long for what is left: a shorter one may still fit
            chosen.append(ex)
            used += length + len(P.FEW_SHOT_SEPARATOR)
        n_opts = [len(ex.options) for ex in chosen]
        positions = [j % n for j, n in enumerate(n_opts)]
        random.Random(f"{self.seed}:{len(chosen)}").shuffle(positions)
        positions = [p % n for p, n in zip(positions, n_opts)]
        blocks = []
        shown: list[tuple[ClozeRecord, int]] = []
        for ex, pos in zip(chosen, positions):
            others = [o for i, o in enumerate(ex.options) if i != ex.label]
            options = others[:pos] + [ex.options[ex.label]] + others[pos:]  # type: ignore[index]
            blocks.append(P.FEW_SHOT_EXAMPLE.format(context=self.context_of(ex), options=self._options(options), answer=pos + 1))
            shown.append((ex, pos))
        prefix = "".join(b + P.FEW_SHOT_SEPARATOR for b in blocks)
        return shown, prefix

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        self.require("score")
        requests: list[ScoreRequest] = []
        layout = []
        metas = []
        for r in items:
            shown, prefix = self.examples_for(r)
            n = len(r.options)
            views = []
            for rot in range(n) if self.permute else range(1):
                order = [(rot + j) % n for j in range(n)]
                prompt = prefix + P.FEW_SHOT_QUERY.format(context=self.context_of(r), options=self._options([r.options[i] for i in order]))
                views.append((len(requests), order))
                requests += [ScoreRequest(prompt, P.FEW_SHOT_CONTINUATION.format(number=j + 1)) for j in range(n)]
            layout.append(views)
            metas.append({"examples": [ex.id for ex, _ in shown], "example_positions": [p for _, p in shown], "shots": len(shown)})
        results = self.lm.score(requests)
        out = []
        for r, views, meta in zip(items, layout, metas):
            n = len(r.options)
            totals = [0.0] * n
            for start, order in views:
                for pos, option in enumerate(order):
                    totals[option] += results[start + pos].logprob
            out.append(_prediction(r, [t / len(views) for t in totals], meta))
        return out

    def config(self) -> dict[str, Any]:
        return {
            "budget_chars": self.budget,
            "max_shots": self.max_shots,
            "seed": self.seed,
            "exclude": self.exclude,
            "permute": self.permute,
            "pool_size": self.pool_size,
            "pool_sha256": self.pool_sha256,
            "balanced_positions": True,
            "templates": {
                "example": P.FEW_SHOT_EXAMPLE,
                "query": P.FEW_SHOT_QUERY,
                "option": P.FEW_SHOT_OPTION,
                "separator": P.FEW_SHOT_SEPARATOR,
                "continuation": P.FEW_SHOT_CONTINUATION,
            },
            "ties": "lowest index",
            **self.model_config(),
        }


# --------------------------------------------------------------------------------------------
class PET(ModelMethod):
    """PET's zero-shot pattern-verbalizer pairs: each option's score is log P(good) − log P(bad).

    Idioms: "N C You are ___" with right/wrong; similes: "N C That was ___" with
    expected/unexpected (chosen by the record's ``expression_type``, or forced with
    ``pattern``). A causal LM scores the verbalizers as continuations; a masked LM
    backend that offers masked scoring fills the blank instead.
    """

    name = "pet"
    shapes = ("cloze",)

    def __init__(self, model: Any = None, pattern: str = "auto", **backend_options: Any) -> None:
        super().__init__(model, backend_options)
        self.pattern = parse_choice(pattern, "pattern", ("auto", *P.PET_PATTERNS))

    def kind(self, record: ClozeRecord) -> str:
        if self.pattern != "auto":
            return self.pattern
        t = (record.expression_type or "").lower()
        return t if t in P.PET_PATTERNS else P.PET_DEFAULT_KIND

    @property
    def masked(self) -> bool:
        return self.lm.info().kind == "masked"

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _cloze(records, self.name)
        if self.masked:
            return self._predict_masked(items)
        self.require("score")
        requests = []
        for r in items:
            pv = P.PET_PATTERNS[self.kind(r)]
            for o in r.options:
                context = pv["pattern"].format(context=_context(r), option=o.strip())
                requests += [ScoreRequest(context, pv["good"]), ScoreRequest(context, pv["bad"])]
        results = self.lm.score(requests)
        out, k = [], 0
        for r in items:
            good = [results[k + 2 * i].logprob for i in range(len(r.options))]
            bad = [results[k + 2 * i + 1].logprob for i in range(len(r.options))]
            out.append(_prediction(r, [g - b for g, b in zip(good, bad)], {"pattern": self.kind(r), "good": good, "bad": bad}))
            k += 2 * len(r.options)
        return out

    def _predict_masked(self, items: list[ClozeRecord]) -> list[Prediction]:
        if not getattr(self.lm, "can_score_masked", False):
            raise CapabilityError(f"pet needs a causal LM or a masked LM backend that can fill a blank; {self.lm.info().model} has neither")
        requests: list[MaskedScoreRequest] = []
        for r in items:  # one request per option: the blank filled with the good and with the bad word
            pv = P.PET_MASKED_PATTERNS[self.kind(r)]
            for o in r.options:
                text = pv["pattern"].format(context=_context(r), option=o.strip(), mask=MASK)
                requests.append(MaskedScoreRequest(text, (pv["good"], pv["bad"])))
        results = self.lm.score_masked(requests)  # per request: [score of good, score of bad]
        out, k = [], 0
        for r in items:
            n = len(r.options)
            rows = results[k : k + n]
            good = [row[0].logprob for row in rows]
            bad = [row[1].logprob for row in rows]
            meta = {"pattern": self.kind(r), "masked": True, "good": good, "bad": bad}
            out.append(_prediction(r, [g - b for g, b in zip(good, bad)], meta))
            k += n
        return out

    def config(self) -> dict[str, Any]:
        masked = self.masked
        return {
            "pattern": self.pattern,
            "patterns": P.PET_MASKED_PATTERNS if masked else P.PET_PATTERNS,
            "scorer": "masked" if masked else "causal",
            "score": "log P(good) - log P(bad)",
            "ties": "lowest index",
            **self.model_config(),
        }


# Each method's options, declared once: type and default from its constructor, one line of help each here.
NEUTRAL_HELP = "PMI's neutral prompt: answer, empty, story or a text of your own"
LM_SCORE_OPTIONS = options_from_signature(
    LMScore,
    {
        "norm": "sum | token | char | pmi (input=figlang; default pmi) or lm-eval's sum | char | byte (input=lm-eval; default sum)",
        "neutral": NEUTRAL_HELP,
        "input": "figlang, or lm-eval: ask what lm-evaluation-harness asks of `figlang export lm-eval`'s task",
    },
    {"input": INPUTS},
)
QA_OPTIONS = options_from_signature(
    QA,
    {
        "answer": "score the option letters or the option texts",
        "chat": "use the model's chat template: auto (when it has one), true or false",
        "permute": "show every option in every position and average (cancels a letter preference)",
        "norm": "normalisation of text answers' scores",
        "fmt": "prompt format: auto (from the model), causal or seq2seq (UnifiedQA's input)",
    },
    {
        "answer": ("letter", "text"),
        "chat": ("auto", "true", "false"),
        "norm": ("sum", "token", "char"),
        "fmt": ("auto", "causal", "seq2seq"),
    },
)
FEW_SHOT_OPTIONS = options_from_signature(
    FewShot,
    {
        "budget": "characters of the prompt (examples and item) at most",
        "max_shots": "solved train examples at most",
        "seed": "seed of the examples' order and answer positions",
        "exclude": "which examples never go with an item: linked (its idiom's variants too), expression or item",
        "permute": "also score the item with its options rotated and average",
    },
    {"exclude": EXCLUDE_CHOICES},
)
PET_OPTIONS = options_from_signature(PET, {"pattern": "the pattern-verbalizer pair: auto (by the item's figure), or one by name"})


def register(registry: MethodRegistry) -> None:
    """Add this module's methods to ``registry`` (called by the registry on first use)."""
    registry.add(
        LMScore,
        "LM scoring of each continuation given the narrative; -O norm=sum|token|char|pmi (default pmi), neutral=answer|empty|story|<text>; input=lm-eval scores as lm-evaluation-harness does (norm=sum: its acc, char: acc_norm, byte: acc_bytes).",
        options=LM_SCORE_OPTIONS,
    )
    registry.add(
        QA,
        "UnifiedQA-style question with lettered options; -O answer=letter|text, chat=auto|true|false, permute=true|false, norm=sum|token|char (text answers), fmt=auto|causal|seq2seq.",
        options=QA_OPTIONS,
    )
    registry.add(
        FewShot,
        "Few-shot 'Q: N (1) C1 (2) C2 A: (1)' from train; -O budget=<chars> max_shots=N seed=N exclude=linked|expression|item permute=true|false.",
        options=FEW_SHOT_OPTIONS,
    )
    registry.add(
        PET,
        "PET zero-shot pattern-verbalizer ('You are right/wrong', 'That was expected/unexpected'); -O pattern=auto|idiom|simile.",
        options=PET_OPTIONS,
    )
