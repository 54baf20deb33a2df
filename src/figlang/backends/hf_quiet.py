"""Quiet the one Transformers deprecation that figlang's own calls cause, and nothing else.

figlang passes ``past_key_values=`` and reads ``out.past_key_values`` so that one code path runs on
every Transformers it supports (4.44 onwards). Transformers 5 renamed the argument to ``cache`` and
says so on every forward call: a FutureWarning (re-shown whenever the warnings registry is reset,
so ``make run`` printed it between progress lines over and over) and a logged warning. Neither
asks anything of a figlang user, so figlang filters exactly these two messages, by category and
text, when it first runs a model; every other warning (and this one from a user's own code that
calls a model in other ways) still shows.
"""

from __future__ import annotations

import logging
import warnings

# "`past_key_values` is deprecated and will be removed in version 5.40.0 for `LlamaForCausalLM.forward`. Use `cache` instead."
CACHE_RENAME_WARNING = r"`past_key_values` is deprecated and will be removed in version [0-9.]+ for `\w+\.forward`\. Use `cache` instead\."
CACHE_RENAME_LOG = "`past_key_values`/`cache_params` are deprecated. Use `cache` instead."
_LOGGER = "transformers.utils.generic"


class _DropCacheRename(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != CACHE_RENAME_LOG


def quiet_cache_rename() -> None:
    """Install the two filters where figlang runs a Transformers model. Idempotent: the warnings filter is
    moved to the front rather than added twice (``filterwarnings`` replaces an equal entry), the log filter
    is added once."""
    warnings.filterwarnings("ignore", message=CACHE_RENAME_WARNING, category=FutureWarning)
    logger = logging.getLogger(_LOGGER)
    if not any(isinstance(f, _DropCacheRename) for f in logger.filters):
        logger.addFilter(_DropCacheRename())
