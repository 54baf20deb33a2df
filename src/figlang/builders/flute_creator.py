"""The FLUTE model-in-the-loop creator (Chakrabarty et al., EMNLP 2022, section 2 and appendix A).

From figurative inputs (idioms with meanings, similes with properties, metaphors, literal sentences
with an emotion for sarcasm) a language model writes, with the paper's few-shot prompts, an
entailment pair and a contradiction pair per input and a one-sentence explanation for each; every
output goes through automatic checks and is resampled (new seed) up to ``rounds`` times when a check
or a reviewer rejects it. People then verify the candidates (:mod:`figlang.builders.flute_review`).

Per figure type (hypothesis = the figurative side, premise = the literal side, as in FLUTE's files):

* idiom: [the model writes an idiomatic sentence when the input has none] → one call writes the
  literal entailment and the literal contradiction jointly from idiom + meaning + sentence →
  explanations;
* simile: simile replaced by its property → literal sentence → creative paraphrase keeping the
  property (entailment premise) and minimal-edit inversion of the property (contradiction premise),
  with the original work's prompts verbatim → explanations;
* metaphor: literal paraphrase (entailment premise) → minimal-edit inversion of it (contradiction) →
  explanations;
* sarcasm: creative paraphrase of the literal sentence given its emotion (entailment hypothesis) →
  the sarcastic contradiction is written by people (:mod:`.flute_edits`), as in
  the paper (or by the model with ``sarcasm_contradiction="model"``) → explanations.

Resumable: each finished input is appended to ``OUT/items.jsonl`` (flushed and fsynced); every model
call is stored in figlang's SQLite request cache (``OUT/cache/requests.sqlite``), so a crash or an
endpoint timeout loses at most the call in flight and rerunning the same command continues. Final
files (``candidates.jsonl``, ``failed.jsonl``, ``summary.json``) are written atomically.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from figlang.core.errors import DataError, FiglangError
from figlang.core.io import parse_jsonl, read_jsonl, write_json, write_jsonl
from figlang.backends.cache import RequestCache, cache_key
from figlang.builders.flute_checks import (
    Check,
    CheckContext,
    CheckLimits,
    PromptSet,
    StepTemplate,
    builtin_checks,
    load_prompts,
    one_sentence,
    parse_answer,
)
from figlang.builders.flute_inputs import InputSet, SourceItem
from figlang.builders.review_queue import REVIEW_DIR, verdicts_by_revision
from figlang.backends.base import BackendError, ChatMessage, GenerationRequest

CREATOR_VERSION = "figlang-flute-creator/1"
DEFAULT_MODEL = "smollm2-135m"
LABELS = {"E": "Entailment", "C": "Contradiction"}
STOP = ("\n\n",)

ITEMS_FILE = "items.jsonl"
CANDIDATES_FILE = "candidates.jsonl"
FAILED_FILE = "failed.jsonl"
WAITING_FILE = "awaiting_edits.jsonl"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
EDITS_FILE = "human_edits.jsonl"

ProgressFn = Callable[[str, dict], None]


def _no_progress(event: str, payload: dict) -> None:
    return None


@dataclass
class CreatorConfig:
    """Model, decoding and resampling. Decoding defaults come from ``flute_prompts/decoding.yaml``."""

    model: str = DEFAULT_MODEL
    temperature: float | None = None
    top_p: float | None = None
    max_new_tokens: int | None = None
    rounds: int | None = None
    seed: int = 0
    chat: str = "false"  # false: GPT-3-style completion of the few-shot prompt (the paper); true | auto: the chat template
    sarcasm_contradiction: str = "human"  # human (the paper) | model
    limits: CheckLimits = field(default_factory=CheckLimits)
    backend_options: dict[str, Any] = field(default_factory=dict)

    def resolved(self, prompts: PromptSet) -> CreatorConfig:
        d = prompts.decoding
        out = CreatorConfig(**{**asdict(self), "limits": self.limits})
        out.temperature = float(d.get("temperature", 0.7)) if self.temperature is None else float(self.temperature)
        out.top_p = float(d.get("top_p", 1.0)) if self.top_p is None else float(self.top_p)
        out.max_new_tokens = int(d.get("max_new_tokens", 64)) if self.max_new_tokens is None else int(self.max_new_tokens)
        out.rounds = int(d.get("rounds", 3)) if self.rounds is None else int(self.rounds)
        if out.rounds < 1:
            raise FiglangError("rounds must be at least 1")
        if out.temperature < 0 or not 0 < out.top_p <= 1:
            raise FiglangError("temperature must be >= 0 (0 = greedy) and top_p in (0, 1]")
        if out.chat not in ("auto", "true", "false"):
            raise FiglangError(f"chat must be auto, true or false, got {out.chat!r}")
        if out.sarcasm_contradiction not in ("human", "model"):
            raise FiglangError(f"sarcasm_contradiction must be human or model, got {out.sarcasm_contradiction!r}")
        return out

    def sampling(self) -> tuple[float, float, int]:
        """(temperature, top_p, max_new_tokens) of a config that :meth:`resolved` made (none of them None then)."""
        return cast(float, self.temperature), cast(float, self.top_p), cast(int, self.max_new_tokens)

    def record(self) -> dict[str, Any]:
        d = asdict(self)
        d["limits"] = asdict(self.limits)
        return d


# --- the per-item plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlotPlan:
    """How one text of an item is made: a model step (or the input, or a person) and its checks."""

    name: str  # H | E.text | C.text | E.expl | C.expl
    kind: str  # sentence | literal | contradiction | explanation
    step: str | None  # template step; None: the text is given (input)
    given: str | None = None
    needs: tuple[str, ...] = ()  # slots that must be ok first
    output: str = "text"  # which parsed answer (joint steps: "entailment" / "contradiction")
    human: bool = False


def plan_for(item: SourceItem, sarcasm_model: bool) -> list[SlotPlan]:
    t = item.figure_type
    if t == "idiom":
        h = SlotPlan("H", "sentence", None, item.get("sentence")) if item.get("sentence") else SlotPlan("H", "sentence", "sentence")
        joint = "paraphrase_and_contradiction"
        return [
            h,
            SlotPlan("E.text", "literal", joint, needs=("H",), output="entailment"),
            SlotPlan("C.text", "contradiction", joint, needs=("H",), output="contradiction"),
            SlotPlan("E.expl", "explanation", "explanation_entailment", needs=("H", "E.text")),
            SlotPlan("C.expl", "explanation", "explanation_contradiction", needs=("H", "C.text")),
        ]
    if t in ("simile", "metaphor"):
        c_needs = ("E.text",) if t == "metaphor" else ()
        return [
            SlotPlan("H", "sentence", None, item.get("sentence")),
            SlotPlan("E.text", "literal", "paraphrase"),
            SlotPlan("C.text", "contradiction", "contradiction", needs=c_needs),
            SlotPlan("E.expl", "explanation", "explanation_entailment", needs=("E.text",)),
            SlotPlan("C.expl", "explanation", "explanation_contradiction", needs=("C.text",)),
        ]
    if t == "sarcasm":
        return [
            SlotPlan("H", "sentence", None, item.get("sentence")),  # for sarcasm "H" is the literal premise
            SlotPlan("E.text", "literal", "paraphrase"),
            SlotPlan("C.text", "contradiction", "contradiction", needs=("E.text",), human=not sarcasm_model),
            SlotPlan("E.expl", "explanation", "explanation_entailment", needs=("E.text",)),
            SlotPlan("C.expl", "explanation", "explanation_contradiction", needs=("C.text",)),
        ]
    raise FiglangError(f"unknown figure type {t!r}")


def pair_sides(item: SourceItem, texts: dict[str, str], side: str) -> tuple[str, str]:
    """(premise, hypothesis) of pair ``side`` (E or C) from the item's slot texts."""
    gen = texts.get(f"{side}.text", "")
    if item.figure_type == "sarcasm":
        return texts.get("H", ""), gen  # literal premise, (sarcastic) paraphrase hypothesis
    return gen, texts.get("H", "")  # literal premise, figurative hypothesis


