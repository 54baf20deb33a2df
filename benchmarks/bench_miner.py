"""Measurements of the narrative miner (docs/research/narrative_miner.md reports their output).

    python benchmarks/bench_miner.py recall --data-dir ../shared/data            # target 1
    python benchmarks/bench_miner.py pie-similes --data-dir ../shared/data       # target 2, recall
    python benchmarks/bench_miner.py simile-sample OUT_DIR --n 100 --seed 13     # target 2, precision sample
    python benchmarks/bench_miner.py precision docs/research/simile_precision_sample.tsv  # target 2, precision
    python benchmarks/bench_miner.py throughput ../shared/data/gutenberg --workers 1 2   # target 3
    python benchmarks/bench_miner.py ray-check ../shared/data/gutenberg --files 3        # target 3, Ray == local

Every command prints a JSON report (and writes it with --json-out); recall and pie-similes record the command, the
data files' checksums, spaCy/model/figlang versions and the git commit, and write per-item records with --items.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from figlang.lexicon.idioms import load_benchmark_lexicon, normalise_idiom
from figlang.builders.narratives import MinerConfig, mine_corpus, mine_texts
from figlang.data.records import strip_markup

REPO = Path(__file__).resolve().parents[1]


def _emit(report: dict, json_out: str | None) -> None:
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if json_out:
        Path(json_out).write_text(text + "\n", encoding="utf-8")


def _provenance(config: MinerConfig, data: Path, files: list[Path], command: str) -> dict:
    """What made a report: the command, the miner's settings, the data files' checksums, spaCy/model/lemminflect
    and figlang versions and git commit."""
    from importlib.metadata import version

    from figlang.builders.narratives import _versions
    from figlang.evaluation.provenance import code_provenance, data_checksums, portable_path

    return {
        "command": command,
        "config": config.to_dict(),
        "versions": {**_versions(config.model), "lemminflect": version("lemminflect")},
        "data": {"data_dir": portable_path(data), "files": data_checksums(files, data)},
        "code": code_provenance(),
    }


def _command(argv: list[str] | None) -> str:
    from figlang.evaluation.provenance import portable_path

    args = sys.argv[1:] if argv is None else argv
    return "python benchmarks/bench_miner.py " + " ".join(portable_path(a) if a.startswith("/") else a for a in args)


def _write_items(path: str | None, rows: list[dict]) -> None:
    if path:
        from figlang.core.io import write_jsonl

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(path, rows)  # gzip'd (reproducibly) when the name ends in .gz


def _ws(text: str) -> str:
    return " ".join(text.split())


# ----------------------------------------------------------------------------------- target 1


def cmd_recall(args) -> None:
    """Mine the benchmark's own idiom narratives (markup removed, one document each)."""
    data = Path(args.data_dir)
    lexicon = load_benchmark_lexicon(data)
    config = MinerConfig(
        similes=False, segmenter=args.segmenter, min_words=0, max_words=100_000, max_sentence_words=100_000, min_final_words=1
    )
    report: dict = {"segmenter": args.segmenter, "lexicon_entries": len(lexicon), "splits": {}}
    misses_out = []
    items_out = []
    for split in args.splits:
        rows = [json.loads(line) for line in open(data / "fig_narrative/data/idiom" / f"{split}.jsonl", encoding="utf-8")]
        distinct: dict[str, dict] = {}
        for r in rows:
            distinct.setdefault(r["narrative"], r)
        items = list(distinct.values())
        t0 = time.time()
        res = mine_texts([(str(i), strip_markup(r["narrative"])) for i, r in enumerate(items)], lexicon, config)
        seconds = time.time() - t0
        hits = defaultdict(list)
        for h in res.hits:
            hits[h["doc"].rsplit(":", 1)[1]].append(h)
        mined = defaultdict(list)
        for rec in res.narratives:
            mined[rec["source"]["doc"].rsplit(":", 1)[1]].append(rec)
        # sentences per document: the largest sentence index seen is not enough (hits only); re-count from narratives
        counts = {doc.rsplit(":", 1)[1]: n for doc, n in res.doc_sentences}
        n_sents = [counts.get(str(i), 0) for i in range(len(items))]
        cats: Counter = Counter()
        exact = exact_eligible = markup_same = 0
        five = Counter()
        for i, r in enumerate(items):
            key = normalise_idiom(r["idiom"])
            hs = hits.get(str(i), [])
            last = n_sents[i] - 1
            five["5" if n_sents[i] == 5 else ("<5" if n_sents[i] < 5 else ">5")] += 1
            same = [h for h in hs if normalise_idiom(h["expression"]) == key]
            in_last = [h for h in same if h["sentence_index"] == last]
            item = {
                "split": split,
                "doc": i,
                "idiom": r["idiom"],
                "sentences": n_sents[i],
                "hit_in_last_sentence": bool(in_last),
                "found": [[h["expression"], h["sentence_index"]] for h in hs],
            }
            items_out.append(item)
            if in_last:
                cats["recovered_in_last_sentence"] += 1
                h = in_last[0]
                gold = re.findall(r"<b>(.*?)</b>", r["narrative"])
                item["marked_span_identical"] = bool(gold and _ws(gold[-1]).lower() == _ws(h["matched"]).lower())
                markup_same += item["marked_span_identical"]
                if n_sents[i] >= 5:
                    exact_eligible += 1
                if n_sents[i] == 5:
                    # the mined narrative is the benchmark's, up to whitespace (markup removed)
                    same_text = [
                        m
                        for m in mined.get(str(i), [])
                        if normalise_idiom(m.get("idiom", "")) == key
                        and re.sub(r"\s+", "", strip_markup(m["narrative"])) == re.sub(r"\s+", "", strip_markup(r["narrative"]))
                    ]
                    exact += bool(same_text)
                    item["exact_5_sentence_narrative"] = bool(same_text)
                item["category"] = "recovered_in_last_sentence"
                continue
            if same:
                cat = "found_in_earlier_sentence"
            elif any(key in normalise_idiom(h["expression"]) or normalise_idiom(h["expression"]) in key for h in hs):
                cat = "matched_overlapping_lexicon_idiom"
            else:
                cat = "not_found"
            cats[cat] += 1
            item["category"] = cat
            misses_out.append(
                {
                    "split": split,
                    "category": cat,
                    "idiom": r["idiom"],
                    "marked": re.findall(r"<b>(.*?)</b>", r["narrative"]),
                    "found": [(h["expression"], h["sentence_index"]) for h in hs],
                    "sentences": n_sents[i],
                    "tail": strip_markup(r["narrative"])[-160:],
                }
            )
        n = len(items)
        report["splits"][split] = {
            "narratives": n,
            "recovered_in_last_sentence": cats["recovered_in_last_sentence"],
            "recall_last_sentence": cats["recovered_in_last_sentence"] / n,
            "recovered_in_any_sentence": cats["recovered_in_last_sentence"] + cats["found_in_earlier_sentence"],
            "miss_categories": {k: v for k, v in cats.items() if k != "recovered_in_last_sentence"},
            "sentence_counts": dict(five),
            "exact_5_sentence_narrative": exact,
            "hits_in_last_with_5plus_sentences": exact_eligible,
            "marked_span_identical_to_benchmark": markup_same,
            "seconds": round(seconds, 1),
            "shard_stats": {k: v for k, v in res.stats.items() if k in {"sentences", "idiom_candidates", "tagged", "idiom_hits"}},
        }
    splits = report["splits"].values()
    report["totals"] = {
        "narratives": sum(x["narratives"] for x in splits),
        "recovered_in_last_sentence": sum(x["recovered_in_last_sentence"] for x in splits),
        "exactly_5_sentences": sum(x["sentence_counts"].get("5", 0) for x in splits),
        "exact_5_sentence_narrative": sum(x["exact_5_sentence_narrative"] for x in splits),
        "seconds": round(sum(x["seconds"] for x in splits), 1),
    }
    report["provenance"] = _provenance(config, data, [data / "fig_narrative/data/idiom" / f"{s}.jsonl" for s in args.splits], args.command)
    if args.misses:
        with open(args.misses, "w", encoding="utf-8") as f:
            for m in misses_out:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")
    _write_items(args.items, items_out)
    _emit(report, args.json_out)


