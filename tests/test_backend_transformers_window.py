"""Sliding-window models (Gemma-3) in the Transformers backend: scores and greedy generations must not
depend on batch size or on which other requests share a batch.

A sliding-window mask counts cache slots, not positions. The shared-prefix path right-pads the
contexts of a batch and runs the continuations after the widest one, so a short context's first
tokens could leave the window in a batch where they would not alone. The model is a tiny random
Gemma3 (window 16) built in tmp_path with the tokenizer of the catalog's smollm2-135m (installed
offline by ``make setup``).
"""

from __future__ import annotations

import pytest
import torch

from figlang.backends.base import GenerationRequest, ScoreRequest

WINDOW = 16


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def gemma3(tmp_path_factory):
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    from figlang.backends.loading import load_backend, resolve

    tok = AutoTokenizer.from_pretrained(resolve("smollm2-135m").path)
    root = tmp_path_factory.mktemp("tiny-gemma3")
    torch.manual_seed(0)
    config = Gemma3TextConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=WINDOW,
        layer_types=["sliding_attention", "sliding_attention"],
        max_position_embeddings=256,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    Gemma3ForCausalLM(config).save_pretrained(root)
    tok.save_pretrained(root)
    lm = load_backend(str(root), dtype="float32", threads=1)
    assert lm.info().kind == "causal" and lm._sliding_window == WINDOW
    return lm


def _set(lm, **options):
    for key, value in options.items():
        setattr(lm, key, value)


def test_sliding_window_scores_do_not_depend_on_batching(gemma3):
    # A: 14-token context + 2-token continuation; B: 6 + 10. Each fits the window alone, but B's
    # continuation after A's padded context (13 cache slots + 10) does not.
    a = ScoreRequest(" a" * 14, " b" * 2)
    b = ScoreRequest(" c" * 6, " d" * 10)
    assert [(len(gemma3._encode_prompt(r.context)), len(gemma3._encode_continuation(r.continuation))) for r in (a, b)] == [(14, 2), (6, 10)]
    runs = {}
    for name, reuse, batch, requests in (
        ("naive", False, 16, [a, b]),
        ("shared-1", True, 1, [a, b]),
        ("alone", True, 16, [b]),
        ("shared-16", True, 16, [a, b]),
        ("shared-16-reversed", True, 16, [b, a]),
    ):
        _set(gemma3, prefix_reuse=reuse, batch_size=batch)
        scores = gemma3.score(requests)
        runs[name] = scores[-1] if name == "alone" else (scores[::-1] if name.endswith("reversed") else scores)[1]
    _set(gemma3, prefix_reuse=True, batch_size=16)
    reference = runs["naive"].logprob
    for name, score in runs.items():
        assert score.n_tokens == 10
        assert abs(score.logprob - reference) < 1e-4, (name, score.logprob, reference)


def test_sliding_window_generation_does_not_depend_on_batching(gemma3):
    a = GenerationRequest(" a" * 14, max_new_tokens=1)
    b = GenerationRequest(" c" * 6, max_new_tokens=9)
    assert [len(gemma3._encode_prompt(r.prompt)) for r in (a, b)] == [14, 6]
    _set(gemma3, batch_size=16)
    alone = gemma3.generate([b])[0]
    together = gemma3.generate([a, b])[1]
    _set(gemma3, batch_size=1)
    one_by_one = gemma3.generate([a, b])[1]
    _set(gemma3, batch_size=16)
    assert together == alone == one_by_one


def test_prompts_longer_than_max_length_are_cut_with_a_warning():
    """A context or prompt that loses its start must say so: its score is about a shorter text."""
    import warnings

    from figlang.backends.base import GenerationRequest, ScoreRequest
    from figlang.backends.hf_text import TruncationWarning
    from figlang.backends.loading import load_backend

    lm = load_backend("smollm2-135m", max_length=24, threads=1)
    long = "The cat sat on the mat and looked at the dog, who was asleep by the fire all evening long."
    with pytest.warns(TruncationWarning, match=r"1 of 2 scored contexts were longer than max_length=24"):
        scores = lm.score([ScoreRequest(long, " It purred."), ScoreRequest("Hi.", " It purred.")])
    assert all(s.n_tokens > 0 and s.logprob < 0 for s in scores)
    with pytest.warns(TruncationWarning, match=r"1 of 1 generation prompts"):
        lm.generate([GenerationRequest(long, max_new_tokens=4)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncationWarning)
        lm.score([ScoreRequest("Hi.", " It purred.")])
        lm.generate([GenerationRequest("Hi.", max_new_tokens=4)])
