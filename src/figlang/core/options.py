"""Typed options: each method and backend declares its ``-O KEY=VALUE`` options as a dataclass.

A field is one option: its type, its default, its allowed values and one line of help, written once
(``option(6, "examples shown a pair", minimum=0)``). From the dataclass figlang

* checks what a user gave before any model loads (:func:`check_options`): an unknown key names the
  valid ones, a wrong type says what was expected;
* turns the given values into typed ones (:func:`parse_options`), with the parsers the methods use;
* prints the options (:func:`options_lines`) for ``figlang methods``, the CLI help and the docs.

The parsers (:func:`parse_bool`, :func:`parse_int` …) read a value from Python or from the command
line (``-O k=6`` arrives as 6, ``-O chat=yes`` as "yes") and refuse it with the option's name.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import MISSING, field
from typing import Any

from figlang.core.errors import FiglangError


def option(
    default: Any, help: str, *, choices: Sequence[str] | None = None, minimum: float | None = None, python_only: bool = False
) -> Any:
    """One option's dataclass field: its default, one line of help, its allowed values (``choices``) or least value.

    ``python_only`` marks an option that takes a Python object (a callable, a client) and is left out of listings."""
    meta = {"help": help, "choices": tuple(choices) if choices else None, "minimum": minimum, "python_only": python_only}
    if isinstance(default, (list, dict, set)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


# --- parsers (one per type; the methods use the same ones) ---------------------------------------------


def parse_bool(value: Any, name: str) -> bool:
    """A boolean option from Python or the command line (-O key=true|false|1|0|yes|no)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in {"true", "1", "yes", "on", "false", "0", "no", "off"}:
        return value.strip().lower() in {"true", "1", "yes", "on"}
    raise FiglangError(f"option {name!r} must be true or false, got {value!r}")


def parse_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    value = str(value).strip().lower()
    if value not in choices:
        raise FiglangError(f"option {name!r} must be one of {', '.join(choices)}; got {value!r}")
    return value


def parse_int(value: Any, name: str, minimum: int | None = None) -> int:
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise FiglangError(f"option {name!r} must be an integer, got {value!r}") from None
    if isinstance(value, float) and value != out:
        raise FiglangError(f"option {name!r} must be an integer, got {value!r}")
    if minimum is not None and out < minimum:
        raise FiglangError(f"option {name!r} must be at least {minimum}, got {out}")
    return out


