"""What every trained model shares and that needs no torch: its ``figlang.json``, the input assembly
(segments joined by the tokenizer's separator token, with a truncation order) and the knowledge
relations of the narrative benchmark's inferences.

Its own module so that the model classes (:mod:`.multiple_choice`, :mod:`.nli_classifier`,
:mod:`.generator`) and the package, which loads them, do not import each other.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError

# A Transformers model (a PreTrainedModel, or the encoder inside a figlang head). Its attributes are dynamic
# (config, generate, save_pretrained, get_input_embeddings, ...): typed as torch's nn.Module, mypy reads each one as
# Module.__getattr__'s Tensor | Module, so such a model is Any to the type checker.
HFModel = Any

FIGLANG_JSON = "figlang.json"
FORMAT_VERSION = 1

# trained-model method name -> (shape, model class)
TRAINED_METHODS: dict[str, tuple[str, str]] = {
    "mc": ("cloze", "choice-scorer"),  # narrative </s> continuation
    "mc-continuation": ("cloze", "choice-scorer"),  # continuation only (annotation-artifact baseline)
    "mc-context": ("cloze", "choice-scorer"),  # Inf_j </s> narrative </s> continuation, context inferences, summed over j
    "mc-literal": ("cloze", "choice-scorer"),  # the same with literal inferences
    "mc-meaning": ("cloze", "choice-scorer"),  # meaning </s> narrative </s> continuation (the dataset's idiom definition / simile property)
    "nli": ("nli", "sequence-classifier"),  # premise </s> hypothesis (I→O)
    "nli-rationale": ("nli", "sequence-classifier"),  # premise </s> hypothesis </s> rationale (IR→O)
    "iro": ("nli", "generator"),  # FLUTE instruction → "Entails.|Contradicts. <explanation>" (self-rationalizing I→OR)
    "generator": ("generation", "generator"),  # narrative → continuation (causal LM)
    "generator-context": ("generation", "generator"),  # Inf_j <sep1> N <sep2> C, logits summed over j when decoding
    "generator-literal": ("generation", "generator"),  # the same with literal inferences
    "nli-fold-heads": ("nli", "fold-heads"),  # IMPLI: a linear head per idiom-disjoint fold on a frozen NLI classifier (fold_heads)
}
# methods whose models are not made by `figlang train`, with the command that makes them
NOT_TRAINED_HERE = {"nli-fold-heads": "python scripts/train_fold_heads.py OUT"}
KNOWLEDGE = {"mc-context": "context", "mc-literal": "literal", "generator-context": "context", "generator-literal": "literal"}


def check_method(method: str) -> str:
    if method not in TRAINED_METHODS:
        raise FiglangError(f"unknown training method {method!r}; choose one of: {', '.join(TRAINED_METHODS)}")
    if method in NOT_TRAINED_HERE:
        trainable = [m for m in TRAINED_METHODS if m not in NOT_TRAINED_HERE]
        raise FiglangError(
            f"{method!r} models are not trained by `figlang train` (make one with {NOT_TRAINED_HERE[method]}); "
            f"figlang train trains: {', '.join(trainable)}"
        )
    return method


# --- decision thresholds (two-label classifiers) ---------------------------------------------------------------

THRESHOLD_OBJECTIVES = ("balanced-accuracy", "accuracy", "macro-f1", "floor=R")
FLOOR_CONFIDENCE = 0.95  # floor=R: the first label's recall is held at R with this one-sided confidence


def parse_threshold_objective(objective: str) -> tuple[str, float | None]:
    """('floor', R) for ``floor=R`` (0 < R < 1), else (objective, None); a clear error for anything else.

    ``floor=R`` states an operating point rather than a trade-off: keep the first label's recall (IMPLI:
    entailment) at R or above, with 95% confidence on the selection items, and answer the second label as often as
    that allows. A benchmark target such as "non-entailment ≥ 70 with entailment ≥ 85" is such an operating point.
    """
    if objective.startswith("floor="):
        try:
            floor = float(objective.split("=", 1)[1])
        except ValueError:
            floor = float("nan")
        if not 0.0 < floor < 1.0:
            raise FiglangError(f"threshold objective {objective!r}: the floor must be a recall between 0 and 1, e.g. floor=0.85")
        return "floor", floor
    if objective not in THRESHOLD_OBJECTIVES:
        raise FiglangError(f"unknown threshold objective {objective!r}; choose one of: {', '.join(THRESHOLD_OBJECTIVES)}")
    return objective, None


def recall_lower_bound(hits: int, n: int, confidence: float = FLOOR_CONFIDENCE) -> float:
    """One-sided Clopper-Pearson lower bound of a recall of hits/n: the floor=R rule holds it at R, so that a
    threshold that only just reaches R on a few hundred selection items is not taken for one that holds."""
    if n <= 0 or hits <= 0:
        return 0.0
    from scipy.stats import beta

    return float(beta.ppf(1.0 - confidence, hits, n - hits + 1))


def _objective(name: str, tp: int, fn: int, tn: int, fp: int) -> float:
    pos, neg = tp + fn, tn + fp
    if name == "accuracy":
        return (tp + tn) / max(1, pos + neg)
    if name == "balanced-accuracy":
        return ((tp / pos if pos else 0.0) + (tn / neg if neg else 0.0)) / 2
    f_pos = 2 * tp / max(1, 2 * tp + fp + fn)
    f_neg = 2 * tn / max(1, 2 * tn + fn + fp)
    return (f_pos + f_neg) / 2


def choose_threshold(margins: Sequence[float], positive: Sequence[bool], objective: str = "balanced-accuracy") -> dict[str, Any]:
    """The threshold t on score margins (answer the positive label when margin > t) that maximises ``objective``
    (balanced-accuracy, accuracy or macro-f1) on these items; ties go to the t nearest 0 (the argmax).
    ``floor=R``: the t with the highest positive recall among those whose negative recall has a one-sided 95%
    Clopper-Pearson lower bound of at least R (where none has, the one with the highest bound: in the end, negative
    everywhere).

    Returns the threshold, the objective there and at the argmax (t = 0), and the recall of each side at both.
    """
    kind, floor = parse_threshold_objective(objective)
    if len(margins) != len(positive):
        raise FiglangError(f"{len(margins)} margins but {len(positive)} gold labels")
    if not any(positive) or all(positive):
        raise FiglangError("choosing a decision threshold needs items of both gold labels on the selection split")
    pos = sorted(float(m) for m, p in zip(margins, positive) if p)
    neg = sorted(float(m) for m, p in zip(margins, positive) if not p)
    values = sorted(set(pos) | set(neg))
    # every distinct decision: below the lowest margin, between two neighbours (their midpoint), and the argmax's 0
    candidates = {0.0, values[0] - 1.0} | {(a + b) / 2 for a, b in zip(values, values[1:])}

    candidates.add(values[-1] + 1.0)  # above the highest margin: the negative label everywhere (floor=R's fallback)

    def at(t: float) -> dict[str, Any]:
        tp = len(pos) - bisect.bisect_right(pos, t)
        tn = bisect.bisect_right(neg, t)
        if floor is None:
            return {
                "value": _objective(kind, tp, len(pos) - tp, tn, len(neg) - tn),
                "positive_recall": tp / len(pos),
                "negative_recall": tn / len(neg),
            }
        lower = recall_lower_bound(tn, len(neg))
        # feasible: the positive recall; not: below every feasible value, the surest negative recall first
        return {
            "value": tp / len(pos) if lower >= floor else lower - 1.0,
            "positive_recall": tp / len(pos),
            "negative_recall": tn / len(neg),
            "negative_recall_lower_bound": lower,
        }

    best = max(sorted(candidates), key=lambda t: (round(at(t)["value"], 12), -abs(t)))
    if floor is not None:
        return {
            "threshold": best,
            "objective": objective,
            "floor_confidence": FLOOR_CONFIDENCE,
            "items": len(pos) + len(neg),
            "positive_items": len(pos),
            "at_threshold": at(best),
            "at_argmax": at(0.0),
        }
    return {
        "threshold": best,
        "objective": objective,
        "items": len(pos) + len(neg),
        "positive_items": len(pos),
        "at_threshold": at(best),
        "at_argmax": at(0.0),
    }


# --- input assembly ---------------------------------------------------------------------------------


def fit_segments(lengths: Sequence[int], budget: int, order: Sequence[int], floors: Sequence[int] | None = None) -> list[int]:
    """How many tokens each segment keeps so that they fit ``budget``.

    Segments are cut in ``order`` (the first index is cut first, down to its floor, then the
    next …); ``floors`` (default 0) is the least a segment keeps while a later one can still be
    cut. If the floors alone do not fit, segments are cut below their floors in the same order.
    """
    keep = list(lengths)
    floors = list(floors) if floors is not None else [0] * len(keep)
    excess = sum(keep) - budget
    for floor_pass in (True, False):
        for i in order:
            if excess <= 0:
                return keep
            floor = min(floors[i], keep[i]) if floor_pass else 0
            cut = min(excess, keep[i] - floor)
            keep[i] -= cut
            excess -= cut
    if excess > 0:  # pragma: no cover - budget below zero
        raise FiglangError(f"max_length too small: {budget} tokens cannot hold the separators")
    return keep


def assemble(
    segments: Sequence[Sequence[int]],
    *,
    cls_id: int,
    sep_id: int,
    max_length: int,
    order: Sequence[int],
    floors: Sequence[int] | None = None,
    keep_end: Sequence[bool] | None = None,
    second_segment_from: int | None = None,
) -> tuple[list[int], list[int]]:
    """``[CLS] s_0 [SEP] s_1 [SEP] … s_n [SEP]`` within ``max_length`` tokens; returns (ids, token types).

    ``keep_end[i]`` truncates segment i from the left (keeps its end: a narrative's last
    sentences hold the idiom). Token type 1 starts at segment ``second_segment_from`` (the
    BERT pair convention for the last segment); None gives all zeros.
    """
    budget = max_length - 1 - len(segments)  # one [CLS], one [SEP] after each segment
    keep = fit_segments([len(s) for s in segments], budget, order, floors)
    ends = keep_end or [False] * len(segments)
    ids = [cls_id]
    types = [0]
    for i, (seg, k) in enumerate(zip(segments, keep)):
        part = list(seg[len(seg) - k :]) if ends[i] else list(seg[:k])
        t = 1 if second_segment_from is not None and i >= second_segment_from else 0
        ids += part + [sep_id]
        types += [t] * (len(part) + 1)
    return ids, types


class TrainedModel:
    """What every trained model class starts from: its module, its tokenizer, and a method of its ``model_class``."""

    model_class: str

    def __init__(self, module: Any, tokenizer: Any, method: str, kinds: str) -> None:
        """``kinds``: this class's methods as the refusal of another method names them ("a generating method (choose …)")."""
        if TRAINED_METHODS.get(method, (None, None))[1] != self.model_class:
            raise FiglangError(f"{method!r} is not {kinds}")
        self.module = module
        self.tokenizer = tokenizer
        self.method = method


