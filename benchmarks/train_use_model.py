"""Write the labelled idiom uses figlang has as a task, so that figlang's trainer can make the shipped use model.

    python benchmarks/train_use_model.py --export --mask-idiom --data-dir ../shared/data --out runs/use-task-masked
    figlang train -t runs/use-task-masked/task.yaml -m nli --model minilm --lora-rank 8 --lr 1e-3 --epochs 5 \
        --patience 2 --bf16 --threshold accuracy --report-split test --threads 2 -o runs/cpu/use-minilm-lora8-masked
    python scripts/ship_head.py runs/cpu/use-minilm-lora8-masked use-minilm-lora --command "..."
    python benchmarks/train_use_model.py --score --data-dir ../shared/data --results docs/results/interpret

That is how ``figlang:use-minilm-lora`` was made (its record.json names the command). The variants compared with it
on ``selection`` (docs/research/interpret.md): without ``--mask-idiom`` (the sentence as written beside "idiom:
meaning"), that with ``--cap-per-idiom 3``, ten epochs, and the same command with ``--model mpnet``
(``-o runs/cpu/use-mpnet-lora8-masked``), scored from the commit that shipped it for the trial (ba185e1) with
``--score --model figlang:use-mpnet-lora --name use-model-mpnet``; it was not kept (docs/research/interpret.md says why).

Labelled uses: PIE-English's samples (its "Literal" class is a literal use of the idiom's words, every other class
figurative; meaning from the group's head), IMPLI's literal-context pairs (``lit_context_*``: a literal use, the
hypothesis putting the idiom's figurative meaning in its place) and a seeded sample of its figurative-context pairs
(``fig_context_*``); for IMPLI the idiom is the premise span the hypothesis replaced and the meaning the replacement
(IMPLI's diff rule). Each use becomes an NLI pair (:func:`figlang.interpret.use_label.use_pair`): with
``--mask-idiom`` the sentence with the idiom's words masked and the meaning, else the sentence and "idiom: meaning";
figurative is entailment, literal non-entailment.

Idioms, not sentences, are split (seeded, by the content-word lemmas of the idiom): 60% ``train-fit``, 20%
``selection``, 20% ``test``, so the test idioms were never seen; a sentence that occurs under two spellings of its
idiom is kept in the earliest split only. The trainer chooses the epoch and the decision threshold (by accuracy) on
``selection`` and scores ``test`` once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import content  # noqa: E402

from figlang.data.impli import FILES, figurative_offsets, load_impli_file  # noqa: E402
from figlang.interpret.lexicon_all import pie_groups  # noqa: E402
from figlang.interpret.use_label import USE_MODEL, UseItem  # noqa: E402


def _load_pie(data: Path, rng: random.Random, fig_cap: int) -> list[tuple[UseItem, int, str, str]]:
    lit, fig = [], []
    for g in pie_groups(data):
        for s in g.samples:
            row = (UseItem(s.text, g.expression, g.meaning), 0 if s.category == "Literal" else 1, g.expression, "pie")
            (lit if row[1] == 0 else fig).append(row)
    rng.shuffle(fig)
    return lit + fig[:fig_cap]


def _load_impli(data: Path, rng: random.Random, fig_cap: int) -> list[tuple[UseItem, int, str, str]]:
    from figlang.core.errors import LoadOptions, LoadReport

    lit, fig = [], []
    for spec in FILES:
        if spec.figure_type != "idiom" or spec.pair_type not in ("lit_context", "fig_context"):
            continue
        for r in load_impli_file(spec, data, LoadOptions(lenient=True, report=LoadReport())):
            (pa, pb), (ha, hb) = figurative_offsets(r.premise, r.hypothesis)
            idiom, meaning = r.premise[pa:pb].strip(), r.hypothesis[ha:hb].strip()
            if not idiom or not meaning or len(idiom.split()) > 10:
                continue
            row = (UseItem(r.premise, idiom, meaning), 0 if spec.pair_type == "lit_context" else 1, idiom, f"impli:{spec.source}")
            (lit if row[1] == 0 else fig).append(row)
    rng.shuffle(fig)
    return lit + fig[:fig_cap]


EVERYDAY = Path(__file__).resolve().parent / "everyday_idioms" / "use-train-sentences.tsv"


def _load_everyday(path: Path) -> list[tuple[UseItem, int, str, str]]:
    """The helper-written everyday uses (``everyday_train_idioms.py`` chose their idioms; the file's header says how
    they were written) as use rows, each as interpret meets it: a fresh install's interpret (no data folder) reads the
    sentence, and the row is its match of the written idiom (``same_idiom``), with the canonical form and meaning the
    use model is given at run time. A sentence in which interpret does not find its idiom is left out (at run time no
    use is labelled there)."""
    from bench_interpret import same_idiom

    from figlang.interpret.api import Interpreter

    engine = Interpreter(None)
    rows, lost = [], 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[1] not in ("F", "L") or not parts[0].strip() or not parts[2].strip():
            raise SystemExit(f"{path}:{number}: expected 'idiom<TAB>F|L<TAB>sentence', got {line[:80]!r}")
        idiom, label, sentence = parts
        hits = [e for e in engine.interpret(sentence, paraphrase=False).expressions if e.type == "idiom"]
        hit = next((e for e in hits if same_idiom(e.canonical, idiom)), None)
        if hit is None:
            lost += 1
            continue
        rows.append((UseItem(hit.sentence, hit.canonical, hit.meaning), int(label == "F"), idiom, f"everyday:{path.name}:{number}"))
    print(f"everyday uses: {len(rows)} kept, {lost} whose idiom interpret does not find", file=sys.stderr)
    return rows


def _bucket(idiom: str, salt: str = "") -> int:
    """0..99 from the idiom's content-word lemmas (so its spellings fall together), seeded by ``salt``."""
    key = " ".join(sorted(content(idiom))) or idiom.lower()
    return int(hashlib.sha256(f"{salt}{key}".encode()).hexdigest()[:8], 16) % 100


