"""Prove the results registry by mutation: change registered figures in a copy of README.md and docs/, as a typo or a
careless edit would, and count how many changes the registry's checks catch (all of them, or the check is broken).

    python scripts/registry_mutations.py              # the named mutations and a seeded sample of 300 figures
    python scripts/registry_mutations.py --sample 20  # what tests/test_results_registry.py runs

Mutations: named ones (#35: README's suite figure and timing, the tutorial's "83.1% (idiom)" -> "80.1%", a CI bound's
sign flipped in docs/research/trained_models.md, an unregistered headline number added to README), then, for each
figure of a seeded sample: its last digit changed, a sign flipped (a minus added before a positive figure, removed
before a negative one), and a rounding (its last decimal dropped). Each is applied alone to a fresh copy of the page
and checked with figlang.evaluation.registry.check_all on that page.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from figlang.evaluation.prose_figures import MINUS, NUMBER, anchor_places, flatten, load_not_figures  # noqa: E402
from figlang.evaluation.registry import Figure, assign, check_all, load_index, results_tables  # noqa: E402

RESULTS = REPO / "docs" / "results"
NAMED = [  # (what, page, text as printed, the changed text)
    ("README suite figure 78.3 -> 73.3", "README.md", "| 78.3 [68.3, 88.3] |", "| 73.3 [68.3, 88.3] |"),
    ("README wall time 375 s -> 385 s", "README.md", "Wall time 375 s", "Wall time 385 s"),
    ("tutorial 83.1% (idiom) -> 80.1%", "docs/tutorials/first-evaluation.md", "83.1% (idiom)", "80.1% (idiom)"),
    ("tutorial 84.8% (simile) -> 84.3%", "docs/tutorials/first-evaluation.md", "84.8% (simile)", "84.3% (simile)"),
    ("CI bound sign [−1.69, +6.48] -> [+1.69, +6.48]", "docs/research/trained_models.md", "[−1.69, +6.48]", "[+1.69, +6.48]"),
    ("CI bound sign dropped [−1.69 -> [1.69", "docs/research/trained_models.md", "[−1.69, +6.48]", "[1.69, +6.48]"),
    (
        "unregistered number added to README",
        "README.md",
        "figlang is Apache-2.0 licensed.",
        "figlang is Apache-2.0 licensed; it scores 91.3% on FLUTE.",
    ),
    ("unregistered time added to the tutorial", "docs/tutorials/first-evaluation.md", "83.1% (idiom)", "83.1% (idiom) in 35 minutes"),
    ("one-digit prose figure 4 -> 5", "docs/research/flute_creator.md", "(4 of them contradiction", "(5 of them contradiction"),
]


def pages() -> list[str]:
    """README.md and every page of the documentation site (docs/results/ holds result files, not pages)."""
    docs = REPO / "docs"
    return ["README.md", *sorted(str(p.relative_to(REPO)) for p in docs.rglob("*.md") if p.relative_to(docs).parts[0] != "results")]


def _raw_offset(markdown: str, flat_offset: int) -> int:
    """The offset in ``markdown`` of the character at ``flat_offset`` of flatten(markdown).text."""
    seen, space = -1, True
    for i, ch in enumerate(markdown):
        if ch.isspace():
            if not space and seen >= 0:
                seen, space = seen + 1, True
            continue
        seen, space = seen + 1, False
        if seen == flat_offset:
            return i
    raise ValueError(flat_offset)


def place(figure: Figure, markdown: str) -> int | None:
    """The offset in the page's Markdown of the figure's printed number: its anchored place, or its table cell."""
    if figure.table is None:
        at, _ = anchor_places(flatten(markdown), figure.at[0], figure.text) if figure.at else (None, None)
        return None if at is None else _raw_offset(markdown, at)
    rows = results_tables(markdown).get(figure.table, [])
    bound, _ = assign(rows, [figure])
    for i, slots in bound.items():
        token = list(NUMBER.finditer(rows[i]))[next(iter(slots))]
        return markdown.index(rows[i]) + token.start()
    return None


def figure_mutations(figure: Figure, markdown: str) -> list[tuple[str, str]]:
    """(what, the changed page) for one figure: a digit, a sign, a rounding."""
    at = place(figure, markdown)
    if at is None:
        return []
    end = at + len(figure.text)
    text = figure.text
    last = len(text) - 1
    digit = text[:last] + str((int(text[last]) + 1) % 10)
    out = [(f"{figure.where}: {text} -> {digit}", markdown[:at] + digit + markdown[end:])]
    if markdown[at - 1 : at] in (MINUS, "-"):
        out.append((f"{figure.where}: sign dropped", markdown[: at - 1] + markdown[at:]))
    elif markdown[at - 1 : at] != "+":
        out.append((f"{figure.where}: {MINUS}{text}", markdown[:at] + MINUS + markdown[at:]))
    if "." in text and len(text.split(".")[1]) > 1 and "," not in text:
        rounded = text[:-1]
        out.append((f"{figure.where}: {text} -> {rounded}", markdown[:at] + rounded + markdown[end:]))
    return out


def caught(doc: str, changed: str, figures: list[Figure], marks) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / doc).parent.mkdir(parents=True, exist_ok=True)
        (Path(tmp) / doc).write_text(changed, encoding="utf-8")
        return bool(check_all(figures, marks, RESULTS, tmp, [doc]))


def run(sample: int, seed: int = 0, named: bool = True) -> tuple[int, int, list[str]]:
    """(caught, tried, the ones missed)."""
    figures = load_index(RESULTS)
    marks = load_not_figures(RESULTS)
    tried, missed = 0, []
    if named:
        for what, doc, old, new in NAMED:
            markdown = (REPO / doc).read_text(encoding="utf-8")
            assert markdown.count(old) == 1, f"{doc}: {old!r} is not printed once; update NAMED"
            tried += 1
            if not caught(doc, markdown.replace(old, new), figures, marks):
                missed.append(what)
    checked = set(pages())
    on_pages = [f for f in figures if f.doc in checked]
    for figure in random.Random(seed).sample(on_pages, min(sample, len(on_pages))):
        markdown = (REPO / figure.doc).read_text(encoding="utf-8")
        for what, changed in figure_mutations(figure, markdown):
            tried += 1
            if not caught(figure.doc, changed, figures, marks):
                missed.append(what)
    return tried - len(missed), tried, missed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=300, help="registered figures to mutate (seeded)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    got, tried, missed = run(args.sample, args.seed)
    print(f"caught {got} of {tried} mutations ({len(NAMED)} named, {args.sample} figures sampled with seed {args.seed})")
    for m in missed:
        print("missed:", m)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
