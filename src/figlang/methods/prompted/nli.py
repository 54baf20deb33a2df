"""NLI methods for FLUTE (entails / contradicts, with an explanation) and IMPLI (entails / not).

Both ask FLUTE's instruction (``figlang.data.flute.INSTRUCTION``; for label sets with
non-entailment, the same question with "Entails" / "Does not entail"), in the model's
chat template when it has one, else as a plain prompt ending in "Answer:".

* ``nli-generate``: the model writes its answer; ``parsing.parse_nli_answer`` reads the
  label and explanation. An unreadable answer is ``valid=False`` with the raw text.
* ``nli-score``: each label word is scored as the answer's first words and the best one
  wins (optionally calibrated against a content-free input); then, with ``explain``,
  the explanation is generated after the chosen label word. ``input=lm-eval`` asks what
  lm-evaluation-harness asks of the task `figlang export lm-eval` writes (plain prompt, " " + label
  word, joint tokenization, its acc / acc_norm), so the predictions equal lm-eval's item for item.

The label set comes from ``bind(task)`` (``task.labels``).

``shots=K`` (both methods) puts K solved pairs from the task's train split before the item,
as earlier chat turns (or "Answer:" blocks without a chat template): labels balanced and
figure types spread, one seeded set shared by every item, so the backend encodes that
common prefix once. An item that is itself one of the examples gets a same-label
replacement. The examples' gold explanations follow their label word when they have one.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.records import NLI_LABELS, NLIPair, Record
from figlang.backends.base import ChatMessage, GenerationRequest, ScoreRequest
from figlang.methods.base import MethodRegistry, Prediction
from figlang.core.options import options_from_signature
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.common import ModelMethod, argmax_first, parse_bool, parse_chat, parse_choice, parse_int, same_text
from figlang.methods.prompted.lm_eval_input import LM_EVAL_DELIMITER, LM_EVAL_NORMS, lm_eval_request, lm_eval_score
from figlang.methods.prompted.parsing import clean_explanation, parse_nli_answer

DEFAULT_LABELS = ("entailment", "contradiction")
INPUTS = ("figlang", "lm-eval")


def lm_eval_query(premise: str, hypothesis: str, labels: Sequence[str]) -> str:
    """The text an NLI pair is asked as under ``input=lm-eval``, and the ``query`` of the docs `figlang export
    lm-eval` writes: nli-score's plain prompt (no chat template, no shots) ending in "Answer:"."""
    family = P.nli_family(tuple(labels))
    instruction = P.NLI_INSTRUCTIONS["impli" if family == "impli" else "flute"].format(premise=premise, hypothesis=hypothesis)
    return P.NLI_PLAIN.format(instruction=instruction)


def _same_pair(a: NLIPair, b: NLIPair) -> bool:
    return a.id == b.id or (same_text(a.premise, b.premise) and same_text(a.hypothesis, b.hypothesis))


def _pairs(records: Sequence[Record], method: str) -> list[NLIPair]:
    out = []
    for r in records:
        if not isinstance(r, NLIPair):
            raise FiglangError(f"method {method!r} answers NLI pairs, got {type(r).__name__} {getattr(r, 'id', '?')!r}")
        out.append(r)
    return out


