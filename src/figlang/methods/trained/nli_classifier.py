"""NLI cross-encoders: premise/hypothesis (I→O) and premise/hypothesis/rationale (IR→O).

``[CLS] premise [SEP] hypothesis [SEP]`` (``nli``) or ``[CLS] premise [SEP] hypothesis [SEP]
rationale [SEP]`` (``nli-rationale``) goes through ``AutoModelForSequenceClassification``; the
labels are the training task's (FLUTE: entailment/contradiction; IMPLI:
entailment/non-entailment). A model answers a task with another label set through
:func:`map_label` (contradiction → non-entailment on IMPLI, non-entailment → contradiction on
FLUTE), so a FLUTE model transfers to IMPLI with entailment and non-entailment accuracy
reported separately.

IR→O reads its rationale per record from a *rationale source*: ``gold`` (the record's
explanation), a JSONL prediction file (``id`` + ``explanation``, or any column named with
``rationale_field``, e.g. the output of a self-rationalizing model's `figlang eval --out`),
or a dict id → rationale. Simulatability is accuracy(IR→O) − accuracy(I→O)
(:mod:`figlang.metrics.simulatability`), see :func:`simulatability_from_models`.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from figlang.core.errors import FiglangError
from figlang.core.io import iter_jsonl
from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, NLIPair
from figlang.core.progress import route_transformers_bars
from figlang.methods.base import Prediction
from figlang.methods.trained.common import (
    THRESHOLD_OBJECTIVES,
    HFModel,
    SegmentEncoderModel,
    choose_threshold,
    read_figlang_json,
    special_ids,
)
from figlang.methods.trained.multiple_choice import (
    autocast,
    is_decoder_only,
    module_device,
    frozen_base_path,
    pad,
    save_pretrained,
    scores_by_length,
    to_device,
)
from figlang.methods.trained.lora import add_lora, load_adapter, lora_spec, save_adapter

RationaleSource = str | Path | Mapping[str, str] | None


def map_label(label: str, target_labels: Sequence[str]) -> str:
    """A model's label in a task's label set: contradiction ↔ non-entailment when one side lacks it."""
    if not target_labels or label in target_labels:
        return label
    if label == CONTRADICTION and NON_ENTAILMENT in target_labels:
        return NON_ENTAILMENT
    if label == NON_ENTAILMENT and CONTRADICTION in target_labels:
        return CONTRADICTION
    if label == "neutral" and NON_ENTAILMENT in target_labels:
        return NON_ENTAILMENT
    return label


def load_rationales(source: RationaleSource, field: str = "explanation") -> Callable[[NLIPair], str | None] | None:
    """A record → rationale function for IR→O: 'gold', a JSONL file of predictions, or a dict."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        given = {str(k): v for k, v in source.items()}
        return lambda r: given.get(r.id)
    if str(source) == "gold":
        return lambda r: r.explanation
    path = Path(source)
    if not path.is_file():
        raise FiglangError(f"rationale source {source!r} is neither 'gold' nor a JSONL file of predictions")
    table: dict[str, str | None] = {}
    for n, row in iter_jsonl(path):
        if "id" not in row:
            raise FiglangError(f"{path}:{n}: a rationale row needs an 'id'")
        value = row.get(field)
        # a row without one (an unparseable answer of a self-rationalizing model) is an empty rationale;
        # an id absent from the file is still an error at prediction time
        table[str(row["id"])] = "" if value is None else str(value)
    if not any(v for v in table.values()):
        raise FiglangError(f"{path} has no non-empty {field!r} values; pass rationale_field=<column>")
    return lambda r: table.get(r.id)


