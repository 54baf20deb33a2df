"""Finding idioms, similes and metaphor candidates in running text, with the narrative miner's parts.

Nothing here matches on its own: idioms go through the miner's inflection- and gap-aware
:class:`~figlang.lexicon.matcher.IdiomMatcher` (compiled by the miner's
:class:`~figlang.builders.narratives.MinerPipeline` over the assembled lexicon), similes through
the miner's :func:`~figlang.lexicon.similes.find_similes` (explicit "as ADJ as NP", "ADJ as NP",
"ADJ like NP", and the implicit "VERB like NP"), and the same cheap pre-filters decide which
sentences are tagged and parsed at all.

Metaphor candidates are what the data offers: the adjective-noun and subject-verb-object
metaphor lists of Tsvetkov et al. (2014). An adjective modifying a noun (``amod``) is a candidate
when the (adjective, noun) lemma pair is on a metaphor list ("bald assertion"); a verb is one when
its lemma and its subject's or object's lemma match a listed triple ("the economy moved in a
direction"). Other metaphor kinds (nominal "X is a Y", novel pairs not on the lists, extended
metaphors) are not detected: docs/research/interpret.md says so.

Character offsets: the text is split into paragraphs at blank lines, paragraphs into sentences by
the miner's segmenter (spaCy's ``senter``), and each sentence is rebuilt from its non-space tokens
(line breaks inside a sentence become spaces, as in the miner), keeping each token's offset in
the original text so that every span points back into it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from figlang.lexicon.matcher import DET, FUNC, WORD, IdiomMatch, IdiomPattern, word_forms
from figlang.builders.narratives import MinerConfig, MinerPipeline
from figlang.lexicon.similes import SimileHit, find_similes, simile_prefilter
from figlang.core.io import read_text
from figlang.interpret.lexicon_all import AssembledLexicon

TSVETKOV = Path("tsvetkov_metaphor")
# Only the curated 100-pair test list: the 884-pair training list mixes in conventional and literal pairs
# ("broken promise", "bare feet", "bitter cold") that were reported as metaphor candidates (issue #37).
AN_LISTS = ((TSVETKOV / "input" / "an_mets.txt", "tsvetkov:an_test"),)
AN_TRAINING_LIST = (TSVETKOV / "resources" / "AdjN" / "training_adj_noun_met_en.txt", "tsvetkov:an_train")
SVO_LISTS = ((TSVETKOV / "input" / "svo_mets.txt", "tsvetkov:svo_test"),)
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t\r\f\v]*\n))+")


@dataclass(frozen=True)
class Sentence:
    """One sentence: its tokens without whitespace tokens, each with its offset in the original text."""

    index: int
    start: int  # offset in the original text
    end: int
    words: tuple[str, ...]
    spaces: tuple[bool, ...]
    offsets: tuple[int, ...]

    def text_in(self, original: str) -> str:
        return original[self.start : self.end]


@dataclass
class RawHit:
    """Something found in one sentence, before meanings and paraphrases."""

    type: str  # idiom | simile | metaphor
    sentence: Sentence
    doc: Any  # the tagged and parsed sentence (a spaCy Doc over ``sentence.words``)
    tok_start: int  # token span in doc
    tok_end: int
    start: int  # characters in the original text
    end: int
    idiom: IdiomMatch | None = None
    pattern: IdiomPattern | None = None
    simile: SimileHit | None = None
    metaphor: tuple[str, tuple[str, ...], str] | None = None  # (kind AN|SVO, listed words, list name)
    target: int | None = None  # metaphor: the metaphorical word's token in doc
    merged: list[RawHit] = field(default_factory=list)  # an idiom found inside a simile's span
    alternatives: list[RawHit] = field(default_factory=list)  # other lexicon entries matched on the same words

    # The parts a hit of its type has, typed as set: an idiom's match and pattern, a simile's hit, a metaphor's listing.
    @property
    def idiom_match(self) -> IdiomMatch:
        return cast(IdiomMatch, self.idiom)

    @property
    def idiom_pattern(self) -> IdiomPattern:
        return cast(IdiomPattern, self.pattern)

    @property
    def simile_hit(self) -> SimileHit:
        return cast(SimileHit, self.simile)

    @property
    def metaphor_listing(self) -> tuple[str, tuple[str, ...], str]:
        return cast("tuple[str, tuple[str, ...], str]", self.metaphor)


@dataclass(frozen=True)
class MetaphorLists:
    an: dict[tuple[str, str], str]  # (adjective, noun) -> list name
    svo: dict[str, list[tuple[str, str, str]]]  # verb -> [(subject, object, list name)]; "" = any

    def forms(self) -> frozenset[str]:
        """Surface forms of every listed adjective and verb (the pre-filter's index)."""
        out: set[str] = set()
        for adj, _ in self.an:
            out |= word_forms(adj)[0]
        for verb in self.svo:
            out |= word_forms(verb)[0]
        return frozenset(out)


def _list_rows(data_dir: Path, lists: Sequence[tuple[str | Path, str]], width: int) -> Iterator[tuple[list[str], str]]:
    """The rows of ``width`` lower-cased words in each of ``lists`` (file under ``data_dir``, list name) that exists,
    with the list's name."""
    for rel, name in lists:
        path = data_dir / rel
        if not path.is_file():
            continue
        for line in read_text(path).splitlines():
            parts = line.strip().lower().split()
            if len(parts) == width:
                yield parts, name


def load_metaphor_lists(data_dir: str | Path) -> MetaphorLists:
    data_dir = Path(data_dir)
    an: dict[tuple[str, str], str] = {}
    svo: dict[str, list[tuple[str, str, str]]] = {}
    for parts, name in _list_rows(data_dir, AN_LISTS, 2):
        an.setdefault((parts[0], parts[1]), name)
    for parts, name in _list_rows(data_dir, SVO_LISTS, 3):
        s, v, o = ("" if p.startswith("*") else p for p in parts)
        if v and (s or o):
            svo.setdefault(v, []).append((s, o, name))
    return MetaphorLists(an, svo)


class Detector:
    """The miner's pipeline and matcher over one assembled lexicon, plus the metaphor lists."""

    def __init__(self, lexicon: AssembledLexicon, data_dir: str | Path, model: str | None = None, implicit_similes: bool = True):
        config = MinerConfig(implicit_like=implicit_similes) if model is None else MinerConfig(model=model, implicit_like=implicit_similes)
        self.lexicon = lexicon
        self.config = config
        self.pipeline = MinerPipeline(config, list(lexicon.lexicon.entries))
        self.nlp = self.pipeline.nlp
        self.matcher = self.pipeline.matcher
        self.metaphors = load_metaphor_lists(data_dir)
        self._metaphor_forms = self.metaphors.forms()

    # ------------------------------------------------------------------ segmentation
    def sentences(self, text: str) -> list[Sentence]:
        paragraphs = [(m.start(), m.group()) for m in _PARAGRAPH.finditer(text) if m.group().strip()]
        st = self.pipeline
        disabled = [n for n in self.nlp.pipe_names if n not in st.segment_components]
        out: list[Sentence] = []
        docs = self.nlp.pipe((p for _, p in paragraphs), disable=disabled, batch_size=self.config.batch_size)
        for (base, _), pdoc in zip(paragraphs, docs):
            for sent in pdoc.sents:
                toks = [t for t in sent if not t.is_space]
                if not toks:
                    continue
                offsets = tuple(base + t.idx for t in toks)
                ends = [o + len(t.text) for o, t in zip(offsets, toks)]
                spaces = tuple(ends[i] < offsets[i + 1] for i in range(len(toks) - 1)) + (False,)
                out.append(Sentence(len(out), offsets[0], ends[-1], tuple(t.text for t in toks), spaces, offsets))
        return out

    # ------------------------------------------------------------------ detection
    def detect(self, text: str, sentences: Sequence[Sentence] | None = None) -> tuple[list[Sentence], list[RawHit]]:
        """Every idiom, simile and metaphor candidate in ``text``, in text order."""
        from spacy.tokens import Doc

        sents = list(sentences) if sentences is not None else self.sentences(text)
        idiom_cands: dict[int, list[int]] = {}
        simile_cands: set[int] = set()
        metaphor_cands: set[int] = set()
        for s in sents:
            lowers = [w.lower() for w in s.words]
            if self.matcher is not None:
                c = self.matcher.candidates(lowers)
                if c:
                    idiom_cands[s.index] = c
            if simile_prefilter(lowers, bare_as=self.config.bare_as, implicit_like=self.config.implicit_like):
                simile_cands.add(s.index)
            if self._metaphor_forms.intersection(lowers):
                metaphor_cands.add(s.index)
        todo = sorted(set(idiom_cands) | simile_cands | metaphor_cands)
        vocab = self.nlp.vocab
        made = [Doc(vocab, words=list(sents[k].words), spaces=list(sents[k].spaces)) for k in todo]
        parsed = dict(zip(todo, self.pipeline.run(made, self.pipeline.parse_components))) if made else {}
        hits: list[RawHit] = []
        for k in todo:
            s, doc = sents[k], parsed[k]
            found: list[RawHit] = []
            if k in idiom_cands and self.matcher is not None:  # a candidate only where there is a matcher
                for m in self.matcher.match(doc, idiom_cands[k]):
                    if not plausible(self.matcher.patterns[m.pattern_index], m, doc):
                        continue
                    found.append(self._hit("idiom", s, doc, m.start, m.end, idiom=m, pattern=self.matcher.patterns[m.pattern_index]))
            if k in simile_cands:
                for h in find_similes(doc, bare_as=self.config.bare_as, implicit_like=self.config.implicit_like):
                    a, b = _char_to_tokens(doc, h.span)
                    found.append(self._hit("simile", s, doc, a, b, simile=h))
            if k in metaphor_cands:
                found.extend(self._metaphors(s, doc))
            hits.extend(_resolve(found))
        hits.sort(key=lambda h: (h.start, h.end))
        return sents, hits

    def _hit(self, kind: str, s: Sentence, doc, a: int, b: int, **kw) -> RawHit:
        start = s.offsets[a]
        end = s.offsets[b - 1] + len(doc[b - 1].text)
        return RawHit(kind, s, doc, a, b, start, end, **kw)

    def _metaphors(self, s: Sentence, doc) -> list[RawHit]:
        out: list[RawHit] = []
        for tok in doc:
            lemma = tok.lemma_.lower()
            if tok.dep_ == "amod" and tok.pos_ == "ADJ":
                noun = tok.head
                name = self.metaphors.an.get((lemma, noun.lemma_.lower())) or self.metaphors.an.get((tok.lower_, noun.lower_))
                if name and noun.i > tok.i:
                    out.append(
                        self._hit("metaphor", s, doc, tok.i, noun.i + 1, metaphor=("AN", (lemma, noun.lemma_.lower()), name), target=tok.i)
                    )
            elif tok.pos_ == "VERB" and lemma in self.metaphors.svo:
                subj = next((c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")), None)
                obj = next((c for c in tok.children if c.dep_ in ("dobj", "obj", "attr")), None)
                if obj is None:  # "moved in the direction": the object of a preposition
                    obj = next((g for c in tok.children if c.dep_ == "prep" for g in c.children if g.dep_ == "pobj"), None)
                sl = subj.lemma_.lower() if subj is not None else ""
                ol = obj.lemma_.lower() if obj is not None else ""
                for ls, lo, name in self.metaphors.svo[lemma]:
                    if (ls and ls == sl and (not lo or lo == ol)) or (lo and lo == ol and (not ls or ls == sl)):
                        args = [t.i for t in (subj, obj) if t is not None and t.lemma_.lower() in (ls, lo)]
                        a, b = min([tok.i, *args]), max([tok.i, *args]) + 1
                        out.append(self._hit("metaphor", s, doc, a, b, metaphor=("SVO", (ls, lemma, lo), name), target=tok.i))
                        break
        return out

    def prefilter_counts(self, sentences: Iterable[Sentence]) -> dict[str, int]:
        """How many sentences each pre-filter passes (for the speed benchmark's report)."""
        n = idioms = similes = metaphors = 0
        for s in sentences:
            n += 1
            lowers = [w.lower() for w in s.words]
            idioms += bool(self.matcher is not None and self.matcher.candidates(lowers))
            similes += simile_prefilter(lowers, bare_as=self.config.bare_as, implicit_like=self.config.implicit_like)
            metaphors += bool(self._metaphor_forms.intersection(lowers))
        return {"sentences": n, "idiom_candidates": idioms, "simile_candidates": similes, "metaphor_candidates": metaphors}


def plausible(pattern: IdiomPattern, match: IdiomMatch, doc) -> bool:
    """False for a match that skipped the idiom's inner article before a word the tagger reads as a verb:
    "have a go" on "had gone", "had to go" (the article is optional so that "a piece of cake" is found
    as "piece of cake"; before a verb form that option only makes false hits)."""
    elements, spans = pattern.elements, match.element_tokens
    for i, (el, span) in enumerate(zip(elements, spans)):
        if el.kind != DET or span is not None or i == 0:
            continue
        nxt = next((s for s in spans[i + 1 :] if s is not None), None)
        if nxt is not None and doc[nxt[0]].pos_ in ("VERB", "AUX"):
            return False
    return True


def _char_to_tokens(doc, span: tuple[int, int]) -> tuple[int, int]:
    a = next(t.i for t in doc if t.idx + len(t.text) > span[0])
    b = max(t.i for t in doc if t.idx < span[1]) + 1
    return a, b


def _overlap(a: RawHit, b: RawHit) -> bool:
    return a.tok_start < b.tok_end and b.tok_start < a.tok_end


def _resolve(found: list[RawHit]) -> list[RawHit]:
    """One hit per stretch of text: a lexicon idiom inside a simile enriches the simile (its meaning
    is the lexicon's); a metaphor candidate inside an idiom or simile is dropped."""
    similes = [h for h in found if h.type == "simile"]
    idioms: list[RawHit] = []
    for h in found:  # two spellings of one idiom ("rain cats and dogs", "rain cats and dog") on the same words: one hit
        if h.type != "idiom":
            continue
        same = next((i for i in idioms if (i.tok_start, i.tok_end) == (h.tok_start, h.tok_end)), None)
        if same is None:
            idioms.append(h)
        else:
            same.alternatives.append(h)
    out: list[RawHit] = []
    for h in similes:
        h.merged = [i for i in idioms if _overlap(h, i)]
        out.append(h)
    used = {id(i) for s in similes for i in s.merged}
    out.extend(i for i in idioms if id(i) not in used)
    out.extend(m for m in found if m.type == "metaphor" and not any(_overlap(m, o) for o in out))
    return out


def surface_exact(hit: RawHit) -> bool:
    """Did the idiom occur exactly as written in the lexicon (no inflection, no insertion, no slot)?"""
    if hit.idiom is None or hit.pattern is None:
        return False
    if hit.idiom.insertions or hit.idiom.slots:
        return False
    for el, span in zip(hit.pattern.elements, hit.idiom.element_tokens):
        if span is None or el.kind not in (WORD, FUNC):
            continue
        if hit.doc[span[0]].lower_ != el.text:
            return False
    return True
