"""What every knowledge provider shares: the shipped surface forms, :class:`KnowledgeInput`,
:class:`KnowledgeProvider` and the shipped files' :class:`PrecomputedProvider`.

Its own module so that the computed providers (:mod:`.wordnet_knowledge`, :mod:`.generative`) and
:mod:`.providers`, which picks one by name, do not import each other. Public names are re-exported
from :mod:`figlang.knowledge.providers`.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.io import read_jsonl
from figlang.data.records import Record, strip_markup
from figlang.data.narrative import INFERENCE_KINDS, SPLITS, inference_file
from figlang.data.narrative import KINDS as TYPES
from figlang.core.context import RunContext, run_context
from figlang.core.text import collapse_spaces
from figlang.backends.cache import RequestCache, cache_key

KINDS = ("context", "literal")
MAX_INFERENCES = 12
PER_RELATION = 2

# --- the shipped surface forms ----------------------------------------------------------------------

CONTEXT_TEMPLATES = {
    "xNeed": "The narrator needed {}",
    "xIntent": "The narrator intended {}",
    "xWant": "The narrator wanted {}",
    "xReact": "The narrator reacted {}",
    "xEffect": "The effect on narrator is {}",
    "xAttr": "The narrator has an attribute of being {}",
}
CONTEXT_RELATIONS = tuple(CONTEXT_TEMPLATES)  # the relations are the templates' keys, in order
# "propetry" is the shipped files' spelling (4,580 of them): kept so that a model trained on the
# shipped inferences sees the same text.
LITERAL_TEMPLATES = {
    "HasProperty": "{word} has propetry of being {tail}",
    "CapableOf": "{word} is capable of {tail}",
    "Desires": "{word} desires {tail}",
    "AtLocation": "{word} can be found in {tail}",
    "UsedFor": "{word} is used for {tail}",
    "MadeUpOf": "{word} is made of {tail}",
}
LITERAL_RELATIONS = tuple(LITERAL_TEMPLATES)
SIMILE_TEMPLATE = "The associated property is {}"


def _clean(text: str) -> str:
    return " ".join(str(text).replace("_", " ").split()).strip()


def context_inference(relation: str, tail: str) -> str:
    """``xNeed``, "to find a goat" -> "The narrator needed to find a goat" (the shipped template)."""
    return CONTEXT_TEMPLATES[relation].format(_clean(tail))


def literal_inference(relation: str, word: str, tail: str) -> str:
    """``AtLocation``, "face", "front door" -> "face can be found in front door"."""
    return LITERAL_TEMPLATES[relation].format(word=_clean(word), tail=_clean(tail))


def simile_inference(tail: str) -> str:
    """ "very scary" -> "The associated property is very scary"."""
    return SIMILE_TEMPLATE.format(_clean(tail))


class KnowledgeError(FiglangError):
    """A provider cannot produce knowledge for an input (unknown narrative, no expression, …)."""


# --- what a provider reads from a record -------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an the of to in on at by for with from and or but nor so as if than then that this these those it its it's "
    "is are was were be been being am i me my mine myself you your yours yourself yourselves he him his himself she "
    "her hers herself we us our ours ourselves they them their theirs themselves one one's oneself someone someone's "
    "somebody somebody's something anyone anything everyone everything no not out up down off over under into onto "
    "upon about above below again all any both each few more most other some such only own same too very can will "
    "just do does did doing have has had having get gets got getting go goes went going gone make makes made making "
    "let lets who whom what which when where why how there here nothing nowhere somewhere everywhere anywhere s t".split()
)
_SIMILE_CUT = frozenset(
    "of in on at by for with from to into onto who whom whose which that when where while as after before because "
    "under over about through across against than if".split()
)
_DETERMINERS = frozenset("a an the some any his her their my your our its this that these those one".split())


def content_words(expression: str, limit: int = 4) -> list[str]:
    """The words of an idiom that carry literal knowledge, in order, as they are written.

    Function words, pronouns, placeholders (someone, one's) and light verbs (be, have, do, get,
    go, make, let) are dropped, as the shipped literal inferences do ("go places" -> places,
    "get a rise out of" -> rise, "save face" -> save, face); at most ``limit`` words.
    """
    out: list[str] = []
    for raw in str(expression).split():
        word = raw.strip(".,;:!?\"'()[]`’‘“”").lower()
        if not word or word in _STOPWORDS or not re.search(r"[a-z]", word) or word in out:
            continue
        if word.endswith(("'s", "’s")) and word[:-2] in _STOPWORDS:
            continue
        out.append(word)
    return out[:limit]


def simile_vehicle(expression: str) -> tuple[str, list[str], str | None]:
    """(vehicle phrase, modifier words, explicit property) of a simile.

    "like an unfinished nightmare" -> ("unfinished nightmare", ["unfinished"], None);
    "as cold as ice" -> ("ice", [], "cold"); "like a butterfly in a glass case." ->
    ("butterfly", [], None): the phrase after like/as, without determiners, cut at the first
    preposition or relative word. The head noun is chosen later (WordNet knows compounds).
    """
    words = [w.strip(".,;:!?\"'()[]`’‘“”") for w in str(expression).lower().split()]
    words = [w for w in words if w]
    prop = None
    if len(words) >= 3 and words[0] == "as" and "as" in words[2:]:
        k = words.index("as", 2)
        prop = " ".join(words[1:k]) or None
        words = words[k + 1 :]
    elif words and words[0] in ("like", "as"):
        words = words[1:]
        if words and words[0] in ("if", "though"):
            words = words[1:]
    phrase: list[str] = []
    for w in words:
        if w in _SIMILE_CUT and phrase:
            break
        if w in _DETERMINERS or w in _SIMILE_CUT:
            continue
        phrase.append(w)
    if not phrase:
        phrase = [w for w in words if w not in _DETERMINERS][-1:] or words[-1:]
    return " ".join(phrase), phrase[:-1], prop


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]*[A-Za-z0-9])")


def narrative_head(narrative: str) -> str:
    """The narrative without its last sentence (the one holding the idiom or simile), markup removed.

    A one-sentence narrative is returned whole.
    """
    text = " ".join(strip_markup(narrative).split()).strip()
    parts = [p for p in _SENTENCE_END.split(text) if p.strip()]
    if len(parts) <= 1:
        return text.strip('"“” ')
    return " ".join(parts[:-1]).strip('"“” ')


_MARKED = re.compile(r"<b>(.*?)</b>", re.S)


@dataclass(frozen=True)
class KnowledgeInput:
    """What providers read: the narrative, its expression and the expression's type."""

    narrative: str
    expression: str | None
    expression_type: str  # idiom | simile

    @classmethod
    def from_record(cls, record: Record | KnowledgeInput) -> KnowledgeInput:
        if isinstance(record, KnowledgeInput):
            return record
        narrative = getattr(record, "narrative", None) or getattr(record, "source", None)
        if not narrative:
            raise KnowledgeError(f"record {getattr(record, 'id', '?')!r} has no narrative: knowledge providers answer narrative records")
        expression = getattr(record, "expression", None)
        if not expression:
            marked = _MARKED.search(narrative)
            expression = " ".join(marked.group(1).split()) if marked else None
        etype = getattr(record, "expression_type", None)
        if etype not in ("idiom", "simile"):
            low = (expression or "").lower().strip()
            etype = "simile" if low.startswith(("like ", "as ")) else "idiom"
        return cls(str(narrative), expression, etype)

    @property
    def head(self) -> str:
        return narrative_head(self.narrative)

    def key(self, kind: str) -> dict[str, Any]:
        """The part of the input a kind's knowledge depends on (its cache key)."""
        if kind == "context":
            return {"kind": kind, "head": self.head}
        if not self.expression:
            raise KnowledgeError("literal knowledge needs the record's idiom or simile (expression, or <b>…</b> in the narrative)")
        return {"kind": kind, "type": self.expression_type, "expression": " ".join(self.expression.lower().split())}