@contextlib.contextmanager
def _quiet_new_head() -> Iterator[None]:
    """transformers' load report (the classifier head is "MISSING": it is new) and peft's deprecation warning,
    silenced while a classifier is built on a base; both are expected, neither is the user's to act on."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        hf_logging.set_verbosity(level)


class NLIClassifierModel(SegmentEncoderModel):
    """A sequence-classification cross-encoder with its tokenizer, label set and rationale input."""

    shape = "nli"
    model_class = "sequence-classifier"

    def __init__(
        self,
        module: HFModel,
        tokenizer: Any,
        method: str,
        labels: Sequence[str],
        max_length: int = 128,
        bf16: bool = False,
        rationales: RationaleSource = None,
        rationale_field: str = "explanation",
    ) -> None:
        super().__init__(module, tokenizer, method, "an NLI classifier method (choose nli or nli-rationale)")
        self.labels = tuple(labels)
        self.max_length = int(max_length)
        self.bf16 = bool(bf16)
        self.uses_rationale = method == "nli-rationale"
        self.rationale_source = "gold" if (self.uses_rationale and rationales is None) else rationales
        self.rationale_field = rationale_field
        self._rationale = load_rationales(self.rationale_source, rationale_field) if self.uses_rationale else None
        self.cls_id, self.sep_id = special_ids(tokenizer, decoder_only=is_decoder_only(module.config))
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        if getattr(module.config, "pad_token_id", None) is None:  # decoder-only heads find the last real token by it
            module.config.pad_token_id = self.pad_id
        self.use_token_types = getattr(module.config, "type_vocab_size", 1) > 1
        self.target_labels: tuple[str, ...] = self.labels
        self.decision: dict[str, Any] | None = None  # a threshold chosen on the selection split (figlang.json "decision")
        self.example_weights: Mapping[str, float] | None = None  # training: per-record loss weights by id (balancing)

    def set_rationales(self, source: RationaleSource, field: str = "explanation") -> None:
        """Read IR→O rationales from another source ('gold', a JSONL prediction file, or a dict)."""
        if not self.uses_rationale:
            raise FiglangError(f"a {self.method!r} model takes no rationale")
        self.rationale_source, self.rationale_field = source, field
        self._rationale = load_rationales(source, field)

    @classmethod
    def from_base(
        cls, path: str, method: str, labels: Sequence[str], lora: Mapping[str, Any] | None = None, **options: Any
    ) -> NLIClassifierModel:
        """A fresh classifier on the base at ``path``; ``lora`` (a :func:`.lora.lora_spec`, or ``{"rank": R}``)
        trains LoRA adapters and the head on the fixed base instead of every weight."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        route_transformers_bars()
        labels = tuple(labels)
        tokenizer = AutoTokenizer.from_pretrained(path)
        with _quiet_new_head():  # the fresh head is the point here: no "newly initialized" report on the user's screen
            module = AutoModelForSequenceClassification.from_pretrained(
                path, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)}
            )
            if lora:
                spec = dict(lora) if "targets" in lora else lora_spec(module.config.model_type, int(lora["rank"]), lora.get("alpha"))
                module = add_lora(module, spec)
        return cls(module, tokenizer, method, labels, **options)

    @property
    def lora(self) -> dict[str, Any] | None:
        """The LoRA adapter's spec when the base is fixed and only adapters and head were trained."""
        return getattr(self.module, "lora_spec", None)

    @classmethod
    def load(cls, directory: str | Path, **overrides: Any) -> NLIClassifierModel:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        route_transformers_bars()
        meta = read_figlang_json(directory)
        options: dict[str, Any] = {"max_length": meta["input_format"]["max_length"], "bf16": meta.get("training", {}).get("bf16", False)}
        options.update({k: v for k, v in overrides.items() if v is not None})
        if meta.get("lora"):  # adapters and head on a base found by its reference (and checked against its revision)
            model = cls.from_base(frozen_base_path(meta), meta["method"], meta["labels"], lora=meta["lora"], **options)
            load_adapter(model.module, directory)
        else:
            tokenizer = AutoTokenizer.from_pretrained(str(directory))
            module = AutoModelForSequenceClassification.from_pretrained(str(directory))
            model = cls(module, tokenizer, meta["method"], meta["labels"], **options)
        model.module.eval()
        if meta.get("decision"):
            model.set_decision(meta["decision"])
        return model

    def set_decision(self, decision: Mapping[str, Any] | None) -> None:
        """Answer by a threshold on the score margin (figlang.json ``decision``: ``label``, ``threshold``) instead of
        the argmax; None restores the argmax. Two-label models only."""
        if decision is None:
            self.decision = None
            return
        if len(self.labels) != 2:
            raise FiglangError(f"a decision threshold needs a two-label model; this one has labels {self.labels}")
        label, value = decision.get("label"), decision.get("threshold")
        if label not in self.labels:
            raise FiglangError(f"decision threshold label {label!r} is not one of the model's labels {self.labels}")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise FiglangError(f"decision threshold must be a finite number, got {value!r}")
        self.decision = dict(decision)

    def decision_margins(self, records: Sequence[NLIPair], batch_size: int = 32) -> list[dict[str, Any]]:
        """Each labelled record's score margin, score(second label) - score(first), under the model's own argmax:
        what a decision threshold is chosen from, and what a run writes so the threshold recomputes without the weights."""
        if len(self.labels) != 2:
            raise FiglangError(f"a decision threshold needs a two-label model; this one has labels {self.labels}")
        feats = [f for f in self.features(records) if f["label"] != -100]
        scores = self.predict_features(feats, batch_size)  # margins do not depend on the decision rule in force
        return [{"id": f["id"], "gold": self.labels[f["label"]], "margin": s[1] - s[0]} for f, s in zip(feats, scores)]

    def choose_decision(
        self,
        records: Sequence[NLIPair],
        objective: str = "balanced-accuracy",
        batch_size: int = 32,
        chosen_on: str | None = None,
        margins: Sequence[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Choose a decision threshold on labelled records (a selection split, never a reported one), set it, and
        return it as figlang.json's ``decision``: the model's second label (IMPLI: non-entailment) is answered when
        its score exceeds the first's by more than the threshold. ``margins``: the records' ``decision_margins``,
        when the caller has them already."""
        rows = list(margins) if margins is not None else self.decision_margins(records, batch_size)
        found = choose_threshold([r["margin"] for r in rows], [r["gold"] == self.labels[1] for r in rows], objective)
        first, second = self.labels
        decision = {
            "label": second,
            "threshold": found.pop("threshold"),
            "rule": f"{second} when score({second}) - score({first}) > threshold, else {first} (argmax: threshold 0)",
            "chosen_on": chosen_on,
            **found,
        }
        self.set_decision(decision)
        return decision

    def decide(self, row: Sequence[float]) -> int:
        """The index of the label answered for one row of scores: argmax, or the decision threshold on the margin."""
        if self.decision is None:
            return max(range(len(row)), key=lambda k: (row[k], -k))
        pos = self.labels.index(self.decision["label"])
        return pos if row[pos] - row[1 - pos] > float(self.decision["threshold"]) else 1 - pos

    def save(self, directory: str | Path) -> None:
        if self.lora:  # only what was trained; the base and its tokenizer are found again by reference
            Path(directory).mkdir(parents=True, exist_ok=True)
            save_adapter(self.module, Path(directory))
            return
        save_pretrained(self.module, self.tokenizer, directory)

    def describe(self) -> dict[str, Any]:
        sep = self.tokenizer.convert_ids_to_tokens(self.sep_id)
        cls_tok = self.tokenizer.convert_ids_to_tokens(self.cls_id)
        template = f"{cls_tok} {{premise}} {sep} {{hypothesis}} {sep}" + (f" {{rationale}} {sep}" if self.uses_rationale else "")
        return {
            "template": template,
            "separator": sep,
            "start_token": cls_tok,
            "rationale": (
                "training: gold explanations; eval: -O rationales=gold|FILE.jsonl [-O rationale_field=COLUMN]"
                if self.uses_rationale
                else None
            ),
            "max_length": self.max_length,
            "truncation": "premise first (down to 16 tokens), then rationale, then hypothesis",
            "head": "AutoModelForSequenceClassification",
            "lora": self.lora,
            "token_type_ids": "1 from the hypothesis on" if self.use_token_types else "not used",
        }

    # --- features ------------------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def rationale_for(self, record: NLIPair) -> str:
        value = self._rationale(record) if self._rationale is not None else None
        if value is None:
            raise FiglangError(
                f"no rationale for record {record.id!r} from {self.rationale_source!r}: IR→O needs one per item "
                "(gold explanations, or a prediction file with an 'explanation' per id)"
            )
        return value

    def featurize(self, record: NLIPair) -> dict[str, Any]:
        segments = [self._ids(record.premise), self._ids(record.hypothesis)]
        order, floors = [0, 1], [16, 0]
        if self.uses_rationale:
            segments.append(self._ids(self.rationale_for(record)))
            order, floors = [0, 2, 1], [16, 16, 0]
        ids, types = self.assemble(segments, order, floors, second_segment_from=1 if self.use_token_types else None)
        label = -100
        if record.label is not None and not record.label_is_placeholder:
            if record.label not in self.labels:
                mapped = [label for label in self.labels if map_label(label, (record.label,)) == record.label]
                if not mapped:
                    raise FiglangError(f"record {record.id!r} has label {record.label!r}, outside the model's labels {self.labels}")
                label = self.labels.index(mapped[0])
            else:
                label = self.labels.index(record.label)
        return {"id": record.id, "ids": ids, "types": types, "label": label, "length": len(ids)}

    def features(self, records: Sequence[NLIPair]) -> list[dict[str, Any]]:
        for r in records:
            if not isinstance(r, NLIPair):
                raise FiglangError(f"the NLI classifier answers NLI records, got {type(r).__name__}")
        return [self.featurize(r) for r in records]

    def collate(self, feats: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [f["ids"] for f in feats]
        batch = {
            "input_ids": pad(ids, self.pad_id),
            "attention_mask": pad([[1] * len(r) for r in ids], 0),
            "labels": torch.tensor([f["label"] for f in feats], dtype=torch.long),
        }
        if self.use_token_types:
            batch["token_type_ids"] = pad([f["types"] for f in feats], 0)
        if self.example_weights is not None:
            batch["weights"] = torch.tensor([float(self.example_weights.get(f["id"], 1.0)) for f in feats], dtype=torch.float)
        return batch

    def scores(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        device = module_device(self.module)
        kwargs: dict[str, Any] = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in batch}
        kwargs = to_device(kwargs, device)
        with autocast(self.bf16, device):
            return self.module(**kwargs).logits.float()

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        scores = self.scores(batch)
        labels = batch["labels"].to(scores.device)
        if "weights" not in batch:
            return nn.functional.cross_entropy(scores, labels, ignore_index=-100)
        # balanced training: each record's loss times its weight (mean 1 over the training records), averaged over the batch
        each = nn.functional.cross_entropy(scores, labels, ignore_index=-100, reduction="none")
        kept = (labels != -100).float()
        return (each * batch["weights"].to(scores.device) * kept).sum() / kept.sum().clamp(min=1.0)

    @torch.no_grad()
    def predict_features(self, feats: Sequence[dict[str, Any]], batch_size: int = 32) -> list[list[float]]:
        return scores_by_length(self, feats, batch_size)

    def predict(self, records: Sequence[NLIPair], batch_size: int = 32) -> list[Prediction]:
        logits = self.predict_features(self.features(records), batch_size)
        preds = []
        for r, row in zip(records, logits):
            best = self.decide(row)
            label = map_label(self.labels[best], self.target_labels)
            preds.append(
                Prediction(
                    id=r.id,
                    prediction=label,
                    scores={label: float(v) for label, v in zip(self.labels, row)},
                    meta={"model_label": self.labels[best]} if label != self.labels[best] else {},
                )
            )
        return preds


def simulatability_from_models(
    records: Sequence[NLIPair],
    io_model: NLIClassifierModel | str | Path,
    iro_model: NLIClassifierModel | str | Path,
    *,
    predicted_rationales: RationaleSource = None,
    rationale_field: str = "explanation",
    gold: bool = True,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Simulatability (IR→O − I→O accuracy) with gold and/or predicted rationales, via figlang.metrics."""
    from figlang.metrics.simulatability import simulatability_report

    io = io_model if isinstance(io_model, NLIClassifierModel) else NLIClassifierModel.load(io_model)
    iro = iro_model if isinstance(iro_model, NLIClassifierModel) else NLIClassifierModel.load(iro_model)
    gold_labels = [r.label for r in records]
    without = [p.prediction for p in io.predict(records, batch_size)]
    with_gold = with_pred = None
    if gold:
        iro.set_rationales("gold")
        with_gold = [p.prediction for p in iro.predict(records, batch_size)]
    if predicted_rationales is not None:
        iro.set_rationales(predicted_rationales, rationale_field)
        with_pred = [p.prediction for p in iro.predict(records, batch_size)]
    report = simulatability_report(gold_labels, without, with_predicted_rationales=with_pred, with_gold_rationales=with_gold)
    return {name: result.to_dict() | {"summary": str(result)} for name, result in report.items()}


def label_accuracy(records: Sequence[NLIPair], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """Overall accuracy and accuracy per gold label (entailment vs non-entailment on IMPLI)."""
    per: dict[str, list[bool]] = {}
    for r, p in zip(records, predictions):
        per.setdefault(str(r.label), []).append(p.prediction == r.label)
    allc = [c for v in per.values() for c in v]
    return {
        "accuracy": sum(allc) / len(allc) if allc else None,
        "n": len(allc),
        "by_gold_label": {k: {"accuracy": sum(v) / len(v), "n": len(v)} for k, v in sorted(per.items())},
    }


__all__ = [
    "ENTAILMENT",
    "NLIClassifierModel",
    "THRESHOLD_OBJECTIVES",
    "choose_threshold",
    "NON_ENTAILMENT",
    "label_accuracy",
    "load_rationales",
    "map_label",
    "simulatability_from_models",
]
