"""Turning a path from a URL into a file under one of the configured folders, or refusing it."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from figlang.core.errors import FiglangError


class OutsideRootError(FiglangError):
    """A requested path that leaves the folder it must stay in (``..``, an absolute path, a link that points out)."""


def resolve_under(root: Path, rel: str) -> Path:
    """``root / rel`` if it stays inside ``root`` once resolved (links followed); OutsideRootError otherwise."""
    rel = (rel or "").replace("\\", "/")
    parts = PurePosixPath(rel).parts
    if rel.startswith("/") or any(p == ".." for p in parts) or "\x00" in rel or (parts and ":" in parts[0]):
        raise OutsideRootError(f"refused path {rel!r}: only paths inside the served folder are allowed")
    base = root.resolve()
    target = (base / rel).resolve()
    if target != base and not target.is_relative_to(base):
        raise OutsideRootError(f"refused path {rel!r}: it leads outside the served folder")
    return target
