"""The package's layers are its folders: no module imports a module of a higher folder (module-level or inside a function).

    core                  errors, atomic I/O, paths, text keys, provenance, devices, plugins
    data                  typed records, the benchmarks' loaders, user tasks, splits, the task registry
    metrics               accuracy, ROUGE/BLEU/BERTScore/BLEURT, FLUTE's metrics, significance, human evaluation
    backends              model backends (Transformers, llama.cpp, OpenAI-compatible), GGUF, the catalog, caches
    lexicon               the idiom lexicon, its matcher, simile patterns, inflection, WordNet
    knowledge             knowledge providers: inferences and meanings for the knowledge-enhanced methods
    methods               the Method interface and registry, baselines, prompted LM methods, trained models
    evaluation            the harness, prediction files, scoring, provenance, compare, report, the suite
    training              figlang's trainer and presets (scored by the harness)
    builders              the narrative miner, the FLUTE creator, the IMPLI pair generator, review queues
    interop               lm-evaluation-harness and Hugging Face exports
    api                   figlang.api, figlang.explain, figlang.interpret: the public faces (``import figlang``)
    cli/web               options in, tables and pages out: no logic of their own

A module imports its own folder and any lower one. The registries name their built-ins by module
path (``BUILTIN_METHOD_MODULES``) instead of importing them, as third-party plugins are named by entry
points: that is how a lower layer learns about a higher one without importing it.

Within and across layers the module graph has no cycles: an edge is every import statement, at module
level or inside a function, to the module it names (``from pkg import mod`` names ``pkg.mod``), plus the
packages whose ``__init__`` that import runs. And a figlang module is imported inside a function only
to keep start-up light: when what it loads at module level brings in a heavy third-party library
(torch, transformers, numpy, yaml …) that the importing module does not already load.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "figlang"

# The layers, lowest first: each names the top-level folders (or modules) of src/figlang that form it.
# "" is the package's own __init__ (``import figlang``). resources/ and web/templates hold no code.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("core",)),
    ("data", ("data",)),
    ("metrics", ("metrics",)),
    ("backends", ("backends",)),
    ("lexicon", ("lexicon",)),
    ("knowledge", ("knowledge",)),
    ("methods", ("methods",)),
    ("evaluation", ("evaluation",)),
    ("training", ("training",)),
    ("builders", ("builders",)),
    ("interop", ("interop",)),
    ("api", ("", "api", "explain", "interpret")),
    ("cli/web", ("cli", "web")),
)
NAMES = {rank: name for rank, (name, _) in enumerate(LAYERS)}
FOLDER_RANK = {folder: rank for rank, (_, folders) in enumerate(LAYERS) for folder in folders}
NO_CODE = {"resources", "__pycache__"}

# Imports that go up a layer today, each with the reason it is tolerated. The test fails when one is
# added, and when one listed here is gone (so the list only shrinks). Empty: the layers hold.
ALLOWED: set[tuple[str, str]] = set()


def top_folder(module: str) -> str:
    """The top-level folder or module of src/figlang that ``module`` lives in ("" for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(module: str) -> int:
    return FOLDER_RANK[top_folder(module)]


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, src: Path = SRC) -> set[str]:
    """Every figlang module ``path`` imports, wherever the import statement is (functions included)."""
    out: set[str] = set()
    for st in statements(path, src):
        if st.third_party is None:
            out.add(st.target)
            if st.bare:  # `from . import cloze`: the names are modules
                out.add(f"{st.target}.{st.member}")
    return out


def violations(src: Path = SRC) -> set[tuple[str, str]]:
    found = set()
    for path in sorted((src / "figlang").rglob("*.py")):
        source = module_name(path, src)
        for target in imports(path, src):
            if layer(target) > layer(source):
                found.add((source, target))
    return found


def folder_edges(src: Path = SRC) -> set[tuple[str, str]]:
    """(folder, folder) for every import from a module of one top-level folder to a module of another."""
    edges = set()
    for path in sorted((src / "figlang").rglob("*.py")):
        source = top_folder(module_name(path, src))
        for target in imports(path, src):
            if top_folder(target) != source:
                edges.add((source, top_folder(target)))
    return edges


