"""lm-evaluation-harness's ``multiple_choice`` request, asked the way lm-eval 0.4.x asks it.

What ``-O input=lm-eval`` of ``lm-score`` (cloze) and ``nli-score`` (NLI) shares with the tasks
`figlang export lm-eval` writes: the context is the doc's text, the continuation the target delimiter
and the choice, the two tokenized jointly, and the choices ranked by lm-eval's ``acc`` (summed
log-probability), ``acc_norm`` (per character) or ``acc_bytes`` (per UTF-8 byte). Under it figlang's
predictions equal lm-eval's item for item (tests/test_lm_eval_interop.py).
"""

from __future__ import annotations

from figlang.backends.base import ScoreRequest

LM_EVAL_DELIMITER = " "  # its target_delimiter
LM_EVAL_NORMS = {"sum": "acc", "char": "acc_norm", "byte": "acc_bytes"}


def lm_eval_request(context: str, choice: str) -> ScoreRequest:
    """lm-evaluation-harness's loglikelihood request for one choice: the continuation is the target
    delimiter + the choice, the context's trailing whitespace moves to the continuation, and the two are
    tokenized jointly (``TemplateLM._encode_pair``)."""
    continuation = LM_EVAL_DELIMITER + choice
    stripped = context.rstrip()
    if stripped != context:
        continuation = context[len(stripped) :] + continuation
        context = stripped
    return ScoreRequest(context, continuation, joint=True)


def lm_eval_score(logprob: float, choice: str, norm: str) -> float:
    """A choice's score as lm-eval ranks it: ``acc`` the summed log-probability, ``acc_norm`` divided by
    the choice's length in characters, ``acc_bytes`` by its UTF-8 length (the delimiter not counted)."""
    if norm == "char":
        return logprob / max(len(choice), 1)
    if norm == "byte":
        return logprob / max(len(choice.encode("utf-8")), 1)
    return logprob
