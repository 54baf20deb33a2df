"""``-m ensemble``: a calibrated ensemble chosen on the selection split, run as one method on any split.

``figlang ensemble --select RUN_A --select RUN_B -o DIR`` chooses each member's temperature and the convex
weights on the members' ``selection`` runs and writes ``DIR/ensemble.json``, which names every member's
method, model, ``-O`` options and seed. ``figlang eval -t T -s SPLIT -m ensemble --model DIR/ensemble.json``
then runs the members on the split's items and answers with
``argmax_j sum_m w_m log softmax(scores_m / T_m)_j`` (an invalid member answer counts as uniform): the
same rule, and the same code, as the offline combination of finished runs
(:func:`figlang.evaluation.ensemble.apply_ensemble`), so both give the same answers on the same items.
The suite and the API take it like any method (``model`` = the file, or ``figlang:NAME`` for one that ships in
``figlang/resources/ensembles/``: ``simile-probe-fewshot-qwen``, ``idiom-probe-fewshot-qwen``,
``idiom-probe-meaning-fewshot-qwen`` and ``simile-probe-meaning-fewshot-qwen``, chosen on the ``selection`` runs in
``docs/results/ensemble/``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.options import options_from_signature
from figlang.data.records import Record
from figlang.methods.base import Method, MethodRegistry, Prediction, get_methods
from figlang.methods.prompted.common import argmax_first


SHIPPED_PREFIX = "figlang:"


def shipped_ensemble(name: str) -> Path:
    """``figlang:NAME``: an ensemble.json that ships in ``figlang/resources/ensembles/NAME.json``."""
    from importlib.resources import files

    name = name[len(SHIPPED_PREFIX) :]
    folder = Path(str(files("figlang").joinpath("resources/ensembles")))
    path = folder / f"{name}.json"
    if "/" in name or not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.json"))
        raise FiglangError(f"figlang ships no ensemble named {name!r}; shipped: {', '.join(known) or 'none'}")
    return path


def read_choice(path: str | Path) -> dict[str, Any]:
    """An ensemble.json written by `figlang ensemble`, checked for what the method needs."""
    path = Path(path).expanduser()
    if path.is_dir():
        path = path / "ensemble.json"
    try:
        chosen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise FiglangError(f"method 'ensemble' needs --model ensemble.json (written by `figlang ensemble`): {err}") from err
    members = chosen.get("members") or []
    weights = chosen.get("weights") or []
    if len(members) < 2 or len(weights) != len(members):
        raise FiglangError(f"{path}: an ensemble needs two or more members with one weight each")
    for m in members:
        if not m.get("method") or "temperature" not in m:
            raise FiglangError(
                f"{path}: member {m.get('name')!r} has no method or temperature; "
                "write the file again with this figlang's `figlang ensemble` (it records how to run each member)"
            )
    return chosen


def _create_member(spec: dict[str, Any]) -> Method:
    registry = get_methods()
    options = dict(spec.get("options") or {})
    seed = spec.get("seed")
    if seed is not None and "seed" not in options and "seed" in inspect.signature(registry.info(spec["method"]).factory).parameters:
        options["seed"] = seed  # the seed the selection run gave the member (a method that takes one)
    return registry.create(spec["method"], model=spec.get("model"), **options)


def score_vector(scores: Any, valid: bool, labels: Sequence[str] | None, where: str) -> list[float] | None:
    """One answer's scores as a vector in the label order (NLI: sorted labels; cloze: the options); None when the
    answer is invalid or unscored (it then counts as uniform). The offline ensemble and ``-m ensemble`` share it."""
    if not valid or scores is None:
        return None
    vector = [float(scores[label]) for label in labels or []] if isinstance(scores, dict) else [float(s) for s in scores]
    if not all(math.isfinite(v) for v in vector):
        raise FiglangError(f"{where} has a score that is not a finite number")
    return vector


def _log_softmax(vector: Sequence[float], temperature: float) -> list[float]:
    scaled = [v / temperature for v in vector]
    top = max(scaled)
    norm = top + math.log(sum(math.exp(v - top) for v in scaled))
    return [v - norm for v in scaled]


def mix_vectors(vectors: Sequence[list[float] | None], temps: Sequence[float], weights: Sequence[float], k: int) -> list[float]:
    """sum_m w_m log softmax(v_m / T_m): the ensemble's scores for one item (an invalid member answer is uniform)."""
    logps = [[-math.log(k)] * k if v is None else _log_softmax(v, t) for v, t in zip(vectors, temps)]
    return [sum(w * lp[j] for w, lp in zip(weights, logps)) for j in range(k)]


