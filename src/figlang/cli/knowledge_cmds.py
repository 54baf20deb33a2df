"""`figlang knowledge …`: make the narrative benchmark's knowledge inferences with a provider.

* ``infer``: one split of a narrative task, in the shipped inference-file format (one JSON object a
  line: the narrative file's fields + ``inferences``); without ``--limit`` the lines are aligned
  with the benchmark's narrative file, so the file can stand in for
  ``data/{type}_inferences_{kind}/{split}.jsonl``.
* ``data-dir``: a whole data directory whose inference files of one kind come from a provider, for
  ``figlang eval``/``figlang train --data-dir DIR`` (derived data: never commit it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.cli.common import DataDirOption, TaskSplitOption, console, err_console, parse_key_values
from figlang.knowledge.providers import KnowledgeProvider, get_provider, write_data_dir, write_inference_file

app = typer.Typer(
    help="Knowledge inferences for figurative narratives (TACL 2022): shipped, WordNet, an instruction model or COMET.",
    no_args_is_help=True,
)

ProviderOption = Annotated[str, typer.Option("--provider", "-p", help="precomputed | wordnet | generative | comet.")]
KindOption = Annotated[
    str | None,
    typer.Option(
        "--kind",
        "-k",
        help="context (ATOMIC relations of the narrator) or literal (ConceptNet relations of the expression). "
        "Default: literal for wordnet, context otherwise.",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="generative: a generation model (default smollm2-135m); comet: a COMET/ParaCOMET BART checkpoint (hub id or directory).",
    ),
]
OptionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--option", "-O", help="Provider or backend option KEY=VALUE (repeatable): samples, max_new_tokens, num_beams, device, threads …"
    ),
]
CacheOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Request-cache folder (default: figlang's cache). Outputs are cached per provider fingerprint."),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the cache.")]


def _open_provider(
    provider: str,
    kind: str | None,
    model: str | None,
    options: list[str] | None,
    cache_dir: Path | None,
    no_cache: bool,
    data_dir: Path | None,
) -> tuple[RunContext, KnowledgeProvider, str]:
    """The run's context, the provider the command names and the kind of inference it makes (both commands' start)."""
    ctx = RunContext.create(data_dir, cache_dir)  # the run's context: built here, once, and handed down
    cache = False if no_cache else cache_dir  # None: the providers' own default request cache, as before
    prov = get_provider(provider, model=model, cache=cache, ctx=ctx, **parse_key_values(options))
    chosen = kind or ("literal" if prov.kinds == ("literal",) else "context")
    return ctx, prov, prov.check_kind(chosen)


@app.command("infer")
def infer_cmd(
    task: Annotated[
        str,
        typer.Option(
            "--task", "-t", help="A narrative task: idiom-cloze, simile-cloze, idiom-generation, simile-generation or a spec file."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output JSONL (shipped inference-file format).")],
    provider: ProviderOption = "wordnet",
    split: TaskSplitOption = None,
    kind: KindOption = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Only the first N records.")] = None,
    model: ModelOption = None,
    option: OptionOption = None,
    cache_dir: CacheOption = None,
    no_cache: NoCacheOption = False,
    data_dir: DataDirOption = None,
) -> None:
    """Write the inferences of one split, in the shipped format (12 a record at most)."""
    t = get_task(task)
    if t.shape not in ("cloze", "generation"):
        raise FiglangError(f"task {t.name!r} is a {t.shape} task: knowledge inferences are made for narrative (cloze/generation) tasks")
    ctx, prov, which = _open_provider(provider, kind, model, option, cache_dir, no_cache, data_dir)
    records = t.load(split, ctx)
    if limit:
        records = records[:limit]
    started = time.perf_counter()
    prov.progress = lambda done, total: err_console.print(f"  {done}/{total} inputs computed", highlight=False)
    inferences = prov.infer(records, which)
    write_inference_file(records, inferences, out)
    counts = [len(x) for x in inferences]
    short = sum(1 for c in counts if c < 12)
    console.print(
        f"{len(records)} records, {which} inferences from [bold]{prov.name}[/bold] -> {out} "
        f"({sum(counts) / max(1, len(counts)):.1f} per record, {short} with fewer than 12; "
        f"{prov.computed} computed, {prov.cache_hits} from cache; {time.perf_counter() - started:.1f}s)"
    )


@app.command("data-dir")
def data_dir_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="The data directory to write (<out>/fig_narrative/data/…).")],
    provider: ProviderOption = "wordnet",
    kind: KindOption = None,
    expression_type: Annotated[list[str] | None, typer.Option("--type", help="idiom and/or simile (repeatable; default both).")] = None,
    split: Annotated[list[str] | None, typer.Option("--split", "-s", help="train/dev/test (repeatable; default all three).")] = None,
    model: ModelOption = None,
    option: OptionOption = None,
    cache_dir: CacheOption = None,
    no_cache: NoCacheOption = False,
    data_dir: DataDirOption = None,
) -> None:
    """Copy the narrative data with one kind of inference file made by a provider (then: figlang eval --data-dir OUT)."""
    ctx, prov, which = _open_provider(provider, kind, model, option, cache_dir, no_cache, data_dir)
    for name in split or []:
        if name not in ("train", "dev", "test"):
            raise FiglangError(f"--split {name!r}: data-dir writes the benchmark's files (train, dev, test)")
    files = write_data_dir(
        prov,
        which,
        out,
        types=expression_type or ("idiom", "simile"),
        splits=split or ("train", "dev", "test"),
        progress=lambda etype, s, n: console.print(f"  {etype}/{s}: {n} records"),
        ctx=ctx,
    )
    console.print(f"{len(files)} {which} inference files from [bold]{prov.name}[/bold] under {out}; use `--data-dir {out}`")
