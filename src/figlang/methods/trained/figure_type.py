"""The figure-type model: sarcasm, simile, metaphor or idiom, for a sentence or a pair that comes without one.

Two linear heads (multinomial logistic regression) on the frozen catalog MiniLM's sentence embeddings (mean of
the last layer over real tokens, L2-normalised, as sentence-transformers pools all-MiniLM-L6-v2):

- ``sentence``: the figurative sentence alone (FLUTE's hypothesis): for a sentence with no premise;
- ``pair``: [h, p, h − p] of the hypothesis and premise: for an NLI pair (a metaphor often differs from its
  literal premise by one word, which the difference shows).

Trained on FLUTE ``train-fit``; the L2 penalty of each head is chosen on FLUTE ``selection`` (accuracy, ties to
the larger penalty); FLUTE val is scored once, after the choice, by figure type. The shipped artefact
(``figlang/resources/heads/figure-type-minilm``: the two heads, a few KB, and ``record.json``) is read by
:func:`load_figure_type`; the encoder is the catalog's ``minilm``, checked against the revision trained on.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.methods.trained.heads import heads_dir
from figlang.backends.loading import resolve
from figlang.data.registry import get_task
from figlang.core.context import RunContext, run_context
from figlang.core.provenance import code_provenance, data_checksums, library_versions, split_fingerprint

FIGURE_TYPES = ("idiom", "metaphor", "sarcasm", "simile")
HEADS_FILE = "figure_type_heads.safetensors"
RECORD_FILE = "record.json"
SHIPPED_NAME = "figure-type-minilm"
PENALTIES = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)  # L2 on the weights, per head, chosen on selection
ENCODER = "minilm"
MAX_BYTES = 1024 * 1024


def shipped_dir() -> Path:
    return heads_dir() / SHIPPED_NAME


def encoder(reference: str = ENCODER) -> tuple[Any, Any, dict[str, Any]]:
    """The frozen encoder and tokenizer, with its identity (catalog name, revision)."""
    from transformers import AutoModel, AutoTokenizer

    found = resolve(reference)
    model = AutoModel.from_pretrained(found.path)
    model.eval()
    identity = {"catalog": reference, "revision": found.revision, "hub_id": (found.details or {}).get("hub_id")}
    return model, AutoTokenizer.from_pretrained(found.path), identity


def embed(model: Any, tokenizer: Any, texts: Sequence[str], batch_size: int = 64, max_length: int = 128) -> Any:
    """Mean-pooled, L2-normalised last-layer embeddings, one row per text (sorted by length to save padding)."""
    import torch

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = torch.zeros(len(texts), model.config.hidden_size)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            batch = tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            out[idx] = torch.nn.functional.normalize(pooled, dim=-1)
    return out


def pair_features(hyp: Any, prem: Any) -> Any:
    import torch

    return torch.cat([hyp, prem, hyp - prem], dim=-1)


def fit_head(x: Any, y: Any, penalty: float, steps: int = 200) -> tuple[Any, Any]:
    """Multinomial logistic regression by L-BFGS from zeros (deterministic): weight [k, d], bias [k]."""
    import torch

    w = torch.zeros(len(FIGURE_TYPES), x.shape[1], requires_grad=True)
    b = torch.zeros(len(FIGURE_TYPES), requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=steps, history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(x @ w.T + b, y) + penalty * (w**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach(), b.detach()


def _accuracy(w: Any, b: Any, x: Any, y: Any) -> float:
    return float(((x @ w.T + b).argmax(-1) == y).float().mean())


def by_type(w: Any, b: Any, x: Any, y: Any) -> dict[str, Any]:
    """Accuracy overall and per gold figure type (n and correct), with the confusion counts."""
    pred = (x @ w.T + b).argmax(-1)
    out: dict[str, Any] = {"accuracy": float((pred == y).float().mean()), "n": int(len(y))}
    for k, name in enumerate(FIGURE_TYPES):
        mask = y == k
        out[name] = {"n": int(mask.sum()), "correct": int((pred[mask] == k).sum()), "accuracy": float((pred[mask] == k).float().mean())}
        out[name]["predicted_as"] = {other: int((pred[mask] == j).sum()) for j, other in enumerate(FIGURE_TYPES)}
    return out


def _split_features(task: Any, split: str, root: Path, model: Any, tok: Any) -> dict[str, Any]:
    import torch

    records = task.load(split, root)
    hyp = embed(model, tok, [r.hypothesis for r in records])
    prem = embed(model, tok, [r.premise for r in records])
    y = torch.tensor([FIGURE_TYPES.index(r.figure_type) for r in records])
    return {"records": records, "sentence": hyp, "pair": pair_features(hyp, prem), "y": y}


def _features(out: Path, root: Path, model: Any, tok: Any) -> dict[str, dict[str, Any]]:
    """The three splits' features, kept in ``out/features.pt`` so that a rerun does not encode again."""
    import torch

    task = get_task("flute")
    cache = out / "features.pt"
    if cache.is_file():
        saved = torch.load(cache, weights_only=True)
        return {s: {**saved[s], "records": task.load(s, root)} for s in saved}
    feats = {s: _split_features(task, s, root, model, tok) for s in ("train-fit", "selection", "val")}
    torch.save({s: {k: v for k, v in f.items() if k != "records"} for s, f in feats.items()}, cache)
    return feats


