"""The IMPLI pair generator (Stowe, Utama, Gurevych, ACL 2022, section 3).

IMPLI builds NLI pairs from sentences that contain an idiom, by replacing the idiom:

* **silver pairs by substitution**: the idiom replaced by a definition that fits its syntactic
  slot. In a figurative context the result is entailed (``fig_context``, entailment); in a
  literal context it is not (``lit_context``, non-entailment);
* **adversarial definitions**: a wrong-but-plausible definition in a figurative context
  (``adversarial_definition``, non-entailment);
* **antonyms**: a definition whose key word is replaced by a WordNet antonym
  (``antonym``, non-entailment);
* **metaphor replacement**: the metaphorical word of an adjective-noun or subject-verb-object
  metaphor (Tsvetkov et al. 2014) replaced by a literal word (``metaphor_replacement``,
  entailment).

How a substitution is made (:class:`Generator`, :mod:`.generator`):

1. the sentence is parsed with spaCy and the idiom's occurrence found by lemma
   (:class:`ImpliIdiomMatcher`): "kick the bucket" matches "kicked the bucket", "lose one's temper"
   matches "lost her temper" (``one's`` is a possessive slot), "give someone the cold shoulder"
   matches "gave him the cold shoulder" (``someone``/``something`` are noun-phrase slots),
   ``a``/``an``/``the`` match any determiner, hyphens are optional ("behind-the-scenes");
2. the definition takes the occurrence's inflection (:func:`realise`): the definition's head
   verb gets the tag of the idiom's head verb (lemminflect; "be" by the subject's person and
   number), a noun-headed definition the number of the idiom's head noun, slots are filled from
   the occurrence ("lose one's composure" -> "lose her composure", "oneself" -> "herself"), and
   a sentence-initial capital is kept;
3. post-processing filters drop pairs whose span did not really match, that did not change,
   that doubled a word at the seams, lost the sentence's final punctuation or kept an unfilled
   slot; every drop is counted with its reason in the :class:`BuildReport`.

Outputs (:func:`write_outputs`) use IMPLI's own TSV layout (``premise<TAB>hypothesis``, label in
the file name) under ``<out>/impli/idioms`` and ``<out>/impli/metaphors``, so ``<out>`` is a
data directory for figlang's IMPLI loader (:func:`load_generated`), plus JSONL with provenance
under ``<out>/jsonl`` and ``<out>/report.json``.

:func:`regenerate_impli` is the check of all this against IMPLI itself: derive an idiom lexicon
from IMPLI's figurative-context pairs, give the generator only each premise and the lexicon,
and count how many of its hypotheses are exactly IMPLI's.

The package, one module per job: :mod:`.nlp` (spaCy), :mod:`.lexicon` (idioms and definitions),
:mod:`.sentences` (the input), :mod:`.matching` (finding the idiom), :mod:`.substitution`
(templates and realisation), :mod:`.filters` (post-processing), :mod:`.outputs` (pairs, report,
files), :mod:`.generator` (substitution, adversarial definitions, antonyms), :mod:`.regenerate`
(the check against IMPLI) and :mod:`.metaphors` (Tsvetkov metaphor replacement). Everything
public is importable from ``figlang.builders.impli``.
"""

from __future__ import annotations

from figlang.builders.impli.filters import FILTER_REASONS, SKIP_REASONS, check_pair
from figlang.builders.impli.generator import Generator
from figlang.builders.impli.lexicon import ImpliLexicon, ImpliLexiconEntry, read_lexicon, write_lexicon
from figlang.builders.impli.matching import ImpliIdiomMatch, ImpliIdiomMatcher, compile_pattern, resolve_overlaps
from figlang.builders.impli.metaphors import (
    TSVETKOV_XLSX,
    MetaphorItem,
    build_metaphor_pairs,
    compare_with_impli_metaphors,
    read_metaphor_replacements,
    read_tsvetkov_xlsx,
    read_xlsx_sheet,
)
from figlang.builders.impli.nlp import DEFAULT_MODEL, Progress, load_nlp, parse_texts
from figlang.builders.impli.outputs import (
    GENERATOR_VERSION,
    PAIR_TYPES,
    BuildReport,
    BuildResult,
    GeneratedPair,
    generated_files,
    load_generated,
    output_name,
    write_outputs,
)
from figlang.builders.impli.regenerate import (
    MISMATCH_CATEGORIES,
    Derivation,
    DerivedPair,
    RegenerationResult,
    categorize_mismatch,
    derive_lexicon,
    diff_offsets,
    regenerate_impli,
    regeneration_records,
    regeneration_results,
    write_regeneration_results,
)
from figlang.builders.impli.sentences import FIGURATIVE, LITERAL, IdiomSentence, read_sentences, sentences_from_impli, write_sentences
from figlang.builders.impli.substitution import DefinitionTemplate, TemplateCache, realise

__all__ = [
    "DEFAULT_MODEL",
    "FIGURATIVE",
    "FILTER_REASONS",
    "GENERATOR_VERSION",
    "LITERAL",
    "MISMATCH_CATEGORIES",
    "PAIR_TYPES",
    "SKIP_REASONS",
    "TSVETKOV_XLSX",
    "BuildReport",
    "BuildResult",
    "DefinitionTemplate",
    "Derivation",
    "DerivedPair",
    "GeneratedPair",
    "Generator",
    "IdiomSentence",
    "ImpliIdiomMatch",
    "ImpliIdiomMatcher",
    "ImpliLexicon",
    "ImpliLexiconEntry",
    "MetaphorItem",
    "Progress",
    "RegenerationResult",
    "TemplateCache",
    "build_metaphor_pairs",
    "categorize_mismatch",
    "check_pair",
    "compare_with_impli_metaphors",
    "compile_pattern",
    "derive_lexicon",
    "diff_offsets",
    "generated_files",
    "load_generated",
    "load_nlp",
    "output_name",
    "parse_texts",
    "read_lexicon",
    "read_metaphor_replacements",
    "read_sentences",
    "read_tsvetkov_xlsx",
    "read_xlsx_sheet",
    "realise",
    "regenerate_impli",
    "regeneration_records",
    "regeneration_results",
    "resolve_overlaps",
    "sentences_from_impli",
    "write_lexicon",
    "write_outputs",
    "write_regeneration_results",
    "write_sentences",
]