def layout_literal(
    candidates: dict[str, dict[str, list[str]]],
    words: Sequence[str],
    relations: Sequence[str] = LITERAL_RELATIONS,
    limit: int = MAX_INFERENCES,
    per_relation: int = PER_RELATION,
) -> list[str]:
    """Up to ``limit`` idiom inferences from ``candidates[word][relation]`` (tails), in the shipped layout.

    First ``per_relation`` per relation in relation order, taken round-robin over the words ("save
    face": one of save, one of face per relation; "go places": two of places); then, where
    relations had nothing, further tails of any relation fill the remaining slots. The result is
    grouped by relation (relation order, then word order), without repeats.
    """
    taken: list[tuple[int, int, str]] = []  # (relation index, order, inference)
    used: dict[tuple[str, str], int] = {}
    seen: set[str] = set()

    def take(r: int, rel: str, word: str) -> bool:
        tails = candidates.get(word, {}).get(rel, [])
        i = used.get((word, rel), 0)
        while i < len(tails):
            inf = literal_inference(rel, word, tails[i])
            i += 1
            if inf.lower() not in seen:
                seen.add(inf.lower())
                used[(word, rel)] = i
                taken.append((r, len(taken), inf))
                return True
        used[(word, rel)] = i
        return False

    for r, rel in enumerate(relations):
        got, stuck = 0, 0
        w = 0
        while got < per_relation and stuck < len(words) and len(taken) < limit:
            if take(r, rel, words[w % len(words)]):
                got, stuck = got + 1, 0
            else:
                stuck += 1
            w += 1
    progress = True
    while len(taken) < limit and progress:
        progress = False
        for r, rel in enumerate(relations):
            for word in words:
                if len(taken) < limit and take(r, rel, word):
                    progress = True
    taken.sort(key=lambda t: (t[0], t[1]))
    return [inf for _, _, inf in taken]


