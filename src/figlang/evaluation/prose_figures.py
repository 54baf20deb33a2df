"""Prose figures at their place, and the numbers of prose that nothing accounts for.

A figure quoted in a sentence is registered with an anchor: the words around it as the page prints them, the
figure in ``{{ }}`` (``at:`` in docs/results/INDEX.yaml, written by scripts/results_index.py). The check finds the anchor in
the page, whitespace collapsed, exactly once: a changed digit, a flipped sign or a figure moved to another
sentence no longer matches it. The sign printed before the figure (``−``, ``-``, ``+``) must agree with the
value's sign, so a difference registered by its magnitude (the ``abs`` derivation) cannot lose or gain one.

The other direction: every headline-like number of a page's prose (a percentage, a decimal, a ratio such as
82/100, a time such as "35 minutes", a speed-up "3×") must be a registered figure's anchored token or sit in
the span of an entry of docs/results/NOT-FIGURES.yaml (the page, the words around it, what it is and why);
a research page whose head says ``<!-- unverified-figures: WHY -->`` is a dated lab note and is not scanned.
Tables and code blocks are left to the table checks of :mod:`figlang.evaluation.registry`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError

# a number standing alone: not part of a word or a file name (option1, gpt2-xl, k5, p0.9.jsonl)
NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e-?\d+)?(?![\w]|\.\w)")  # 1.4e-5: a p-value
MINUS = "−"  # U+2212, the typographic minus the documents print
NOT_FIGURES_FILE = "NOT-FIGURES.yaml"
NOT_FIGURE_KINDS = ("setting", "version", "date", "estimate", "paper", "example", "count", "unverified", "machine")
# <!-- unverified-figures: WHY --> at a page's head: a dated lab note whose figures are as measured then, not checked
PAGE_MARK = re.compile(r"^<!--\s*unverified-figures:\s*(\S.*?)\s*-->", re.M)  # on a line of its own
_FENCE = re.compile(r"^\s*(```|~~~)")
# not prose: HTML comments, inline code, link targets, bare addresses
_MASKED = re.compile(r"<!--.*?-->|`[^`\n]*`|\]\([^)\s]*\)|<https?://[^>]*>|https?://\S+", re.S)
_TIME = r"\s?(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|CPU s|CPU seconds?)(?![\w])"


@dataclass(frozen=True)
class Flat:
    """A page as one line: whitespace runs collapsed to one space; ``prose[i]`` is False where character i sits
    in a fenced code block, a table line, an HTML comment, inline code or a link target."""

    text: str
    prose: tuple[bool, ...]


@functools.lru_cache(maxsize=64)  # a page is flattened once for all its figures and checks
def flatten(markdown: str) -> Flat:
    keep = [True] * len(markdown)
    pos, fence = 0, False
    for line in markdown.splitlines(keepends=True):
        is_fence = bool(_FENCE.match(line))
        if is_fence or fence or line.lstrip().startswith("|"):
            keep[pos : pos + len(line)] = [False] * len(line)
        fence = fence != is_fence
        pos += len(line)
    for m in _MASKED.finditer(markdown):
        keep[m.start() : m.end()] = [False] * (m.end() - m.start())
    out: list[str] = []
    flags: list[bool] = []
    for ch, k in zip(markdown, keep):
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                flags.append(False)
            continue
        out.append(ch)
        flags.append(k)
    return Flat("".join(out), tuple(flags))


def printed_sign(text: str, start: int) -> int:
    """-1, +1 or 0: the sign printed just before the number at ``start`` (``−``; ``-`` not joining two numbers or
    words, as 2-45 or IMPLI-2 do; ``+``)."""
    before = text[start - 1] if start else ""
    if before == MINUS:
        return -1
    if before == "+":
        return 1
    if before == "-" and (start < 2 or not text[start - 2].isalnum()):
        return -1
    return 0


def sign_problem(where: str, raw: float, sign: int, text: str, unit: float) -> str | None:
    """Why a figure whose signed value is ``raw`` may not be printed with ``sign`` (None when it may): a minus
    before zero or a positive value, none or a plus before a negative one (a magnitude shows its sign), except
    where the negative value rounds to zero at the printed precision."""
    if raw >= 0 and sign < 0:  # a minus before zero or a positive value, even one that rounds to zero
        return f"{where}: the value is {'zero' if raw == 0 else 'positive'} ({raw:.6g}) but the page prints {MINUS}{text}"
    if raw < 0 and sign >= 0 and abs(raw) >= unit / 2:  # a negative value that rounds to zero may print either way
        return f"{where}: the value is negative ({raw:.6g}) but the page prints {'+' if sign > 0 else 'no sign before '}{text}"
    return None


def tokens(text: str, figure_text: str) -> list[int]:
    """Start offsets of ``figure_text`` standing alone as a number in ``text``."""
    return [m.start() for m in NUMBER.finditer(text) if m.group(0) == figure_text]


def anchor_context(flat: Flat, start: int, end: int, words: int = 4) -> str:
    """The words around ``flat.text[start:end]``, the figure itself in ``{{ }}``: ``words`` words each side, widened
    until they occur once in the page."""
    text = flat.text
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    i = next(k for k, (a, b) in enumerate(spans) if a <= start < b)
    j = next(k for k, (a, b) in enumerate(spans) if a < end <= b)
    for n in range(words, 60):
        a, b = spans[max(0, i - n)][0], spans[min(len(spans) - 1, j + n)][1]
        if text.count(text[a:b]) == 1:
            return f"{text[a:start]}{{{{{text[start:end]}}}}}{text[end:b]}"
    raise FiglangError(f"no unique context around {text[start:end]!r}")


def anchor_places(flat: Flat, at: str, figure_text: str) -> tuple[int | None, str | None]:
    """(the offset in the page of the figure's token, the one in ``{{ }}`` of its anchor ``at``, or None; the problem)."""
    mark = re.search(r"\{\{(.*?)\}\}", at)
    if not mark or mark.group(1) != figure_text:
        return None, f"its anchor {at!r} does not hold {{{{{figure_text}}}}}"
    plain = at[: mark.start()] + figure_text + at[mark.end() :]
    found = [m.start() + mark.start() for m in re.finditer(re.escape(plain), flat.text)]
    if not found:
        return None, f"the page no longer prints {plain!r} (a changed digit, sign or wording at the figure's place)"
    if len(found) > 1:
        return None, f"its anchor {plain!r} occurs {len(found)} times in the page; widen it (scripts/results_index.py)"
    near = NUMBER.finditer(flat.text, max(0, found[0] - 2), found[0] + len(figure_text) + 3)
    if not any(m.start() == found[0] and m.group(0) == figure_text for m in near):
        return None, f"in {plain!r}, {figure_text} is part of a longer number or word"
    return found[0], None


def headline_numbers(flat: Flat) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each number in the page's prose that reads like a result: a percentage, a decimal, a
    ratio (82/100), a time (35 minutes, 322 s) or a speed-up (3×). Plain integers (counts, years, settings) are not."""
    out = []
    text = flat.text
    for m in NUMBER.finditer(text):
        if not flat.prose[m.start()]:
            continue
        after, before = text[m.end() : m.end() + 14], text[max(0, m.start() - 1) : m.start()]
        if re.match(r"\s?%", after):
            kind = "percentage"
        elif "." in m.group(0) or "e" in m.group(0):
            kind = "decimal"
        elif re.match(r"/\d", after) or (before == "/" and re.search(r"\d/$", text[: m.start()])):
            kind = "ratio"
        elif re.match(_TIME, after):
            kind = "time"
        elif after.startswith("×"):
            kind = "speed-up"
        else:
            continue
        out.append((m.start(), m.end(), kind))
    return out


@dataclass(frozen=True)
class NotFigure:
    """An entry of NOT-FIGURES.yaml: the numbers inside ``at`` on page ``doc`` (the words as the page prints them,
    found once), or inside every match of the regular expression ``pattern`` on ``doc`` (``"*"``: every checked
    page), are not results; ``kind`` says what they are and ``why`` says more."""

    doc: str
    at: str | None
    kind: str
    why: str
    pattern: str | None = None

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self.pattern is not None:
            return [(m.start(), m.end()) for m in re.finditer(self.pattern, text)]
        return [(m.start(), m.end()) for m in re.finditer(re.escape(self.at or ""), text)]


def load_not_figures(results_dir: str | Path) -> list[NotFigure]:
    import yaml

    path = Path(results_dir) / NOT_FIGURES_FILE
    if not path.exists():
        return []
    out = []
    for i, entry in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
        try:
            at, pattern = entry.get("at"), entry.get("pattern")
            if (at is None) == (pattern is None):
                raise KeyError("at or pattern")
            out.append(NotFigure(str(entry["doc"]), at, str(entry["kind"]), str(entry["why"]).strip(), pattern))
        except (KeyError, TypeError, AttributeError):
            raise FiglangError(f"{path}: entry {i + 1} needs doc, at (or pattern), kind and why") from None
    return out


def unaccounted_numbers(doc: str, markdown: str, registered: dict[int, Any], marks: Sequence[NotFigure]) -> tuple[list[str], int, int]:
    """(problems, headline numbers accounted for by a figure, by a NOT-FIGURES entry) of one page's prose.

    ``registered``: page offsets (in :func:`flatten`'s text) of registered figures' anchored tokens. A NOT-FIGURES
    entry that no longer occurs once, has an unknown kind or no reason, is a problem too."""
    flat = flatten(markdown)
    problems: list[str] = []
    spans: list[tuple[int, int]] = []
    for mark in marks:
        found = mark.spans(flat.text)
        if mark.at is not None and len(found) != 1:
            problems.append(f"{doc}: {NOT_FIGURES_FILE} entry {mark.at!r} occurs {len(found)} times in the page (once expected)")
        if mark.kind not in NOT_FIGURE_KINDS or not mark.why:
            problems.append(
                f"{doc}: {NOT_FIGURES_FILE} entry {mark.at or mark.pattern!r}: kind one of {', '.join(NOT_FIGURE_KINDS)}, and a why"
            )
        spans += found
    by_figure = by_mark = 0
    for start, end, kind in headline_numbers(flat):
        if start in registered:
            by_figure += 1
        elif any(a <= start < b for a, b in spans):
            by_mark += 1
        else:
            context = flat.text[max(0, start - 40) : end + 30]
            problems.append(
                f"{doc}: the {kind} {flat.text[start:end]} in '…{context}…' is neither a registered figure "
                f"(INDEX.yaml, anchored) nor marked in docs/results/{NOT_FIGURES_FILE}"
            )
    return problems, by_figure, by_mark


__all__ = [
    "Flat",
    "MINUS",
    "NOT_FIGURES_FILE",
    "NUMBER",
    "NotFigure",
    "PAGE_MARK",
    "anchor_context",
    "anchor_places",
    "flatten",
    "headline_numbers",
    "load_not_figures",
    "printed_sign",
    "sign_problem",
    "tokens",
    "unaccounted_numbers",
]
