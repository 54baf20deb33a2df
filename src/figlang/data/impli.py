"""IMPLI (Stowe, Utama, Gurevych, ACL 2022): idiom and metaphor NLI pairs.

16 TSV files without a header: premise, hypothesis and (semi-automatic files only) a
metaphoricity score. The label is only in the file name (``_e`` / ``_ne``), the pair type
and source corpus only in the path. ``metaphors/replacement_tsvetkov_e.tsv`` is
Windows-1252; about 350 lines contain bare ``"``, so quotes are never interpreted.
There is no official split: the paper used 10 idiom-disjoint folds (``figlang.data.splits``).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from figlang.core.errors import DataError, LoadOptions
from figlang.core.io import iter_tsv
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT, NLIPair

DATASET = "impli"


@dataclass(frozen=True)
class ImpliFile:
    path: str  # relative to the dataset folder
    figure_type: str  # idiom | metaphor
    pair_type: str
    source: str | None
    label: str
    encoding: str = "utf-8"


def _f(path: str, pair_type: str, source: str | None, encoding: str = "utf-8") -> ImpliFile:
    figure = "idiom" if path.startswith("idioms/") else "metaphor"
    stem = Path(path).stem
    label = NON_ENTAILMENT if stem.endswith("_ne") or "_ne_" in stem else ENTAILMENT
    return ImpliFile(path, figure, pair_type, source, label, encoding)


FILES: tuple[ImpliFile, ...] = (
    _f("idioms/fig_context_magpie_e.tsv", "fig_context", "magpie"),
    _f("idioms/fig_context_pie_e.tsv", "fig_context", "pie"),
    _f("idioms/fig_context_semeval_e.tsv", "fig_context", "semeval"),
    _f("idioms/lit_context_magpie_ne.tsv", "lit_context", "magpie"),
    _f("idioms/lit_context_pie_ne.tsv", "lit_context", "pie"),
    _f("idioms/lit_context_semeval_ne.tsv", "lit_context", "semeval"),
    _f("idioms/adversarial_definition_ne_magpie.tsv", "adversarial_definition", "magpie"),
    _f("idioms/adversarial_definition_ne_pie.tsv", "adversarial_definition", "pie"),
    _f("idioms/adversarial_definition_ne_semeval.tsv", "adversarial_definition", "semeval"),
    _f("idioms/manual_e.tsv", "manual", None),
    _f("idioms/manual_ne.tsv", "manual", None),
    _f("idioms/manual_antonyms_ne.tsv", "manual_antonym", None),
    _f("metaphors/manual_e.tsv", "manual", None),
    _f("metaphors/manual_ne.tsv", "manual", None),
    _f("metaphors/replacement_cc_e.tsv", "metaphor_replacement", "cc"),
    _f("metaphors/replacement_tsvetkov_e.tsv", "metaphor_replacement", "tsvetkov", encoding="cp1252"),
)
PAIR_TYPES = tuple(dict.fromkeys(f.pair_type for f in FILES))


def select_files(figure_type: str | None = None, pair_types: tuple[str, ...] | None = None) -> list[ImpliFile]:
    return [f for f in FILES if (figure_type is None or f.figure_type == figure_type) and (pair_types is None or f.pair_type in pair_types)]


_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def figurative_offsets(
    premise: str, hypothesis: str, same: Callable[[str, str], bool] = operator.eq
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Character spans (premise, hypothesis) that differ, cut at token boundaries.

    The common token prefix and suffix (ignoring case; ``same`` compares two lower-cased tokens, exact by default)
    are removed; what is left is the replaced span. Where one side has nothing left, its span is empty (start ==
    end) at the point of the insertion or deletion, so it can still be located in a parse.
    """
    p = [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(premise)]
    h = [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(hypothesis)]
    i = 0
    while i < min(len(p), len(h)) and same(p[i][0], h[i][0]):
        i += 1
    j = 0
    while j < min(len(p), len(h)) - i and same(p[len(p) - 1 - j][0], h[len(h) - 1 - j][0]):
        j += 1

    def cut(tokens: list[tuple[str, int, int]]) -> tuple[int, int]:
        inner = tokens[i : len(tokens) - j]
        if inner:
            return inner[0][1], inner[-1][2]
        at = tokens[i][1] if i < len(tokens) else (tokens[-1][2] if tokens else 0)
        return at, at

    return cut(p), cut(h)


def figurative_span(premise: str, hypothesis: str) -> tuple[str, str]:
    """(span of the premise, span of the hypothesis) that differ, cut at token boundaries.

    IMPLI pairs are made by replacing the figurative expression in the premise, so the
    differing span of the premise is (a superset of) the idiom and the hypothesis span its
    replacement. Used to group pairs by expression when the files do not name it.
    Comparison ignores case; the returned spans keep the original text.
    """
    (ps, pe), (hs, he) = figurative_offsets(premise, hypothesis)
    return premise[ps:pe], hypothesis[hs:he]


def load_impli_file(spec: ImpliFile, data_dir: Path, options: LoadOptions, start: int = 0) -> list[NLIPair]:
    path = data_dir / DATASET / spec.path
    out: list[NLIPair] = []
    for line, cols in iter_tsv(path, options, encoding=spec.encoding):
        premise, hypothesis = cols[0].strip(), cols[1].strip()
        if not premise or not hypothesis:
            options.fail(DataError("empty premise or hypothesis", path, line))
            continue
        score: float | None = None
        if len(cols) > 2 and cols[2].strip():
            try:
                score = float(cols[2])
            except ValueError:
                options.fail(DataError(f"third column should be a score, got {cols[2][:30]!r}", path, line))
                continue
        span, replacement = figurative_span(premise, hypothesis)
        out.append(
            NLIPair(
                id=f"{spec.path.removesuffix('.tsv')}-{line}",
                premise=premise,
                hypothesis=hypothesis,
                label=spec.label,
                figure_type=spec.figure_type,
                pair_type=spec.pair_type,
                source=spec.source,
                expression=span or None,
                score=score,
                meta={"file": str(path), "line": line, "replacement": replacement, "expression_derived": True},
            )
        )
    return out


def load_impli(
    data_dir: Path, options: LoadOptions, figure_type: str | None = None, pair_types: tuple[str, ...] | None = None
) -> list[NLIPair]:
    """All IMPLI pairs (or one figure type / some pair types), in the order of FILES."""
    out: list[NLIPair] = []
    for spec in select_files(figure_type, pair_types):
        out.extend(load_impli_file(spec, data_dir, options))
    return out


def impli_files(data_dir: Path, figure_type: str | None = None, pair_types: tuple[str, ...] | None = None) -> list[Path]:
    return [data_dir / DATASET / f.path for f in select_files(figure_type, pair_types)]
