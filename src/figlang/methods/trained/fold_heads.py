"""IMPLI fold models that ship: one small linear head per idiom-disjoint fold, on the shipped FLUTE label model.

IMPLI (Stowe et al., ACL 2022) is scored over ten folds that share no idiom (and no premise: the "linked"
grouping of `figlang train --folds`), so that every pair is answered by a model that never saw its idiom.
Fine-tuning an encoder per fold costs about 12 CPU-minutes a fold and 90 MB of weights each; here the ten models
are ten linear heads (a few KB each) on one frozen encoder that ships anyway: the FLUTE label model
``figlang:flute-lora-mpnet`` (LoRA adapters on the catalog mpnet). Its features for a pair are the classifier's
input ([CLS] of the last layer) and the output of its dense layer after tanh: the NLI features FLUTE taught it.
How the heads are trained and chosen: :mod:`figlang.training.fold_heads`.

At inference (``-m trained --model figlang:impli-folds-flute-mpnet``) a pair is answered by the head of the fold
whose test part holds its idiom (or premise): :data:`ROUTES_FILE` maps a hash of each IMPLI link key to its fold,
so the folder ships no IMPLI text. A pair whose idiom and premise are in no fold (a user's own pair) is answered by
the mean of the ten heads' margins, each less its threshold; the answer's ``meta`` says which.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT, NLIPair
from figlang.data.splits import figurative_links
from figlang.methods.base import Prediction
from figlang.methods.trained.common import FIGLANG_JSON
from figlang.methods.trained.heads import resolve_trained_model
from figlang.methods.trained.nli_classifier import NLIClassifierModel, map_label

SHIPPED_NAME = "impli-folds-flute-mpnet"
BASE = "figlang:flute-lora-mpnet"
METHOD = "nli-fold-heads"
HEADS_FILE = "fold_heads.safetensors"
ROUTES_FILE = "fold_routes.json.gz"
RECORD_FILE = "record.json"
LABELS = (ENTAILMENT, NON_ENTAILMENT)
K, CARVE_FRACTION, DEV_LIMIT, SEED = 10, 0.1, 500, 0  # the fine-tuned folds' cut (preset cpu-impli-folds)
PENALTIES = (1e-4, 1e-3, 1e-2, 1e-1)  # L2 on the weights of standardised features, per fold, chosen on its selection slice
OBJECTIVE = "floor=0.85"
MAX_FOLD_BYTES = 1024 * 1024  # issue #36: each fold model at most 1 MB
COMMAND = "python scripts/train_fold_heads.py runs/cpu/impli-folds-flute-mpnet --data-dir ../shared/data"


def route_key(link: Hashable) -> str:
    """A link key (normalised idiom or premise) as the routes file keeps it: 16 hex digits of its sha256."""
    return hashlib.sha256(json.dumps(list(link) if isinstance(link, tuple) else link, ensure_ascii=False).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------- features


def _dense_module(module: Any) -> Any:
    """The classification head's dense layer that runs (peft keeps a trained copy beside the base's)."""
    named = dict(module.named_modules())
    for name in ("base_model.model.classifier.modules_to_save.default.dense", "classifier.dense"):
        if name in named:  # mpnet / roberta: the head's own dense layer, then tanh
            return named[name]
    pooler = [m for name, m in named.items() if name.endswith("pooler.dense")]
    if pooler:  # bert: the pooler's dense layer, then tanh, is what its classifier reads
        return pooler[0]
    raise FiglangError("the base model has no dense layer before its classifier (an mpnet, roberta or bert NLI classifier)")


def nli_features(model: Any, records: Sequence[NLIPair], batch_size: int = 64) -> Any:
    """[CLS] of the last layer and the head's dense output after tanh, one row per record ([n, 2 x hidden]),
    computed in batches of similar length."""
    import torch

    feats = model.features(records)
    captured: list[Any] = []
    hook = _dense_module(model.module).register_forward_hook(
        lambda _m, inputs, output: captured.append(torch.cat([inputs[0].float(), torch.tanh(output.float())], dim=-1))
    )
    order = sorted(range(len(feats)), key=lambda i: feats[i]["length"])
    out: Any = None
    model.module.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(order), max(1, batch_size)):
                idx = order[start : start + batch_size]
                captured.clear()
                model.scores(model.collate([feats[i] for i in idx]))
                rows = captured[-1]
                if out is None:
                    out = torch.zeros(len(feats), rows.shape[1])
                out[idx] = rows
    finally:
        hook.remove()
    return out if out is not None else torch.zeros(0, 0)


def load_base(reference: str = BASE, threads: int | None = None) -> NLIClassifierModel:
    """The frozen FLUTE label model the heads read (a shipped LoRA classifier, or a `figlang train` folder)."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    folder, _ = resolve_trained_model(reference)
    return NLIClassifierModel.load(folder)


