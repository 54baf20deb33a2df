"""`figlang serve` in a real browser: Debian's chromium (/usr/bin/chromium, scripts/install_chromium.sh) driven by
Playwright, against the real server process on a free localhost port and real run folders (see web_support).

Every page is visited, the review round trip is done (accept, edit, reject with a reason; the server is restarted and
the verdicts are still there), and the interpret page is used when figlang.interpret exists.

The session records the server's startup time and each page's time in a JSON file (not asserted: the machine may be
busy): $FIGLANG_SERVE_BENCH, default benchmarks/results/bench_serve.json. With $FIGLANG_WEB_SCREENSHOTS set to a
folder, each page is also saved there as web-<page>.png (scripts/web_screenshots.sh makes the docs' ones).
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import pytest
from web_support import REPO, Server, flute_run, human_export, runs_folder

CHROMIUM = os.environ.get("FIGLANG_CHROMIUM", "/usr/bin/chromium")
playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is in the test extra: pip install -e '.[test]'")
if not Path(CHROMIUM).exists():
    pytest.fail(f"no chromium at {CHROMIUM}: run `sh scripts/install_chromium.sh` (make setup does)", pytrace=False)

TIMINGS: dict = {"pages": []}
SHOTS = os.environ.get("FIGLANG_WEB_SCREENSHOTS")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    runs = runs_folder(tmp_path_factory.mktemp("webb"), data_dir)
    flute_run(runs)
    human_export(runs)
    return runs


@pytest.fixture(scope="module")
def server(runs: Path, data_dir: Path):
    srv = Server(runs, data_dir)
    TIMINGS["startup_s"] = round(srv.startup_s, 3)
    TIMINGS["startup_cpu_s"] = srv.startup_cpu_s and round(srv.startup_cpu_s, 3)
    TIMINGS["load_average_at_start"] = os.getloadavg()[0]
    yield srv
    srv.stop()
    _write_timings(runs)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()


def visit(page, url: str, ready: str, name: str, timeout_s: float = 300) -> None:
    """Open ``url``, time the first answer and the time until ``ready`` (a selector) shows (through "loading" pages)."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="load")
    first = time.perf_counter() - t0
    page.wait_for_selector(ready, timeout=timeout_s * 1000)
    page.wait_for_load_state("load")
    TIMINGS["pages"].append(
        {
            "page": name,
            "url": url.split("//", 1)[1].split("/", 1)[1],
            "first_response_s": round(first, 3),
            "ready_s": round(time.perf_counter() - t0, 3),
        }
    )


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"web-{name}.png"), full_page=False)