# ----------------------------------------------------------------------------------- target 2


def _pie_samples(data: Path) -> list[dict]:
    path = data / "pie_english/_extracted_from_idiomscorpus.zip/idiomscorpus.csv"
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    samples, cur = [], None
    for line, r in enumerate(rows, start=2):
        if r["id"]:
            cur = {"id": int(r["id"]), "line": line, "tokens": [], "class": r["class"], "meaning": r["meaning"]}
            samples.append(cur)
        cur["tokens"].append(r["token"])
    group = None
    for s in samples:
        if s["meaning"]:
            group = s
        s["head"] = group
    return samples


def _detok(tokens: list[str]) -> str:
    text = " ".join(tokens)
    text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    text = re.sub(r" ([,.!?;:])", r"\1", text)
    return text.replace("`` ", '"').replace(" ''", '"')


def _vehicle_word(expression: str) -> str | None:
    """The head word of a PIE simile's vehicle: last noun-ish word after 'as'/'like'."""
    words = expression.lower().replace("'s", "").split()
    for marker in ("like", "as"):
        if marker in words:
            idx = len(words) - 1 - words[::-1].index(marker)
            tail = [
                w
                for w in words[idx + 1 :]
                if w not in {"a", "an", "the", "on", "in", "of", "off", "to", "from", "through", "out", "is", "day"}
            ]
            if tail:
                return tail[0]
    return None


