"""FLUTE creator: the paper's prompt templates (YAML data files) and the automatic checks.

Templates live in ``figlang/resources/flute_prompts/<figure type>.yaml`` (one file per figure type,
each step's template, its fields and where its text comes from); ``decoding.yaml`` holds the
default decoding. :func:`load_prompts` reads them (or a user folder with the same files).

A check looks at one generated output and returns the name of what is wrong, or None. The built-in
checks (:func:`builtin_checks`) are: ``empty``, ``too_short`` / ``too_long`` (words), ``label_leak``
(label words or prompt scaffolding in a sentence: "Entailment:", "contradict", …),
``copy_of_input`` (the output repeats the sentence it should rewrite), ``same_as_premise`` (the pair's
two sides are the same sentence), ``same_as_entailment`` (the contradiction repeats the entailment),
``not_minimal_edit`` (a contradiction that should be a minimal edit shares too little with its base),
``missing_idiom`` (an idiomatic sentence without its idiom), ``kept_idiom`` / ``kept_simile`` (a
literal sentence that still holds the figure), ``missing_preserved`` (a simile paraphrase that lost
the property words it had to keep), ``explanation_copy`` (an explanation that only repeats a
sentence). Extra checks (callables taking a :class:`CheckContext`) can be added per run.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from figlang.core.errors import DataError, FiglangError
from figlang.core.text import normalise_sentence
from figlang.builders.flute_inputs import FIGURE_TYPES, SourceItem

PROMPT_PACKAGE = "figlang.resources"
PROMPT_FOLDER = "flute_prompts"


# --- templates -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepTemplate:
    figure_type: str
    name: str
    template: str
    fields: tuple[str, ...]
    output: str  # the label the answer follows ("Creative Paraphrase")
    outputs: tuple[str, ...] = ()  # several labelled answers in one output (idiom joint step)
    origin: str = ""
    human: bool = False
    instructions: str = ""

    def render(self, values: dict[str, str]) -> str:
        missing = [f for f in self.fields if not values.get(f)]
        if missing:
            raise FiglangError(f"{self.figure_type}/{self.name}: no value for template field(s) {', '.join(missing)}")
        return self.template.format_map({f: values[f] for f in self.fields})


@dataclass(frozen=True)
class PromptSet:
    steps: dict[str, dict[str, StepTemplate]]  # figure type -> step -> template
    decoding: dict[str, Any]
    folder: str
    digest: str  # sha256 of every file's bytes: part of the run fingerprint

    def get(self, figure_type: str, step: str) -> StepTemplate:
        try:
            return self.steps[figure_type][step]
        except KeyError:
            raise FiglangError(f"the prompt files in {self.folder} have no step {step!r} for {figure_type}") from None


REQUIRED_STEPS = {
    "idiom": ("sentence", "paraphrase_and_contradiction", "explanation_entailment", "explanation_contradiction"),
    "simile": ("paraphrase", "contradiction", "explanation_entailment", "explanation_contradiction"),
    "metaphor": ("paraphrase", "contradiction", "explanation_entailment", "explanation_contradiction"),
    "sarcasm": ("paraphrase", "contradiction", "explanation_entailment", "explanation_contradiction"),
}


def _prompt_files(folder: str | Path | None) -> tuple[str, dict[str, bytes]]:
    names = [f"{t}.yaml" for t in FIGURE_TYPES] + ["decoding.yaml"]
    if folder is None:
        root = resources.files(PROMPT_PACKAGE).joinpath(PROMPT_FOLDER)
        return f"{PROMPT_PACKAGE}/{PROMPT_FOLDER}", {n: root.joinpath(n).read_bytes() for n in names}
    folder = Path(folder)
    out = {}
    for n in names:
        p = folder / n
        if not p.exists():
            raise DataError(f"prompt folder lacks {n} (it needs {', '.join(names)})", folder)
        out[n] = p.read_bytes()
    return str(folder), out


def load_prompts(folder: str | Path | None = None) -> PromptSet:
    """The prompt templates and default decoding (figlang's packaged files, or a folder of your own)."""
    where, files = _prompt_files(folder)
    digest = hashlib.sha256()
    steps: dict[str, dict[str, StepTemplate]] = {}
    decoding: dict[str, Any] = {}
    for name, blob in sorted(files.items()):
        digest.update(name.encode() + b"\0" + blob + b"\0")
        path = f"{where}/{name}"
        try:
            data = yaml.safe_load(blob.decode("utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise DataError(f"cannot read the prompt file: {err}", path) from None
        if name == "decoding.yaml":
            decoding = dict(data or {})
            continue
        ftype = name.removesuffix(".yaml")
        raw_steps = (data or {}).get("steps") or {}
        parsed = {}
        for step, spec in raw_steps.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("template"), str):
                raise DataError(f"step {step!r} needs a 'template' text", path)
            fields = tuple(spec.get("fields") or ())
            placeholders = {f for _, f, _, _ in string.Formatter().parse(spec["template"]) if f}
            if placeholders != set(fields):
                raise DataError(
                    f"step {step!r}: the template's placeholders {sorted(placeholders)} differ from 'fields' {sorted(fields)}", path
                )
            parsed[step] = StepTemplate(
                ftype,
                step,
                spec["template"],
                fields,
                str(spec.get("output", "")),
                tuple(spec.get("outputs") or ()),
                str(spec.get("origin", "")),
                bool(spec.get("human", False)),
                str(spec.get("instructions", "")),
            )
        missing = [s for s in REQUIRED_STEPS[ftype] if s not in parsed]
        if missing:
            raise DataError(f"missing step(s) {', '.join(missing)}", path)
        steps[ftype] = parsed
    return PromptSet(steps, decoding, where, digest.hexdigest())


# --- parsing a generated answer -------------------------------------------------------------------

_NUMBERED = re.compile(r"^\s*\d+\.\s+")
_QUOTES = "\"'\u201c\u201d\u2018\u2019`"


def _strip_label(line: str, labels: Sequence[str]) -> str:
    line = line.strip()
    for label in labels:
        if label and line.lower().startswith(label.lower() + ":"):
            line = line[len(label) + 1 :].strip()
    line = line.strip()
    if len(line) > 1 and line[0] in _QUOTES and line[-1] in _QUOTES:
        line = line[1:-1].strip()
    return " ".join(line.split())


def parse_answer(raw: str, template: StepTemplate) -> dict[str, str]:
    """The labelled answer(s) of one output: ``{"text": …}``, or one key per ``outputs`` label (lower case)."""
    lines = [ln for ln in (raw or "").replace("\r", "").split("\n") if ln.strip() and not _NUMBERED.match(ln)]
    if not template.outputs:
        first = lines[0] if lines else ""
        return {"text": _strip_label(first, [template.output])}
    # joint answer: the first line answers outputs[0]; later lines start with their label
    out: dict[str, str] = {o.lower(): "" for o in template.outputs}
    current = template.outputs[0].lower()
    for i, ln in enumerate(lines):
        label = next((o for o in template.outputs if ln.strip().lower().startswith(o.lower() + ":")), None)
        if label is not None:
            current = label.lower()
        elif i > 0:
            break  # an unlabelled later line is not part of the answer
        if not out[current]:
            out[current] = _strip_label(ln, template.outputs)
    return out


def one_sentence(text: str) -> str:
    from figlang.methods.prompted.parsing import first_sentence

    return first_sentence(text)[0]


# --- checks ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckContext:
    """What a check sees: one candidate output of one slot of one item."""

    item: SourceItem
    slot: str  # "H" (idiomatic sentence), "E.text", "C.text", "E.expl", "C.expl"
    kind: str  # "sentence" | "literal" | "contradiction" | "explanation"
    text: str
    round: int  # 0-based attempt number
    context: dict[str, str] = field(default_factory=dict)  # premise / hypothesis / base / entailment / figurative …
    source: str = "model"  # "model" | "human"


Check = Callable[[CheckContext], "str | None"]


@dataclass(frozen=True)
class CheckLimits:
    min_words: int = 3
    max_words: int = 60
    min_explanation_words: int = 5
    max_explanation_words: int = 80
    min_edit_similarity: float = 0.3  # word-level similarity of a minimal-edit contradiction to its base


LEAK = re.compile(
    r"\b(entail(s|ed|ment)?|contradict(s|ed|ion)?|paraphrase|inversion|sarcastic contradiction)\b"
    r"|\b(sentence|idiom|meaning|simile|metaphor|property|preserve|emotion|explanation)\s*:",
    re.IGNORECASE,
)
SLOT_WORDS = {"one's", "ones", "someone", "someone's", "somebody", "something", "sth", "sb", "oneself", "a", "an", "the"}


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", normalise_sentence(text))


@functools.lru_cache(maxsize=4096)
def _forms(word: str) -> frozenset[str]:
    """The word and every inflection of each of its lemmas ("bite" -> bit, bites, bitten, biting)."""
    from lemminflect import getAllInflections, getAllLemmas

    forms = {word}
    lemmas = {lemma for group in getAllLemmas(word).values() for lemma in group} | {word}
    for lemma in lemmas:
        forms.add(lemma)
        for group in getAllInflections(lemma).values():
            forms.update(g.lower() for g in group)
    return frozenset(forms)


def contains_expression(sentence: str, expression: str, max_gap: int = 4) -> bool:
    """Whether the content words of ``expression`` occur in ``sentence`` in order, inflected or not,
    with at most ``max_gap`` inserted words in all ("lost his temper" for "lose one's temper").

    Inflections come from lemminflect, not prefixes: "making it a historical masterpiece" does not
    contain "make history".
    """
    words = _words(sentence)
    content = [w for w in _words(expression) if w not in SLOT_WORDS]
    if not content:
        return True
    allowed = [_forms(w) for w in content]
    for start, word in enumerate(words):
        if word not in allowed[0]:
            continue
        pos, gaps, ok = start, 0, True
        for forms in allowed[1:]:
            nxt = next((j for j in range(pos + 1, min(len(words), pos + 2 + max_gap - gaps)) if words[j] in forms), None)
            if nxt is None:
                ok = False
                break
            gaps += nxt - pos - 1
            pos = nxt
        if ok:
            return True
    return False


def _keeps(text: str, expression: str) -> bool:
    """A literal sentence still holding the figure: all its content words (two or more), else the exact phrase."""
    content = [w for w in _words(expression) if w not in SLOT_WORDS]
    if len(content) >= 2:  # any order and distance: a passive ("the beans were spilled") still keeps the figure
        words = set(_words(text))
        return all(words & _forms(w) for w in content)
    return normalise_sentence(expression) in normalise_sentence(text)


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, _words(a), _words(b)).ratio()


def builtin_checks(ctx: CheckContext, limits: CheckLimits) -> list[str]:
    """Names of the built-in checks ``ctx.text`` fails, in a fixed order."""
    text, item, c = ctx.text, ctx.item, ctx.context
    failed: list[str] = []
    n = len(_words(text))
    if not text.strip() or n == 0:
        return ["empty"]
    if ctx.kind == "explanation":
        if n < limits.min_explanation_words:
            failed.append("too_short")
        if n > limits.max_explanation_words:
            failed.append("too_long")
        if any(normalise_sentence(text) == normalise_sentence(c.get(k, "")) for k in ("premise", "hypothesis")):
            failed.append("explanation_copy")
        return failed
    if n < limits.min_words:
        failed.append("too_short")
    if n > limits.max_words:
        failed.append("too_long")
    if ctx.source == "model" and LEAK.search(text):
        failed.append("label_leak")
    base = c.get("base", "")
    if base and normalise_sentence(text) == normalise_sentence(base):
        failed.append("copy_of_input")
    other = c.get("other_side", "")
    if other and normalise_sentence(text) == normalise_sentence(other):
        failed.append("same_as_premise")
    if ctx.kind == "contradiction":
        ent = c.get("entailment", "")
        if ent and normalise_sentence(text) == normalise_sentence(ent):
            failed.append("same_as_entailment")
        if (
            ctx.source == "model"
            and base
            and normalise_sentence(text) != normalise_sentence(base)
            and similarity(text, base) < limits.min_edit_similarity
        ):
            failed.append("not_minimal_edit")
    ftype = item.figure_type
    if ftype == "idiom":
        if ctx.kind == "sentence" and not contains_expression(text, item.get("idiom")):
            failed.append("missing_idiom")
        if ctx.kind in ("literal", "contradiction") and _keeps(text, item.get("idiom")):
            failed.append("kept_idiom")
    if ftype == "simile":
        if ctx.kind in ("literal", "contradiction") and item.get("simile") and contains_expression(text, item.get("simile")):
            failed.append("kept_simile")
        if ctx.kind == "literal" and not contains_expression(text, item.get("property")):
            failed.append("missing_preserved")
    return failed


def reject_round(*rounds: int, name: str = "reject_round") -> Check:
    """A check that rejects every output of the given attempt numbers (0 = first round): for testing
    resampling, or to force fresh samples."""
    wanted = set(rounds)

    def check(ctx: CheckContext) -> str | None:
        return name if ctx.round in wanted and ctx.source == "model" else None

    check.__name__ = name
    return check
