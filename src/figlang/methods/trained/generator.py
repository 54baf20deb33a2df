"""Trained *generating* models: FLUTE's self-rationalizing I→OR model and the narrative continuation generators.

Methods (``figlang train -m …``):

* ``iro`` (FLUTE, Chakrabarty et al. EMNLP 2022): from FLUTE's instruction (``Does the sentence
  "P" entail or contradict the sentence "H"? Please answer …``) the model writes FLUTE's target,
  ``Entails. <explanation>`` or ``Contradicts. <explanation>``. A seq2seq model (T5) when the base
  model is an encoder-decoder, else a decoder-only causal LM fed ``instruction \\n target <eos>``.
  Decoding is greedy by default; the label and explanation are read with
  :func:`figlang.methods.prompted.parsing.parse_nli_answer`, so a prediction carries ``prediction``
  (the label), ``explanation`` and ``raw``, and FLUTE's Acc@0/50/60 apply.
* ``generator`` (Chakrabarty, Choi, Shwartz, TACL 2022, §6): a causal LM fine-tuned on
  ``N C <eos>`` (narrative, plausible continuation), loss on C only; decoded like the ``generate``
  method (top-k 5, temperature 0.7, up to 20 new tokens, stop at the sentence end, the sample cut
  after its first sentence; per-item seed ``sha256(seed:id)``, sample j seeded as the transformers
  backend seeds it).
* ``generator-context`` / ``generator-literal`` (knowledge-enhanced): one model trained on
  ``Inf_j <sep1> N <sep2> C <eos>`` for every inference j of the record (context: COMET/ATOMIC
  inferences about the narrator; literal: ConceptNet relations of the expression). At decoding
  time the prompts of all inferences of a narrative run as one batch; at every step their
  next-token logits are **summed** and one token is drawn from the sum (top-k 5, temperature 0.7),
  then fed to every prompt. The prompts' key/value caches are kept across steps (only the new
  token goes through the model), so a step costs one token per prompt.

``<sep1>``/``<sep2>`` are added to the tokenizer as special tokens (the embedding matrix grows by
two rows, initialised at the mean embedding); the saved tokenizer carries them.

A saved model is the ``save_pretrained`` directory of the LM and its tokenizer plus ``figlang.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from figlang.core.errors import FiglangError
from figlang.data.flute import INSTRUCTION
from figlang.data.records import CONTRADICTION, ENTAILMENT, GenerationRecord, NLIPair, strip_markup
from figlang.backends.transformers_backend import derive_seed
from figlang.methods.base import Prediction
from figlang.backends.hf_quiet import quiet_cache_rename
from figlang.core.progress import route_transformers_bars
from figlang.methods.prompted import item_seed
from figlang.methods.prompted.generation import continuations_prediction
from figlang.methods.prompted.parsing import first_sentence, parse_nli_answer
from figlang.methods.trained.common import (
    KNOWLEDGE,
    TRAINED_METHODS,
    HFModel,
    TrainedModel,
    fit_segments,
    no_inferences,
    read_figlang_json,
)
from figlang.methods.trained.iro_examples import example_pool, examples_block, examples_form
from figlang.methods.trained.multiple_choice import autocast, module_device, save_pretrained, to_device

SEP1, SEP2 = "<sep1>", "<sep2>"
# FLUTE's instruction (figlang.data.flute.INSTRUCTION) and target words
TARGET_WORDS = {ENTAILMENT: "Entails", CONTRADICTION: "Contradicts"}
# End-of-turn markers that also end a generation when they are special tokens of the tokenizer
END_TOKENS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "<|end_of_text|>", "</s>")

DECODING_DEFAULTS: dict[str, dict[str, Any]] = {
    "iro": {"do_sample": False, "top_k": None, "temperature": 1.0, "max_new_tokens": 64, "min_new_tokens": 0, "samples": 1, "seed": 0},
    # min_new_tokens 1: the end token may not be the first draw (it was, for 6 of 20 narratives of a lightly trained model)
    "generator": {"do_sample": True, "top_k": 5, "temperature": 0.7, "max_new_tokens": 20, "min_new_tokens": 1, "samples": 1, "seed": 0},
}


def decoding_defaults(method: str) -> dict[str, Any]:
    return dict(DECODING_DEFAULTS["iro" if method == "iro" else "generator"])


def flute_target(record: NLIPair) -> str:
    """FLUTE's target string: ``Entails. <explanation>`` / ``Contradicts. <explanation>``."""
    word = TARGET_WORDS.get(str(record.label))
    if word is None:
        raise FiglangError(
            f"record {record.id!r} has label {record.label!r}: the I→OR model is trained on FLUTE's entailment/contradiction"
        )
    explanation = " ".join(str(record.explanation or "").split())
    return f"{word}. {explanation}".strip()


