"""``interpret(text)``: every figurative expression in a text, with its meaning and a literal paraphrase.

This is the one entry point the CLI (``figlang interpret``) and the web app call. It checks the
input (:func:`validate_text`), finds idioms, similes and metaphor candidates
(:class:`~figlang.interpret.detect.Detector`, the narrative miner's matcher over the assembled
lexicon of :mod:`~figlang.interpret.lexicon_all`), then gives each a meaning (lexicon gloss,
then WordNet, then the offline LM only when ``meaning_model`` names one) and a paraphrase
(:mod:`~figlang.interpret.paraphrase`).

``confidence`` is a heuristic rank in [0, 1], not a calibrated probability: it rises with how
exactly the text matched (as written > inflected > with insertions), how many resources list the
idiom and how specific the pattern is; explicit "as ADJ as NP" similes rank above implicit ones;
metaphor candidates from a list rank lowest, since a listed pair is often literal in context.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.as_dict import AsDict
from figlang.core.errors import FiglangError
from figlang.core.io import parse_jsonl
from figlang.core.context import RunContext, run_context
from figlang.lexicon.everyday import LICENCES
from figlang.interpret.detect import Detector, RawHit, surface_exact
from figlang.interpret.discover import Discoverer
from figlang.interpret.lexicon_all import RESOURCES, AssembledLexicon, Holdout, assemble
from figlang.interpret.use_label import UseItem, UseLabeller, use_labeller, use_model_name
from figlang.interpret.paraphrase import (
    IdiomParaphraser,
    Meaning,
    Paraphrase,
    clean_definition,
    lm_meaning,
    metaphor_paraphrase,
    simile_meaning,
    simile_paraphrase,
    wordnet_gloss,
)

MAX_CHARS = 100_000  # one call; longer documents: split them (JSON lines, one text a line)
MAX_FILE_BYTES = 5_000_000
SCHEMA_VERSION = 1


class InterpretInputError(FiglangError, ValueError):
    """Input ``interpret`` cannot read: empty, binary, not UTF-8, too long or not English."""


class UnsupportedLanguageError(InterpretInputError):
    """The text does not look like English, the only language the lexicon covers."""


# ----------------------------------------------------------------------------------------------- results


@dataclass
class Expression(AsDict):
    start: int  # character span in the text
    end: int
    text: str  # text[start:end]
    sentence: str
    sentence_start: int
    type: str  # idiom | simile | metaphor
    canonical: str  # the lexicon's form, the simile as written, the listed metaphor pair
    meaning: str | None
    meaning_source: str | None  # lexicon:<resource> | wordnet | pattern | lm:<model> | None
    paraphrase: str | None  # the sentence with the expression replaced by its meaning
    confidence: float
    topic: str | None = None  # similes
    vehicle: str | None = None
    property: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # resources, pattern, insertions, slots, ops
    use: str | None = None  # idioms: figurative | literal here (the use model), None when it could not run
    p_figurative: float | None = None  # the use model's probability that this use is figurative


@dataclass
class Interpretation:
    text: str
    expressions: list[Expression]
    lexicon: dict[str, Any] = field(default_factory=dict)  # entries, fingerprint, resources
    notes: list[str] = field(default_factory=list)
    use_model: str | None = None  # the model that labelled the idioms' uses

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "text": self.text,
            "headline": self.headline(),
            "expressions": [e.to_dict() for e in self.expressions],
            "lexicon": self.lexicon,
            "use_model": self.use_model,
            "notes": list(self.notes),
        }

    def headline(self) -> str:
        """What was found, in one line: "4 expressions: 3 figurative, 1 idiom used literally"."""
        n = len(self.expressions)
        literal = sum(e.use == "literal" for e in self.expressions)
        head = f"{n} expression{'s' if n != 1 else ''}"
        if not literal:
            return f"{n} figurative expression{'s' if n != 1 else ''}"
        return f"{head}: {n - literal} figurative, {literal} idiom{'s' if literal != 1 else ''} used literally"

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


# ----------------------------------------------------------------------------------------------- input checks

_STOP = frozenset(
    """the a an and or but of to in on at by for with from as is are was were be been it its he she they we you i me my
    his her their our your this that these those not no so if then than there here what who which when where how all
    had has have do did does will would can could should just very up out into over about after before""".split()
)


def english_share(text: str) -> tuple[float, float]:
    """(share of words that are English function words, share of letters outside ASCII)."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    letters = sum(len(w) for w in words)
    if not words:
        return 0.0, 0.0
    stop = sum(w in _STOP for w in words) / len(words)
    non_ascii = sum(1 for w in words for c in w if ord(c) > 127) / max(letters, 1)
    return stop, non_ascii


