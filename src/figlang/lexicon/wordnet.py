"""Offline WordNet 3.0 for figlang, read through NLTK's ``WordNetCorpusReader``.

figlang never downloads WordNet at run time. It reads the database that Debian's
``wordnet-base`` package installs in ``/usr/share/wordnet`` (``apt-get install -y
wordnet-base``; ``scripts/install_wordnet.sh`` does it when missing). That package lacks two
files NLTK wants: ``lexnames`` (the fixed list of 45 lexicographer file names; NLTK cannot
open WordNet without it) and ``index.sense`` (only needed for sense keys). figlang ships
``lexnames`` as package data (``figlang/resources/wordnet/lexnames``) and assembles a
readable directory in its cache: copies of the database files plus that file. NLTK >= 3.9 only reads files under its data roots, so that directory is appended to
``nltk.data.path`` when the reader is made.
NLTK >= 3.9 only reads files under its data roots, so the directories are appended to
``nltk.data.path`` when the reader is made.

Where the database is looked for, in order: the ``source`` argument, ``$FIGLANG_WORDNET_DIR``,
``$WNSEARCHDIR``, ``/usr/share/wordnet``, ``/usr/local/WordNet-3.0/dict``,
``/usr/share/wordnet/dict``. A directory that already has ``lexnames`` (a full WordNet
distribution, or NLTK's own ``corpora/wordnet``) is read in place.

Public API: :func:`load_wordnet` (cached per directory), :func:`find_wordnet_source`,
:func:`wordnet_dir`, :class:`WordNetNotFoundError`, :data:`INSTALL_COMMAND`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import warnings
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from figlang.core.errors import FiglangError
from figlang.core.paths import default_cache_dir

if TYPE_CHECKING:  # nltk is imported lazily: importing figlang must not cost the WordNet reader
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = [
    "DATABASE_FILES",
    "INSTALL_COMMAND",
    "WordNetNotFoundError",
    "find_wordnet_source",
    "load_wordnet",
    "lexnames_text",
    "wordnet_dir",
]

INSTALL_COMMAND = "apt-get install -y wordnet-base"
ENV_VAR = "FIGLANG_WORDNET_DIR"
DEFAULT_SEARCH_DIRS = ("/usr/share/wordnet", "/usr/local/WordNet-3.0/dict", "/usr/share/wordnet/dict")

# What a WordNet 3.0 database directory must hold for the reader (lexnames is added by figlang).
DATABASE_FILES = (
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)
OPTIONAL_FILES = ("cntlist.rev", "index.sense", "cntlist", "sentidx.vrb", "sents.vrb")


class WordNetNotFoundError(FiglangError, RuntimeError):
    """No usable WordNet database; the message says how to install one."""


def lexnames_text() -> str:
    """The 45-line ``lexnames`` file figlang ships (``NN<TAB>name<TAB>category``)."""
    return resources.files("figlang").joinpath("resources/wordnet/lexnames").read_text(encoding="utf-8")


def _candidates(source: str | Path | None) -> list[Path]:
    out: list[Path] = []
    if source:
        return [Path(source).expanduser()]
    for env in (ENV_VAR, "WNSEARCHDIR"):
        if os.environ.get(env):
            out.append(Path(os.environ[env]).expanduser())
    out.extend(Path(p) for p in DEFAULT_SEARCH_DIRS)
    return out


def _missing(directory: Path) -> list[str]:
    return [name for name in DATABASE_FILES if not (directory / name).is_file()]


def find_wordnet_source(source: str | Path | None = None) -> Path:
    """The directory holding the WordNet database files, or WordNetNotFoundError naming the install command."""
    tried: list[str] = []
    for directory in _candidates(source):
        missing = _missing(directory)
        if not missing:
            return directory
        tried.append(f"{directory} (missing {', '.join(missing[:3])}{'…' if len(missing) > 3 else ''})")
    raise WordNetNotFoundError(
        "WordNet 3.0 is not installed: looked in " + "; ".join(tried) + ". "
        f"Install Debian's package with `{INSTALL_COMMAND}` (or run scripts/install_wordnet.sh), "
        f"or point ${ENV_VAR} at a WordNet 3.0 dict directory"
    )


def _manifest(src: Path, names: tuple[str, ...]) -> str:
    """What the assembled directory was made from: the source path and each file's size and mtime."""
    lines = [str(src)]
    for name in names:
        st = (src / name).stat()
        lines.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def wordnet_dir(source: str | Path | None = None, cache_dir: str | Path | None = None) -> Path:
    """A directory NLTK can read: ``source`` itself when it has ``lexnames``, else one assembled in the cache.

    The assembled directory (``<cache>/wordnet/<hash of the source path>``, about 28 MB) holds
    copies of the database files and figlang's ``lexnames``. Copies, not links: NLTK >= 3.9
    refuses symbolic links whose target leaves the reader's root and any multiply-linked
    (hard-linked) file. It is rebuilt when the source files (size, mtime) or the shipped
    ``lexnames`` change.
    """
    src = find_wordnet_source(source).resolve()
    if (src / "lexnames").is_file():
        return src
    names = tuple(n for n in DATABASE_FILES + OPTIONAL_FILES if (src / n).is_file())
    manifest = _manifest(src, names)
    key = hashlib.sha1(str(src).encode()).hexdigest()[:12]
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    target = root / "wordnet" / key
    lexnames = lexnames_text()
    if _assembled_ok(target, manifest, lexnames):
        return target
    tmp = target.with_name(f".{key}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in names:
        shutil.copyfile(src / name, tmp / name)
    (tmp / "lexnames").write_text(lexnames, encoding="utf-8")
    (tmp / "SOURCE").write_text(manifest, encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(tmp, target)
    except OSError:  # another process assembled it first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _assembled_ok(target: Path, manifest: str, lexnames: str) -> bool:
    try:
        if (target / "lexnames").read_text(encoding="utf-8") != lexnames:
            return False
        if (target / "SOURCE").read_text(encoding="utf-8") != manifest:
            return False
    except OSError:
        return False
    return not _missing(target)


def _authorize(directory: Path) -> None:
    """NLTK >= 3.9 refuses to read outside its data roots (``nltk.data.path``): add ours."""
    import nltk.data

    text = str(directory.resolve())
    if text not in nltk.data.path:
        nltk.data.path.append(text)


@lru_cache(maxsize=1)
def _reader_class() -> type[WordNetCorpusReader]:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class LocalWordNetCorpusReader(WordNetCorpusReader):
        """NLTK's reader, minus the mapping to NLTK's downloaded ``wordnet`` corpus.

        NLTK's constructor maps any WordNet it is given onto its own downloaded copy (for the
        multilingual OMW data) and fails when that copy is absent; this database *is* WordNet
        3.0 and figlang does not use OMW, so there is nothing to map.
        """

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    return LocalWordNetCorpusReader


@lru_cache(maxsize=4)
def _load(directory: str) -> WordNetCorpusReader:
    _authorize(Path(directory))
    with warnings.catch_warnings():  # "multilingual functions are not available": figlang needs English only
        warnings.simplefilter("ignore", UserWarning)
        return _reader_class()(directory, None)


def load_wordnet(source: str | Path | None = None, cache_dir: str | Path | None = None) -> WordNetCorpusReader:
    """NLTK's WordNet reader over the local WordNet 3.0 (cached: repeated calls return the same reader).

    Raises WordNetNotFoundError (a FiglangError, so the CLI prints one line) with the install
    command when no database is found or it cannot be read.
    """
    directory = wordnet_dir(source, cache_dir)
    try:
        return _load(str(directory))
    except (OSError, ValueError, AssertionError) as exc:  # PermissionError (NLTK's path check) is an OSError
        raise WordNetNotFoundError(
            f"WordNet at {directory} could not be read ({type(exc).__name__}: {exc}); "
            f"reinstall it with `{INSTALL_COMMAND}` or point ${ENV_VAR} at a WordNet 3.0 dict directory"
        ) from exc
