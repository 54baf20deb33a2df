"""``figlang.explain``: does a literal premise entail or contradict a figurative hypothesis, and why?

>>> from figlang.explain import explain
>>> r = explain("He was very angry.", "He was as calm as a cucumber.", figure_type="simile")  # doctest: +SKIP
>>> r.label, r.explanation                                                                    # doctest: +SKIP
('contradiction', 'To be as calm as a cucumber means to be very calm, while ...')

The answer comes from the ``explain`` method (``figlang.methods.prompted.explain``): a label model
(pipeline) or the instruction model itself (joint), and an explanation written by the instruction
model from FLUTE's instruction and the nearest FLUTE train pairs with their gold explanations.
The loaded models stay in memory between calls (the first call loads them; later ones cost only
the model's answer), and every answer goes through figlang's request cache, so asking again is
answered from disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from figlang.core.as_dict import AsDict
from figlang.core.errors import FiglangError
from figlang.data.flute import FIGURE_TYPES
from figlang.core.context import RunContext, run_context
from figlang.data.impli import figurative_offsets
from figlang.data.records import NLIPair
from figlang.data.registry import get_task
from figlang.methods.base import bind_method, get_methods
from figlang.backends.cache import RequestCache
from figlang.core.devices import cpu_class
from figlang.methods.trained.figure_type import FigureTypeModel
from figlang.methods.trained.heads import shipped_heads
from figlang.interpret.api import interpret, validate_text

DEFAULT_MODEL = "qwen2.5-1.5b"


# qwen2.5-1.5b's backend for explaining, by CPU class (figlang.core.devices.cpu_class): the fastest that writes what
# bfloat16 writes, each measured by benchmarks/bench_explain.py with its --config settings in one run on that class:
# - amx: Transformers bfloat16 in batches of 16, 3.59 s a pair (docs/results/explain/bench-amx-2threads-compact.json;
#   bfloat16 ran 3.0x float32 and 4.7x llama.cpp there, docs/results/bench/lm_eval_idiom_dev_whole_amx.json);
# - avx512 (no AMX): Transformers float32, one prompt at a time (prompt lookup, the shared header from the previous
#   prompt's cache): AVX512-BF16 alone does not make bfloat16 fast, and padded batches only add work to a prefill
#   that is bound by compute. llama.cpp's AVX-512 module was faster still, but its explanations scored 1.57 ROUGE-L
#   points below bfloat16's on 40 selection pairs (95% CI [-2.97, -0.44]); float32's -0.15 [-0.89, 0.61]
#   (docs/research/flute_explanations.md, "Speed by CPU class");
# - amd-avx512 (an AMD CPU with AVX512-BF16): Transformers bfloat16, one prompt at a time: 7.46 s for a new pair against
#   20.52 s in float32, 10.83 s with llama.cpp and 24.36 s in batches of 16
#   (docs/results/explain/bench-amd-epyc-backends.json, 2026-11-29);
# - avx2 and others: llama.cpp (1.26x Transformers float32 on the 2-core AVX2 machine; bfloat16 is emulated there).
FASTEST_BY_CPU: dict[str, dict[str, Any]] = {
    "amx": {"dtype": "bfloat16", "batch_size": 16},
    "amd-avx512": {"dtype": "bfloat16", "batch_size": 1},
    "avx512": {"dtype": "float32", "batch_size": 1},
}
FALLBACK_BACKEND: dict[str, Any] = {"backend": "llama.cpp"}


def default_options() -> dict[str, Any]:
    """qwen2.5-1.5b's backend for this CPU (:data:`FASTEST_BY_CPU`, measured per CPU class): Transformers in bfloat16
    where the CPU has AMX (in batches) or is an AMD CPU with AVX512-BF16 (one prompt at a time), in float32 one
    prompt at a time on other AVX-512 CPUs, else llama.cpp."""
    return dict(FASTEST_BY_CPU.get(cpu_class(), FALLBACK_BACKEND))


@dataclass
class Explanation(AsDict):
    """One explained pair: the label, the explanation, the label scores, and what produced them."""

    premise: str
    hypothesis: str
    figure_type: str | None
    label: str | None  # entailment | contradiction; None when the answer was invalid
    explanation: str | None
    valid: bool
    error: str | None = None
    scores: dict[str, float] | list[float] | None = None  # the label method's per-label scores, where it has them
    raw: str | None = None  # the model's raw answer
    produced_by: dict[str, Any] = field(default_factory=dict)  # method, model, mode, label method, examples shown
    cached: bool = False  # answered from the request cache


_METHODS: dict[str, Any] = {}
LABEL_MODEL = "figlang:flute-lora-mpnet"  # the shipped FLUTE label model (issue #36), the default where it ships


def shipped_label_model() -> str | None:
    """The shipped FLUTE label model's name when it ships with this figlang (pipeline mode's default label), else None."""
    return LABEL_MODEL if LABEL_MODEL.split(":", 1)[1] in shipped_heads() else None


def _method_key(model: str, options: Mapping[str, Any], data_dir: Path) -> str:
    import json

    return json.dumps([model, dict(sorted(options.items())), str(data_dir)], sort_keys=True, default=str)


def explainer(
    model: str = DEFAULT_MODEL, data_dir: str | Path | None = None, *, ctx: RunContext | None = None, load: bool = False, **options: Any
) -> Any:
    """The fitted ``explain`` method for (model, options, data folder), created and fitted once per process.

    ``ctx`` is the run's context (its data folder holds FLUTE's train pairs and the idiom lexicon); without
    one it is made from ``data_dir``.

    ``options`` are the method's (``mode``, ``k``, ``label_method``, ``label_model``, …) and the backend's
    (``backend``, ``threads``, ``n_ctx``, …); for ``qwen2.5-1.5b`` the backend is chosen by the CPU
    (:func:`default_options`) unless ``backend`` is given.

    The models' weights load on the first answer that is not in the request cache; ``load=True`` loads them now,
    so that the first answer costs only the answer (a server, a benchmark).
    """
    if model == DEFAULT_MODEL and "backend" not in options:
        options = {**default_options(), **options}
    if "label_method" not in options and options.get("mode", "pipeline") == "pipeline" and shipped_label_model():
        options = {**options, "label_method": "trained", "label_model": shipped_label_model()}
    ctx = run_context(ctx, data_dir=data_dir)
    root = ctx.data_dir
    key = _method_key(model, options, root)
    if key not in _METHODS:
        method = get_methods().create("explain", model=model, **options)
        task = get_task("flute")
        bind_method(method, task, ctx)
        try:
            train = task.load("train", ctx)
        except FiglangError as err:
            raise FiglangError(f"explaining needs FLUTE's train pairs (the examples shown to the model): {err}") from err
        method.fit(train)
        method.fingerprint()  # the models' identities (configuration and tokenizer); the weights load on first use
        _METHODS[key] = method
    if load:
        _METHODS[key].load()
    return _METHODS[key]


def _pair(premise: Any, hypothesis: Any, figure_type: str | None, idiom: str | None, where: str = "") -> NLIPair:
    at = f" ({where})" if where else ""
    for name, value in (("premise", premise), ("hypothesis", hypothesis)):
        if not isinstance(value, str):
            raise FiglangError(f"the {name} must be a string{at}, got {type(value).__name__}")
        if not value.strip():
            raise FiglangError(f"the {name} is empty{at}: give a non-empty {name} sentence")
    if figure_type is not None and figure_type not in FIGURE_TYPES:
        raise FiglangError(f"unknown figure type {figure_type!r}{at}: use one of {', '.join(FIGURE_TYPES)} (or leave it out)")
    premise, hypothesis = " ".join(premise.split()), " ".join(hypothesis.split())
    digest = hashlib.sha256(f"{premise}\n{hypothesis}\n{figure_type}\n{idiom}".encode()).hexdigest()[:16]
    return NLIPair(
        id=f"input-{digest}", premise=premise, hypothesis=hypothesis, label=None, figure_type=figure_type, expression=idiom, source="user"
    )


_FIGURE_MODEL: list[Any] = []
TYPO_RATIO = 85  # rapidfuzz's ratio (0-100) from which two words of five letters or more are one word misspelt


def _same_but_for_a_typo(a: str, b: str) -> bool:
    """Two tokens are the same word, or one is the other misspelt ("esespecially" / "especially": ratio 90.9)."""
    from rapidfuzz import fuzz

    return a == b or (min(len(a), len(b)) >= 5 and fuzz.ratio(a, b) >= TYPO_RATIO)


def _words_only(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the punctuation at its ends ("batten down the hatch," -> "batten down the hatch")."""
    while end > start and not text[end - 1].isalnum():
        end -= 1
    while start < end and not text[start].isalnum():
        start += 1
    return start, end


