"""Meanings of idioms and similes for items that carry none: which source knew, and what it said.

The figurative narratives carry each idiom's ``meaning`` and each simile's ``property`` (27 simile
records have none); a user's narrative usually carries neither. The meaning-aware methods
(``lm-score-meaning``, ``qa-meaning``, ``few-shot-meaning``) condition the LM on a meaning, so a
missing one is looked up here, in this order (each can be switched off):

* ``record``: the item's own ``meaning`` field (the benchmark's gloss / property);
* ``lexicon``: the shipped idiom lexicons (``benchmark``: the narrative dataset's idiom glosses,
  ``pie``: PIE-English's; or a TSV/JSONL lexicon file), through :mod:`figlang.lexicon.idioms`;
* ``pattern``: an explicit simile's property ("as busy as a bee" -> "busy");
* ``wordnet``: WordNet's gloss of a multi-word expression it lists as one lemma ("kick the bucket");
* ``lm``: an instruction model asked "what does X mean in this sentence?" (opt-in: only when a
  ``model`` is named, since small models are weak at it).

Every answer says which source supplied it (``Meaning.source``: ``record``, ``lexicon:benchmark``,
``lexicon:pie``, ``pattern``, ``wordnet``, ``lm:<model>``), or that none did (``text`` None and a
``note`` saying which sources were tried).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import Record
from figlang.core.text import normalise_idiom
from figlang.knowledge.providers import KnowledgeInput
from figlang.core.paths import resolve_data_dir
from figlang.lexicon.idioms import load_lexicon
from figlang.backends.backend_cache import backend_for
from figlang.backends.base import ChatMessage, GenerationRequest
from figlang.lexicon.wordnet import load_wordnet

SOURCES = ("record", "lexicon", "pattern", "wordnet", "lm")
DEFAULT_SOURCES = ("record", "lexicon", "pattern", "wordnet")  # "lm" joins when a model is named
DEFAULT_LEXICONS = ("benchmark", "pie")
SLOT_WORDS = {"one's", "oneself", "someone", "somebody", "something", "someone's", "sb", "sth", "one", "sb's"}
_AS_AS = re.compile(r"^\s*(?:as|so)\s+([a-z][a-z\-]*)\s+as\s+\S", re.IGNORECASE)


@dataclass(frozen=True)
class Meaning:
    """A meaning and the source that supplied it; ``text`` None when no source knew (``note`` says which were tried)."""

    text: str | None
    source: str | None
    note: str | None = None


# ------------------------------------------------------------------------------------------ WordNet


def _wordnet() -> Any | None:
    """The offline WordNet, or None when it is not installed (WordNet glosses are then skipped)."""

    try:
        return load_wordnet()
    except FiglangError:
        return None


def wordnet_gloss(expression: str) -> str | None:
    """WordNet's gloss of a multi-word expression it lists as one lemma ("kick the bucket" -> "pass from physical life ...")."""
    wn = _wordnet()
    if wn is None:
        return None
    words = [w for w in expression.lower().replace("\u2019", "'").split() if w not in SLOT_WORDS]
    if len(words) < 2:
        return None
    for name in ("_".join(words), "_".join(w for w in words if w not in ("a", "an", "the"))):
        syns = wn.synsets(name)
        if syns:
            return syns[0].definition()
    return None


# ------------------------------------------------------------------------------------------ an LM


def lm_meaning(expression: str, sentence: str, model: str, **options: Any) -> str | None:
    """An offline LM's short answer to "what does EXPRESSION mean in SENTENCE?" (opt-in: small models are weak at it)."""

    lm = backend_for(model, **options)
    question = f'In the sentence "{sentence.strip()}", what does "{expression}" mean? Answer with a short phrase only.'
    prompt = lm.chat_prompt([ChatMessage("user", question)]) if lm.has_chat_template else f"Question: {question}\nAnswer:"
    out = lm.generate([GenerationRequest(prompt, max_new_tokens=24, stop=("\n",))])[0]
    text = out[0].strip().strip('"').strip() if out else ""
    text = re.sub(r"^(it |this )?(means|refers to)\s+", "", text, flags=re.IGNORECASE).rstrip(".").strip()
    return text or None


# ------------------------------------------------------------------------------------------ lexicons


@lru_cache(maxsize=8)
def _lexicon(spec: str, data_dir: str) -> dict[str, tuple[str, str]]:
    """Normalised idiom -> (definition, lexicon name) of one lexicon (``benchmark``, ``pie`` or a file)."""

    lex = load_lexicon(spec, data_dir)
    name = spec if spec in DEFAULT_LEXICONS else Path(spec).name
    return {e.key: (e.definition, name) for e in lex if e.definition}


