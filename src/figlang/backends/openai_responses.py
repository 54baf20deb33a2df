"""Reading an OpenAI-compatible server's responses: error texts, retry hints, the first choice, stop strings, and the
token tables behind continuation scores and the alignment probe."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import httpx

from figlang.backends.base import BackendError, CapabilityError, ContinuationScore


# A text every language model predicts well: echoed top tokens should be the tokens themselves.
ALIGNMENT_PROBE = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10"
COMPLETIONS = "completions"
CHAT = "chat/completions"

# What the CapabilityError for scoring tells the user (methods that need scores vs. chat-only ones).
SCORING_HINT = (
    "Methods that rank options or labels by log-probability (LM scoring, PMI, QA-format scoring, "
    "few-shot scoring, PET verbalizers, NLI label scoring) need an endpoint whose /v1/completions "
    "returns prompt log-probabilities with echo (vLLM; the llama-cpp-python server for a model that adds a "
    "BOS token). "
    "Generation methods (FLUTE explanations, free-text answers) and closed-label answering through "
    "chat (OpenAIBackend.answer_labels) work with a chat-only endpoint."
)


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict):
            err = err.get("message", err)
        return (err if isinstance(err, str) else json.dumps(err))[:300]
    return str(data)[:300]


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return min(float(value), 60.0)
    except ValueError:
        return None


def _with_progress(exc: BackendError, done: int, total: int, cached: bool) -> BackendError:
    if total <= 1 and not done:
        return exc
    note = f" ({done} of {total} requests completed"
    note += "; they are cached, so a rerun resumes from there)" if cached and done else ")"
    new = type(exc)(str(exc) + note)
    return new


def _first_choice(base_url: str, endpoint: str, data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError(f"{base_url}/{endpoint} answered without choices: {str(data)[:200]}")
    return choices[0]


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if i != -1:
                cut = min(cut, i)
    return text[:cut]


def _text_parser(base_url: str, endpoint: str, stop: tuple[str, ...]) -> Callable[[dict[str, Any]], str]:
    def parse(data: dict[str, Any]) -> str:
        choice = _first_choice(base_url, endpoint, data)
        if endpoint == CHAT:
            message = choice.get("message") or {}
            text = message.get("content")
        else:
            text = choice.get("text")
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise BackendError(f"{base_url}/{endpoint} answered with non-text content: {str(text)[:200]}")
        return _cut_at_stop(text, stop)  # servers differ on whether the stop string is included

    return parse


def _token_table(base_url: str, logprobs: Any) -> tuple[list[str], list[float | None], list[int], list[str | None]]:
    """Tokens, log-probabilities, character offsets and greedy tokens from either logprobs format."""
    where = f"{base_url}/{COMPLETIONS}"
    if not isinstance(logprobs, dict):
        raise CapabilityError(f"{where} returned no log-probabilities (logprobs={logprobs!r}). " + SCORING_HINT)
    if isinstance(logprobs.get("content"), list):  # chat-style: [{"token", "logprob", "bytes", "top_logprobs"}]
        tokens: list[str] = []
        lps: list[float | None] = []
        offsets: list[int] = []
        tops: list[str | None] = []
        pos = 0
        for entry in logprobs["content"]:
            tok = entry.get("token", "")
            if entry.get("bytes") is not None:
                tok = bytes(entry["bytes"]).decode("utf-8", errors="ignore")
            tokens.append(tok)
            lps.append(entry.get("logprob"))
            offsets.append(pos)
            pos += len(tok)
            top = entry.get("top_logprobs") or []
            best = max(top, key=lambda t: t.get("logprob", -math.inf)) if top else None
            tops.append(best.get("token") if best else None)
        return tokens, lps, offsets, tops
    raw_tokens = logprobs.get("tokens")
    raw_lps = logprobs.get("token_logprobs")
    if not isinstance(raw_tokens, list) or not isinstance(raw_lps, list) or len(raw_tokens) != len(raw_lps):
        raise CapabilityError(f"{where} returned log-probabilities without tokens/token_logprobs. " + SCORING_HINT)
    raw_offsets = logprobs.get("text_offset")
    if not isinstance(raw_offsets, list) or len(raw_offsets) != len(raw_tokens):
        raw_offsets, pos = [], 0
        for tok in raw_tokens:
            raw_offsets.append(pos)
            pos += len(tok)
    top_raw = logprobs.get("top_logprobs")
    tops = []
    for i in range(len(raw_tokens)):
        top = top_raw[i] if isinstance(top_raw, list) and i < len(top_raw) else None
        tops.append(max(top, key=top.__getitem__) if isinstance(top, dict) and top else None)
    return list(raw_tokens), list(raw_lps), list(raw_offsets), tops


def _alignment_parser(base_url: str) -> Callable[[dict[str, Any]], tuple[int, int, int]]:
    """(top token == own token, top token == next token, positions) over the echoed probe."""

    def parse(data: dict[str, Any]) -> tuple[int, int, int]:
        choice = _first_choice(base_url, COMPLETIONS, data)
        tokens, _, offsets, tops = _token_table(base_url, choice.get("logprobs"))
        idx = [i for i, off in enumerate(offsets) if off < len(ALIGNMENT_PROBE)]
        own = next_ = positions = 0
        for a, b in zip(idx, idx[1:], strict=False):
            if tops[a] is None:
                continue
            positions += 1
            own += tops[a] == tokens[a]
            next_ += tops[a] == tokens[b]
        return own, next_, positions

    return parse


def _score_parser(base_url: str, context: str, continuation: str) -> Callable[[dict[str, Any]], ContinuationScore]:
    prompt = context + continuation
    where = f"{base_url}/{COMPLETIONS}"

    def parse(data: dict[str, Any]) -> ContinuationScore:
        choice = _first_choice(base_url, COMPLETIONS, data)
        tokens, lps, offsets, tops = _token_table(base_url, choice.get("logprobs"))
        # Offsets may be relative to the echoed prompt or (no echo) start after it.
        in_prompt = [i for i, off in enumerate(offsets) if off < len(prompt)]
        covered = "".join(tokens[i] for i in in_prompt)
        squash = re.sub(r"\s+", "", covered) == re.sub(r"\s+", "", prompt)
        if not in_prompt or not (squash or len(covered) >= 0.9 * len(prompt)):
            raise CapabilityError(
                f"{where} does not echo the prompt's log-probabilities (got {len(in_prompt)} prompt tokens for "
                f"{len(prompt)} characters; does it support echo=true with logprobs?). " + SCORING_HINT
            )
        picked = [i for i in in_prompt if offsets[i] >= len(context) or offsets[i] + len(tokens[i]) > len(context)]
        if continuation and not picked:
            raise BackendError(f"{where}: no token of the continuation {continuation!r} found in the echoed prompt")
        values: list[float] = []
        for i in picked:
            lp = lps[i]
            if lp is None:
                raise BackendError(
                    f"{where} gave the token {tokens[i]!r} of {continuation!r} no log-probability "
                    "(it is the first token of the prompt: score with a non-empty context, or set empty_context)"
                )
            values.append(float(lp))
        greedy: bool | None
        if picked and all(tops[i] is not None for i in picked):
            greedy = all(tops[i] == tokens[i] for i in picked)
        else:
            greedy = None
        return ContinuationScore(
            logprob=float(sum(values)),
            n_tokens=len(values),
            n_chars=len(continuation),
            token_logprobs=tuple(values),
            is_greedy=greedy,
        )

    return parse
