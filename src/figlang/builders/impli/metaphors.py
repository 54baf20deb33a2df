"""Metaphor replacement pairs from Tsvetkov et al. (2014) adjective-noun and subject-verb-object metaphors."""

from __future__ import annotations

import re
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from figlang.core.errors import STRICT, DataError, LoadOptions
from figlang.data.impli import FILES as IMPLI_FILES, figurative_span, load_impli_file
from figlang.core.io import iter_tsv
from figlang.core.text import normalise_spacing, normalise_word
from figlang.lexicon.inflection import (
    VERB_TAGS,
    capitalize_first,
    indefinite_article,
    inflect_verb,
    lemma_keys,
    same_lemma,
    subject_features,
)
from figlang.builders.impli.filters import check_pair
from figlang.builders.impli.matching import token_keys
from figlang.builders.impli.nlp import Progress, load_nlp, no_progress, parse_texts
from figlang.builders.impli.outputs import PAIR_TYPES, BuildReport, BuildResult, GeneratedPair
from figlang.builders.impli.sentences import FIGURATIVE, IdiomSentence, clean_sentence, safe_source
from figlang.lexicon.wordnet import load_wordnet

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from spacy.language import Language
    from spacy.tokens import Doc


# --------------------------------------------------------------------------------------------
# Metaphor replacement (Tsvetkov et al. 2014 adjective-noun and subject-verb-object metaphors)
# --------------------------------------------------------------------------------------------

TSVETKOV_XLSX = "tsvetkov_metaphor/input/Datasets_ACL2014.xlsx"
TSVETKOV_SHEETS = {"SVO": "MET_SVO_EN.txt", "AN": "MET_AN_EN"}
_XLSX_NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


@dataclass(frozen=True)
class MetaphorItem:
    kind: str  # AN | SVO
    words: tuple[str, ...]  # (adjective, noun) or (subject, verb, object); "" when absent
    sentence: str
    origin: str  # file:sheet:row
    judges: tuple[int, ...] = ()

    @property
    def metaphor(self) -> str:
        return " ".join(w for w in self.words if w)

    @property
    def target(self) -> str:
        """The metaphorical word: the adjective (AN) or the verb (SVO)."""
        return self.words[0] if self.kind == "AN" else self.words[1]

    @property
    def context(self) -> tuple[str, ...]:
        return (self.words[1],) if self.kind == "AN" else tuple(w for w in (self.words[0], self.words[2]) if w)


def _col_index(ref: str) -> int:
    letters = re.match(r"[A-Z]+", ref)
    n = 0
    for ch in letters.group() if letters else "A":
        n = n * 26 + ord(ch) - 64
    return n - 1


def read_xlsx_sheet(path: str | Path, sheet: str) -> list[tuple[int, list[str]]]:
    """(row number, cell texts) of one sheet of an .xlsx file, with the standard library only.

    Shared strings, inline strings and numbers are read; empty cells are "" in their column.
    """
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise DataError("file not found", path, hint="run `figlang data download` or pass the file's location") from None
    except zipfile.BadZipFile:
        raise DataError("not an .xlsx file (not a zip archive)", path) from None
    with zf:
        names = set(zf.namelist())
        shared: list[str] = []
        if "xl/sharedStrings.xml" in names:
            root = ElementTree.fromstring(zf.read("xl/sharedStrings.xml"))
            for si in root.findall("m:si", _XLSX_NS):
                shared.append("".join(t.text or "" for t in si.iter(f"{{{_XLSX_NS['m']}}}t")))
        wb = ElementTree.fromstring(zf.read("xl/workbook.xml"))
        rels = ElementTree.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
        targets = {r.get("Id"): r.get("Target") for r in rels}
        sheets = {s.get("name"): targets.get(s.get(_REL_NS)) for s in wb.iter(f"{{{_XLSX_NS['m']}}}sheet")}
        target = sheets.get(sheet)
        if not target:
            raise DataError(f"no sheet {sheet!r} (sheets: {', '.join(k for k in sheets if k)})", path)
        target = target.lstrip("/")
        member = target if target.startswith("xl/") else f"xl/{target}"
        root = ElementTree.fromstring(zf.read(member))
    rows: list[tuple[int, list[str]]] = []
    for row in root.iter(f"{{{_XLSX_NS['m']}}}row"):
        cells: dict[int, str] = {}
        for c in row.findall("m:c", _XLSX_NS):
            kind = c.get("t")
            v = c.find("m:v", _XLSX_NS)
            if kind == "s" and v is not None and v.text is not None:
                text = shared[int(v.text)]
            elif kind == "inlineStr":
                text = "".join(t.text or "" for t in c.iter(f"{{{_XLSX_NS['m']}}}t"))
            else:
                text = v.text if v is not None and v.text is not None else ""
            cells[_col_index(c.get("r", "A"))] = text
        if cells:
            width = max(cells) + 1
            rows.append((int(row.get("r", len(rows) + 1)), [cells.get(i, "") for i in range(width)]))
    return rows