def _template_values(item: SourceItem, slot: SlotPlan, texts: dict[str, str]) -> dict[str, str]:
    t, f = item.figure_type, item.fields
    if t == "idiom":
        v = {"idiom": f["idiom"], "meaning": f["meaning"], "sentence": texts.get("H", ""), "figurative": texts.get("H", "")}
        if slot.name.endswith(".expl"):
            v["literal"] = texts.get(slot.name[0] + ".text", "")
        return v
    if t == "simile":
        return {
            "sentence": f["literal"],
            "preserve": f["property"],
            "prop": f["property"],
            "simile": f["sentence"],
            "entail": texts.get("E.text", ""),
            "contra": texts.get("C.text", ""),
        }
    if t == "metaphor":
        v = {"metaphor": f.get("metaphor") or "(not marked)", "meaning": f.get("meaning") or "(not given)", "figurative": f["sentence"]}
        v["sentence"] = f["sentence"] if slot.name == "E.text" else texts.get("E.text", "")
        if slot.name.endswith(".expl"):
            v["literal"] = texts.get(slot.name[0] + ".text", "")
        return v
    v = {"sentence": f["sentence"], "emotion": f["emotion"], "paraphrase": texts.get("E.text", ""), "literal": f["sentence"]}
    if slot.name.endswith(".expl"):
        v["figurative"] = texts.get(slot.name[0] + ".text", "")
    return v


