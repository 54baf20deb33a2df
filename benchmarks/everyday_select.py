"""Choose the everyday-idioms set's idioms: rank the candidates by frequency, take the first N.

    python benchmarks/everyday_select.py --data-dir ../shared/data --take 210

``benchmarks/everyday_idioms/candidates.txt`` lists common idioms written down before the lexicon was
built. Each is counted in the Gutenberg folder (the only large running-text corpus figlang has
offline): a regular expression per idiom where a content word matches any of its inflections
(lemminflect), "someone"/"something" one to three words, "one's"/"someone's"/"your" any possessive,
"yourself"/"oneself" any reflexive, and articles any article. The candidates sorted by count (ties
in the file's order) are the frequency-ranked list; the first ``--take`` are the chosen idioms.
Writes ``benchmarks/everyday_idioms/ranked.tsv`` (rank, count, idiom, chosen). Nothing here reads
the lexicon.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent / "everyday_idioms"
POSS = r"(?:my|your|his|her|its|our|their|\w+'s)"
REFL = r"(?:myself|yourself|himself|herself|itself|oneself|ourselves|yourselves|themselves)"
SLOT = r"(?:\w+(?:\s+\w+){0,2})"
ARTICLE = r"(?:a|an|the)"


def _forms(word: str) -> set[str]:
    import lemminflect

    forms = {word}
    for upos in ("VERB", "NOUN", "ADJ"):
        for group in lemminflect.getAllInflections(word, upos=upos).values():
            forms.update(group)
    return forms


def idiom_regex(idiom: str) -> re.Pattern:
    parts = []
    for w in idiom.lower().replace("\u2019", "'").split():
        if w in {"someone", "something", "somebody"}:
            parts.append(SLOT)
        elif w in {"one's", "someone's", "your"}:
            parts.append(POSS)
        elif w in {"yourself", "oneself"}:
            parts.append(REFL)
        elif w in {"a", "an", "the"}:
            parts.append(ARTICLE)
        elif re.fullmatch(r"[a-z]+", w):
            parts.append("(?:" + "|".join(sorted(map(re.escape, _forms(w)), key=len, reverse=True)) + ")")
        else:
            parts.append(re.escape(w))
    return re.compile(r"\b" + r"\s+".join(parts) + r"\b")


def candidates() -> list[str]:
    lines = (HERE / "candidates.txt").read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--take", type=int, default=210)
    args = ap.parse_args()
    books = sorted((Path(args.data_dir) / "gutenberg").glob("*.txt"))
    text = " ".join(" ".join(b.read_text(encoding="utf-8", errors="replace").lower().replace("\u2019", "'").split()) for b in books)
    ranked = []
    for order, idiom in enumerate(candidates()):
        ranked.append((-len(idiom_regex(idiom).findall(text)), order, idiom))
    ranked.sort()
    rows = ["rank\tgutenberg_count\tidiom\tchosen"]
    for rank, (neg, _, idiom) in enumerate(ranked, start=1):
        rows.append(f"{rank}\t{-neg}\t{idiom}\t{'yes' if rank <= args.take else 'no'}")
    (HERE / "ranked.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(ranked)} candidates ranked over {len(books)} books; first {args.take} chosen -> {HERE / 'ranked.tsv'}")


if __name__ == "__main__":
    main()