class SegmentEncoderModel(TrainedModel):
    """A trained encoder that reads token segments joined by its separator (the multiple-choice scorer, the NLI classifier)."""

    cls_id: int
    sep_id: int
    max_length: int

    def assemble(
        self, segments: Sequence[Sequence[int]], order: Sequence[int], floors: Sequence[int] | None, **layout: Any
    ) -> tuple[list[int], list[int]]:
        """:func:`assemble` with this model's special tokens and ``max_length`` (``layout``: ``keep_end``, ``second_segment_from``)."""
        return assemble(segments, cls_id=self.cls_id, sep_id=self.sep_id, max_length=self.max_length, order=order, floors=floors, **layout)


def special_ids(tokenizer: Any, decoder_only: bool = False) -> tuple[int, int]:
    """The start ([CLS]/<s>) and separator ([SEP]/</s>) token ids of a tokenizer.

    A decoder-only LM without a start token (Qwen) starts from its end-of-text token, as in pre-training.
    """
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    if decoder_only and cls_id is None:
        cls_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if cls_id is None or sep_id is None:
        raise FiglangError("this tokenizer has no start/separator tokens ([CLS]/[SEP] or <s>/</s>): use an encoder model")
    return int(cls_id), int(sep_id)


# --- knowledge relations ---------------------------------------------------------------------------------

