"""Generated pairs, the build report, and their files in IMPLI's own TSV layout (plus JSONL provenance)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import STRICT, LoadOptions
from figlang.data.impli import ImpliFile, load_impli_file
from figlang.core.io import atomic_write, write_json, write_jsonl
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT, NLIPair
from figlang.builders.impli.filters import FILTER_REASONS, SKIP_REASONS
from figlang.builders.impli.sentences import IdiomSentence, one_line, safe_source


GENERATOR_VERSION = "figlang-impli-generator/1"


# pair type -> (label, figure type)
PAIR_TYPES: dict[str, tuple[str, str]] = {
    "fig_context": (ENTAILMENT, "idiom"),
    "lit_context": (NON_ENTAILMENT, "idiom"),
    "adversarial_definition": (NON_ENTAILMENT, "idiom"),
    "antonym": (NON_ENTAILMENT, "idiom"),
    "metaphor_replacement": (ENTAILMENT, "metaphor"),
}


# --------------------------------------------------------------------------------------------
# Generated pairs, the build report, outputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedPair:
    id: str
    premise: str
    hypothesis: str
    label: str
    pair_type: str
    source: str
    figure_type: str
    expression: str  # the idiom's base form, or the metaphor ("bald assertion")
    definition: str  # the lexicon definition / literal replacement used
    realised: str  # what went into the sentence
    span: tuple[int, int]  # character span of the premise that was replaced
    matched: str  # the premise's text of that span
    ops: tuple[str, ...] = ()
    sentence_id: str | None = None
    origin: str | None = None  # input file:line of the sentence
    definition_origin: str | None = None  # lexicon file:line of the definition

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["span"] = list(self.span)
        d["ops"] = list(self.ops)
        d["generator"] = GENERATOR_VERSION
        return d

    def to_record(self) -> NLIPair:
        return NLIPair(
            id=self.id,
            premise=self.premise,
            hypothesis=self.hypothesis,
            label=self.label,
            figure_type=self.figure_type,
            pair_type=self.pair_type,
            source=self.source,
            expression=self.expression,
            meta={"replacement": self.realised, "definition": self.definition, "span": list(self.span), "origin": self.origin},
        )


@dataclass
class BuildReport:
    """Counts of what was generated, what was filtered (with reasons) and what produced nothing."""

    inputs: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # "pair_type/source/label" -> pairs kept
    filtered: Counter[str] = field(default_factory=Counter)  # filter reason -> pairs dropped
    skipped: Counter[str] = field(default_factory=Counter)  # skip reason -> inputs that gave no pair
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # reason -> a few cases
    input_errors: list[str] = field(default_factory=list)  # lenient-load problems, located
    ice: dict[str, float] = field(default_factory=dict)  # idiom -> ICE score (figlang.metrics.impli_analysis)
    max_examples: int = 5

    def example(self, reason: str, case: dict[str, Any]) -> None:
        cases = self.examples.setdefault(reason, [])
        if len(cases) < self.max_examples:
            cases.append(case)

    def drop(self, reasons: list[str], case: dict[str, Any]) -> None:
        """Count a generated pair that a filter dropped, under each of its reasons, keeping a few cases."""
        for why in reasons:
            self.filtered[why] += 1
            self.example(why, case)

    def skip(self, reason: str, sentence: IdiomSentence, **extra: Any) -> None:
        self.skipped[reason] += 1
        self.example(reason, {"sentence": sentence.sentence, "idiom": sentence.idiom, "origin": sentence.origin, **extra})

    @property
    def kept(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "generator": GENERATOR_VERSION,
            "inputs": self.inputs,
            "pairs": self.kept,
            "counts": dict(sorted(self.counts.items())),
            "filtered": {k: {"count": v, "why": FILTER_REASONS.get(k, k)} for k, v in sorted(self.filtered.items())},
            "skipped_inputs": {k: {"count": v, "why": SKIP_REASONS.get(k, k)} for k, v in sorted(self.skipped.items())},
            "examples": self.examples,
            "input_errors": self.input_errors,
            "ice": dict(sorted(self.ice.items())),
        }


@dataclass
class BuildResult:
    pairs: list[GeneratedPair]
    report: BuildReport


def output_name(pair_type: str, source: str, label: str | None = None) -> str:
    """The pair file's path inside ``<out>/impli``, named as IMPLI names its files."""
    source = safe_source(source)
    names = {
        "fig_context": f"idioms/fig_context_{source}_e.tsv",
        "lit_context": f"idioms/lit_context_{source}_ne.tsv",
        "adversarial_definition": f"idioms/adversarial_definition_ne_{source}.tsv",
        "antonym": f"idioms/antonyms_{source}_ne.tsv",
        "metaphor_replacement": f"metaphors/replacement_{source}_e.tsv",
    }
    if pair_type not in names:
        raise ValueError(f"unknown pair type {pair_type!r} (known: {', '.join(names)})")
    return names[pair_type]


