"""A GGUF file run by llama.cpp in this process (``llama-cpp-python``), behind the LanguageModel interface.

Why it exists: on a CPU the Transformers backend runs a GGUF model de-quantized to float32, and a
1.5B model then forwards ~16 tokens/s on one AVX2 thread. llama.cpp computes with the 4-bit weights
themselves and runs the same model ~3x faster, which turns a two-hour evaluation into forty minutes.

What stays the same: prompts are tokenized by the model's Hugging Face tokenizer (the one the
Transformers backend uses, from the converted checkpoint or the GGUF itself) and fed to llama.cpp as
token ids, so both backends see identical inputs; chat templates, end tokens and sampling are the
shared :class:`~figlang.backends.hf_text.HFTextMixin`. What differs: llama.cpp's arithmetic
(4-bit weights times 8-bit activations), so scores differ from the Transformers backend's (weights
de-quantized to float32) by ~0.06 nats a token on average (SmolLM2 Q4_1, idiom dev; 0.34 at most),
enough to flip a close choice now and then; results record ``backend: llama.cpp`` and never share
a request cache with the Transformers backend.

Shared prefixes: the evaluated tokens stay in llama.cpp's key/value cache, and each sequence
re-evaluates only what differs from the previous one (requests are sorted so that neighbours share
their contexts). Every ``score()``/``generate()`` call starts from an empty cache, so a call's
results depend only on its own requests.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.backends.base import BackendError, BackendInfo, ContinuationScore, GenerationRequest, LanguageModel, LazyWeights, ScoreRequest
from figlang.backends.hf_text import HFTextMixin
from figlang.backends.prefix import shared_prefix_length
from figlang.backends.transformers_backend import _as_int, derive_seed

INSTALL_HINT = (
    "from a figlang checkout, `sh scripts/install_llama_cpp.sh PYTHON` (llama-cpp-python 0.3.36 built with run-time CPU "
    "dispatch and without ggml's AMX kernels, which crash on AMX CPUs; ~20 min on 2 cores, once); else "
    "pip install 'llama-cpp-python==0.3.36' (a -march=native build)"
)


def _required_int(value: Any, name: str, minimum: int = 1) -> int:
    """``_as_int`` without ``allow_none``: an int, or the FiglangError it raises."""
    out = _as_int(value, name, minimum=minimum)
    assert out is not None  # _as_int returns None only with allow_none=True
    return out


class LlamaCppBackend(LazyWeights, HFTextMixin, LanguageModel):
    """A causal GGUF model run by llama.cpp (scoring and generation; no masked or seq2seq models).

    Parameters
    ----------
    gguf:
        The GGUF file.
    tokenizer:
        A directory with the model's Hugging Face tokenizer (the catalog's converted checkpoint);
        None reads the tokenizer from the GGUF file (transformers' ``gguf_file``).
    threads:
        llama.cpp's thread count (default: llama.cpp's choice).
    n_ctx:
        The key/value cache length, the longest sequence (default 2048).
    n_batch:
        Tokens per llama.cpp forward pass.
    """

    can_score = True
    can_generate = True

    def __init__(
        self,
        gguf: str | Path,
        *,
        tokenizer: str | Path | None = None,
        name: str | None = None,
        revision: str | None = None,
        threads: int | None = None,
        n_ctx: int = 2048,
        n_batch: int = 512,
        extra_info: dict[str, Any] | None = None,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:  # said at once, not when the weights load
            raise BackendError(f"backend=llama.cpp needs llama-cpp-python: {INSTALL_HINT}")
        import transformers

        self.gguf = Path(gguf)
        if not self.gguf.is_file():
            raise BackendError(f"no GGUF file at {self.gguf}")
        self.name = name or self.gguf.name
        self.revision = revision
        self.threads = _as_int(threads, "threads", allow_none=True)
        self.n_ctx = _required_int(n_ctx, "n_ctx", minimum=16)
        self.n_batch = _required_int(n_batch, "n_batch")
        self.extra_info = dict(extra_info or {})
        try:
            if tokenizer is not None:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(tokenizer), local_files_only=True)
            else:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.gguf.parent), gguf_file=self.gguf.name)
        except (OSError, ValueError) as err:
            raise BackendError(f"cannot load the tokenizer of {self.name!r}: {err}") from err
        self.kind = "causal"
        self.max_length = self.n_ctx
        self._prefix_ids, self._suffix_ids = self._special_affixes()
        self._evaluated: list[int] = []  # the tokens in llama.cpp's key/value cache, in order
        self._rows: dict[int, Any] = {}  # position -> the logits after it, for positions in _evaluated
        self.defer_weights()  # info() needs only the file's identity and the tokenizer (LazyWeights)

    AFTER_WEIGHTS = frozenset({"llm", "_n_vocab", "_eos_ids"})

    def _load_weights(self) -> None:
        from llama_cpp import Llama

        try:
            self.llm = Llama(
                model_path=str(self.gguf),
                n_ctx=self.n_ctx,
                n_batch=self.n_batch,
                n_ubatch=self.n_batch,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                logits_all=False,
                swa_full=True,  # sliding-window layers keep every position, so any prefix can be reused
                verbose=False,
            )
        except (ValueError, RuntimeError) as err:
            raise BackendError(f"llama.cpp cannot load {self.gguf}: {err}") from err
        if len(self.tokenizer) > self.llm.n_vocab():
            raise BackendError(
                f"the tokenizer of {self.name!r} has {len(self.tokenizer)} tokens but the GGUF's vocabulary has "
                f"{self.llm.n_vocab()}: they are not the same model (pass the GGUF's own tokenizer)"
            )
        self._eos_ids = self._end_ids()
        self._n_vocab = self.llm.n_vocab()

    # --- identity -------------------------------------------------------------------------------

    def info(self) -> BackendInfo:
        options: dict[str, Any] = {"engine": "llama.cpp", "max_length": self.max_length}
        options.update(self.extra_info)
        return BackendInfo(backend="llama.cpp", model=self.name, revision=self.revision, kind="causal", options=options)

    def runtime_options(self) -> dict[str, Any]:
        """Options that change speed, not results (kept out of the fingerprint)."""
        return {"threads": self.threads, "n_batch": self.n_batch, "path": str(self.gguf)}

    def run_notes(self) -> dict[str, Any]:
        """The CPU features ggml ran with (recorded in results.json): figlang's llama.cpp build picks its CPU module at
        run time, and modules differ a little in arithmetic (an AVX-512 module's logits differ from the AVX2 one's)."""
        if not self.weights_loaded:
            return {}
        import llama_cpp

        info = llama_cpp.llama_print_system_info()
        text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
        return {"llama_cpp": {"version": llama_cpp.__version__, "system_info": " ".join(text.split())}}

    def __repr__(self) -> str:
        return f"LlamaCppBackend({self.name!r}, gguf={str(self.gguf)!r})"

    def _generation_eos(self) -> int | None:
        token = self.llm.token_eos()
        return token if isinstance(token, int) and token >= 0 else None

    # --- the key/value cache --------------------------------------------------------------------

    def _reset(self) -> None:
        self._evaluated = []
        self._rows = {}

    def _feed(self, tokens: Sequence[int], want: Sequence[int]) -> list[Any]:
        """Make llama.cpp's cache start with ``tokens``; return the logits after each position in ``want``.

        Only what differs from the cached tokens is evaluated, and the output layer runs only where
        logits are wanted (a 262k-token vocabulary costs more than Gemma-3-270M's whole body)."""
        from llama_cpp import _internals

        if len(tokens) > self.n_ctx:
            raise BackendError(f"{self.name}: a sequence of {len(tokens)} tokens does not fit n_ctx={self.n_ctx} (raise n_ctx)")
        common = shared_prefix_length([self._evaluated, tokens], keep=0)
        wanted = set(want)
        start = min([common] + [p for p in wanted if p < common and p not in self._rows])
        if start < len(tokens):
            ctx = self.llm._ctx
            if not ctx.kv_cache_seq_rm(-1, start, -1):  # a cache that cannot drop a tail: start over
                ctx.kv_cache_seq_rm(-1, 0, -1)
                start = 0
            self._rows = {p: row for p, row in self._rows.items() if p < start}
            self._evaluated = list(tokens[:start])
            batch = _internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)
            try:
                for lo in range(start, len(tokens), self.n_batch):
                    chunk = tokens[lo : lo + self.n_batch]
                    b = batch.batch
                    b.n_tokens = len(chunk)
                    for k, token in enumerate(chunk):
                        b.token[k] = token
                        b.pos[k] = lo + k
                        b.seq_id[k][0] = 0
                        b.n_seq_id[k] = 1
                        b.logits[k] = (lo + k) in wanted
                    try:
                        ctx.decode(batch)
                    except Exception as err:  # llama_decode failures surface as RuntimeError
                        self._reset()
                        raise BackendError(f"{self.name}: llama.cpp failed to evaluate a sequence of {len(tokens)} tokens: {err}") from err
                    for k in range(len(chunk)):
                        if (lo + k) in wanted:
                            self._rows[lo + k] = self._logits_row(k)
                    self._evaluated.extend(chunk)
            finally:
                batch.close()
        return [self._rows[p] for p in want]

    def _logits_row(self, index: int) -> Any:
        import llama_cpp
        import numpy as np

        pointer = llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self._n_vocab,)).copy()

    # --- scoring --------------------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[ContinuationScore]:
        """Log-probability of each continuation given its context (natural log, summed over tokens)."""
        import numpy as np
        from scipy.special import logsumexp

        results, encoded = self._encode_requests(requests)
        items = sorted((ctx + cont, len(ctx), i) for i, ctx, cont in encoded)  # neighbours share their longest prefixes
        self._reset()
        for seq, n_ctx, i in items:
            logits = np.asarray(self._feed(seq, range(n_ctx - 1, len(seq) - 1)), dtype=np.float64)
            targets = np.asarray(seq[n_ctx:])
            lse = logsumexp(logits, axis=1)
            picked = logits[np.arange(len(targets)), targets]
            lps = (picked - lse).tolist()
            greedy = bool((logits.argmax(axis=1) == targets).all())
            results[i] = ContinuationScore(math.fsum(lps), len(lps), len(requests[i].continuation), tuple(lps), greedy)
        return results  # type: ignore[return-value]

    # --- generation -----------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[str]]:
        """``n`` continuations per request, without the prompt, cut before the first stop string.

        Each sample draws from its own generator (seeded from the request's seed and the sample's
        index, as in the Transformers backend), so neither order nor grouping changes what is drawn. Each prompt
        is evaluated whole, not continued from the previous prompt's cache: llama.cpp's products depend on how
        many tokens one batch holds (qwen2.5-1.5b's Q4_K_M logits moved by up to 0.46), so a continued prompt's
        text could depend on the prompt before it. Its samples share its evaluation."""
        self._check_generation_requests(requests)
        results: list[list[str]] = [[""] * req.n for req in requests]
        prompts: dict[int, list[int]] = {}
        cut = 0
        for i, req in enumerate(requests):
            if req.max_new_tokens > 0:
                prompts[i], was_cut = self._fit_prompt(self._encode_prompt(req.prompt), req.max_new_tokens)
                cut += was_cut
        self._warn_truncated("generation prompts", cut, len(prompts))
        for i in sorted(prompts, key=lambda k: (prompts[k], k)):
            self._reset()  # each prompt evaluated whole: slots from another prompt's batch differ in the last bits
            req = requests[i]
            for j in range(req.n if req.do_sample else 1):
                results[i][j] = self._sample(prompts[i], req, self._sampler(derive_seed(req.seed, j)) if req.do_sample else None)
            if not req.do_sample:
                results[i] = [results[i][0]] * req.n
        return results

    def _sample(self, prompt: list[int], req: GenerationRequest, generator: Any) -> str:
        import torch

        generated: list[int] = []
        texts: list[str | None] = [None]
        sequence = list(prompt)
        while True:
            [logits] = self._feed(sequence, [len(sequence) - 1])
            row = torch.from_numpy(logits).unsqueeze(0)
            keep = self._advance(row, [0], [req], [generator], [generated], texts, [req.max_new_tokens])
            if not keep or len(sequence) + 1 > self.n_ctx:  # done, or the cache is full
                break
            sequence.append(generated[-1])
        text = texts[0]
        if text is None:
            text = self._cut(self.tokenizer.decode(generated, skip_special_tokens=True), req.stop)[0]
        return text


__all__ = ["LlamaCppBackend"]