def detect_figure(premise: str, hypothesis: str, data_dir: str | Path | None = None) -> dict[str, Any]:
    """The figure type of a pair that comes without one, from the shipped figure-type model (its pair head), and,
    for an idiom, the idiom in the hypothesis with its meaning, from the interpret lexicon and matcher."""

    if not _FIGURE_MODEL:
        _FIGURE_MODEL.append(FigureTypeModel())
    figure, probabilities = _FIGURE_MODEL[0].predict(hypothesis, premise)
    found: dict[str, Any] = {"figure_type": figure, "probabilities": probabilities, "model": "figlang:figure-type-minilm"}
    if figure == "idiom":
        # what the hypothesis says differently (IMPLI's rule), a misspelt word ("predicta" for "predicts") not counting
        (ps, pe), (hs, he) = figurative_offsets(premise, hypothesis, same=_same_but_for_a_typo)
        hs, he = _words_only(hypothesis, hs, he)
        idioms = [e for e in interpret(hypothesis, data_dir=data_dir, paraphrase=False).expressions if e.type == "idiom"]
        # a lexicon idiom that covers only part of that span ("on one's feet" inside "dead on his feet") is another,
        # shorter idiom, and its meaning would mislead the writer: such hits do not count
        idioms = [e for e in idioms if he <= hs or (e.start <= hs and e.end >= he)]
        if idioms:
            best = max(idioms, key=lambda e: e.confidence)
            found.update(idiom=best.canonical, meaning=best.meaning, meaning_source=best.meaning_source, span=best.text)
        elif he > hs:  # not in the lexicon: the span of the hypothesis that differs from the premise, no meaning
            found.update(idiom=hypothesis[hs:he], span=hypothesis[hs:he], meaning=None, meaning_source=None)
            found["found_by"] = "the span that differs from the premise (the idiom is not in the interpret lexicon)"
            if pe > ps:  # what the premise says in its place: the idiom's meaning here, if the pair entails
                found["literal_span"] = premise[ps:pe]
    return found