# The narrative benchmark's inferences come from COMET (context: ATOMIC relations about the
# narrator) and ConceptNet (literal: relations of the expression's constituent words, or the
# simile vehicle's associated property); their surface templates tell the relation. The context
# templates describe the narrator and are anchored at the start ("The narrator needed …"): a
# literal inference may contain the same words ("jobs has propetry of being needed to pay bills"
# is HasProperty, not xNeed). The literal names are those of figlang.knowledge.providers.LITERAL_RELATIONS.
CONTEXT_RELATION_PATTERNS: tuple[tuple[str, str], ...] = (
    ("xNeed", r"^(the )?narrator needed\b"),
    ("xIntent", r"^(the )?narrator intended\b"),
    ("xWant", r"^(the )?narrator wanted\b"),
    ("xReact", r"^(the )?narrator reacted\b"),
    ("xEffect", r"^the effect on (the )?narrator\b"),
    ("xAttr", r"^(the )?narrator has an attribute of\b"),
)
LITERAL_RELATION_PATTERNS: tuple[tuple[str, str], ...] = (
    ("HasProperty", r"\bhas prope?t?rt?y of\b|^the associated property is\b"),
    ("CapableOf", r"\bis capable of\b"),
    ("Desires", r"\bdesires\b"),
    ("AtLocation", r"\bcan be found in\b"),
    ("UsedFor", r"\bis used for\b"),
    ("MadeUpOf", r"\bis made of\b"),
)
RELATION_PATTERNS: tuple[tuple[str, str], ...] = CONTEXT_RELATION_PATTERNS + LITERAL_RELATION_PATTERNS


