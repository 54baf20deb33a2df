"""What the web app's tests share: real run folders (a 26,124-item IMPLI run made by `figlang eval`, a second one to
compare with, a real FLUTE creator run made with smollm2-135m) and a real `figlang serve` process on a free port.

The folders are made once per test session (memoised here, so the two test modules that use them share them).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_MADE: dict[str, Path] = {}

FLUTE_IDIOMS = [
    {"idiom": "spill the beans", "meaning": "to reveal a secret", "sentence": "Tom spilled the beans about the wedding plans."},
    {
        "idiom": "break the ice",
        "meaning": "to make people feel more relaxed at first meeting",
        "sentence": "She told a joke to break the ice at the meeting.",
    },
    {"idiom": "hit the sack", "meaning": "to go to bed", "sentence": "After the long hike we hit the sack early."},
]


def figlang(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess (this checkout's sources first)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "figlang.cli.main", *args], env=env, capture_output=True, text=True, timeout=timeout)


#: The runs the web tests browse: two over all 26,124 IMPLI pairs (cheap methods), a generation run and an explaining
#: NLI run (smollm2-135m on 6 items: generated text and explanations beside their references).
RUNS = {
    "impli-first": ("-t", "impli", "-m", "always-first"),
    "impli-random": ("-t", "impli", "-m", "random"),
    "idiom-gen": ("-t", "idiom-generation", "-s", "dev", "-m", "generate", "--model", "smollm2-135m", "-n", "6", "-O", "threads=1"),
    "flute-explain": ("-t", "flute", "-s", "val", "-m", "nli-generate", "--model", "smollm2-135m", "-n", "6", "-O", "threads=1"),
}


def runs_folder(root: Path, data_dir: Path) -> Path:
    """runs/ holding the RUNS, made by `figlang eval` (or copied from $FIGLANG_TEST_WEB_RUNS, a folder holding them from
    an earlier session: saves minutes when iterating)."""
    if "runs" in _MADE:
        return _MADE["runs"]
    import shutil

    runs = root / "runs"
    reuse = os.environ.get("FIGLANG_TEST_WEB_RUNS")
    for name, args in RUNS.items():
        if reuse and (Path(reuse) / name / "predictions.jsonl").is_file():
            shutil.copytree(Path(reuse) / name, runs / name)
            continue
        done = figlang("eval", *args, "-q", "-o", str(runs / name), "--data-dir", str(data_dir))
        assert done.returncode == 0, done.stderr[-2000:]
        if name == "impli-first":  # its plots, inside the run folder, as a user keeps them
            done = figlang("report", str(runs / name), "-o", str(runs / name / "plots"))
            assert done.returncode == 0, done.stderr[-2000:]
    _MADE["runs"] = runs
    return runs


def flute_run(runs: Path) -> Path:
    """A real FLUTE creator run (smollm2-135m writes the pairs, the checks run) inside the runs folder."""
    if "flute" in _MADE:
        return _MADE["flute"]
    reuse = os.environ.get("FIGLANG_TEST_WEB_RUNS")
    if reuse and (Path(reuse) / "flute-created" / "candidates.jsonl").is_file():
        import shutil

        shutil.copytree(Path(reuse) / "flute-created", runs / "flute-created", ignore=shutil.ignore_patterns("review"))
        _MADE["flute"] = runs / "flute-created"
        return _MADE["flute"]
    import torch

    from figlang.builders.flute_creator import CreatorConfig, create
    from figlang.builders.flute_inputs import read_input_file, select

    torch.set_num_threads(1)
    src = runs.parent / "flute-idioms.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in FLUTE_IDIOMS), encoding="utf-8")
    out = runs / "flute-created"
    config = CreatorConfig(model="smollm2-135m", max_new_tokens=40, rounds=3, seed=0, backend_options={"threads": 1})
    create([select(read_input_file(src, "idiom"), None)], out, config)
    _MADE["flute"] = out
    return out


IMPLI_SENTENCES = (
    "He kicked the bucket last year.\tkick the bucket\tfigurative\n"
    "She lost her temper.\tlose one's temper\tfigurative\n"
    "The cook spilled the beans on the floor.\tspill the beans\tliteral\n"
)
IMPLI_LEXICON = "kick the bucket\tdie\nlose one's temper\tlose one's composure\nspill the beans\treveal the secret\n"


def impli_output(runs: Path, name: str = "impli-generated") -> Path:
    """A real IMPLI generator output folder inside the runs folder: `figlang build impli substitute` (spaCy) on three
    sentences, giving two fig_context pairs and one lit_context pair to review."""
    runs.mkdir(parents=True, exist_ok=True)
    sentences, lexicon = runs.parent / f"{name}-sentences.tsv", runs.parent / f"{name}-lexicon.tsv"
    sentences.write_text(IMPLI_SENTENCES, encoding="utf-8")
    lexicon.write_text(IMPLI_LEXICON, encoding="utf-8")
    out = runs / name
    done = figlang("build", "impli", "substitute", "-s", str(sentences), "-l", str(lexicon), "-o", str(out), "--source", "demo")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`figlang serve` in a subprocess; ``startup_s`` is the time from spawning it to its first answered page,
    ``startup_cpu_s`` the CPU time it used for that."""

    def __init__(self, runs: Path, data_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "figlang.cli.main", "serve", "--runs", str(runs), "--data-dir", str(data_dir), "--port", str(self.port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = t0 + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"figlang serve exited: {self.proc.stdout.read()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.perf_counter() > deadline:
                self.stop()
                raise RuntimeError("figlang serve did not answer within 120 s")
            time.sleep(0.05)
        self.startup_s = time.perf_counter() - t0
        try:  # CPU seconds the server used until then: a figure a busy machine does not inflate as it does wall time
            import psutil

            cpu = psutil.Process(self.proc.pid).cpu_times()
            self.startup_cpu_s: float | None = cpu.user + cpu.system
        except Exception:
            self.startup_cpu_s = None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def human_export(runs: Path) -> Path:
    """A FLUTE human-evaluation export (`figlang.metrics.flute_human_eval`, as `figlang human flute-export` writes it)
    inside the runs folder: smollm2-135m's explanations (the flute-explain run) beside FLUTE's reference explanations
    as the second system, one pair per figure type the 6-item run has."""
    if "human" in _MADE:
        return _MADE["human"]
    from figlang.evaluation.runs import load_run
    from figlang.metrics.flute_human_eval import export_flute_for_judges, sample_flute_items

    rows = load_run(runs / "flute-explain").rows
    references = [{**r, "prediction": r["gold"], "explanation": r["gold_explanation"], "correct": True} for r in rows]
    sample = sample_flute_items(
        {"flute-explain": rows, "references": references},
        per_type=1,
        seed=13,
        require_correct=False,
        figure_types=("sarcasm", "metaphor", "idiom"),
    )
    out = runs / "human-eval"
    export_flute_for_judges(sample, out)
    _MADE["human"] = out
    return out
