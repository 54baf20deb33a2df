"""A lexicon derived from IMPLI's own pairs, and regenerating IMPLI with it (the generator's check)."""

from __future__ import annotations

import difflib
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from figlang.core.errors import STRICT, FiglangError, LoadOptions
from figlang.data.impli import _TOKEN as _IMPLI_TOKEN, FILES as IMPLI_FILES, ImpliFile, figurative_offsets, load_impli_file
from figlang.core.provenance import code_provenance, data_checksums, package_version, portable_path, write_result_files
from figlang.data.records import NLIPair
from figlang.core.text import normalise_spacing, normalise_word
from figlang.lexicon.inflection import REFLEXIVES, VERB_TAGS, lemma_keys, same_lemma
from figlang.builders.impli.filters import check_pair
from figlang.builders.impli.generator import Generator
from figlang.builders.impli.lexicon import ImpliLexicon, check_idiom_text
from figlang.builders.impli.matching import POSSESSIVES, ImpliIdiomMatch
from figlang.builders.impli.nlp import Progress, load_nlp, no_progress, parse_texts
from figlang.builders.impli.substitution import (
    DefinitionTemplate,
    TemplateCache,
    all_lemmas,
    is_verb_head,
    lemma_of_verb,
    reflexive_to_possessive,
)

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


# --------------------------------------------------------------------------------------------
# A lexicon from IMPLI's own pairs, and regenerating IMPLI with it
# --------------------------------------------------------------------------------------------