def _write_timings(runs: Path) -> None:
    preds = runs / "impli-first" / "predictions.jsonl"
    out = Path(os.environ.get("FIGLANG_SERVE_BENCH", REPO / "benchmarks" / "results" / "bench_serve.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "what": "figlang serve: startup (process spawn to the first answered page) and per-page times in chromium, "
        "over a runs folder holding two 26,124-item IMPLI runs (always-first, random), two 6-item smollm2-135m runs "
        "and a FLUTE creator run; first_response_s = navigation until the load event, ready_s = until the page's "
        "content shows (a slow first load answers with a self-reloading 'loading' page)",
        "command": "sh scripts/web_screenshots.sh (= FIGLANG_SERVE_BENCH=docs/results/serve/bench_serve.json FIGLANG_WEB_SCREENSHOTS=docs/images pytest -q tests/test_web_browser.py)",
        "big_run_items": sum(1 for _ in preds.open(encoding="utf-8")) if preds.exists() else None,
        "big_run_predictions_mb": round(preds.stat().st_size / 1e6, 1) if preds.exists() else None,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        **TIMINGS,
    }
    out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


# --- pages ------------------------------------------------------------------------------------------------------------


def test_start_page_lists_runs_tasks_and_review_queues(server, page) -> None:
    visit(page, server.url + "/", "h1", "start")
    text = page.inner_text("main")
    for name in ("impli-first", "impli-random", "idiom-gen", "flute-explain", "flute-created", "idiom-cloze"):
        assert name in text
    shot(page, "home")


def test_tasks_page_through_records_and_search(server, page) -> None:
    visit(page, server.url + "/tasks", "table", "tasks")
    page.click("a[href='/tasks/idiom-cloze/dev']")
    page.wait_for_selector(".card")
    assert "idiom-cloze" in page.inner_text("h1")
    assert page.locator(".card").count() == 25
    assert page.locator(".card .tag.gold").count() == 25  # the gold continuation is marked
    assert page.locator("main b:not(.k)").count() > 25  # the idiom, bold in its narrative
    page.click("text=next →")
    page.wait_for_selector("text=page 2 of")
    page.fill("input[name=q]", "go places")
    page.click("button:has-text('Search')")
    page.wait_for_selector(".card")
    assert all("go places" in e.lower() for e in page.locator(".card mark").all_inner_texts())
    assert "meaning" in page.inner_text(".card >> nth=0")
    shot(page, "task")
    visit(page, server.url + "/tasks/impli/all?q=full+of+beans", ".card", "task impli (26,124 records, first load)")
    assert "full of beans" in page.inner_text(".card mark >> nth=0").lower()


def test_run_page_scores_plots_and_filtered_errors(server, page, runs: Path) -> None:
    results = json.loads((runs / "impli-first" / "results.json").read_text())
    acc = results["metrics"]["accuracy"]
    visit(page, server.url + "/run/impli-first", "#matched", "run (26,124 items)")
    text = page.inner_text("main")
    assert f"{100 * acc['accuracy']:.2f}" in text and f"[{100 * acc['ci_low']:.2f}, {100 * acc['ci_high']:.2f}]" in text
    assert "by pair type" in text and "by figure type" in text
    assert page.locator(".plots img").count() >= 3  # figlang report's plots, kept in the run folder
    assert page.evaluate("Array.from(document.querySelectorAll('.plots img')).every(i => i.complete && i.naturalWidth > 100)")
    shot(page, "run")
    page.evaluate("document.querySelector('.plots').scrollIntoView()")
    shot(page, "run-plots")
    assert page.inner_text("#matched") == f"{acc['n'] - acc['n_correct']} of 26124 items"
    page.select_option("select[name=type]", "metaphor")
    page.select_option("select[name=pair]", "manual")
    page.click("button:has-text('Filter')")
    page.wait_for_selector(".card")
    tags = page.locator(".card .head").all_inner_texts()
    assert tags and all("wrong" in t and "metaphor" in t and "manual" in t for t in tags)
    page.evaluate("document.querySelector('#items').scrollIntoView()")
    shot(page, "run-items")
    t0 = time.perf_counter()
    page.click("text=next →")
    page.wait_for_selector("text=page 2 of")
    TIMINGS["pages"].append(
        {"page": "run, filtered, page 2", "url": page.url.split("/", 3)[3], "ready_s": round(time.perf_counter() - t0, 3)}
    )

    visit(page, server.url + "/run/idiom-gen", ".card", "generation run")  # no correctness: all items by default
    first = page.inner_text(".card >> nth=0")
    assert "generated" in first and "references" in first
    gen = json.loads((runs / "idiom-gen" / "predictions.jsonl").read_text().split("\n")[0])
    assert gen["prediction"][0][:40] in first and gen["references"][0][:40] in first
    shot(page, "run-generation")
    visit(page, server.url + "/run/flute-explain?show=all", ".card", "explaining NLI run")
    assert "generated explanation" in page.inner_text(".card >> nth=0") and "reference explanation" in page.inner_text(".card >> nth=0")


def test_compare_page_paired_tests_and_disagreements(server, page) -> None:
    visit(page, server.url + "/compare", "select[name=a]", "compare form")
    page.select_option("select[name=a]", "impli-first")
    page.select_option("select[name=b]", "impli-random")
    t0 = time.perf_counter()
    page.click("button:has-text('Compare')")
    page.wait_for_selector("h2:has-text('Paired tests')", timeout=300_000)
    TIMINGS["pages"].append(
        {"page": "compare two 26,124-item runs (figlang compare, first time)", "ready_s": round(time.perf_counter() - t0, 3)}
    )
    text = page.inner_text("main")
    assert "McNemar" in text and "paired bootstrap CI" in text
    assert page.locator(".side").count() == 25  # disagreements, A beside B
    heads = page.locator(".side >> nth=0").inner_text()
    assert "right" in heads and "wrong" in heads  # they disagree
    shot(page, "compare")
    visit(page, page.url + "&page=2", ".side", "compare, page 2 (cached)")


def test_interpret_page(server, page) -> None:
    visit(page, server.url + "/interpret", "h1", "interpret")
    page.fill("textarea[name=text]", "He finally kicked the bucket last year. She was as busy as a bee.")
    t0 = time.perf_counter()
    page.click("button:has-text('Interpret')")
    page.wait_for_selector(".expression", timeout=300_000)
    TIMINGS["pages"].append(
        {"page": "interpret two sentences (first call loads the lexicon)", "ready_s": round(time.perf_counter() - t0, 3)}
    )
    text = page.inner_text("main")
    assert page.locator(".expression").count() >= 2
    assert "kicked the bucket" in text and "canonical: kick the bucket" in text and "busy as a bee" in text
    assert "paraphrase" in text and "property" in text
    shot(page, "interpret")


def test_interpret_page_shows_use_labels_and_sources(server, page) -> None:
    """Issue #37: each idiom match shows its use (figurative / literal, with P) and the sources that list it; the
    headline counts the literal uses apart, and "hide idioms used literally" leaves them out."""
    text = "Her brother spilled the beans about the engagement. The toddler spilled the beans on the kitchen floor."
    visit(page, server.url + "/interpret", "h1", "interpret")
    page.fill("textarea[name=text]", text)
    page.click("button:has-text('Interpret')")
    page.wait_for_selector(".expression", timeout=300_000)
    assert page.inner_text("main h2") == "2 expressions: 1 figurative, 1 idiom used literally"
    tags = [t.strip() for t in page.locator(".expression .tag.good, .expression .tag.bad").all_inner_texts()]
    assert [t.split(" · ")[0] for t in tags] == ["figurative", "literal use"], tags
    assert "sources" in page.inner_text(".expression >> nth=0") and "wordnet" in page.inner_text(".expression >> nth=0")
    shot(page, "interpret-use-labels")
    page.check("input[name=figurative_only]")
    page.click("button:has-text('Interpret')")
    page.wait_for_selector("text=1 figurative expression")
    assert page.locator(".expression").count() == 1
    page.select_option("select[name=use_model]", "everyday")  # the everyday use model, from the menu
    page.uncheck("input[name=figurative_only]")
    page.click("button:has-text('Interpret')")
    page.wait_for_selector("text=2 expressions: 1 figurative, 1 idiom used literally")
    assert page.locator("select[name=use_model]").input_value() == "everyday"  # the choice stays shown
    everyday = [t.strip() for t in page.locator(".expression .tag.good, .expression .tag.bad").all_inner_texts()]
    assert [t.split(" · ")[0] for t in everyday] == ["figurative", "literal use"] and everyday != tags, everyday
    shot(page, "interpret-use-model")


def test_flute_human_evaluation_form(server, page, runs: Path) -> None:
    from figlang.metrics.flute_human_eval import import_flute_judgements, load_flute_key, summarize_flute_human

    export = runs / "human-eval"
    visit(page, server.url + "/human", "h1", "human evaluation list")
    page.click("text=human-eval")
    page.fill("input[name=judge]", "ann")
    page.click("button:has-text('Start')")
    page.wait_for_selector("form.judge")
    n = page.locator("form.judge").count()
    assert n == 3 and page.inner_text("#progress") == "0 of 3 items answered by ann"
    assert "flute-explain" not in page.inner_text("main") and "references" not in page.inner_text("main")  # judges are blind
    # a Yes with a shortcoming is refused by the importer's own check
    form = page.locator("form.judge").first
    form.locator("input[name=rating_1][value='Yes']").check()
    form.locator("input[name=shortcomings_1][value='Too Verbose']").check()
    form.locator("input[name=rating_2][value='No']").check()
    form.locator("button").click()
    page.wait_for_selector(".msg.err")
    assert "shortcomings are for answers other than Yes" in page.inner_text(".msg.err")
    assert not (export / "answers.jsonl").exists()
    shot(page, "human-eval")
    for i in range(3):
        form = page.locator("form.judge").first
        form.locator("input[name=rating_1][value='Weak Yes']").check()
        form.locator("input[name=shortcomings_1][value='Too Verbose']").check()
        form.locator("input[name=rating_2][value='Yes']").check()
        form.locator("button").click()
        page.wait_for_selector(f"text={i + 1} of 3 items answered by ann")
    assert page.locator("form.judge").count() == 0
    # the file figlang human flute-import reads: complete, and scored as the answers say
    judgements = import_flute_judgements(export / "answers.jsonl", export / "flute_human_eval_key.jsonl", judges_per_item=1)
    summary = summarize_flute_human(judgements).to_dict()
    key = load_flute_key(export / "flute_human_eval_key.jsonl")  # which system sat at position 1 (Weak Yes) per item
    expected = {s: 100 * sum(2 / 3 if k.systems[0] == s else 1.0 for k in key.values()) / 3 for s in ("flute-explain", "references")}
    assert {name: s["h_score"] for name, s in summary["scores"].items()} == pytest.approx(expected)


def test_review_round_trip_survives_a_restart(server, page, runs: Path, data_dir: Path) -> None:
    from figlang.builders.flute_review import current_verdicts, review_rates

    run = runs / "flute-created"
    visit(page, server.url + "/review", "table", "review list")
    page.click("text=flute-created")
    page.wait_for_selector("form.review")
    n = page.locator("form.review").count()
    assert n >= 3, "the FLUTE run has at least three candidates"
    ids = [page.locator("form.review input[name=id]").nth(i).get_attribute("value") for i in range(3)]
    # accept the first
    page.locator(f"#pair-{ids[0]} button[value=accept]").click()
    page.wait_for_selector(f"text={ids[0]}: accept stored")
    # edit the second's explanation
    form = page.locator(f"#pair-{ids[1]}")
    form.locator("textarea[name=edited_explanation]").fill("A clearer explanation, written by the reviewer.")
    form.locator("button[value=edit]").click()
    page.wait_for_selector(f"text={ids[1]}: edit stored")
    # reject the third: first without a reason (refused), then with one
    page.locator(f"#pair-{ids[2]} button[value=reject]").click()
    page.wait_for_selector("text=say why you reject it")
    page.locator(f"#pair-{ids[2]} input[name=note]").fill("the hypothesis does not use the idiom <b>at all</b>")
    page.locator(f"#pair-{ids[2]} button[value=reject]").click()
    page.wait_for_selector(f"text={ids[2]}: reject stored")
    assert page.locator("form.review").count() == n - 3  # the unreviewed queue shrank

    # the server goes away mid-review; a new one shows the same state from the same files
    server.stop()
    again = Server(runs, data_dir)
    try:
        TIMINGS["restart_startup_s"] = round(again.startup_s, 3)
        TIMINGS["restart_startup_cpu_s"] = again.startup_cpu_s and round(again.startup_cpu_s, 3)
        page.goto(again.url + "/review/flute/flute-created?show=all")
        page.wait_for_selector("form.review")
        assert page.locator(f"#pair-{ids[0]} .tag.good").inner_text() == "accept"
        assert page.locator(f"#pair-{ids[1]} .tag.good").inner_text() == "edit"
        assert page.locator(f"#pair-{ids[2]} .tag.bad").inner_text() == "reject"
        assert "<b>at all</b>" in page.locator(f"#pair-{ids[2]} .head").inner_text()  # shown as text, not markup
        assert page.locator(f"#pair-{ids[1]} textarea[name=edited_explanation]").input_value().startswith("A clearer explanation")
        shot(page, "review")
        page.goto(again.url + "/review/flute/flute-created")
        page.wait_for_selector("h1")
        assert page.locator("form.review").count() == n - 3
    finally:
        again.stop()
    # the files the CLI reads
    stored = current_verdicts(run)
    by_id = {k[0]: v for k, v in stored.items()}
    assert by_id[ids[0]]["verdict"] == "accept" and by_id[ids[1]]["edits"] == {
        "explanation": "A clearer explanation, written by the reviewer."
    }
    assert by_id[ids[2]]["verdict"] == "reject" and "at all" in by_id[ids[2]]["note"] and by_id[ids[2]]["from"] == "figlang serve"
    total = review_rates(run)["idiom"]
    assert (total["accept"], total["edit"], total["reject"], total["unreviewed"]) == (1, 1, 1, total["candidates"] - 3)


def test_impli_review_round_trip(browser, tmp_path: Path, data_dir: Path) -> None:
    """An IMPLI generator output (spaCy on three sentences) reviewed in the browser: accept, edit the hypothesis,
    reject with a reason from the list; a new server shows the same verdicts and finalize writes the kept pairs."""
    from web_support import impli_output

    from figlang.builders.impli.review import finalize, queue_items

    runs = tmp_path / "runs"
    out = impli_output(runs)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    srv = Server(runs, data_dir)
    try:
        page.goto(srv.url + "/review")
        page.click("text=impli-generated")
        page.wait_for_selector("form.review")
        assert page.locator("form.review").count() == 3
        ids = [page.locator("form.review input[name=id]").nth(i).get_attribute("value") for i in range(3)]
        form = lambda pid: page.locator(f'form[id="pair-{pid}"]')  # noqa: E731
        form(ids[0]).locator("button[value=accept]").click()
        page.wait_for_selector(f"text={ids[0]}: accept stored")
        form(ids[1]).locator("textarea[name=edited_hypothesis]").fill("She became very angry.")
        form(ids[1]).locator("button[value=edit]").click()
        page.wait_for_selector(f"text={ids[1]}: edit stored")
        form(ids[2]).locator("button[value=reject]").click()  # no reason chosen: refused
        page.wait_for_selector("text=a rejection needs a reason")
        form(ids[2]).locator("select[name=reason]").select_option("not_figurative")
        form(ids[2]).locator("button[value=reject]").click()
        page.wait_for_selector(f"text={ids[2]}: reject stored")
        assert page.locator("form.review").count() == 0
    finally:
        srv.stop()
    again = Server(runs, data_dir)
    try:
        page.goto(again.url + "/review/impli/impli-generated?show=all")
        page.wait_for_selector("form.review")
        assert [form(i).locator(".head .tag").nth(1).inner_text() for i in ids] == ["accept", "edit", "reject"]
        assert "[not_figurative]" in form(ids[2]).locator(".head").inner_text()
    finally:
        again.stop()
        context.close()
    reviews = {i["id"]: i["review"] for i in queue_items(out)}
    assert reviews[ids[1]]["edits"] == {"hypothesis": "She became very angry."} and reviews[ids[2]]["reason"] == "not_figurative"
    assert finalize(out)["pairs"] == 2