def validate_text(text: Any, max_chars: int = MAX_CHARS) -> str:
    """The text if ``interpret`` can read it, else an InterpretInputError that says what to do."""
    if not isinstance(text, str):
        raise InterpretInputError(f"interpret needs a string, got {type(text).__name__}")
    if not text.strip():
        raise InterpretInputError("the text is empty: give a sentence or a document to interpret")
    if len(text) > max_chars:
        raise InterpretInputError(
            f"the text has {len(text):,} characters, more than the limit of {max_chars:,} for one call; "
            "split it (for example one paragraph per line in a JSON lines file for --file)"
        )
    if "\x00" in text or sum(ord(c) < 32 and c not in "\n\r\t\f\v" for c in text) > 0.01 * len(text):
        raise InterpretInputError("the text contains control characters (binary data?): give plain text")
    words = re.findall(r"[^\W\d_]+", text)
    if len(words) >= 5:
        stop, non_ascii = english_share(text)
        if non_ascii > 0.2 or (len(words) >= 8 and stop < 0.08):
            raise UnsupportedLanguageError(
                f"the text does not look like English ({stop:.0%} of its words are English function words, "
                f"{non_ascii:.0%} of its letters are not ASCII); the idiom lexicon and the metaphor lists cover English only"
            )
    return text