def choose_head(train: dict[str, Any], selection: dict[str, Any], kind: str) -> dict[str, Any]:
    """Fit the head at each penalty on train-fit and keep the best on selection (ties: the larger penalty)."""
    tried = []
    for penalty in PENALTIES:
        w, b = fit_head(train[kind], train["y"], penalty)
        tried.append({"penalty": penalty, "selection_accuracy": _accuracy(w, b, selection[kind], selection["y"]), "w": w, "b": b})
    best = max(tried, key=lambda t: (round(t["selection_accuracy"], 12), t["penalty"]))
    return {**best, "tried": [{k: t[k] for k in ("penalty", "selection_accuracy")} for t in tried]}


def train_figure_type(
    out: str | Path, data_dir: str | Path | None = None, threads: int = 2, *, ctx: RunContext | None = None
) -> dict[str, Any]:
    """Train both heads, choose each penalty on selection, score val once; writes ``out`` (heads and record). FLUTE is
    read from the run context's data folder (or ``data_dir``)."""
    import torch
    from safetensors.torch import save_file

    torch.set_num_threads(threads)
    started = time.perf_counter()
    code = code_provenance()  # the code this run started from (the tree may change while it runs)
    out, root = Path(out), run_context(ctx, data_dir=data_dir).data_dir
    out.mkdir(parents=True, exist_ok=True)
    model, tok, identity = encoder()
    feats = _features(out, root, model, tok)
    heads, record_heads = {}, {}
    for kind in ("sentence", "pair"):
        chosen = choose_head(feats["train-fit"], feats["selection"], kind)
        heads[f"{kind}.weight"], heads[f"{kind}.bias"] = chosen["w"].contiguous(), chosen["b"].contiguous()
        record_heads[kind] = {
            "input": "the figurative sentence (FLUTE hypothesis)" if kind == "sentence" else "[h, p, h - p] of hypothesis and premise",
            "penalty": chosen["penalty"],
            "selection_accuracy": chosen["selection_accuracy"],
            "tried": chosen["tried"],
            "val": by_type(chosen["w"], chosen["b"], feats["val"][kind], feats["val"]["y"]),
        }
    save_file(heads, str(out / HEADS_FILE))
    _write_val_predictions(out / "val_predictions.jsonl", feats["val"], heads)
    task = get_task("flute")
    record = {
        "name": SHIPPED_NAME,
        "what": "figure type (idiom / metaphor / sarcasm / simile): two linear heads on the frozen catalog MiniLM's sentence embeddings",
        "labels": list(FIGURE_TYPES),
        "encoder": {**identity, "pooling": "mean over real tokens, L2-normalised", "max_length": 128},
        "heads": record_heads,
        "file": {"name": HEADS_FILE, "bytes": (out / HEADS_FILE).stat().st_size},
        "task": "flute",
        "train_split": "train-fit",
        "selection_split": "selection",
        "report_split": "val",
        "choices_made_on": {"penalty": "selection"},
        "split_ids_sha256": {s: split_fingerprint(feats[s]["records"]) for s in ("train-fit", "selection", "val")},
        "data_files": data_checksums(sorted({f for s in ("train", "val") for f in task.files(s, root)}), root),
        "seed": None,
        "deterministic": "L-BFGS from zero weights on fixed features: no randomness",
        "code": code,
        "command": "figlang figure-type --train OUT --data-dir DATA",
        "versions": library_versions(),
        "seconds": round(time.perf_counter() - started, 1),
    }
    (out / RECORD_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def _write_val_predictions(path: Path, val: dict[str, Any], heads: dict[str, Any]) -> None:
    """Per-item val answers of both heads (id, gold, each head's type and probabilities), for the results folder."""
    probs = {k: (val[k] @ heads[f"{k}.weight"].T + heads[f"{k}.bias"]).softmax(-1) for k in ("sentence", "pair")}
    with path.open("w", encoding="utf-8") as fh:
        for i, record in enumerate(val["records"]):
            row: dict[str, Any] = {"id": record.id, "gold": record.figure_type}
            for kind, p in probs.items():
                row[kind] = FIGURE_TYPES[int(p[i].argmax())]
                row[f"{kind}_probabilities"] = {t: round(float(v), 6) for t, v in zip(FIGURE_TYPES, p[i])}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def ship_figure_type(run_dir: str | Path, target: str | Path | None = None) -> Path:
    """Copy a finished run's heads and record into the package (``figure-type-minilm``)."""
    run, target = Path(run_dir), Path(target) if target is not None else shipped_dir()
    record = json.loads((run / RECORD_FILE).read_text(encoding="utf-8"))
    if (run / HEADS_FILE).stat().st_size > MAX_BYTES:
        raise FiglangError(f"{run / HEADS_FILE} is over {MAX_BYTES:,} bytes; a shipped figure-type model must stay under 1 MB")
    if (record.get("code") or {}).get("git_dirty") is not False:
        raise FiglangError(f"{run}: not made from a clean commit (code {record.get('code')}); commit, then train again")
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run / HEADS_FILE, target / HEADS_FILE)
    shutil.copyfile(run / RECORD_FILE, target / RECORD_FILE)
    return target


