"""Interpret anyone's text: idioms, similes and metaphor candidates, with meanings and literal paraphrases.

    >>> from figlang.interpret import interpret                     # doctest: +SKIP
    >>> interpret("He finally kicked the bucket last year.").expressions[0].canonical
    'kick the bucket'

Layers: :mod:`.lexicon_all` (one lexicon from every idiom resource, cached), :mod:`.detect`
(the narrative miner's matcher and simile patterns, the metaphor lists), :mod:`.paraphrase`
(meanings and the IMPLI builder's substitution), :mod:`.api` (the entry point; ``check`` is :func:`figlang.explain.check`).
"""

from figlang.interpret.api import (
    MAX_CHARS,
    Expression,
    InterpretInputError,
    Interpretation,
    Interpreter,
    UnsupportedLanguageError,
    get_interpreter,
    interpret,
    read_inputs,
    validate_text,
)
from figlang.interpret.lexicon_all import RESOURCES, Holdout, assemble

__all__ = [
    "MAX_CHARS",
    "RESOURCES",
    "Expression",
    "Holdout",
    "InterpretInputError",
    "Interpretation",
    "Interpreter",
    "UnsupportedLanguageError",
    "assemble",
    "get_interpreter",
    "interpret",
    "read_inputs",
    "validate_text",
]


from figlang.core.callable_module import make_callable  # noqa: E402

make_callable(__name__)  # figlang.X(...) keeps working after `import figlang.X`
