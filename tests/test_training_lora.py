"""LoRA adapters for the NLI classifier: trained on a fixed catalog base (MiniLM, real FLUTE pairs), saved as the
adapter alone, read back onto the base found by reference, with the base's weights untouched."""

from __future__ import annotations

import json

import pytest
import torch

from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.methods.trained import load_trained, read_figlang_json
from figlang.training import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = dict(limit=16, dev_limit=8, report_limit=8, epochs=2, batch_size=4, lr=5e-3, warmup_ratio=0.0, max_length=64, select="last")
TINY |= dict(patience=0, threads=1, progress=False, lora_rank=4)


def test_lora_classifier_trains_ships_small_and_reloads_the_same(tmp_path, data_dir, monkeypatch):
    out = tmp_path / "lora"
    result = train("flute", "nli", "minilm", out, data_dir=str(data_dir), **TINY)
    meta = read_figlang_json(out)
    assert meta["lora"]["rank"] == 4 and meta["base_model"]["reference"] == "minilm" and meta["base_model"]["revision"]
    files = {p.name for p in out.iterdir() if p.is_file()}
    assert "adapter.safetensors" in files and "model.safetensors" not in files and "tokenizer.json" not in files
    assert (out / "adapter.safetensors").stat().st_size < 1_000_000  # minilm rank 4: the adapters and the head, float16

    records = get_task("flute").load("val", data_dir)[:8]
    loaded = load_trained(out)
    again = load_trained(out)
    scores = [p.scores for p in loaded.predict(records)]
    assert scores == [p.scores for p in again.predict(records)]
    # the saved model is what the run reported on: the report split's accuracy is the reloaded model's
    assert result.metrics["val"]["accuracy"]["n"] == 8

    # the base is unchanged and the adapters changed the answers (a trained LoRA is not the identity)
    from transformers import AutoModelForSequenceClassification

    from figlang.backends.loading import resolve

    pristine = AutoModelForSequenceClassification.from_pretrained(resolve("minilm").path, num_labels=2)
    base = loaded.module.get_base_model()
    name = "bert.encoder.layer.0.attention.self.query"
    assert torch.equal(base.get_submodule(name).base_layer.weight, pristine.get_submodule(name).weight)
    loaded.module.disable_adapter_layers()
    without = [p.scores for p in loaded.predict(records)]
    assert without != scores

    # shipped as figlang:NAME (the adapter and the record only), it answers as the run's folder does
    from figlang.evaluation import evaluate
    from figlang.methods.trained.heads import ship_head

    shipped = ship_head(out, "flute-lora-test", root=tmp_path / "heads", allow_dirty=True)  # the suite may run in a modified tree
    assert {p.name for p in shipped.iterdir()} == {"adapter.safetensors", "figlang.json", "record.json"}
    record = json.loads((shipped / "record.json").read_text(encoding="utf-8"))
    assert record["lora"]["rank"] == 4 and record["head"]["file"] == "adapter.safetensors" and record["training"]["lora_rank"] == 4
    monkeypatch.setenv("FIGLANG_HEADS_DIR", str(tmp_path / "heads"))
    run = evaluate("flute", "trained", "figlang:flute-lora-test", split="val", data_dir=data_dir, limit=8, use_cache=False)
    expected = {p.id: p.scores for p in again.predict(run.records)}
    assert len(expected) == 8 and all(run.predictions[i].scores == pytest.approx(s, abs=1e-6) for i, s in expected.items())

    # a base with another revision is refused
    meta["base_model"]["revision"] = "sha256:" + "0" * 64
    (out / "figlang.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(FiglangError, match="not the one this head was trained on"):
        load_trained(out)


def test_lora_is_for_classifiers_only(tmp_path, data_dir):
    with pytest.raises(FiglangError, match="lora_rank trains LoRA adapters of an NLI classifier"):
        train("idiom-cloze", "mc", "minilm", tmp_path / "x", data_dir=str(data_dir), **TINY)


def test_lora_checkpoint_holds_the_trained_tensors_only_and_resumes(tmp_path, data_dir):
    """A LoRA run's checkpoint keeps the adapters and head (not the fixed base), and a rerun continues from it
    to the same model as an uninterrupted run."""
    opts = {**TINY, "epochs": 1, "save_every": 1, "select": "last"}
    whole = train("flute", "nli", "minilm", tmp_path / "whole", data_dir=str(data_dir), **opts)
    cut = tmp_path / "cut"
    part = train("flute", "nli", "minilm", cut, data_dir=str(data_dir), **{**opts, "max_minutes": 1e-6})  # stops after a step
    assert part.stopped == "time-budget" and part.steps == 1
    saved = torch.load(cut / "checkpoint" / "model.pt", weights_only=True)
    assert saved and all("lora_" in k or "classifier" in k for k in saved)
    resumed = train("flute", "nli", "minilm", cut, data_dir=str(data_dir), **opts)
    assert resumed.resumed and resumed.steps == whole.steps
    assert (cut / "adapter.safetensors").read_bytes() == (tmp_path / "whole" / "adapter.safetensors").read_bytes()
