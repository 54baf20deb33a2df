"""FLUTE (Chakrabarty, Saakyan, Ghosh, Muresan, EMNLP 2022).

Train/val come in the instruction/target ("translation") format: the premise and hypothesis
sit inside one instruction string and the label and explanation inside one target string.
We parse them into plain fields and recover each record's figure type by joining with the
per-phenomenon files, which hold the same records (train+val) as plain fields.

Test: ``FLUTEfinaltest.json`` has no labels; the gold lives in
``testgolddata/{sarcasm,simile,metaphor,idiom}_test.jsonl`` (fetched by ``figlang data download flute``).

Model selection: ``selection`` is a seeded ~10% of train (never val), stratified by figure type and
label, that keeps every pair of one premise, one figurative hypothesis and (for idioms) one idiom
together; ``train-fit`` is the rest of train. Choose prompts, thresholds and checkpoints on
``selection`` and fit on ``train-fit``, so val stays a held-out estimate.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from figlang.core.errors import DataError, DataNotFoundError, LoadOptions
from figlang.core.io import iter_jsonl, require
from figlang.data.records import CONTRADICTION, ENTAILMENT, NLIPair
from figlang.data.splits import grouped_stratified_split, normalise_expression

DATASET = "flute"
FIGURE_TYPES = ("sarcasm", "simile", "metaphor", "idiom")
SPLITS = ("train", "val", "test")
SELECTION_SPLITS = ("selection", "train-fit")  # carved from train: select on the first, fit on the second
TASK_SPLITS = SPLITS + SELECTION_SPLITS
SELECTION_FRACTION = 0.1
SELECTION_SEED = 0
SPLIT_FILES = {"train": "FLUTEfinaltrain.json", "val": "FLUTEfinalval.json", "test": "FLUTEfinaltest.json"}
PHENOMENON_FILES = {
    "sarcasm": "SarcasmNLI/sarcasm_train.jsonl",
    "simile": "simileNLI/simile_train.jsonl",
    "metaphor": "metaphorNLI/metaphor_train.jsonl",
    "idiom": "idiomNLI/idiom_train.jsonl",
}
GOLD_FILES = {t: f"testgolddata/{t}_test.jsonl" for t in FIGURE_TYPES}

INSTRUCTION = (
    'Does the sentence "{premise}" entail or contradict the sentence "{hypothesis}"? '
    'Please answer between "Entails" or "Contradicts" and explain your decision in a sentence.'
)
_INSTRUCTION_RE = re.compile(
    r'^Does the sentence "(?P<premise>.*)" entail or contradict the sentence "(?P<hypothesis>.*)"\? '
    r'Please answer between "Entails" or "Contradicts" and explain your decision in a sentence\.\s*$',
    re.S,
)
_TARGET_RE = re.compile(r"^\s*(?P<label>Entails|Contradicts)\b\.?\s*(?P<explanation>.*)$", re.S | re.I)
_LABELS = {
    "entails": ENTAILMENT,
    "entailment": ENTAILMENT,
    "contradicts": CONTRADICTION,
    "contradiction": CONTRADICTION,
}


def normalise_label(raw: object) -> str | None:
    """'Entailment', 'Entails', 'entails.' … → 'entailment'; None when it is none of FLUTE's labels.

    The one FLUTE label normaliser: loading, prediction files and the FLUTE scorer all use it,
    so a label one of them accepts is never refused by another. Non-strings are None.
    """
    if not isinstance(raw, str):
        return None
    return _LABELS.get(raw.strip().strip(".").strip().lower())


def parse_instruction(text: str) -> tuple[str, str] | None:
    m = _INSTRUCTION_RE.match(text)
    return (m["premise"], m["hypothesis"]) if m else None


def parse_target(text: str) -> tuple[str, str] | None:
    m = _TARGET_RE.match(text)
    return (normalise_label(m["label"]), m["explanation"].strip()) if m else None  # type: ignore[return-value]


def _key(premise: str, hypothesis: str) -> tuple[str, str]:
    return " ".join(premise.split()), " ".join(hypothesis.split())


def _phenomenon_index(data_dir: Path, options: LoadOptions) -> dict[tuple[str, str], list[tuple[str, dict]]]:
    index: dict[tuple[str, str], list[tuple[str, dict]]] = {}
    for figure, rel in PHENOMENON_FILES.items():
        path = data_dir / DATASET / rel
        for line, obj in iter_jsonl(path, options):
            try:
                key = _key(require(obj, "premise", path, line), require(obj, "hypothesis", path, line))
            except DataError as err:
                options.fail(err)
                continue
            index.setdefault(key, []).append((figure, obj))
    return index


def load_flute(split: str, data_dir: Path, options: LoadOptions, figure_type: str | None = None) -> list[NLIPair]:
    """One FLUTE split as NLI pairs with figure type recovered; optionally only one figure type."""
    if split in SELECTION_SPLITS:
        fit, selection = carve_selection(_load_translation("train", data_dir, options))
        records = selection if split == "selection" else fit
    elif split == "test":
        records = load_flute_test(data_dir, options, figure_type)
        if figure_type is not None and records and records[0].figure_type is None:
            raise DataNotFoundError(
                f"the FLUTE test gold is absent, so the {figure_type} test pairs cannot be told apart",
                data_dir / DATASET / GOLD_FILES[figure_type],
                hint="run `figlang data download flute` to fetch testgolddata/, or use the task 'flute'",
            )
    else:
        records = _load_translation(split, data_dir, options)
    if figure_type is not None:
        records = [r for r in records if r.figure_type == figure_type]
    return records


def selection_links(record: NLIPair) -> list[tuple]:
    """What ties FLUTE pairs together: the premise, the figurative hypothesis, the per-phenomenon id
    (FLUTE's own name for one premise/hypothesis family) and, for idioms, the idiom."""
    out: list[tuple] = [("premise", " ".join(record.premise.lower().split())), ("hypothesis", " ".join(record.hypothesis.lower().split()))]
    pid = record.meta.get("phenomenon_id")
    if pid is not None:
        out.append(("phenomenon", record.figure_type, pid))
    if record.figure_type == "idiom" and record.expression:
        out.append(("idiom", normalise_expression(record.expression)))
    return out


def selection_stratum(group: list[NLIPair]) -> tuple:
    """A group's stratum: its figure type(s) and label counts, so strata hold groups of one size and shape."""
    figures = tuple(sorted({str(r.figure_type) for r in group}))
    labels = tuple(sorted(Counter(str(r.label) for r in group).items()))
    return figures, labels


def carve_selection(train: list[NLIPair]) -> tuple[list[NLIPair], list[NLIPair]]:
    """(train-fit, selection) from the whole FLUTE train; ``flute-<type>`` tasks filter the result, so a
    figure type's selection is exactly its part of the ``flute`` selection."""
    return grouped_stratified_split(train, SELECTION_FRACTION, SELECTION_SEED, selection_links, selection_stratum)


def _load_translation(split: str, data_dir: Path, options: LoadOptions) -> list[NLIPair]:
    path = data_dir / DATASET / SPLIT_FILES[split]
    index = _phenomenon_index(data_dir, options)
    out: list[NLIPair] = []
    for line, obj in iter_jsonl(path, options):
        try:
            tr = require(obj, "translation", path, line, dict)
            en1 = require(tr, "en1", path, line)
            en2 = require(tr, "en2", path, line)
            pair = parse_instruction(en1)
            if pair is None:
                raise DataError("instruction does not follow FLUTE's template 'Does the sentence \"P\" entail or contradict …'", path, line)
            target = parse_target(en2)
            if target is None or target[0] is None:
                raise DataError(f"target should start with 'Entails.' or 'Contradicts.', got {en2[:40]!r}", path, line)
        except DataError as err:
            options.fail(err)
            continue
        premise, hypothesis = pair
        label, explanation = target
        matches = index.get(_key(premise, hypothesis), [])
        figure, extra = _pick(matches, explanation)
        if figure is None and options.report is not None:
            options.report.warn(
                DataError("figure type not recovered: pair absent from the per-phenomenon files", path, line), skipped=False
            )
        out.append(
            NLIPair(
                id=f"{split}-{len(out)}",
                premise=premise,
                hypothesis=hypothesis,
                label=label,
                explanation=explanation,
                figure_type=figure,
                pair_type=None,
                source="flute",
                expression=(extra or {}).get("idiom"),
                meta={"file": str(path), "line": line, "phenomenon_id": (extra or {}).get("id")},
            )
        )
    return out


def _pick(matches: list[tuple[str, dict]], explanation: str) -> tuple[str | None, dict | None]:
    """The per-phenomenon record for a pair: the only match, or the one with the same explanation."""
    if not matches:
        return None, None
    for figure, obj in matches:
        if " ".join(str(obj.get("explanation", "")).split()) == " ".join(explanation.split()):
            return figure, obj
    return matches[0]


def load_flute_test(data_dir: Path, options: LoadOptions, figure_type: str | None = None) -> list[NLIPair]:
    """The test gold when ``testgolddata/`` is present; else the unlabeled test with a warning.

    Some but not all gold files is an error for the whole test (its score would silently cover only some figure
    types under the name flute/test; lenient loading goes on with what is there and says so); a figure type's own
    task needs only its own file."""
    root = data_dir / DATASET
    gold_paths = {t: root / rel for t, rel in GOLD_FILES.items()}
    present = {t: p for t, p in gold_paths.items() if p.exists()}
    if figure_type is not None and present:
        if figure_type not in present:
            raise DataNotFoundError(
                f"the FLUTE test gold for {figure_type} is missing (present: {', '.join(present)})",
                gold_paths[figure_type],
                hint="run `figlang data download flute` to fetch all of testgolddata/",
            )
        present = {figure_type: present[figure_type]}
    if present:
        if len(present) < len(gold_paths) and figure_type is None:
            missing = ", ".join(sorted(set(gold_paths) - set(present)))
            incomplete = DataError(
                f"FLUTE test gold incomplete: no file for {missing}, so a flute/test score would cover only {', '.join(present)} pairs",
                root / "testgolddata",
                hint="run `figlang data download flute` to fetch all four files, or evaluate a figure type's own task "
                f"(e.g. flute-{next(iter(present))})",
            )
            if not options.lenient:
                raise incomplete
            if options.report is not None:  # lenient: go on with the files there are, and say so
                options.report.warn(incomplete, skipped=False)
        return [pair for figure, path in present.items() for pair in _gold_pairs(figure, path, options)]
    return _unlabeled_test(root, options)


def _gold_pairs(figure: str, path: Path, options: LoadOptions) -> list[NLIPair]:
    """One figure type's gold test pairs (FLUTE's test gold shares one id between the pairs of a premise family: the
    pair's figlang id counts them)."""
    out: list[NLIPair] = []
    occurrences: Counter[str] = Counter()
    for line, obj in iter_jsonl(path, options):
        try:
            pid = require(obj, "id", path, line, (str, int))
            nth = occurrences[str(pid)]
            occurrences[str(pid)] += 1  # counted before validation, so a skipped row never renames the next
            raw = require(obj, "label", path, line)
            label = normalise_label(raw)
            if label is None:
                raise DataError(f"unknown label {raw!r} (expected Entailment or Contradiction)", path, line)
            out.append(
                NLIPair(
                    id=gold_pair_id(figure, pid, nth),
                    premise=require(obj, "premise", path, line),
                    hypothesis=require(obj, "hypothesis", path, line),
                    label=label,
                    explanation=obj.get("explanation"),
                    figure_type=figure,
                    source="flute",
                    expression=obj.get("idiom"),
                    meta={"file": str(path), "line": line, "gold_id": pid},
                )
            )
        except DataError as err:
            options.fail(err)
    return out


def _unlabeled_test(root: Path, options: LoadOptions) -> list[NLIPair]:
    """The public test without labels (the gold is absent), with a warning."""
    path = root / SPLIT_FILES["test"]
    if options.report is not None:
        options.report.warn(
            DataError(
                "FLUTE test gold (testgolddata/*_test.jsonl) is absent: test pairs are unlabeled",
                root / "testgolddata",
                hint="run `figlang data download flute` to fetch the gold files",
            ),
            skipped=False,
        )
    out = []
    for line, obj in iter_jsonl(path, options):
        try:
            out.append(
                NLIPair(
                    id=f"test-{require(obj, 'codalab_id', path, line, (int, str))}",
                    premise=require(obj, "premise", path, line),
                    hypothesis=require(obj, "hypothesis", path, line),
                    label=None,
                    source="flute",
                    meta={"file": str(path), "line": line, "flute_id": obj.get("id"), "codalab_id": obj.get("codalab_id")},
                )
            )
        except DataError as err:
            options.fail(err)
    return out


def gold_pair_id(figure: str, gold_id: str | int, nth: int) -> str:
    """A test-gold pair's figlang id: ``idiom-14-0``, ``idiom-14-1`` for the first and second row with gold id 14.

    The gold files give one id to every pair of a premise family (the entailing and the contradicting
    one), and anything keyed by id would hand each pair its sibling's prediction; the gold's own id is
    kept in ``meta["gold_id"]``.
    """
    return f"{figure}-{gold_id}-{nth}"


def flute_files(split: str, data_dir: Path) -> list[Path]:
    root = data_dir / DATASET
    if split == "test":
        gold = [root / rel for rel in GOLD_FILES.values() if (root / rel).exists()]
        return gold or [root / SPLIT_FILES["test"]]
    source = "train" if split in SELECTION_SPLITS else split
    return [root / SPLIT_FILES[source]] + [root / rel for rel in PHENOMENON_FILES.values()]
