#!/bin/bash
# The renovation check of issue #34: one short run per method family, whose predictions.jsonl must be
# byte-identical before and after a change that should not change behaviour (docs/results/renovation/identity.json).
# usage: scripts/renovation_identity.sh SRC_DIR OUT_DIR  -- short runs, one per method family, with smollm2-135m (no request cache)
SRC=$1; OUT=$2; mkdir -p $OUT
export PYTHONPATH=$SRC FIGLANG_DATA_DIR=/work/shared/data
PY=/work/main/.venv/bin/python
run() { name=$1; shift; $PY -m figlang.cli.main eval "$@" --no-cache -q -o $OUT/$name > $OUT/$name.log 2>&1 || echo "FAIL $name"; }
M="--model smollm2-135m"
run lmscore -t idiom-cloze -s dev -m lm-score $M -n 12
run qa -t simile-cloze -s dev -m qa $M -n 8
run fewshot -t idiom-cloze -s dev-disjoint -m few-shot $M -n 6
run pet -t simile-cloze -s dev -m pet $M -n 6
run meaning -t idiom-cloze -s dev -m lm-score-meaning $M -n 8
run knowledge -t idiom-cloze -s dev -m lm-score-knowledge $M -n 3
run generate -t simile-generation -s dev -m generate $M -n 3 -O max_new_tokens=12
run nliscore -t flute -s val -m nli-score $M -n 6
run nligen -t impli -m nli-generate $M -n 4
run explain -t flute -s val -m explain $M -n 3
run random -t flute -s val -m random
run majority -t flute -s val -m majority
run longer -t simile-cloze -s dev -m longer-option
run score_pred -t idiom-cloze -s dev -p /work/shared/data/fig_narrative/output/idiom/discriminative/idiom_dev_predictions.jsonl
echo done
