"""``explain``: a FLUTE label with a one-sentence explanation, written from retrieved solved examples.

FLUTE's explanations were written by prompting a model with solved examples of the same kind; this
method does the same offline. For each pair it shows the model (an instruction model, e.g.
``qwen2.5-1.5b`` through llama.cpp) FLUTE's own instruction for ``k`` train pairs of the same
figure type, nearest to the item under a sentence encoder (``figlang.methods.retrieval``), each
answered with its gold label and explanation, then the item. For idioms, the idiom's meaning
follows the instruction when a lexicon knows it (FLUTE's idiom explanations were written from the
meaning; the lexicon is the figurative-narrative dataset's idiom glosses).

The paper's set-ups are configurations of this one method (``mode``):

* ``pipeline`` (I→O, then explain; default): the label comes from another method, the strongest
  label model figlang has: ``label_method=trained label_model=DIR`` for a trained FLUTE
  classifier (``figlang train -t flute -m nli --model mpnet``), else the best zero-shot method
  (``nli-score`` with ``question=meaning calibrate=content-free`` on the same model). The
  explanation is generated after the label word, so it argues for the label given.
* ``joint`` (I→OR): the model writes "Entails. …" / "Contradicts. …" itself, parsed by
  ``parse_nli_answer``; an unreadable answer is invalid (raw text kept, counted wrong).

The fine-tuned self-rationalizer is the ``trained`` method on an ``iro`` model; its predictions
are scored by the same ``figlang explain --score``. In pipeline mode the same kind of model can
write the explanations instead of the prompted one (``writer=DIR``, a ``figlang train -t flute -m
iro`` folder): it is given the pipeline's label word and continues with the explanation it learnt
to write for it (FLUTE's explainers were fine-tuned the same way). ``writer_types=sarcasm,…``
limits it to some figure types; the prompted model explains the others. ``writer_mbr=N`` has the
writer also sample N explanations (``writer_temperature``, seeded per item and sample) and keeps the
one that agrees most with the others and its greedy line (minimum Bayes risk under ROUGE-L F1).
``mbr=N`` does the same for the prompted model: after its greedy line it samples N explanations from
the same prompt (``mbr_temperature``; the prompt is encoded once for the N samples) and keeps the
minimum-Bayes-risk one among the N + 1.

Options starting with ``label_`` (other than ``label_method``/``label_model``) go to the label
method (``-O label_question=task``). Greedy decoding by default (deterministic); ``temperature>0``
samples with a per-item seed from ``seed`` and the item's id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError, LoadOptions
from figlang.data.flute import FIGURE_TYPES
from figlang.data.flute import INSTRUCTION as FLUTE_INSTRUCTION
from figlang.data.narrative import load_cloze
from figlang.data.records import NLIPair, Record
from figlang.data.splits import normalise_expression
from figlang.backends.base import ChatMessage, GenerationRequest
from figlang.methods.base import Method, MethodRegistry, Prediction, bind_method, get_methods
from figlang.backends.cache import cache_key
from figlang.methods.prompted.explain_options import DEFAULT_K, EXPLAIN_OPTION_NAMES, MODES, SHOTS, STYLES, ExplainOptions  # noqa: F401  (DEFAULT_K, MODES: re-exported)
from figlang.core.options import parse_options
from figlang.methods.retrieval import PairIndex
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.mbr import mbr_choice, mbr_config
from figlang.methods.prompted.common import ModelMethod, item_seed, parse_chat, parse_int
from figlang.methods.prompted.parsing import clean_explanation, first_sentence, parse_nli_answer

LABELS = ("entailment", "contradiction")
WORDS = P.NLI_LABEL_WORDS["flute"]
MEANING_LINE = 'The idiom "{idiom}" means: {meaning}'
# Zero-shot label method and its options when none is named: the best one in docs/research/zero_shot_results.md
# (chosen on FLUTE `selection`, 69.54 on val with qwen2.5-1.5b; docs/research/zero_shot_results.md).
DEFAULT_LABEL_METHOD = "nli-score"
DEFAULT_LABEL_OPTIONS = {"nli-score": {"question": "meaning", "calibrate": "content-free", "explain": False}}
# The first sentence is all that is kept: in pipeline mode, stopping at its end saves the tokens of a second one (the
# backend cuts before the stop string, so the full stop is put back by one_sentence). Joint answers start with
# "Entails. ", so they stop at the line's end only.
STOP = {"pipeline": ("\n", ". "), "joint": ("\n",)}
# How the k examples and the item are shown (``shots``): ``flute`` repeats FLUTE's instruction for every pair, as
# FLUTE's own prompts did; ``compact`` states it once (FLUTE's wording, for "the premise" and "the hypothesis")
# and then shows each pair as two labelled lines, which takes about a third fewer prompt tokens an example, so
# more examples fit the same time.
COMPACT_INSTRUCTION = (
    'For each pair below: does the premise entail or contradict the hypothesis? Please answer between "Entails" '
    'or "Contradicts" and explain your decision in a sentence.'
)
# ``style=examples``: one line of guidance, because the model otherwise often writes about "the first sentence" or
# "the speaker", which FLUTE's explanations never do: they explain the figure of speech or the situation itself.
STYLE_GUIDE = (
    "Write the explanation the way the examples do: explain what the figurative words mean or what the situation is "
    "really like, without mentioning the sentences, the premise, the hypothesis or the speaker."
)

# ``style=sarcasm``: one line for sarcasm pairs only (#39 target 2: sarcasm is 55% of val and no other lever moved it).
# Written from FLUTE train's sarcasm explanations, which say what the situation is usually like and why, and so whether
# the feeling the sarcastic sentence states fits it; the example is a train explanation.
SARCASM_GUIDE = (
    "For sarcasm, explain in one sentence what the situation is usually like for people and why, and so whether the "
    'feeling or opinion the hypothesis states fits it, e.g. "Flights getting cancelled often leads to inconvenience '
    'and missed opportunities and so someone being cheerful about it does not make sense."'
)


def idiom_meanings(data_dir: str | Path | None) -> dict[str, str]:
    """Normalised idiom → meaning, from the figurative-narrative idiom files that exist under ``data_dir`` (else empty)."""
    if data_dir is None:
        return {}
    out: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        try:
            records = load_cloze("idiom", split, Path(data_dir), LoadOptions(lenient=True), inferences=False)
        except (FiglangError, OSError):
            continue
        for r in records:
            if r.expression and r.meaning and isinstance(r.meaning, str):
                out.setdefault(normalise_expression(r.expression), r.meaning.strip())
    return out


def _meaning_of(expression: str | None, lexicon: dict[str, str]) -> str | None:
    if not expression:
        return None
    key = normalise_expression(expression)
    return lexicon.get(key) or lexicon.get(key[3:] if key.startswith("to ") else f"to {key}")


def parse_k_by_type(value: Any) -> dict[str, int]:
    """``idiom:16,metaphor:16`` → {"idiom": 16, "metaphor": 16}: a figure type's own number of examples (others use ``k``)."""
    if value in (None, ""):
        return {}
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = []
        for part in str(value).split(","):
            name, sep, number = part.partition(":")
            if not sep:
                raise FiglangError(f"option 'k_by_type' takes TYPE:K pairs separated by commas (e.g. idiom:16,metaphor:16), got {value!r}")
            items.append((name.strip(), number.strip()))
    out = {}
    for name, number in items:
        if name not in FIGURE_TYPES:
            raise FiglangError(f"option 'k_by_type': unknown figure type {name!r}; FLUTE's are {', '.join(FIGURE_TYPES)}")
        out[name] = parse_int(number, f"k_by_type[{name}]", 0)
    return dict(sorted(out.items()))


