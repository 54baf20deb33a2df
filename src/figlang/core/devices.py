"""Device names for everything that runs a torch model (backends and trained models): one rule, one message."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from figlang.core.errors import FiglangError

DEVICE_CHOICES = "cpu, cuda, cuda:N, mps or auto"


def resolve_device(device: str | None, missing_error: type[Exception] = FiglangError) -> str:
    """The device to use: cpu by default (reproducible); "auto" picks cuda when there is one.

    A CUDA device that torch cannot see raises ``missing_error`` (backends raise their BackendError);
    a name that is no device raises FiglangError.
    """
    import torch

    name = (device or "cpu").strip().lower()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise missing_error(
            f"device {device!r} was asked for, but torch sees no CUDA GPU here (torch {torch.__version__}): use cpu (or auto)"
        )
    if not (name == "cpu" or name.startswith("cuda") or name == "mps"):
        raise FiglangError(f"unknown device {device!r}: use {DEVICE_CHOICES}")
    return name


# the instruction sets that decide CPU timings (bfloat16 native or emulated, AMX): what a benchmark file records
TIMING_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")


@lru_cache(maxsize=1)
def cpu_info() -> tuple[str | None, frozenset[str]] | None:
    """The CPU's model name and instruction-set flags from /proc/cpuinfo; None where there is none (not Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), None)
    return name, frozenset(text.split())


@lru_cache(maxsize=1)
def cpu_has_fast_bf16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX).

    There bfloat16 weights take about half the CPU time of float32; on a CPU without it (AVX2 only)
    torch emulates bfloat16 and runs several times *slower* than float32, so "auto" must not pick it.
    """
    info = cpu_info()
    if info is None:  # not Linux: ask oneDNN
        import torch

        try:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):
            return False
    return any(flag in info[1] for flag in ("avx512_bf16", "amx_bf16"))


def cpu_class() -> str:
    """The CPU's class for picking a backend: ``amx`` (AMX tiles), ``amd-avx512`` (an AMD CPU with AVX-512 and
    AVX512-BF16: Zen 4 and later), ``avx512`` (other AVX-512 without AMX), ``avx2`` or ``other``.

    AVX512-BF16 makes bfloat16 fast on one vendor and not the other, as measured on 2-core VMs: on an AMD EPYC,
    qwen2.5-1.5b explained a new pair in 7.46 s in bfloat16 and 20.52 s in float32
    (docs/results/explain/bench-amd-epyc-backends.json) and ran a forward pass 2.24x faster in bfloat16
    (docs/results/bench/cpu_forward_bf16_amd_epyc.json); on a Sapphire Rapids with AMX hidden it took 17.41 s in
    bfloat16 and 13.52 s in float32 (docs/research/flute_explanations.md, "Speed by CPU class").
    """
    info = cpu_info()
    flags = info[1] if info is not None else frozenset()  # every word of /proc/cpuinfo: its flags and its vendor_id
    if "amx_bf16" in flags:
        return "amx"
    if "avx512f" in flags and "avx512_bf16" in flags and "AuthenticAMD" in flags:
        return "amd-avx512"
    if "avx512f" in flags:
        return "avx512"
    return "avx2" if "avx2" in flags else "other"


def bf16_is_emulated(device: str | None) -> bool:
    """bfloat16 on ``device`` would run emulated: a CPU without AVX512-BF16/AMX."""
    return (device or "cpu").strip().lower() == "cpu" and not cpu_has_fast_bf16()


def cpu_prefers_bf16() -> bool:
    """Whether bfloat16 is the faster dtype on this CPU: one with AMX tiles or an AMD CPU with AVX512-BF16
    (:func:`cpu_class`; off Linux, where oneDNN computes bfloat16 in hardware).

    AVX512-BF16 alone computes bfloat16 in hardware but did not make it faster than float32 on an Intel VM with AMX
    hidden (qwen2.5-1.5b explained a new pair in 17.41 s in bfloat16 and 13.52 s in float32); on an AMD EPYC it did
    (7.46 s against 20.52 s).
    """
    if cpu_info() is None:
        return cpu_has_fast_bf16()
    return cpu_class() in ("amx", "amd-avx512")


def bf16_is_slow(device: str | None) -> bool:
    """bfloat16 on ``device`` would run slower than float32: a CPU where :func:`cpu_prefers_bf16` is false."""
    return (device or "cpu").strip().lower() == "cpu" and not cpu_prefers_bf16()


def cpu_summary() -> dict[str, object]:
    """The CPU's model name, its class (:func:`cpu_class`) and the flags that decide CPU timings, for a benchmark's
    result file; empty where there is no /proc/cpuinfo."""
    info = cpu_info()
    if info is None:
        return {}
    name, flags = info
    return {"model": name, "class": cpu_class(), "flags": [f for f in TIMING_FLAGS if f in flags]}


def auto_cpu_dtype() -> str:
    """The faster of bfloat16 and float32 on this CPU: bfloat16 only where :func:`cpu_prefers_bf16`."""
    return "bfloat16" if cpu_prefers_bf16() else "float32"


__all__ = [
    "DEVICE_CHOICES",
    "auto_cpu_dtype",
    "bf16_is_emulated",
    "bf16_is_slow",
    "cpu_class",
    "cpu_has_fast_bf16",
    "cpu_prefers_bf16",
    "cpu_summary",
    "resolve_device",
]