def _detected(pair: Mapping[str, Any], record: NLIPair, data_dir: str | Path | None, where: str) -> tuple[NLIPair, dict | None]:
    """The record with the detected figure type and idiom (and the idiom's meaning in ``meta``), when it has none."""
    if record.figure_type is not None or record.expression is not None:
        return record, None
    try:
        found = detect_figure(record.premise, record.hypothesis, data_dir)
    except FiglangError as err:  # no figure-type model here: the pair is explained without a type, as before
        return record, {"error": str(err)}
    made = _pair(pair.get("premise"), pair.get("hypothesis"), found["figure_type"], found.get("idiom"), where=where)
    if found.get("meaning"):
        made.meta["meaning"] = found["meaning"]
    elif found.get("literal_span"):  # shown to the writer as the idiom's meaning only when the label is entailment
        made.meta["literal_span"] = found["literal_span"]
    return made, found


def _checked_pairs(pairs: Iterable[Mapping[str, Any]], data_dir: Path, detect: bool) -> tuple[list[NLIPair], list[dict | None]]:
    """Each pair as a record (checked, with its position in errors) and what detection found for it."""
    records: list[NLIPair] = []
    detected: list[dict | None] = []
    for i, p in enumerate(pairs, 1):
        if not isinstance(p, Mapping):
            raise FiglangError(f"pair {i} must be a mapping with 'premise' and 'hypothesis', got {type(p).__name__}")
        record = _pair(p.get("premise"), p.get("hypothesis"), p.get("figure_type"), p.get("idiom"), where=f"pair {i}")
        record, found = _detected(p, record, data_dir, f"pair {i}") if detect else (record, None)
        records.append(record)
        detected.append(found)
    return records, detected


