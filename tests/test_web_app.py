"""The web app through Flask's test client: path traversal refused, corrupt and missing runs explained, input escaped,
a 26,124-item run paged, forms that need this server's token, and no write outside the review files.

The run folders are real (`figlang eval` over IMPLI; a FLUTE creator run written by smollm2-135m): see web_support.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from web_support import figlang, flute_run, impli_output, runs_folder

from figlang.builders.flute_review import current_verdicts
from figlang.builders.impli.review import queue_items
from figlang.web import create_app


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    return runs_folder(tmp_path_factory.mktemp("web"), data_dir)


@pytest.fixture(scope="module")
def client(runs: Path, data_dir: Path):
    app = create_app(runs, data_dir, testing=True, warm=False, wait=120)  # wait for loads: no "loading" page in these tests
    return app.test_client()


def csrf(client) -> str:
    return client.application.jinja_env.globals["csrf_token"]


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/run/..%2F..%2Fetc", 403),
        ("/run/impli-first/..%2F..%2F..%2Fetc", 403),
        ("/file/..%2F..%2Fetc%2Fpasswd", 403),
        ("/file/impli-first/..%2F..%2Fsecret.png", 403),
        ("/review/flute/..%2F..%2Ftmp", 403),
        ("/human/flute/..%2F..%2Ftmp", 403),
        ("/compare?a=..%2F..&b=impli-first", 403),
        # an absolute path: "/run//etc" is redirected to "/run/etc", which is inside the folder (and absent)
        ("/run/%2Fetc", 422),
        ("/file/%2Fetc%2Fpasswd", 404),
    ],
)
def test_path_traversal_is_refused(client, url: str, status: int) -> None:
    r = client.get(url, follow_redirects=True)
    text = r.get_data(as_text=True)
    assert r.status_code == status, (url, r.status_code)
    assert {403: "refused path", 422: "no run folder", 404: "only plots are served"}[status] in text
    assert "root:" not in text


def test_links_out_of_the_runs_folder_and_non_images_are_not_served(client, runs: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    link = runs / "escape.png"
    link.symlink_to(secret)
    try:
        assert client.get("/file/escape.png").status_code == 403
    finally:
        link.unlink()
    r = client.get("/file/impli-first/results.json")  # inside the folder, but not a plot
    assert r.status_code == 404 and b"only plots are served" in r.data
    assert client.get("/tasks/..%2F..%2Fetc%2Fpasswd.yaml/train").status_code == 404  # task names come from the registry only


def test_corrupt_and_missing_runs_say_what_is_wrong(client, runs: Path) -> None:
    bad = runs / "broken"
    bad.mkdir(exist_ok=True)
    (bad / "results.json").write_text('{"task": {"name": "impli"', encoding="utf-8")
    r = client.get("/run/broken")
    assert r.status_code == 422
    assert "malformed results.json" in r.get_data(as_text=True)
    listing = client.get("/runs").get_data(as_text=True)
    assert "broken" in listing and "cannot be read" in listing

    r = client.get("/run/no-such-run")
    assert r.status_code == 422 and "no run folder" in r.get_data(as_text=True)

    empty = runs / "empty-folder"
    empty.mkdir(exist_ok=True)
    r = client.get("/run/empty-folder")
    assert r.status_code == 422 and "not a figlang run folder" in r.get_data(as_text=True)

    torn = runs / "torn"
    torn.mkdir(exist_ok=True)
    (torn / "results.json").write_text((runs / "impli-first" / "results.json").read_text(), encoding="utf-8")
    lines = (runs / "impli-first" / "predictions.jsonl").read_text(encoding="utf-8").split("\n")[:30]
    (torn / "predictions.jsonl").write_text("\n".join(lines[:10] + ['{"id": "cut off mid-wri'] + lines[10:]) + "\n", encoding="utf-8")
    page = client.get("/run/torn?show=all").get_data(as_text=True)
    assert "1 line(s) of predictions.jsonl cannot be read" in page and "predictions.jsonl:11" in page
    assert "30 of 30 items" in page
    for folder in (bad, empty, torn):
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


def test_a_26k_item_run_pages_and_filters_without_sending_everything(client, runs: Path) -> None:
    results = json.loads((runs / "impli-first" / "results.json").read_text())
    acc = results["metrics"]["accuracy"]
    assert acc["n"] == 26124
    r = client.get("/run/impli-first")
    page = r.get_data(as_text=True)
    assert r.status_code == 200 and len(r.data) < 200_000
    wrong = acc["n"] - acc["n_correct"]
    assert f"{wrong} of 26124 items" in page
    assert f"{100 * acc['accuracy']:.2f}" in page and f"{100 * acc['ci_low']:.2f}" in page  # the CI from results.json
    assert page.count('class="card"') == 25
    assert "by pair type" in page and "fig_context" in page
    # filters: every shown item is a wrong metaphor item, and the count is the group's errors
    meta = results["metrics"]["by_figure_type"]["metaphor"]
    page = client.get("/run/impli-first?show=wrong&type=metaphor&page=2").get_data(as_text=True)
    assert f"{meta['n'] - meta['n_correct']} of 26124 items" in page
    assert page.count('class="tag bad">wrong') == 25 and page.count(">metaphor</span>") >= 25
    page = client.get("/run/impli-first?show=all&expr=full+of+BEANS").get_data(as_text=True)
    n = int(re.search(r"(\d+) of 26124 items", page).group(1))
    assert 0 < n < 200 and page.lower().count("full of beans") >= min(n, 25)
    last = -(-26124 // 25)
    page = client.get(f"/run/impli-first?show=all&page={last + 7}").get_data(as_text=True)  # clamped to the last page
    assert f"page {last} of {last}" in page and page.count('class="card"') == 26124 - 25 * (last - 1)


def test_input_is_escaped(client) -> None:
    attack = '<script>alert("x")</script>'
    r = client.get("/tasks/idiom-cloze/dev", query_string={"q": attack})
    text = r.get_data(as_text=True)
    assert r.status_code == 200
    assert attack not in text and "&lt;script&gt;alert(" in text
    text = client.get("/run/impli-first", query_string={"expr": attack}).get_data(as_text=True)
    assert attack not in text and "&lt;script&gt;" in text
    # the narrative benchmark's own <b> markup is kept, nothing else
    text = client.get("/tasks/idiom-cloze/dev").get_data(as_text=True)
    assert "<b>" in text


def test_compare_shows_paired_tests_and_disagreements(client, runs: Path) -> None:
    from figlang.evaluation.compare import compare_runs

    expected = compare_runs(runs / "impli-first", runs / "impli-random")
    page = client.get("/compare?a=impli-first&b=impli-random").get_data(as_text=True)
    assert "McNemar" in page and "t-test" in page
    disagree = expected["only_a_right"] + expected["only_b_right"]
    assert f"Items where they disagree ({disagree})" in page
    assert f"only A right {expected['only_a_right']}" in page


def test_review_forms_need_the_token_and_write_only_the_verdicts_file(client, runs: Path) -> None:
    run = flute_run(runs)
    rel = run.relative_to(runs).as_posix()
    before = {p: p.stat().st_mtime_ns for p in runs.rglob("*") if p.is_file()}
    page = client.get(f"/review/flute/{rel}").get_data(as_text=True)
    ids = re.findall(r'name="id" value="([^"]+)"', page)
    revisions = re.findall(r'name="revision" value="([^"]+)"', page)
    assert ids, "the FLUTE run has candidates to review"
    form = {"id": ids[0], "revision": revisions[0], "verdict": "accept"}
    r = client.post(f"/review/flute/{rel}", data=form)  # no token: another site posting to localhost
    assert r.status_code == 400 and not (run / "review" / "verdicts.jsonl").exists()
    note = "<img src=x onerror=alert(1)> not figurative"
    r = client.post(f"/review/flute/{rel}", data={**form, "verdict": "reject", "note": "", "csrf": csrf(client)})
    assert r.status_code == 302 and "say+why" in r.headers["Location"]
    assert not (run / "review" / "verdicts.jsonl").exists()
    r = client.post(f"/review/flute/{rel}", data={**form, "verdict": "reject", "note": note, "csrf": csrf(client)}, follow_redirects=True)
    text = r.get_data(as_text=True)
    assert "rejected" in text or "reject stored" in text
    assert note not in text and "&lt;img src=x" in client.get(f"/review/flute/{rel}?show=all").get_data(as_text=True)
    stored = current_verdicts(run)
    assert stored[(ids[0], int(revisions[0]))]["verdict"] == "reject" and stored[(ids[0], int(revisions[0]))]["note"] == note
    after = {p: p.stat().st_mtime_ns for p in runs.rglob("*") if p.is_file()}
    changed = {p for p in after if before.get(p) != after[p]}
    assert changed == {run / "review" / "verdicts.jsonl"}
    (run / "review" / "verdicts.jsonl").unlink()  # leave the queue unreviewed for the browser test


def test_interpret_page(client) -> None:
    assert '<textarea name="text"' in client.get("/interpret").get_data(as_text=True)
    r = client.post("/interpret", data={"text": "He finally kicked the bucket last year.", "paraphrase": "on", "csrf": csrf(client)})
    page = r.get_data(as_text=True)
    assert r.status_code == 200 and "kick the bucket" in page
    assert "figurative ·" in page and "sources</b>" in page and ">wordnet</span>" in page  # use label and sources (#37)
    literal = "Rain leaked through the roof into the attic."
    r = client.post("/interpret", data={"text": literal, "csrf": csrf(client)})
    assert "literal use ·" in r.get_data(as_text=True)
    r = client.post("/interpret", data={"text": literal, "figurative_only": "on", "csrf": csrf(client)})
    assert r.status_code == 200 and "through the roof</mark>" not in r.get_data(as_text=True)  # hidden: a literal use
    fisherman = "The old fisherman kicked the bucket last winter and the whole village mourned."
    label = re.compile(r"(figurative|literal use) · ([0-9.]+)")
    r = client.post("/interpret", data={"text": fisherman, "use_model": "everyday", "csrf": csrf(client)})
    assert '<option value="everyday" selected>' in r.get_data(as_text=True)
    default = client.post("/interpret", data={"text": fisherman, "csrf": csrf(client)}).get_data(as_text=True)
    assert label.findall(r.get_data(as_text=True)) != label.findall(default) != []  # the other model labelled it
    r = client.post("/interpret", data={"text": fisherman, "use_model": "/etc", "csrf": csrf(client)})  # no path from a form
    assert "unknown use model" in r.get_data(as_text=True) and "kick the bucket" not in r.get_data(as_text=True)
    r = client.post("/interpret", data={"text": "   ", "csrf": csrf(client)})  # bad input: the API's own message, no traceback
    assert r.status_code == 200 and 'class="msg err"' in r.get_data(as_text=True)
    assert client.post("/interpret", data={"text": "x"}).status_code == 400  # no token


def test_serve_command_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    done = figlang("serve", "--runs", str(tmp_path / "nowhere"), timeout=120)
    said = " ".join(done.stderr.split())  # rich wraps long lines
    assert done.returncode == 2 and "nowhere is not a folder" in said and "Traceback" not in said
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        done = figlang("serve", "--runs", str(tmp_path), "--port", str(busy.getsockname()[1]), timeout=120)
    said = " ".join(done.stderr.split())
    # werkzeug says it itself ("Port N is in use by another program … start the server with a different port") and exits 1
    assert done.returncode != 0 and "is in use" in said and "different port" in said and "Traceback" not in said


@pytest.fixture(scope="module")
def impli_client(tmp_path_factory: pytest.TempPathFactory):
    """A runs folder holding only a real IMPLI generator output (cheap: spaCy on three sentences)."""
    runs = tmp_path_factory.mktemp("impli-web") / "runs"
    out = impli_output(runs)
    return create_app(runs, testing=True, warm=False, wait=120).test_client(), out


def test_impli_review_queue_accept_edit_reject(impli_client) -> None:
    client, out = impli_client
    listing = client.get("/review").get_data(as_text=True)
    assert "/review/impli/impli-generated" in listing and "fig_context" in listing and "lit_context" in listing
    page = client.get("/review/impli/impli-generated").get_data(as_text=True)
    ids = re.findall(r'name="id" value="([^"]+)"', page)
    assert len(ids) == 3 and "He died last year." in page and "not figurative" in page
    token = csrf(client)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    r = client.post(
        "/review/impli/impli-generated", data={"id": ids[0], "verdict": "reject", "reason": "", "csrf": token}, follow_redirects=True
    )
    assert "a rejection needs a reason" in r.get_data(as_text=True)
    r = client.post(
        "/review/impli/impli-generated",
        data={"id": ids[0], "verdict": "reject", "reason": "not_figurative", "note": "<b>x</b>", "csrf": token},
        follow_redirects=True,
    )
    assert f"{ids[0]}: reject stored" in r.get_data(as_text=True)
    pairs = {i["id"]: i for i in queue_items(out)}
    edit = {
        "id": ids[1],
        "verdict": "edit",
        "reason": "label_wrong",
        "edited_premise": pairs[ids[1]]["premise"],
        "edited_hypothesis": "She got angry.",
        "edited_label": pairs[ids[1]]["label"],
        "note": "",
        "csrf": token,
    }
    r = client.post("/review/impli/impli-generated", data=edit, follow_redirects=True)
    assert f"{ids[1]}: edit stored" in r.get_data(as_text=True)  # the reason select is ignored unless rejecting
    r = client.post("/review/impli/impli-generated", data={"id": ids[2], "verdict": "accept", "reason": "ungrammatical", "csrf": token})
    assert r.status_code == 302
    items = {i["id"]: i["review"] for i in queue_items(out)}
    assert items[ids[0]]["verdict"] == "reject" and items[ids[0]]["reason"] == "not_figurative" and items[ids[0]]["from"] == "figlang serve"
    assert items[ids[1]]["edits"] == {"hypothesis": "She got angry."} and items[ids[2]]["verdict"] == "accept"
    shown = client.get("/review/impli/impli-generated?show=all").get_data(as_text=True)
    assert "She got angry." in shown and "[not_figurative]" in shown and "&lt;b&gt;x&lt;/b&gt;" in shown
    changed = {p for p in out.rglob("*") if p.is_file() and before.get(p) != p.stat().st_mtime_ns}
    assert changed == {out / "review" / "verdicts.jsonl"}  # the form writes nothing but the verdicts file
    assert client.post("/review/impli/impli-generated", data={"id": ids[0], "verdict": "accept"}).status_code == 400  # no token


@pytest.mark.parametrize("url", ["/review/impli/..%2F..%2Ftmp", "/review/impli/impli-generated%2F..%2F..%2F..%2Fetc"])
def test_impli_review_traversal_is_refused(impli_client, url: str) -> None:
    client, _out = impli_client
    r = client.get(url)
    assert r.status_code == 403 and "refused path" in r.get_data(as_text=True)
    r = client.post(url, data={"id": "x", "verdict": "accept", "csrf": csrf(client)})
    assert r.status_code == 403
