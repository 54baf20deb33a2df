"""Knowledge providers: where a narrative's 12 inferences per kind come from.

The figurative narrative benchmark (Chakrabarty, Choi, Shwartz, TACL 2022) ships 12 knowledge
inferences per narrative and kind, which the knowledge-enhanced scorers (``mc-context``,
``mc-literal``) read from ``record.inferences[kind]``:

* ``context``: ParaCOMET-style inferences about the narrator, two per ATOMIC relation in the order
  xNeed, xIntent, xWant, xReact, xEffect, xAttr ("The narrator needed to find a goat").
* ``literal``: for idioms, ConceptNet-style relations of the idiom's content words, two per relation
  in the order HasProperty, CapableOf, Desires, AtLocation, UsedFor, MadeUpOf ("face can be found
  in front door"); for similes, twelve properties of the vehicle ("The associated property is very
  scary").

A provider produces the same text for any record, benchmark or new:

* :class:`PrecomputedProvider` (``precomputed``): the shipped files (benchmark narratives only);
* :class:`~figlang.knowledge.wordnet_knowledge.WordNetProvider` (``wordnet``): literal knowledge
  from offline WordNet 3.0;
* :class:`~figlang.knowledge.generative.GenerativeProvider` (``generative``): an instruction model
  prompted per relation;
* :class:`~figlang.knowledge.generative.CometProvider` (``comet``): a COMET/ParaCOMET BART checkpoint
  ("{head} {relation} [GEN]", beam search, top 2).

Computed providers cache their output in figlang's SQLite request cache
(:class:`figlang.backends.cache.RequestCache`, namespace ``knowledge``) keyed by the provider's
fingerprint and the input that matters for the kind (the narrative head for ``context``; the
expression for ``literal``), so narratives that share an expression share its literal knowledge
and a second run costs nothing.

:func:`with_inferences` attaches a provider's output to records; :func:`inference_row` writes a
record in the shipped inference-file format; :func:`write_data_dir` builds a data directory whose
inference files come from a provider, for ``figlang eval``/``figlang train --data-dir``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext, run_context
from figlang.core.errors import LoadOptions
from figlang.data.narrative import INFERENCE_KINDS, inference_file, load_cloze, narrative_file
from figlang.data.records import ClozeRecord, GenerationRecord, Record
from figlang.knowledge.base import (
    CONTEXT_RELATIONS,
    CONTEXT_TEMPLATES,
    KINDS,
    LITERAL_RELATIONS,
    LITERAL_TEMPLATES,
    MAX_INFERENCES,
    PER_RELATION,
    SIMILE_TEMPLATE,
    KnowledgeError,
    KnowledgeInput,
    KnowledgeProvider,
    PrecomputedProvider,
    content_words,
    context_inference,
    layout_literal,
    literal_inference,
    narrative_head,
    simile_inference,
    simile_vehicle,
)
from figlang.knowledge.generative import DEFAULT_MODEL, CometProvider, GenerativeProvider
from figlang.knowledge.wordnet_knowledge import WordNetProvider

__all__ = [
    "CONTEXT_RELATIONS",
    "CONTEXT_TEMPLATES",
    "KINDS",
    "LITERAL_RELATIONS",
    "LITERAL_TEMPLATES",
    "MAX_INFERENCES",
    "PER_RELATION",
    "PROVIDERS",
    "SIMILE_TEMPLATE",
    "KnowledgeError",
    "KnowledgeInput",
    "KnowledgeProvider",
    "PrecomputedProvider",
    "content_words",
    "context_inference",
    "get_provider",
    "inference_row",
    "layout_literal",
    "literal_inference",
    "narrative_head",
    "simile_inference",
    "simile_vehicle",
    "with_inferences",
    "write_data_dir",
]

PROVIDERS = ("precomputed", "wordnet", "generative", "comet")


def get_provider(
    name: str,
    model: str | None = None,
    data_dir: str | Path | None = None,
    cache: Any = None,
    *,
    ctx: RunContext | None = None,
    **options: Any,
) -> KnowledgeProvider:
    """A provider by name: precomputed | wordnet | generative (``model``, default smollm2-135m) | comet (``model`` required).

    The precomputed provider reads the run context's data folder (or ``data_dir``)."""
    key = str(name).strip().lower()
    if key == "precomputed":
        return PrecomputedProvider(data_dir=data_dir, ctx=ctx)
    if key == "wordnet":
        try:
            return WordNetProvider(cache=cache, **options)
        except TypeError as err:
            raise KnowledgeError(f"wordnet provider: {err} (its options: wordnet_dir, max_words)") from None
    if key == "generative":
        return GenerativeProvider(model or DEFAULT_MODEL, cache=cache, **options)
    if key == "comet":
        if not model:
            raise KnowledgeError("the comet provider needs --model: a COMET/ParaCOMET BART checkpoint (hub id or local directory)")
        return CometProvider(model, cache=cache, **options)
    raise KnowledgeError(f"unknown knowledge provider {name!r}; choose one of {', '.join(PROVIDERS)}")


