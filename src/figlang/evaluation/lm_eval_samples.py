"""lm-evaluation-harness ``--log_samples`` files read as figlang predictions.

A samples file (``samples_<task>_<date>.jsonl``) has one row per doc of a ``multiple_choice``
task: the doc, the requests' arguments and, per choice, ``[loglikelihood, is_greedy]``. The answer
is recomputed from the log-likelihoods as lm-eval's metrics pick it (``np.argmax``: the first best):
``acc`` the largest sum, ``acc_norm`` the largest sum per character of the choice. Rows are
matched to figlang's records by content, never by position or by lm-eval's ``doc_id``: the
narrative (markup removed, case and spacing ignored) and its options for cloze docs, premise and
hypothesis for NLI docs. A content key that several records share (the same item twice in a
split) hands the records out in row order, preferring the one the doc names by ``id``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from figlang.core.errors import DataError
from figlang.data.records import ClozeRecord, NLIPair, Record, strip_markup
from figlang.methods.base import Prediction

FORMATS = {"lm-eval": "acc", "lm-eval-acc_norm": "acc_norm"}  # prediction-file format -> the lm-eval metric it reproduces
DELIMITER = " "


def is_sample(obj: dict[str, Any]) -> bool:
    """Whether a JSON row is an lm-eval logged sample."""
    return "doc" in obj and "doc_id" in obj and "filtered_resps" in obj


def _norm(text: Any) -> str:
    return " ".join(strip_markup(str(text)).split()).lower()


def _continuations(obj: dict[str, Any]) -> list[str]:
    """The continuation of each request (sanitized files: {"gen_args_0": {"arg_0": ctx, "arg_1": cont}}; the API: tuples)."""
    args = obj.get("arguments")
    if isinstance(args, dict):
        return [str(a.get("arg_1", "")) for _, a in sorted(args.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[-1]))]
    if isinstance(args, list):
        return [str(a[1]) for a in args]
    raise DataError("an lm-eval sample without 'arguments'")


def choices(obj: dict[str, Any]) -> list[str]:
    """The choices as lm-eval's metrics measure them: the doc's options/choices, else each continuation without the delimiter."""
    doc = obj["doc"]
    for key in ("options", "choices"):
        if isinstance(doc.get(key), list):
            return [str(c) for c in doc[key]]
    if "option1" in doc and "option2" in doc:
        return [str(doc["option1"]), str(doc["option2"])]
    return [c[len(DELIMITER) :] if c.startswith(DELIMITER) else c for c in _continuations(obj)]


def loglikelihoods(obj: dict[str, Any]) -> list[float]:
    """Per choice, the summed log-likelihood (``filtered_resps``: [[ll, is_greedy], ...], numbers or their strings)."""
    out = []
    for resp in obj["filtered_resps"]:
        value = resp[0] if isinstance(resp, (list, tuple)) else resp
        if isinstance(value, (list, tuple)):  # unfiltered layout [[ll, greedy]]
            value = value[0]
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            raise DataError(f"filtered_resps holds {resp!r}, not [loglikelihood, is_greedy]: is this a multiple_choice task?") from None
    return out


def predicted_index(obj: dict[str, Any], metric: str = "acc") -> int:
    """The choice lm-eval's ``acc`` (or ``acc_norm``, ``acc_bytes``) counts as the answer: the first best."""
    lls = loglikelihoods(obj)
    opts = choices(obj)
    if metric == "acc_norm":
        lls = [ll / max(len(c), 1) for ll, c in zip(lls, opts)]
    elif metric == "acc_bytes":
        lls = [ll / max(len(c.encode("utf-8")), 1) for ll, c in zip(lls, opts)]
    best = 0
    for i, value in enumerate(lls):
        if value > lls[best]:
            best = i
    return best


def _key(doc: dict[str, Any], opts: Sequence[str]) -> tuple[str, ...] | None:
    if "premise" in doc and "hypothesis" in doc:
        return ("nli", _norm(doc["premise"]), _norm(doc["hypothesis"]))
    for field in ("context", "narrative"):
        if field in doc:
            return ("cloze", _norm(doc[field]), *(_norm(o) for o in opts))
    return None


def _record_key(record: Record) -> tuple[str, ...] | None:
    if isinstance(record, ClozeRecord):
        return ("cloze", _norm(record.narrative), *(_norm(o) for o in record.options))
    if isinstance(record, NLIPair):
        return ("nli", _norm(record.premise), _norm(record.hypothesis))
    return None


def matcher(records: Sequence[Record], rows: Sequence[dict[str, Any]]) -> Callable[[dict[str, Any]], str | None]:
    """The row → record id function (see the module's docstring)."""
    by_key: dict[tuple[str, ...], list[str]] = {}
    for r in records:
        key = _record_key(r)
        if key is not None:
            by_key.setdefault(key, []).append(r.id)
    handed_out: set[str] = set()

    def match(obj: dict[str, Any]) -> str | None:
        if not is_sample(obj):
            raise DataError(
                f"not an lm-eval logged sample (fields {sorted(obj)[:6]}); pass the samples_*.jsonl file lm-eval's --log_samples wrote"
            )
        doc = obj["doc"]
        key = _key(doc, choices(obj))
        if key is None:
            raise DataError(
                "an lm-eval doc without context/narrative (cloze) or premise+hypothesis (NLI): cannot match it to a figlang item"
            )
        candidates = by_key.get(key)
        if not candidates:
            return None
        named = str(doc.get("id"))
        if named in candidates and named not in handed_out:
            rid = named
        else:
            free = [i for i in candidates if i not in handed_out]
            rid = free[0] if free else candidates[0]  # none left: a surplus row, reported as a duplicate
        handed_out.add(rid)
        return rid

    return match


def to_prediction(rid: str, obj: dict[str, Any], record: Record | None, metric: str, labels: tuple[str, ...] = ()) -> Prediction:
    """A figlang prediction from one sample: the option index (cloze) or the label (NLI), with lm-eval's scores."""
    try:
        index = predicted_index(obj, metric)
        lls = loglikelihoods(obj)
    except (DataError, KeyError, IndexError) as err:
        return Prediction(rid, None, valid=False, error=f"unreadable lm-eval sample: {err}")
    meta = {"lm_eval_metric": metric, "lm_eval_doc_id": obj.get("doc_id")}
    if isinstance(record, NLIPair):
        doc_labels = obj["doc"].get("labels")
        names = [str(x) for x in doc_labels] if isinstance(doc_labels, list) else choices(obj)
        label = names[index] if index < len(names) else None
        ok = label is not None and (not labels or label in labels)
        return Prediction(
            rid,
            label if ok else None,
            scores=dict(zip(names, lls)),
            raw=str(index),
            valid=ok,
            meta=meta,
            error=None if ok else f"choice {index} ({label!r}) is not one of {', '.join(labels)}",
        )
    n = len(record.options) if isinstance(record, ClozeRecord) else len(lls)
    ok = 0 <= index < n and len(lls) == n
    return Prediction(
        rid, index if ok else None, scores=lls, valid=ok, meta=meta, error=None if ok else f"{len(lls)} log-likelihoods for {n} options"
    )