def cmd_pie_similes(args) -> None:
    """Recall of PIE-English's Simile-class example sentences.

    PIE marks no span: each idiom group starts with a sample that *is* the expression (with its
    meaning), followed by example sentences containing it. A sentence counts as recovered when
    a simile hit's vehicle contains the head word of the group expression's vehicle
    ("as white as a sheet" → "sheet").
    """
    data = Path(args.data_dir)
    samples = [s for s in _pie_samples(data) if s["class"] == "Simile" and s["head"] is not s]
    texts = [(str(s["id"]), _detok(s["tokens"])) for s in samples]
    report = {}
    items_out = []
    for implicit in (False, True):
        config = MinerConfig(idioms=False, implicit_like=implicit, min_words=0, max_words=100_000, min_final_words=1)
        res = mine_texts(texts, None, config)
        by_doc = defaultdict(list)
        for h in res.hits:
            by_doc[h["doc"].rsplit(":", 1)[1]].append(h)
        per_pattern = Counter()
        explicit_shape = Counter()
        found = 0
        groups = Counter()
        group_found = Counter()
        for s in samples:
            head = " ".join(s["head"]["tokens"])
            veh = _vehicle_word(head)
            shape = "as_as" if re.match(r"^as \w+ as ", head) else ("x_as" if re.match(r"^\w+ as ", head) else "like")
            explicit_shape[shape] += 1
            groups[head] += 1
            ok = [h for h in by_doc.get(str(s["id"]), []) if veh and veh in h["expression"].lower()]
            items_out.append(
                {
                    "verb_like": implicit,
                    "pie_id": s["id"],
                    "pie_line": s["line"],
                    "group_expression": head,
                    "shape": shape,
                    "vehicle_word": veh,
                    "recovered": bool(ok),
                    "hits": [h["expression"] for h in by_doc.get(str(s["id"]), [])],
                }
            )
            if ok:
                found += 1
                group_found[head] += 1
                per_pattern[shape] += 1
        key = "explicit_patterns" if not implicit else "explicit_plus_verb_like"
        report[key] = {
            "sentences": len(samples),
            "recovered": found,
            "recall": found / len(samples),
            "by_expression_shape": {
                k: {"sentences": explicit_shape[k], "recovered": per_pattern[k], "recall": per_pattern[k] / explicit_shape[k]}
                for k in explicit_shape
            },
            "expressions": len(groups),
            "per_expression": {g: f"{group_found[g]}/{groups[g]}" for g in groups} if args.per_expression else None,
        }
        report[key]["provenance"] = _provenance(
            config, data, [data / "pie_english/_extracted_from_idiomscorpus.zip/idiomscorpus.csv"], args.command
        )
    _write_items(args.items, items_out)
    _emit(report, args.json_out)


def cmd_simile_sample(args) -> None:
    """Sample N simile narratives of a mined folder (fixed seed) into a TSV for manual judgement."""
    recs = [json.loads(line) for line in open(Path(args.out_dir) / "narratives.jsonl", encoding="utf-8")]
    sims = [r for r in recs if r["type"] == "simile"]
    rng = random.Random(args.seed)
    sample = rng.sample(sims, min(args.n, len(sims)))
    dest = Path(args.tsv)
    with open(dest, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["n", "id", "pattern", "explicit", "topic", "property", "vehicle", "sentence", "judgement", "note"])
        for i, r in enumerate(sample, start=1):
            s = r["simile_info"]
            w.writerow(
                [i, r["id"], s["pattern"], s["explicit"], s["topic"] or "", s["property"] or "", s["vehicle"], r["sentence"], "", ""]
            )
    print(json.dumps({"simile_narratives": len(sims), "sampled": len(sample), "seed": args.seed, "tsv": str(dest)}))


