"""Model-backed methods of the three papers, added to ``figlang.methods.base.METHODS`` by :func:`register`.

* cloze: ``lm-score`` (sum / token / char / PMI), ``qa`` (UnifiedQA-style question),
  ``few-shot`` (the paper's GPT-3 format), ``pet`` (pattern-verbalizer, zero-shot)
* meaning: ``lm-score-meaning``, ``qa-meaning``, ``few-shot-meaning`` (a meaning line before the
  narrative) and ``lm-score-knowledge`` (each continuation under each of the 12 inferences, pooled)
* generation: ``generate`` (top-k sampling, zero- or few-shot)
* ``ensemble``: members chosen and weighted on selection runs (``figlang ensemble``), run in one pass
* nli: ``nli-generate`` (answer + explanation, parsed) and ``nli-score`` (label words
  scored, explanation generated for the chosen label)

Every method gets its model through :func:`backend_for`, which caches loaded backends
in-process, so a suite that runs several methods on one model loads it once.
"""

from __future__ import annotations

from typing import Any

from figlang.methods.prompted import cloze, ensemble, explain, generation, meaning, nli
from figlang.methods.prompted.common import (
    EXCLUDE_CHOICES,
    ModelMethod,
    argmax_first,
    backend_for,
    clear_backends,
    excluded_by_figure,
    item_seed,
    parse_bool,
    parse_chat,
    parse_choice,
    parse_float,
    parse_int,
    pool_digest,
    same_text,
)


def register(registry: Any) -> None:
    """Add the model-backed methods (cloze, generation, NLI) to ``registry``; the registry calls this on first use."""
    for module in (cloze, ensemble, explain, generation, meaning, nli):
        module.register(registry)


__all__ = [
    "EXCLUDE_CHOICES",
    "ModelMethod",
    "argmax_first",
    "backend_for",
    "clear_backends",
    "excluded_by_figure",
    "item_seed",
    "parse_bool",
    "parse_chat",
    "parse_choice",
    "parse_float",
    "parse_int",
    "pool_digest",
    "register",
    "same_text",
]
