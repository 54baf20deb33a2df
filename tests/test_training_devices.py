"""Decoder-only bases for the trained scorers, device placement, and the trainer's guard against
non-finite updates (found on a GPU run: one NaN step turned a FLUTE classifier into a constant answer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.methods.trained import read_figlang_json, resolve_device
from figlang.methods.trained.multiple_choice import ChoiceScorer, ChoiceScorerModel, is_decoder_only
from figlang.methods.trained.nli_classifier import NLIClassifierModel
from figlang.training import train


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _smollm2_tokenizer(drop_bos: bool = False):
    """smollm2-135m's real tokenizer; ``drop_bos`` mimics Qwen (no start token, pad = end)."""
    from transformers import AutoTokenizer

    from figlang.backends.loading import resolve

    try:
        tok = AutoTokenizer.from_pretrained(resolve("smollm2-135m").path)
    except Exception as err:  # pragma: no cover - the catalog model ships with the dev environment
        pytest.skip(f"smollm2-135m is not available: {err}")
    if drop_bos:
        tok.bos_token = None
        tok.pad_token = tok.eos_token
    return tok


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, save_tiny_llama) -> Path:
    return save_tiny_llama(_smollm2_tokenizer(), tmp_path_factory.mktemp("tiny-llama"), tie=False)


@pytest.fixture(scope="module")
def tiny_qwenlike(tmp_path_factory, save_tiny_llama) -> Path:
    return save_tiny_llama(_smollm2_tokenizer(drop_bos=True), tmp_path_factory.mktemp("tiny-qwenlike"), tie=False)


def test_decoder_only_detection(tiny_llama, minilm_path):
    from transformers import AutoConfig

    assert is_decoder_only(AutoConfig.from_pretrained(tiny_llama))
    assert not is_decoder_only(AutoConfig.from_pretrained(minilm_path))  # BERT has a causal head too, but is an encoder


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_qwenlike"])
def test_choice_scorer_pools_the_last_real_token_of_a_decoder(fixture, request, tmp_path, data_dir):
    base = request.getfixturevalue(fixture)
    records = get_task("idiom-cloze").load("dev", data_dir)[:3]
    model = ChoiceScorerModel.from_base(str(base), "mc")
    assert model.module.pooling == "last"
    model.module.eval()
    # right padding must not change a sequence's score: the pooled token is its own last token, not a pad
    alone = [model.predict([r], batch_size=1)[0].scores for r in records]
    together = [p.scores for p in model.predict(records, batch_size=3)]
    for a, b in zip(alone, together):
        assert a == pytest.approx(b, abs=1e-4)
    feats = model.featurize(records[0])
    first_ids = feats["seqs"][0][0]
    assert first_ids[0] == model.cls_id and first_ids[-1] == model.sep_id
    if fixture == "tiny_qwenlike":  # no start token: the end-of-text token starts the sequence, as in pre-training
        assert model.cls_id == model.tokenizer.eos_token_id
    # save → load keeps the pooling and the answers
    model.save(tmp_path / "m")
    meta = {"method": "mc", "input_format": model.describe(), "training": {}}
    (tmp_path / "m" / "figlang.json").write_text(json.dumps(meta), encoding="utf-8")
    loaded = ChoiceScorerModel.load(tmp_path / "m")
    assert loaded.module.pooling == "last"
    for a, b in zip([p.scores for p in loaded.predict(records, batch_size=2)], together):
        assert a == pytest.approx(b, abs=1e-4)


def test_nli_classifier_on_a_decoder_without_pad_in_its_config(tiny_qwenlike, data_dir):
    records = get_task("flute").load("val", data_dir)[:3]
    model = NLIClassifierModel.from_base(str(tiny_qwenlike), "nli", ("entailment", "contradiction"))
    assert model.module.config.pad_token_id is not None
    model.module.eval()
    alone = [model.predict([r], batch_size=1)[0].scores for r in records]
    together = [p.scores for p in model.predict(records, batch_size=3)]
    for a, b in zip(alone, together):
        assert a["entailment"] == pytest.approx(b["entailment"], abs=1e-4)