# --- providers ----------------------------------------------------------------------------------------


class KnowledgeProvider(ABC):
    """Up to 12 inferences per record and kind, in the shipped files' surface form.

    Subclasses implement :meth:`compute` (distinct inputs in, inference lists out) and
    :meth:`fingerprint`; :meth:`infer` de-duplicates inputs, reads and fills the cache.
    ``cache``: a :class:`~figlang.backends.cache.RequestCache`, a directory for one, ``None`` for
    figlang's default cache directory, or ``False`` for no cache.
    """

    name = "provider"
    kinds: tuple[str, ...] = KINDS
    cached = True
    chunk_size = 0  # inputs per compute() call (0: all at once)
    VERSION = 1  # bump when a change alters the text a provider produces

    def __init__(self, cache: Any = None) -> None:
        self._cache_arg = cache
        self._cache: Any = None
        self.cache_hits = 0
        self.computed = 0
        self.progress: Any = None  # progress(done, total) after each computed chunk

    # -- identity and cache
    @abstractmethod
    def fingerprint(self) -> dict[str, Any]:
        """What determines the provider's output (name, version, model, decoding, resources)."""

    @property
    def cache(self) -> Any:
        if not self.cached or self._cache_arg is False:
            return None
        if self._cache is None:
            arg = self._cache_arg
            self._cache = arg if isinstance(arg, RequestCache) else RequestCache(arg)
        return self._cache

    def check_kind(self, kind: str) -> str:
        if kind not in KINDS:
            raise KnowledgeError(f"unknown inference kind {kind!r}: use context or literal")
        if kind not in self.kinds:
            raise KnowledgeError(f"provider {self.name!r} produces {' and '.join(self.kinds)} knowledge, not {kind}")
        return kind

    # -- work
    @abstractmethod
    def compute(self, inputs: Sequence[KnowledgeInput], kind: str) -> list[list[str]]:
        """Inferences (at most 12) for each input; inputs are distinct for the kind."""

    def infer(self, records: Sequence[Record | KnowledgeInput], kind: str) -> list[tuple[str, ...]]:
        """The inferences of ``kind`` for each record (cached; equal inputs computed once)."""
        self.check_kind(kind)
        inputs = [KnowledgeInput.from_record(r) for r in records]
        fp = self.fingerprint()
        keys = [cache_key("knowledge", fp, inp.key(kind)) for inp in inputs]
        cache = self.cache
        found: dict[str, Any] = cache.get_many(set(keys)) if cache is not None else {}
        self.cache_hits += sum(1 for k in keys if k in found)
        todo: dict[str, KnowledgeInput] = {}
        for key, inp in zip(keys, inputs):
            if key not in found and key not in todo:
                todo[key] = inp
        pending = list(todo.items())
        step = max(1, int(getattr(self, "chunk_size", 0) or len(pending) or 1))
        for start in range(0, len(pending), step):  # cached chunk by chunk: an interrupted run resumes
            chunk = pending[start : start + step]
            results = self.compute([inp for _, inp in chunk], kind)
            if len(results) != len(chunk):
                raise KnowledgeError(f"provider {self.name!r} returned {len(results)} results for {len(chunk)} inputs")
            fresh = {k: [str(s) for s in res][:MAX_INFERENCES] for (k, _), res in zip(chunk, results)}
            self.computed += len(fresh)
            if cache is not None:
                cache.put_many(fresh.items(), namespace=f"knowledge:{self.name}")
            found.update(fresh)
            if self.progress is not None:
                self.progress(min(start + step, len(pending)), len(pending))
        return [tuple(found[k]) for k in keys]

    def infer_one(self, record: Record | KnowledgeInput, kind: str) -> tuple[str, ...]:
        return self.infer([record], kind)[0]

    def describe(self) -> str:
        return f"{self.name} ({json.dumps(self.fingerprint(), sort_keys=True, default=str)})"


