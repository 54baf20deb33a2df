"""Analyses from the IMPLI paper (Stowe, Utama, Gurevych, ACL 2022): idiom flexibility and lexical overlap.

* ICE score: how often an idiom occurs in a form other than its base form. IMPLI relates it to how hard
  the idiom is for NLI models, so we correlate per-idiom ICE with per-idiom accuracy (Spearman, scipy).
* Lexical overlap: Levenshtein distance between premise and hypothesis (rapidfuzz). Models that lean on
  overlap do well on near-copies and badly elsewhere; comparing distances of correct vs incorrect
  predictions (Mann-Whitney U, scipy) shows whether that is happening.

No model code here: everything takes predictions as plain per-item correctness.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from rapidfuzz.distance import Levenshtein

from figlang.data.impli import figurative_span
from figlang.core.text import normalise_spacing  # the key idioms are grouped by (punctuation kept)

__all__ = [
    "IceCorrelation",
    "OverlapScore",
    "OverlapSummary",
    "accuracy_by_idiom",
    "ice_accuracy_correlation",
    "ice_by_idiom",
    "ice_score",
    "is_base_form",
    "levenshtein_overlap",
    "overlap_scores",
    "overlap_summary",
    "replaced_span",
]


class _HasExpressionAndPremise(Protocol):
    @property
    def expression(self) -> str | None: ...

    @property
    def premise(self) -> str: ...


def is_base_form(base_form: str, sentence: str) -> bool:
    """Does ``sentence`` contain the base form verbatim (lower-cased, whitespace-normalised, whole words)?

    Whole words so that "spill the bean" is not found inside "spill the beans": a different form is a
    different form, even when one string contains the other.
    """
    base = normalise_spacing(base_form)
    if not base:
        raise ValueError("empty base form")
    pattern = r"(?<!\w)" + re.escape(base) + r"(?!\w)"
    return re.search(pattern, normalise_spacing(sentence)) is not None


def ice_score(base_form: str, sentences: Sequence[str]) -> float:
    """Share of an idiom's occurrences (sentences) that do not contain its base form: 0 = always canonical."""
    if not sentences:
        raise ValueError(f"no sentences for idiom {base_form!r}: ICE is undefined")
    return sum(1 for s in sentences if not is_base_form(base_form, s)) / len(sentences)