class EnsembleMethod(Method):
    """The members of an ensemble.json, mixed with their temperatures and weights."""

    name = "ensemble"
    shapes = ("cloze", "nli")

    def __init__(self, model: str | None = None, members: Sequence[Method] | None = None) -> None:
        if not model:
            raise FiglangError("method 'ensemble' needs --model ensemble.json (written by `figlang ensemble` from selection runs)")
        self.path = shipped_ensemble(model) if str(model).startswith(SHIPPED_PREFIX) else Path(model).expanduser()
        if self.path.is_dir():
            self.path = self.path / "ensemble.json"
        self.chosen = read_choice(self.path)
        self.specs = self.chosen["members"]
        self.temps = [float(m["temperature"]) for m in self.specs]
        self.weights = [float(w) for w in self.chosen["weights"]]
        self.members = list(members) if members is not None else [_create_member(m) for m in self.specs]
        self.needs_train = any(getattr(m, "needs_train", False) for m in self.members)
        chosen_on = self.chosen.get("chosen_on")
        # what the harness records as choices made, and on which split (as a trained model's figlang.json does)
        self.meta = {"provenance": {"selection_split": {"weights": chosen_on, "temperatures": chosen_on}}}

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        if getattr(task, "name", None) != self.chosen.get("task"):
            raise FiglangError(f"this ensemble was chosen on {self.chosen.get('task')!r}, not {getattr(task, 'name', task)!r}")
        for member in self.members:
            member.bind(task)

    def fit(self, train: Sequence[Record]) -> None:
        for member in self.members:
            if getattr(member, "needs_train", False):
                member.fit(train)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:

        answers = [member.predict(records) for member in self.members]
        labels = next((s.get("labels") for s in self.specs if s.get("labels")), None)
        out = []
        for i, record in enumerate(records):
            preds = [a[i] for a in answers]
            vectors = [
                score_vector(p.scores, p.valid, s.get("labels"), f"member {s['name']}: item {p.id}") for p, s in zip(preds, self.specs)
            ]
            sizes = {len(v) for v in vectors if v is not None}
            if len(sizes) > 1:
                raise FiglangError(f"item {record.id}: the members scored {sorted(sizes)} options")
            k = sizes.pop() if sizes else (len(labels) if labels else len(getattr(record, "options", ()) or (0, 0)))
            mixed = mix_vectors(vectors, self.temps, self.weights, k)
            answer = argmax_first(mixed)[0]
            out.append(
                Prediction(
                    id=record.id,
                    prediction=labels[answer] if labels else answer,
                    scores=dict(zip(labels, mixed)) if labels else mixed,
                    meta={"ensemble": {s["name"]: v for s, v in zip(self.specs, vectors)}},
                )
            )
        return out

    def config(self) -> dict[str, Any]:
        return {
            "model": str(self.path),
            "ensemble_sha256": hashlib.sha256(self.path.read_bytes()).hexdigest(),
            "chosen_on": self.chosen.get("chosen_on"),
            "weights": self.weights,
            "temperatures": self.temps,
            "members": [m.fingerprint() for m in self.members],
        }


ENSEMBLE_OPTIONS = options_from_signature(
    EnsembleMethod,
    {"members": "the member methods, already made (Python only; from the command line they come from the ensemble file)"},
    python_only=("members",),
)


def register(registry: MethodRegistry) -> None:
    """Add ``ensemble`` to ``registry`` (called by the registry on first use)."""
    registry.add(
        EnsembleMethod,
        "A calibrated ensemble chosen on selection runs: --model ensemble.json (written by `figlang ensemble`); runs its members and mixes their scores.",
        options=ENSEMBLE_OPTIONS,
    )


__all__ = ["EnsembleMethod", "read_choice", "register"]
