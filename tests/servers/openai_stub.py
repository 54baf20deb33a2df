"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 for testing the HTTP policy, not the model.

It answers scripted failures first (e.g. 503, 503, then OK), can hide endpoints (404 for
/v1/completions makes it a chat-only endpoint), and otherwise either forwards the request to
an upstream server (a real llama.cpp server) or answers with a canned JSON body. Every
request is logged (path, status, headers) for the test to inspect.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


def canned_completion(body: dict[str, Any]) -> dict[str, Any]:
    """A minimal answer for /v1/completions and /v1/chat/completions (no logprobs)."""
    if "messages" in body:
        return {
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "stub reply"}, "finish_reason": "stop"}],
        }
    return {
        "object": "text_completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "text": " stub text", "logprobs": None, "finish_reason": "length"}],
    }


@dataclass
class Logged:
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class StubServer:
    upstream: str | None = None  # e.g. http://127.0.0.1:PORT (no /v1): requests are forwarded there
    failures: list[int] = field(default_factory=list)  # statuses answered to the first POSTs, in order
    retry_after: str | None = None  # Retry-After header sent with scripted failures
    missing: set[str] = field(default_factory=set)  # paths answered 404 (e.g. {"/v1/completions"})
    answer: Callable[[dict[str, Any]], dict[str, Any]] = canned_completion
    # (method, path, body) -> (status, payload) to answer instead, or None to go on as usual
    intercept: Callable[[str, str, Any], tuple[int, Any] | None] | None = None
    log: list[Logged] = field(default_factory=list)

    def __post_init__(self) -> None:
        stub = self
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
                blob = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(blob)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(blob)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                status, payload, extra = stub._decide(method, self.path, body)
                with stub._lock:
                    stub.log.append(Logged(method, self.path, status, dict(self.headers), body))
                self._reply(status, payload, extra)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _decide(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str] | None]:
        if path in self.missing:
            return 404, {"detail": "Not Found"}, None
        if self.intercept is not None:
            special = self.intercept(method, path, body)
            if special is not None:
                return special[0], special[1], None
        if method == "POST":
            with self._lock:
                status = self.failures.pop(0) if self.failures else None
            if status is not None:
                extra = {"Retry-After": self.retry_after} if self.retry_after else None
                return status, {"error": {"message": f"scripted failure {status}"}}, extra
        if self.upstream:
            with httpx.Client(timeout=120) as client:
                r = client.request(method, self.upstream + path, json=body if method == "POST" else None)
            return r.status_code, r.json(), None
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "stub-model", "object": "model"}]}, None
        return 200, self.answer(body or {}), None

    def posts(self, path_suffix: str = "") -> list[Logged]:
        with self._lock:
            return [e for e in self.log if e.method == "POST" and e.path.endswith(path_suffix)]

    def start(self) -> StubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