def _check_context(item: SourceItem, slot: SlotPlan, texts: dict[str, str], parsed: dict[str, str]) -> dict[str, str]:
    """What the checks compare a candidate with: the sentence it rewrites, the pair's other side …"""
    t = item.figure_type
    ctx: dict[str, str] = {}
    if slot.name.endswith(".expl"):
        premise, hypothesis = pair_sides(item, texts, slot.name[0])
        return {"premise": premise, "hypothesis": hypothesis}
    if slot.name == "H":
        return ctx
    ctx["other_side"] = texts.get("H", "")  # premise vs hypothesis
    if t == "idiom":
        ctx["base"] = texts.get("H", "")
        if slot.name == "C.text":
            ctx["base"] = parsed.get("entailment") or texts.get("E.text", "")  # minimal edit of the joint entailment
            ctx["entailment"] = texts.get("E.text", "") or parsed.get("entailment", "")
    elif t == "simile":
        ctx["base"] = item.get("literal")
        if slot.name == "C.text":
            ctx["entailment"] = texts.get("E.text", "")
    elif t == "metaphor":
        ctx["base"] = item.get("sentence") if slot.name == "E.text" else texts.get("E.text", "")
        if slot.name == "C.text":
            ctx["entailment"] = texts.get("E.text", "")
    else:  # sarcasm: both sides rewrite the literal sentence; the contradiction edits the paraphrase
        ctx["base"] = item.get("sentence") if slot.name == "E.text" else texts.get("E.text", "")
        if slot.name == "C.text":
            ctx["entailment"] = texts.get("E.text", "")
    return ctx


# --- the run state ----------------------------------------------------------------------------------


def new_record(item: SourceItem) -> dict[str, Any]:
    return {"uid": item.uid, "item": item.to_dict(), "slots": {}, "revisions": {"E": 0, "C": 0}}


def _slot_state(rec: dict[str, Any], name: str) -> dict[str, Any]:
    return rec["slots"].setdefault(name, {"status": "open", "text": None, "attempts": [], "reason": None})


def texts_of(rec: dict[str, Any]) -> dict[str, str]:
    return {k: s["text"] for k, s in rec["slots"].items() if s.get("status") == "ok" and s.get("text")}