def parse_float(value: Any, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise FiglangError(f"option {name!r} must be a number, got {value!r}") from None


# --- reading a dataclass of options ----------------------------------------------------------------------


def _hints(options_cls: type) -> dict[str, Any]:
    return typing.get_type_hints(options_cls)


def _base_type(tp: Any) -> tuple[Any, bool]:
    """(the type without ``None``, whether None is allowed)."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return (args[0] if len(args) == 1 else tp), len(args) < len(typing.get_args(tp))
    return tp, False


def type_name(tp: Any) -> str:
    """How an option's type is said to a person: integer, number, true/false, text, list, any."""
    base, optional = _base_type(tp)
    names = {int: "integer", float: "number", bool: "true/false", str: "text"}
    origin = typing.get_origin(base)
    name = names.get(base) or ("list" if origin in (list, tuple, Sequence) or base in (list, tuple) else "any")
    if origin is dict or base is dict:
        name = "mapping"
    return f"{name} or none" if optional else name


def parse_value(name: str, tp: Any, meta: Mapping[str, Any], value: Any) -> Any:
    """``value`` as the option's type (the methods' parsers), or FiglangError saying what was expected."""
    base, optional = _base_type(tp)
    if value is None or (optional and value == ""):
        if optional or base is Any:
            return None
        raise FiglangError(f"option {name!r} must be a {type_name(tp)}, got none")
    if meta.get("choices"):
        return parse_choice(value, name, meta["choices"])
    minimum = meta.get("minimum")
    if base is bool:
        return parse_bool(value, name)
    if base is int:
        if isinstance(value, bool):
            raise FiglangError(f"option {name!r} must be an integer, got {value!r}")
        return parse_int(value, name, None if minimum is None else int(minimum))
    if base is float:
        out = parse_float(value, name)
        if minimum is not None and out < minimum:
            raise FiglangError(f"option {name!r} must be at least {minimum}, got {out}")
        return out
    if base is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise FiglangError(f"option {name!r} must be text, got {value!r}")
        return str(value)
    return value  # lists, mappings, Any: the method reads them itself


def fields_of(options_cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(options_cls) if f.init]


def option_names(options_cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields_of(options_cls))


def default_of(options_cls: type, name: str) -> Any:
    """The option's default, as the dataclass writes it (the one place it is written)."""
    f = next(f for f in fields_of(options_cls) if f.name == name)
    return f.default_factory() if f.default is MISSING and f.default_factory is not MISSING else f.default


def option_help(options_cls: type, name: str) -> str:
    """The option's line of help, as its dataclass writes it."""
    return str(next(f for f in fields_of(options_cls) if f.name == name).metadata.get("help", ""))


def check_options(
    owner: str, options_cls: type, given: Mapping[str, Any], *, others: Iterable[str] = (), others_are: str = "the backend's"
) -> None:
    """Refuse an option ``options_cls`` does not declare (naming the valid ones; ``others`` are accepted too, checked
    elsewhere: a backend's) and a value of the wrong type (saying what was expected). Loads nothing."""
    known = set(option_names(options_cls))
    others = sorted(set(others) - known)
    unknown = sorted(k for k in given if k not in known and k not in others)
    if unknown:
        valid = ", ".join(sorted(known)) or "none"
        theirs = f"; {others_are}: {', '.join(others)}" if others else ""
        raise FiglangError(f"{owner} has no option {', '.join(map(repr, unknown))}; its options: {valid}{theirs}")
    hints = _hints(options_cls)
    for f in fields_of(options_cls):
        if f.name in given:
            parse_value(f.name, hints[f.name], f.metadata, given[f.name])


def parse_options(options_cls: type, given: Mapping[str, Any], owner: str = "") -> Any:
    """An instance of ``options_cls`` from the given values, each parsed to its field's type; unknown keys refused."""
    check_options(owner or options_cls.__name__, options_cls, given)
    hints = _hints(options_cls)
    values = {f.name: parse_value(f.name, hints[f.name], f.metadata, given[f.name]) for f in fields_of(options_cls) if f.name in given}
    return options_cls(**values)


def _shown_options(options_cls: type, choice_sep: str) -> Iterator[tuple[str, Any, str, Any]]:
    """Per option a user can set (not ``python_only``): its name, its default as shown (none, true/false, else the
    value), its type or its choices joined by ``choice_sep``, and its help."""
    hints = _hints(options_cls)
    for f in fields_of(options_cls):
        if f.metadata.get("python_only"):
            continue
        choices = f.metadata.get("choices")
        kind = choice_sep.join(choices) if choices else type_name(hints[f.name])
        default = default_of(options_cls, f.name)
        shown = "none" if default is None else str(default).lower() if isinstance(default, bool) else default
        yield f.name, shown, kind, f.metadata.get("help", "")


def options_lines(options_cls: type, *, indent: str = "") -> list[str]:
    """One line per option: ``name=default (type; a|b|c): help`` (what ``figlang methods --options`` prints)."""
    return [f"{indent}{name}={shown} ({kind}): {about}" for name, shown, kind, about in _shown_options(options_cls, "|")]


def options_markdown(options_cls: type) -> list[str]:
    """The options as a Markdown table (option, default, type or allowed values, help): the docs' copy of the dataclass."""
    rows = ["<!-- not-results-table: options and their defaults -->", "| option | default | type | what it does |", "|---|---|---|---|"]
    for name, shown, kind, about in _shown_options(options_cls, " \\| "):
        text = str(about).replace("|", "\\|")
        rows.append(f"| `{name}` | `{shown!s}` | {kind} | {text} |")
    return rows


def options_from_signature(
    factory: Any,
    help: Mapping[str, str],
    choices: Mapping[str, Sequence[str]] | None = None,
    *,
    include: Sequence[type] = (),
    python_only: Sequence[str] = (),
) -> type:
    """The options dataclass of a method whose constructor's keyword parameters are its options: each parameter's
    type and default from the signature (written once, there), its help from ``help``. ``model`` and ``**`` are not options.
    ``include``: options dataclasses whose fields the factory also takes through its ``**options`` (a subclass's
    parent's); ``python_only``: parameters that take Python objects, left out of listings.

    Every parameter must have its line of help (a method that adds an option says what it does)."""
    import inspect

    params = [
        p
        for p in inspect.signature(factory).parameters.values()
        if p.name not in ("self", "model") and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    hints = typing.get_type_hints(factory.__init__ if inspect.isclass(factory) else factory)
    missing = [p.name for p in params if p.name not in help]
    extra = sorted(set(help) - {p.name for p in params})
    if missing or extra:
        raise FiglangError(f"{getattr(factory, '__name__', factory)}: options without help {missing}, help without an option {extra}")
    spec: list[tuple[str, Any, Any]] = [
        (
            p.name,
            hints.get(p.name, Any),
            option(p.default, help[p.name], choices=(choices or {}).get(p.name), python_only=p.name in python_only),
        )
        for p in params
        if p.default is not p.empty
    ]
    names = {n for n, _, _ in spec}
    for other in include:
        other_hints = _hints(other)
        spec += [
            (f.name, other_hints[f.name], field(default=f.default, metadata=f.metadata)) for f in fields_of(other) if f.name not in names
        ]
    return dataclasses.make_dataclass(f"{getattr(factory, '__name__', 'Method')}Options", spec, frozen=True)