def diff_offsets(premise: str, hypothesis: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Character spans (premise, hypothesis) that differ: IMPLI's own rule (``figlang.data.impli.figurative_offsets``).

    Offsets rather than texts, so that the span can be looked up in a spaCy parse.
    """
    return figurative_offsets(premise, hypothesis)


@dataclass(frozen=True)
class DerivedPair:
    """One IMPLI pair read as (idiom -> definition) with both lemmatised to base forms."""

    source: str | None
    path: str
    line: int
    premise: str
    hypothesis: str
    span: tuple[int, int]  # premise characters the hypothesis replaced
    idiom: str  # base form ("lose one's temper")
    definition: str  # base form ("become angry")


@dataclass
class Derivation:
    lexicon: ImpliLexicon
    pairs: list[DerivedPair]
    problems: Counter[str]
    examples: dict[str, list[dict[str, Any]]]
    docs: dict[str, Doc]
    files: list[str]

    def summary(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "pairs": len(self.pairs),
            "idioms": len(self.lexicon),
            "definitions": self.lexicon.count(),
            "problems": dict(self.problems),
            "examples": self.examples,
        }


def _base_idiom(span: Any) -> tuple[str, set[str], set[str], bool]:
    """(base form, possessive words, reflexive words, verbal?) of an idiom occurrence."""
    head = next((t for t in span if is_verb_head(t, span.start, span.end)), None)
    poss: set[str] = set()
    refl: set[str] = set()
    parts: list[str] = []
    for k, t in enumerate(span):
        low = normalise_word(t.text)
        if head is not None and (t.i == head.i or (t.dep_ == "conj" and t.head.i == head.i and t.pos_ == "VERB" and t.tag_ in VERB_TAGS)):
            word = lemma_of_verb(t)
        elif t.tag_ == "PRP$" and low in POSSESSIVES:
            word = "one's"
            poss.add(low)
        elif low in REFLEXIVES:
            word = "oneself"
            refl.add(low)
        else:
            word = low
        parts.append(word + (t.whitespace_ if k < len(span) - 1 else ""))
    return " ".join("".join(parts).split()), poss, refl, head is not None


def _base_definition(template: DefinitionTemplate, verbal: bool, poss: set[str], refl: set[str], sentence_initial: bool) -> str:
    words = list(template.words)
    if verbal and template.verb_head is not None and template.verb_lemma:
        words[template.verb_head] = template.verb_lemma
        for wi, lemma in template.verb_conj:
            words[wi] = lemma
    for wi, w in enumerate(words):
        low = normalise_word(w)
        if poss and low in poss and template.tags[wi] in ("PRP$", "PRP", ""):
            words[wi] = "one's"
        elif low in REFLEXIVES and (low in refl or (reflexive_to_possessive(low) or "") in poss):
            words[wi] = "oneself"
    if sentence_initial and words and words[0][:1].isupper() and words[0] != "I" and (all_lemmas(words[0].lower()) or len(words[0]) <= 3):
        words[0] = words[0][:1].lower() + words[0][1:]
    return " ".join("".join(w + s for w, s in zip(words, template.spaces)).split())


def _starts_sentence(text: str, at: int) -> bool:
    return not re.search(r"\w", text[:at])


def derive_lexicon(
    data_dir: str | Path,
    pair_types: Sequence[str] = ("fig_context",),
    sources: Sequence[str] | None = None,
    nlp: Language | None = None,
    progress: Progress = no_progress,
    options: LoadOptions = STRICT,
    kind: str = "definition",
) -> Derivation:
    """An idiom lexicon (base form -> base-form definitions) read off IMPLI's pairs.

    For each pair the idiom is the premise span the hypothesis replaced and the definition what
    replaced it (``diff_offsets``, IMPLI's common-prefix/suffix rule). The idiom's head verb (and
    verbs conjoined to it) becomes its spaCy lemma, possessive determiners become ``one's`` and
    reflexives ``oneself``; in the definition the head verb becomes its lemma (only when the
    idiom is verbal), the idiom's possessive/reflexive words become the same slots, and a capital
    the definition had only for starting the sentence is lowered.
    """
    nlp = nlp if nlp is not None else load_nlp()
    specs = [f for f in IMPLI_FILES if f.pair_type in pair_types and (not sources or f.source in sources)]
    if not specs:
        raise FiglangError(f"no IMPLI files for pair types {list(pair_types)} and sources {list(sources or [])}")
    records: list[tuple[ImpliFile, NLIPair]] = []
    for spec in specs:
        records.extend((spec, r) for r in load_impli_file(spec, Path(data_dir), options))
    docs = parse_texts((r.premise for _, r in records), nlp, progress, "parse premises")
    templates = TemplateCache(nlp)
    offsets = {}
    for _, r in records:
        offsets[(r.premise, r.hypothesis)] = diff_offsets(r.premise, r.hypothesis)
    templates.prepare(
        (r.hypothesis[hs:he] for _, r in records for (_, (hs, he)) in [offsets[(r.premise, r.hypothesis)]] if he > hs),
        progress,
        "parse definitions",
    )
    lexicon = ImpliLexicon()
    pairs: list[DerivedPair] = []
    problems: Counter[str] = Counter()
    examples: dict[str, list[dict[str, Any]]] = {}

    def problem(why: str, r: NLIPair) -> None:
        problems[why] += 1
        cases = examples.setdefault(why, [])
        if len(cases) < 5:
            cases.append({"premise": r.premise, "hypothesis": r.hypothesis, "origin": f"{r.meta['file']}:{r.meta['line']}"})

    total = len(records)
    progress("derive lexicon", 0, total)
    for n, (spec, r) in enumerate(records, start=1):
        if n % 500 == 0 or n == total:
            progress("derive lexicon", n, total)
        (ps, pe), (hs, he) = offsets[(r.premise, r.hypothesis)]
        if pe <= ps:
            problem("nothing_replaced" if he <= hs else "insertion_only", r)
            continue
        if he <= hs:
            problem("deletion_only", r)
            continue
        doc = docs[r.premise]
        span = doc.char_span(ps, pe, alignment_mode="expand")
        if span is None or len(span) == 0:
            problem("span_not_aligned", r)
            continue
        idiom, poss, refl, verbal = _base_idiom(span)
        if check_idiom_text(idiom, Path(r.meta["file"]), r.meta["line"]):
            problem("idiom_without_words", r)
            continue
        template = templates(r.hypothesis[hs:he])
        definition = _base_definition(template, verbal, poss, refl, _starts_sentence(r.hypothesis, hs))
        if normalise_spacing(definition) == normalise_spacing(idiom):
            problem("definition_equals_idiom", r)
            continue
        lexicon.add(idiom, definition, kind, r.meta["file"], r.meta["line"])
        pairs.append(DerivedPair(spec.source, r.meta["file"], r.meta["line"], r.premise, r.hypothesis, (ps, pe), idiom, definition))
    return Derivation(lexicon, pairs, problems, examples, docs, [str(Path(data_dir) / "impli" / s.path) for s in specs])


def _impli_relative(path: str | Path) -> str:
    """An IMPLI file's path from the dataset's own ``impli/`` folder on ("impli/idioms/fig_context_pie_e.tsv"): no machine paths in records."""
    parts = Path(path).parts
    at = max((i for i, p in enumerate(parts) if p == "impli"), default=None)
    return "/".join(parts[at:]) if at is not None else Path(path).name


MISMATCH_CATEGORIES = ("inflection", "slot_filling", "span_detection", "capitalisation", "other")


def _tokens(text: str) -> list[str]:
    return [m.group().lower() for m in _IMPLI_TOKEN.finditer(text)]


def _naive_forms(word: str) -> set[str]:
    """Regular-rule forms of a verb's lemmas, right or wrong ("lose" -> "losed"): IMPLI has some."""
    out: set[str] = set()
    for lemma in lemma_keys(word):
        stem = lemma[:-1] if lemma.endswith("e") else lemma
        out |= {lemma + "s", lemma + "es", lemma + "ed", lemma + "d", stem + "ed", lemma + "ing", stem + "ing"}
    return out


def _inflection_pair(a: str, b: str) -> bool:
    return same_lemma(a, b) or b in _naive_forms(a) or a in _naive_forms(b)


def categorize_mismatch(premise: str, generated: str | None, gold: Sequence[str], has_slot: bool) -> tuple[str, str]:
    """(category, closest gold hypothesis) for a generated hypothesis that is not among IMPLI's.

    capitalisation: equal up to case; inflection: every differing word is another form of the
    same lemma ("elicits"/"elicit", "have been"/"have was", also IMPLI's regular-rule non-words
    "losed"/"lost"); slot_filling: the definition has a slot and the difference involves a
    possessive/reflexive/slot word; span_detection: nothing generated (the idiom was not found)
    or another part of the premise was replaced; other: anything else (spacing, tokenisation...).
    """
    if generated is None:
        return "span_detection", gold[0]
    best = max(gold, key=lambda g: difflib.SequenceMatcher(None, g, generated).ratio())
    if generated.lower() == best.lower():
        return "capitalisation", best
    a, b = _tokens(generated), _tokens(best)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if ops and all(
        tag == "replace" and i2 - i1 == j2 - j1 and all(_inflection_pair(x, y) for x, y in zip(a[i1:i2], b[j1:j2]))
        for tag, i1, i2, j1, j2 in ops
    ):
        return "inflection", best
    slot_words = POSSESSIVES | REFLEXIVES | {"one", "'s", "someone", "something", "somebody", "oneself"}
    changed = [w for _tag, i1, i2, j1, j2 in ops for w in a[i1:i2] + b[j1:j2]]
    if has_slot and changed and any(w in slot_words for w in changed):
        return "slot_filling", best
    if diff_offsets(premise, generated)[0] != diff_offsets(premise, best)[0]:
        return "span_detection", best
    return "other", best


@dataclass
class SourceScore:
    items: int = 0  # distinct (premise, definition) pairs scored
    exact: int = 0
    exact_ignoring_case: int = 0
    generated: int = 0  # items for which the generator produced a hypothesis
    filtered: int = 0  # exact matches our post-processing filters would drop
    categories: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.exact / self.items if self.items else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "exact": self.exact,
            "exact_rate": round(self.rate, 4) if self.items else None,
            "exact_ignoring_case": self.exact_ignoring_case,
            "exact_ignoring_case_rate": round(self.exact_ignoring_case / self.items, 4) if self.items else None,
            "generated": self.generated,
            "not_generated": self.items - self.generated,  # the idiom was not found in the premise
            "exact_but_filtered": self.filtered,
            "mismatches": {c: self.categories.get(c, 0) for c in MISMATCH_CATEGORIES},
        }


@dataclass
class RegenerationResult:
    per_source: dict[str, SourceScore]
    overall: SourceScore
    examples: dict[str, list[dict[str, Any]]]
    lexicon: ImpliLexicon
    derivation: dict[str, Any]
    sample: int | None
    seed: int
    population: int  # distinct (premise, definition) items before sampling
    lines: int  # IMPLI lines those items cover
    items: list[dict[str, Any]] = field(default_factory=list)  # one row per scored item
    filter_reasons_on_exact: Counter[str] = field(default_factory=Counter)
    options: dict[str, Any] = field(default_factory=dict)  # sources, capitalise, spaCy pipeline

    def to_dict(self, with_items: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "options": self.options,
            "sample": self.sample,
            "seed": self.seed,
            "population_items": self.population,
            "lines_covered": self.lines,
            "overall": self.overall.to_dict(),
            "per_source": {k: v.to_dict() for k, v in self.per_source.items()},
            "filter_reasons_on_exact_matches": dict(self.filter_reasons_on_exact),
            "examples": self.examples,
            "lexicon": {"idioms": len(self.lexicon), "definitions": self.lexicon.count()},
            "derivation": self.derivation,
        }
        if with_items:
            d["items"] = self.items
        return d


@dataclass
class _Tally:
    """The scores of regenerated items, per source and overall, with examples of each kind of mismatch."""

    per_source: dict[str, SourceScore]
    max_examples: int
    overall: SourceScore = field(default_factory=SourceScore)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {c: [] for c in MISMATCH_CATEGORIES})
    filter_reasons: Counter[str] = field(default_factory=Counter)

    def add(self, row: dict[str, Any], exact: bool, reasons: list[str], has_slots: bool) -> None:
        """Count an item (its ``row``, which gets its category); ``exact``: the generated hypothesis is one of IMPLI's."""
        hyp, source = row["generated"], row["source"]
        scores = (self.per_source.setdefault(source, SourceScore()), self.overall)
        for s in scores:
            s.items += 1
            s.generated += hyp is not None
        if hyp is not None and exact:
            for s in scores:
                s.exact += 1
                s.exact_ignoring_case += 1
                s.filtered += bool(reasons)
            self.filter_reasons.update(reasons)
            row["category"] = "exact"
            if reasons:
                row["filter_reasons"] = reasons
            return
        category, closest = categorize_mismatch(row["premise"], hyp, row["gold"], has_slots)
        for s in scores:
            s.categories[category] += 1
            s.exact_ignoring_case += category == "capitalisation"
        row["category"] = category
        if len(self.examples[category]) < self.max_examples:
            self.examples[category].append(
                {"premise": row["premise"], "impli": closest, "generated": hyp, "definition": row["definition"], "source": source}
            )


