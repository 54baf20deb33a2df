"""The ``explain`` method's options, declared once (types, defaults, allowed values, help).

Their own light module, so that ``figlang explain --help`` prints them (and its flags' defaults) without importing
the methods; :mod:`figlang.methods.prompted.explain` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from figlang.core.options import option, option_names
from figlang.methods.retrieval import KEYS

MODES = ("pipeline", "joint")
DEFAULT_K = 6  # examples shown a pair (chosen on `selection`, docs/flute_explanations.md)
# How the k examples and the item are shown (``shots``): ``flute`` repeats FLUTE's instruction for every pair, as
# FLUTE's own prompts did; ``compact`` states it once and then shows each pair as two labelled lines.
SHOTS = ("flute", "compact")  # the first is the default
STYLES = ("none", "examples", "sarcasm")  # the first is the default


@dataclass(frozen=True)
class ExplainOptions:
    """The explain method's options (``-O KEY=VALUE``; ``figlang explain`` has flags for some): each written once, here.

    Options starting with ``label_`` other than ``label_method``/``label_model`` go to the label method; the rest
    not named here are the backend's."""

    prefixed: ClassVar[tuple[str, ...]] = ("label_",)

    mode: str = option("pipeline", "pipeline (a label method decides, then the explanation) or joint (I→OR)", choices=MODES)
    k: int = option(DEFAULT_K, "retrieved train examples shown a pair (chosen on FLUTE selection)", minimum=0)
    encoder: str = option("minilm", "the sentence encoder that retrieves examples")
    retrieval_key: str = option("pair", "what retrieval embeds: pair (premise and hypothesis), hypothesis or premise", choices=KEYS)
    match_label: bool = option(True, "pipeline: show examples with the label given")
    meanings: str = option("auto", "the idiom lexicon: auto (the data folder's), none, or a data folder")
    label_method: str | None = option(None, "pipeline: the label method (default nli-score; trained with label_model=DIR)")
    label_model: str | None = option(None, "pipeline: the label method's model (default: this model)")
    max_new_tokens: int = option(60, "tokens generated at most", minimum=1)
    temperature: float = option(0.0, "0: greedy; above: sampled with a per-item seed")
    seed: int = option(0, "seed of sampling (per item: sha256(seed:item id))")
    chat: str = option("auto", "use the model's chat template: auto (when it has one), true or false", choices=("auto", "true", "false"))
    retrieval_cache: str | None = option(None, "folder for the encoder's embeddings of the pool")
    pool: str = option("train", "the split examples are retrieved from (train-fit keeps selection's families out)")
    shots: str = option(SHOTS[0], "how examples are shown: flute (the instruction every pair) or compact", choices=SHOTS)
    style: str = option(
        STYLES[0],
        "none; examples: one line asking to explain as the examples do; sarcasm: one line for sarcasm pairs only",
        choices=STYLES,
    )
    k_by_type: str | dict | None = option(None, "a figure type's own k: TYPE:K pairs, comma-separated (idiom:16,metaphor:16)")
    writer: str | None = option(None, "a trained iro model folder that writes the explanations (pipeline)")
    writer_types: str | list | None = option(None, "the figure types the writer explains: all, or comma-separated")
    writer_batch_size: int = option(16, "the writer's batch size", minimum=1)
    writer_mbr: int = option(0, "the writer also samples N explanations; the minimum-Bayes-risk one is kept", minimum=0)
    writer_temperature: float = option(0.7, "temperature of the writer_mbr samples")
    mbr: int = option(0, "pipeline: the prompted model also samples N explanations; the minimum-Bayes-risk one is kept", minimum=0)
    mbr_temperature: float = option(0.7, "temperature of the mbr samples")


EXPLAIN_OPTION_NAMES = frozenset(option_names(ExplainOptions))