def read_journal(path: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The last record per uid; a torn last line (a crash mid-write) is ignored and noted."""
    records: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    if not path.exists():
        return records, notes
    for number, rec, _ in parse_jsonl(path.read_text(encoding="utf-8")):
        if rec is None or "uid" not in rec:
            notes.append(f"{path}:{number}: unreadable journal line ignored (an interrupted write); that item is redone")
            continue
        records[rec["uid"]] = rec
    return records, notes


def _append(path: Path, rec: dict[str, Any]) -> None:
    """Append one record on a line of its own (after a torn last line, start a new line first)."""
    torn = False
    if path.exists() and path.stat().st_size:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            torn = f.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(("\n" if torn else "") + json.dumps(rec, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


# --- pairs ------------------------------------------------------------------------------------------


def pair_id(uid: str, side: str) -> str:
    return f"{uid}-{side}"


def pairs_of(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The item's two pairs with their status: candidate | failed | awaiting_edit | pending."""
    item = SourceItem.from_dict(rec["item"])
    texts = texts_of(rec)
    out = []
    for side in ("E", "C"):
        premise, hypothesis = pair_sides(item, texts, side)
        slots = [rec["slots"].get(n, {}) for n in ("H", f"{side}.text", f"{side}.expl")]
        statuses = [s.get("status", "open") for s in slots]
        if all(s == "ok" for s in statuses):
            status, reason = "candidate", None
        elif any(s in ("failed", "blocked") for s in statuses):
            status = "failed"
            reason = "; ".join(
                f"{n}: {s.get('reason')}"
                for n, s in zip(("H", f"{side}.text", f"{side}.expl"), slots)
                if s.get("status") in ("failed", "blocked")
            )
        elif any(s == "pending_human" for s in statuses):
            status, reason = "awaiting_edit", "the sarcastic contradiction is written by a person: export-edits / import-edits"
        else:
            status, reason = "pending", "not generated yet"
        text_slot = rec["slots"].get(f"{side}.text", {})
        out.append(
            {
                "id": pair_id(item.uid, side),
                "revision": rec.get("revisions", {}).get(side, 0),
                "uid": item.uid,
                "figure_type": item.figure_type,
                "index": item.index,
                "label": LABELS[side],
                "premise": premise,
                "hypothesis": hypothesis,
                "explanation": texts.get(f"{side}.expl", ""),
                "expression": item.expression,
                "meaning": item.get("meaning") or item.get("property") or item.get("emotion") or None,
                "source": item.source,
                "user_id": item.user_id,
                "status": status,
                "reason": reason,
                "written_by": text_slot.get("source", "model"),
                "attempts": {n: len(rec["slots"].get(n, {}).get("attempts", [])) for n in ("H", f"{side}.text", f"{side}.expl")},
            }
        )
    return out


# --- the creator ------------------------------------------------------------------------------------


@dataclass
class CreateSummary:
    out_dir: Path
    config: dict[str, Any]
    items: Counter = field(default_factory=Counter)  # per type
    resumed: int = 0
    ran: int = 0
    pairs: dict[str, Counter] = field(default_factory=dict)  # type -> status -> n
    check_failures: Counter = field(default_factory=Counter)  # check name -> rejected outputs
    check_failures_by_type: dict[str, Counter] = field(default_factory=dict)
    resampled: Counter = field(default_factory=Counter)  # type -> slots needing > 1 attempt
    reviewer_resampled: int = 0
    attempts: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    interrupted: str | None = None
    notes: list[str] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "config": self.config,
            "items": dict(self.items),
            "resumed": self.resumed,
            "ran": self.ran,
            "pairs": {t: dict(c) for t, c in self.pairs.items()},
            "check_failures": dict(self.check_failures.most_common()),
            "check_failures_by_type": {t: dict(c.most_common()) for t, c in self.check_failures_by_type.items()},
            "resampled_slots": dict(self.resampled),
            "reviewer_resampled_pairs": self.reviewer_resampled,
            "attempts": self.attempts,
            "model_calls": self.model_calls,
            "cache_hits": self.cache_hits,
            "seconds": round(self.seconds, 1),
            "interrupted": self.interrupted,
            "notes": self.notes,
            "failed_pairs": len(self.failed),
        }

    def count(self, status: str, figure_type: str | None = None) -> int:
        if figure_type is not None:
            return self.pairs.get(figure_type, Counter())[status]
        return sum(c[status] for c in self.pairs.values())


