"""Write RUN/norms.json: an lm-score norm=pmi run's accuracy under sum / token / char / pmi, from its predictions.

    python scripts/derive_norms.py docs/results/suite-smollm2/idiom-dev docs/results/suite-smollm2/simile-dev

docs/research/zero_shot_results.md quotes these beside each pmi run; the registry reads them from norms.json, and
tests/test_norms.py recomputes the file from the committed predictions.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from figlang.core.io import file_sha256, read_jsonl, write_json  # noqa: E402
from figlang.evaluation.norms import norm_accuracies  # noqa: E402
from figlang.evaluation.runs import predictions_file  # noqa: E402

for run in map(Path, sys.argv[1:]):
    preds = predictions_file(run)
    if preds is None:
        raise SystemExit(f"{run}: no predictions.jsonl(.gz)")
    write_json(
        run / "norms.json",
        {
            "source": preds.name,
            "source_sha256": file_sha256(preds),
            "made_by": "scripts/derive_norms.py (figlang.evaluation.norms)",
            "norms": norm_accuracies(read_jsonl(preds)),
        },
    )
    print(f"wrote {run / 'norms.json'}")