def _gold_items(derivation: Any) -> tuple[dict[tuple[str, str, str], set[str]], Counter, dict[tuple[str, str, str], list[str]]]:
    """IMPLI's items, (source, premise, base-form definition): their hypotheses, their line counts, where they stand."""
    gold: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    lines: Counter[tuple[str, str, str]] = Counter()
    origins: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for d in derivation.pairs:
        key = (d.source or "", d.premise, normalise_spacing(d.definition))
        gold[key].add(d.hypothesis)
        lines[key] += 1
        origins[key].append(f"{_impli_relative(d.path)}:{d.line}")
    return gold, lines, origins


def _best_matches(
    gen: Generator, lexicon: Any, premises: list[str], progress: Progress
) -> dict[str, dict[str, tuple[ImpliIdiomMatch, str]]]:
    """Per premise, per definition (spacing-normalised): the longest lexicon idiom occurrence it realises, and the
    definition's text (ties: the earlier occurrence)."""
    candidates: dict[str, dict[str, tuple[ImpliIdiomMatch, str]]] = {}
    progress("generate", 0, len(premises))
    for n, premise in enumerate(premises, start=1):
        doc = gen.doc(premise)
        best: dict[str, tuple[ImpliIdiomMatch, str]] = {}
        for m in gen.matcher.find(doc):
            for d in lexicon.entries[m.key].definitions:
                dk = normalise_spacing(d.text)
                old = best.get(dk)
                if old is None or (m.end_char - m.start_char, -m.start_char) > (old[0].end_char - old[0].start_char, -old[0].start_char):
                    best[dk] = (m, d.text)
        candidates[premise] = best
        if n % 100 == 0 or n == len(premises):
            progress("generate", n, len(premises))
    return candidates