def _lookup(expression: str, table: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    key = normalise_idiom(expression)
    alt = key[3:] if key.startswith("to ") else f"to {key}"
    return table.get(key) or table.get(alt)


class MeaningFinder:
    """Looks up meanings source by source (``sources`` in order), recording which one answered.

    ``lexicons`` are read from ``data_dir`` (the run's data folder, given by the method's ``bind``; without one
    ``$FIGLANG_DATA_DIR``, else figlang's cache),
    once per process; a lexicon that cannot be read is skipped with its reason kept in ``problems``.
    """

    def __init__(
        self,
        sources: Sequence[str] = DEFAULT_SOURCES,
        lexicons: Sequence[str] = DEFAULT_LEXICONS,
        data_dir: str | Path | None = None,
        model: str | None = None,
        model_options: dict[str, Any] | None = None,
    ) -> None:
        unknown = [s for s in sources if s not in SOURCES]
        if unknown:
            raise FiglangError(f"unknown meaning source(s) {', '.join(unknown)}: choose from {', '.join(SOURCES)}")
        if "lm" in sources and not model:
            raise FiglangError("meaning source 'lm' needs a model: pass meaning_model=NAME (e.g. qwen2.5-1.5b)")
        self.sources = tuple(sources)
        self.lexicon_specs = tuple(lexicons)
        self.data_dir = data_dir
        self.model = model
        self.model_options = dict(model_options or {})
        self.problems: list[str] = []
        self._tables: list[dict[str, tuple[str, str]]] | None = None

    def use_data_dir(self, data_dir: str | Path) -> None:
        """Read the lexicons from ``data_dir`` (the run's data folder); tables already read from elsewhere are read again."""
        if self.data_dir is None or Path(self.data_dir) != Path(data_dir):
            self.data_dir = data_dir
            self._tables = None
            self.problems = []

    def describe(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "lexicons": list(self.lexicon_specs) if "lexicon" in self.sources else [],
            "model": self.model if "lm" in self.sources else None,
        }

    def tables(self) -> list[dict[str, tuple[str, str]]]:
        if self._tables is None:
            root = str(resolve_data_dir(self.data_dir))
            self._tables = []
            for spec in self.lexicon_specs:
                try:
                    self._tables.append(_lexicon(spec, root))
                except (FiglangError, OSError) as err:
                    self.problems.append(f"lexicon {spec!r} not read: {err}")
        return self._tables

    def find(self, record: Record) -> Meaning:
        """The first source's meaning of the record's expression, or Meaning(None, None, note)."""

        own = getattr(record, "meaning", None)
        if "record" in self.sources and isinstance(own, str) and own.strip():
            return Meaning(" ".join(own.split()), "record")
        try:
            inp = KnowledgeInput.from_record(record)
        except FiglangError:
            inp = None
        expression = inp.expression if inp else getattr(record, "expression", None)
        tried = list(self.sources)
        if not expression:
            return Meaning(None, None, "no meaning: the item names no expression (no 'expression' field, no <b>…</b> in the narrative)")
        simile = inp is not None and inp.expression_type == "simile"
        for source in self.sources:
            if source == "lexicon" and not simile:
                for table in self.tables():
                    hit = _lookup(expression, table)
                    if hit:
                        return Meaning(" ".join(hit[0].split()), f"lexicon:{hit[1]}")
            elif source == "pattern" and simile:
                m = _AS_AS.match(expression)
                if m:
                    return Meaning(m.group(1).lower(), "pattern")
            elif source == "wordnet" and not simile:
                gloss = wordnet_gloss(expression)
                if gloss:
                    return Meaning(gloss, "wordnet")
            elif source == "lm" and self.model:
                sentence = getattr(record, "context", None) or getattr(record, "narrative", "")
                text = lm_meaning(expression, str(sentence)[-600:], self.model, **self.model_options)
                if text:
                    return Meaning(text, f"lm:{self.model}")
        note = f"no meaning found for {expression!r} (tried: {', '.join(tried)})"
        if self.problems:
            note += "; " + "; ".join(self.problems)
        return Meaning(None, None, note)

    def find_all(self, records: Sequence[Record]) -> list[Meaning]:
        return [self.find(r) for r in records]


__all__ = ["DEFAULT_LEXICONS", "DEFAULT_SOURCES", "SOURCES", "Meaning", "MeaningFinder", "lm_meaning", "wordnet_gloss"]