def read_inputs(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> list[tuple[str, str]]:
    """(id, text) items of a plain-text file (one item) or a JSON lines file (a ``text`` field per line)."""
    p = Path(path)
    if not p.is_file():
        raise InterpretInputError(f"{p}: no such file")
    size = p.stat().st_size
    if size > max_bytes:
        raise InterpretInputError(f"{p}: {size:,} bytes, more than the limit of {max_bytes:,}; split the file")
    raw = p.read_bytes()
    if b"\x00" in raw[:8192]:
        raise InterpretInputError(f"{p}: a binary file (NUL bytes); give UTF-8 plain text or JSON lines")
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InterpretInputError(f"{p}:{line}: not UTF-8 (byte {exc.start}); convert it, e.g. `iconv -f latin1 -t utf-8`") from None
    lines = [ln for ln in content.splitlines() if ln.strip()]
    if not lines:
        raise InterpretInputError(f"{p}: the file is empty")
    if p.suffix.lower() in (".jsonl", ".ndjson") or all(ln.lstrip().startswith("{") for ln in lines):
        items: list[tuple[str, str]] = []
        for number, obj, problem in parse_jsonl(content):
            if obj is None:
                raise InterpretInputError(f"{p}:{number}: {problem}")
            if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                raise InterpretInputError(f"{p}:{number}: each JSON line needs a string field 'text'")
            items.append((str(obj.get("id", number)), obj["text"]))
        return items
    return [(p.name, content)]


# ----------------------------------------------------------------------------------------------- engine


class Interpreter:
    """Lexicon, detector and paraphraser kept together (building them is the slow part; reuse one)."""

    def __init__(
        self,
        data_dir: str | Path | None = None,
        holdout: Holdout | None = None,
        resources: tuple[str, ...] = RESOURCES,
        progress=None,
        *,
        ctx: RunContext | None = None,
    ) -> None:

        self.data_dir = run_context(ctx, data_dir=data_dir).data_dir  # the run's data folder (or data_dir's) holds the lexicons
        self.lexicon: AssembledLexicon = assemble(self.data_dir, resources, holdout, progress)
        self.detector = Detector(self.lexicon, self.data_dir)
        self._paraphraser: IdiomParaphraser | None = None
        self.use_labeller = UseLabeller()  # the default use model; others (``use_model``) load on first use
        self._discoverers: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def paraphraser(self) -> IdiomParaphraser:
        if self._paraphraser is None:
            self._paraphraser = IdiomParaphraser()
        return self._paraphraser

    def interpret(
        self,
        text: str,
        *,
        paraphrase: bool = True,
        meaning_model: str | None = None,
        meaning_options: dict[str, Any] | None = None,
        max_chars: int = MAX_CHARS,
        figurative_only: bool = False,
        discover: str | None = None,
        use_model: str | None = None,
    ) -> Interpretation:
        """``figurative_only``: leave out the idioms the use model reads as literal here. ``discover``: a catalog LM
        that proposes figurative spans in the sentences where the lexicon found nothing (:mod:`.discover`).
        ``use_model``: the model that labels each idiom's use, a short name of
        :data:`~figlang.interpret.use_label.USE_MODELS` ("everyday") or a trained model; None is the default."""
        text = validate_text(text, max_chars)
        notes: list[str] = []
        with self._lock:  # spaCy pipelines and the caches are not shared across threads (the web app's workers)
            sents, hits = self.detector.detect(text)
            out = [self._expression(text, h, paraphrase, meaning_model, meaning_options or {}, notes) for h in hits]
            labeller = self._use_labeller(use_model)
            self._label_uses(labeller, out, notes)
            if discover:
                out = sorted(out + self._discover(text, sents, out, discover), key=lambda e: (e.start, e.end))
        if figurative_only:
            out = [e for e in out if e.use != "literal"]
        info = {
            "entries": len(self.lexicon),
            "fingerprint": self.lexicon.fingerprint,
            "resources": list(self.lexicon.resources),
            "holdout": self.lexicon.holdout.to_dict() if self.lexicon.holdout else None,
            "missing": sorted(self.lexicon.missing),
        }
        return Interpretation(text, out, info, sorted(set(notes)), use_model=labeller.model_name)

    def _idiom_details(self, h: RawHit, resources: tuple[str, ...]) -> dict[str, Any]:
        entry = h.idiom_pattern.entry
        return {
            "resources": list(resources),
            "source": entry.source,
            "licences": {r: LICENCES[r].name for r in resources},
            "variant_of": self.lexicon.variant_of.get(entry.key),
            "alternatives": [a.idiom_pattern.entry.expression for a in h.alternatives],
            "insertions": [h.doc[i].text for i in h.idiom_match.insertions],
            "slots": [list(x) for x in h.idiom_match.slots],
            "category": entry.category,
        }

    def _discover(self, text: str, sents, found: list[Expression], model: str) -> list[Expression]:
        """LM-proposed spans in the sentences with no lexicon idiom or simile, marked ``discovered_by``."""
        if model not in self._discoverers:
            self._discoverers[model] = Discoverer(model)
        covered = {e.sentence_start for e in found if e.type in ("idiom", "simile")}
        todo = [s for s in sents if s.start not in covered]
        out = []
        for s, spans in zip(todo, self._discoverers[model].propose([s.text_in(text) for s in todo])):
            sentence = s.text_in(text)
            for a, b in spans:
                span = sentence[a:b]
                base = dict(start=s.start + a, end=s.start + b, text=span, sentence=sentence, sentence_start=s.start)
                details = {"discovered_by": f"lm:{model}", "resources": []}
                out.append(
                    Expression(
                        **base,
                        type="idiom",
                        canonical=span.lower(),
                        meaning=None,
                        meaning_source=None,
                        paraphrase=None,
                        confidence=0.3,
                        details=details,
                    )
                )
        return out

    def _use_labeller(self, name: str | None) -> UseLabeller:
        """The default labeller (``name`` None), or the one ``name`` asks for (an error when it cannot be loaded)."""
        if name is None or use_model_name(name) == self.use_labeller.model_name:
            return self.use_labeller
        return use_labeller(name)

    @staticmethod
    def _label_uses(labeller: UseLabeller, expressions: list[Expression], notes: list[str]) -> None:
        """Each idiom's use here (figurative / literal) and P(figurative), from the use model ``labeller``."""
        idioms = [e for e in expressions if e.type == "idiom"]
        labels = labeller.label([UseItem(e.sentence, e.canonical, e.meaning) for e in idioms])
        for e, lab in zip(idioms, labels):
            if lab is None:
                continue
            e.use, e.p_figurative = lab.label, round(lab.probability, 3)
        if idioms and labeller.why:
            notes.append(f"no literal/figurative labels: {labeller.why}")

    # -- one expression ---------------------------------------------------------------------------
    def _meaning(self, key: str) -> Meaning:
        for definition, resource in self.lexicon.meanings.get(key, []):
            return Meaning(clean_definition(definition), f"lexicon:{resource}")
        return Meaning(None, None)

    def _expression(self, text: str, h: RawHit, paraphrase: bool, model: str | None, model_opts: dict, notes: list[str]) -> Expression:
        s = h.sentence
        base: dict[str, Any] = dict(start=h.start, end=h.end, text=text[h.start : h.end], sentence=s.text_in(text), sentence_start=s.start)
        if h.type == "idiom":
            return self._idiom(h, base, paraphrase, model, model_opts)
        if h.type == "simile":
            return self._simile(h, base, paraphrase, model, model_opts)
        kind, words, name = h.metaphor_listing
        meaning, para = metaphor_paraphrase(h, self.paraphraser.nlp)  # the meaning is the literal word the substitution picks
        if "wordnet_not_installed" in para.problems:
            notes.append("WordNet is not installed, so metaphor candidates have no meaning (scripts/install_wordnet.sh)")
        if meaning.text is None and model:
            meaning = Meaning(lm_meaning(text[h.start : h.end], h.doc.text, model, **model_opts), f"lm:{model}")
        conf = 0.45 if name.endswith("test") else 0.35
        return Expression(
            **base,
            type="metaphor",
            canonical=" ".join(w for w in words if w),
            meaning=meaning.text,
            meaning_source=meaning.source,
            paraphrase=para.text if paraphrase else None,
            confidence=conf,
            details={"kind": kind, "list": name, "ops": list(para.ops)},
        )

    def _idiom(self, h: RawHit, base: dict[str, Any], paraphrase: bool, model: str | None, model_opts: dict) -> Expression:
        """An idiom: its meaning (lexicon, else WordNet, else the LM), paraphrase and confidence."""
        entry = h.idiom_pattern.entry
        keys = [self.lexicon.canonical_key(k) for k in [entry.key] + [a.idiom_pattern.entry.key for a in h.alternatives]]
        meaning = next((m for m in map(self._meaning, keys) if m.text), Meaning(None, None))
        if meaning.text is None:
            gloss = wordnet_gloss(entry.expression)
            meaning = Meaning(gloss, "wordnet") if gloss else meaning
        if meaning.text is None and model:
            meaning = Meaning(lm_meaning(entry.expression, h.doc.text, model, **model_opts), f"lm:{model}")
        para = Paraphrase(None, None)
        if paraphrase and meaning.text and (not (meaning.source or "").startswith("lm:") or len(meaning.text.split()) <= 8):
            para = self.paraphraser.paraphrase(h, meaning.text)
        resources = tuple(dict.fromkeys(r for k in keys for r in self.lexicon.resources_of.get(k, ())))
        details = self._idiom_details(h, resources)
        exact = surface_exact(h)
        words = sum(1 for e in h.idiom_pattern.elements if e.kind == "WORD")
        conf = 0.55 + 0.15 * exact + 0.05 * min(len(resources) - 1, 3) + 0.05 * (words >= 3) - 0.1 * bool(h.idiom_match.insertions)
        if entry.category == "Literal":
            conf -= 0.2
        return Expression(
            **base,
            type="idiom",
            canonical=entry.expression,
            meaning=meaning.text,
            meaning_source=meaning.source,
            paraphrase=para.text,
            confidence=round(min(max(conf, 0.05), 0.95), 2),
            details={**details, "ops": list(para.ops), "paraphrase_problems": list(para.problems)},
        )

    def _simile(self, h: RawHit, base: dict[str, Any], paraphrase: bool, model: str | None, model_opts: dict) -> Expression:
        """A simile: its meaning (lexicon, else its property, else the LM), paraphrase and confidence by pattern."""
        sh = h.simile_hit
        meaning = Meaning(None, None)
        lex = h.merged[0].idiom_pattern.entry if h.merged else None
        if lex is not None:
            meaning = self._meaning(lex.key)
        if meaning.text is None and sh.property:
            meaning = Meaning(simile_meaning(h), "pattern")
        if meaning.text is None and model:
            meaning = Meaning(lm_meaning(sh.explicit, h.doc.text, model, **model_opts), f"lm:{model}")
        para = Paraphrase(None, None)
        if paraphrase and meaning.text and not (meaning.source or "").startswith("lm:"):  # an LM's free answer rarely fits the slot
            para = simile_paraphrase(h, clean_definition(meaning.text))
        conf = {"as_as": 0.85, "bare_as": 0.65, "adj_like": 0.6, "verb_like": 0.4}.get(sh.pattern, 0.5) + (0.1 if lex else 0.0)
        details = {"pattern": sh.pattern, "implicit": sh.implicit, "lexicon": lex.expression if lex else None, "ops": list(para.ops)}
        return Expression(
            **base,
            type="simile",
            canonical=lex.expression if lex else sh.explicit,
            meaning=meaning.text,
            meaning_source=meaning.source,
            paraphrase=para.text,
            confidence=round(min(conf, 0.95), 2),
            topic=sh.topic,
            vehicle=sh.vehicle,
            property=sh.property,
            details=details,
        )


_ENGINES: dict[tuple, Interpreter] = {}
_LOCK = threading.Lock()


def get_interpreter(
    data_dir: str | Path | None = None,
    holdout: Holdout | None = None,
    resources: tuple[str, ...] = RESOURCES,
    *,
    ctx: RunContext | None = None,
) -> Interpreter:
    """One Interpreter per (data dir, holdout, resources) per process: the second call is fast. The data folder is the
    run context's (or ``data_dir``'s)."""
    ctx = run_context(ctx, data_dir=data_dir)
    key = (str(ctx.data_dir), holdout, tuple(resources))
    with _LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = Interpreter(holdout=holdout, resources=tuple(resources), ctx=ctx)
        return _ENGINES[key]


def interpret(
    text: str,
    *,
    data_dir: str | Path | None = None,
    paraphrase: bool = True,
    meaning_model: str | None = None,
    holdout: Holdout | None = None,
    figurative_only: bool = False,
    discover: str | None = None,
    use_model: str | None = None,
    ctx: RunContext | None = None,
) -> Interpretation:
    """The figurative expressions in ``text``: span, type, canonical form, meaning (with its source),
    literal paraphrase, confidence, and for similes topic / vehicle / property.

    ``meaning_model`` (a catalog model, e.g. ``qwen2.5-1.5b``) is asked for meanings the lexicon and
    WordNet do not have; it is off by default because the default small model (smollm2-135m) is
    too weak to rely on. ``holdout`` removes a seeded fraction of PIE's idioms from the lexicon
    (for measuring detection on idioms it was not built from). ``use_model`` picks the model that labels each
    idiom's use: ``"everyday"`` (better on everyday text, see docs/research/interpret.md) or a trained model; None is the
    default one. ``ctx`` is the run's context (its data folder holds the lexicons); without one it is made from
    ``data_dir``.
    """
    text = validate_text(text)
    ctx = run_context(ctx, data_dir=data_dir)
    return get_interpreter(holdout=holdout, ctx=ctx).interpret(
        text,
        paraphrase=paraphrase,
        meaning_model=meaning_model,
        figurative_only=figurative_only,
        discover=discover,
        use_model=use_model,
    )


# ----------------------------------------------------------------------------------------------- --check