def test_no_module_imports_a_higher_layer() -> None:
    found = violations()
    new = sorted(found - ALLOWED)
    assert not new, "imports that go up a layer:\n" + "\n".join(
        f"  {a} ({NAMES[layer(a)]}) imports {b} ({NAMES[layer(b)]})" for a, b in new
    )
    gone = sorted(ALLOWED - found)
    assert not gone, f"fixed: remove from ALLOWED: {gone}"


def test_the_folder_drawing_has_no_upward_arrow_and_no_loop() -> None:
    """Drawn by folder, every import arrow points down the table (so no two folders import each other)."""
    edges = folder_edges()  # parsed once: the whole package, every statement
    up = sorted((a, b) for a, b in edges if FOLDER_RANK[b] > FOLDER_RANK[a])
    assert not up, f"folders importing a higher folder: {up}"
    loops = sorted((a, b) for a, b in edges if (b, a) in edges and a < b and FOLDER_RANK[a] != FOLDER_RANK[b])
    assert not loops, f"folders importing each other: {loops}"


def test_the_checker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The test itself can fail: an import hidden in a function, written relative, is found and judged."""
    probe = tmp_path / "figlang" / "data" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(
        "import figlang.cli.main\ndef f():\n    from ..evaluation import harness\n    from . import records\n", encoding="utf-8"
    )
    found = violations(tmp_path)
    assert found == {("figlang.data.probe", "figlang.evaluation"), ("figlang.data.probe", "figlang.cli.main")}
    assert ("data", "evaluation") in folder_edges(tmp_path)


def test_every_folder_of_the_package_is_a_layer_and_every_layer_a_folder() -> None:
    """A new top-level folder or module must be given a place in LAYERS (or layer() raises), and a layer named
    here that the tree no longer has fails too: the table is the tree."""
    code = [p for p in PACKAGE.iterdir() if p.suffix == ".py" or (p.is_dir() and any(p.rglob("*.py")))]  # not a stale __pycache__
    tree = {p.stem if p.is_file() else p.name for p in code if p.name not in NO_CODE}
    tree = {"" if t == "__init__" else t for t in tree}
    assert tree == set(FOLDER_RANK), (
        f"in the tree, not in LAYERS: {sorted(tree - set(FOLDER_RANK))}; in LAYERS, not in the tree: {sorted(set(FOLDER_RANK) - tree)}"
    )
    for path in PACKAGE.rglob("*.py"):
        assert layer(module_name(path)) in NAMES


# --- the module graph: no cycles ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """One import statement's view of one name it may import (a module, or a name inside one)."""

    target: str  # the module or package named (absolute)
    member: str | None  # ``from target import member``: a submodule when ``target.member`` is a module
    line: int
    in_function: bool
    type_checking: bool  # under ``if TYPE_CHECKING:``: never runs
    third_party: str | None = None  # a third-party import's top-level package (target is "" then)
    bare: bool = False  # ``from . import member`` (no module named: the member is a module)


def statements(path: Path, src: Path = SRC) -> list[Statement]:
    """Every import statement of ``path``, figlang's and third-party ones, with where it sits."""
    name = module_name(path, src)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[Statement] = []

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            fn = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            tc = type_checking or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            if isinstance(child, ast.Import):
                for a in child.names:
                    figlang = a.name.split(".")[0] == "figlang"
                    out.append(Statement(a.name if figlang else "", None, child.lineno, fn, tc, None if figlang else a.name.split(".")[0]))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] != "figlang":
                    out.append(Statement("", None, child.lineno, fn, tc, target.split(".")[0]))
                else:
                    out.extend(Statement(target, a.name, child.lineno, fn, tc, bare=child.module is None) for a in child.names)
            elif isinstance(child, ast.Call) and _imported_by_call(child):  # __import__("figlang.x"), import_module(".x", …)
                target = _imported_by_call(child)
                if target.startswith("."):
                    level = len(target) - len(target.lstrip("."))
                    target = ".".join(package.split(".")[: len(package.split(".")) - level + 1] + [target.lstrip(".")])
                if target.split(".")[0] == "figlang":
                    out.append(Statement(target, None, child.lineno, fn, tc))
            visit(child, fn, tc)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False, False)
    return out