# ---------------------------------------------------------------------------------------------- inference


class FoldHeadsModel:
    """Ten fold heads on their frozen base, answering IMPLI-shaped pairs (``-m trained``)."""

    shape = "nli"
    model_class = "fold-heads"
    labels = LABELS

    def __init__(self, directory: str | Path, base: Any, heads: dict[str, Any], routes: dict[str, int]) -> None:
        self.directory, self.base, self.heads, self.routes = Path(directory), base, heads, routes
        self.module = base.module
        self.target_labels: tuple[str, ...] = LABELS
        self.thresholds = self._thresholds()

    def _thresholds(self) -> list[float]:
        record = json.loads((self.directory / RECORD_FILE).read_text(encoding="utf-8"))
        return [float(f["decision"]["threshold"]) for f in record["folds"]]

    @classmethod
    def load(cls, directory: str | Path, **options: Any) -> FoldHeadsModel:
        """The heads and their routes from ``directory``, on the base its figlang.json names (``bf16`` etc. are the base's)."""
        from safetensors.torch import load_file

        directory = Path(directory)
        meta = json.loads((directory / FIGLANG_JSON).read_text(encoding="utf-8"))
        base = load_base(meta["base_model"]["reference"])
        routes = json.loads(gzip.decompress((directory / ROUTES_FILE).read_bytes()))
        return cls(directory, base, load_file(str(directory / HEADS_FILE)), routes)

    def fold_of(self, record: NLIPair) -> int | None:
        """The fold whose test part holds this pair's idiom or premise (its head never saw them), else None."""
        for link in figurative_links(record):
            fold = self.routes.get(route_key(link))
            if fold is not None:
                return int(fold)
        return None

    def margins(self, x: Any) -> Any:
        """Each fold's non-entailment margin minus its threshold, for every row: [n, K]."""
        import torch

        cols = []
        for f, threshold in enumerate(self.thresholds):
            h = {k: self.heads[f"fold_{f:02d}.{k}"] for k in ("mean", "std", "w", "b")}
            cols.append(((x - h["mean"]) / h["std"]) @ h["w"] + h["b"] - threshold)
        return torch.stack(cols, dim=1)

    def predict(self, records: Sequence[NLIPair], batch_size: int = 64) -> list[Prediction]:
        above = self.margins(nli_features(self.base, records, batch_size))
        preds = []
        for i, r in enumerate(records):
            fold = self.fold_of(r)
            margin = float(above[i, fold]) if fold is not None else float(above[i].mean())
            label = NON_ENTAILMENT if margin > 0 else ENTAILMENT
            meta: dict[str, Any] = {"fold": fold} if fold is not None else {"fold": None, "heads": "mean of the ten folds"}
            preds.append(
                Prediction(
                    id=r.id,
                    prediction=map_label(label, self.target_labels),
                    scores={ENTAILMENT: 0.0, NON_ENTAILMENT: round(margin, 6)},
                    meta=meta,
                )
            )
        return preds


__all__ = ["FoldHeadsModel", "load_base", "nli_features", "route_key"]
