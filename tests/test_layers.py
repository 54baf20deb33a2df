"""The package's layers hold: no module imports a module of a higher layer (module-level or inside a function).

    data, metrics (+ plugins, resources)        records, loaders, metrics: no model code
      → models                                  backends, model loading, the Method interface and registry
        → methods                               zero-shot / baseline / trained methods; knowledge; builders
          → evaluation                          the harness, reports, the suite; training (scored by the harness)
            → api                               figlang.api and the package root (``import figlang``)
              → cli, web                        options in, tables out

A module may import its own layer and any lower one. The registries name their built-ins by module
path (``BUILTIN_METHOD_MODULES``) instead of importing them, as third-party plugins are named by entry
points: that is how a lower layer learns about a higher one without importing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "figlang"

# (module prefix, layer); the longest matching prefix wins
LAYERS: tuple[tuple[str, int], ...] = (
    ("figlang.data", 0), ("figlang.metrics", 0), ("figlang.plugins", 0), ("figlang.resources", 0),
    ("figlang.models", 1),
    ("figlang.models.methods", 2), ("figlang.models.baselines", 2), ("figlang.models.trained", 2),
    ("figlang.callable_module", 0), ("figlang.knowledge", 2), ("figlang.builders", 2), ("figlang.interop", 3), ("figlang.explain", 4), ("figlang.interpret", 4),
    ("figlang.evaluation", 3), ("figlang.models.training", 3),
    ("figlang.api", 4), ("figlang", 4),
    ("figlang.cli", 5), ("figlang.web", 5), ("figlang.serve", 5),
)  # fmt: skip
NAMES = {0: "data/metrics", 1: "models", 2: "methods", 3: "evaluation", 4: "api", 5: "cli/web"}

# Imports that go up a layer today, each with the reason it is tolerated. The test fails when one is
# added, and when one listed here is gone (so the list only shrinks). Empty: the layers hold.
ALLOWED: set[tuple[str, str]] = set()


def layer(module: str) -> int:
    best = max((p for p, _ in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return dict(LAYERS)[best]


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, src: Path = SRC) -> set[str]:
    """Every figlang module ``path`` imports, wherever the import statement is (functions included)."""
    name = module_name(path, src)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "figlang")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "figlang":
                continue
            out.add(target)
            if node.module is None:  # `from . import cloze`: the names are modules
                out.update(f"{target}.{a.name}" for a in node.names)
    return out


def violations(src: Path = SRC) -> set[tuple[str, str]]:
    found = set()
    for path in sorted((src / "figlang").rglob("*.py")):
        source = module_name(path, src)
        for target in imports(path, src):
            if layer(target) > layer(source):
                found.add((source, target))
    return found


def test_no_module_imports_a_higher_layer() -> None:
    found = violations()
    new = sorted(found - ALLOWED)
    assert not new, "imports that go up a layer:\n" + "\n".join(
        f"  {a} ({NAMES[layer(a)]}) imports {b} ({NAMES[layer(b)]})" for a, b in new
    )
    gone = sorted(ALLOWED - found)
    assert not gone, f"fixed: remove from ALLOWED: {gone}"


def test_the_checker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The test itself can fail: an import hidden in a function, written relative, is found and judged."""
    probe = tmp_path / "figlang" / "data" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("import figlang.cli.main\ndef f():\n    from ..evaluation import harness\n    from . import io\n", encoding="utf-8")
    found = violations(tmp_path)
    assert found == {("figlang.data.probe", "figlang.evaluation"), ("figlang.data.probe", "figlang.cli.main")}


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        assert layer(module_name(path)) in NAMES
