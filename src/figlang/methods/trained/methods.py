"""The ``trained`` method: answer with a model that `figlang train` made.

``figlang eval -t idiom-cloze -s dev-disjoint --method trained --model runs/idiom-mc`` reads
``runs/idiom-mc/figlang.json`` (``--model figlang:NAME``: a head that ships inside figlang,
:mod:`.heads`) and answers in the model's shape (cloze: option index with
per-option scores; nli: label with per-label scores, mapped into the task's label set, so a
FLUTE model answers IMPLI with non-entailment for contradiction).

Options (``-O key=value``): ``batch_size``; ``threads``; ``bf16`` (default: as trained);
``rationales`` (IR→O models: ``gold`` or a JSONL prediction file whose rows have ``id`` and
an explanation) and ``rationale_field`` (the column to read, default ``explanation``);
``threshold`` (two-label NLI classifiers: ``none`` answers by the argmax, a number replaces the decision
threshold saved in figlang.json; default: as saved, chosen on the selection split by ``figlang train --threshold``);
``inferences`` (knowledge-enhanced models: comma-separated inference slots to use, 1-based,
for per-inference analyses). Generating models (``iro``, ``generator``, ``generator-context``,
``generator-literal``) also take the decoding options ``seed`` (per-item seeds are
sha256(seed:id), as in the ``generate`` method), ``samples``, ``top_k``, ``temperature``,
``max_new_tokens`` and ``do_sample`` (default: greedy for ``iro``; top-k 5, temperature 0.7, 20
tokens for the generators, as trained and recorded in figlang.json).

The method registry adds it on first use (:func:`register`; importing this module registers
nothing); it imports no torch until a model is loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.io import file_sha256
from figlang.data.records import Record
from figlang.methods.base import Method, MethodRegistry, Prediction
from figlang.methods.prompted.common import parse_bool
from figlang.core.options import options_from_signature
from figlang.methods.trained import load_trained
from figlang.methods.trained.common import FIGLANG_JSON, TRAINED_METHODS, read_figlang_json
from figlang.methods.trained.heads import resolve_trained_model


class TrainedMethod(Method):
    name = "trained"
    shapes = ("cloze", "nli", "generation")

    def __init__(
        self,
        model: str | None = None,
        loaded: Any = None,
        batch_size: int = 16,
        threads: int | None = None,
        bf16: bool | None = None,
        rationales: str | None = None,
        rationale_field: str = "explanation",
        inferences: str | Sequence[int] | None = None,
        seed: int | None = None,
        samples: int | None = None,
        top_k: int | None = None,
        temperature: float | None = None,
        max_new_tokens: int | None = None,
        min_new_tokens: int | None = None,
        do_sample: bool | None = None,
        device: str | None = None,
        threshold: float | str | None = None,
        pool: str | None = None,
    ) -> None:
        if not model:
            raise FiglangError("method 'trained' needs --model DIR: a directory made by `figlang train`, or figlang:NAME (a shipped head)")

        self.model_dir, self.shipped = resolve_trained_model(model)
        self.meta = read_figlang_json(self.model_dir)
        self.batch_size = int(batch_size)
        self.threads = int(threads) if threads not in (None, "") else None
        self.device = device or None
        self.bf16 = None if bf16 is None else parse_bool(bf16, "bf16")
        self.rationales = rationales
        self.rationale_field = rationale_field
        if isinstance(inferences, str):
            inferences = [int(x) for x in inferences.replace(" ", "").split(",") if x]
        self.inference_subset = [int(j) - 1 for j in inferences] if inferences else None
        self.decoding: dict[str, Any] = {}
        for key, value, kind in (
            ("seed", seed, int),
            ("samples", samples, int),
            ("top_k", top_k, int),
            ("temperature", temperature, float),
            ("max_new_tokens", max_new_tokens, int),
            ("min_new_tokens", min_new_tokens, int),
        ):
            if value not in (None, ""):
                self.decoding[key] = kind(value)
        if do_sample not in (None, ""):
            self.decoding["do_sample"] = parse_bool(do_sample, "do_sample")
        if TRAINED_METHODS[self.meta["method"]][1] != "generator":
            self.decoding.pop("seed", None)  # a deterministic scorer has nothing to seed
            if self.decoding:
                raise FiglangError(
                    f"decoding options ({', '.join(self.decoding)}) apply to generating models, not to a {self.meta['method']} model"
                )
        self._task: Any = None  # bound by bind(): the task a model with examples loads its pool split from
        self._ctx: RunContext | None = None
        self.pool_split = pool or None  # where a model with examples retrieves them (default: train-fit, else train)
        if self.pool_split and not self.examples:
            raise FiglangError(f"pool={pool!r} names where retrieved examples come from; {self.model_dir} was trained without examples")
        self.threshold = _threshold_option(threshold)
        if self.threshold is not None and TRAINED_METHODS[self.meta["method"]][1] != "sequence-classifier":
            raise FiglangError(f"threshold applies to two-label NLI classifiers (nli, nli-rationale), not to a {self.meta['method']} model")
        self._model = loaded
        if loaded is not None:
            self._apply_threshold(loaded)
        self._target_labels: tuple[str, ...] = ()
        shape = TRAINED_METHODS[self.meta["method"]][0]
        self.shapes = (shape,)  # type: ignore[misc,assignment]  # instance-level: this model answers one shape

    # --- the model --------------------------------------------------------------------------------------

    def load(self) -> None:
        self.model  # noqa: B018  (the property loads the trained model once)

    @property
    def model(self) -> Any:
        if self._model is None:
            if self.threads:
                import torch

                torch.set_num_threads(self.threads)
            options: dict[str, Any] = {"bf16": self.bf16}
            if TRAINED_METHODS[self.meta["method"]][1] == "sequence-classifier" and self.meta["method"] == "nli-rationale":
                options.update(rationales=self.rationales or "gold", rationale_field=self.rationale_field)
            self._model = load_trained(self.model_dir, device=self.device, **options)
            self._apply_threshold(self._model)
        elif self.rationales is not None and getattr(self._model, "uses_rationale", False):
            self._model.set_rationales(self.rationales, self.rationale_field)
            self.rationales = None  # applied
        return self._model

    def _apply_threshold(self, model: Any) -> None:
        """The ``threshold`` option on a loaded classifier: 'none' → argmax, a number → that threshold on its second label."""
        if self.threshold is None or not hasattr(model, "set_decision"):
            return
        if self.threshold == "none":
            model.set_decision(None)
            return
        saved = dict(getattr(model, "decision", None) or {})
        label = saved.get("label") or (model.labels[1] if len(model.labels) == 2 else None)
        model.set_decision({**saved, "label": label, "threshold": float(self.threshold), "chosen_on": "given (-O threshold)"})

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        self._target_labels = tuple(getattr(task, "labels", ()) or ())
        self._task, self._ctx = task, ctx

    @property
    def examples(self) -> int:
        """How many retrieved solved pairs the model reads before each item (an iro model trained with --examples)."""
        return int(((self.meta.get("input_format") or {}).get("examples") or {}).get("k", 0))

    @property
    def needs_train(self) -> bool:  # type: ignore[override]  # an instance decides: a model with examples needs a pool
        return self.examples > 0

    def fit(self, train: Sequence[Record]) -> None:
        """A model shown retrieved examples indexes its pool: the ``pool`` split, else the task's train-fit where it has
        one (so that no item of `selection` sees its own family), else the train split the harness gives."""
        if not self.examples or getattr(self.model, "pool", None) is not None:
            return
        task = self._task
        splits = tuple(getattr(task, "splits", ()))
        split = self.pool_split or ("train-fit" if "train-fit" in splits else None)
        if split is not None:
            if task is None or split not in splits:
                raise FiglangError(f"pool={split!r} is not a split of the task (its splits: {', '.join(splits) or 'none'})")
            train = task.load(split, self._ctx)
        self.use_pool(train)

    def use_pool(self, pairs: Sequence[Record]) -> None:
        """The solved pairs the model's examples are retrieved from (the ``explain`` method gives its own pool)."""
        if self.examples:
            self.model.use_pool(pairs)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        model = self.model
        if getattr(model, "model_class", None) == "generator":
            if self.decoding:
                model.set_decoding(**self.decoding)
            if model.shape == "nli":
                model.target_labels = self._target_labels or model.labels
            return model.predict(records, self.batch_size)
        if model.shape == "nli":
            model.target_labels = self._target_labels or model.labels
            return model.predict(records, self.batch_size)
        if self.inference_subset is not None:
            return model.predict(records, self.batch_size, inference_subset=self.inference_subset)
        return model.predict(records, self.batch_size)

    def explain_given(self, records: Sequence[Record], labels: Sequence[str]) -> list[str]:
        """Explanations an ``iro`` model writes after labels it is given (the ``explain`` method's ``writer``)."""
        return self._iro_model().explain_given(records, labels, self.batch_size)

    def explain_samples(
        self, records: Sequence[Record], labels: Sequence[str], n: int, temperature: float, top_k: int | None = None
    ) -> list[list[str]]:
        """``n`` sampled explanations per record after its given label (candidates for the ``explain`` method's ``writer_mbr``)."""
        return self._iro_model().explain_samples(records, labels, n, temperature=temperature, top_k=top_k, batch_size=self.batch_size)

    def _iro_model(self) -> Any:
        if self.meta["method"] != "iro":  # before loading: figlang.json says what the folder holds
            raise FiglangError(
                f"{self.model_dir} is a {self.meta['method']} model; a writer of explanations is an iro model "
                "(figlang train -t flute -m iro)"
            )
        model = self.model
        if self.decoding:
            model.set_decoding(**self.decoding)
        return model

    def config(self) -> dict[str, Any]:
        meta_path = self.model_dir / FIGLANG_JSON
        weights = sorted(p for p in self.model_dir.iterdir() if p.suffix in (".safetensors", ".bin"))
        identity = hashlib.sha256()
        for p in weights:
            if self.shipped:  # a few KB inside the package, whose file times change with every install: by content
                identity.update(f"{p.name}:{hashlib.sha256(p.read_bytes()).hexdigest()}\n".encode())
                continue
            st = p.stat()
            identity.update(f"{p.name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        out: dict[str, Any] = {
            "model": f"figlang:{self.shipped}" if self.shipped else str(self.model_dir),
            "trained_method": self.meta["method"],
            "base_model": (self.meta.get("base_model") or {}).get("reference"),
            "figlang_json_sha256": file_sha256(meta_path) if meta_path.is_file() else None,
            "weights_identity": identity.hexdigest(),
            "best": self.meta.get("best"),
        }
        if self.examples:  # where the retrieved examples come from is part of what answers (fixed before fit: a stable key)
            out["examples"] = {"k": self.examples, "pool": self.pool_split or "train-fit, else train (in explain: its pool)"}
        if self.meta["method"] == "nli-rationale":
            src = self.rationales or getattr(self._model, "rationale_source", None) or "gold"
            out["rationales"] = str(src)
            if src != "gold" and Path(str(src)).is_file():
                out["rationales_sha256"] = file_sha256(Path(str(src)))
            out["rationale_field"] = self.rationale_field
        decision = getattr(self._model, "decision", None) if self._model is not None else self.meta.get("decision")
        if self.threshold == "none":
            decision = None
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if decision:
            out["decision"] = {k: decision.get(k) for k in ("label", "threshold", "objective", "chosen_on")}
        if self.inference_subset is not None:
            out["inferences"] = [j + 1 for j in self.inference_subset]
        if TRAINED_METHODS[self.meta["method"]][1] == "generator":
            from figlang.methods.trained.generator import decoding_defaults

            recorded = (self.meta.get("input_format") or {}).get("decoding") or decoding_defaults(self.meta["method"])
            out["decoding"] = {**recorded, **self.decoding}
        return out