class FluteCreator:
    """Runs the per-item plans against one backend, with checks, resampling and a request cache."""

    def __init__(
        self, config: CreatorConfig, prompts: PromptSet | None = None, extra_checks: Sequence[Check] = (), cache: Any = None, lm: Any = None
    ) -> None:
        self.prompts = prompts or load_prompts()
        self.config = config.resolved(self.prompts)
        self.extra_checks = list(extra_checks)
        self.cache = cache
        self._lm = lm
        self._use_chat: bool | None = None
        self.calls = 0
        self.hits = 0

    # the backend is loaded on the first call that the cache cannot answer
    @property
    def lm(self) -> Any:
        if self._lm is None:
            from figlang.methods.prompted import backend_for

            self._lm = backend_for(self.config.model, **self.config.backend_options)
        return self._lm

    @property
    def use_chat(self) -> bool:
        if self._use_chat is None:
            chat = self.config.chat
            if chat == "true" and not self.lm.has_chat_template:
                raise FiglangError(f"chat=true but {self.config.model} has no chat template")
            self._use_chat = chat == "true" or (chat == "auto" and bool(self.lm.has_chat_template))
        return self._use_chat

    def fingerprint(self) -> dict[str, Any]:
        """What must be equal for a rerun to continue a run (else: --restart)."""
        return {
            "version": CREATOR_VERSION,
            "config": self.config.record(),
            "prompts": self.prompts.digest,
            "extra_checks": [getattr(c, "__name__", repr(c)) for c in self.extra_checks],
        }

    def decoding(self) -> dict[str, Any]:
        c = self.config
        temperature, top_p, max_new_tokens = c.sampling()
        return {
            "temperature": temperature,
            "top_p": top_p,
            "max_new_tokens": max_new_tokens,
            "do_sample": temperature > 0,
            "stop": list(STOP),
            "chat": c.chat,
        }

    def seed_for(self, item: SourceItem, step: str, round_: int) -> int:
        from figlang.methods.prompted import item_seed

        return item_seed(self.config.seed, f"{item.uid}:{step}:{round_}")

    def generate_raw(self, template: StepTemplate, values: dict[str, str], seed: int) -> str:
        text = template.render(values)
        key = None
        if self.cache is not None:
            key = cache_key(CREATOR_VERSION, self.config.model, self.config.backend_options, text, self.decoding(), seed)
            hit = self.cache.get(key)
            if hit is not None:
                self.hits += 1
                return hit["raw"]
        prompt = self.lm.chat_prompt([ChatMessage("user", text)]) if self.use_chat else text
        temperature, top_p, max_new_tokens = self.config.sampling()
        request = GenerationRequest(
            prompt,
            max_new_tokens=max_new_tokens,
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else 1.0,
            top_p=top_p if top_p < 1 else None,
            stop=STOP,
            seed=seed,
        )
        raw = self.lm.generate([request])[0][0]
        self.calls += 1
        if self.cache is not None and key is not None:
            self.cache.put(key, {"raw": raw, "model": self.lm.fingerprint()}, namespace="flute-creator")
        return raw

    def run_checks(self, ctx: CheckContext) -> list[str]:
        failed = builtin_checks(ctx, self.config.limits)
        for check in self.extra_checks:
            name = check(ctx)
            if name:
                failed.append(str(name))
        return failed

    def process(self, rec: dict[str, Any], human_edit: dict[str, Any] | None = None) -> dict[str, Any]:
        """Bring every slot of the item to a final state (ok / failed / blocked / pending_human)."""
        item = SourceItem.from_dict(rec["item"])
        for slot in plan_for(item, self.config.sarcasm_contradiction == "model"):
            st = _slot_state(rec, slot.name)
            texts = texts_of(rec)
            basis = {n: texts.get(n) for n in slot.needs}
            if slot.kind == "explanation" and st["status"] in ("ok", "failed") and st.get("basis") not in (None, basis):
                # the sentence it explains changed (a reviewer-triggered resample or a new human edit): explain anew
                st["history"] = st.get("history", []) + st["attempts"]
                st.update(status="open", text=None, reason=None, attempts=[])
            if st["status"] in ("ok", "failed") and not (slot.human and human_edit and st.get("edit_key") != human_edit["key"]):
                continue
            blocked = [n for n in slot.needs if rec["slots"].get(n, {}).get("status") != "ok"]
            if blocked:
                waiting = [n for n in blocked if rec["slots"].get(n, {}).get("status") in ("pending_human", "open")]
                if waiting and not [n for n in blocked if n not in waiting]:
                    st["status"], st["reason"] = "pending_human", f"waits for {', '.join(waiting)}"
                else:
                    st["status"], st["reason"] = "blocked", f"needs {', '.join(blocked)}, which failed"
                continue
            if slot.step is None:
                self._given(item, slot, st, texts)
            elif slot.human:
                self._human(item, slot, st, texts, human_edit)
            else:
                self._sample(item, slot, st, texts)
            st["basis"] = basis
        return rec

    def _given(self, item: SourceItem, slot: SlotPlan, st: dict[str, Any], texts: dict[str, str]) -> None:
        st.update(status="ok", text=slot.given, source="input", reason=None)

    def _human(self, item: SourceItem, slot: SlotPlan, st: dict[str, Any], texts: dict[str, str], edit: dict[str, Any] | None) -> None:
        if edit is None:
            st.update(status="pending_human", reason="no human edit imported yet")
            return
        text = " ".join(str(edit["text"]).split())
        ctx = CheckContext(item, slot.name, slot.kind, text, len(st["attempts"]), _check_context(item, slot, texts, {}), source="human")
        failed = self.run_checks(ctx)
        st["attempts"].append({"round": len(st["attempts"]), "source": "human", "from": edit.get("where"), "text": text, "failed": failed})
        st["edit_key"] = edit["key"]
        st["source"] = "human"
        if failed:
            st.update(status="failed", text=None, reason=f"the imported edit ({edit.get('where')}) fails: {', '.join(failed)}")
        else:
            st.update(status="ok", text=text, reason=None)

    def _sample(self, item: SourceItem, slot: SlotPlan, st: dict[str, Any], texts: dict[str, str]) -> None:
        template = self.prompts.get(item.figure_type, slot.step)  # type: ignore[arg-type]
        values = _template_values(item, slot, texts)
        while len(st["attempts"]) < self.config.rounds:  # type: ignore[operator]
            r = len(st["attempts"])
            seed = self.seed_for(item, slot.step, r)  # type: ignore[arg-type]
            raw = self.generate_raw(template, values, seed)
            parsed = parse_answer(raw, template)
            text = parsed.get(slot.output, "")
            if slot.kind == "explanation":
                text = one_sentence(text)
            ctx = CheckContext(item, slot.name, slot.kind, text, r, _check_context(item, slot, texts, parsed))
            failed = self.run_checks(ctx)
            st["attempts"].append({"round": r, "seed": seed, "raw": raw, "text": text, "failed": failed})
            if not failed:
                st.update(status="ok", text=text, source="model", reason=None)
                return
        last = st["attempts"][-1] if st["attempts"] else {}
        why = (
            "rejected by the reviewer"
            if last.get("reviewer_rejected")
            else f"last output failed {', '.join(last.get('failed', [])) or '?'}"
        )
        st.update(status="failed", text=None, reason=f"no acceptable output in {len(st['attempts'])} round(s) ({why})")