def cmd_precision(args) -> None:
    """Precision from a judged sample TSV (judgement: yes | no)."""
    rows = list(csv.DictReader(open(args.tsv, encoding="utf-8"), delimiter="\t"))
    judged = [r for r in rows if r["judgement"].strip()]
    yes = sum(r["judgement"].strip().lower() in {"yes", "y", "1"} for r in judged)
    by_pattern = defaultdict(lambda: [0, 0])
    for r in judged:
        by_pattern[r["pattern"]][1] += 1
        by_pattern[r["pattern"]][0] += r["judgement"].strip().lower() in {"yes", "y", "1"}
    errors = Counter(r["note"].split(":")[0].strip() for r in judged if r["judgement"].strip().lower() not in {"yes", "y", "1"})
    _emit(
        {
            "judged": len(judged),
            "similes": yes,
            "precision": round(yes / len(judged), 4) if judged else None,
            "by_pattern": {k: {"similes": v[0], "judged": v[1]} for k, v in by_pattern.items()},
            "errors": dict(errors),
        },
        args.json_out,
    )


# ----------------------------------------------------------------------------------- target 3


def cmd_throughput(args) -> None:
    """Mine a folder with 1, 2 … worker processes; sentences/s, peak memory per worker, counts."""
    from figlang.lexicon.idioms import load_lexicon

    lexicon = load_lexicon(args.lexicon, args.data_dir)
    import os

    report: dict = {"corpus": args.corpus, "lexicon": args.lexicon, "lexicon_entries": len(lexicon), "cpus": os.cpu_count(), "runs": []}
    outputs = []
    for w in args.workers:
        out = Path(args.keep) / f"workers{w}" if args.keep else Path(tempfile.mkdtemp(prefix=f"bench_miner_w{w}_"))
        t0 = time.time()
        load_before = os.getloadavg()[0]
        summary = mine_corpus([args.corpus], out, lexicon, MinerConfig(segmenter=args.segmenter), workers=w, use_ray=args.ray, restart=True)
        wall = time.time() - t0
        tot = summary.totals
        outputs.append((out / "narratives.jsonl").read_bytes())
        report["runs"].append(
            {
                "workers": w,
                "ray": args.ray,
                "wall_seconds": round(wall, 1),
                "load_average_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                "worker_cpu_seconds": [x["cpu_seconds"] for x in summary.workers],
                "worker_busy_seconds": [x["seconds"] for x in summary.workers],
                "peak_rss_mb_per_worker": [x["peak_rss_mb"] for x in summary.workers],
                "cpu_sentences_per_second": round(tot["sentences"] / max(1e-9, sum(x["cpu_seconds"] for x in summary.workers)), 1),
                "sentences": tot["sentences"],
                "sentences_per_second": round(tot["sentences"] / wall, 1),
                "documents": tot["documents"],
                "parsed": tot["parsed"],
                "tagged": tot["tagged"],
                "prefiltered_out": tot["prefiltered"],
                "shares_of_sentences": {k: tot[k] / tot["sentences"] for k in ("prefiltered", "tagged", "parsed")}
                if tot["sentences"]
                else None,
                "idiom_hits": tot["idiom_hits"],
                "simile_hits": tot["simile_hits"],
                "narratives": tot["narratives"],
                "idiom_narratives": sum(1 for line in open(out / "narratives.jsonl", encoding="utf-8") if '"type": "idiom"' in line),
                "simile_narratives": sum(1 for line in open(out / "narratives.jsonl", encoding="utf-8") if '"type": "simile"' in line),
                "distinct_idioms": len(
                    {
                        json.loads(line).get("idiom")
                        for line in open(out / "narratives.jsonl", encoding="utf-8")
                        if '"type": "idiom"' in line
                    }
                ),
                "workers_detail": summary.workers,
                "failures": [f.to_dict() for f in summary.failures],
                "skipped": {k: v for k, v in tot.items() if k.startswith("skipped:")},
                "out": str(out),
            }
        )
    report["identical_outputs"] = len(set(outputs)) == 1
    corpus = Path(args.corpus)
    files = sorted(f for f in corpus.rglob("*") if f.is_file()) if corpus.is_dir() else [corpus]
    report["provenance"] = _provenance(MinerConfig(segmenter=args.segmenter), Path(args.data_dir), files, args.command)
    if args.items:  # one record per shard (a book) of the first run: its counts, from the shard's stats file
        _write_items(args.items, _shard_records(Path(report["runs"][0]["out"]) / "shards"))
    _emit(report, args.json_out)