def flute_instruction(record: NLIPair) -> str:
    return INSTRUCTION.format(premise=record.premise, hypothesis=record.hypothesis)


def seed_of(seed: int, record_id: str, sample: int) -> int:
    """The generate method's seeding: item seed sha256(seed:id), then the backend's per-sample derivation."""
    return derive_seed(item_seed(seed, record_id), sample)


def sentence_done(text: str) -> bool:
    """Whether the first sentence of the first non-empty line is settled (more tokens cannot change it)."""
    stripped = text.lstrip()
    if "\n" in stripped:  # the first non-empty line has ended
        return True
    sentence, complete = first_sentence(text)
    return complete and len(sentence) < len(stripped)  # a token after the end mark confirms it ("$3." may go on as "$3.50")


def choose_token(logits: torch.Tensor, do_sample: bool, temperature: float, top_k: int | None, generator: torch.Generator | None) -> int:
    """Argmax, or a draw after temperature and top-k (the transformers backend's sampler)."""
    if not do_sample:
        return int(logits.argmax())
    scores = logits.float() / float(temperature)
    if top_k is not None and 0 < top_k < scores.numel():
        kth = torch.topk(scores, top_k).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))


def _left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            ids[i, width - len(r) :] = torch.tensor(list(r), dtype=torch.long)
            mask[i, width - len(r) :] = 1
    return ids, mask


def _right_pad(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), value, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(list(r), dtype=torch.long)
    return out