def read_tsvetkov_xlsx(path: str | Path, kinds: Sequence[str] = ("SVO", "AN")) -> list[MetaphorItem]:
    """The English metaphor test sets with sentences (sheets MET_SVO_EN.txt and MET_AN_EN)."""
    out: list[MetaphorItem] = []
    for kind in kinds:
        if kind not in TSVETKOV_SHEETS:
            raise ValueError(f"kind must be one of {', '.join(TSVETKOV_SHEETS)}, not {kind!r}")
        sheet = TSVETKOV_SHEETS[kind]
        rows = read_xlsx_sheet(path, sheet)
        if not rows:
            raise DataError(f"sheet {sheet!r} is empty", path)
        header = [h.strip().lower() for h in rows[0][1]]
        fields = ("adj", "noun") if kind == "AN" else ("subject", "verb", "object")
        missing = [f for f in (*fields, "sentence") if f not in header]
        if missing:
            raise DataError(f"sheet {sheet!r} lacks column(s) {', '.join(missing)} (header: {header})", path, rows[0][0])
        idx = {h: i for i, h in enumerate(header)}
        judges = [i for h, i in idx.items() if h.startswith("judge")]
        for number, cells in rows[1:]:
            sentence = _cell(cells, idx["sentence"])
            if not sentence:
                continue
            words = tuple("" if _cell(cells, idx[f]).startswith("*") else _cell(cells, idx[f]).lower() for f in fields)
            votes = tuple(int(float(cells[i])) for i in judges if i < len(cells) and re.fullmatch(r"\d+(\.0)?", cells[i].strip()))
            out.append(MetaphorItem(kind, words, clean_sentence(sentence), f"{path}:{sheet}:{number}", votes))
    return out


def _cell(cells: Sequence[str], i: int) -> str:
    """A row's cell ``i``, stripped ('' past the row's end)."""
    return cells[i].strip() if i < len(cells) else ""


def read_metaphor_replacements(path: str | Path, options: LoadOptions = STRICT) -> dict[str, str]:
    """``metaphor<TAB>literal`` lines: the metaphor as in the data ("bald assertion", "economy move
    direction") or its metaphorical word alone ("bald"); the literal word replaces that word."""
    out: dict[str, str] = {}
    first: dict[str, int] = {}
    for line, cols in iter_tsv(path, options):
        if len(cols) > 2 and any(c.strip() for c in cols[2:]):
            options.fail(DataError(f"expected 2 tab-separated columns, found {len(cols)}", path, line))
            continue
        key, literal = normalise_spacing(cols[0]), cols[1].strip()
        if not key or not literal:
            options.fail(DataError("empty metaphor or replacement", path, line))
            continue
        if key in out:
            options.fail(DataError(f"duplicate metaphor {key!r} (first at line {first[key]})", path, line))
            continue
        out[key], first[key] = literal, line
    return out


