"""The solved pairs an iro writer trained with ``--examples K`` reads before FLUTE's instruction.

Each prompt starts with the K pool pairs nearest to the item (MiniLM over premise and hypothesis, cosine), of its
figure type and label (the gold label in training, the given one in the ``explain`` pipeline), never the pair itself
nor a pair with its premise or hypothesis, nearest first; each written in the compact form of the ``explain``
method's shots, followed by its label word and explanation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import NLIPair
from figlang.methods.prompted.prompts import COMPACT_PAIR, flute_answer
from figlang.methods.retrieval import PairIndex

EXAMPLE_FORMAT = COMPACT_PAIR + "\n{answer}\n\n"
EXAMPLE_ENCODER = "minilm"


def example_text(example: NLIPair) -> str:
    """One solved pair as an iro model with examples reads it (``EXAMPLE_FORMAT``)."""
    premise, hypothesis = " ".join(example.premise.split()), " ".join(example.hypothesis.split())
    return EXAMPLE_FORMAT.format(premise=premise, hypothesis=hypothesis, answer=flute_answer(example))


def examples_form(k: int) -> dict[str, Any]:
    """How the retrieved examples are chosen and written (recorded in figlang.json's input_format)."""
    return {
        "k": k,
        "format": EXAMPLE_FORMAT,
        "encoder": EXAMPLE_ENCODER,
        "text": "premise + ' ' + hypothesis",
        "chosen": "the k pool pairs nearest by cosine, of the pair's figure type and label (the gold label in training, "
        "the given one in explain's pipeline, any label when the model answers the label itself), never the pair "
        "itself nor a pair with its premise or hypothesis; nearest first",
        "pool": "the training split (in training); explain's pool split, or the task's train-fit, else train, in evaluation",
    }


def example_pool(pairs: Sequence[Any]) -> PairIndex:
    """The index the examples are retrieved from: the NLI pairs among ``pairs``."""
    return PairIndex([r for r in pairs if isinstance(r, NLIPair)], EXAMPLE_ENCODER)


def examples_block(pool: PairIndex | None, record: NLIPair, k: int, label: str | None) -> str:
    """The K examples shown before a record's instruction, as one text."""
    if pool is None:
        raise FiglangError(
            f"this iro model was trained with {k} retrieved examples per pair and has no pool to retrieve them from: "
            "evaluate it with --method trained (it indexes the task's train-fit or train split) or call use_pool"
        )
    found = pool.nearest(record.premise, record.hypothesis, k, record.figure_type, label)
    return "".join(example_text(n.pair) for n in found)


__all__ = ["EXAMPLE_ENCODER", "EXAMPLE_FORMAT", "example_pool", "example_text", "examples_block", "examples_form"]
