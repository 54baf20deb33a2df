"""The built-in tasks. Importing this module registers them in ``registry.TASKS``.

Cloze tasks also offer ``dev-disjoint`` (a deterministic dev carved from train whose
idioms/similes never occur in the rest of train) and ``train-disjoint`` (the rest): the
official idiom dev shares all its idioms with train, so it overstates accuracy on unseen
idioms, and model selection needs an expression-disjoint split.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from . import flute, impli, narrative
from .errors import LoadOptions
from .records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, Record
from .registry import TASKS, Task

DISJOINT_SPLITS = ("dev-disjoint", "train-disjoint")
DISJOINT_DEV_FRACTION = 0.1
DISJOINT_SEED = 0


def _with_disjoint(load_train_like):
    """Wrap a (split, data_dir, options) loader so that it also serves the expression-disjoint splits."""

    def loader(split: str, data_dir: Path, options: LoadOptions) -> list[Record]:
        if split not in DISJOINT_SPLITS:
            return load_train_like(split, data_dir, options)
        from .splits import expression_disjoint_split

        rest, dev = expression_disjoint_split(
            load_train_like("train", data_dir, options), dev_fraction=DISJOINT_DEV_FRACTION, seed=DISJOINT_SEED
        )
        return dev if split == "dev-disjoint" else rest

    return loader


def _narrative_files(kind: str, split: str, data_dir: Path) -> list[Path]:
    return narrative.narrative_files(kind, "train" if split in DISJOINT_SPLITS else split, data_dir)


for _kind in narrative.KINDS:
    TASKS.add(
        Task(
            name=f"{_kind}-cloze",
            shape="cloze",
            description=f"Figurative narratives ({_kind}s): pick the plausible of two continuations (TACL 2022).",
            splits=narrative.SPLITS + DISJOINT_SPLITS,
            loader=_with_disjoint(partial(lambda k, s, d, o: narrative.load_cloze(k, s, d, o), _kind)),
            files_for=partial(_narrative_files, _kind),
            default_split="dev",
            datasets=(narrative.DATASET,),
        )
    )
    TASKS.add(
        Task(
            name=f"{_kind}-generation",
            shape="generation",
            description=f"Figurative narratives ({_kind}s): write a plausible continuation; references are the plausible options.",
            splits=narrative.SPLITS + DISJOINT_SPLITS,
            loader=_with_disjoint(partial(lambda k, s, d, o: narrative.load_generation(k, s, d, o), _kind)),
            files_for=partial(_narrative_files, _kind),
            default_split="dev",
            datasets=(narrative.DATASET,),
        )
    )

TASKS.add(
    Task(
        name="flute",
        shape="nli",
        description="FLUTE: does the literal premise entail or contradict the figurative hypothesis, and why (EMNLP 2022).",
        splits=flute.SPLITS,
        loader=lambda s, d, o: flute.load_flute(s, d, o),
        files_for=flute.flute_files,
        default_split="val",
        labels=(ENTAILMENT, CONTRADICTION),
        datasets=(flute.DATASET,),
        group_by=("figure_type",),
    )
)
for _figure in flute.FIGURE_TYPES:
    TASKS.add(
        Task(
            name=f"flute-{_figure}",
            shape="nli",
            description=f"FLUTE, {_figure} pairs only.",
            splits=flute.SPLITS,
            loader=partial(lambda f, s, d, o: flute.load_flute(s, d, o, figure_type=f), _figure),
            files_for=flute.flute_files,
            default_split="val",
            labels=(ENTAILMENT, CONTRADICTION),
            datasets=(flute.DATASET,),
            group_by=("figure_type",),
        )
    )

_IMPLI_TASKS = {
    "impli": ("All IMPLI pairs: idioms and metaphors, entailment vs non-entailment (ACL 2022).", None, None),
    "impli-idioms": ("IMPLI idiom pairs (silver and manual).", "idiom", None),
    "impli-metaphors": ("IMPLI metaphor pairs (manual and replacement).", "metaphor", None),
    "impli-idioms-manual": ("IMPLI hand-written idiom pairs (manual gold, incl. antonym replacements).", "idiom", ("manual", "manual_antonym")),
    "impli-idioms-silver": ("IMPLI automatically made idiom pairs (figurative/literal contexts, adversarial definitions).", "idiom", ("fig_context", "lit_context", "adversarial_definition")),
    "impli-metaphors-manual": ("IMPLI hand-written metaphor pairs.", "metaphor", ("manual",)),
}  # fmt: skip
for _name, (_desc, _fig, _types) in _IMPLI_TASKS.items():
    TASKS.add(
        Task(
            name=_name,
            shape="nli",
            description=_desc + " No official split: one split 'all'; use expression folds.",
            splits=("all",),
            loader=partial(lambda f, t, s, d, o: impli.load_impli(d, o, figure_type=f, pair_types=t), _fig, _types),
            files_for=partial(lambda f, t, s, d: impli.impli_files(d, f, t), _fig, _types),
            default_split="all",
            labels=(ENTAILMENT, NON_ENTAILMENT),
            datasets=(impli.DATASET,),
            group_by=("pair_type", "figure_type", "source"),
        )
    )