def _threshold_option(value: float | str | None) -> float | str | None:
    """-O threshold=none|NUMBER: 'none' (argmax), a finite number, or None (as saved)."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().lower() in ("none", "argmax"):
        return "none"
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise FiglangError(f"threshold must be 'none' (argmax) or a number (the score margin of the second label), got {value!r}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise FiglangError(f"threshold must be a finite number, got {value!r}")
    return number


def _trained(model: str | None = None, **options: Any) -> TrainedMethod:
    return TrainedMethod(model=model, **options)


TRAINED_OPTIONS = options_from_signature(
    TrainedMethod,
    {
        "loaded": "an already loaded model object (Python only)",
        "batch_size": "items a forward pass",
        "threads": "CPU threads for torch",
        "bf16": "run in bfloat16 (default: as trained)",
        "rationales": "a generator's rationales: where they come from",
        "rationale_field": "the record field a rationale is read from",
        "inferences": "the inferences (1-based, comma-separated) a knowledge model is given",
        "seed": "seed of sampling",
        "samples": "a generator's samples an item",
        "top_k": "a generator's top-k",
        "temperature": "a generator's sampling temperature",
        "max_new_tokens": "a generator's tokens at most",
        "min_new_tokens": "a generator's tokens at least",
        "do_sample": "a generator samples (else greedy)",
        "device": "cpu, cuda, cuda:N or auto",
        "threshold": "an NLI classifier's decision threshold (a number, or none for argmax)",
        "pool": "an iro model trained with examples: the split they are retrieved from (default train-fit, else train)",
    },
    python_only=("loaded",),
)


def register(registry: MethodRegistry) -> None:
    """Add the ``trained`` method to ``registry`` (called by the registry on first use)."""
    registry.register(
        "trained",
        ("cloze", "nli", "generation"),
        "A model trained with `figlang train` (--model DIR; reads DIR/figlang.json), or a head that ships with figlang (--model figlang:NAME).",
        options=TRAINED_OPTIONS,
        backend_options=False,
    )(_trained)


__all__ = ["TrainedMethod"]