def everyday_split(idiom: str) -> str:
    """The everyday uses' own idiom split (all their idioms are in the labelled uses' ``train`` part): 80% train, 20%
    selection, by the content-word key with its own salt."""
    return "train" if _bucket(idiom, "everyday:") < 80 else "selection"


def split_of(idiom: str) -> str:
    h = _bucket(idiom)
    return "train" if h < 60 else "selection" if h < 80 else "test"


def use_task_rows(rows, split, mask_idiom: bool = False) -> dict[str, list[tuple[dict, UseItem]]]:
    """The uses as an NLI task: premise = the sentence, hypothesis = the idiom and its meaning
    (:func:`figlang.interpret.use_label.use_hypothesis`), figurative = entailment. A sentence is kept in one split
    only (a PIE sentence can also be an IMPLI premise under another spelling of its idiom): the first split in
    train > selection > test order that has it wins, so no test sentence was trained on."""
    from figlang.interpret.use_label import use_pair

    seen: dict[str, str] = {}
    order = {"train": 0, "selection": 1, "test": 2}
    for r, s in zip(rows, split):
        key = " ".join(r[0].sentence.lower().split())
        if key not in seen or order[s] < order[seen[key]]:
            seen[key] = s
    out: dict[str, list[tuple[dict, UseItem]]] = {"train-fit": [], "selection": [], "test": []}
    done: set[tuple[str, str]] = set()
    for i, (r, s) in enumerate(zip(rows, split)):
        key = " ".join(r[0].sentence.lower().split())
        if seen[key] != s or (key, r[2].lower()) in done:
            continue
        done.add((key, r[2].lower()))
        premise, hypothesis = use_pair(r[0], mask_idiom)
        record = {
            "id": f"use-{i}",
            "premise": premise,
            "hypothesis": hypothesis,
            "label": "figurative" if r[1] else "literal",
            "source": r[3].split(":")[0],
            "idiom": r[2],
        }
        out["train-fit" if s == "train" else s].append((record, r[0]))
    return out


def labelled_uses(data_dir: str | Path, seed: int = 13) -> list[tuple[UseItem, int, str, str]]:
    """PIE's and IMPLI's labelled uses as ``--export`` reads them with the default caps and seed."""
    rng = random.Random(seed)
    return _load_pie(Path(data_dir), rng, 5000) + _load_impli(Path(data_dir), rng, 2000)