# --- attaching and writing ---------------------------------------------------------------------------


def with_inferences(records: Sequence[Record], provider: KnowledgeProvider | str, kind: str, **provider_options: Any) -> list[Record]:
    """Copies of ``records`` whose ``inferences[kind]`` come from ``provider`` (other kinds kept).

    ``provider`` is a :class:`KnowledgeProvider` or a provider name (with ``provider_options`` for
    :func:`get_provider`). The knowledge-enhanced scorers (``mc-context``, ``mc-literal``) read the
    result unchanged.
    """
    if isinstance(provider, str):
        provider = get_provider(provider, **provider_options)
    narrative: list[ClozeRecord | GenerationRecord] = []
    for r in records:
        if not isinstance(r, (ClozeRecord, GenerationRecord)):
            raise KnowledgeError(f"record {getattr(r, 'id', '?')!r} is a {type(r).__name__}: knowledge is attached to narrative records")
        narrative.append(r)
    inferred = provider.infer(narrative, kind)
    return [replace(r, inferences={**r.inferences, kind: tuple(inf)}) for r, inf in zip(narrative, inferred)]


_ANSWER_NAMES = ("option1", "option2")


def inference_row(record: Record, inferences: Sequence[str]) -> dict[str, Any]:
    """A record in the shipped inference-file format (the narrative file's fields + ``inferences``).

    Idioms: narrative, meaning, idiom, option1, option2, correctanswer; similes: narrative, option1,
    option2, correctanswer, simile, property (``false`` where the benchmark has none). Generation
    records (no options) keep narrative, the expression and its meaning.
    """
    inp = KnowledgeInput.from_record(record)
    row: dict[str, Any] = {"narrative": inp.narrative}
    meaning = getattr(record, "meaning", None)
    options = getattr(record, "options", None)
    if inp.expression_type == "idiom":
        row["meaning"] = meaning
        row["idiom"] = inp.expression
    if options is not None:
        for i, text in enumerate(options):
            row[f"option{i + 1}"] = text
        label = getattr(record, "label", None)
        row["correctanswer"] = f"option{label + 1}" if isinstance(label, int) else None
    if inp.expression_type == "simile":
        row["simile"] = inp.expression
        row["property"] = meaning if meaning is not None else False
    row["inferences"] = list(inferences)
    return row


def write_inference_file(records: Sequence[Record], inferences: Sequence[Sequence[str]], path: str | Path) -> Path:
    """Write records with their inferences as a shipped-format JSONL file (atomically)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for r, inf in zip(records, inferences):
            fh.write(json.dumps(inference_row(r, inf), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def write_data_dir(
    provider: KnowledgeProvider,
    kind: str,
    out_dir: str | Path,
    data_dir: str | Path | None = None,
    types: Iterable[str] = ("idiom", "simile"),
    splits: Iterable[str] = ("train", "dev", "test"),
    progress: Any = None,
    *,
    ctx: RunContext | None = None,
) -> list[Path]:
    """A data directory whose ``{type}_inferences_{kind}`` files come from ``provider``, copied from the run context's
    data folder (or ``data_dir``).

    ``out_dir/fig_narrative/data/`` gets copies of the narrative files and of the other kind's
    shipped inference files, and provider-made files for ``kind``, line-aligned with the narrative
    files as the loader requires. ``figlang eval``/``figlang train --data-dir out_dir`` then use the
    provider's knowledge unchanged. (Derived data: never commit it.) Returns the files written.
    """

    provider.check_kind(kind)
    root = run_context(ctx, data_dir=data_dir).data_dir
    out = Path(out_dir)
    written: list[Path] = []
    for etype in types:
        for split in splits:
            src = narrative_file(root, etype, split)
            if not src.is_file():
                continue
            dst = narrative_file(out, etype, split)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            for other in INFERENCE_KINDS:
                if other != kind and inference_file(root, etype, split, other).is_file():
                    target = inference_file(out, etype, split, other)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(inference_file(root, etype, split, other), target)
            records = load_cloze(etype, split, root, LoadOptions(), inferences=isinstance(provider, PrecomputedProvider))
            infs = provider.infer(records, kind)
            written.append(write_inference_file(records, infs, inference_file(out, etype, split, kind)))
            if progress is not None:
                progress(etype, split, len(records))
    return written
