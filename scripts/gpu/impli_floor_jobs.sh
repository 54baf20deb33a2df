# IMPLI 10 linked folds, the recipe chosen on selection (all pairs, label-weighted loss) with the floor=0.85 decision rule (issue #22), on a lent H200.
# Run from the repository root on the GPU machine (staging: scripts/gpu/impli_stage.sh).
# The decision threshold keeps entailment recall >= 0.85 with 95% confidence on each fold's own selection
# slice and maximises non-entailment recall there; the selection margins are written beside figlang.json.
set -u
source scripts/gpu/impli_stage.sh
C="-t impli -m nli --model $MINILM --folds 10 --limit 100000 --loss-weights label --threshold floor=0.85 --bf16 --device cuda --threads 1"
echo "start $(date +%T)"
for i in 0 1 2 3 4; do
  timeout ${TRAIN_LIMIT:-400} bash -c "$(declare -f fl); fl train $C -o $O/impli-folds10-all-lw-floor85 --fold $((2*i)) --fold $((2*i+1)) -q" > $O/logs/floor-f$i.log 2>&1 &
done
wait
echo "folds done $(date +%T)"
tar -C /tmp/o --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='checkpoint*' -czf $OUT/impli-floor.tgz .
ls -la $OUT; tail -n 3 $O/logs/*.log