def reopen_rejected(rec: dict[str, Any], side: str, rounds: int) -> bool:
    """A reviewer rejected pair ``side``: its generated sentence and explanation get a new round (if any left)."""
    rec.setdefault("revisions", {"E": 0, "C": 0})
    rec["revisions"][side] = rec["revisions"].get(side, 0) + 1
    changed = False
    for name in (f"{side}.text", f"{side}.expl"):
        st = rec["slots"].get(name)
        if not st or st.get("source") == "input":
            continue
        if st["attempts"]:
            st["attempts"][-1]["reviewer_rejected"] = True
        if st.get("source") == "human":
            st.update(status="failed", text=None, reason="the reviewer rejected the human edit: import a new edit to replace it")
            continue
        if len(st["attempts"]) >= rounds:
            st.update(status="failed", text=None, reason=f"rejected by the reviewer after {len(st['attempts'])} round(s); no rounds left")
        else:
            st.update(status="open", text=None, reason=None)
        changed = True
    return changed


def load_human_edits(out_dir: Path) -> dict[str, dict[str, Any]]:
    path = out_dir / EDITS_FILE
    return {obj["uid"]: obj for obj in read_jsonl(path)}


def _is_settled(rec: dict[str, Any], item: SourceItem, sarcasm_model: bool, edit: dict[str, Any] | None) -> bool:
    for slot in plan_for(item, sarcasm_model):
        st = rec["slots"].get(slot.name)
        if st is None or st["status"] == "open":
            return False
        if slot.human and edit is not None and st.get("edit_key") != edit["key"]:
            return False
        if (
            st["status"] == "pending_human"
            and (edit is not None or slot.name.endswith(".expl"))
            and rec["slots"].get("C.text", {}).get("status") == "ok"
        ):
            return False
    return True