def _find_target(item: MetaphorItem, doc: Doc) -> int | None:
    target_keys = lemma_keys(item.target)
    keys = token_keys(doc)
    if item.kind == "SVO":
        hits = [t.i for t in doc if keys[t.i] & target_keys and t.pos_ in ("VERB", "AUX")]
        hits = hits or [t.i for t in doc if keys[t.i] & target_keys]
        return hits[0] if hits else None
    noun_keys = lemma_keys(item.words[1])
    for t in doc:
        if keys[t.i] & target_keys:
            if any(keys[j] & noun_keys for j in range(t.i + 1, min(t.i + 4, len(doc)))):
                return t.i
    hits = [t.i for t in doc if keys[t.i] & target_keys]
    return hits[0] if hits else None


def _literal_word(item: MetaphorItem, upos: str, replacements: dict[str, str], wn: Any) -> tuple[str | None, str]:
    """The literal word for the metaphorical one, and where it came from (the replacements file, or a WordNet synset)."""
    from figlang.builders.wordnet import literal_replacement

    literal = replacements.get(normalise_spacing(item.metaphor)) or replacements.get(item.target)
    how = "replacements file"
    if literal is None and wn is not None:
        subject, obj = (item.words[0] or None, item.words[2] or None) if item.kind == "SVO" else (None, None)
        choice = literal_replacement(item.target, upos, item.context, wn, subject=subject, obj=obj)
        if choice is not None:
            literal, how = choice.word.replace("_", " "), f"wordnet:{choice.synset}:{choice.relation}"
    return literal, how


def _realised(literal: str, tok: Any, upos: str) -> str:
    """The literal word in the replaced word's inflection (a verb's tense and agreement) and capitalisation."""
    if upos == "VERB":
        person, number = subject_features(tok)
        tag = tok.tag_ if tok.tag_ in VERB_TAGS else "VB"
        new = inflect_verb(literal, tag, person, number)
    else:
        new = literal
    return capitalize_first(new) if tok.text[:1].isupper() else new


def _prefix_with_article(doc: Any, i: int, new: str, upos: str, ops: list[str]) -> str:
    """The sentence before token ``i``, its "a"/"an" made to agree with an adjective's replacement (said in ``ops``)."""
    start_char = doc[i].idx
    prefix = doc.text[:start_char]
    j = i - 1
    while j >= 0 and doc[j].is_space:  # "a\xa0weak": spaCy makes the no-break space a token
        j -= 1
    if j >= 0 and normalise_word(doc[j].text) in ("a", "an") and upos == "ADJ":
        art = doc[j]
        want = indefinite_article(new)
        if normalise_word(art.text) != want:
            want = want.capitalize() if art.text[:1].isupper() else want
            prefix = doc.text[: art.idx] + want + doc.text[art.idx + len(art.text) : start_char]
            ops.append(f"article:{art.text}->{want}")
    return prefix