class _NLIMethod(ModelMethod):
    shapes = ("nli",)

    def __init__(
        self,
        model: Any,
        chat: Any,
        explain: Any,
        labels: Sequence[str],
        max_new_tokens: Any,
        backend_options: dict,
        shots: Any = 0,
        seed: Any = 0,
        question: Any = "task",
    ) -> None:
        super().__init__(model, backend_options)
        self.question = parse_choice(question, "question", ("task", "meaning"))
        self.chat_option = parse_chat(chat)
        self.explain_option = None if explain is None or explain == "auto" else parse_bool(explain, "explain")
        self.labels: tuple[str, ...] = tuple(labels)
        self.max_new_tokens = parse_int(max_new_tokens, "max_new_tokens", 1)
        self.shots = parse_int(shots, "shots", 0)
        self.seed = parse_int(seed, "seed")
        self.needs_train = self.shots > 0
        self.examples: list[NLIPair] = []
        self.reserve: list[NLIPair] = []
        self.task_name: str | None = None
        self._check_labels()

    def _check_labels(self) -> None:
        bad = [lb for lb in self.labels if lb not in NLI_LABELS]
        if bad:
            raise FiglangError(f"{self.name} knows the NLI labels {', '.join(NLI_LABELS)}; the task has {', '.join(bad)}")

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        self.task_name = getattr(task, "name", None)
        if getattr(task, "labels", ()):
            self.labels = tuple(task.labels)
            self._check_labels()

    @property
    def label_set(self) -> tuple[str, ...]:
        return self.labels or DEFAULT_LABELS

    @property
    def family(self) -> str:
        return P.nli_family(self.label_set)

    @property
    def explain(self) -> bool:
        """Explanations by default for FLUTE-style label sets, not for IMPLI's."""
        return self.explain_option if self.explain_option is not None else self.family == "flute"

    @property
    def instruction_key(self) -> str:
        if self.question == "meaning":
            return "meaning"
        if self.family == "impli":
            return "impli-explain" if (self.explain and self.name == "nli-generate") else "impli"
        return "flute"

    @property
    def chat_used(self) -> bool:
        return self.use_chat(self.chat_option)

    def fit(self, train: Sequence[Record]) -> None:
        """Choose the in-context examples (``shots`` > 0): balanced labels, spread figure types, seeded."""
        pool = [r for r in train if isinstance(r, NLIPair) and r.label in self.label_set and not r.label_is_placeholder]
        if len(pool) < self.shots:
            raise FiglangError(f"{self.name} shots={self.shots} needs that many labelled pairs in the train split; it has {len(pool)}")
        pool.sort(key=lambda r: r.id)
        random.Random(self.seed).shuffle(pool)
        chosen: list[NLIPair] = []
        kinds: Counter[tuple[str | None, str | None]] = Counter()
        for i in range(self.shots):
            label = self.label_set[i % len(self.label_set)]
            left = [r for r in pool if r.label == label and r not in chosen] or [r for r in pool if r not in chosen]
            pick = min(left, key=lambda r: kinds[(r.label, r.figure_type)])  # first of the least used figure type
            kinds[(pick.label, pick.figure_type)] += 1
            chosen.append(pick)
        random.Random(self.seed + 1).shuffle(chosen)
        self.examples = chosen
        self.reserve = [r for r in pool if r not in chosen][: 2 * len(self.label_set)]

    def examples_for(self, item: NLIPair) -> list[NLIPair]:
        """The shared examples, with any that is the item itself swapped for a reserve pair of its label."""
        out, spare = [], [r for r in self.reserve if not _same_pair(r, item)]
        for ex in self.examples:
            if _same_pair(ex, item):
                swap = next((r for r in spare if r.label == ex.label), None) or (spare[0] if spare else None)
                if swap is None:  # a tiny train split: one example fewer rather than the answer itself
                    continue
                spare.remove(swap)
                ex = swap
            out.append(ex)
        return out

    def _instruction(self, premise: str, hypothesis: str) -> str:
        return P.NLI_INSTRUCTIONS[self.instruction_key].format(premise=premise, hypothesis=hypothesis)

    def _answer(self, example: NLIPair) -> str:
        word = self.words()[example.label or ""]
        explanation = (example.explanation or "").strip()
        return word + P.NLI_AFTER_LABEL + (" " + explanation if explanation else "")

    def prompt(self, premise: str, hypothesis: str, item: NLIPair | None = None) -> str:
        instruction = self._instruction(premise, hypothesis)
        examples = self.examples_for(item) if (item is not None and self.shots) else self.examples[: self.shots]
        if self.chat_used:
            messages = []
            for ex in examples:
                messages += [ChatMessage("user", self._instruction(ex.premise, ex.hypothesis)), ChatMessage("assistant", self._answer(ex))]
            return self.lm.chat_prompt([*messages, ChatMessage("user", instruction)])
        shown = "".join(
            P.NLI_PLAIN_SHOT.format(instruction=self._instruction(ex.premise, ex.hypothesis), answer=self._answer(ex)) for ex in examples
        )
        return shown + P.NLI_PLAIN.format(instruction=instruction)

    def shots_config(self) -> dict[str, Any]:
        """Only with shots, so that zero-shot fingerprints (and their cached answers) stay as they were."""
        if not self.shots:
            return {}
        return {
            "shots": self.shots,
            "seed": self.seed,
            "examples": [r.id for r in self.examples],
            "reserve": [r.id for r in self.reserve],
            "plain_shot": None if self.chat_used else P.NLI_PLAIN_SHOT,
        }

    def words(self) -> dict[str, str]:
        words = P.NLI_LABEL_WORDS["meaning" if self.question == "meaning" else self.family]
        return {label: words[label] for label in self.label_set}

    def base_config(self) -> dict[str, Any]:
        return {
            "labels": list(self.label_set),
            "instruction": P.NLI_INSTRUCTIONS[self.instruction_key],
            "plain_template": None if self.chat_used else P.NLI_PLAIN,
            "chat": self.chat_option,
            "chat_used": self.chat_used,
            "explain": self.explain,
            "max_new_tokens": self.max_new_tokens,
            **self.shots_config(),
            **({"question": self.question} if self.question != "task" else {}),
            **self.model_config(),
        }


