"""The built-in tasks: :func:`builtin_tasks`, which ``registry.TASKS`` reads on first use (importing
this module registers nothing).

Narrative tasks also offer ``dev-disjoint`` (a deterministic dev carved from train whose
idioms/similes never occur in the rest of train) and ``train-disjoint`` (the rest): the
official idiom dev shares all its idioms with train, so it overstates accuracy on unseen
idioms. ``selection`` (carved from train-disjoint the same way, about dev-disjoint's size) is
where every choice a method makes is made, so dev-disjoint is scored once per reported model;
``train-fit`` is train-disjoint less the selection split.


FLUTE tasks also offer ``selection`` (a seeded ~10% of train, stratified by figure type and
label, premise/hypothesis/idiom families kept whole) and ``train-fit`` (the rest of train): pick
prompts, thresholds and checkpoints on ``selection``, never on val.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import cast

from figlang.data import flute, impli, narrative
from figlang.core.errors import DataError, LoadOptions
from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, Record, Shape
from figlang.data.splits import carve_selection, expression_disjoint_split, narrative_links
from figlang.data.task import Loader, Task

DISJOINT_SPLITS = ("dev-disjoint", "train-disjoint", "selection", "train-fit")
DISJOINT_DEV_FRACTION = 0.1
DISJOINT_SEED = 0
SELECTION_SEED = 1  # another shuffle than dev-disjoint's, so the two carvings do not mirror each other


def _disjoint_parts(train: list[Record]) -> dict[str, list[Record]]:
    """The four carved splits of one narrative train set, by name (see the module docstring)."""
    rest, dev = expression_disjoint_split(train, dev_fraction=DISJOINT_DEV_FRACTION, seed=DISJOINT_SEED, links=narrative_links)
    fit, selection = carve_selection(rest, size=len(dev), seed=SELECTION_SEED, links=narrative_links)
    return {"dev-disjoint": dev, "train-disjoint": rest, "selection": selection, "train-fit": fit}


def _with_disjoint(load_train_like, reference=None):
    """Wrap a (split, data_dir, options) loader so that it also serves the expression-disjoint splits.

    ``reference`` (a loader of the same data in another shape) makes the split follow the
    reference's: the generation items of an expression are in dev-disjoint exactly when its cloze
    records are, so a model trained on one shape is never selected on the other's dev expressions.
    """

    def loader(split: str, data_dir: Path, options: LoadOptions) -> list[Record]:
        if split not in DISJOINT_SPLITS:
            return load_train_like(split, data_dir, options)
        if reference is None:
            return _disjoint_parts(load_train_like("train", data_dir, options))[split]
        wanted = {r.id for r in _disjoint_parts(reference("train", data_dir, options))[split]}
        out = []
        for r in load_train_like("train", data_dir, options):
            ids = set(r.meta.get("cloze_ids", ()))
            if not ids:
                raise DataError(f"{r.id} does not name its cloze records (meta.cloze_ids): cannot place it in {split}")
            if ids <= wanted:
                out.append(r)
        return out

    return loader


def _narrative_files(kind: str, split: str, data_dir: Path) -> list[Path]:
    return narrative.narrative_files(kind, "train" if split in DISJOINT_SPLITS else split, data_dir)


_NARRATIVE_SHAPES: dict[Shape, tuple[str, Callable[..., Sequence[Record]]]] = {
    "cloze": ("pick the plausible of two continuations (TACL 2022).", narrative.load_cloze),
    "generation": ("write a plausible continuation; references are the plausible options.", narrative.load_generation),
}


_FLUTE_TASKS: dict[str, tuple[str | None, str]] = {
    "flute": (None, "FLUTE: does the literal premise entail or contradict the figurative hypothesis, and why (EMNLP 2022).")
}
_FLUTE_TASKS.update({f"flute-{f}": (f, f"FLUTE, {f} pairs only.") for f in flute.FIGURE_TYPES})

_IMPLI_TASKS = {
    "impli": ("All IMPLI pairs: idioms and metaphors, entailment vs non-entailment (ACL 2022).", None, None),
    "impli-idioms": ("IMPLI idiom pairs (silver and manual).", "idiom", None),
    "impli-metaphors": ("IMPLI metaphor pairs (manual and replacement).", "metaphor", None),
    "impli-idioms-manual": (
        "IMPLI hand-written idiom pairs (manual gold, incl. antonym replacements).",
        "idiom",
        ("manual", "manual_antonym"),
    ),
    "impli-idioms-silver": (
        "IMPLI automatically made idiom pairs (figurative/literal contexts, adversarial definitions).",
        "idiom",
        ("fig_context", "lit_context", "adversarial_definition"),
    ),
    "impli-metaphors-manual": ("IMPLI hand-written metaphor pairs.", "metaphor", ("manual",)),
}


def builtin_tasks() -> list[Task]:
    """figlang's own tasks, in listing order: the narrative cloze and generation tasks, FLUTE, IMPLI."""
    tasks: list[Task] = []
    for kind in narrative.KINDS:
        for shape, (what, load) in _NARRATIVE_SHAPES.items():
            tasks.append(
                Task(
                    name=f"{kind}-{shape}",
                    shape=shape,
                    description=f"Figurative narratives ({kind}s): {what}",
                    splits=narrative.SPLITS + DISJOINT_SPLITS,
                    loader=_with_disjoint(partial(load, kind), None if shape == "cloze" else partial(narrative.load_cloze, kind)),
                    files_for=partial(_narrative_files, kind),
                    default_split="dev",
                    datasets=(narrative.DATASET,),
                )
            )
    for name, (figure, desc) in _FLUTE_TASKS.items():
        tasks.append(
            Task(
                name=name,
                shape="nli",
                description=desc,
                splits=flute.TASK_SPLITS,
                # cast: the loader's list[NLIPair] is a list[Record] (lists are invariant)
                loader=cast(Loader, partial(lambda f, s, d, o: flute.load_flute(s, d, o, figure_type=f), figure)),
                files_for=flute.flute_files,
                default_split="val",
                labels=(ENTAILMENT, CONTRADICTION),
                datasets=(flute.DATASET,),
                group_by=("figure_type",),
            )
        )
    for name, (desc, fig, types) in _IMPLI_TASKS.items():
        tasks.append(
            Task(
                name=name,
                shape="nli",
                description=desc + " No official split: one split 'all'; use expression folds.",
                splits=("all",),
                loader=cast(Loader, partial(lambda f, t, s, d, o: impli.load_impli(d, o, figure_type=f, pair_types=t), fig, types)),
                files_for=partial(lambda f, t, s, d: impli.impli_files(d, f, t), fig, types),
                default_split="all",
                labels=(ENTAILMENT, NON_ENTAILMENT),
                datasets=(impli.DATASET,),
                group_by=("pair_type", "figure_type", "source"),
            )
        )
    return tasks