def ice_by_idiom(records: Iterable[_HasExpressionAndPremise], unique_sentences: bool = True) -> dict[str, float]:
    """Per-idiom ICE from records with ``.expression`` (the base form) and ``.premise`` (the occurrence).

    IMPLI pairs one premise with several hypotheses, so by default each distinct premise counts once:
    ICE is about occurrences, not about how many hypotheses were written for one. Records without an
    expression are skipped.
    """
    occurrences: dict[str, list[str]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for r in records:
        if not r.expression:
            continue
        key = normalise_spacing(r.expression)
        if unique_sentences:
            if (key, r.premise) in seen:
                continue
            seen.add((key, r.premise))
        occurrences[key].append(r.premise)
    return {idiom: ice_score(idiom, sents) for idiom, sents in occurrences.items()}


def accuracy_by_idiom(idioms: Sequence[str], correct: Sequence[bool]) -> dict[str, tuple[float, int]]:
    """idiom -> (accuracy, number of items), from per-item idiom and correctness."""
    if len(idioms) != len(correct):
        raise ValueError(f"{len(idioms)} idioms but {len(correct)} correctness values")
    hits: dict[str, list[bool]] = defaultdict(list)
    for idiom, ok in zip(idioms, correct):
        hits[normalise_spacing(idiom)].append(bool(ok))
    return {k: (sum(v) / len(v), len(v)) for k, v in hits.items()}


@dataclass(frozen=True)
class IceCorrelation:
    """Spearman correlation between per-idiom ICE and per-idiom accuracy."""

    rho: float  # NaN when undefined (fewer than 3 idioms, or a constant variable)
    p_value: float
    n: int  # idioms used
    n_excluded_few_items: int  # idioms with fewer than min_items items
    n_excluded_no_ice: int  # idioms that have items but no ICE score
    min_items: int
    ice: dict[str, float]  # the idioms used
    accuracy: dict[str, float]


def ice_accuracy_correlation(
    ice: Mapping[str, float], idioms: Sequence[str], correct: Sequence[bool], min_items: int = 5
) -> IceCorrelation:
    """Do idioms that vary their form more get lower accuracy? Idioms with < ``min_items`` items are excluded."""
    if min_items < 1:
        raise ValueError("min_items must be at least 1")
    acc = accuracy_by_idiom(idioms, correct)
    ice_n = {normalise_spacing(k): v for k, v in ice.items()}
    few = [k for k, (_, n) in acc.items() if n < min_items]
    no_ice = [k for k, (_, n) in acc.items() if n >= min_items and k not in ice_n]
    keep = sorted(k for k, (_, n) in acc.items() if n >= min_items and k in ice_n)
    x = [ice_n[k] for k in keep]
    y = [acc[k][0] for k in keep]
    if len(keep) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        rho, p = math.nan, math.nan  # Spearman is undefined; say so rather than let scipy warn
    else:
        from scipy import stats  # imported on use (a second at import)

        res = stats.spearmanr(x, y)
        rho, p = float(res.statistic), float(res.pvalue)
    return IceCorrelation(rho, p, len(keep), len(few), len(no_ice), min_items, dict(zip(keep, x)), dict(zip(keep, y)))


# --------------------------------------------------------------------------------------------
# Lexical overlap
# --------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class OverlapScore:
    distance: int  # Levenshtein edits
    normalized: float  # distance / length of the longer sequence, in [0, 1]


def levenshtein_overlap(premise: str, hypothesis: str, unit: Literal["char", "word"] = "char") -> OverlapScore:
    """Levenshtein distance between premise and hypothesis, over characters or word/punctuation tokens."""
    if unit == "char":
        a: str | list[str] = premise
        b: str | list[str] = hypothesis
    elif unit == "word":
        a, b = _TOKEN.findall(premise), _TOKEN.findall(hypothesis)
    else:
        raise ValueError(f"unit must be 'char' or 'word', not {unit!r}")
    return OverlapScore(int(Levenshtein.distance(a, b)), float(Levenshtein.normalized_distance(a, b)))


def overlap_scores(pairs: Iterable[tuple[str, str]], unit: Literal["char", "word"] = "char") -> list[OverlapScore]:
    return [levenshtein_overlap(p, h, unit) for p, h in pairs]


@dataclass(frozen=True)
class OverlapSummary:
    """Distances of correctly vs incorrectly predicted items, with a two-sided Mann-Whitney U test."""

    mean_correct: float
    mean_incorrect: float
    median_correct: float
    median_incorrect: float
    n_correct: int
    n_incorrect: int
    u_statistic: float
    p_value: float  # NaN when either group is empty
    bin_edges: tuple[float, ...]  # shared by both histograms
    hist_correct: tuple[int, ...]
    hist_incorrect: tuple[int, ...]


def overlap_summary(distances: Sequence[float], correct: Sequence[bool], bins: int = 20) -> OverlapSummary:
    """Summarise per-item distances split by correctness; histogram counts use the same bin edges for both."""
    if len(distances) != len(correct):
        raise ValueError(f"{len(distances)} distances but {len(correct)} correctness values")
    if not distances:
        raise ValueError("no distances")
    d = np.asarray(distances, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    good, bad = d[ok], d[~ok]
    edges = np.histogram_bin_edges(d, bins=bins)
    if len(good) and len(bad):
        from scipy import stats  # imported on use (a second at import)

        res = stats.mannwhitneyu(good, bad, alternative="two-sided")
        u, p = float(res.statistic), float(res.pvalue)
    else:
        u, p = math.nan, math.nan

    def _mean(a: np.ndarray) -> float:
        return float(a.mean()) if len(a) else math.nan

    def _median(a: np.ndarray) -> float:
        return float(np.median(a)) if len(a) else math.nan

    return OverlapSummary(
        _mean(good),
        _mean(bad),
        _median(good),
        _median(bad),
        len(good),
        len(bad),
        u,
        p,
        tuple(float(e) for e in edges),
        tuple(int(c) for c in np.histogram(good, bins=edges)[0]),
        tuple(int(c) for c in np.histogram(bad, bins=edges)[0]),
    )


# --------------------------------------------------------------------------------------------
# Which span did the hypothesis replace?
# --------------------------------------------------------------------------------------------


def replaced_span(premise: str, hypothesis: str) -> tuple[str, str]:
    """(span of the premise, span of the hypothesis) left after removing their common prefix and suffix.

    The same rule the IMPLI loader uses to name each pair's expression (one implementation:
    ``figlang.data.impli.figurative_span``). Caveat: words the paraphrase shares with the idiom at its
    edges stay in the prefix/suffix ("from scratch" -> "completely from the beginning" yields
    "scratch"), so the span can be shorter than the idiom. Identical strings give ("", "").
    """
    return figurative_span(premise, hypothesis)