class NLIGenerate(_NLIMethod):
    """Generate the answer (greedy) and parse label and explanation from it."""

    name = "nli-generate"

    def __init__(
        self,
        model: Any = None,
        chat: str | bool = "auto",
        explain: bool | None = None,
        labels: Sequence[str] = (),
        max_new_tokens: int = 64,
        shots: int = 0,
        seed: int = 0,
        **backend_options: Any,
    ) -> None:
        super().__init__(model, chat, explain, labels, max_new_tokens, backend_options, shots, seed)

    STOP = ("\n\n",)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _pairs(records, self.name)
        self.require("generate")
        requests = [
            GenerationRequest(self.prompt(r.premise, r.hypothesis, r), max_new_tokens=self.max_new_tokens, stop=self.STOP) for r in items
        ]
        outputs = self.lm.generate(requests)
        out = []
        for r, samples in zip(items, outputs):
            raw = samples[0] if samples else ""
            parsed = parse_nli_answer(raw, self.label_set)
            explanation = parsed.explanation if self.explain else None
            out.append(
                Prediction(
                    r.id,
                    parsed.label,
                    scores=None,
                    explanation=explanation,
                    raw=raw,
                    valid=parsed.valid,
                    error=parsed.error,
                    meta={"answer_class": parsed.answer_class},
                )
            )
        return out

    def config(self) -> dict[str, Any]:
        return {**self.base_config(), "decoding": "greedy", "stop": list(self.STOP), "parser": "parse_nli_answer"}


class NLIScore(_NLIMethod):
    """Score the label words as the answer's start; generate the explanation after the winner."""

    name = "nli-score"

    def __init__(
        self,
        model: Any = None,
        chat: str | bool = "auto",
        explain: bool | None = None,
        labels: Sequence[str] = (),
        calibrate: str = "none",
        norm: str | None = None,
        max_new_tokens: int = 48,
        shots: int = 0,
        seed: int = 0,
        question: str = "task",
        input: str = "figlang",
        **backend_options: Any,
    ) -> None:
        self.input = parse_choice(input, "input", INPUTS)
        if self.input == "lm-eval":
            clash = {
                k: v
                for k, v in (("chat", chat), ("explain", explain), ("calibrate", calibrate), ("shots", shots), ("question", question))
                if str(v).lower() not in {"auto", "none", "false", "0", "task"}
            }
            if clash:
                raise FiglangError(
                    f"nli-score input=lm-eval asks what lm-eval asks (no chat template, no explanation, no shots, "
                    f"no calibration): drop {', '.join(f'{k}={v}' for k, v in clash.items())}"
                )
            chat, explain = "false", False
        super().__init__(model, chat, explain, labels, max_new_tokens, backend_options, shots, seed, question)
        self.calibrate = parse_choice(calibrate, "calibrate", ("none", "content-free"))
        norms = tuple(LM_EVAL_NORMS) if self.input == "lm-eval" else ("sum", "token")
        self.norm = parse_choice(norm or "sum", "norm", norms)

    STOP = ("\n\n",)

    def _continuation(self, word: str) -> str:
        template = P.NLI_CHAT_LABEL_CONTINUATION if self.chat_used else P.NLI_PLAIN_LABEL_CONTINUATION
        return template.format(word=word)

    def _predict_lm_eval(self, items: list[NLIPair]) -> list[Prediction]:
        words = self.words()
        labels = list(words)
        requests = [lm_eval_request(lm_eval_query(r.premise, r.hypothesis, self.label_set), words[lb]) for r in items for lb in labels]
        results = self.lm.score(requests)
        out = []
        for i, r in enumerate(items):
            cond = results[i * len(labels) : (i + 1) * len(labels)]
            scores = [lm_eval_score(c.logprob, words[lb], self.norm) for c, lb in zip(cond, labels)]
            best, tie = argmax_first(scores)
            out.append(
                Prediction(
                    r.id,
                    labels[best],
                    scores={lb: float(s) for lb, s in zip(labels, scores)},
                    meta={"tie": tie, "logprob": [c.logprob for c in cond]},
                )
            )
        return out

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = _pairs(records, self.name)
        self.require("score")
        if self.input == "lm-eval":
            return self._predict_lm_eval(items)
        words = self.words()
        labels = list(words)
        prompts = [self.prompt(r.premise, r.hypothesis, r) for r in items]
        requests = [ScoreRequest(p, self._continuation(words[lb])) for p in prompts for lb in labels]
        if self.calibrate == "content-free":
            free = self.prompt(P.NLI_CONTENT_FREE["premise"], P.NLI_CONTENT_FREE["hypothesis"])
            requests += [ScoreRequest(free, self._continuation(words[lb])) for lb in labels]
        results = self.lm.score(requests)

        def value(i: int) -> float:
            s = results[i]
            return s.logprob / max(s.n_tokens, 1) if self.norm == "token" else s.logprob

        n = len(labels)
        offset = [value(len(items) * n + j) for j in range(n)] if self.calibrate == "content-free" else [0.0] * n
        chosen, all_scores, ties = [], [], []
        for i in range(len(items)):
            scores = [value(i * n + j) - offset[j] for j in range(n)]
            best, tie = argmax_first(scores)
            chosen.append(labels[best])
            all_scores.append({lb: float(s) for lb, s in zip(labels, scores)})
            ties.append(tie)
        explanations: list[str | None] = [None] * len(items)
        raws: list[str | None] = [None] * len(items)
        if self.explain:
            self.require("generate")
            gen = [
                GenerationRequest(p + self._continuation(words[lb]) + P.NLI_AFTER_LABEL, max_new_tokens=self.max_new_tokens, stop=self.STOP)
                for p, lb in zip(prompts, chosen)
            ]
            for i, samples in enumerate(self.lm.generate(gen)):
                raws[i] = samples[0] if samples else ""
                explanations[i] = clean_explanation(raws[i] or "")
        out = []
        for i, r in enumerate(items):
            sampled = raws[i]
            raw = None if sampled is None else words[chosen[i]] + P.NLI_AFTER_LABEL + sampled
            meta: dict[str, Any] = {"tie": ties[i]}
            if self.calibrate == "content-free":
                meta["content_free"] = {lb: float(o) for lb, o in zip(labels, offset)}
            out.append(Prediction(r.id, chosen[i], scores=all_scores[i], explanation=explanations[i], raw=raw, meta=meta))
        return out

    def config(self) -> dict[str, Any]:
        if self.input == "lm-eval":
            return {
                "input": "lm-eval",
                "lm_eval_metric": LM_EVAL_NORMS[self.norm],
                "norm": self.norm,
                "labels": list(self.label_set),
                "label_words": self.words(),
                "instruction": P.NLI_INSTRUCTIONS[self.instruction_key],
                "plain_template": P.NLI_PLAIN,
                "target_delimiter": LM_EVAL_DELIMITER,
                "tokenization": "joint",
                "ties": "first label",
                **self.model_config(),
            }
        return {
            **self.base_config(),
            "label_words": self.words(),
            "calibrate": self.calibrate,
            "norm": self.norm,
            "content_free": P.NLI_CONTENT_FREE if self.calibrate == "content-free" else None,
            "continuation": P.NLI_CHAT_LABEL_CONTINUATION if self.chat_used else P.NLI_PLAIN_LABEL_CONTINUATION,
            "explanation_after": P.NLI_AFTER_LABEL if self.explain else None,
            "explanation_decoding": "greedy" if self.explain else None,
            "stop": list(self.STOP),
            "ties": "first label",
        }


