"""The run context (issue 34): one data folder, resolved once by one rule, handed to the methods that need it.

The methods that read more than the task's records (the meaning methods' lexicons, the explain method's idiom
lexicon) get the data folder from ``--data-dir`` through ``Method.bind(task, ctx)``, also when
``$FIGLANG_DATA_DIR`` points elsewhere. Real runs with the offline smollm2-135m.

Every other command that reads data (data, export, human table5, knowledge, interpret, build, relations,
simulatability, figure-type, ensemble, train, compare) builds one context at its start: each is run with
``$FIGLANG_DATA_DIR`` naming an empty folder and shown to read its data from ``--data-dir``; `figlang train` and
`figlang serve` are shown to hand the context they build to the trainer and the web app, whose compare page re-joins
a published run's texts from the folder it serves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from figlang.cli.main import app
from figlang.core.context import RunContext, run_context
from figlang.core.errors import FiglangError
from figlang.data.records import Record
from figlang.data.registry import get_task
from figlang.methods.base import Method, Prediction, bind_method

MODEL = "smollm2-135m"

IDIOM_SPEC = """\
name: my-idioms-without-meanings
shape: cloze
splits:
  dev: "{data_dir}/fig_narrative/data/idiom/dev.jsonl"
columns:
  context: narrative
  options: [option1, option2]
  label: correctanswer
  expression: idiom
labels: {option1: 0, option2: 1}
"""


def _eval(args: list[str], elsewhere: Path) -> Any:
    env = {**os.environ, "FIGLANG_DATA_DIR": str(elsewhere)}  # the environment names another (empty) data folder
    return CliRunner().invoke(app, ["eval", *args], env=env)


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_meaning_lexicons_come_from_data_dir_not_the_environment(data_dir: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(IDIOM_SPEC, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "run"
    args = ["-t", str(spec), "-s", "dev", "-m", "lm-score-meaning", "--model", MODEL, "--limit", "3", "--data-dir", str(data_dir)]
    args += ["-O", "threads=1", "-O", "dtype=float32", "-O", "sources=record,lexicon", "--no-cache", "-q", "-o", str(out)]
    result = _eval(args, elsewhere)
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert len(rows) == 3
    for row in rows:  # the records carry no meaning; the benchmark lexicon under --data-dir knows every dev idiom
        assert row["meta"]["meaning_source"] == "lexicon:benchmark", row["meta"]
        assert row["meta"]["meaning"]


@pytest.mark.slow
def test_precomputed_inferences_come_from_data_dir_not_the_environment(data_dir: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(IDIOM_SPEC, encoding="utf-8")  # the spec's records carry no inferences of their own
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "run"
    args = ["-t", str(spec), "-s", "dev", "-m", "lm-score-knowledge", "--model", MODEL, "--limit", "1", "--data-dir", str(data_dir)]
    args += ["-O", "threads=1", "-O", "provider=precomputed", "-O", "max_inferences=2", "--no-cache", "-q", "-o", str(out)]
    result = _eval(args, elsewhere)
    assert result.exit_code == 0, result.output
    (row,) = _rows(out)
    assert row["valid"] and len(row["scores"]) == 2 and row["meta"]["inferences"] == 2  # two shipped inferences, found under --data-dir


PAIRS = [
    {
        "id": "p1",
        "premise": "He will be very successful one day.",
        "hypothesis": "He could go places.",
        "label": "Entailment",
        "why": "To go places is to succeed.",
    },
    {
        "id": "p2",
        "premise": "She will never achieve anything.",
        "hypothesis": "She could go places.",
        "label": "Contradiction",
        "why": "To go places is to succeed, and she will not.",
    },
]
NLI_SPEC = """\
name: my-idiom-pairs
shape: nli
splits:
  train: pairs.jsonl
  dev: pairs.jsonl
columns:
  premise: premise
  hypothesis: hypothesis
  label: label
  explanation: why
  expression: idiom
  figure_type: type
  id: id
