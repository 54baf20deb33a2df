"""`figlang data download` / `verify` against a real local HTTP server (never the internet).

The server mirrors the raw.githubusercontent.com layout (``/OWNER/REPO/COMMIT/PATH``) from
fixture files copied out of the shared data, supports ``Range`` (206), and can be told to
corrupt a file, cut a transfer short, or ignore ``Range``.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import typer
from typer.testing import CliRunner

from figlang.cli.data_download import download_cmd, verify_cmd
from figlang.data import download as dl
from figlang.data.download import ChecksumError, DownloadError, blob_sha1_file, download, verify
from figlang.core.errors import FiglangError
from figlang.core.io import git_blob_sha1
from figlang.data.sources import BASE_URL_ENV, load_sources, select
from script_loader import load_script

REPO = Path(__file__).resolve().parents[1]

# Small real files: FLUTE prompts, IMPLI metaphor TSVs (one is Windows-1252), the PIE zip
# (exercises extraction) and one Gutenberg text (its repository path has spaces and commas).
NAMES = ["flute/prompts/*", "impli/metaphors/*", "pie_english", "gutenberg/irving_the_legend_of_sleepy_hollow.txt"]
CUT = "impli/metaphors/replacement_cc_e.tsv"  # 138,828 bytes: cut short in the interruption tests
CORRUPT = "impli/metaphors/manual_e.tsv"


@dataclass
class MirrorState:
    root: Path
    ignore_range: bool = False
    cut_after: dict[str, int] = field(default_factory=dict)  # url path -> bytes sent on its first request
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (url path, Range header)
    hits: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _MirrorServer

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        state = self.server.state
        path = unquote(urlsplit(self.path).path)
        rng = self.headers.get("Range")
        with state.lock:
            state.requests.append((path, rng))
            state.hits[path] += 1
            first = state.hits[path] == 1
        file = (state.root / path.lstrip("/")).resolve()
        if not file.is_relative_to(state.root) or not file.is_file():
            self._reply(404, b"not found")
            return
        body = file.read_bytes()
        start, status, headers = 0, 200, {}
        if rng and not state.ignore_range:
            m = re.fullmatch(r"bytes=(\d+)-", rng)
            assert m, rng
            start = int(m.group(1))
            if start >= len(body):
                self._reply(416, b"", {"Content-Range": f"bytes */{len(body)}"})
                return
            status, headers = 206, {"Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}"}
        payload = body[start:]
        cut = state.cut_after.get(path) if first else None
        if cut is None:
            self._reply(status, payload, headers)
            return
        # announce the whole payload, send only `cut` bytes, then drop the connection
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload[:cut])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _MirrorServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: MirrorState):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url_path(self, key: str) -> str:
        """The URL path a manifest file ('dataset/path') is served at."""
        dataset, _, path = key.partition("/")
        src = load_sources()[dataset]
        return f"/{src.owner}/{src.repo}/{src.commit}/{src.file(path).remote_path}"

    def mirror_file(self, key: str) -> Path:
        return self.state.root / self.url_path(key).lstrip("/")

    def requests_for(self, key: str) -> list[str | None]:
        path = self.url_path(key)
        return [r for p, r in self.state.requests if p == path]


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy setting must not route 127.0.0.1 elsewhere; the mirror env var must not leak in."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", BASE_URL_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(dl, "RETRY_BACKOFF", 0.0)


@pytest.fixture
def mirror(tmp_path: Path, data_dir: Path) -> Iterator[_MirrorServer]:
    """A local mirror holding the NAMES files, copied from the shared data."""
    state = MirrorState(root=(tmp_path / "mirror").resolve())
    server = _MirrorServer(state)
    for src, files in select(NAMES):
        for f in files:
            target = server.mirror_file(f"{src.name}/{f.path}")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_dir / src.name / f.path, target)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _expected_keys() -> set[str]:
    return {f"{src.name}/{f.path}" for src, files in select(NAMES) for f in files}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- manifest


def _load_make_sources():
    return load_script("scripts/make_sources.py")


def test_manifest_is_regenerated_from_provenance(data_dir: Path) -> None:
    make_sources = _load_make_sources()
    packaged = (REPO / "src" / "figlang" / "resources" / "sources.json").read_text(encoding="utf-8")
    assert make_sources.render(make_sources.build(data_dir)) == packaged, "rerun scripts/make_sources.py"


def test_manifest_contents() -> None:
    sources = load_sources()
    assert list(sources) == ["fig_narrative", "flute", "impli", "pie_english", "tsvetkov_metaphor", "gutenberg"]
    assert sources["fig_narrative"].commit == "9640095ed599d70d5a2e612d4731c2c27ef59015"
    assert sources["flute"].commit == "43a0616f9a6d92575182db17325608339b9ead51"
    assert sources["impli"].commit == "d43c272c895c773b311018d51ab65f592c6699bb"
    assert (sources["impli"].owner, sources["impli"].repo) == ("UKPLab", "acl2022-impli")
    counts = {name: len(src.files) for name, src in sources.items()}
    assert counts == {"fig_narrative": 75, "flute": 14, "impli": 16, "pie_english": 1, "tsvetkov_metaphor": 11, "gutenberg": 57}
    gold = sources["flute"].file("testgolddata/idiom_test.jsonl")
    assert gold.sha1 == "076e8c3a14364a823f36fb28f4ef2bd1240ee63c" and gold.size is None
    assert sources["pie_english"].file("idiomscorpus.zip").extract_to == "_extracted_from_idiomscorpus.zip"
    known = sorted(f.path for f in sources["fig_narrative"].files if f.known_modification)
    assert known == sorted(
        f"data/{k}/train.jsonl"
        for k in (
            "idiom",
            "simile",
            "idiom_inferences_context",
            "idiom_inferences_literal",
            "simile_inferences_context",
            "simile_inferences_literal",
        )
    )
    irving = sources["gutenberg"].file("irving_the_legend_of_sleepy_hollow.txt")
    assert sources["gutenberg"].url(irving) == (
        "https://raw.githubusercontent.com/rcdm-uga/Gutenberg_Text/a0b16d35a9851168ce9ac649851c17b7ab08d48e/"
        "Irving%2C%20Washington/The%20Legend%20of%20Sleepy%20Hollow.txt"
    )


def test_select_subsets_and_typos() -> None:
    [(src, files)] = select(["flute/prompts/*"])
    assert src.name == "flute" and len(files) == 3
    with pytest.raises(FiglangError, match="did you mean 'flute'"):
        select(["flutes"])
    with pytest.raises(FiglangError, match="no file of 'impli' matches"):
        select(["impli/nothing/*"])


def test_blob_sha1_file_matches_git(tmp_path: Path) -> None:
    p = tmp_path / "x.bin"
    p.write_bytes(b"hello\r\nworld\x00")
    assert blob_sha1_file(p) == git_blob_sha1(p.read_bytes())
    p.write_bytes(b"")
    assert blob_sha1_file(p) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob


# --------------------------------------------------------------------------- download


def test_full_download_then_skip(mirror: _MirrorServer, tmp_path: Path, data_dir: Path) -> None:
    target = tmp_path / "data"
    report = download(NAMES, target, base_url=mirror.url, progress=False)
    assert report.ok, [str(r.error) for r in report.failures]
    assert {r.key for r in report.results} == _expected_keys()
    assert {r.status for r in report.results} == {"downloaded"}
    for src, files in select(NAMES):
        for f in files:
            local = target / src.name / f.path  # the repository layout (gutenberg: its flat local name)
            assert git_blob_sha1(local.read_bytes()) == f.sha1
    assert not list(target.rglob("*.part")) and not list(target.rglob("*.tmp"))
    extracted = target / "pie_english" / "_extracted_from_idiomscorpus.zip"
    shared = data_dir / "pie_english" / "_extracted_from_idiomscorpus.zip"
    for name in ("idiomscorpus.csv", "README.txt"):
        assert (extracted / name).read_bytes() == (shared / name).read_bytes()
    assert verify(NAMES, target).ok

    before = len(mirror.state.requests)
    again = download(NAMES, target, base_url=mirror.url, progress=False)
    assert again.ok and {r.status for r in again.results} == {"skipped"}
    assert len(mirror.state.requests) == before  # nothing fetched

    forced = download(["impli/metaphors/manual_ne.tsv"], target, base_url=mirror.url, progress=False, force=True)
    assert [r.status for r in forced.results] == ["downloaded"]


def test_env_base_url_and_progress_bar(mirror: _MirrorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BASE_URL_ENV, mirror.url + "/")
    report = download(["flute/prompts/*"], tmp_path / "data", progress=True)
    assert report.ok and len(report.results) == 3
    assert all(r.url.startswith(mirror.url + "/tuhinjubcse/model-in-the-loop-fig-lang/") for r in report.results)


def test_corrupted_file_is_rejected(mirror: _MirrorServer, tmp_path: Path) -> None:
    bad = mirror.mirror_file(CORRUPT)
    data = bytearray(bad.read_bytes())
    data[100:110] = b"XXXXXXXXXX"  # same size, different bytes
    bad.write_bytes(bytes(data))
    target = tmp_path / "data"

    report = download(NAMES, target, base_url=mirror.url, progress=False)
    assert not report.ok
    [failure] = report.failures
    assert failure.key == CORRUPT
    err = failure.error
    assert isinstance(err, ChecksumError)
    expected = load_sources()["impli"].file("metaphors/manual_e.tsv").sha1
    assert err.expected == expected and err.actual == git_blob_sha1(bytes(data))
    assert CORRUPT in str(err) and expected in str(err) and err.actual in str(err)
    assert len(mirror.requests_for(CORRUPT)) == 2  # retried once from scratch
    assert not (target / CORRUPT).exists() and not (target / (CORRUPT + ".part")).exists()
    assert all(r.status == "downloaded" for r in report.results if r.key != CORRUPT)  # the others carried on
    with pytest.raises(DownloadError, match=re.escape(CORRUPT)):
        report.raise_for_failures()


def test_interrupted_transfer_resumes_with_range(mirror: _MirrorServer, tmp_path: Path) -> None:
    mirror.state.cut_after[mirror.url_path(CUT)] = 50_000
    target = tmp_path / "data"
    first = download([CUT], target, base_url=mirror.url, progress=False, retries=0)
    [r] = first.results
    assert r.status == "failed" and "interrupted" in str(r.error) and "resume" in str(r.error)
    part = target / (CUT + ".part")
    assert part.exists() and 0 < part.stat().st_size <= 50_000
    assert not (target / CUT).exists()
    assert verify([CUT], target).checks[0].status == "missing"

    have = part.stat().st_size
    second = download([CUT], target, base_url=mirror.url, progress=False, retries=0)
    [r] = second.results
    assert r.status == "resumed", r.error
    assert mirror.requests_for(CUT) == [None, f"bytes={have}-"]  # the server saw the Range request
    assert r.bytes == 138_828 - have  # only the rest was transferred
    assert not part.exists() and verify([CUT], target).ok


def test_dropped_connection_is_resumed_within_one_run(mirror: _MirrorServer, tmp_path: Path) -> None:
    mirror.state.cut_after[mirror.url_path(CUT)] = 20_000
    report = download([CUT], tmp_path / "data", base_url=mirror.url, progress=False)
    assert [r.status for r in report.results] == ["resumed"]
    ranges = mirror.requests_for(CUT)
    assert ranges[0] is None and ranges[1] is not None and ranges[1].startswith("bytes=")


def test_server_ignoring_range_restarts_from_zero(mirror: _MirrorServer, tmp_path: Path) -> None:
    mirror.state.ignore_range = True
    mirror.state.cut_after[mirror.url_path(CUT)] = 30_000
    target = tmp_path / "data"
    assert not download([CUT], target, base_url=mirror.url, progress=False, retries=0).ok
    report = download([CUT], target, base_url=mirror.url, progress=False, retries=0)
    [r] = report.results
    assert r.status == "downloaded" and r.bytes == 138_828  # whole file again, not appended
    assert mirror.requests_for(CUT)[1] is not None  # Range was asked for, and ignored
    assert verify([CUT], target).ok


def test_unreachable_host_gives_a_clear_error(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{_closed_port()}"
    target = tmp_path / "data"
    report = download(["flute/prompts/*", "impli/metaphors/manual_e.tsv"], target, base_url=base, progress=False)
    assert [r.status for r in report.results] == ["failed"] * 4
    first = str(report.failures[0].error)
    assert "cannot reach" in first and base in first
    assert "no network?" in first and str(target / "flute") in first and "--base-url" in first
    assert all("unreachable" in str(r.error) for r in report.failures[1:])  # not retried per file
    assert not list(target.rglob("*.part"))


def test_http_404_names_the_url(mirror: _MirrorServer, tmp_path: Path) -> None:
    mirror.mirror_file(CORRUPT).unlink()
    report = download([CORRUPT], tmp_path / "data", base_url=mirror.url, progress=False)
    [r] = report.failures
    assert "HTTP 404" in str(r.error) and mirror.url + mirror.url_path(CORRUPT) in str(r.error)


def test_known_local_modification_is_kept(tmp_path: Path, data_dir: Path) -> None:
    key = "fig_narrative/data/idiom/train.jsonl"
    (tmp_path / "data" / key).parent.mkdir(parents=True)
    shutil.copyfile(data_dir / key, tmp_path / "data" / key)
    base = f"http://127.0.0.1:{_closed_port()}"  # would fail if it tried to fetch
    report = download([key], tmp_path / "data", base_url=base, progress=False)
    assert report.ok and [r.status for r in report.results] == ["kept"]
    assert "--force" in (report.results[0].note or "")


# --------------------------------------------------------------------------- verify


def test_verify_ok_missing_modified(mirror: _MirrorServer, tmp_path: Path) -> None:
    target = tmp_path / "data"
    assert download(NAMES, target, base_url=mirror.url, progress=False).ok
    (target / "flute" / "prompts" / "simile_contra_prompt.txt").unlink()
    with open(target / CORRUPT, "ab") as f:
        f.write(b"extra\n")
    shutil.rmtree(target / "pie_english" / "_extracted_from_idiomscorpus.zip")
    report = verify(NAMES, target)
    status = {c.key: c.status for c in report.checks}
    assert status.pop("flute/prompts/simile_contra_prompt.txt") == "missing"
    assert status.pop(CORRUPT) == "modified"
    assert set(status.values()) == {"ok"}
    assert {c.key for c in report.failures} == {"flute/prompts/simile_contra_prompt.txt", CORRUPT}
    pie = next(c for c in report.checks if c.dataset == "pie_english")
    assert pie.status == "ok" and "not (fully) extracted" in (pie.note or "")


def test_verify_shared_data(data_dir: Path) -> None:
    report = verify(None, data_dir)
    sources = load_sources()
    assert len(report.checks) == sum(len(s.files) for s in sources.values())
    modified = {c.key for c in report.by_status("modified")}
    assert modified == {f"fig_narrative/{f.path}" for f in sources["fig_narrative"].files if f.known_modification}
    assert all(c.known and "withholds" in (c.note or "") for c in report.by_status("modified"))
    missing = {c.key for c in report.by_status("missing")}
    gold = {f"flute/testgolddata/{k}_test.jsonl" for k in ("sarcasm", "simile", "metaphor", "idiom")}
    # PROVENANCE lists these five, but the shared copy does not hold them (it holds 70 of the 75)
    narrative_absent = {
        "fig_narrative/idiomplausible.json",
        *(
            f"fig_narrative/src/discriminative/pet/petdata/idioms/{n}.json"
            for n in ("blindtest", "devfewshot", "trainfewshot", "unlabeled")
        ),
    }
    assert missing == gold | narrative_absent
    assert {c.key for c in report.failures} == missing  # known modifications are not failures
    assert all(c.status == "ok" for c in report.checks if c.key not in modified | missing)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    app.command("download")(download_cmd)
    app.command("verify")(verify_cmd)
    return app


def test_cli_download_and_verify(app: typer.Typer, mirror: _MirrorServer, tmp_path: Path) -> None:
    runner = CliRunner()
    target = str(tmp_path / "data")
    names = ["flute/prompts/*", "impli/metaphors/*"]
    result = runner.invoke(app, ["download", *names, "--data-dir", target, "--base-url", mirror.url, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "verified" in result.output and "impli" in result.output
    result = runner.invoke(app, ["verify", *names, "--data-dir", target])
    assert result.exit_code == 0, result.output
    assert "no problems" in result.output

    result = runner.invoke(
        app, ["download", "pie_english", "--data-dir", target, "--base-url", f"http://127.0.0.1:{_closed_port()}", "--no-progress"]
    )
    assert result.exit_code == 1
    assert "cannot reach" in result.output and "no network?" in result.output

    result = runner.invoke(app, ["verify", "flutes", "--data-dir", target])
    assert result.exit_code == 1 and "did you mean 'flute'" in result.output


def test_cli_verify_shared_data(app: typer.Typer, data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["verify", "flute", "impli", "--data-dir", str(data_dir)])
    assert result.exit_code == 1  # FLUTE test gold is not in the shared copy
    assert "testgolddata" in result.output and "missing" in result.output
    result = CliRunner().invoke(app, ["verify", "impli", "fig_narrative/data/*", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output  # the narrative train files differ, as expected
    assert "withholds" in result.output
