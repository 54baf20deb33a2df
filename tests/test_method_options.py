"""Typed options (issue 34): every method and backend declares its ``-O`` options as a dataclass, and the registry
checks what a user gives against it before any model loads. Real methods, the real CLI; no model is loaded here:
the refusals name a model that does not exist, so an error about the model would mean the check came too late."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.cli.eval_cmds import methods_markdown
from figlang.cli.main import app
from figlang.core.errors import FiglangError
from figlang.backends.options import BACKENDS, TransformersOptions
from figlang.methods.base import get_methods
from figlang.methods.prompted.explain_options import DEFAULT_K, ExplainOptions
from figlang.methods.prompted.explain import Explain
from figlang.core.options import default_of, fields_of, options_lines, type_name

NO_MODEL = "no-such-model-anywhere"


def _refusal(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, FiglangError), result.exception
    message = str(result.exception)
    assert NO_MODEL not in message  # refused on the option, before the model was looked for
    return message


def test_an_unknown_key_is_refused_naming_the_valid_ones() -> None:
    message = _refusal(["eval", "-t", "flute", "-m", "explain", "--model", NO_MODEL, "-O", "kk=3", "-q"])
    assert "method 'explain' has no option 'kk'" in message
    assert "its options: chat, encoder, k, k_by_type" in message and "the transformers backend's: " in message
    with pytest.raises(FiglangError, match="method 'lm-score' has no option 'n_ctx'.*backend's: .*batch_size"):
        get_methods().create("lm-score", model=NO_MODEL, n_ctx=512)  # n_ctx is llama.cpp's, not Transformers'
    get_methods().info("lm-score").check_options(NO_MODEL, {"backend": "llama.cpp", "n_ctx": 512})  # llama.cpp's: fine
    with pytest.raises(FiglangError, match="method 'majority' has no option 'k'; its options: none"):
        get_methods().create("majority", k=3)


def test_a_wrong_type_says_what_was_expected() -> None:
    message = _refusal(["eval", "-t", "flute", "-m", "explain", "--model", NO_MODEL, "-O", "k=many", "-q"])
    assert message == "option 'k' must be an integer, got 'many'"
    message = _refusal(["eval", "-t", "idiom-cloze", "-m", "few-shot", "--model", NO_MODEL, "-O", "permute=maybe", "-q"])
    assert message == "option 'permute' must be true or false, got 'maybe'"
    message = _refusal(["eval", "-t", "idiom-cloze", "-m", "lm-score", "--model", NO_MODEL, "-O", "batch_size=big", "-q"])
    assert message == "option 'batch_size' must be an integer, got 'big'"  # a backend option, checked against its dataclass
    with pytest.raises(FiglangError, match="option 'n_ctx' must be an integer, got 'wide'"):
        get_methods().create("lm-score", model=NO_MODEL, backend="llama.cpp", n_ctx="wide")
    with pytest.raises(FiglangError, match="option 'mode' must be one of pipeline, joint; got 'both'"):
        get_methods().create("explain", model=NO_MODEL, mode="both")


def test_a_key_given_as_a_flag_and_as_an_option_is_refused() -> None:
    args = ["explain", "-p", "He was angry.", "-H", "He was as calm as a cucumber.", "--model", NO_MODEL, "--k", "3", "-O", "k=9"]
    message = _refusal(args)
    assert message == "option 'k' given twice (--k 3 and -O k=9): give it once"
    message = _refusal(["explain", "-p", "a", "-H", "b", "--model", NO_MODEL, "--threads", "2", "-O", "threads=1"])
    assert "option 'threads' given twice (--threads 2 and -O threads=1)" in message


def test_explain_options_are_one_typed_dataclass_with_defaults_written_once() -> None:
    method = Explain(NO_MODEL, k="3", match_label="false", label_question="meaning", threads=1)
    assert isinstance(method.options, ExplainOptions) and method.options.k == 3 and method.options.match_label is False
    assert method.label_options["question"] == "meaning" and method.backend_options == {"threads": 1}
    assert default_of(ExplainOptions, "k") == DEFAULT_K == Explain(NO_MODEL).k
    result = CliRunner().invoke(app, ["explain", "--help"], env={"COLUMNS": "300"})
    assert f"Default: {DEFAULT_K}." in result.output  # the CLI's default is the dataclass's


def test_every_method_and_backend_declares_typed_options_with_help() -> None:
    for info in get_methods():
        assert info.options is not None and dataclasses.is_dataclass(info.options), info.name
        for f in fields_of(info.options):
            assert f.metadata.get("help"), (info.name, f.name)
    for cls in (*BACKENDS.values(),):
        assert all(f.metadata.get("help") for f in fields_of(cls)), cls
    assert type_name(int) == "integer" and type_name(int | None) == "integer or none"
    assert default_of(TransformersOptions, "batch_size") == 16
    lines = options_lines(ExplainOptions)
    assert f"k={DEFAULT_K} (integer): retrieved train examples shown a pair (chosen on FLUTE selection)" in lines
    assert "mode=pipeline (pipeline|joint): pipeline (a label method decides, then the explanation) or joint (I→OR)" in lines
    result = CliRunner().invoke(app, ["methods", "explain"], env={"COLUMNS": "300"})
    assert result.exit_code == 0 and f"  k={DEFAULT_K} (integer): " in result.output and "backend llama.cpp options:" in result.output


def test_the_docs_print_the_options_from_the_dataclasses() -> None:
    docs = Path(__file__).resolve().parents[1] / "docs" / "method_options.md"
    assert docs.read_text(encoding="utf-8") == methods_markdown(), "docs/method_options.md is stale: run `figlang methods --markdown`"
    assert f"| `k` | `{DEFAULT_K}` | integer | retrieved train examples shown a pair (chosen on FLUTE selection) |" in methods_markdown()


def test_a_plugin_method_declares_options_with_a_class_attribute() -> None:
    from collections.abc import Sequence
    from dataclasses import dataclass
    from typing import Any

    from figlang.methods.base import Method, MethodRegistry, Prediction
    from figlang.core.options import option

    @dataclass(frozen=True)
    class PickOptions:
        index: int = option(0, "the option to pick", minimum=0)

    class Pick(Method):
        """Always the same option (a plugin's method)."""

        name, shapes, Options = "pick", ("cloze",), PickOptions

        def __init__(self, index: int = 0) -> None:
            self.index = index

        def predict(self, records: Sequence[Any]) -> list[Prediction]:
            return [Prediction(r.id, self.index) for r in records]

        def config(self) -> dict[str, Any]:
            return {"index": self.index}

    registry = MethodRegistry()
    registry.register("pick", ("cloze",), "Always one option.", needs_model=False)(Pick)
    assert registry.create("pick", index="1").index == "1"  # checked, then given to the constructor as given
    with pytest.raises(FiglangError, match="method 'pick' has no option 'idx'; its options: index"):
        registry.create("pick", idx=1)
    with pytest.raises(FiglangError, match="option 'index' must be at least 0, got -1"):
        registry.create("pick", index=-1)


def test_the_run_seed_reaches_every_method_whose_options_have_one() -> None:
    """`figlang eval --seed N` goes to the methods that declare a seed option (explain's constructor takes **options now)."""
    from figlang.evaluation.harness import _create_method

    method, given = _create_method("explain", NO_MODEL, {}, 5)
    assert (given, method.seed) == (5, 5)
    assert _create_method("lm-score", NO_MODEL, {}, 5)[1] is None  # no seed option: none given
    assert _create_method("few-shot", NO_MODEL, {"seed": 2}, 5)[1] == 2  # -O seed=N wins
    # few-shot-meaning takes its seed through **options and declares no Options attribute: --seed has never reached it
    assert _create_method("few-shot-meaning", NO_MODEL, {}, 5)[1] is None