def _shard_records(shard_dir: Path) -> list[dict]:
    """A mined folder's per-shard counts (its shards/*.stats.json), without machine paths: the source as displayed."""
    out = []
    for f in sorted(shard_dir.glob("*.stats.json")):
        st = json.loads(f.read_text(encoding="utf-8"))
        shard = dict(st["shard"])
        shard["source"] = {k: v for k, v in shard.get("source", {}).items() if k != "path"}
        out.append({"shard": shard, "stats": st["stats"], "skipped": st["skipped"]})
    return out


def cmd_ray_check(args) -> None:
    """The first --files files of a folder: Ray (local cluster) output == single-process output."""
    from figlang.lexicon.idioms import load_lexicon

    files = sorted(Path(args.corpus).glob("*.txt"))[: args.files]
    lexicon = load_lexicon(args.lexicon, args.data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        a = mine_corpus(files, Path(tmp) / "local", lexicon, workers=1)
        b = mine_corpus(files, Path(tmp) / "ray", lexicon, workers=2, use_ray=True)
        same = (Path(tmp) / "local/narratives.jsonl").read_bytes() == (Path(tmp) / "ray/narratives.jsonl").read_bytes()
        same_hits = (Path(tmp) / "local/hits.jsonl").read_bytes() == (Path(tmp) / "ray/hits.jsonl").read_bytes()
        _emit(
            {
                "files": [f.name for f in files],
                "narratives": a.totals["narratives"],
                "identical_narratives": same,
                "identical_hits": same_hits,
                "local_seconds": round(a.seconds, 1),
                "ray_seconds": round(b.seconds, 1),
            },
            args.json_out,
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    default_data = str(REPO.parent / "shared" / "data")
    p = sub.add_parser("recall")
    p.add_argument("--data-dir", default=default_data)
    p.add_argument("--splits", nargs="+", default=["train", "dev", "test"])
    p.add_argument("--segmenter", default="senter")
    p.add_argument("--misses", help="write every miss as JSONL here")
    p.add_argument("--items", help="write one record per narrative here (JSONL; gzip'd when it ends in .gz)")
    p.add_argument("--json-out")
    p.set_defaults(fn=cmd_recall)
    p = sub.add_parser("pie-similes")
    p.add_argument("--data-dir", default=default_data)
    p.add_argument("--per-expression", action="store_true")
    p.add_argument("--items", help="write one record per PIE sentence and pattern set here (JSONL; gzip'd when it ends in .gz)")
    p.add_argument("--json-out")
    p.set_defaults(fn=cmd_pie_similes)
    p = sub.add_parser("simile-sample")
    p.add_argument("out_dir")
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--tsv", default=str(REPO / "docs" / "research" / "simile_precision_sample.tsv"))
    p.set_defaults(fn=cmd_simile_sample)
    p = sub.add_parser("precision")
    p.add_argument("tsv")
    p.add_argument("--json-out")
    p.set_defaults(fn=cmd_precision)
    p = sub.add_parser("throughput")
    p.add_argument("corpus")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--lexicon", default="benchmark")
    p.add_argument("--data-dir", default=default_data)
    p.add_argument("--segmenter", default="senter")
    p.add_argument("--ray", action="store_true")
    p.add_argument("--keep", help="keep the mined folders under this folder")
    p.add_argument("--items", help="write one record per shard of the first run here (JSONL; gzip'd when it ends in .gz)")
    p.add_argument("--json-out")
    p.set_defaults(fn=cmd_throughput)
    p = sub.add_parser("ray-check")
    p.add_argument("corpus")
    p.add_argument("--files", type=int, default=3)
    p.add_argument("--lexicon", default="benchmark")
    p.add_argument("--data-dir", default=default_data)
    p.add_argument("--json-out")
    p.set_defaults(fn=cmd_ray_check)
    args = ap.parse_args(argv)
    args.command = _command(argv)
    args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