def _generated(gen: Generator, premise: str, hit: tuple[ImpliIdiomMatch, str] | None) -> tuple[str | None, list[str]]:
    """The premise with the idiom replaced by its realised definition, and the pair checks it fails (None: no idiom)."""
    if hit is None:
        return None, []
    m, dtext = hit
    r = gen.realise(dtext, m, gen.doc(premise))
    hyp = premise[: m.start_char] + r.text + premise[m.end_char :]
    return hyp, check_pair(premise, hyp, span=(m.start_char, m.end_char), matched=m.text, replacement=r.text, unfilled=r.unfilled)


def regenerate_impli(
    data_dir: str | Path,
    sources: Sequence[str] = ("magpie", "pie", "semeval"),
    sample: int | None = None,
    seed: int = 13,
    nlp: Language | None = None,
    progress: Progress = no_progress,
    max_examples: int = 5,
    capitalise: bool = True,
) -> RegenerationResult:
    """Regenerate IMPLI's figurative-context entailment pairs and count exact matches.

    1. derive a lexicon from all ``idioms/fig_context_<source>_e.tsv`` pairs (:func:`derive_lexicon`);
    2. the items are the distinct (source, premise, base-form definition) triples; each has the
       set of IMPLI hypotheses written for that premise with that definition; ``sample`` draws a
       fixed random subset (``random.Random(seed)``);
    3. the generator sees only each premise and the lexicon: it finds every lexicon idiom in the
       premise and realises every definition of each; for one definition the longest occurrence
       wins;
    4. an item is an exact match when the generated hypothesis is one of IMPLI's for it;
       mismatches are put in :data:`MISMATCH_CATEGORIES` (:func:`categorize_mismatch`).
       ``capitalise=False`` leaves sentence-initial definitions in lower case, as IMPLI mostly did.

    The lexicon comes from the very pairs being regenerated, so this measures finding, inflecting
    and slot-filling, not whether the lexicon generalises to unseen idioms.
    """
    nlp = nlp if nlp is not None else load_nlp()
    derivation = derive_lexicon(data_dir, ("fig_context",), sources, nlp, progress)
    gold, lines, origins = _gold_items(derivation)
    keys = sorted(gold)
    population = len(keys)
    if sample is not None and sample < len(keys):
        keys = sorted(random.Random(seed).sample(keys, sample))
    gen = Generator(derivation.lexicon, nlp, capitalise=capitalise)
    gen._docs.update(derivation.docs)  # same texts, same pipeline: reuse the parses
    defs_by_key = {normalise_spacing(d.text): d.text for e in derivation.lexicon.entries.values() for d in e.definitions}
    gen.templates.prepare(defs_by_key.values(), progress, "parse definitions")
    tally = _Tally({s: SourceScore() for s in sources}, max_examples)
    items: list[dict[str, Any]] = []
    candidates = _best_matches(gen, derivation.lexicon, list(dict.fromkeys(k[1] for k in keys)), progress)
    for key in keys:
        source, premise, dkey = key
        hyp, reasons = _generated(gen, premise, candidates[premise].get(dkey))
        row: dict[str, Any] = {
            "source": source,
            "premise": premise,
            "definition": defs_by_key[dkey],
            "gold": sorted(gold[key]),
            "generated": hyp,
            "lines": lines[key],
            "origins": origins[key],
        }
        tally.add(row, hyp in gold[key], reasons, any(gen.templates(defs_by_key[dkey]).slots))
        items.append(row)
    per_source, overall, examples, filter_reasons = tally.per_source, tally.overall, tally.examples, tally.filter_reasons
    return RegenerationResult(
        {k: v for k, v in per_source.items() if v.items},
        overall,
        examples,
        derivation.lexicon,
        derivation.summary(),
        sample,
        seed,
        population,
        sum(lines[k] for k in keys),
        items,
        filter_reasons,
        {
            "sources": list(sources),
            "capitalise": capitalise,
            "spacy_pipeline": f"{nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')}",
            "spacy_pipeline_version": nlp.meta.get("version"),
            "spacy_version": package_version("spacy"),
        },
    )


