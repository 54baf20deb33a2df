"""Prompt templates and verbalizers, as data.

Every template here is a plain ``str.format`` string; methods copy the ones they use into
their ``config()`` so a results file says exactly what the model was shown. Changing a
template changes the method's fingerprint and so invalidates its cached answers.

Sources: the figurative-narrative paper (Chakrabarty et al., TACL 2022, §5: GPT-2 LM
scoring, UnifiedQA, few-shot GPT-3, PET), FLUTE (Chakrabarty et al., EMNLP 2022: the
instruction) and IMPLI (Stowe et al., ACL 2022: entailment vs non-entailment).
"""

from __future__ import annotations

from figlang.data.flute import INSTRUCTION as FLUTE_INSTRUCTION
from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, NLIPair

# --- Cloze: LM scoring -------------------------------------------------------------------
# The narrative is the context, " " + option the continuation (the paper's GPT-2 baseline).
LM_SCORE_CONTINUATION = " {option}"
# Neutral prompts for PMI (log P(C | N) - log P(C | neutral)); the key is the option value.
NEUTRAL_PROMPTS = {"answer": "Answer:", "empty": "", "story": "The story continues:"}
DEFAULT_NEUTRAL = "answer"

# --- Cloze: QA format (UnifiedQA-style) --------------------------------------------------
QA_QUESTION = "Which is more plausible between the two based on the context?"
QA_LETTERS = ("A", "B", "C", "D", "E", "F", "G", "H")
QA_OPTION = "({letter}) {option}"
# Causal model, no chat template: the answer is scored as a continuation after "Answer:".
QA_PLAIN = "Context: {context}\nQuestion: {question}\n{options}\nAnswer:"
QA_PLAIN_LETTER_CONTINUATION = " ({letter})"
QA_PLAIN_TEXT_CONTINUATION = " {option}"
# Instruction model with a chat template: this is the user turn; the answer opens the assistant turn.
QA_CHAT = "{context}\n\nQuestion: {question}\n{options}\nAnswer with the letter of the more plausible option."
QA_CHAT_LETTER_CONTINUATION = "({letter})"
QA_CHAT_TEXT_CONTINUATION = "{option}"
# Seq2seq (UnifiedQA's own input format: lower-cased, literal "\n" separators); target = option text.
QA_SEQ2SEQ = "{question} \\n {options} \\n {context}"
QA_SEQ2SEQ_OPTION = "({letter}) {option}"
QA_SEQ2SEQ_CONTINUATION = "{option}"

# --- Cloze: few-shot (the paper's GPT-3 format) ------------------------------------------
FEW_SHOT_EXAMPLE = "Q: {context} {options} A: ({answer})"
FEW_SHOT_QUERY = "Q: {context} {options} A:"
FEW_SHOT_OPTION = "({number}) {option}"
FEW_SHOT_SEPARATOR = "\n\n"
FEW_SHOT_CONTINUATION = " ({number})"

# --- Cloze: pattern-verbalizer pairs (PET, zero-shot) ------------------------------------
# "N. C. You are ___" (idioms) / "N. C. That was ___" (similes); score = log P(good) - log P(bad).
PET_PATTERNS = {
    "idiom": {"pattern": "{context} {option} You are", "good": " right", "bad": " wrong"},
    "simile": {"pattern": "{context} {option} That was", "good": " expected", "bad": " unexpected"},
}
PET_DEFAULT_KIND = "idiom"  # for expression types other than idiom/simile
# Masked-LM form: the blank is the backend's mask token, written here as {mask}.
PET_MASKED_PATTERNS = {
    "idiom": {"pattern": "{context} {option} You are {mask}.", "good": "right", "bad": "wrong"},
    "simile": {"pattern": "{context} {option} That was {mask}.", "good": "expected", "bad": "unexpected"},
}

# --- Generation ---------------------------------------------------------------------------
GEN_ZERO_SHOT = "{context}"
GEN_FEW_SHOT_EXAMPLE = "Q: {context} A: {continuation}"
GEN_FEW_SHOT_QUERY = "Q: {context} A:"
GEN_FEW_SHOT_SEPARATOR = "\n\n"
# No stop strings: backends cut a sample *before* its stop string, which would drop the sentence's
# end mark (and "\n" would empty a sample that starts with a line break). Samples are at most
# max_new_tokens long and are cut after their first sentence by the method.
GEN_STOP: tuple[str, ...] = ()

# --- NLI -----------------------------------------------------------------------------------
# FLUTE: the dataset's own instruction. IMPLI (entailment vs non-entailment): the same
# question with an entail / does-not-entail answer.
NLI_INSTRUCTIONS = {
    "flute": FLUTE_INSTRUCTION,
    "impli": ('Does the sentence "{premise}" entail the sentence "{hypothesis}"? Please answer between "Entails" or "Does not entail".'),
    "impli-explain": (
        'Does the sentence "{premise}" entail the sentence "{hypothesis}"? '
        'Please answer between "Entails" or "Does not entail" and explain your decision in a sentence.'
    ),
    # question=meaning (nli-score): a same-meaning question that tells the model to read the figure
    # for its intended meaning; chosen on FLUTE *train* pairs (docs/research/zero_shot_results.md).
    "meaning": (
        'Sentence 1: "{premise}"\nSentence 2: "{hypothesis}"\nSentence 2 may use sarcasm, a simile, a metaphor or an '
        "idiom. Read it for what the speaker really means. Does Sentence 2 say the same thing as Sentence 1? "
        'Answer "Yes" or "No".'
    ),
}
# One solved or asked pair in the compact form (explain shots=compact; the examples an iro writer reads)
COMPACT_PAIR = "Premise: {premise}\nHypothesis: {hypothesis}"
# Label words by label set; scored as the first words of the answer.
NLI_LABEL_WORDS = {
    "flute": {ENTAILMENT: "Entails", CONTRADICTION: "Contradicts"},
    "impli": {ENTAILMENT: "Entails", NON_ENTAILMENT: "Does not entail"},
    "meaning": {ENTAILMENT: "Yes", CONTRADICTION: "No", NON_ENTAILMENT: "No"},
}


def flute_answer(pair: NLIPair) -> str:
    """A solved FLUTE pair's answer as its examples show it: the label word, a full stop, the explanation on one line."""
    return f"{NLI_LABEL_WORDS['flute'][str(pair.label)]}. {' '.join((pair.explanation or '').split())}"


# Without a chat template the instruction is followed by this, and the answer continues it.
NLI_PLAIN = "{instruction}\nAnswer:"
# An in-context example (shots=K) without a chat template: its instruction and its answer.
NLI_PLAIN_SHOT = "{instruction}\nAnswer: {answer}\n\n"
NLI_PLAIN_LABEL_CONTINUATION = " {word}"
NLI_CHAT_LABEL_CONTINUATION = "{word}"
# After the chosen label word, the explanation is generated from here.
NLI_AFTER_LABEL = "."
# Contextual calibration (Zhao et al. 2021): the content-free input whose label scores are subtracted.
NLI_CONTENT_FREE = {"premise": "N/A", "hypothesis": "N/A"}


def nli_family(labels: tuple[str, ...] | list[str]) -> str:
    """Which wording a label set takes: 'impli' when it has non-entailment, else 'flute'."""
    return "impli" if NON_ENTAILMENT in labels else "flute"