def test_device_names():
    assert resolve_device(None) == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(FiglangError, match="unknown device"):
        resolve_device("gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(FiglangError, match="no CUDA GPU"):
            resolve_device("cuda")


def test_non_finite_updates_are_skipped_not_applied(tmp_path, data_dir, minilm_path):
    # an absurd learning rate makes the forward pass overflow after the first update; every later update is skipped
    out = tmp_path / "nan"
    result = train(
        "idiom-cloze",
        "mc",
        str(minilm_path),
        out,
        data_dir=str(data_dir),
        limit=8,
        dev_limit=4,
        report_limit=4,
        epochs=1,
        batch_size=2,
        lr=1e30,
        warmup_ratio=0.0,
        max_length=48,
        threads=1,
        progress=False,
        log_every=1,
    )
    meta = read_figlang_json(out)
    assert meta["skipped_steps"] >= 1
    rows = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert any(r["event"] == "skipped" for r in rows)
    weights = load_file(str(out / "model.safetensors"))
    assert all(bool(torch.isfinite(w).all()) for w in weights.values() if w.is_floating_point())
    assert result.steps == 4  # the schedule went on: skipped steps still count


# --- a linear probe on a frozen base (cpu-probe): the head trains, the encoder never changes ------------------


def test_frozen_decoder_features_from_a_shared_prefix_equal_a_full_forward(tiny_llama, data_dir):
    """The narrative runs once per item and the options continue from its cache: same vectors as encoding each row."""
    records = get_task("idiom-cloze").load("dev", data_dir)[:4]
    model = ChoiceScorerModel.from_base(str(tiny_llama), "mc", frozen=True)
    module = model.module
    batch = model.collate(model.features(records))
    shared = module.pooled(batch["input_ids"], batch["attention_mask"])
    full = module._encode(batch["input_ids"], batch["attention_mask"], None)
    assert torch.allclose(shared, full, atol=1e-5)
    assert len(module.features) == batch["input_ids"].shape[0]  # one vector per distinct sequence
    # knowledge rows (Inf_j N C_i, ordered by option then inference) share their prefixes across options too
    kmodel = ChoiceScorerModel(ChoiceScorer(module.encoder, frozen=True), model.tokenizer, "mc-context", max_inferences=3)
    kbatch = kmodel.collate(kmodel.features(records[:2]))
    calls = []
    hook = module.encoder.register_forward_hook(lambda mod, args, kwargs, out: calls.append(kwargs["input_ids"].shape), with_kwargs=True)
    kshared = kmodel.module.pooled(kbatch["input_ids"], kbatch["attention_mask"])
    hook.remove()
    assert torch.allclose(kshared, module._encode(kbatch["input_ids"], kbatch["attention_mask"], None), atol=1e-5)
    assert len(calls) == 2 * 3 * 2  # per item and inference: one prefix pass, one pass for both options
    # the cache answers the second time (a changed encoder would no longer be asked)
    torch.nn.init.zeros_(module.encoder.embed_tokens.weight)
    assert torch.equal(module.pooled(batch["input_ids"], batch["attention_mask"]), shared)


def test_freeze_base_trains_the_head_only_and_saves_no_encoder_copy(tiny_llama, tmp_path, data_dir):
    from figlang.methods.trained.methods import TrainedMethod

    out = tmp_path / "probe"
    before = load_file(str(tiny_llama / "model.safetensors"))
    result = train(
        "idiom-cloze",
        "mc",
        str(tiny_llama),
        out,
        data_dir=str(data_dir),
        preset="cpu-probe",
        bf16=False,
        limit=24,
        dev_limit=8,
        report_splits=("dev-disjoint",),
        report_limit=8,
        epochs=6,
        batch_size=8,
        lr=1e-2,
        base_layers=1,
        threads=1,
        progress=False,
        log_every=1,
        save_every=1,
    )
    meta = read_figlang_json(out)
    assert meta["input_format"]["frozen_base"] is True and meta["training"]["freeze_base"] is True
    assert meta["input_format"]["base_layers"] == 1  # the probe reads the first of the base's 2 layers
    assert not (out / "model.safetensors").exists()  # the head and figlang.json name the base; no 6 GB copy
    ckpt = torch.load(out / "checkpoint" / "model.pt", weights_only=True)
    assert sorted(ckpt) == ["head.bias", "head.weight"]
    assert (out / "checkpoint" / "features.pt").is_file()
    rows = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in rows if r["event"] == "train"]
    assert losses[-1] < losses[0]  # the head learns the training items
    # the base was not touched, and save → load → eval answers identically
    after = load_file(str(tiny_llama / "model.safetensors"))
    assert all(torch.equal(before[k], after[k]) for k in before)
    records = get_task("idiom-cloze").load("dev-disjoint", data_dir)[:8]
    loaded = ChoiceScorerModel.load(out)
    assert loaded.module.frozen and not loaded.module.features
    assert len(loaded.module.encoder.layers) == 1
    direct = [p.scores for p in loaded.predict(records, batch_size=3)]
    via_eval = TrainedMethod(model=str(out)).predict(records)
    for a, b in zip(direct, via_eval):
        assert a == pytest.approx(b.scores, abs=1e-5)
    saved = result.metrics["dev-disjoint"]["accuracy"]["accuracy"]
    assert saved == pytest.approx(sum(int(max(range(2), key=lambda k: (s[k], -k)) == r.label) for s, r in zip(direct, records)) / 8)


def test_freeze_base_is_refused_for_methods_without_a_head(tmp_path):
    from figlang.training import make_config

    with pytest.raises(FiglangError, match="freeze_base"):
        make_config("flute", "nli", "minilm", tmp_path, freeze_base=True)
    with pytest.raises(FiglangError, match="base_layers"):
        make_config("idiom-cloze", "mc", "minilm", tmp_path, base_layers=3)


