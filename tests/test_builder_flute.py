"""The FLUTE model-in-the-loop creator: prompts, inputs, real generation with smollm2-135m (offline),
checks and resampling, resuming, the sarcasm edit round trip, the verification round trip, and the
final file loading as a figlang NLI task.

The generator runs for real (SmolLM2-135M-Instruct on CPU, one thread, few tokens); nothing on the
core path is mocked. Tests that only read files run without the model.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from figlang.builders.flute_checks import CheckContext, CheckLimits, builtin_checks, contains_expression, load_prompts, parse_answer
from figlang.builders.flute_creator import CreatorConfig, create, load_records
from figlang.builders.flute_edits import export_edit_tasks, import_edits
from figlang.builders.flute_inputs import SourceItem, load_idioms, read_input_file, select
from figlang.builders.flute_review import export_queue, finalize, import_verdicts, review_rates
from figlang.core.errors import DataError

IDIOMS = [
    {"idiom": "spill the beans", "meaning": "to reveal a secret", "sentence": "Tom spilled the beans about the wedding plans."},
    {
        "idiom": "break the ice",
        "meaning": "to make people feel more relaxed at first meeting",
        "sentence": "She told a joke to break the ice at the meeting.",
    },
]
SARCASM = [{"prompt": "My brother broke my new phone.", "emotion": "angry"}]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _csv_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


# --- prompts and checks (no model) -------------------------------------------------------------------


def test_simile_prompts_are_the_original_text(data_dir: Path) -> None:
    prompts = load_prompts()
    for step, name in (
        ("paraphrase", "simile_paraphrase_prompt.txt"),
        ("contradiction", "simile_contra_prompt.txt"),
        ("explanation_contradiction", "simile_explanation_prompt.txt"),
    ):
        assert prompts.get("simile", step).template == (data_dir / "flute" / "prompts" / name).read_text(encoding="utf-8")
    rendered = prompts.get("simile", "paraphrase").render({"sentence": "The room was dark.", "preserve": "dark"})
    assert rendered.endswith("16. Sentence: The room was dark.\nPreserve: dark\nCreative Paraphrase:")
    assert prompts.decoding["temperature"] == 0.7 and prompts.decoding["rounds"] == 3


def test_parse_and_checks() -> None:
    prompts = load_prompts()
    joint = prompts.get("idiom", "paraphrase_and_contradiction")
    parsed = parse_answer(" He revealed the secret.\nContradiction: He kept the secret.\n\n5. Idiom:", joint)
    assert parsed == {"entailment": "He revealed the secret.", "contradiction": "He kept the secret."}
    item = SourceItem("idiom-0000", "idiom", 0, {"idiom": "spill the beans", "meaning": "reveal a secret"}, "x:1")
    limits = CheckLimits()

    def check(slot: str, kind: str, text: str, **context: str) -> list[str]:
        return builtin_checks(CheckContext(item, slot, kind, text, 0, context), limits)

    assert check("H", "sentence", "Tom spilled the beans yesterday.") == []
    assert check("H", "sentence", "Tom told everyone yesterday.") == ["missing_idiom"]
    assert check("E.text", "literal", "") == ["empty"]
    assert "kept_idiom" in check("E.text", "literal", "Tom spilled the beans about it.")
    assert "label_leak" in check("E.text", "literal", "Entailment: Tom revealed the secret.")
    assert "copy_of_input" in check("E.text", "literal", "Tom spilled it all.", base="Tom spilled it all")
    assert "same_as_entailment" in check("C.text", "contradiction", "Tom told it.", entailment="Tom told it.")
    assert "not_minimal_edit" in check("C.text", "contradiction", "Cats are wonderful animals indeed.", base="Tom revealed the secret.")
    assert check("E.expl", "explanation", "Too short.") == ["too_short"]
    assert contains_expression("He bit the dust", "bite the dust")
    assert contains_expression("She lost her temper again", "lose one's temper")  # slot and insertion
    # stems are not inflections, and the words must come in order (seen in the 50-idiom run)
    assert not contains_expression("making it a historical masterpiece", "make history")
    assert not contains_expression("The beans were spilled", "spill the beans")
    assert "kept_idiom" in check("E.text", "literal", "The beans were spilled by Tom.")


# --- inputs (no model) -----------------------------------------------------------------------------


def test_bad_inputs_are_reported_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "similes.jsonl"
    bad.write_text(
        json.dumps({"sentence": "The place looked like a fortress", "property": "impenetrable", "simile": "like a fortress"})
        + "\n"
        + json.dumps({"sentence": "He ran like the wind", "simile": "like the wind"})
        + "\n"  # no property
        + "{not json\n"
        + json.dumps({"sentence": "The place looked like a fortress", "property": "safe", "simile": "like a fortress"})
        + "\n"  # duplicate
        + json.dumps({"sentence": "She sang like a bird", "property": "beautifully", "simile": "like an angel"})
        + "\n",  # span absent
        encoding="utf-8",
    )
    got = read_input_file(bad, "simile")
    assert len(got.items) == 1 and got.items[0].fields["literal"] == "The place looked impenetrable"
    problems = got.problems
    assert any(f"{bad}:2:" in p and "property" in p for p in problems)
    assert any(f"{bad}:3:" in p and "malformed JSON" in p for p in problems)
    assert any(f"{bad}:4:" in p and "duplicate" in p and f"{bad}:1" in p for p in problems)
    assert any(f"{bad}:5:" in p and "does not occur" in p for p in problems)
    with pytest.raises(DataError, match=r"similes\.jsonl:2"):
        read_input_file(bad, "simile", strict=True)
    empty = tmp_path / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty"):
        read_input_file(empty, "sarcasm")
    tsv = tmp_path / "sarcasm.tsv"
    tsv.write_text("sentence\temotion\nI lost my keys.\tangry\n\tsad\n", encoding="utf-8")
    got = read_input_file(tsv, "sarcasm")
    assert len(got.items) == 1 and any(f"{tsv}:3:" in p for p in got.problems)
    nothing = tmp_path / "none.jsonl"
    nothing.write_text(json.dumps({"emotion": "sad"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="no valid sarcasm input"):
        read_input_file(nothing, "sarcasm")


def test_benchmark_idioms_sample_is_seeded(data_dir: Path) -> None:
    lex = load_idioms("benchmark", data_dir)
    a, b = select(lex, 5, seed=0), select(lex, 5, seed=0)
    assert [i.fields for i in a.items] == [i.fields for i in b.items]
    assert [i.uid for i in a.items] == [f"idiom-{k:04d}" for k in range(5)]
    assert all(i.fields["meaning"] for i in a.items)
    assert [i.fields for i in select(lex, 5, seed=1).items] != [i.fields for i in a.items]


# --- the real run (smollm2-135m) -----------------------------------------------------------------------


def first_round_of_item0(ctx: CheckContext) -> str | None:
    """Reject the first entailment of the first idiom: the creator must resample it."""
    return "test_first_round" if ctx.item.uid == "idiom-0000" and ctx.slot == "E.text" and ctx.round == 0 else None


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import torch

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("flute")
    idioms = read_input_file(_jsonl(root / "idioms.jsonl", IDIOMS), "idiom")
    sarcasm = read_input_file(_jsonl(root / "sarcasm.jsonl", SARCASM), "sarcasm")
    inputs = [select(idioms, None), select(sarcasm, None)]
    config = CreatorConfig(model="smollm2-135m", max_new_tokens=40, rounds=3, seed=0, backend_options={"threads": 1})
    out = root / "run"
    summary = create(inputs, out, config, extra_checks=[first_round_of_item0])
    return {"root": root, "out": out, "inputs": inputs, "config": config, "summary": summary}


def test_generation_checks_and_resampling(run: dict) -> None:
    s, out = run["summary"], run["out"]
    assert s.items == {"idiom": 2, "sarcasm": 1}
    assert s.model_calls > 0 and s.interrupted is None
    assert s.check_failures["test_first_round"] == 1
    rec = load_records(out)["idiom-0000"]
    e = rec["slots"]["E.text"]
    assert e["attempts"][0]["failed"][-1] == "test_first_round" and len(e["attempts"]) >= 2
    assert e["attempts"][0]["seed"] != e["attempts"][1]["seed"]
    # every pair is accounted for: candidate, failed (with a reason) or waiting for a person
    pairs = [
        json.loads(x)
        for name in ("candidates.jsonl", "failed.jsonl", "awaiting_edits.jsonl")
        for x in (out / name).read_text().splitlines()
        if x.strip()
    ]
    assert sorted(p["id"] for p in pairs) == sorted(f"{u}-{side}" for u in ("idiom-0000", "idiom-0001", "sarcasm-0000") for side in "EC")
    for p in pairs:
        if p["status"] == "failed":
            assert p["reason"]
        if p["status"] == "candidate":
            assert p["premise"] and p["hypothesis"] and p["explanation"] and p["premise"] != p["hypothesis"]
            if p["figure_type"] == "idiom":
                assert p["hypothesis"] in {r["sentence"] for r in IDIOMS}
    sarc_c = next(p for p in pairs if p["id"] == "sarcasm-0000-C")
    assert sarc_c["status"] in ("awaiting_edit", "failed")  # people write the sarcastic contradiction
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["temperature"] == 0.7 and summary["config"]["top_p"] == 1.0


def test_rerun_resumes_and_torn_journal_uses_cache(run: dict) -> None:
    out = run["out"]
    again = create(run["inputs"], out, run["config"], extra_checks=[first_round_of_item0])
    assert again.resumed == 3 and again.ran == 0 and again.model_calls == 0
    # a crash while writing the last record: the torn line is ignored, the item redone from the cache
    journal = out / "items.jsonl"
    lines = journal.read_text().splitlines()
    before = (out / "candidates.jsonl").read_text()
    journal.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2], encoding="utf-8")
    redo = create(run["inputs"], out, run["config"], extra_checks=[first_round_of_item0])
    assert redo.ran == 1 and redo.model_calls == 0 and redo.cache_hits > 0
    assert any("unreadable journal line" in n for n in redo.notes)
    assert (out / "candidates.jsonl").read_text() == before
    assert create(run["inputs"], out, run["config"], extra_checks=[first_round_of_item0]).resumed == 3
    # other settings on the same folder: refused, not mixed
    other = CreatorConfig(**{**run["config"].__dict__, "temperature": 0.2})
    with pytest.raises(Exception, match="other settings"):
        create(run["inputs"], out, other, extra_checks=[first_round_of_item0])


def test_sarcasm_human_edit_round_trip(run: dict) -> None:
    out, root = run["out"], run["root"]
    # the run is seeded: the sarcastic paraphrase is part of what is tested, and not getting one is a failure
    # (it used to skip here, exactly when the feature failed)
    paraphrase = load_records(out)["sarcasm-0000"]["slots"]["E.text"]
    assert paraphrase["status"] == "ok", f"no acceptable sarcasm paraphrase in 3 rounds: {paraphrase.get('attempts')}"
    tasks = root / "edits.csv"
    assert export_edit_tasks(out, tasks) == 1
    rows = _csv_rows(tasks)
    assert rows[0]["task_id"] == "sarcasm-0000" and rows[0]["paraphrase"] and rows[0]["sarcastic_contradiction"] == ""
    rows[0]["sarcastic_contradiction"] = "Oh great, my brother broke my new phone, I am so thrilled."
    rows.append({**rows[0], "task_id": "sarcasm-0099"})
    _write_csv(tasks, rows)
    n, problems = import_edits(out, tasks)
    assert n == 1 and len(problems) == 1 and f"{tasks}:3" in problems[0] and "unknown task_id" in problems[0]
    create(run["inputs"], out, run["config"], extra_checks=[first_round_of_item0])
    c = load_records(out)["sarcasm-0000"]["slots"]["C.text"]
    assert c["status"] == "ok" and c["source"] == "human" and c["text"].startswith("Oh great")


def test_verification_round_trip_and_task_loading(run: dict) -> None:
    from figlang.data.custom import load_task_spec

    out, root = run["out"], run["root"]
    queue = root / "queue.csv"
    n = export_queue(out, queue)
    rows = _csv_rows(queue)
    assert n == len(rows) >= 2
    assert list(rows[0])[:8] == ["id", "revision", "figure_type", "expression", "premise", "hypothesis", "label", "explanation"]
    assert all(r["verdict"] == "" and r["edited_premise"] == "" for r in rows)
    rows[0]["verdict"] = "edit"
    rows[0]["edited_explanation"] = "An edited explanation written by the expert reviewer."
    rows[1]["verdict"] = "reject"
    for r in rows[2:]:
        r["verdict"] = "accept"
    rows.append({**rows[0], "verdict": "maybe"})  # duplicate id and a bad verdict: reported, not imported
    _write_csv(queue, rows)
    report = import_verdicts(out, queue)
    assert report.stored == n and len(report.errors) == 1 and f"{queue}:{n + 2}" in report.errors[0]
    rates = review_rates(out)
    total = rates.get("all") or next(iter(rates.values()))
    assert total["edit"] == 1 and total["reject"] == 1 and total["accept"] == n - 2 and total["unreviewed"] == 0
    # a bad edit: verdict edit without a change
    bad = root / "bad.jsonl"
    _jsonl(bad, [{"id": rows[0]["id"], "verdict": "edit"}])
    assert "no edited" in import_verdicts(out, bad).errors[0]

    result = finalize(out)
    assert sum(result["written"].values()) == n - 1 and result["left_out"]["rejected"] == 1
    edited_id = rows[0]["id"]
    combined = [json.loads(x) for x in Path(result["combined"]).read_text().splitlines()]
    assert next(p for p in combined if p["id"] == edited_id)["explanation"].startswith("An edited explanation")
    assert rows[1]["id"] not in {p["id"] for p in combined}
    for t, path in result["files"].items():
        for line in Path(path).read_text().splitlines():
            obj = json.loads(line)
            assert set(obj) == ({"id", "premise", "hypothesis", "label", "explanation"} | ({"idiom"} if t == "idiom" else set()))
            assert obj["label"] in ("Entailment", "Contradiction")
    task = load_task_spec(result["spec"])
    records = task.load("train")
    assert len(records) == n - 1
    assert {r.label for r in records} <= {"entailment", "contradiction"}
    assert next(r for r in records if r.id == edited_id).explanation.startswith("An edited explanation")
    assert {r.figure_type for r in records} <= {"idiom", "sarcasm"}


def test_reviewer_reject_resamples_a_new_revision(run: dict) -> None:
    out = run["out"]
    verdicts = [json.loads(x) for x in (out / "review" / "verdicts.jsonl").read_text().splitlines()]
    rejected = next(v for v in verdicts if v["verdict"] == "reject")
    uid, side = rejected["id"].rsplit("-", 1)
    before = load_records(out)[uid]["slots"][f"{side}.text"]
    s = create(run["inputs"], out, run["config"], extra_checks=[first_round_of_item0], resample_rejected=True)
    assert s.reviewer_resampled == 1
    rec = load_records(out)[uid]
    assert rec["revisions"][side] == 1
    after = rec["slots"][f"{side}.text"]
    assert after["attempts"][len(before["attempts"]) - 1]["reviewer_rejected"] is True
    assert len(after["attempts"]) > len(before["attempts"]) or after["status"] == "failed"
    # the new revision is back in the queue (if it passed the checks), the old verdict no longer applies
    queue = out / "queue2.jsonl"
    export_queue(out, queue)
    ids = [json.loads(x)["id"] for x in queue.read_text().splitlines()]
    assert (rejected["id"] in ids) == (after["status"] == "ok")


# --- a generator endpoint that fails mid-run ------------------------------------------------------------


def test_endpoint_failure_keeps_finished_items_and_rerun_continues(tmp_path: Path) -> None:
    """An OpenAI-compatible endpoint answers for the first idiom, then fails (503 after retries) for the
    second: the run stops cleanly, says how to continue, keeps the first idiom; the rerun resumes it."""
    from servers.openai_stub import StubServer

    from figlang.backends.openai_backend import OpenAIBackend, RetryPolicy

    down = {"on": True}

    def intercept(method: str, path: str, body: object) -> tuple[int, object] | None:
        if method == "POST" and down["on"] and "break the ice" in json.dumps(body):
            return 503, {"error": {"message": "overloaded"}}
        return None

    idioms = read_input_file(_jsonl(tmp_path / "idioms.jsonl", IDIOMS[:2]), "idiom")
    config = CreatorConfig(model="stub", max_new_tokens=20, rounds=2, seed=0)
    out = tmp_path / "run"
    retry = RetryPolicy(max_attempts=2, max_time=5.0, backoff=0.01, backoff_max=0.02)
    with StubServer(intercept=intercept) as server:
        lm = OpenAIBackend(model="stub", base_url=server.base_url, chat_only=True, retry=retry, use_cache=False)
        first = create([select(idioms, None)], out, config, lm=lm)
        assert first.interrupted and "rerun the same command" in first.interrupted
        assert "503" in first.interrupted or "overloaded" in first.interrupted
        kept = [json.loads(line)["item"]["fields"]["idiom"] for line in (out / "items.jsonl").read_text().splitlines()]
        assert kept == ["spill the beans"]  # the finished item is on disk, the failed one is not
        down["on"] = False
        second = create([select(idioms, None)], out, config, lm=lm)
    assert second.interrupted is None and second.resumed == 1 and second.ran == 1