def explain_pairs(
    pairs: Iterable[Mapping[str, Any]],
    *,
    model: str = DEFAULT_MODEL,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: bool = False,
    detect: bool = True,
    ctx: RunContext | None = None,
    **options: Any,
) -> list[Explanation]:
    """Explain many pairs (mappings with ``premise``, ``hypothesis`` and optionally ``figure_type``, ``idiom``).

    Every pair is checked first (empty text, unknown figure type, longer than the model's context), so
    a bad pair fails the call with its position before any model time is spent. A pair with neither a figure type
    nor an idiom gets them from :func:`detect_figure` (``detect=False``: none), recorded in ``produced_by["detected"]``.
    """
    from figlang.evaluation.harness import run_method

    ctx = run_context(ctx, data_dir=data_dir, cache_dir=cache_dir)  # built once, where the call starts
    records, detected = _checked_pairs(pairs, ctx.data_dir, detect)
    if not records:
        return []
    method = explainer(model, ctx=ctx, **options)
    for i, r in enumerate(records, 1):
        try:
            method.check_input(r)
        except FiglangError as err:
            raise FiglangError(f"pair {i}: {err}") from None
    unique = list({r.id: r for r in records}.values())
    cache = RequestCache(ctx.cache_dir) if use_cache else None
    try:
        predictions, stats = run_method(
            method, unique, cache, chunk_size=32, progress=progress, description="explaining"
        )  # as figlang eval: the same generation batches
    finally:
        if cache is not None:
            cache.close()
    cached = stats["cached"] == len(unique)
    fingerprint = method.fingerprint()
    out = []
    for r, found in zip(records, detected):
        p = predictions[r.id]
        by_writer = method.written_by_writer(r)  # a fine-tuned writer is shown no examples
        produced = {
            "method": "explain",
            "model": model,
            "mode": method.mode,
            "k": 0 if by_writer else method.k_for(r),
            "writer": method.writer_dir if by_writer else None,
            "label_method": (fingerprint.get("label_method") or {}).get("method"),
            "label_model": method.label_model or (model if method.mode == "pipeline" else None),
            "examples": p.meta.get("examples", []),
            "idiom_meaning": p.meta.get("meaning"),
            "detected": found,
            "backend": fingerprint.get("backend", {}).get("backend"),
        }
        out.append(
            Explanation(
                r.premise,
                r.hypothesis,
                r.figure_type,
                p.prediction if p.valid else None,
                p.explanation,
                p.valid,
                p.error,
                p.scores,
                p.raw,
                produced,
                cached,
            )
        )
    return out


def explain(
    premise: str,
    hypothesis: str,
    figure_type: str | None = None,
    *,
    idiom: str | None = None,
    model: str = DEFAULT_MODEL,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    ctx: RunContext | None = None,
    **options: Any,
) -> Explanation:
    """Label and explain one premise/hypothesis pair (see the module docstring).

    ``figure_type`` (sarcasm, simile, metaphor, idiom) narrows the examples to that kind; ``idiom``
    names the idiom so that its meaning can be shown. Options: ``mode`` (pipeline | joint), ``k``,
    ``label_method``/``label_model`` (e.g. ``trained`` and a `figlang train -t flute -m nli` folder),
    ``writer``/``writer_types`` (a `figlang train -t flute -m iro` folder that writes the explanation),
    backend options (``threads``, ``n_ctx``).
    """
    return explain_pairs(
        [{"premise": premise, "hypothesis": hypothesis, "figure_type": figure_type, "idiom": idiom}],
        model=model,
        data_dir=data_dir,
        cache_dir=cache_dir,
        use_cache=use_cache,
        ctx=ctx,
        **options,
    )[0]


