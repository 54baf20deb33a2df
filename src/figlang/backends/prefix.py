"""Shared token prefixes: the one measure every prefix-reusing path (LM scoring, frozen features) agrees on."""

from __future__ import annotations

from collections.abc import Sequence


def shared_prefix_length(seqs: Sequence[Sequence[int]], keep: int = 2) -> int:
    """How many leading tokens all ``seqs`` share, leaving each at least ``keep`` tokens of its own.

    LM scoring keeps 2 (the last context token predicts the first option token); a pooled
    representation keeps 1 (the token whose state is read must run after the cache).
    """
    room = min(len(s) for s in seqs) - keep
    first = seqs[0]
    n = 0
    while n < room and all(s[n] == first[n] for s in seqs):
        n += 1
    return n


__all__ = ["shared_prefix_length"]