class IncrementalDecoder:
    """Rows (prompts) run as one batch with their key/value caches; each step feeds one new token per row.

    ``prefill(rows)`` returns the next-token logits of every row; ``step(tokens)`` feeds one token
    per live row and returns the next logits; ``keep(indexes)`` drops finished rows (from the
    cache too). Causal LMs take left-padded prompts with position ids counted from each row's
    first real token, so a row's logits do not depend on the others (beyond float noise);
    encoder-decoders encode the rows once and decode from the decoder start token.
    """

    def __init__(self, module: HFModel, pad_id: int, bf16: bool = False) -> None:
        self.module = module
        self.pad_id = pad_id
        self.bf16 = bf16
        self.seq2seq = bool(getattr(module.config, "is_encoder_decoder", False))
        self.device = module_device(module)
        self.cache: Any = None

    @torch.no_grad()
    def prefill(self, rows: Sequence[Sequence[int]]) -> torch.Tensor:
        quiet_cache_rename()  # step() passes past_key_values= on every token
        route_transformers_bars()  # its "Loading weights" bars as lines of figlang's display
        ids, mask = _left_pad(rows, self.pad_id)
        ids, mask = ids.to(self.device), mask.to(self.device)
        with autocast(self.bf16, self.device):
            if self.seq2seq:
                self.encoder_hidden = self.module.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
                self.src_mask = mask
                start = self.module.config.decoder_start_token_id
                if start is None:
                    start = self.pad_id
                out = self.module(
                    encoder_outputs=(self.encoder_hidden,),
                    attention_mask=mask,
                    decoder_input_ids=torch.full((len(rows), 1), int(start), dtype=torch.long, device=self.device),
                    use_cache=True,
                )
            else:
                self.mask = mask
                self.position = mask.sum(-1)  # the next token's position in each row
                positions = (mask.cumsum(-1) - 1).clamp(min=0)
                out = self.module(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
        self.cache = out.past_key_values
        return out.logits[:, -1, :].float().cpu()  # sampling stays on the CPU: the same draws on any device

    @torch.no_grad()
    def step(self, tokens: Sequence[int]) -> torch.Tensor:
        new = torch.tensor([[int(t)] for t in tokens], dtype=torch.long, device=self.device)
        with autocast(self.bf16, self.device):
            if self.seq2seq:
                out = self.module(
                    encoder_outputs=(self.encoder_hidden,),
                    attention_mask=self.src_mask,
                    decoder_input_ids=new,
                    past_key_values=self.cache,
                    use_cache=True,
                )
            else:
                self.mask = torch.cat([self.mask, torch.ones((len(tokens), 1), dtype=torch.long, device=self.device)], dim=1)
                out = self.module(
                    input_ids=new,
                    attention_mask=self.mask,
                    position_ids=self.position.unsqueeze(1),
                    past_key_values=self.cache,
                    use_cache=True,
                )
                self.position = self.position + 1
        self.cache = out.past_key_values
        return out.logits[:, -1, :].float().cpu()  # sampling stays on the CPU: the same draws on any device

    def keep(self, rows: Sequence[int]) -> None:
        sel = torch.tensor(list(rows), dtype=torch.long, device=self.device)
        if hasattr(self.cache, "batch_select_indices"):
            self.cache.batch_select_indices(sel)
        else:  # pragma: no cover - older cache classes
            self.cache.reorder_cache(sel)
        if self.seq2seq:
            self.encoder_hidden, self.src_mask = self.encoder_hidden[sel], self.src_mask[sel]
        else:
            self.mask, self.position = self.mask[sel], self.position[sel]


def decode_groups(
    module: nn.Module,
    groups: Sequence[Sequence[Sequence[int]]],
    *,
    pad_id: int,
    eos_ids: set[int],
    max_new_tokens: int,
    do_sample: bool,
    temperature: float = 1.0,
    top_k: int | None = None,
    seeds: Sequence[int] | None = None,
    done: Callable[[list[int]], bool] | None = None,
    bf16: bool = False,
    min_new_tokens: int = 0,
) -> list[list[int]]:
    """Decode one sequence per group of prompts; at each step the group's next-token logits are summed.

    A group of one prompt is plain decoding. All prompts of all groups run as one batch with their
    caches; only the chosen token of each group is fed at the next step (to every prompt of the
    group). ``seeds`` gives each group its own ``torch.Generator`` (batching cannot change what is
    drawn); ``done(tokens)`` ends a group early (e.g. at a sentence end). Returns the new tokens of
    each group, without the end-of-sequence token.
    """
    if not groups:
        return []
    rows = [list(p) for g in groups for p in g]
    owner = [gi for gi, g in enumerate(groups) for _ in g]
    if any(len(g) == 0 for g in groups):
        raise FiglangError("decode_groups: every group needs at least one prompt")
    gens = None
    if do_sample:
        gens = []
        for s in seeds if seeds is not None else [0] * len(groups):
            g = torch.Generator(device="cpu")
            g.manual_seed(int(s))
            gens.append(g)
    out: list[list[int]] = [[] for _ in groups]
    if max_new_tokens <= 0:
        return out
    dec = IncrementalDecoder(module, pad_id, bf16)
    was_training = module.training
    module.eval()
    try:
        logits = dec.prefill(rows)
        live = list(range(len(groups)))  # groups still decoding
        live_rows = list(range(len(rows)))  # batch rows still decoding (indexes into rows/owner)
        while True:
            # sum the logits of each live group's rows
            index = torch.tensor([live.index(owner[r]) for r in live_rows], dtype=torch.long)
            summed = torch.zeros((len(live), logits.shape[-1]), dtype=logits.dtype).index_add_(0, index, logits)
            chosen: dict[int, int] = {}
            finished: set[int] = set()
            for k, gi in enumerate(live):
                row = summed[k]
                if len(out[gi]) < min_new_tokens and eos_ids:  # too early to end: the end tokens cannot be drawn
                    row = row.clone()
                    row[list(eos_ids)] = float("-inf")
                token = choose_token(row, do_sample, temperature, top_k, gens[gi] if gens else None)
                if token in eos_ids:
                    finished.add(gi)
                    continue
                out[gi].append(token)
                if len(out[gi]) >= max_new_tokens or (done is not None and done(out[gi])):
                    finished.add(gi)
                    continue
                chosen[gi] = token
            if not chosen:
                break
            if finished:
                keep = [k for k, r in enumerate(live_rows) if owner[r] not in finished]
                dec.keep(keep)
                live_rows = [live_rows[k] for k in keep]
                live = [gi for gi in live if gi not in finished]
            logits = dec.step([chosen[owner[r]] for r in live_rows])
    finally:
        module.train(was_training)
    return out


class GeneratorModel(TrainedModel):
    """A causal or seq2seq LM with its tokenizer and input format: featurize, collate, loss, predict, save, load."""

    model_class = "generator"

    def __init__(
        self,
        module: HFModel,
        tokenizer: Any,
        method: str,
        max_length: int = 160,
        max_target_length: int = 64,
        max_inferences: int = 12,
        bf16: bool = False,
        inference_floor: int = 8,
        narrative_floor: int = 32,
        decoding: dict[str, Any] | None = None,
        examples: int = 0,
    ) -> None:
        super().__init__(module, tokenizer, method, "a generating method (choose iro, generator, generator-context, generator-literal)")
        if examples and method != "iro":
            raise FiglangError(f"examples={examples}: retrieved solved pairs are shown to an iro model, not to a {method} model")
        self.examples = int(examples or 0)
        self.pool: Any = None  # a PairIndex over the solved pairs the examples are retrieved from (use_pool)
        self.shape = TRAINED_METHODS[method][0]
        self.knowledge = KNOWLEDGE.get(method)
        self.seq2seq = bool(getattr(module.config, "is_encoder_decoder", False))
        if self.seq2seq and method != "iro":
            raise FiglangError(
                f"{method} trains a decoder-only (causal) LM; {type(module).__name__} is an encoder-decoder (use it for iro)"
            )
        self.max_length = int(max_length)
        self.max_target_length = int(max_target_length)
        self.max_inferences = int(max_inferences)
        self.bf16 = bool(bf16)
        self.inference_floor = int(inference_floor)
        self.narrative_floor = int(narrative_floor)
        self.decoding = {**decoding_defaults(method), **(decoding or {})}
        self.labels: tuple[str, ...] = (ENTAILMENT, CONTRADICTION) if method == "iro" else ()
        self.target_labels: tuple[str, ...] = self.labels
        eos = tokenizer.eos_token_id
        if eos is None and getattr(module.config, "eos_token_id", None) is not None:
            e = module.config.eos_token_id
            eos = e[0] if isinstance(e, (list, tuple)) else e
        if eos is None:
            raise FiglangError("the generator needs a tokenizer with an end-of-sequence token")
        self.eos_id = int(eos)
        self.pad_id = int(tokenizer.pad_token_id) if tokenizer.pad_token_id is not None else self.eos_id
        ids = {self.eos_id}
        vocab = tokenizer.get_vocab()
        for t in END_TOKENS:
            if t in vocab and t in (tokenizer.all_special_tokens or []):
                ids.add(int(vocab[t]))
        self.stop_ids = ids
        if self.knowledge:
            self.sep1_id = tokenizer.convert_tokens_to_ids(SEP1)
            self.sep2_id = tokenizer.convert_tokens_to_ids(SEP2)
            if self.sep1_id in (None, tokenizer.unk_token_id) or self.sep2_id in (None, tokenizer.unk_token_id):
                raise FiglangError(f"the tokenizer has no {SEP1}/{SEP2} tokens: build the model with GeneratorModel.from_base")
        self._ids_cache: dict[str, list[int]] = {}

    # --- construction ---------------------------------------------------------------------------------
    @staticmethod
    def _auto_class(path: str) -> Any:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM

        config = AutoConfig.from_pretrained(path)
        return AutoModelForSeq2SeqLM if getattr(config, "is_encoder_decoder", False) else AutoModelForCausalLM

    @classmethod
    def from_base(cls, path: str, method: str, **options: Any) -> GeneratorModel:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path)
        module = cls._auto_class(path).from_pretrained(path, dtype=torch.float32)
        if KNOWLEDGE.get(method):
            add_separators(module, tokenizer)
        return cls(module, tokenizer, method, **options)

    @classmethod
    def load(cls, directory: str | Path, **overrides: Any) -> GeneratorModel:
        from transformers import AutoTokenizer

        meta = read_figlang_json(directory)
        fmt = meta["input_format"]
        tokenizer = AutoTokenizer.from_pretrained(str(directory))
        module = cls._auto_class(str(directory)).from_pretrained(str(directory), dtype=torch.float32)
        module.eval()
        options: dict[str, Any] = {
            "max_length": fmt["max_length"],
            "max_target_length": fmt.get("max_target_length", 64),
            "max_inferences": fmt.get("max_inferences") or 12,
            "bf16": meta.get("training", {}).get("bf16", False),
            "inference_floor": fmt.get("inference_floor", 8),
            "narrative_floor": fmt.get("narrative_floor", 32),
            "decoding": fmt.get("decoding"),
            "examples": (fmt.get("examples") or {}).get("k", 0),
        }
        options.update({k: v for k, v in overrides.items() if v is not None})
        return cls(module, tokenizer, meta["method"], **options)

    def save(self, directory: str | Path) -> None:
        save_pretrained(self.module, self.tokenizer, directory)

    def describe(self) -> dict[str, Any]:
        eos = self.tokenizer.convert_ids_to_tokens(self.eos_id)
        if self.method == "iro":
            shown = "{examples}" if self.examples else ""  # the retrieved examples' block (examples_form)
            template = (
                (f"source: {shown}{{instruction}} → target: {{label_word}}. {{explanation}} " + eos)
                if self.seq2seq
                else (shown + "{instruction}\\n{label_word}. {explanation}" + eos)
            )
            truncation = "instruction cut from its start to max_length; target to max_target_length"
        elif self.knowledge:
            template = f"{{inference_j}}{SEP1}{{narrative}}{SEP2} {{continuation}}{eos}"
            truncation = "narrative first (from its start, keeping the end), then the inference; continuation to max_target_length"
        else:
            template = f"{{narrative}} {{continuation}}{eos}"
            truncation = "narrative cut from its start (its end holds the expression); continuation to max_target_length"
        return {
            "template": template,
            "architecture": "seq2seq" if self.seq2seq else "causal",
            "lm_class": type(self.module).__name__,
            "loss": "token cross-entropy on the target only (prompt tokens masked)",
            "narrative": "markup (<b>…</b>) removed" if self.shape == "generation" else None,
            "knowledge": self.knowledge,
            "separators": [SEP1, SEP2] if self.knowledge else None,
            "max_inferences": self.max_inferences if self.knowledge else None,
            "aggregate": "next-token logits summed over the inferences' prompts at every step, then sampled" if self.knowledge else None,
            "max_length": self.max_length,
            "max_target_length": self.max_target_length,
            "truncation": truncation,
            "narrative_floor": self.narrative_floor,
            "inference_floor": self.inference_floor,
            "end_token": eos,
            "decoding": dict(self.decoding),
            "postprocess": "parse_nli_answer (label + explanation)" if self.method == "iro" else "first sentence of the first line",
            **({"examples": examples_form(self.examples)} if self.examples else {}),
        }

    # --- retrieved examples (iro_examples) ----------------------------------------------------------
    def use_pool(self, pairs: Sequence[Any]) -> None:
        """Index the solved pairs this model's examples are retrieved from (a model trained with ``examples=K`` needs one)."""
        self.pool = example_pool(pairs)
        self._ids_cache.clear()

    def examples_of(self, record: NLIPair, label: str | None) -> str:
        """The examples block shown before a record's instruction ('' for a model trained without examples)."""
        return examples_block(self.pool, record, self.examples, label) if self.examples else ""

    # --- selection ------------------------------------------------------------------------------------
    selects_on = ("dev_loss", "min")

    # --- features -------------------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        ids = self._ids_cache.get(text)
        if ids is None:
            ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            if len(self._ids_cache) < 200_000:
                self._ids_cache[text] = ids
        return ids

    def inferences_of(self, record: GenerationRecord) -> list[str]:
        infs = [str(x) for x in list(record.inferences.get(self.knowledge or "", ()))[: self.max_inferences]]
        if not infs:
            raise no_inferences(record.id, self.knowledge, self.method)
        return infs

    def prompts(self, record: Any, label: str | None = None) -> list[list[int]]:
        """The prompt token ids of a record (one per inference for knowledge models), within max_length minus the target
        budget. ``label``: the label an iro model's examples share (its gold label in training, a given one in explain)."""
        budget = self.max_length - (0 if self.seq2seq else self.max_target_length)
        if self.method == "iro":
            if not isinstance(record, NLIPair):
                raise FiglangError(f"the I→OR model answers NLI pairs, got {type(record).__name__}")
            ids = self._ids(self.examples_of(record, label) + flute_instruction(record))
            if self.seq2seq:
                return [ids[-(self.max_length - 1) :] + [self.eos_id]]
            nl = self._ids("\n")
            return [ids[-max(1, budget - len(nl)) :] + nl]
        if not isinstance(record, GenerationRecord):
            raise FiglangError(f"the {self.method} model answers generation records, got {type(record).__name__}")
        narrative = self._ids(strip_markup(record.source).strip())
        if not self.knowledge:
            keep = min(len(narrative), max(1, budget))
            return [narrative[len(narrative) - keep :]]
        out = []
        for inf in self.inferences_of(record):
            inf_ids = self._ids(inf.strip())
            kept = fit_segments(
                [len(inf_ids), len(narrative)], max(2, budget - 2), order=[1, 0], floors=[self.inference_floor, self.narrative_floor]
            )
            out.append(inf_ids[: kept[0]] + [self.sep1_id] + narrative[len(narrative) - kept[1] :] + [self.sep2_id])
        return out

    def targets(self, record: Any) -> list[list[int]]:
        """The target token ids (each ends with the end-of-sequence token)."""
        if self.method == "iro":
            if record.label is None or record.label_is_placeholder:
                return []
            texts = [flute_target(record)]
        else:
            texts = [" " + str(ref).strip() for ref in record.references if str(ref).strip()]
        return [self._ids(t)[: self.max_target_length - 1] + [self.eos_id] for t in texts]

    def featurize(self, record: Any) -> list[dict[str, Any]]:
        prompts = self.prompts(record, record.label if self.examples else None)
        out = []
        for t, target in enumerate(self.targets(record)):
            for j, prompt in enumerate(prompts):
                if self.seq2seq:
                    out.append({"id": record.id, "ids": prompt, "labels": target, "length": len(prompt) + len(target), "j": j, "t": t})
                else:
                    ids = prompt + target
                    out.append({"id": record.id, "ids": ids, "labels": [-100] * len(prompt) + target, "length": len(ids), "j": j, "t": t})
        return out

    def features(self, records: Sequence[Any]) -> list[dict[str, Any]]:
        return [f for r in records for f in self.featurize(r)]

    def collate(self, feats: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [f["ids"] for f in feats]
        batch = {
            "input_ids": _right_pad(ids, self.pad_id),
            "attention_mask": _right_pad([[1] * len(r) for r in ids], 0),
            "labels": _right_pad([f["labels"] for f in feats], -100),
        }
        return batch

    def token_losses(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """(summed target-token cross-entropy, number of target tokens) of a batch."""
        device = module_device(self.module)
        batch = to_device(batch, device)
        labels = batch["labels"]
        with autocast(self.bf16, device):
            if self.seq2seq:
                logits = self.module(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).logits
                target = labels
            else:
                logits = self.module(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1, :]
                target = labels[:, 1:]
        flat = logits.float().reshape(-1, logits.shape[-1])
        total = nn.functional.cross_entropy(flat, target.reshape(-1), ignore_index=-100, reduction="sum")
        return total, (target != -100).sum()

    def target_tokens(self, feat: dict[str, Any]) -> int:
        """How many target tokens of a feature the loss counts (what ``token_losses`` counts for it in any batch).

        The loss is a mean over target tokens, so gradient accumulation weights each micro-batch by its share of
        the group's target tokens (the trainer divides each micro-batch's summed loss by the group's count)."""
        labels = feat["labels"] if self.seq2seq else feat["labels"][1:]  # causal: the first position predicts nothing
        return sum(1 for x in labels if x != -100)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean target-token cross-entropy of the batch (for a group of micro-batches the trainer uses
        ``token_losses`` / the group's ``target_tokens``, which is the same mean over the whole group)."""
        total, n = self.token_losses(batch)
        return total / n.clamp(min=1)

    @torch.no_grad()
    def dev_metric(self, feats: Sequence[dict[str, Any]], batch_size: int = 16) -> float:
        """Mean target-token cross-entropy over ``feats`` (model selection: lower is better)."""
        self.module.eval()
        order = sorted(range(len(feats)), key=lambda i: feats[i]["length"])
        total, count = 0.0, 0
        for start in range(0, len(order), max(1, batch_size)):
            batch = self.collate([feats[i] for i in order[start : start + batch_size]])
            s, n = self.token_losses(batch)
            total += float(s)
            count += int(n)
        return total / max(count, 1)

    # --- prediction -----------------------------------------------------------------------------------
    def set_decoding(self, **options: Any) -> None:
        for k, v in options.items():
            if v is None:
                continue
            if k not in DECODING_DEFAULTS["iro"]:
                raise FiglangError(f"unknown decoding option {k!r}; known: {', '.join(DECODING_DEFAULTS['iro'])}")
            self.decoding[k] = v
        if self.decoding["do_sample"] and float(self.decoding["temperature"]) <= 0:
            raise FiglangError("sampling needs a temperature > 0")

    def _decode(
        self,
        groups: list[list[list[int]]],
        seeds: list[int] | None,
        done: Callable[[list[int]], bool] | None,
        sample: tuple[float, int | None] | None = None,
    ) -> list[list[int]]:
        """Decode with the model's decoding options; ``sample=(temperature, top_k)`` samples instead, whatever they say."""
        d = self.decoding
        do_sample, temperature, top_k = bool(d["do_sample"]), float(d["temperature"]), int(d["top_k"]) if d.get("top_k") else None
        if sample is not None:
            do_sample, (temperature, top_k) = True, sample
        return decode_groups(
            self.module,
            groups,
            pad_id=self.pad_id,
            eos_ids=self.stop_ids,
            max_new_tokens=int(d["max_new_tokens"]),
            do_sample=do_sample,
            temperature=temperature,
            top_k=top_k,
            seeds=seeds,
            done=done,
            bf16=self.bf16,
            min_new_tokens=int(d.get("min_new_tokens") or 0),
        )

    def _text(self, tokens: Sequence[int]) -> str:
        return self.tokenizer.decode(list(tokens), skip_special_tokens=True)

    def predict(self, records: Sequence[Any], batch_size: int = 8) -> list[Prediction]:
        if self.method == "iro":
            return self._predict_iro(records, batch_size)
        return self._predict_generation(records, batch_size)

    def _decode_lines(
        self, prompts: Sequence[list[int]], seeds: Sequence[int], batch_size: int, sample: tuple[float, int | None] | None = None
    ) -> list[str]:
        """One line decoded from each prompt with its seed, in batches sorted by length (``sample``: as ``_decode``)."""
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        texts: list[str] = [""] * len(prompts)
        stop = None if self.seq2seq else (lambda toks: "\n" in self._text(toks).lstrip())
        for start in range(0, len(order), max(1, batch_size)):
            idx = order[start : start + batch_size]
            outs = self._decode([[prompts[i]] for i in idx], [seeds[i] for i in idx], stop, sample)
            for i, toks in zip(idx, outs):
                texts[i] = self._text(toks).strip().split("\n")[0].strip()
        return texts

    def _item_seeds(self, records: Sequence[Any], sample: int = 0) -> list[int]:
        """Each record's seed for sample ``sample`` (as ``generate`` seeds it)."""
        return [seed_of(int(self.decoding["seed"]), r.id, sample) for r in records]

    def _predict_iro(self, records: Sequence[Any], batch_size: int) -> list[Prediction]:
        texts = self._decode_lines([self.prompts(r)[0] for r in records], self._item_seeds(records), batch_size)
        labels = self.target_labels or self.labels
        preds = []
        for r, text in zip(records, texts):
            parsed = parse_nli_answer(text, labels)
            preds.append(
                Prediction(
                    id=r.id,
                    prediction=parsed.label,
                    explanation=parsed.explanation,
                    raw=text,
                    valid=parsed.valid,
                    error=parsed.error,
                    meta={"answer_class": parsed.answer_class},
                )
            )
        return preds

    def explain_given(self, records: Sequence[NLIPair], labels: Sequence[str], batch_size: int = 8) -> list[str]:
        """The explanations an I→OR model writes after a label it is given (FLUTE's pipeline, I→O then explain).

        The prompt is the training sequence up to and including the label word (``instruction\\n{Entails|Contradicts}.``),
        so the model continues with the explanation it learnt to write for that label; one line, decoded as ``predict``
        decodes (greedy by default). Returns the raw text after the label word, one per record."""
        return self._decode_lines(self._given_prompts(records, labels), self._item_seeds(records), batch_size)

    def explain_samples(
        self,
        records: Sequence[NLIPair],
        labels: Sequence[str],
        n: int,
        *,
        temperature: float,
        top_k: int | None = None,
        batch_size: int = 8,
    ) -> list[list[str]]:
        """``n`` sampled explanations per record after its given label (the prompt of ``explain_given``).

        Sample j of a record is drawn with its own generator seeded ``seed_of(seed, id, j)`` (j = 1..n), so batching
        and order do not change what is drawn; the candidates of a minimum-Bayes-risk choice (``explain`` ``writer_mbr``)."""
        if n < 1 or temperature <= 0:
            raise FiglangError(f"explain_samples: n >= 1 and temperature > 0, not n={n}, temperature={temperature}")
        prompts = self._given_prompts(records, labels)
        jobs = [(i, j) for i in range(len(records)) for j in range(1, n + 1)]
        seeds = {j: self._item_seeds(records, j) for j in range(1, n + 1)}
        texts = self._decode_lines([prompts[i] for i, _ in jobs], [seeds[j][i] for i, j in jobs], batch_size, (temperature, top_k))
        return [texts[i * n : (i + 1) * n] for i in range(len(records))]

    def _given_prompts(self, records: Sequence[NLIPair], labels: Sequence[str]) -> list[list[int]]:
        """Each record's iro training sequence up to and including the word of the label it is given."""
        if self.method != "iro":
            raise FiglangError(f"explanations after a given label need an iro model (figlang train -m iro), not a {self.method} model")
        if self.seq2seq:
            raise FiglangError(
                "explanations after a given label are written by a decoder-only iro model; this one is an "
                "encoder-decoder (use it whole with --method trained, which writes label and explanation)"
            )
        if len(labels) != len(records):
            raise FiglangError(f"explain_given: {len(records)} records but {len(labels)} labels")
        prompts = []
        for r, label in zip(records, labels):
            word = TARGET_WORDS.get(str(label))
            if word is None:
                raise FiglangError(f"record {r.id!r}: an iro model explains {ENTAILMENT} or {CONTRADICTION}, not {label!r}")
            lead = self._ids(f"{word}.")
            prompt = self.prompts(r, str(label))[0]
            prompts.append(prompt[max(0, len(prompt) + len(lead) - (self.max_length - 1)) :] + lead)  # room for one new token at least
        return prompts

    def _predict_generation(self, records: Sequence[Any], batch_size: int) -> list[Prediction]:
        samples = int(self.decoding["samples"])
        seed = int(self.decoding["seed"])
        jobs = [(i, j) for i in range(len(records)) for j in range(samples)]
        prompts = {i: self.prompts(r) for i, r in enumerate(records)}
        order = sorted(jobs, key=lambda x: (sum(len(p) for p in prompts[x[0]]), x))
        raw: dict[tuple[int, int], str] = {}
        done = (lambda toks: sentence_done(self._text(toks))) if self.decoding.get("stop_at_sentence_end", True) else None
        chunks: list[list[tuple[int, int]]] = []
        for job in order:  # batch_size counts prompts (a knowledge item is up to 12 of them); at least one item a batch
            n = len(prompts[job[0]])
            if chunks and sum(len(prompts[i]) for i, _ in chunks[-1]) + n <= max(1, batch_size):
                chunks[-1].append(job)
            else:
                chunks.append([job])
        for chunk in chunks:
            outs = self._decode([prompts[i] for i, _ in chunk], [seed_of(seed, records[i].id, j) for i, j in chunk], done)
            for key, toks in zip(chunk, outs):
                raw[key] = self._text(toks)
        preds = []
        for i, r in enumerate(records):
            raw_samples = [raw[(i, j)] for j in range(samples)]
            preds.append(continuations_prediction(r.id, raw_samples, {"seed": seed_of(seed, r.id, 0)}, {"prompts": len(prompts[i])}))
        return preds


def add_separators(module: HFModel, tokenizer: Any) -> None:
    """Add <sep1>/<sep2> as special tokens (once), growing the embeddings where needed, and start their rows at the
    mean embedding of the real tokens. Qwen pads its matrix past the tokenizer (151,936 rows for 151,665 tokens):
    there the new ids land on spare rows that exist but were never trained, so they are set as well."""
    vocab = tokenizer.get_vocab()
    missing = [t for t in (SEP1, SEP2) if t not in vocab]
    if not missing:
        return
    real = len(tokenizer)  # rows of real tokens: the spare rows of a padded matrix are not averaged in
    tokenizer.add_tokens(missing, special_tokens=True)
    new_ids = tokenizer.convert_tokens_to_ids(missing)
    if len(tokenizer) > module.get_input_embeddings().weight.shape[0]:
        module.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    with torch.no_grad():
        emb = module.get_input_embeddings().weight
        emb[new_ids] = emb[:real].mean(0, keepdim=True)
        out = module.get_output_embeddings()
        if out is not None and out.weight.data_ptr() != emb.data_ptr():
            out.weight[new_ids] = out.weight[:real].mean(0, keepdim=True)


def is_generator_dir(path: str | Path) -> bool:
    try:
        return TRAINED_METHODS[read_figlang_json(path)["method"]][1] == "generator"
    except Exception:
        return False


__all__ = [
    "GeneratorModel",
    "IncrementalDecoder",
    "SEP1",
    "SEP2",
    "add_separators",
    "choose_token",
    "decode_groups",
    "flute_instruction",
    "flute_target",
    "seed_of",
    "sentence_done",
]
