"""figlang quiets exactly the Transformers cache-rename deprecation its own calls cause (make run printed it
between progress lines over and over), and no other warning."""

from __future__ import annotations

import logging
import warnings

from figlang.backends.hf_quiet import CACHE_RENAME_LOG, quiet_cache_rename

SEEN = "`past_key_values` is deprecated and will be removed in version 5.40.0 for `LlamaForCausalLM.forward`. Use `cache` instead."


def test_only_the_cache_rename_is_filtered(caplog) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # show every warning once per place, as a terminal does
        quiet_cache_rename()
        quiet_cache_rename()  # idempotent: one filter, not one per model
        assert sum(1 for f in warnings.filters if f[0] == "ignore" and f[2] is FutureWarning and f[1] and "cache" in f[1].pattern) == 1
        for _ in range(3):
            warnings.warn(SEEN, FutureWarning, stacklevel=1)
        warnings.warn("`past_key_values` is deprecated, says someone else", FutureWarning, stacklevel=1)
        warnings.warn(SEEN, UserWarning, stacklevel=1)  # another category: shown
    assert [(str(w.message)[:40], w.category) for w in caught] == [
        ("`past_key_values` is deprecated, says so", FutureWarning),
        (SEEN[:40], UserWarning),
    ]
    logger = logging.getLogger("transformers.utils.generic")
    assert len(logger.filters) == 1
    with caplog.at_level(logging.WARNING, logger="transformers.utils.generic"):
        logger.warning(CACHE_RENAME_LOG)
        logger.warning("another transformers warning")
    assert [r.getMessage() for r in caplog.records] == ["another transformers warning"]
