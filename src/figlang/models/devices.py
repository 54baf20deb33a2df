"""Device names for everything that runs a torch model (backends and trained models): one rule, one message."""

from __future__ import annotations

from ..data.errors import FiglangError

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
        raise missing_error(f"device {device!r} was asked for, but torch sees no CUDA GPU here (torch {torch.__version__}): "
                            "use cpu (or auto)")  # fmt: skip
    if not (name == "cpu" or name.startswith("cuda") or name == "mps"):
        raise FiglangError(f"unknown device {device!r}: use {DEVICE_CHOICES}")
    return name


__all__ = ["DEVICE_CHOICES", "resolve_device"]