class PrecomputedProvider(KnowledgeProvider):
    """The inferences shipped with the benchmark (``data/{idiom,simile}_inferences_{kind}/``).

    A record loaded from the benchmark already carries them (the loader attaches them,
    line-aligned and checked); other records are looked up by (narrative, expression) in every
    shipped split. Narratives that are not in the benchmark raise :class:`KnowledgeError`: use the
    ``wordnet``, ``generative`` or ``comet`` provider for new text. Not cached (it is the data).
    """

    name = "precomputed"
    cached = False

    def __init__(self, data_dir: str | Path | None = None, cache: Any = False, *, ctx: RunContext | None = None) -> None:
        super().__init__(cache=False)
        self.data_dir = run_context(ctx, data_dir=data_dir).data_dir  # the run's data folder (or data_dir's), once
        self._index: dict[str, dict[tuple[str, str], tuple[str, ...]]] | None = None

    def fingerprint(self) -> dict[str, Any]:
        return {"provider": self.name, "version": self.VERSION}

    def _load_index(self) -> dict[str, dict[tuple[str, str], tuple[str, ...]]]:
        if self._index is None:
            root = self.data_dir
            index: dict[str, dict[tuple[str, str], tuple[str, ...]]] = {k: {} for k in INFERENCE_KINDS}
            for etype in TYPES:
                for split in SPLITS:
                    for kind in INFERENCE_KINDS:
                        path = inference_file(root, etype, split, kind)
                        if not path.is_file():
                            continue
                        for obj in read_jsonl(path):
                            expr = obj.get("idiom") if etype == "idiom" else obj.get("simile")
                            key = (collapse_spaces(obj.get("narrative", "")), collapse_spaces(expr or ""))
                            index[kind].setdefault(key, tuple(obj.get("inferences") or ()))
            if not any(index.values()):
                raise KnowledgeError(
                    f"no shipped inference files under {root}/fig_narrative/data (run `figlang data download fig_narrative`)"
                )
            self._index = index
        return self._index

    def infer(self, records: Sequence[Record | KnowledgeInput], kind: str) -> list[tuple[str, ...]]:
        self.check_kind(kind)
        out: list[tuple[str, ...]] = []
        for r in records:
            attached = getattr(r, "inferences", None) or {}
            if attached.get(kind):
                out.append(tuple(attached[kind]))
                continue
            inp = KnowledgeInput.from_record(r)
            found = self._load_index()[kind].get((collapse_spaces(inp.narrative), collapse_spaces(inp.expression or "")))
            if found is None:
                raise KnowledgeError(
                    f"no shipped {kind} inferences for record {getattr(r, 'id', '?')!r}: the precomputed provider only "
                    "knows the benchmark's narratives; use --provider wordnet, generative or comet for new text"
                )
            out.append(found)
        return out

    def compute(self, inputs: Sequence[KnowledgeInput], kind: str) -> list[list[str]]:
        return [list(x) for x in self.infer(inputs, kind)]