def test_keep_first_layers_cuts_the_layer_list_and_the_config(tiny_llama, minilm_path):
    from transformers import AutoModel

    from figlang.methods.trained.multiple_choice import keep_first_layers

    llama = keep_first_layers(AutoModel.from_pretrained(tiny_llama), 1)
    assert len(llama.layers) == 1 and llama.config.num_hidden_layers == 1
    bert = keep_first_layers(AutoModel.from_pretrained(minilm_path), 4)
    assert len(bert.encoder.layer) == 4
    with pytest.raises(FiglangError, match="between 1 and 4"):
        keep_first_layers(bert, 9)


def test_load_encoder_drops_the_lm_head_quietly_but_reports_other_strays(tiny_llama, tmp_path, capfd, caplog):
    import shutil

    from safetensors.torch import load_file, save_file

    from figlang.methods.trained.multiple_choice import load_encoder

    encoder = load_encoder(str(tiny_llama))  # the checkpoint holds lm_head.weight, which the bare encoder has no use for
    assert type(encoder).__name__ == "LlamaModel"
    assert "UNEXPECTED" not in capfd.readouterr().err and not caplog.records

    stray = tmp_path / "stray"
    shutil.copytree(tiny_llama, stray)
    weights = load_file(str(stray / "model.safetensors"))
    weights["model.bogus.weight"] = torch.zeros(2)
    save_file(weights, str(stray / "model.safetensors"), metadata={"format": "pt"})
    with caplog.at_level("WARNING"):
        load_encoder(str(stray))
    assert any("unexpected key" in r.getMessage() and "bogus" in r.getMessage() for r in caplog.records)


def test_probe_eta_covers_the_encoding_epoch_then_the_head_only_pace(monkeypatch, capsys):
    from figlang.training import log

    clock = [0.0]
    monkeypatch.setattr(log.time, "perf_counter", lambda: clock[0])
    progress = log._TrainProgress(True, total=100, done=0, title="mc idiom-cloze")
    progress.tty, progress.bar = False, None
    progress.encode_until = 10  # epoch 1 = 10 steps of encoding at 60 s each, then 90 head-only steps
    clock[0] = 300.0
    assert progress.eta(5) == 300.0  # the rest of epoch 1, not 95 steps at the encoding pace (5,700 s)
    progress.update(5, "loss 0.69", True)
    assert "ETA of epoch 1 (encoding) 5.0 min" in capsys.readouterr().err
    clock[0] = 600.0
    progress.update(10, "loss 0.68", True)  # encoding over: the pace is measured afresh
    clock[0] = 609.0
    progress.update(19, "loss 0.60", True)
    assert progress.eta(19) == 81.0
    assert "elapsed 10.2 min ETA 1.4 min" in capsys.readouterr().err.splitlines()[-1]


def test_bf16_follows_the_cpu(monkeypatch, tmp_path, minilm_path):
    """bfloat16 halves CPU time where the CPU has AMX or is an AMD CPU with AVX512-BF16, is slower with AVX512-BF16
    alone on Intel and emulated (several times slower) without it: 'auto' and a preset's bf16 follow the CPU; an explicit choice is kept."""
    from figlang.core import devices
    from figlang.backends.loading import load_backend
    from figlang.training import trainer

    for flags, prefers in (
        (("avx512f", "avx512_bf16", "amx_bf16"), True),
        (("GenuineIntel", "avx512f", "avx512_bf16"), False),
        (("AuthenticAMD", "avx512f", "avx512_bf16"), True),
        (("AuthenticAMD", "avx2"), False),
        (("avx2",), False),
    ):
        monkeypatch.setattr(devices, "cpu_info", lambda flags=flags: ("a CPU", frozenset(flags)))
        assert devices.cpu_prefers_bf16() is prefers, flags
    for fast, dtype in ((True, "bfloat16"), (False, "float32")):
        monkeypatch.setattr(devices, "cpu_prefers_bf16", lambda fast=fast: fast)  # the one check trainer and backend ask
        assert devices.auto_cpu_dtype() == dtype
        cfg = trainer.make_config("idiom-cloze", "mc", "minilm", tmp_path, preset="cpu-probe")
        assert cfg.bf16 is fast
        assert trainer.make_config("idiom-cloze", "mc", "minilm", tmp_path, preset="cpu-probe", bf16=True).bf16 is True
    monkeypatch.setattr(devices, "cpu_has_fast_bf16", lambda: False)
    backend = load_backend(str(minilm_path), dtype="auto")  # now on a CPU without hardware bf16
    assert backend.dtype == "float32"
    with pytest.warns(UserWarning, match="emulates bfloat16"):  # asked for outright: kept, with a warning
        assert load_backend(str(minilm_path), dtype="bfloat16").dtype == "bfloat16"