def relation_of(inference: str) -> str:
    """The knowledge relation an inference expresses, from its template ('other' if none matches)."""
    text = inference.strip().lower()
    for name, pattern in RELATION_PATTERNS:
        if re.search(pattern, text):
            return name
    return "other"


# --- trained model directories -------------------------------------------------------------------------


def no_inferences(record_id: str, knowledge: str | None, method: str) -> FiglangError:
    """The error for a record without inferences of the kind a knowledge model (``method``) reads."""
    return FiglangError(
        f"record {record_id!r} has no {knowledge} inferences; the {method} model needs the "
        f"{knowledge} inference files of the narrative dataset"
    )


def read_figlang_json(directory: str | Path) -> dict[str, Any]:
    """The ``figlang.json`` of a trained model directory (a clear error when it is not one)."""
    path = Path(directory) / FIGLANG_JSON
    if not path.is_file():
        raise FiglangError(
            f"{directory} is not a figlang-trained model (no {FIGLANG_JSON}); train one with `figlang train`, "
            "or use a method that takes a plain model"
        )
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise FiglangError(f"{path} is not valid JSON: {err}") from err
    if meta.get("method") not in TRAINED_METHODS:
        raise FiglangError(f"{path}: unknown trained method {meta.get('method')!r}")
    return meta


def is_trained_dir(directory: str | Path) -> bool:
    return (Path(directory) / FIGLANG_JSON).is_file()