class FigureTypeModel:
    """The shipped (or a trained) figure-type model: ``predict(sentence, premise=None)``."""

    def __init__(self, folder: str | Path | None = None) -> None:
        from safetensors.torch import load_file

        self.folder = Path(folder) if folder is not None else shipped_dir()
        if not (self.folder / HEADS_FILE).is_file():
            raise FiglangError(f"no figure-type model at {self.folder} (train one with `figlang figure-type --train OUT`)")
        self.record = json.loads((self.folder / RECORD_FILE).read_text(encoding="utf-8"))
        self.heads = load_file(str(self.folder / HEADS_FILE))
        self.model, self.tokenizer, identity = encoder(self.record["encoder"]["catalog"])
        if self.record["encoder"].get("revision") and identity["revision"] != self.record["encoder"]["revision"]:
            raise FiglangError(f"the encoder {identity} is not the one the figure-type heads were trained on ({self.record['encoder']})")

    def probabilities(self, sentences: Sequence[str], premises: Sequence[str] | None = None) -> list[dict[str, float]]:
        """Each sentence's figure-type probabilities (the pair head when its premise is given)."""
        hyp = embed(self.model, self.tokenizer, list(sentences))
        kind, x = "sentence", hyp
        if premises is not None:
            kind, x = "pair", pair_features(hyp, embed(self.model, self.tokenizer, list(premises)))
        probs = (x @ self.heads[f"{kind}.weight"].T + self.heads[f"{kind}.bias"]).softmax(-1)
        return [dict(zip(FIGURE_TYPES, map(float, row))) for row in probs]

    def predict(self, sentence: str, premise: str | None = None) -> tuple[str, dict[str, float]]:
        probs = self.probabilities([sentence], [premise] if premise is not None else None)[0]
        return max(FIGURE_TYPES, key=lambda t: probs[t]), probs


__all__ = ["FIGURE_TYPES", "FigureTypeModel", "embed", "fit_head", "ship_figure_type", "shipped_dir", "train_figure_type"]