_NLI_HELP = {
    "chat": "use the model's chat template: auto (when it has one), true or false",
    "explain": "also generate an explanation (default: when the task has explanations)",
    "labels": "the label set (default: the task's)",
    "max_new_tokens": "tokens generated at most",
    "shots": "solved train examples first (0: zero-shot)",
    "seed": "seed of the examples and of sampling",
}
_CHAT = ("auto", "true", "false")
NLI_GENERATE_OPTIONS = options_from_signature(NLIGenerate, _NLI_HELP, {"chat": _CHAT})
NLI_SCORE_OPTIONS = options_from_signature(
    NLIScore,
    {
        **_NLI_HELP,
        "calibrate": "none, or content-free: divide by the label words' scores on an empty pair",
        "norm": "sum | token (input=figlang) or lm-eval's sum | char | byte (input=lm-eval)",
        "question": "task (FLUTE's instruction) or meaning ('Do the two sentences mean the same thing?' Yes/No)",
        "input": "figlang, or lm-eval: ask what lm-evaluation-harness asks of `figlang export lm-eval`",
    },
    {"chat": _CHAT, "calibrate": ("none", "content-free"), "question": ("task", "meaning"), "input": INPUTS},
)


def register(registry: MethodRegistry) -> None:
    """Add this module's methods to ``registry`` (called by the registry on first use)."""
    registry.add(
        NLIGenerate,
        "Generate the answer to FLUTE's instruction and parse label + explanation (unparseable → invalid); -O chat=auto|true|false explain=true|false max_new_tokens=N shots=K (train examples first) seed=N.",
        options=NLI_GENERATE_OPTIONS,
    )
    registry.add(
        NLIScore,
        "Score the label words ('Entails'/'Contradicts', IMPLI: 'Entails'/'Does not entail') and generate the explanation; -O explain=true|false calibrate=none|content-free norm=sum|token chat=auto|true|false shots=K (train examples first) seed=N question=task|meaning ('Do the two sentences mean the same thing?' Yes/No); input=lm-eval scores as lm-evaluation-harness does on `figlang export lm-eval` (norm=sum: its acc, char: acc_norm, byte: acc_bytes).",
        options=NLI_SCORE_OPTIONS,
    )
