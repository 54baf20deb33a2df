"""An OpenAI-compatible HTTP backend: vLLM, the llama-cpp-python server, Ollama, OpenAI itself.

Scoring uses ``/v1/completions`` with ``echo: true`` and ``logprobs: 1``: the server returns
the prompt's tokens with their log-probabilities and character offsets, and the backend sums
the log-probabilities of the tokens that lie in the continuation. Servers that cannot do that
(no echo, no log-probabilities, chat-only endpoints) raise a :class:`CapabilityError` that
says which methods still work.

Generation uses ``/v1/completions`` (a plain prompt) or ``/v1/chat/completions`` (messages).
:meth:`OpenAIBackend.answer_labels` asks the chat endpoint for one of a closed set of labels
and parses the answer with :func:`parse_label` (an unparseable answer is marked invalid,
never guessed).

Every successful request/response pair is stored in a :class:`RequestCache`, keyed by the
endpoint's identity (base URL, model, optional revision), the endpoint and the payload: a
run that dies mid-way resumes where it stopped, and a repeated run sends nothing. Failures
are never cached. Requests run on a bounded thread pool; results come back in request order.
Transient failures (connection errors, timeouts, HTTP 429 and 5xx) are retried with
exponential backoff, bounded by a number of attempts and a total time.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpx

from figlang.backends.cache import RequestCache, cache_key
from figlang.backends.openai_labels import LabelAnswer, parse_label
from figlang.backends.openai_responses import (
    ALIGNMENT_PROBE,
    CHAT,
    COMPLETIONS,
    SCORING_HINT,
    _alignment_parser,
    _error_text,
    _retry_after,
    _score_parser,
    _text_parser,
    _with_progress,
)
from figlang.backends.base import (
    BackendError,
    BackendInfo,
    CapabilityError,
    ChatMessage,
    ContinuationScore,
    GenerationRequest,
    LanguageModel,
    Sampling,
    ScoreRequest,
    sampling_of,
)

ENV_BASE_URL = ("FIGLANG_OPENAI_BASE_URL", "OPENAI_BASE_URL")
ENV_API_KEY = ("FIGLANG_OPENAI_API_KEY", "OPENAI_API_KEY")
ENV_MODEL = ("FIGLANG_OPENAI_MODEL",)

CACHE_NAMESPACE = "openai"


def _env(names: Sequence[str]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def normalize_base_url(url: str) -> str:
    """``http://host:8000`` and ``http://host:8000/v1/`` both become ``http://host:8000/v1``.

    A URL with a path of its own (``/api/v1``, ``/openai/v1``) is kept as it is, less a trailing slash.
    """
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BackendError(f"not an http(s) base URL: {url!r} (expected e.g. http://127.0.0.1:8000/v1)")
    path = parts.path.rstrip("/")
    if path in ("", "/"):
        path = "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatRequest(Sampling):
    """A chat to continue through ``/v1/chat/completions`` (sampling options as in GenerationRequest, 64 new tokens by default)."""

    messages: tuple[ChatMessage, ...]
    max_new_tokens: int = field(default=64, kw_only=True)


@dataclass(frozen=True)
class RetryPolicy:
    """Retries on connection errors, timeouts, HTTP 429 and 5xx: bounded in attempts and in total time."""

    max_attempts: int = 5
    max_time: float = 120.0  # seconds, per request, from its first attempt
    backoff: float = 0.5  # first delay; doubles each attempt
    backoff_max: float = 16.0
    jitter: float = 0.1  # up to this fraction added to each delay

    def delay(self, attempt: int) -> float:
        base = min(self.backoff_max, self.backoff * (2 ** (attempt - 1)))
        return base * (1.0 + random.uniform(0.0, self.jitter))


@dataclass
class _Job:
    key: str
    endpoint: str
    payload: dict[str, Any]
    parse: Callable[[dict[str, Any]], Any]


@dataclass
class Stats:
    """What the backend did (for logs and tests)."""

    http_requests: int = 0  # attempts sent, retries included
    responses: int = 0  # successful responses
    retries: int = 0
    cache_hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)


_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504, 507, 520, 521, 522, 523, 524, 529}


class OpenAIBackend(LanguageModel):
    """A model behind an OpenAI-compatible HTTP endpoint.

    Parameters
    ----------
    model:
        The model name the server knows; else ``$FIGLANG_OPENAI_MODEL``; else the single model
        ``GET /v1/models`` lists.
    base_url:
        ``http://127.0.0.1:8000/v1`` (``/v1`` is added to a bare host); else ``$FIGLANG_OPENAI_BASE_URL``,
        then ``$OPENAI_BASE_URL``.
    api_key:
        Else ``$FIGLANG_OPENAI_API_KEY``, then ``$OPENAI_API_KEY``; never stored in info() or the cache.
    revision:
        What pins the served weights (a GGUF hash, a hub commit); goes into info() and the cache key.
    cache / use_cache:
        A RequestCache (or a directory for one); by default figlang's cache directory. ``use_cache=False``
        sends every request.
    chat_only:
        The endpoint has no usable ``/v1/completions``: scoring raises CapabilityError at once and
        generate() sends each prompt as a single user message to the chat endpoint.
    concurrency:
        Requests in flight at once.
    timeout:
        Seconds for one HTTP request (connecting: at most 10).
    retry:
        A RetryPolicy (attempts, total time, backoff).
    score_max_tokens:
        ``max_tokens`` of a scoring request. 1 by default: every server accepts it (the generated token
        lies after the prompt and is ignored), whereas some reject 0 and llama-cpp-python reads 0 as
        "no limit". 0 saves a token where it is accepted; a server that rejects 0 gets 1 from then on.
    empty_context:
        Text that stands in for an empty context when scoring (e.g. the model's BOS token,
        ``"<|endoftext|>"``): echo gives the first prompt token no log-probability, so an empty context
        cannot be scored without one.
    check_alignment:
        Before the first scoring request, score a counting sequence once (cached) and check that the
        echoed log-probabilities belong to their own tokens: llama-cpp-python's server shifts them by one
        token for models that add no BOS token, which would make every score wrong (CapabilityError).
    send_top_k:
        Send ``top_k`` (not part of OpenAI's API; vLLM, llama.cpp and Ollama accept it). A server that
        rejects it gets requests without it from then on (with a warning).
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        revision: str | None = None,
        cache: RequestCache | str | Path | None = None,
        use_cache: bool = True,
        chat_only: bool = False,
        concurrency: int = 4,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        score_max_tokens: int = 1,
        empty_context: str | None = None,
        send_top_k: bool = True,
        check_alignment: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        url = base_url or _env(ENV_BASE_URL)
        if not url:
            raise BackendError(
                "no base URL for the OpenAI-compatible backend: pass --base-url (base_url=...) or set "
                "FIGLANG_OPENAI_BASE_URL, e.g. http://127.0.0.1:8000/v1"
            )
        self.base_url = normalize_base_url(url)
        self._model = model or _env(ENV_MODEL)
        self._api_key = api_key or _env(ENV_API_KEY)
        self.revision = revision
        self.chat_only = chat_only
        self.can_score = not chat_only
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        if score_max_tokens not in (0, 1):
            raise ValueError("score_max_tokens must be 0 or 1")
        self.score_max_tokens = score_max_tokens
        self.empty_context = empty_context
        self.send_top_k = send_top_k
        self.extra_body = dict(extra_body or {})
        self.stats = Stats()
        self._sticky_lock = threading.Lock()
        self._drop_top_k = False
        self._drop_min_tokens = False
        self._zero_rejected = False
        self.check_alignment = check_alignment
        self._alignment_lock = threading.Lock()
        self._alignment_checked = False

        if isinstance(cache, RequestCache):
            self.cache: RequestCache | None = cache
            self._owns_cache = False
        elif use_cache:
            self.cache = RequestCache(cache)
            self._owns_cache = True
        else:
            self.cache = None
            self._owns_cache = False

        all_headers = {"Accept": "application/json", **(headers or {})}
        if self._api_key:
            all_headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.Client(
            headers=all_headers,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            event_hooks=dict(event_hooks) if event_hooks else None,
            transport=transport,
        )

    # ---------------------------------------------------------------- identity
    @property
    def model(self) -> str:
        if self._model is None:
            self._model = self._discover_model()
        return self._model

    def _discover_model(self) -> str:
        data = self._request("GET", "models", None)
        ids = [m["id"] for m in (data.get("data") or []) if isinstance(m, dict) and m.get("id")]
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise BackendError(f"{self.base_url}/models lists no model; pass the model name (--model)")
        raise BackendError(f"{self.base_url}/models lists several models {ids}; pass one with --model")

    def info(self) -> BackendInfo:
        return BackendInfo(
            backend="openai",
            model=self.model,
            revision=self.revision,
            kind="causal",
            options=self._options(),
        )

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"base_url": self.base_url, "chat_only": self.chat_only}
        if self.empty_context is not None:
            options["empty_context"] = self.empty_context
        if self.extra_body:
            options["extra_body"] = dict(self.extra_body)
        return options

    def run_notes(self) -> dict[str, Any]:
        dropped = [name for name, on in (("top_k", self._drop_top_k), ("min_tokens", self._drop_min_tokens)) if on]
        if not dropped:
            return {}
        return {
            "not_sent": dropped,
            "why": f"{self.base_url} rejected {' and '.join(dropped)}: requests were sent without "
            "them, so the server sampled with its own defaults for those fields (the method's configuration still names them)",
        }

    def identity(self) -> dict[str, Any]:
        """What the cache keys on besides endpoint and payload (never the API key)."""
        return {"base_url": self.base_url, "model": self.model, "revision": self.revision}

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self._model!r}, base_url={self.base_url!r})"

    # ---------------------------------------------------------------- lifecycle
    def close(self) -> None:
        self._client.close()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- scoring
    def score(self, requests: Sequence[ScoreRequest]) -> list[ContinuationScore]:
        if self.chat_only:
            raise CapabilityError(
                f"{self.base_url} is configured as chat-only (chat_only=True): it cannot score continuations. " + SCORING_HINT
            )
        if requests and self.check_alignment:
            self._verify_alignment()
        jobs = []
        for r in requests:
            context = r.context
            if context == "":
                if not self.empty_context:
                    raise BackendError(
                        f"cannot score {r.continuation!r} after an empty context through {self.base_url}/completions: "
                        "echo gives the first prompt token no log-probability. Pass empty_context= the model's "
                        "BOS token (e.g. '<|endoftext|>') to stand in for it"
                    )
                context = self.empty_context
            payload = {
                "model": self.model,
                "prompt": context + r.continuation,
                "max_tokens": self.score_max_tokens,
                "echo": True,
                "logprobs": 1,
                "temperature": 0.0,
                **self.extra_body,
            }
            jobs.append(self._job(COMPLETIONS, payload, _score_parser(self.base_url, context, r.continuation)))
        return self._run(jobs)

    def _verify_alignment(self) -> None:
        """Score ALIGNMENT_PROBE once; refuse a server whose echoed log-probabilities are shifted by a token."""
        with self._alignment_lock:
            if self._alignment_checked:
                return
            payload = {
                "model": self.model,
                "prompt": ALIGNMENT_PROBE,
                "max_tokens": self.score_max_tokens,
                "echo": True,
                "logprobs": 1,
                "temperature": 0.0,
                **self.extra_body,
            }
            own, next_, positions = self._run([self._job(COMPLETIONS, payload, _alignment_parser(self.base_url))])[0]
            if next_ >= 3 and next_ > 2 * own:
                raise CapabilityError(
                    f"{self.base_url}/completions returns prompt log-probabilities shifted by one token: on the "
                    f"counting sequence {ALIGNMENT_PROBE[:20]!r}…, the reported top token at a position is the "
                    f"following token {next_} times out of {positions} and the token itself {own} times. Scores "
                    "from it would be wrong. This is a known bug of the llama-cpp-python server for models that add "
                    "no BOS token (abetlen/llama-cpp-python#1983); start it with --kv_overrides "
                    "tokenizer.ggml.add_bos_token=bool:true, or use another server (vLLM). "
                    "check_alignment=False skips this check. " + SCORING_HINT
                )
            self._alignment_checked = True

    # ---------------------------------------------------------------- generation
    def _sampling(self, r: GenerationRequest | ChatRequest, seed: int) -> dict[str, Any]:
        """Sampling fields of a payload: greedy is temperature 0; top_k only where the server takes it."""
        body: dict[str, Any] = {"max_tokens": r.max_new_tokens, "seed": seed}
        if r.do_sample:
            body["temperature"] = r.temperature
            if r.top_p is not None:
                body["top_p"] = r.top_p
            if r.top_k is not None and self.send_top_k:
                body["top_k"] = r.top_k
        else:
            body["temperature"] = 0.0
        if r.min_new_tokens > 0:  # vLLM's name; servers that reject it lose it (see _fallback)
            body["min_tokens"] = r.min_new_tokens
        if r.stop:
            body["stop"] = list(r.stop)
        return {**body, **self.extra_body}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[str]]:
        """``n`` continuations per prompt. Greedy requests are sent once and repeated ``n`` times.

        Sampled requests with ``n > 1`` are sent as ``n`` requests with seeds ``seed, seed+1, …``, so the
        samples do not depend on batching nor on whether the server implements ``n``. With
        ``chat_only=True`` each prompt is sent as a single user message to the chat endpoint.
        """
        if self.chat_only:
            chats = [ChatRequest(messages=(ChatMessage("user", r.prompt),), **sampling_of(r)) for r in requests]
            return self.chat(chats)
        return self._sample_many(
            requests, lambda r, seed: {"model": self.model, "prompt": r.prompt, **self._sampling(r, seed)}, COMPLETIONS
        )

    def chat(self, requests: Sequence[ChatRequest]) -> list[list[str]]:
        """``n`` replies per chat through ``/v1/chat/completions`` (same sampling rules as generate())."""

        def payload(r: ChatRequest, seed: int) -> dict[str, Any]:
            messages = [{"role": m.role, "content": m.content} for m in r.messages]
            return {"model": self.model, "messages": messages, **self._sampling(r, seed)}

        return self._sample_many(requests, payload, CHAT)

    def chat_text(self, messages: Sequence[ChatMessage] | str, **options: Any) -> str:
        """One reply to one chat (a string is a single user message); options as in ChatRequest."""
        if isinstance(messages, str):
            messages = [ChatMessage("user", messages)]
        return self.chat([ChatRequest(messages=tuple(messages), **options)])[0][0]

    def _sample_many(self, requests: Sequence[Any], make_payload: Callable[[Any, int], dict[str, Any]], endpoint: str) -> list[list[str]]:
        jobs: list[_Job] = []
        spans: list[tuple[int, int, int]] = []  # (first job, jobs, copies)
        for r in requests:
            if r.n < 1:
                raise ValueError(f"n must be at least 1, got {r.n}")
            sends = r.n if r.do_sample else 1
            spans.append((len(jobs), sends, 1 if r.do_sample else r.n))
            for i in range(sends):
                jobs.append(self._job(endpoint, make_payload(r, r.seed + i), _text_parser(self.base_url, endpoint, tuple(r.stop))))
        texts = self._run(jobs)
        out: list[list[str]] = []
        for first, sends, copies in spans:
            out.append([t for t in texts[first : first + sends] for _ in range(copies)])
        return out

    def chat_prompt(self, messages: Sequence[ChatMessage]) -> str:
        raise CapabilityError(
            f"{self.base_url} applies the chat template on the server, so figlang cannot render it as a prompt "
            "to score; send the messages with OpenAIBackend.chat() or answer_labels() instead"
        )

    @property
    def has_chat_endpoint(self) -> bool:
        """Chats go to /v1/chat/completions, where the server applies the model's template."""
        return True

    # ---------------------------------------------------------------- closed label sets
    def answer_labels(
        self,
        questions: Sequence[Sequence[ChatMessage] | str],
        labels: Sequence[str],
        *,
        aliases: Mapping[str, Sequence[str]] | None = None,
        max_new_tokens: int = 16,
        instruction: str | None = "Answer with exactly one of: {labels}.",
        seed: int = 0,
    ) -> list[LabelAnswer]:
        """Ask the chat endpoint for one label per question and parse each answer against ``labels``.

        For endpoints that offer no log-probabilities. ``instruction`` (with ``{labels}``) is appended to
        the last user turn; pass ``None`` when the question already says how to answer. Answers are
        greedy (temperature 0) and parsed with :func:`parse_label`: an unparseable answer comes back
        with ``valid=False`` and its raw text, never replaced by a guess.
        """
        chats = []
        for q in questions:
            messages = [ChatMessage("user", q)] if isinstance(q, str) else list(q)
            if instruction:
                note = instruction.format(labels=", ".join(labels))
                last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
                if last is None:
                    messages.append(ChatMessage("user", note))
                else:
                    messages[last] = ChatMessage("user", f"{messages[last].content}\n\n{note}")
            chats.append(ChatRequest(messages=tuple(messages), max_new_tokens=max_new_tokens, seed=seed))
        replies = self.chat(chats)
        return [parse_label(r[0], labels, aliases) for r in replies]

    # ---------------------------------------------------------------- plumbing
    def _job(self, endpoint: str, payload: dict[str, Any], parse: Callable[[dict[str, Any]], Any]) -> _Job:
        key = cache_key(CACHE_NAMESPACE, self.identity(), endpoint, payload)
        return _Job(key, endpoint, payload, parse)

    def _run(self, jobs: list[_Job]) -> list[Any]:
        """Answer jobs from the cache, send the rest (bounded concurrency), return results in job order.

        Jobs with the same key (the same endpoint and payload) share one request; each job still parses
        the response itself (two score requests can share a prompt but not the context boundary).
        """
        if not jobs:
            return []
        raw: dict[str, Any] = self.cache.get_many({j.key for j in jobs}) if self.cache is not None else {}
        self.stats.add(cache_hits=len(raw))
        todo: dict[str, _Job] = {}
        for j in jobs:
            if j.key not in raw:
                todo.setdefault(j.key, j)

        def one(job: _Job) -> dict[str, Any]:
            data = self._request("POST", job.endpoint, job.payload)
            job.parse(data)  # a response we cannot use is never cached
            if self.cache is not None:
                self.cache.put(job.key, data, namespace=CACHE_NAMESPACE)
            return data

        if todo:
            pending = list(todo.values())
            if self.concurrency == 1 or len(pending) == 1:
                for done, job in enumerate(pending):
                    try:
                        raw[job.key] = one(job)
                    except BackendError as exc:
                        raise _with_progress(exc, done, len(pending), self.cache is not None) from exc
            else:
                pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="figlang-openai")
                try:
                    futures: dict[Future[Any], int] = {pool.submit(one, job): i for i, job in enumerate(pending)}
                    finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
                    if any(f.exception() is not None for f in finished):
                        for f in futures:
                            f.cancel()
                        wait(futures)  # requests already in flight finish (and are cached)
                        failed = [f for f in futures if not f.cancelled() and f.exception() is not None]
                        first = min(failed, key=futures.__getitem__)
                        done = sum(1 for f in futures if not f.cancelled() and f.exception() is None)
                        error = cast(BaseException, first.exception())  # not None: ``failed`` holds futures that raised
                        if isinstance(error, BackendError):
                            raise _with_progress(error, done, len(pending), self.cache is not None) from error
                        raise error
                    for f, i in futures.items():
                        raw[pending[i].key] = f.result()
                finally:
                    pool.shutdown(wait=True, cancel_futures=True)
        return [j.parse(raw[j.key]) for j in jobs]

    def _request(self, method: str, endpoint: str, payload: dict[str, Any] | None) -> dict[str, Any]:
        """One HTTP call with retries; returns the JSON body or raises a BackendError naming the URL."""
        url = f"{self.base_url}/{endpoint}"
        policy = self.retry
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            body = self._adjust(endpoint, payload)
            problem: str
            retry_after: float | None = None
            try:
                self.stats.add(http_requests=1)
                if method == "GET":
                    response = self._client.get(url)
                else:
                    response = self._client.post(url, json=body)
            except httpx.TimeoutException as exc:
                problem = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                problem = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if response.status_code < 400:
                    try:
                        data = response.json()
                    except ValueError as exc:
                        raise BackendError(
                            f"{url} answered HTTP {response.status_code} with non-JSON content: {response.text[:200]!r}"
                        ) from exc
                    if not isinstance(data, dict):
                        raise BackendError(f"{url} answered with JSON that is not an object: {str(data)[:200]}")
                    self.stats.add(responses=1)
                    return data
                if response.status_code in _RETRY_STATUS:
                    problem = f"HTTP {response.status_code}: {_error_text(response)}"
                    retry_after = _retry_after(response)
                else:
                    if self._fallback(response, body):
                        attempt -= 1  # a changed request, not a retry
                        continue
                    raise self._http_error(url, endpoint, response)
            elapsed = time.monotonic() - started
            delay = policy.delay(attempt) if retry_after is None else max(retry_after, 0.0)
            if attempt >= policy.max_attempts or elapsed + delay > policy.max_time:
                hint = ""
                if problem.startswith(("connection", "timed out")):
                    hint = " Is the server running? Check --base-url (or FIGLANG_OPENAI_BASE_URL / OPENAI_BASE_URL)" + (
                        " and --timeout." if problem.startswith("timed out") else "."
                    )
                raise BackendError(
                    f"the OpenAI-compatible endpoint {url} failed: {problem}; gave up after {attempt} "
                    f"attempt{'s' if attempt > 1 else ''} in {elapsed:.1f} s.{hint}"
                )
            self.stats.add(retries=1)
            time.sleep(delay)

    def _adjust(self, endpoint: str, payload: dict[str, Any] | None) -> dict[str, Any] | None:
        """The payload as sent: sticky fallbacks (max_tokens 0 -> 1, no top_k) applied; the cache key is not."""
        if payload is None:
            return None
        body = payload
        if self._zero_rejected and payload.get("echo") and payload.get("max_tokens") == 0:
            body = {**body, "max_tokens": 1}
        if self._drop_top_k and "top_k" in payload:
            body = {k: v for k, v in body.items() if k != "top_k"}
        if self._drop_min_tokens and "min_tokens" in payload:
            body = {k: v for k, v in body.items() if k != "min_tokens"}
        return body

    def _fallback(self, response: httpx.Response, sent: dict[str, Any] | None) -> bool:
        """Switch a sticky fallback on for a 400/422 that names max_tokens=0 or top_k; True to resend."""
        if sent is None or response.status_code not in (400, 422):
            return False
        text = _error_text(response).lower()
        with self._sticky_lock:
            if sent.get("echo") and sent.get("max_tokens") == 0 and "max_tokens" in text:
                self._zero_rejected = True
                return True
            if "top_k" in sent and "top_k" in text:
                if not self._drop_top_k:
                    warnings.warn(f"{self.base_url} rejects top_k; sending requests without it", stacklevel=4)
                self._drop_top_k = True
                return True
            if "min_tokens" in sent and "min_tokens" in text:
                if not self._drop_min_tokens:
                    warnings.warn(f"{self.base_url} rejects min_tokens; sending requests without it (samples may be empty)", stacklevel=4)
                self._drop_min_tokens = True
                return True
        return False

    def _http_error(self, url: str, endpoint: str, response: httpx.Response) -> BackendError:
        status = response.status_code
        text = _error_text(response)
        if status in (401, 403):
            return BackendError(
                f"{url} refused the request (HTTP {status}: {text}); check the API key "
                "(--api-key, FIGLANG_OPENAI_API_KEY or OPENAI_API_KEY)"
            )
        if status in (404, 405, 501):
            low = text.lower()
            if (
                endpoint != "models"
                and "model" in low
                and "chat" not in low
                and re.search(r"not (exist|found)|does not|unknown|no such|invalid", low)
            ):
                return BackendError(f"{url}: HTTP {status}: {text}; check the model name (--model; GET {self.base_url}/models lists them)")
            message = f"{url} does not exist (HTTP {status}: {text})."
            if endpoint == COMPLETIONS:
                message += (
                    " The endpoint offers no text completions, so it can neither score continuations nor generate "
                    "from a bare prompt; it looks chat-only (chat_only=True generates through /chat/completions). " + SCORING_HINT
                )
            return CapabilityError(message)
        if endpoint == COMPLETIONS and status in (400, 422) and re.search(r"echo|logprob", text, re.I):
            return CapabilityError(f"{url} cannot return prompt log-probabilities (HTTP {status}: {text}). " + SCORING_HINT)
        return BackendError(f"{url} rejected the request (HTTP {status}): {text}")


__all__ = [
    "ALIGNMENT_PROBE",
    "CACHE_NAMESPACE",
    "ChatRequest",
    "LabelAnswer",
    "OpenAIBackend",
    "RetryPolicy",
    "SCORING_HINT",
    "Stats",
    "normalize_base_url",
    "parse_label",
]