_NAME_PATTERNS = (
    (re.compile(r"^idioms/fig_context_(?P<src>[a-z0-9-]+)_e\.tsv$"), "fig_context"),
    (re.compile(r"^idioms/lit_context_(?P<src>[a-z0-9-]+)_ne\.tsv$"), "lit_context"),
    (re.compile(r"^idioms/adversarial_definition_ne_(?P<src>[a-z0-9-]+)\.tsv$"), "adversarial_definition"),
    (re.compile(r"^idioms/antonyms_(?P<src>[a-z0-9-]+)_ne\.tsv$"), "antonym"),
    (re.compile(r"^metaphors/replacement_(?P<src>[a-z0-9-]+)_e\.tsv$"), "metaphor_replacement"),
)


def generated_files(out_dir: str | Path) -> list[ImpliFile]:
    """ImpliFile specs (figlang's IMPLI loader) for the pair files under ``<out>/impli``."""
    root = Path(out_dir) / "impli"
    specs: list[ImpliFile] = []
    for path in sorted(root.glob("*/*.tsv")):
        rel = path.relative_to(root).as_posix()
        for pattern, pair_type in _NAME_PATTERNS:
            m = pattern.match(rel)
            if m:
                label, figure = PAIR_TYPES[pair_type]
                specs.append(ImpliFile(rel, figure, pair_type, m.group("src"), label))
                break
    return specs


def load_generated(out_dir: str | Path, options: LoadOptions = STRICT) -> list[NLIPair]:
    """Read generated pair files back with figlang's IMPLI loader (``<out>`` is its data directory)."""
    out: list[NLIPair] = []
    for spec in generated_files(out_dir):
        out.extend(load_impli_file(spec, Path(out_dir), options))
    return out


def write_outputs(result: BuildResult, out_dir: str | Path, report_name: str = "report.json") -> list[Path]:
    """Write the pairs as IMPLI TSVs (``<out>/impli/...``) and JSONL with provenance (``<out>/jsonl/...``),
    and the report. Returns the written paths. Files of pair types not in ``result`` are left alone."""
    out = Path(out_dir)
    groups: dict[str, list[GeneratedPair]] = defaultdict(list)
    for p in result.pairs:
        groups[output_name(p.pair_type, p.source, p.label)].append(p)
    written: list[Path] = []
    for rel, pairs in sorted(groups.items()):
        tsv = out / "impli" / rel
        with atomic_write(tsv) as f:
            for p in pairs:
                f.write(f"{one_line(p.premise)}\t{one_line(p.hypothesis)}\n")
        jsonl = out / "jsonl" / (Path(rel).stem + ".jsonl")
        write_jsonl(jsonl, [p.to_json() for p in pairs])
        written += [tsv, jsonl]
    report = out / report_name
    write_json(report, result.report.to_dict())
    written.append(report)
    return written