def create(
    inputs: Iterable[InputSet],
    out_dir: str | Path,
    config: CreatorConfig | None = None,
    *,
    prompts: PromptSet | None = None,
    extra_checks: Sequence[Check] = (),
    restart: bool = False,
    resample_rejected: bool = False,
    progress: ProgressFn = _no_progress,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    lm: Any = None,
) -> CreateSummary:
    """Generate FLUTE candidates for ``inputs`` into ``out_dir`` (resumable; see the module docstring)."""
    started = time.monotonic()
    out = Path(out_dir)
    if restart and out.exists():
        for name in (ITEMS_FILE, CANDIDATES_FILE, FAILED_FILE, WAITING_FILE, SUMMARY_FILE, CONFIG_FILE):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / REVIEW_DIR, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    cache = RequestCache(Path(cache_dir) if cache_dir else out / "cache") if use_cache else None
    creator = FluteCreator(config or CreatorConfig(), prompts, extra_checks, cache, lm)
    fp = _write_config(out, creator)
    summary = CreateSummary(out, fp["config"])
    items: list[SourceItem] = []
    for inp in inputs:
        items.extend(inp.items)
        summary.notes.extend(f"input: {p}" for p in inp.problems)
    uids = [i.uid for i in items]
    if len(set(uids)) != len(uids):
        raise FiglangError("two inputs of the same figure type: pass one input per figure type")
    journal = _journal(out, items, summary)
    if resample_rejected:
        _reopen_rejected_pairs(out, journal, creator.config.rounds, summary)  # type: ignore[arg-type]
    progress("plan", {"total": len(items), "resumed": sum(1 for it in items if it.uid in journal)})
    summary.items.update(it.figure_type for it in items)
    records = _run_items(creator, items, journal, load_human_edits(out), out / ITEMS_FILE, summary, progress)
    summary.model_calls, summary.cache_hits = creator.calls, creator.hits
    _write_outputs(out, [records[u] for u in uids if u in records], summary, pending=[u for u in uids if u not in records])
    summary.seconds = time.monotonic() - started
    write_json(out / SUMMARY_FILE, summary.to_dict())
    if cache is not None:
        cache.close()
    return summary


def _write_config(out: Path, creator: FluteCreator) -> dict[str, Any]:
    """The run's fingerprint, written to config.json with the decoding; a run made with other settings is refused."""
    fp = creator.fingerprint()
    cfg_path = out / CONFIG_FILE
    if cfg_path.exists():
        old = json.loads(cfg_path.read_text(encoding="utf-8"))
        if old.get("fingerprint") != fp:
            diff = sorted(
                k
                for k in set(old.get("fingerprint", {}).get("config", {})) | set(fp["config"])
                if old.get("fingerprint", {}).get("config", {}).get(k) != fp["config"].get(k)
            )
            raise FiglangError(
                f"{out} holds a run made with other settings ({', '.join(diff) or 'prompts or checks'} differ); "
                "rerun with the same settings to continue it, or pass --restart to start again"
            )
    write_json(
        cfg_path,
        {
            "fingerprint": fp,
            "decoding": creator.decoding(),
            "prompts_folder": creator.prompts.folder,
            "decoding_defaults": creator.prompts.decoding,
        },
    )
    return fp


def _journal(out: Path, items: list[SourceItem], summary: CreateSummary) -> dict[str, dict[str, Any]]:
    """The records an earlier run left (items.jsonl), refused when they were made from other inputs."""
    journal, notes = read_journal(out / ITEMS_FILE)
    summary.notes.extend(notes)
    for it in items:
        old = journal.get(it.uid)
        if old is not None and old["item"]["fields"] != it.fields:
            raise FiglangError(
                f"{out}: item {it.uid} was made from another input ({old['item']['source']}); "
                "the inputs changed since the run started: pass --restart, or use a new --out"
            )
    return journal


