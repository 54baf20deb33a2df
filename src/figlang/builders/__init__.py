"""Dataset builders: the pipelines that make benchmarks from raw text."""

from __future__ import annotations

import importlib

# --- narrative miner (paper section 3): corpus → candidate narratives → annotation round trip.
# Exported lazily: importing one builder never imports (or breaks on) another.
_NARRATIVE_MINER = {
    "figlang.builders.annotation": ("export_tasks", "import_answers", "load_candidates"),
    "figlang.builders.corpus": ("CorpusReport", "Document", "ReadOptions", "discover", "read_documents", "strip_gutenberg"),
    "figlang.lexicon.matcher": ("IdiomMatch", "IdiomMatcher"),
    "figlang.lexicon.idioms": (
        "Lexicon",
        "LexiconEntry",
        "load_benchmark_lexicon",
        "load_lexicon",
        "load_lexicon_file",
        "load_pie_lexicon",
    ),
    "figlang.builders.narratives": ("MinerConfig", "MinerPipeline", "MineSummary", "mine_corpus", "mine_texts", "process_shard"),
    "figlang.lexicon.similes": ("SimileHit", "find_similes", "simile_prefilter"),
}
_LAZY = {name: module for module, names in _NARRATIVE_MINER.items() for name in names}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