# --------------------------------------------------------------------------------------------
# The regeneration check as a committed result file (docs/research/impli_generator.md quotes it)
# --------------------------------------------------------------------------------------------


def regeneration_records(res: RegenerationResult) -> list[dict[str, Any]]:
    """One compact record per scored item, the per-item file of a result folder: source, the IMPLI lines it covers
    (``origins``, file:line), premise, base-form definition, the generated hypothesis (None: idiom not found), the
    category (``exact`` or a mismatch category) and, for a mismatch, IMPLI's hypotheses for the item (an exact match
    is one of them, so they are left out); an exact match our filters would drop has its ``filter_reasons``."""
    out = []
    for row in res.items:
        rec = {
            "source": row["source"],
            "origins": row["origins"],
            "premise": row["premise"],
            "definition": row["definition"],
            "generated": row["generated"],
            "category": row["category"],
        }
        if row["category"] != "exact":
            rec["gold"] = row["gold"]
        if row.get("filter_reasons"):
            rec["filter_reasons"] = row["filter_reasons"]
        out.append(rec)
    return out


def regeneration_results(res: RegenerationResult, data_dir: str | Path, command: str | None = None) -> dict[str, Any]:
    """The result file of a regeneration check: its figures (:meth:`RegenerationResult.to_dict`) plus exact-match and
    ignoring-case percentages unrounded, the command, the IMPLI files' checksums, figlang's version and commit."""

    d = res.to_dict()
    for name, score in [*res.per_source.items(), ("overall", res.overall)]:
        block = d["overall"] if name == "overall" else d["per_source"][name]
        block["exact_percent"] = 100 * score.exact / score.items if score.items else None
        block["exact_ignoring_case_percent"] = 100 * score.exact_ignoring_case / score.items if score.items else None
    files = [Path(f) for f in res.derivation["files"]]
    examples = {
        why: [{**c, "origin": _impli_relative(c["origin"].rsplit(":", 1)[0]) + ":" + c["origin"].rsplit(":", 1)[1]} for c in cases]
        for why, cases in d["derivation"]["examples"].items()
    }
    d["derivation"] = {**d["derivation"], "files": [_impli_relative(f) for f in files], "examples": examples}
    return {
        "format": "figlang.impli.regeneration/1",
        "what": "IMPLI's fig_context pairs regenerated from their premises and a lexicon derived from them (docs/research/impli_generator.md)",
        "command": command,
        **d,
        "items_file": "predictions.jsonl.gz: one record per (source, premise, definition) item (regeneration_records)",
        "data": {"data_dir": portable_path(data_dir), "files": data_checksums(files, Path(data_dir))},
        "code": code_provenance(),
    }


def write_regeneration_results(
    res: RegenerationResult, out_dir: str | Path, data_dir: str | Path, command: str | None = None
) -> tuple[Path, Path]:
    """Write ``out_dir/regeneration.json`` (:func:`regeneration_results`) and ``out_dir/predictions.jsonl.gz``
    (:func:`regeneration_records`)."""

    return write_result_files(out_dir, "regeneration.json", regeneration_results(res, data_dir, command), regeneration_records(res))