def build_metaphor_pairs(
    items: Sequence[MetaphorItem],
    nlp: Language | None = None,
    wordnet: WordNetCorpusReader | None = None,
    replacements: dict[str, str] | None = None,
    source: str = "tsvetkov",
    progress: Progress = no_progress,
) -> BuildResult:
    """Metaphor-replacement pairs: the metaphorical adjective/verb replaced by a literal word -> entailment.

    The literal word comes from ``replacements`` (keyed by the metaphor or the metaphorical word)
    when given, else from WordNet (:func:`figlang.builders.wordnet.literal_replacement`). It takes
    the replaced word's inflection, and a preceding "a"/"an" is made to agree.
    """
    nlp = nlp if nlp is not None else load_nlp()
    wn = wordnet
    if wn is None and not replacements:
        wn = load_wordnet()
    replacements = {normalise_spacing(k): v for k, v in (replacements or {}).items()}
    report = BuildReport(inputs=len(items))
    pairs: list[GeneratedPair] = []
    docs = parse_texts((i.sentence for i in items), nlp, progress, "parse sentences")
    seen: set[tuple[str, str]] = set()
    progress("build metaphors", 0, len(items))
    for n, item in enumerate(items, start=1):
        progress("build metaphors", n, len(items))
        doc = docs[item.sentence]
        as_sentence = IdiomSentence(item.origin, item.sentence, FIGURATIVE, item.metaphor, source, None, None)
        i = _find_target(item, doc)
        if i is None:
            report.skip("metaphor_not_found", as_sentence, metaphor=item.metaphor)
            continue
        tok = doc[i]
        upos = "ADJ" if item.kind == "AN" else "VERB"
        literal, how = _literal_word(item, upos, replacements, wn)
        if not literal:
            report.skip("no_literal_replacement", as_sentence, metaphor=item.metaphor)
            continue
        ops = [f"literal:{item.target}->{literal}({how})"]
        new = _realised(literal, tok, upos)
        start_char, end_char = tok.idx, tok.idx + len(tok.text)
        prefix = _prefix_with_article(doc, i, new, upos, ops)
        hyp = prefix + new + doc.text[end_char:]
        reasons = check_pair(doc.text, hyp, span=(start_char, end_char), matched=tok.text, replacement=new)
        if (doc.text, hyp) in seen and not reasons:
            reasons.append("duplicate_pair")
        case = {"premise": doc.text, "hypothesis": hyp, "metaphor": item.metaphor, "literal": literal, "origin": item.origin}
        if reasons:
            report.drop(reasons, case)
            continue
        seen.add((doc.text, hyp))
        label, figure = PAIR_TYPES["metaphor_replacement"]
        pairs.append(
            GeneratedPair(
                id=f"metaphor_replacement-{source}-{item.kind}-{n}",
                premise=doc.text,
                hypothesis=hyp,
                label=label,
                pair_type="metaphor_replacement",
                source=safe_source(source),
                figure_type=figure,
                expression=item.metaphor,
                definition=literal,
                realised=new,
                span=(start_char, end_char),
                matched=tok.text,
                ops=tuple(ops),
                sentence_id=item.origin,
                origin=item.origin,
            )
        )
        report.counts[f"metaphor_replacement/{safe_source(source)}/{label}"] += 1
    return BuildResult(pairs, report)


def compare_with_impli_metaphors(pairs: Sequence[GeneratedPair], data_dir: str | Path) -> dict[str, Any]:
    """How our metaphor pairs compare with IMPLI's ``metaphors/replacement_tsvetkov_e.tsv`` on the same premises:
    shared premises, exact hypothesis matches, and matches of the replacement word's lemma."""
    spec = next(f for f in IMPLI_FILES if f.path == "metaphors/replacement_tsvetkov_e.tsv")
    gold: dict[str, set[str]] = defaultdict(set)
    for r in load_impli_file(spec, Path(data_dir), STRICT):
        gold[normalise_spacing(r.premise)].add(r.hypothesis)
    shared = exact = same_word = 0
    rows = []
    for p in pairs:
        golds = gold.get(normalise_spacing(p.premise))
        if not golds:
            continue
        shared += 1
        hit = p.hypothesis in golds
        exact += hit
        words = {figurative_span(p.premise, g)[1].lower() for g in golds}
        word_hit = any(same_lemma(p.realised, w) or p.realised.lower() == w for w in words)
        same_word += word_hit or hit
        rows.append(
            {"premise": p.premise, "generated": p.hypothesis, "impli": sorted(golds), "ours": p.realised, "impli_words": sorted(words)}
        )
    return {
        "impli_pairs": sum(len(v) for v in gold.values()),
        "shared_premises": shared,
        "exact": exact,
        "same_replacement_word": same_word,
        "rows": rows,
    }
