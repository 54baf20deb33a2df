"""The generator: silver pairs by substitution, adversarial definitions and antonyms (paper section 3)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from figlang.metrics.impli_analysis import ice_by_idiom
from figlang.builders.impli.filters import check_pair
from figlang.builders.impli.lexicon import ImpliLexicon
from figlang.builders.impli.matching import ImpliIdiomMatch, ImpliIdiomMatcher, resolve_overlaps
from figlang.builders.impli.nlp import DEFAULT_MODEL, Progress, load_nlp, no_progress, parse_texts
from figlang.builders.impli.outputs import PAIR_TYPES, BuildReport, BuildResult, GeneratedPair
from figlang.builders.impli.sentences import FIGURATIVE, IdiomSentence
from figlang.builders.impli.substitution import Realisation, TemplateCache, realise
from figlang.lexicon.wordnet import load_wordnet

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from spacy.language import Language
    from spacy.tokens import Doc


@dataclass(frozen=True)
class _Occurrence:
    expression: str
    premise: str


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


class Generator:
    """Builds IMPLI idiom pairs from labelled sentences and a lexicon.

    >>> gen = Generator(read_lexicon("lexicon.tsv"))                      # doctest: +SKIP
    >>> result = gen.substitute(read_sentences("sentences.tsv"))           # doctest: +SKIP
    >>> write_outputs(result, "out/")                                      # doctest: +SKIP
    """

    def __init__(self, lexicon: ImpliLexicon, nlp: Language | None = None, model: str = DEFAULT_MODEL, capitalise: bool = True):
        self.lexicon = lexicon
        self.nlp = nlp if nlp is not None else load_nlp(model)
        self.matcher = ImpliIdiomMatcher(lexicon, self.nlp)
        self.templates = TemplateCache(self.nlp)
        self.capitalise = capitalise
        self._docs: dict[str, Doc] = {}

    # -- parsing and matching ---------------------------------------------------------------

    def parse(self, texts: Iterable[str], progress: Progress = no_progress) -> dict[str, Doc]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._docs]
        if todo:
            self._docs.update(parse_texts(todo, self.nlp, progress, "parse sentences"))
        return self._docs

    def doc(self, text: str) -> Doc:
        d = self._docs.get(text)
        if d is None:
            d = self._docs[text] = self.nlp(text)
        return d

    def matches_for(self, sentence: IdiomSentence, doc: Doc) -> tuple[list[ImpliIdiomMatch], str | None]:
        """The idiom occurrences to replace in one sentence, or a skip reason."""
        if sentence.idiom:
            if sentence.idiom not in self.lexicon:
                return [], "idiom_not_in_lexicon"
            found = self.matcher.find(doc, only=sentence.idiom)
            return (found[:1], None) if found else ([], "idiom_not_found")
        found = resolve_overlaps(self.matcher.find(doc))
        return (found, None) if found else ([], "idiom_not_found")

    def realise(self, definition: str, match: ImpliIdiomMatch, doc: Doc) -> Realisation:
        return realise(self.templates(definition), match, doc, self.matcher.patterns[match.key], capitalise=self.capitalise)

    # -- builders ---------------------------------------------------------------------------

    def substitute(self, sentences: Sequence[IdiomSentence], progress: Progress = no_progress) -> BuildResult:
        """Silver pairs: the idiom replaced by each definition; figurative -> entailment, literal -> non-entailment."""
        return self._build(sentences, "substitute", progress)

    def adversarial(self, sentences: Sequence[IdiomSentence], progress: Progress = no_progress) -> BuildResult:
        """Adversarial definitions in figurative contexts -> non-entailment."""
        return self._build(sentences, "adversarial", progress)

    def antonyms(
        self, sentences: Sequence[IdiomSentence], wordnet: WordNetCorpusReader | None = None, progress: Progress = no_progress
    ) -> BuildResult:
        """Definitions with a key word replaced by its WordNet antonym, in figurative contexts -> non-entailment."""
        from figlang.builders.wordnet import antonymize

        wn = wordnet if wordnet is not None else load_wordnet()
        cache: dict[str, tuple[str, tuple[tuple[str, str], ...]] | None] = {}

        def transform(text: str) -> tuple[str, tuple[str, ...]] | None:
            if text not in cache:
                cache[text] = antonymize(self.templates(text), wn)
            got = cache[text]
            if got is None:
                return None
            new_text, swaps = got
            return new_text, tuple(f"antonym:{a}->{b}" for a, b in swaps)

        return self._build(sentences, "antonym", progress, transform=transform)

    def _build(
        self,
        sentences: Sequence[IdiomSentence],
        mode: str,
        progress: Progress,
        transform: Callable[[str], tuple[str, tuple[str, ...]] | None] | None = None,
    ) -> BuildResult:
        report = BuildReport(inputs=len(sentences))
        pairs: list[GeneratedPair] = []
        seen: set[tuple[str, str, str]] = set()
        occurrences: list[_Occurrence] = []
        self.parse((s.sentence for s in sentences), progress)
        kind = "adversarial" if mode == "adversarial" else "definition"
        self.templates.prepare((d.text for e in self.lexicon.entries.values() for d in e.of_kind(kind)), progress, "parse definitions")
        total = len(sentences)
        progress(f"build {mode}", 0, total)
        for n, sentence in enumerate(sentences, start=1):
            if n % 50 == 0 or n == total:
                progress(f"build {mode}", n, total)
            if mode in ("adversarial", "antonym") and sentence.label != FIGURATIVE:
                report.skip("literal_context", sentence)
                continue
            doc = self.doc(sentence.sentence)
            matches, reason = self.matches_for(sentence, doc)
            if reason:
                report.skip(reason, sentence)
                continue
            for match in matches:
                entry = self.lexicon.entries[match.key]
                occurrences.append(_Occurrence(entry.idiom, sentence.sentence))
                definitions = entry.of_kind(kind)
                if not definitions:
                    report.skip("no_definition", sentence, idiom_matched=entry.idiom)
                    continue
                if mode == "substitute":
                    pair_type = "fig_context" if sentence.label == FIGURATIVE else "lit_context"
                else:
                    pair_type = "adversarial_definition" if mode == "adversarial" else "antonym"
                for k, definition in enumerate(definitions):
                    pair = self._pair(sentence, doc, match, entry, definition, k, pair_type, transform, seen, report)
                    if pair is not None:
                        pairs.append(pair)
                        report.counts[f"{pair_type}/{sentence.source}/{pair.label}"] += 1
        if occurrences:
            report.ice = ice_by_idiom(occurrences)
        return BuildResult(pairs, report)

    def _pair(
        self,
        sentence: IdiomSentence,
        doc: Any,
        match: Any,
        entry: Any,
        definition: Any,
        k: int,
        pair_type: str,
        transform: Callable[[str], tuple[str, tuple[str, ...]] | None] | None,
        seen: set[tuple[str, str, str]],
        report: BuildReport,
    ) -> GeneratedPair | None:
        """The pair made by replacing the matched idiom with its ``k``-th definition (transformed, realised in the
        sentence); None when it fails a check, is a duplicate or the transform has nothing (said in ``report``)."""
        text = definition.text
        extra_ops: tuple[str, ...] = ()
        if transform is not None:
            got = transform(definition.text)
            if got is None:
                report.skip("no_antonym", sentence, definition=definition.text)
                return None
            text, extra_ops = got
        r = self.realise(text, match, doc)
        hyp = doc.text[: match.start_char] + r.text + doc.text[match.end_char :]
        reasons = check_pair(
            doc.text, hyp, span=(match.start_char, match.end_char), matched=match.text, replacement=r.text, unfilled=r.unfilled
        )
        key = (doc.text, hyp, pair_type)
        if not reasons and key in seen:
            reasons.append("duplicate_pair")
        if reasons:
            case = {"premise": doc.text, "hypothesis": hyp, "idiom": entry.idiom, "definition": text, "origin": sentence.origin}
            report.drop(reasons, case)
            return None
        seen.add(key)
        label, figure = PAIR_TYPES[pair_type]
        return GeneratedPair(
            id=f"{pair_type}-{sentence.source}-{sentence.id}-{match.start}-{k}",
            premise=doc.text,
            hypothesis=hyp,
            label=label,
            pair_type=pair_type,
            source=sentence.source or "custom",
            figure_type=figure,
            expression=entry.idiom,
            definition=text,
            realised=r.text,
            span=(match.start_char, match.end_char),
            matched=match.text,
            ops=tuple(extra_ops) + r.ops,
            sentence_id=sentence.id,
            origin=sentence.origin,
            definition_origin=definition.origin,
        )