def parse_writer_types(value: Any) -> tuple[str, ...]:
    """``sarcasm,simile`` → ("sarcasm", "simile"); ``all`` or nothing → every FLUTE figure type."""
    if value in (None, "", "all"):
        return tuple(FIGURE_TYPES)
    names = [v.strip() for v in (value if isinstance(value, (list, tuple)) else str(value).split(",")) if str(v).strip()]
    unknown = [n for n in names if n not in FIGURE_TYPES]
    if unknown or not names:
        raise FiglangError(
            f"option 'writer_types': unknown figure type(s) {', '.join(unknown) or repr(value)}; FLUTE's are "
            f"{', '.join(FIGURE_TYPES)} (or all)"
        )
    return tuple(t for t in FIGURE_TYPES if t in names)


def one_sentence(text: str | None) -> tuple[str | None, bool]:
    """The explanation's first sentence (an end mark added where generation stopped before one), and whether it ended."""
    cleaned = clean_explanation(text or "")
    if not cleaned:
        return None, False
    sentence, complete = first_sentence(cleaned)
    if sentence and not complete:
        sentence = sentence.rstrip(" ,;:") + "."
    return (sentence or None), complete


def mbr_pick(first: str, drawn: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The minimum-Bayes-risk text among the greedy line ``first`` and the samples ``drawn`` (each cut to its first
    sentence, as scored; ties to the greedy line), and the meta that keeps every candidate and its mean ROUGE-L."""
    raws = [first, *drawn]
    sentences = [one_sentence(x)[0] or "" for x in raws]
    best, means = mbr_choice(sentences)
    return raws[best], {"mbr": {"chosen": best, "candidates": sentences, "mean_rouge_l": [round(m, 4) for m in means]}}


def explained_label(record_id: str, given: Prediction, raw: str, raw_sep: str, meta: dict[str, Any], tail: dict[str, Any]) -> Prediction:
    """The label method's answer kept, explained by the first sentence of ``raw`` (the explainer's text, which
    follows the label word and ``raw_sep`` in the prediction's raw); meta: ``meta``, whether the sentence was
    complete, the label method's meta, then ``tail``."""
    explanation, complete = one_sentence(raw)
    return Prediction(
        record_id,
        given.prediction,
        scores=given.scores,
        explanation=explanation,
        raw=f"{WORDS[given.prediction]}.{raw_sep}{raw}",
        valid=True,
        meta={**meta, "complete": complete, "label_meta": given.meta, **tail},
    )


class Explain(ModelMethod):
    """Label + one-sentence explanation from k retrieved same-type train examples (pipeline or joint)."""

    name = "explain"
    shapes = ("nli",)
    needs_train = True  # the retrieval pool

    Options: ClassVar[type] = ExplainOptions

    def __init__(self, model: Any = None, **options: Any) -> None:
        """``options``: :class:`ExplainOptions`' (typed, checked), ``label_*`` ones for the label method, the rest the backend's."""
        own = {k_: v for k_, v in options.items() if k_ in EXPLAIN_OPTION_NAMES}
        label_options = {k_[len("label_") :]: v for k_, v in options.items() if k_.startswith("label_") and k_ not in own}
        backend_options = {k_: v for k_, v in options.items() if k_ not in own and not k_.startswith("label_")}
        super().__init__(model, backend_options)
        o = self.options = parse_options(ExplainOptions, own, "method 'explain'")
        self.mode, self.k, self.k_by_type, self.encoder = o.mode, o.k, parse_k_by_type(o.k_by_type), o.encoder
        self.retrieval_key = o.retrieval_key
        self.match_label, self.meanings_option, self.max_new_tokens = o.match_label, o.meanings, o.max_new_tokens
        self.temperature = o.temperature
        if self.temperature < 0:
            raise FiglangError("option 'temperature' must be 0 (greedy) or positive (sampling)")
        self.seed, self.chat_option, self.retrieval_cache, self.pool_split = o.seed, parse_chat(o.chat), o.retrieval_cache, o.pool
        self.shots, self.style = o.shots, o.style
        self.mbr, self.mbr_temperature = o.mbr, o.mbr_temperature
        if self.mbr and self.mode != "pipeline":
            raise FiglangError("option 'mbr' chooses among explanations of a given label: use mode=pipeline")
        if self.mbr and self.mbr_temperature <= 0:
            raise FiglangError("option 'mbr_temperature' must be > 0: it is the temperature of the mbr samples")
        if self.mbr and self.temperature > 0:
            raise FiglangError("option 'mbr' adds samples to the greedy line: keep temperature=0")
        self._init_label(o.label_method, o.label_model, label_options)
        self._init_writer(o)

    def _init_label(self, label_method: str | None, label_model: str | None, label_options: dict[str, Any]) -> None:
        self.label_method_name = label_method or (DEFAULT_LABEL_METHOD if self.mode == "pipeline" else None)
        if self.mode == "joint" and (label_method or label_model or label_options):
            raise FiglangError("mode=joint generates the label itself: drop the label_* options, or use mode=pipeline")
        self.label_model = label_model
        self.label_options = {**DEFAULT_LABEL_OPTIONS.get(self.label_method_name or "", {}), **label_options}
        self._label: Method | None = None

    def _init_writer(self, o: ExplainOptions) -> None:
        self.writer_dir = o.writer or None
        self.writer_types = parse_writer_types(o.writer_types) if self.writer_dir else ()
        if o.writer_types not in (None, "") and not self.writer_dir:
            raise FiglangError("option 'writer_types' names the figure types a trained writer explains: give writer=DIR as well")
        if self.writer_dir and self.mode != "pipeline":
            raise FiglangError("writer=DIR explains a label given by the pipeline's label method: use mode=pipeline")
        self.writer_batch_size, self.writer_mbr, self.writer_temperature = o.writer_batch_size, o.writer_mbr, o.writer_temperature
        if self.writer_mbr and not self.writer_dir:
            raise FiglangError("option 'writer_mbr' samples candidates from a trained writer: give writer=DIR as well")
        if self.writer_mbr and self.writer_temperature <= 0:
            raise FiglangError("option 'writer_temperature' must be > 0: it is the temperature of the writer_mbr samples")
        self._writer: Any = None
        self.task: Any = None
        self.ctx: RunContext | None = None
        self.index: Any = None
        self.pool: list[NLIPair] = []
        self.lexicon: dict[str, str] = {}
        self.lexicon_sha256: str | None = None

    # --- set-up -----------------------------------------------------------------------------------

    @property
    def label_method(self) -> Method | None:
        """The I→O method of the pipeline, created once; it shares this method's backend when it runs the same model."""
        if self.mode != "pipeline":
            return None
        if self._label is None:
            registry = get_methods()
            info = registry.info(self.label_method_name or DEFAULT_LABEL_METHOD)
            if "nli" not in info.shapes:
                raise FiglangError(f"label_method={info.name!r} does not answer NLI pairs; use nli-score, nli-generate or trained")
            same_model = self.label_model is None
            model = self.model if same_model else self.label_model
            options = dict(self.label_options)
            if same_model and isinstance(model, str) and info.needs_model:
                options = {**self.backend_options, **options}  # same (model, options) → the same loaded backend
            if info.needs_model:
                self._label = registry.create(info.name, model=model, **options)  # type: ignore[arg-type]
            else:
                self._label = registry.create(info.name, **options)
        return self._label

    @property
    def writer(self) -> Any:
        """The trained iro model that writes explanations for ``writer_types`` (the ``trained`` method on ``writer``)."""
        if self.writer_dir is None:
            return None
        if self._writer is None:
            self._writer = get_methods().create("trained", model=self.writer_dir, batch_size=self.writer_batch_size)
            if self._writer.meta.get("method") != "iro":
                raise FiglangError(
                    f"writer={self.writer_dir} is a {self._writer.meta.get('method')} model; the writer of explanations "
                    "is an iro model (figlang train -t flute -m iro)"
                )
            if self._writer.examples:
                if not self.pool:
                    raise FiglangError(f"writer={self.writer_dir} reads retrieved examples: fit the explain method on its pool first")
                self._writer.use_pool(self.pool)  # its examples come from this method's pool, as the prompted model's
        return self._writer

    def written_by_writer(self, pair: NLIPair) -> bool:
        """Whether the trained writer, not the prompted model, explains this pair."""
        return self.writer_dir is not None and (pair.figure_type or "") in self.writer_types

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        """The task (its other splits are a retrieval pool) and the run's context (its data folder holds the pool and
        the idiom lexicon); the label method is bound to the same."""
        self.task = task
        self.ctx = ctx
        if self.label_method is not None:
            bind_method(self.label_method, task, ctx)

    def fit(self, train: Sequence[Record]) -> None:
        """Index the train pairs for retrieval; read the idiom lexicon; fit the label method when it learns."""
        pool = [r for r in train if isinstance(r, NLIPair)]
        data_root = (self.ctx or RunContext.create()).data_dir  # the run's data folder (--data-dir), bound by the harness
        if self.pool_split != "train":  # e.g. train-fit, so that items of `selection` never see their own family
            if self.task is None or self.pool_split not in getattr(self.task, "splits", ()):
                raise FiglangError(
                    f"pool={self.pool_split!r} is not a split of the task (its splits: {', '.join(getattr(self.task, 'splits', ()))})"
                )
            pool = [r for r in self.task.load(self.pool_split, self.ctx) if isinstance(r, NLIPair)]
        self.pool = pool  # also the pool of a writer trained with examples (the writer property hands it over)
        if self.k or any(self.k_by_type.values()):
            self.index = PairIndex(pool, self.encoder, self.retrieval_cache, self.retrieval_key)
        if self.meanings_option == "none":
            self.lexicon = {}
        else:
            root = Path(self.meanings_option) if self.meanings_option != "auto" else data_root
            self.lexicon = idiom_meanings(root)
        self.lexicon_sha256 = cache_key("idiom-lexicon", sorted(self.lexicon.items()))
        label = self.label_method
        if label is not None and label.needs_train:
            label.fit(train)

    # --- prompts ----------------------------------------------------------------------------------

    @property
    def chat_used(self) -> bool:
        return self.use_chat(self.chat_option)

    def meaning(self, pair: NLIPair, label: str | None = None) -> str | None:
        """The idiom's meaning shown to the writer: the one found with it (figlang.explain's detection), else the
        lexicon's; for an idiom that neither knows, in a pair labelled entailment, what the premise says in its place
        (the span of the premise that differs from the hypothesis, recorded by the detection as ``literal_span``):
        to entail, the idiom must mean that here."""
        if pair.figure_type not in (None, "idiom") or self.meanings_option == "none":
            return None
        meta = pair.meta or {}
        found = meta.get("meaning")
        if isinstance(found, str) and found.strip():
            return found
        known = _meaning_of(pair.expression, self.lexicon)
        span = meta.get("literal_span")
        if known is None and label == LABELS[0] and isinstance(span, str) and span.strip():
            return span.strip()
        return known

    def _instruction(self, pair: NLIPair, label: str | None = None) -> str:
        text = self.pair_template.format(premise=pair.premise.strip(), hypothesis=pair.hypothesis.strip())
        meaning = self.meaning(pair, label)
        return f"{text}\n{MEANING_LINE.format(idiom=pair.expression, meaning=meaning)}" if meaning else text

    def k_for(self, pair: NLIPair) -> int:
        """How many examples this pair is shown: its figure type's own k where ``k_by_type`` names one, else ``k``."""
        return self.k_by_type.get(pair.figure_type or "", self.k)

    def examples(self, pair: NLIPair, label: str | None, k: int | None = None) -> list[tuple[NLIPair, float]]:
        k = self.k_for(pair) if k is None else k
        if not k or self.index is None:
            return []
        want_label = label if (self.match_label and self.mode == "pipeline") else None
        return [(n.pair, n.similarity) for n in self.index.nearest(pair.premise, pair.hypothesis, k, pair.figure_type, want_label)]

    def prompt(self, pair: NLIPair, label: str | None, examples: Sequence[NLIPair]) -> str:
        """The few-shot prompt; in pipeline mode it ends with the label word, so the model continues with the explanation."""
        lead = f"{WORDS[label]}." if label else ""
        header = self.header(pair.figure_type)
        if self.chat_used:
            messages: list[ChatMessage] = [ChatMessage("system", header)] if header else []
            for ex in examples:
                messages += [ChatMessage("user", self._instruction(ex)), ChatMessage("assistant", P.flute_answer(ex))]
            return self.lm.chat_prompt([*messages, ChatMessage("user", self._instruction(pair, label))]) + lead
        shown = "".join(P.NLI_PLAIN_SHOT.format(instruction=self._instruction(ex), answer=P.flute_answer(ex)) for ex in examples)
        return (
            (f"{header}\n\n" if header else "")
            + shown
            + P.NLI_PLAIN.format(instruction=self._instruction(pair, label))
            + (f" {lead}" if lead else "")
        )

    @property
    def pair_template(self) -> str:
        """How one pair (an example's or the item's) is written: FLUTE's instruction, or the compact two lines."""
        return P.COMPACT_PAIR if self.shots == "compact" else FLUTE_INSTRUCTION

    def prompt_form(self) -> dict[str, Any]:
        """The prompt-form options, recorded only when not the defaults (so earlier runs' configurations read as before)."""
        if (self.shots, self.style) == (SHOTS[0], STYLES[0]):
            return {}
        form = {"shots": self.shots, "style": self.style, "header": self.header(), "pair_template": self.pair_template}
        return {**form, "sarcasm_header": self.header("sarcasm")} if self.style == "sarcasm" else form

    def header(self, figure_type: str | None = None) -> str | None:
        """What is said once before the examples (a chat's system message): the compact form's instruction, the style
        line (``style=sarcasm``: for a sarcasm pair only)."""
        parts = ([COMPACT_INSTRUCTION] if self.shots == "compact" else []) + ([STYLE_GUIDE] if self.style == "examples" else [])
        if self.style == "sarcasm" and figure_type == "sarcasm":
            parts.append(SARCASM_GUIDE)
        return " ".join(parts) or None

    def prompt_tokens(self, text: str) -> int | None:
        encode = getattr(self.lm, "_encode_prompt", None)
        return len(encode(text)) if callable(encode) else None

    @property
    def context_limit(self) -> int | None:
        return getattr(self.lm, "max_length", None)

    def fitted_prompt(self, pair: NLIPair, label: str | None) -> tuple[str | None, list[tuple[NLIPair, float]], str | None]:
        """The prompt with as many of the k examples as fit the model's context; (None, [], reason) when the pair alone does not."""
        limit = self.context_limit
        for k in range(self.k_for(pair), -1, -1):
            shown = self.examples(pair, label, k)
            text = self.prompt(pair, label, [p for p, _ in shown])
            n = self.prompt_tokens(text)
            if n is None or limit is None or n + self.max_new_tokens <= limit:
                return text, shown, None
        return (
            None,
            [],
            (
                f"input too long: the pair with FLUTE's instruction is {n} tokens, and with {self.max_new_tokens} tokens "
                f"to generate it exceeds the model's context of {limit} tokens (shorten the premise/hypothesis, or raise "
                "n_ctx/max_length)"
            ),
        )

    def check_input(self, pair: NLIPair) -> None:
        """Raise a clear error for a pair that cannot be explained (empty text, longer than the model's context)."""
        for field in ("premise", "hypothesis"):
            value = getattr(pair, field)
            if not isinstance(value, str) or not value.strip():
                raise FiglangError(f"the {field} is empty: give a non-empty {field} sentence")
        if self.written_by_writer(pair):
            return  # the writer cuts an over-long instruction from its start, as it was trained
        _, _, reason = self.fitted_prompt(pair, LABELS[1] if self.mode == "pipeline" else None)
        if reason:
            raise FiglangError(reason)

    # --- answering --------------------------------------------------------------------------------

    def _request(self, prompt: str, pair: NLIPair) -> GenerationRequest:
        sample = self.temperature > 0
        return GenerationRequest(
            prompt,
            max_new_tokens=self.max_new_tokens,
            stop=STOP[self.mode],
            do_sample=sample,
            temperature=self.temperature if sample else 1.0,
            seed=item_seed(self.seed, pair.id),
        )

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items: list[NLIPair] = []
        for r in records:
            if not isinstance(r, NLIPair):
                raise FiglangError(f"method 'explain' answers NLI pairs, got {type(r).__name__} {getattr(r, 'id', '?')!r}")
            items.append(r)
        out: dict[str, Prediction] = {}
        ok: list[NLIPair] = []
        for r in items:
            empty = [f for f in ("premise", "hypothesis") if not str(getattr(r, f) or "").strip()]
            if empty:
                out[r.id] = Prediction(r.id, None, valid=False, error=f"empty {' and '.join(empty)}")
                continue
            if not self.written_by_writer(r):
                self.require("generate")
                _, _, reason = self.fitted_prompt(r, LABELS[1] if self.mode == "pipeline" else None)
                if reason:
                    out[r.id] = Prediction(r.id, None, valid=False, error=reason)
                    continue
            ok.append(r)
        labels: dict[str, Prediction] = {}
        if self.mode == "pipeline" and ok:
            for p in self.label_method.predict(ok):  # type: ignore[union-attr]
                labels[p.id] = p
        requests, plans, by_writer = [], [], []
        for r in ok:
            given = labels.get(r.id)
            if given is not None and (not given.valid or given.prediction not in LABELS):
                out[r.id] = Prediction(
                    r.id,
                    None,
                    scores=given.scores,
                    valid=False,
                    raw=given.raw,
                    error=f"the label method gave no usable label: {given.error or given.prediction!r}",
                    meta={"mode": self.mode, "label_method": given.to_dict()},
                )
                continue
            label = given.prediction if given is not None else None
            if given is not None and self.written_by_writer(r):
                by_writer.append((r, given))
                continue
            text, shown, reason = self.fitted_prompt(r, label)
            if text is None:
                out[r.id] = Prediction(r.id, None, valid=False, error=reason)
                continue
            requests.append(self._request(text, r))
            plans.append((r, given, shown))
        for r, given, raw, meta in self._written(by_writer):
            out[r.id] = explained_label(r.id, given, raw, " ", {"mode": self.mode, "writer": "trained"}, meta)
        generated = self.lm.generate(requests) if requests else []
        chosen = self._mbr_chosen(requests, [samples[0] if samples else "" for samples in generated])
        for (r, given, shown), (raw, tail) in zip(plans, chosen):
            meta = {
                "mode": self.mode,
                "examples": [p.id for p, _ in shown],
                "similarities": [round(s, 4) for _, s in shown],
                "meaning": self.meaning(r, given.prediction if given is not None else None),
            }
            if given is not None:
                out[r.id] = explained_label(r.id, given, raw, "", meta, tail)
            else:
                parsed = parse_nli_answer(raw, LABELS)
                explanation, complete = one_sentence(parsed.explanation) if parsed.valid else (None, False)
                meta.update(complete=complete, answer_class=parsed.answer_class)
                out[r.id] = Prediction(
                    r.id, parsed.label, explanation=explanation, raw=raw, valid=parsed.valid, error=parsed.error, meta=meta
                )
        return [out[r.id] for r in items]

    def _mbr_chosen(self, requests: list[GenerationRequest], greedy: list[str]) -> list[tuple[str, dict[str, Any]]]:
        """Each prompt's text and what to add to its meta: the greedy line, or with ``mbr=N`` the minimum-Bayes-risk
        choice among it and N samples of the same prompt (each cut to its first sentence, as scored), kept in meta.
        The samples are a second call, so the greedy lines are what the same run without ``mbr`` writes."""
        if not self.mbr or not requests:
            return [(g, {}) for g in greedy]
        sampled = [replace(q, do_sample=True, temperature=self.mbr_temperature, n=self.mbr) for q in requests]
        return [mbr_pick(first, drawn) for first, drawn in zip(greedy, self.lm.generate(sampled))]

    def _written(self, by_writer: list[tuple[NLIPair, Prediction]]) -> list[tuple[NLIPair, Prediction, str, dict[str, Any]]]:
        """The writer's text for each (pair, given label): its greedy line, or with ``writer_mbr=N`` the minimum-Bayes-risk
        choice among the greedy line and N samples (each cut to its first sentence, as scored), candidates kept in meta."""
        if not by_writer:
            return []
        records, labels = [r for r, _ in by_writer], [g.prediction for _, g in by_writer]
        greedy = self.writer.explain_given(records, labels)
        if not self.writer_mbr:
            return [(r, g, raw, {}) for (r, g), raw in zip(by_writer, greedy)]
        samples = self.writer.explain_samples(records, labels, self.writer_mbr, self.writer_temperature)
        return [(r, g, *mbr_pick(first, drawn)) for (r, g), first, drawn in zip(by_writer, greedy, samples)]

    def load(self) -> None:
        """The explaining model's weights and the label method's (the writer loads on first use)."""
        super().load()
        if self.label_method is not None and self.label_method is not self:
            self.label_method.load()

    def run_notes(self) -> dict[str, Any]:
        notes = super().run_notes()
        label = self._label
        if label is not None and label.run_notes():
            notes = {**notes, "label_method": label.run_notes()}
        return notes

    def config(self) -> dict[str, Any]:
        label = self.label_method
        return {
            "mode": self.mode,
            "k": self.k,
            **({"k_by_type": self.k_by_type} if self.k_by_type else {}),
            "pool": self.pool_split,
            "match_label": self.match_label,
            "retrieval": self.index.config() if self.index else None,
            "neighbour_rule": "same figure type (and label in pipeline mode, with match_label); never the item's own premise",
            "instruction": FLUTE_INSTRUCTION,
            **self.prompt_form(),
            "meaning_line": MEANING_LINE,
            "idiom_lexicon_sha256": self.lexicon_sha256,
            "idiom_lexicon_size": len(self.lexicon),
            "chat": self.chat_option,
            "chat_used": self.chat_used,
            "plain_templates": None if self.chat_used else {"shot": P.NLI_PLAIN_SHOT, "query": P.NLI_PLAIN},
            "label_words": WORDS,
            "max_new_tokens": self.max_new_tokens,
            "stop": list(STOP[self.mode]),
            "decoding": "greedy"
            if self.temperature == 0
            else {"temperature": self.temperature, "seed": self.seed, "seeding": "sha256(seed:item id)"},
            **(
                {
                    "mbr": {
                        "samples": self.mbr,
                        "temperature": self.mbr_temperature,
                        "candidates": "the greedy line first, then N samples of the same prompt, sample j (1..N) seeded "
                        "from sha256(seed:item id) and j",
                        **mbr_config(),
                    }
                }
                if self.mbr
                else {}
            ),
            "postprocess": "first sentence of the explanation (a full stop added where generation stopped before one)",
            "parser": None if label else "parse_nli_answer",
            "label_method": label.fingerprint() if label is not None else None,
            **self.model_config(),
            **(
                {
                    "writer": {
                        **self.writer.config(),
                        "types": list(self.writer_types),
                        "prompt": "the iro training sequence up to the label word "
                        "(instruction, newline, 'Entails.'/'Contradicts.'); the explanation is its continuation",
                        **(
                            {
                                "mbr": {
                                    "samples": self.writer_mbr,
                                    "temperature": self.writer_temperature,
                                    "top_k": None,
                                    "candidates": "the greedy line first, then N samples, sample j (1..N) seeded as the generate method seeds it (sha256(seed:item id), then j)",
                                    **mbr_config(),
                                }
                            }
                            if self.writer_mbr
                            else {}
                        ),
                    }
                }
                if self.writer_dir
                else {}
            ),
        }


def register(registry: MethodRegistry) -> None:
    """Add the explaining method to ``registry`` (called by the registry on first use)."""
    registry.add(
        Explain,
        "FLUTE label + one-sentence explanation from k retrieved same-type train examples (mode=pipeline: a label method "
        "decides, then the explanation; joint: both generated); `figlang methods explain` lists its options.",
    )