# --- check: interpret the figurative sentence, then explain the pair (`figlang interpret --check`) ---

CHECK_MODEL = "qwen2.5-1.5b"
CHECK_OPTIONS: dict[str, Any] = {"backend": "llama.cpp", "threads": 1}


@dataclass
class CheckResult(AsDict):
    premise: str
    hypothesis: str
    label: str  # entailment | contradiction
    scores: dict[str, float]
    explanation: str | None  # the model's own, generated after its label (may be None for a small model)
    why: str  # the explanation, else what the figurative sentence says literally (its expressions' meanings)
    method: dict[str, Any]
    expressions: list[dict[str, Any]] = field(default_factory=list)  # interpret(hypothesis)'s expressions


def _literal_reading(result: Any) -> str:
    parts = [f"\u201c{e.text}\u201d means \u201c{e.meaning}\u201d" for e in result.expressions if e.meaning]
    para = next((e.paraphrase for e in result.expressions if e.paraphrase), None)
    if not parts:
        return "no figurative expression with a known meaning was found in the figurative sentence"
    return "; ".join(parts) + (f", so it says: {para}" if para else "")


_explain_pair = explain  # check's own `explain` flag hides the function inside it


def check(
    premise: str,
    hypothesis: str,
    *,
    model: str = CHECK_MODEL,
    explain: bool = True,
    data_dir: str | Path | None = None,
    ctx: RunContext | None = None,
    **options: Any,
) -> CheckResult:
    """Does ``premise`` entail or contradict the figurative ``hypothesis``, and why?

    Answered by the FLUTE explaining system (:func:`figlang.explain.explain`: the label from figlang's best
    zero-shot FLUTE method, qwen2.5-1.5b nli-score with the "do they mean the same thing?" question and
    content-free calibration, then a one-sentence explanation written from retrieved FLUTE train examples of
    the same figure type). The figure type and idiom come from :func:`figlang.interpret.interpret` of the hypothesis. ``why``
    falls back to the hypothesis's literal reading when the model gives no explanation.
    """
    validate_text(premise)
    validate_text(hypothesis)
    ctx = run_context(ctx, data_dir=data_dir)  # built once: the lexicons and the explainer read the same folder
    reading = interpret(hypothesis, ctx=ctx)
    first = reading.expressions[0] if reading.expressions else None
    figure = first.type if first is not None and first.type in ("idiom", "simile", "metaphor") else None
    idiom = first.canonical if first is not None and first.type == "idiom" else None
    opts = {**(CHECK_OPTIONS if model == CHECK_MODEL else {}), **options}
    result = _explain_pair(premise, hypothesis, figure, idiom=idiom, model=model, ctx=ctx, **opts)
    if result.label is None:
        raise FiglangError(f"the model's answer could not be read as entails/contradicts: {result.raw!r}")
    explanation = result.explanation if explain else None
    why = explanation or _literal_reading(reading)
    method = {"name": "explain", **result.produced_by, "question": "meaning", "calibrate": "content-free"}
    return CheckResult(
        premise,
        hypothesis,
        result.label,
        dict(cast("dict[str, float]", result.scores or {})),  # the NLI label method scores per label
        explanation,
        why,
        method,
        [e.to_dict() for e in reading.expressions],
    )


__all__ = ["DEFAULT_MODEL", "CheckResult", "Explanation", "check", "explain", "explain_pairs", "explainer"]


from figlang.core.callable_module import make_callable  # noqa: E402

make_callable(__name__)  # figlang.X(...) keeps working after `import figlang.X`