def _imported_by_call(call: ast.Call) -> str:
    """The module an ``__import__("…")`` or ``importlib.import_module("…")`` call names by a literal, or ""."""
    func = call.func
    named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if (
        named in ("__import__", "import_module")
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        return call.args[0].value
    return ""


def modules(src: Path = SRC) -> dict[str, Path]:
    return {module_name(p, src): p for p in sorted((src / "figlang").rglob("*.py"))}


def resolve(statement: Statement, known: dict[str, Path]) -> str:
    """The module a figlang import statement loads: ``pkg.member`` when that is a module, else the longest module prefix."""
    if statement.member and f"{statement.target}.{statement.member}" in known:
        return f"{statement.target}.{statement.member}"
    target = statement.target
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target


def ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def graph(src: Path = SRC) -> dict[str, dict[str, tuple[int, bool]]]:
    """module -> {module it imports: (first line, whether only through a package ``__init__``)}."""
    known = modules(src)
    edges: dict[str, dict[str, tuple[int, bool]]] = {m: {} for m in known}
    for source, path in known.items():
        own = set(ancestors(source))
        for st in statements(path, src):
            if st.third_party is not None or st.type_checking:
                continue
            target = resolve(st, known)
            if target and target != source:
                edges[source].setdefault(target, (st.line, False))
            for package in ancestors(target):  # importing a.b.c runs a/__init__ and a/b/__init__ first
                if package in known and package != source and package not in own:
                    edges[source].setdefault(package, (st.line, True))
    return edges


def find_cycle(edges: dict[str, dict[str, tuple[int, bool]]]) -> list[str]:
    """One cycle of ``edges`` as [a, b, …, a], or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def dfs(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, {})):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = dfs(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(edges):
        if start not in state:
            found = dfs(start)
            if found:
                return found
    return []


def describe_cycle(cycle: list[str], edges: dict[str, dict[str, tuple[int, bool]]], src: Path = SRC) -> str:
    steps = []
    for a, b in zip(cycle, cycle[1:]):
        line, implicit = edges[a][b]
        where = modules(src)[a].relative_to(src.parent) if src == SRC else a
        steps.append(f"  {a} -> {b}   ({where}:{line}{', runs the package __init__' if implicit else ''})")
    return "\n".join(steps)


def test_the_module_graph_has_no_cycles() -> None:
    edges = graph()
    cycle = find_cycle(edges)
    assert not cycle, "an import cycle (move what both sides need into a module below them):\n" + describe_cycle(cycle, edges)


def test_the_cycle_finder_sees_cycles_through_functions_and_package_inits(tmp_path: Path) -> None:
    pkg = tmp_path / "figlang" / "data"
    pkg.mkdir(parents=True)
    (tmp_path / "figlang" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("from .a import A\n", encoding="utf-8")
    (pkg / "a.py").write_text("A = 1\ndef f():\n    from figlang.data import b\n", encoding="utf-8")
    (pkg / "b.py").write_text("from . import c\n", encoding="utf-8")
    (pkg / "c.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from .a import A\n", encoding="utf-8")
    assert find_cycle(graph(tmp_path)) == []  # a TYPE_CHECKING import never runs
    (pkg / "c.py").write_text("from figlang.data.errors import X\n", encoding="utf-8")  # runs figlang/data/__init__ -> a -> b -> c
    assert find_cycle(graph(tmp_path)) == ["figlang.data", "figlang.data.a", "figlang.data.b", "figlang.data.c", "figlang.data"]


# --- figlang modules imported inside functions: only for start-up speed ----------------------------------------

# Third-party libraries that take long to import: a figlang module that loads one at module level may be
# imported inside a function, so that commands and modules that do not need it start quickly.
HEAVY = frozenset(
    {
        "torch",
        "transformers",
        "datasets",
        "scipy",
        "sklearn",
        "spacy",
        "nltk",
        "llama_cpp",
        "bert_score",
        "lm_eval",
        "pandas",
        "matplotlib",
        "flask",
        "fastapi",
        "uvicorn",
        "httpx",
        "openai",
        "accelerate",
        "numpy",
        "pyarrow",
        "sentence_transformers",
        "evaluate",
        "rouge_score",
        "sacrebleu",
        "gguf",
        "safetensors",
        "yaml",
        "huggingface_hub",
        "openpyxl",
        "jinja2",
        "tqdm",
        "rich",
        "typer",
    }
)


def module_level_closures(src: Path = SRC) -> dict[str, tuple[set[str], set[str]]]:
    """module -> (the figlang modules, the third-party top-level packages) importing it loads at module level."""
    known = modules(src)
    direct: dict[str, tuple[set[str], set[str]]] = {}
    for name, path in known.items():
        inner, outer = set(ancestors(name)), set()
        for st in statements(path, src):
            if st.in_function or st.type_checking:
                continue
            if st.third_party is not None:
                outer.add(st.third_party)
            else:
                target = resolve(st, known)
                inner.update([target, *ancestors(target)])
        direct[name] = (inner, outer)
    out: dict[str, tuple[set[str], set[str]]] = {}
    for name in known:
        seen, stack, libs = set(), [name], set()
        while stack:
            m = stack.pop()
            if m in seen or m not in direct:
                continue
            seen.add(m)
            stack.extend(direct[m][0])
            libs |= direct[m][1]
        out[name] = (seen, libs)
    return out


START_UP = "figlang.cli.main"  # what every `figlang` command imports before it runs


def needless_function_imports(src: Path = SRC) -> list[tuple[str, str, int]]:
    """(module, figlang module, line) of imports inside functions that defer nothing worth deferring.

    Deferring is worth it when importing the target at module level would load a heavy library the module
    does not load already, or would add modules to what every ``figlang`` command imports at start-up (the
    command modules import the work of their command when it runs)."""
    known = modules(src)
    closures = module_level_closures(src)
    start_up = closures[START_UP][0] if START_UP in closures else set()
    found = []
    for name, path in known.items():
        mods, libs = closures[name]
        for st in statements(path, src):
            if not st.in_function or st.type_checking or st.third_party is not None:
                continue
            target = resolve(st, known)
            heavy = (closures[target][1] - libs) & HEAVY
            slower_start = name in start_up and not closures[target][0] <= start_up
            if target != name and not heavy and not slower_start:
                found.append((name, target, st.line))
    return sorted(set(found))


def test_figlang_modules_are_imported_inside_functions_only_to_defer_a_heavy_library() -> None:
    found = needless_function_imports()
    assert not found, (
        "figlang modules imported inside a function although importing them at module level costs nothing heavy; "
        "import them at the top (an import cycle is fixed by moving code, not by hiding the import):\n"
        + "\n".join(f"  {a}:{line} imports {b}" for a, b, line in found)
    )


def test_the_deferral_check_can_fail(tmp_path: Path) -> None:
    pkg = tmp_path / "figlang"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "light.py").write_text("import json\n", encoding="utf-8")
    (pkg / "heavy.py").write_text("import torch\n", encoding="utf-8")
    (pkg / "user.py").write_text("def f():\n    from . import light, heavy\n", encoding="utf-8")
    assert needless_function_imports(tmp_path) == [("figlang.user", "figlang.light", 2)]
    (pkg / "cli").mkdir()
    (pkg / "cli" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "cli" / "main.py").write_text("from .. import user\ndef run():\n    from .. import light\n", encoding="utf-8")
    assert ("figlang.cli.main", "figlang.light", 3) not in needless_function_imports(tmp_path)  # it keeps start-up light


# --- the documentation's picture of the layers (docs/explanation/architecture.md) ---------------------------------------------------------------------


def test_the_architecture_page_draws_the_layers_this_test_checks() -> None:
    page = (SRC.parent / "docs/explanation/architecture.md").read_text(encoding="utf-8")
    block = page.split("## Layers", 1)[1].split("```", 2)[1]
    drawn = [re.split(r"\s{2,}", line.strip().lstrip("→").strip())[0] for line in block.strip().splitlines()]
    drawn = [re.sub(r"\s*\(.*\)", "", d).replace(", ", "/").replace(" / ", "/") for d in drawn]
    assert drawn == [NAMES[i] for i in sorted(NAMES)]