def selection_uses(data_dir: str | Path, seed: int = 13) -> list[tuple[dict, UseItem]]:
    """The ``selection`` uses (records and items) as ``--export`` splits them with the default caps and seed."""
    rows = labelled_uses(data_dir, seed)
    return use_task_rows(rows, [split_of(r[2]) for r in rows])["selection"]


TASK_SPEC = """# written by benchmarks/train_use_model.py export: literal or figurative use of an idiom, as NLI
name: idiom-use
description: Is the idiom in the sentence used figuratively (entailment) or literally (non-entailment)?
shape: nli
format: jsonl
splits:
  train-fit: train-fit.jsonl
  selection: selection.jsonl
  test: test.jsonl
columns:
  premise: premise
  hypothesis: hypothesis
  label: label
  figure_type: source
  expression: idiom
  id: id
labels:
  figurative: entailment
  literal: non-entailment
"""


def cap_per_idiom(items: list[tuple[dict, UseItem]], cap: int, seed: int) -> list[tuple[dict, UseItem]]:
    """Training uses with no idiom's own label mix to learn: of each idiom's uses of one label, at most
    max(cap, its uses of the other label) are kept (a seeded draw, original order kept). PIE has idioms with 41
    literal samples and 2 figurative ones; trained on all of them, the model learnt "kick the bucket" as literal
    and called "The old farmer kicked the bucket last winter" literal too."""
    by_cell: dict[tuple[str, str], list[int]] = {}
    for i, (rec, _) in enumerate(items):
        key = " ".join(sorted(content(rec["idiom"]))) or rec["idiom"].lower()
        by_cell.setdefault((key, rec["label"]), []).append(i)
    other = {"literal": "figurative", "figurative": "literal"}
    rng = random.Random(seed)
    keep: set[int] = set()
    for (key, label), idx in sorted(by_cell.items()):
        limit = max(cap, len(by_cell.get((key, other[label]), [])))
        keep.update(idx if len(idx) <= limit else rng.sample(idx, limit))
    return [it for i, it in enumerate(items) if i in keep]


