"""Accuracy of an ``lm-score -O norm=pmi`` run under every normalisation, from the log-probabilities it recorded.

A pmi run keeps each option's conditional log-probability, token count and neutral-prompt log-probability
(``meta.logprob``, ``meta.n_tokens``, ``meta.neutral_logprob`` in predictions.jsonl). ``norm=sum|token|char``
ask the backend the same conditional requests, so their accuracies follow from one pmi run without a second
pass; docs/research/zero_shot_results.md quotes them, and this recomputes them from the committed predictions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.methods.prompted import argmax_first
from figlang.methods.prompted.prompts import LM_SCORE_CONTINUATION

NORMS = ("sum", "token", "char", "pmi")


def norm_scores(row: dict[str, Any], norm: str) -> list[float]:
    """One prediction row's option scores under ``norm``, as ``lm-score -O norm=NORM`` computes them."""
    meta, options = row["meta"], row["options"]
    logprob = meta["logprob"]
    if norm == "sum":
        return list(logprob)
    if norm == "token":
        return [lp / max(n, 1) for lp, n in zip(logprob, meta["n_tokens"])]
    if norm == "char":  # the continuation as scored: " " + option
        return [lp / max(len(LM_SCORE_CONTINUATION.format(option=o)), 1) for lp, o in zip(logprob, options)]
    if norm == "pmi":
        return [lp - u for lp, u in zip(logprob, meta["neutral_logprob"])]
    raise FiglangError(f"unknown norm {norm!r} (known: {', '.join(NORMS)})")


def norm_accuracies(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """norm -> {accuracy, n, n_correct} over the scored rows of a pmi run (ties: the lowest index, as the method)."""
    scored = [r for r in rows if r.get("gold") is not None]
    missing = [r.get("id") for r in scored if not {"logprob", "n_tokens", "neutral_logprob"} <= set(r.get("meta") or {})]
    if not scored or missing:
        raise FiglangError(
            f"not an lm-score norm=pmi run with recorded log-probabilities ({len(missing)} rows lack meta.logprob/"
            f"n_tokens/neutral_logprob, e.g. {missing[:3]}); make it with `figlang eval -m lm-score -O norm=pmi -o DIR`"
        )
    out = {}
    for norm in NORMS:
        hits = sum(argmax_first(norm_scores(r, norm))[0] == r["gold"] for r in scored)
        out[norm] = {"accuracy": hits / len(scored), "n": len(scored), "n_correct": hits}
    return out


__all__ = ["NORMS", "norm_accuracies", "norm_scores"]