labels: {Entailment: entailment, Contradiction: contradiction}
"""


@pytest.mark.slow
def test_explain_reads_its_idiom_lexicon_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """The pairs live beside the spec, not in the data folder: the idiom lexicon is found under --data-dir all the same."""
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    rows = [{**p, "idiom": "go places", "type": "idiom"} for p in PAIRS]
    (task_dir / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (task_dir / "spec.yaml").write_text(NLI_SPEC, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "run"
    args = ["-t", str(task_dir / "spec.yaml"), "-s", "dev", "-m", "explain", "--model", MODEL, "--data-dir", str(data_dir)]
    args += ["-O", "threads=1", "-O", "dtype=float32", "-O", "k=1", "-O", "max_new_tokens=4", "--no-cache", "-q", "-o", str(out)]
    result = _eval(args, elsewhere)
    assert result.exit_code == 0, result.output
    for row in _rows(out):
        assert row["meta"]["meaning"] == "To progress or find success in some area of one's life.", row["meta"]
    fingerprint = json.loads((out / "results.json").read_text(encoding="utf-8"))["method"]["fingerprint"]
    assert fingerprint["idiom_lexicon_size"] > 0


def test_the_data_folder_is_taken_as_given_links_not_followed(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    link = tmp_path / "data-link"
    link.symlink_to(data_dir.resolve(), target_is_directory=True)
    ctx = RunContext.create(link, tmp_path / "cache", seed=3)
    assert ctx.data_dir == link and ctx.data_dir.is_absolute() and ctx.seed == 3
    assert ctx.cache_dir == tmp_path / "cache"
    monkeypatch.setenv("FIGLANG_DATA_DIR", str(link))
    assert RunContext.create().data_dir == link  # the environment, by the same rule
    from figlang.web.app import create_app

    served = create_app(tmp_path, link, testing=True, warm=False).config["FIGLANG"]
    assert served.data_dir == link  # the web app reads the data folder by the same rule as every command


def test_a_context_and_a_folder_are_not_given_together(tmp_path: Path) -> None:
    ctx = RunContext.create(tmp_path)
    assert run_context(ctx) is ctx and run_context(ctx, seed=7).seed == 7
    with pytest.raises(FiglangError, match="either ctx= or data_dir="):
        run_context(ctx, data_dir=tmp_path / "other")


class _OldStylePlugin(Method):
    """A plugin method written before the run context: its bind takes the task alone."""

    name = "old-style"
    shapes = ("cloze",)

    def bind(self, task: Any) -> None:  # type: ignore[override]
        self.bound = task.name

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        return [Prediction(r.id, 0) for r in records]

    def config(self) -> dict[str, Any]:
        return {}


def test_plugins_whose_bind_takes_the_task_alone_keep_working(data_dir: Path) -> None:
    method = _OldStylePlugin()
    bind_method(method, get_task("idiom-cloze"), RunContext.create(data_dir))
    assert method.bound == "idiom-cloze"


def _cli(args: list[str], elsewhere: Path) -> Any:
    """A figlang command run with $FIGLANG_DATA_DIR naming another (empty) folder: its data must come from --data-dir."""
    elsewhere.mkdir(exist_ok=True)
    return CliRunner().invoke(app, args, env={**os.environ, "FIGLANG_DATA_DIR": str(elsewhere)})


def _reads_data_dir(args: list[str], data_dir: Path, tmp_path: Path) -> Any:
    """``args`` with --data-dir run twice: without it the command fails on the empty folder the environment names
    (so it does read data), and with it the command succeeds (so it reads the data from --data-dir)."""
    without = _cli(args, tmp_path / "elsewhere")
    assert without.exit_code != 0, f"{args} succeeded on an empty data folder: it reads no data\n{without.output}"
    result = _cli([*args, "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize(
    "args",
    [
        ["data", "stats", "-t", "idiom-cloze", "-s", "dev"],
        ["data", "show", "idiom-cloze", "-s", "dev", "-n", "1"],
        ["data", "overlap", "idiom-cloze", "--json"],
    ],
    ids=["stats", "show", "overlap"],
)
def test_data_commands_read_data_dir(args: list[str], data_dir: Path, tmp_path: Path) -> None:
    _reads_data_dir(args, data_dir, tmp_path)


def test_data_split_reads_data_dir(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "split"
    _reads_data_dir(["data", "split", "idiom-cloze", "-s", "dev", "-o", str(out)], data_dir, tmp_path)
    assert (out / "dev.jsonl").is_file()


def test_data_stats_reports_the_data_dir_it_read(data_dir: Path, tmp_path: Path) -> None:
    result = _cli(["data", "stats", "-t", "idiom-cloze", "-s", "dev", "--json", "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["data_dir"] == str(RunContext.create(data_dir).data_dir)
    assert report["tasks"][0]["splits"][0]["records"] > 0


@pytest.mark.parametrize("kind", ["lm-eval", "hf"])
def test_export_commands_read_data_dir(kind: str, data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    args = ["export", kind, "idiom-cloze", "-s", "dev", "-o", str(out)] + (["--limit", "2"] if kind == "lm-eval" else [])
    _reads_data_dir(args, data_dir, tmp_path)
    assert any(out.rglob("*.jsonl" if kind == "lm-eval" else "*.parquet"))


def test_human_table5_reads_data_dir(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "table5"
    _reads_data_dir(["human", "table5", "-o", str(out)], data_dir, tmp_path)
    recorded = json.loads((out / "table5.json").read_text(encoding="utf-8"))["data"]
    assert recorded["data_dir"] is not None and recorded["files"]  # the folder as given, and the files read from it


def test_data_verify_reads_data_dir(data_dir: Path, tmp_path: Path) -> None:
    result = _reads_data_dir(["data", "verify", "impli"], data_dir, tmp_path)
    assert "no problems" in result.output


def test_data_download_writes_into_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """Files already in --data-dir and verified are not fetched: with the mirror unreachable the command succeeds only
    when it looks in --data-dir (the environment's folder is empty, so there it would have to fetch, and fails)."""
    import socket
    import shutil

    target = tmp_path / "data"
    shutil.copytree(data_dir / "impli" / "metaphors", target / "impli" / "metaphors")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    args = ["data", "download", "impli/metaphors/*", "--base-url", f"http://127.0.0.1:{closed}", "--no-progress"]
    result = _reads_data_dir(args, target, tmp_path)
    assert str(target) in "".join(result.output.split())  # the report names the folder it checked (a long path may wrap)


def test_knowledge_infer_reads_data_dir(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "inferences.jsonl"
    args = ["knowledge", "infer", "-t", "idiom-cloze", "-s", "dev", "-n", "2", "-p", "precomputed", "--no-cache", "-o", str(out)]
    _reads_data_dir(args, data_dir, tmp_path)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2  # the shipped inferences of two narratives under --data-dir


def test_knowledge_data_dir_copies_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """Without the narratives (the environment's empty folder) nothing is written; from --data-dir, the dev file."""
    args = ["knowledge", "data-dir", "-p", "precomputed", "--type", "idiom", "-s", "dev", "--no-cache"]
    without = _cli([*args, "-o", str(tmp_path / "without")], tmp_path / "elsewhere")
    assert without.exit_code == 0 and not (tmp_path / "without").exists(), without.output
    out = tmp_path / "out"
    result = _cli([*args, "-o", str(out), "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code == 0, result.output
    assert [p.name for p in out.rglob("*.jsonl") if "inferences_context" in str(p)] == ["dev.jsonl"]


@pytest.mark.slow
def test_interpret_reads_its_lexicons_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """Interpret works without a data folder (with fewer lexicons): the PIE lexicon, found under --data-dir only, tells."""
    args = ["interpret", "He finally kicked the bucket last year.", "--no-paraphrase", "--json"]
    # stdout only: the first run on a machine says on stderr which lexicon parts it builds
    without = json.loads(_cli(args, tmp_path / "elsewhere").stdout)
    assert "pie" in without["lexicon"]["missing"]
    result = _cli([*args, "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code == 0, result.output
    reading = json.loads(result.stdout)
    assert reading["lexicon"]["missing"] == [] and reading["expressions"][0]["meaning_source"] == "lexicon:pie"


def _with_data_dir(args: list[str], data_dir: Path, tmp_path: Path) -> Any:
    """``args`` run with --data-dir while $FIGLANG_DATA_DIR names an empty folder: it must succeed (for the commands
    slow to start, whose failing run without --data-dir would cost as much again)."""
    result = _cli([*args, "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code == 0, result.output
    return result


def test_build_narratives_check_lexicon_reads_data_dir(data_dir: Path, tmp_path: Path) -> None:
    result = _reads_data_dir(["build", "narratives", "check-lexicon", "benchmark"], data_dir, tmp_path)
    assert "benchmark: 499 idioms" in result.output


@pytest.mark.slow
def test_build_narratives_mine_reads_its_lexicon_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("He kicked the bucket.\n", encoding="utf-8")
    result = _with_data_dir(["build", "narratives", "mine", str(corpus), "-o", str(tmp_path / "mine")], data_dir, tmp_path)
    assert "lexicon benchmark: 499 idioms" in result.output


def test_build_flute_generate_draws_its_idioms_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """The idioms are drawn before any model loads: the run is stopped there by a model that does not exist."""
    args = ["build", "flute", "generate", "--idioms", "benchmark", "--limit", "1", "--model", "no-such-model"]
    without = _cli([*args, "-o", str(tmp_path / "without")], tmp_path / "elsewhere")
    assert without.exit_code != 0 and "file not found" in str(without.exception), without.output
    result = _cli([*args, "-o", str(tmp_path / "with"), "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert "idiom: 1 input(s) from benchmark" in result.output, result.output


def test_build_flute_verdict_stats_draws_its_idioms_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    verdicts = Path(__file__).resolve().parents[1] / "docs" / "research" / "flute_run50_verdicts.csv"
    args = ["build", "flute", "verdict-stats", str(verdicts), "--idioms", "benchmark", "--limit", "50", "--json"]
    result = _reads_data_dir(args, data_dir, tmp_path)
    inputs = json.loads(result.stdout)["inputs"]
    assert inputs["items"] == 50 and inputs["data"][0]["path"].startswith("fig_narrative/")  # checksummed against --data-dir


def test_build_impli_sentences_reads_data_dir(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sentences.tsv"
    _reads_data_dir(["build", "impli", "sentences", "-o", str(out), "--source", "semeval"], data_dir, tmp_path)
    assert out.read_text(encoding="utf-8").strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["build", "impli", "lexicon", "--source", "semeval", "-o", "{tmp}/lexicon.tsv"],
        ["build", "impli", "regenerate", "--source", "semeval", "--sample", "5", "--results", "{tmp}/results"],
        ["build", "impli", "metaphors", "-o", "{tmp}/metaphors"],
    ],
    ids=["lexicon", "regenerate", "metaphors"],
)
def test_build_impli_spacy_commands_read_data_dir(args: list[str], data_dir: Path, tmp_path: Path) -> None:
    _with_data_dir([a.format(tmp=tmp_path) for a in args], data_dir, tmp_path)
    assert any(p.is_file() for p in tmp_path.rglob("*") if "elsewhere" not in p.parts)


@pytest.mark.parametrize(
    "args",
    [
        ["relations", "--model", "{tmp}/no-model", "-t", "idiom-cloze", "-s", "dev", "-n", "1"],
        ["simulatability", "--io", "{tmp}/no-io", "--iro", "{tmp}/no-iro", "-t", "flute", "-s", "val", "-n", "1"],
    ],
    ids=["relations", "simulatability"],
)
def test_trained_model_analyses_read_their_split_from_data_dir(args: list[str], data_dir: Path, tmp_path: Path) -> None:
    """The split is read before the (here missing) models: without --data-dir the run stops at the data, with it at the model."""
    args = [a.format(tmp=tmp_path) for a in args]
    without = _cli(args, tmp_path / "elsewhere")
    assert "file not found" in str(without.exception), without.output
    result = _cli([*args, "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code != 0 and "is not a figlang-trained model" in str(result.exception), result.output


def test_figure_type_trains_on_data_dir(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """`figlang figure-type --train` hands the trainer a context naming --data-dir (the training itself is too slow here)."""
    import figlang.methods.trained.figure_type as figure_type

    seen: list[RunContext | None] = []
    monkeypatch.setattr(figure_type, "train_figure_type", lambda out, threads=2, ctx=None: seen.append(ctx) or {"heads": {}})
    result = _cli(["figure-type", "--train", str(tmp_path / "heads"), "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code == 0, result.output
    assert seen and seen[0] is not None and seen[0].data_dir == RunContext.create(data_dir).data_dir


def test_ensemble_scores_its_report_runs_against_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """The combined report runs are scored against the gold labels under --data-dir."""
    from test_ensemble import PMI_DD, PMI_DEV, PROBE_DD, PROBE_DEV

    args = ["ensemble", "--select", str(PROBE_DEV), "--select", str(PMI_DEV), "--report", str(PROBE_DD), "--report", str(PMI_DD)]
    _reads_data_dir([*args, "-o", str(tmp_path / "ensemble")], data_dir, tmp_path)
    results = json.loads((tmp_path / "ensemble" / "results.json").read_text(encoding="utf-8"))
    assert results["task"]["split"] == "dev-disjoint" and results["data"]["files"]


FLUTE_RUN = Path(__file__).resolve().parents[1] / "docs" / "results" / "zs" / "flute-val-nli-score-gemma"  # published without FLUTE's texts


def test_compare_rejoins_the_runs_texts_from_data_dir(data_dir: Path, tmp_path: Path) -> None:
    """A FLUTE run is published without its texts; --ci-cluster context needs them (its clusters are the premises),
    so the comparison succeeds only when it re-joins them from --data-dir (the environment's folder is empty)."""
    args = ["compare", str(FLUTE_RUN), str(FLUTE_RUN), "--ci-cluster", "context", "--resamples", "1000", "--json"]
    without = _cli(args, tmp_path / "elsewhere")
    assert without.exit_code != 0 and "needs the items' texts" in str(without.exception), without.output
    result = _reads_data_dir(args, data_dir, tmp_path)
    comparison = json.loads(result.stdout)
    assert comparison["n_paired"] == 499 and comparison["ci_cluster"] == "context"
    assert not any("re-joined" in w for w in comparison["warnings"]), comparison["warnings"]


@pytest.mark.parametrize("folds", [[], ["--folds", "2"]], ids=["train", "folds"])
def test_train_loads_its_task_from_data_dir(folds: list[str], data_dir: Path, tmp_path: Path) -> None:
    """The task is loaded before the (here missing) base model: without --data-dir the run stops at the data, with it
    at the model; and the run's configuration names --data-dir."""
    args = ["train", "-t", "impli" if folds else "idiom-cloze", "-m", "nli" if folds else "mc", "--model", str(tmp_path / "no-model")]
    args += [*folds, "--limit", "20", "-q", "-o", str(tmp_path / "out")]
    without = _cli(args, tmp_path / "elsewhere")
    assert "file not found" in str(without.exception), without.output
    result = _cli([*args, "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert result.exit_code != 0 and "file not found" not in str(result.exception), result.output
    assert "no-model" in str(result.exception), result.output


def test_train_hands_the_trainer_one_context(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """`figlang train` builds the run's context once and hands it down: its data folder is --data-dir, its seed, device
    and threads the command's, and the trainer's configuration reads them from it."""
    import figlang.training as training
    from figlang.training.config import make_config

    seen: list[Any] = []

    def fake_train(task: str, method: str, model: str, out: Path, *, restart: bool = False, ctx: RunContext | None = None, **options: Any):
        seen.append((ctx, make_config(task, method, model, out, ctx=ctx, **options)))
        raise FiglangError("stopped before training")

    monkeypatch.setattr(training, "train", fake_train, raising=False)
    args = ["train", "-t", "idiom-cloze", "-m", "mc", "--model", "minilm", "-o", str(tmp_path / "out"), "--seed", "7", "--threads", "1"]
    result = _cli([*args, "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert "stopped before training" in str(result.exception), result.output
    ((ctx, cfg),) = seen
    assert ctx is not None and ctx.data_dir == RunContext.create(data_dir).data_dir and (ctx.seed, ctx.threads) == (7, 1)
    assert (cfg.data_dir, cfg.seed, cfg.threads, cfg.device) == (str(ctx.data_dir), 7, 1, "cpu")  # device: the trainer's default
    with pytest.raises(FiglangError, match="either ctx= or data_dir="):
        make_config("idiom-cloze", "mc", "minilm", tmp_path / "out", ctx=ctx, data_dir=str(tmp_path))


def test_serve_hands_the_app_one_context(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """`figlang serve` builds the run's context once and hands it to the web app: its data folder is --data-dir."""
    import figlang.web as web

    seen: list[RunContext | None] = []

    def fake_create_app(runs: Path, data_dir: Path | None = None, *, ctx: RunContext | None = None, **_: Any):
        seen.append(ctx)
        raise FiglangError("stopped before serving")

    monkeypatch.setattr(web, "create_app", fake_create_app)
    result = _cli(["serve", "--runs", str(tmp_path), "--data-dir", str(data_dir)], tmp_path / "elsewhere")
    assert "stopped before serving" in str(result.exception), result.output
    assert seen and seen[0] is not None and seen[0].data_dir == RunContext.create(data_dir).data_dir


def test_the_web_compare_page_rejoins_texts_from_the_served_data_folder(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """The web app's compare page re-joins a published run's texts from the data folder it serves, not $FIGLANG_DATA_DIR."""
    import gzip
    import shutil

    from figlang.web import create_app

    runs = tmp_path / "runs"
    for name in ("a", "b"):
        (runs / name).mkdir(parents=True)
        shutil.copy(FLUTE_RUN / "results.json", runs / name / "results.json")
        (runs / name / "predictions.jsonl").write_bytes(gzip.decompress((FLUTE_RUN / "predictions.jsonl.gz").read_bytes()))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("FIGLANG_DATA_DIR", str(tmp_path / "elsewhere"))
    client = create_app(runs, data_dir, testing=True, warm=False, wait=120).test_client()
    page = client.get("/compare?a=a&b=b").get_data(as_text=True)
    assert "499 paired items" in page and "not re-joined" not in page, [line for line in page.splitlines() if "warning" in line]