def _reopen_rejected_pairs(out: Path, journal: dict[str, dict[str, Any]], rounds: int, summary: CreateSummary) -> None:
    """--resample-rejected: give each pair the reviewer rejected (in its current revision) a new round."""
    for (pid, revision), verdict in verdicts_by_revision(out).items():
        uid, side = pid.rsplit("-", 1)
        rec = journal.get(uid)
        if rec is None or verdict["verdict"] != "reject" or rec.get("revisions", {}).get(side, 0) != revision:
            continue
        if reopen_rejected(rec, side, rounds):
            summary.reviewer_resampled += 1


def _run_items(
    creator: FluteCreator,
    items: list[SourceItem],
    journal: dict[str, dict[str, Any]],
    edits: dict[str, dict[str, Any]],
    journal_path: Path,
    summary: CreateSummary,
    progress: ProgressFn,
) -> dict[str, dict[str, Any]]:
    """Each item's record: a settled one from the journal, the others generated (and journalled) now. A backend error
    or an interrupt stops the run, keeping what is finished (``summary.interrupted`` says how to continue)."""
    sarcasm_model = creator.config.sarcasm_contradiction == "model"
    records: dict[str, dict[str, Any]] = {}
    try:
        for it in items:
            rec = journal.get(it.uid)
            edit = edits.get(it.uid) if it.figure_type == "sarcasm" else None
            if rec is not None and _is_settled(rec, it, sarcasm_model, edit):
                summary.resumed += 1
                records[it.uid] = rec
                progress("item", {"uid": it.uid, "resumed": True})
                continue
            rec = rec or new_record(it)
            rec["item"] = it.to_dict()
            creator.process(rec, edit)
            _append(journal_path, rec)
            records[it.uid] = rec
            summary.ran += 1
            progress("item", {"uid": it.uid, "resumed": False})
    except (KeyboardInterrupt, Exception) as err:  # keep what is finished, say how to continue
        if not isinstance(err, (KeyboardInterrupt, BackendError, OSError, TimeoutError)):
            raise
        summary.interrupted = f"{type(err).__name__}: {err}. Finished items are kept in {journal_path}; rerun the same command to continue."
        for it in items:
            if it.uid not in records and it.uid in journal:
                records[it.uid] = journal[it.uid]
    return records


def _write_outputs(out: Path, records: list[dict[str, Any]], summary: CreateSummary, pending: list[str]) -> None:
    candidates: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for rec in records:
        ftype = rec["item"]["figure_type"]
        for st in rec["slots"].values():
            model_attempts = [a for a in st.get("attempts", []) if a.get("source", "model") == "model"]
            summary.attempts += len(model_attempts)
            if len(model_attempts) > 1:
                summary.resampled[ftype] += 1
            for a in st.get("attempts", []):
                for name in a.get("failed", []):
                    summary.check_failures[name] += 1
                    summary.check_failures_by_type.setdefault(ftype, Counter())[name] += 1
        for p in pairs_of(rec):
            summary.pairs.setdefault(ftype, Counter())[p["status"]] += 1
            {"candidate": candidates, "failed": failed, "awaiting_edit": waiting}.get(p["status"], failed).append(p)
    for uid in pending:
        summary.pairs.setdefault(uid.rsplit("-", 1)[0], Counter())["not_run"] += 2
    summary.failed = failed
    write_jsonl(out / CANDIDATES_FILE, candidates)
    write_jsonl(out / FAILED_FILE, failed)
    write_jsonl(out / WAITING_FILE, waiting)


def load_records(out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """The run's item records (last journal entry per item)."""
    path = Path(out_dir) / ITEMS_FILE
    if not path.exists():
        raise DataError("no FLUTE creator run here (items.jsonl is missing): run `figlang build flute generate` first", path)
    return read_journal(path)[0]


def load_candidates(out_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(out_dir) / CANDIDATES_FILE
    if not path.exists():
        raise DataError("no candidates here: run `figlang build flute generate` first", path)
    return read_jsonl(path)


__all__ = [
    "CreateSummary",
    "CreatorConfig",
    "FluteCreator",
    "create",
    "load_candidates",
    "load_records",
    "pairs_of",
    "plan_for",
]