def export(args, rows) -> None:
    """Write the uses as a task spec + three JSON lines files (train-fit, selection, test) for `figlang train`."""
    split = [everyday_split(r[2]) if r[3].startswith("everyday") else split_of(r[2]) for r in rows]
    tables = use_task_rows(rows, split, args.mask_idiom)
    if args.cap_per_idiom:
        tables["train-fit"] = cap_per_idiom(tables["train-fit"], args.cap_per_idiom, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, items in tables.items():
        text = "".join(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n" for it, _ in items)
        (args.out / f"{name}.jsonl").write_text(text, encoding="utf-8")
    (args.out / "task.yaml").write_text(TASK_SPEC, encoding="utf-8")
    sizes = {k: (len(v), sum(it["label"] == "literal" for it, _ in v)) for k, v in tables.items()}
    print("wrote", args.out, "; records (all, literal):", sizes)


def _metrics(gold: list[str], pred: list[str]) -> dict:
    n1 = sum(g == "figurative" for g in gold)
    n0 = len(gold) - n1
    tp = sum(g == p == "figurative" for g, p in zip(gold, pred))
    tn = sum(g == p == "literal" for g, p in zip(gold, pred))
    return {
        "n": len(gold),
        "figurative": n1,
        "literal": n0,
        "accuracy_pct": round(100 * (tp + tn) / len(gold), 2),
        "balanced_accuracy_pct": round(50 * (tp / max(n1, 1) + tn / max(n0, 1)), 2),
        "figurative_recall_pct": round(100 * tp / max(n1, 1), 2),
        "literal_recall_pct": round(100 * tn / max(n0, 1), 2),
        "majority_baseline_pct": round(100 * max(n1, n0) / len(gold), 2),
    }


def _ci_by_idiom(items: list[dict], seed: int = 13, rounds: int = 2000) -> list[float]:
    """95% bootstrap interval of the accuracy, resampling idioms (their uses are not independent)."""
    groups: dict[str, list[int]] = {}
    for it in items:
        groups.setdefault(it["idiom_key"], []).append(int(it["gold"] == it["label"]))
    keys = sorted(groups)
    rng = random.Random(seed)
    stats = []
    for _ in range(rounds):
        draw = [groups[keys[rng.randrange(len(keys))]] for _ in keys]
        stats.append(100 * sum(map(sum, draw)) / sum(map(len, draw)))
    stats.sort()
    return [round(stats[int(0.025 * rounds)], 2), round(stats[int(0.975 * rounds) - 1], 2)]


def score(args, rows) -> None:
    """Score the shipped use model, through interpret's own labeller, on the test idioms (never trained on)."""
    from bench_interpret import _write

    from figlang.core.io import file_sha256
    from figlang.interpret.lexicon_all import PIE_CSV
    from figlang.interpret.use_label import UseLabeller
    from figlang.methods.trained.heads import resolve_trained_model

    test = use_task_rows(rows, [split_of(r[2]) for r in rows])["test"]
    t0 = time.time()
    labeller = UseLabeller(args.model)
    labels = labeller.label([u for _, u in test])
    seconds = time.time() - t0
    if labeller.why:
        raise SystemExit(labeller.why)
    items = [
        {
            "id": rec["id"],  # no sentence: PIE states no licence (`--export` re-makes the items from the data folder)
            "idiom": rec["idiom"],
            "idiom_key": " ".join(sorted(content(rec["idiom"]))) or rec["idiom"].lower(),
            "source": rec["source"],
            "gold": rec["label"],
            "label": lab.label,
            "p_figurative": round(lab.probability, 4),
        }
        for (rec, _), lab in zip(test, labels)
        if lab is not None
    ]
    by_source = {
        src: _metrics([it["gold"] for it in items if it["source"] == src], [it["label"] for it in items if it["source"] == src])
        for src in sorted({it["source"] for it in items})
    }
    shipped = labeller.model
    report = {
        "model": labeller.model_name,  # a short name ("everyday") read as the model it names
        "record": json.loads((resolve_trained_model(labeller.model_name)[0] / "record.json").read_text(encoding="utf-8")),
        "decision": shipped.decision,
        "test": {**_metrics([it["gold"] for it in items], [it["label"] for it in items]), "accuracy_ci95_by_idiom": _ci_by_idiom(items)},
        "test_by_source": by_source,
        "test_idioms": len({it["idiom_key"] for it in items}),
        "data": {"pie": file_sha256(Path(args.data_dir) / PIE_CSV)},
        "seed": args.seed,
        "seconds": {"label_test_uses": round(seconds, 1)},
    }
    _write(args.results, args.name, report, items)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out", type=Path, default=Path("runs/use-task"), help="folder for the task spec and its three splits")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--pie-figurative", type=int, default=5000, help="figurative PIE samples kept (all literal ones are)")
    ap.add_argument("--impli-figurative", type=int, default=2000)
    ap.add_argument("--export", action="store_true", help="write the uses as a task for `figlang train` into --out")
    ap.add_argument("--cap-per-idiom", type=int, default=0, help="train-fit: at most max(N, other label's) uses per idiom and label")
    ap.add_argument("--mask-idiom", action="store_true", help="idiom-blind inputs: the sentence with the idiom masked, and the meaning")
    ap.add_argument(
        "--everyday",
        nargs="*",
        type=Path,
        metavar="FILE",
        help=f"--export: add helper-written everyday uses (default file: {EVERYDAY.name}) to train-fit and selection",
    )
    ap.add_argument("--score", action="store_true", help="score the shipped use model on the test idioms into --results")
    ap.add_argument("--results", type=Path, default=Path("docs/results/interpret"))
    ap.add_argument("--model", default=USE_MODEL, help=f"--score: the use model to score (default: {USE_MODEL})")
    ap.add_argument("--name", default="use-model", help="--score: the result file's name in --results")
    args = ap.parse_args()
    data = Path(args.data_dir)
    rng = random.Random(args.seed)
    rows = _load_pie(data, rng, args.pie_figurative) + _load_impli(data, rng, args.impli_figurative)
    if args.score:
        score(args, rows)
    else:
        everyday = [] if args.everyday is None else args.everyday or [EVERYDAY]
        export(args, rows + [row for path in everyday for row in _load_everyday(path)])


if __name__ == "__main__":
    main()
