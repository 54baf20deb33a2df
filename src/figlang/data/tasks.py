"""The built-in tasks. Importing this module registers them in ``registry.TASKS``.

Cloze tasks also offer ``dev-disjoint`` (a deterministic dev carved from train whose
idioms/similes never occur in the rest of train) and ``train-disjoint`` (the rest): the
official idiom dev shares all its idioms with train, so it overstates accuracy on unseen
idioms, and model selection needs an expression-disjoint split.

FLUTE tasks also offer ``selection`` (a seeded ~10% of train, stratified by figure type and
label, premise/hypothesis/idiom families kept whole) and ``train-fit`` (the rest of train): pick
prompts, thresholds and checkpoints on ``selection``, never on val.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from . import flute, impli, narrative
from .errors import DataError, LoadOptions
from .records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, Record
from .registry import TASKS, Task

DISJOINT_SPLITS = ("dev-disjoint", "train-disjoint")
DISJOINT_DEV_FRACTION = 0.1
DISJOINT_SEED = 0


def _with_disjoint(load_train_like, reference=None):
    """Wrap a (split, data_dir, options) loader so that it also serves the expression-disjoint splits.

    ``reference`` (a loader of the same data in another shape) makes the split follow the
    reference's: the generation items of an expression are in dev-disjoint exactly when its cloze
    records are, so a model trained on one shape is never selected on the other's dev expressions.
    """

    def loader(split: str, data_dir: Path, options: LoadOptions) -> list[Record]:
        if split not in DISJOINT_SPLITS:
            return load_train_like(split, data_dir, options)
        from .splits import expression_disjoint_split, narrative_links

        if reference is None:
            rest, dev = expression_disjoint_split(
                load_train_like("train", data_dir, options), dev_fraction=DISJOINT_DEV_FRACTION, seed=DISJOINT_SEED,
                links=narrative_links,
            )  # fmt: skip
            return dev if split == "dev-disjoint" else rest
        ref_rest, ref_dev = expression_disjoint_split(
            reference("train", data_dir, options), dev_fraction=DISJOINT_DEV_FRACTION, seed=DISJOINT_SEED, links=narrative_links
        )
        wanted = {r.id for r in (ref_dev if split == "dev-disjoint" else ref_rest)}
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


_NARRATIVE_SHAPES = {
    "cloze": ("pick the plausible of two continuations (TACL 2022).", narrative.load_cloze),
    "generation": ("write a plausible continuation; references are the plausible options.", narrative.load_generation),
}
for _kind in narrative.KINDS:
    for _shape, (_what, _load) in _NARRATIVE_SHAPES.items():
        TASKS.add(
            Task(
                name=f"{_kind}-{_shape}",
                shape=_shape,  # type: ignore[arg-type]
                description=f"Figurative narratives ({_kind}s): {_what}",
                splits=narrative.SPLITS + DISJOINT_SPLITS,
                loader=_with_disjoint(partial(_load, _kind), None if _shape == "cloze" else partial(narrative.load_cloze, _kind)),
                files_for=partial(_narrative_files, _kind),
                default_split="dev",
                datasets=(narrative.DATASET,),
            )
        )

_FLUTE_TASKS = {"flute": (None, "FLUTE: does the literal premise entail or contradict the figurative hypothesis, and why (EMNLP 2022).")}
_FLUTE_TASKS.update({f"flute-{f}": (f, f"FLUTE, {f} pairs only.") for f in flute.FIGURE_TYPES})
for _name, (_figure, _desc) in _FLUTE_TASKS.items():
    TASKS.add(
        Task(
            name=_name,
            shape="nli",
            description=_desc,
            splits=flute.TASK_SPLITS,
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
