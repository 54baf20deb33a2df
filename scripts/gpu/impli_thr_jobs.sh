# IMPLI 10 linked folds, two recipes for non-entailment (issue #22), on a lent H200/H100.
# Run from the repository root on the GPU machine (staging: scripts/gpu/impli_stage.sh).
# Recipe A: the cpu-impli-folds preset's 8,000 pairs drawn label-balanced; recipe B: every training
# pair with label-weighted loss. Both: bf16 autocast, decision threshold chosen on each fold's own
# selection slice (balanced accuracy). Nothing here looks at a test fold to choose anything.
set -u
source scripts/gpu/impli_stage.sh
A="-t impli -m nli --model $MINILM --folds 10 --sample-balance label --threshold balanced-accuracy --bf16 --device cuda --threads 1"
B="-t impli -m nli --model $MINILM --folds 10 --limit 100000 --loss-weights label --threshold balanced-accuracy --bf16 --device cuda --threads 1"
echo "start $(date +%T)"
for i in 0 1 2 3 4; do
  timeout ${TRAIN_LIMIT:-400} bash -c "$(declare -f fl); fl train $A -o $O/impli-folds10-bal-thr --fold $((2*i)) --fold $((2*i+1)) -q" > $O/logs/bal-f$i.log 2>&1 &
  timeout ${TRAIN_LIMIT:-400} bash -c "$(declare -f fl); fl train $B -o $O/impli-folds10-all-lw-thr --fold $((2*i)) --fold $((2*i+1)) -q" > $O/logs/all-f$i.log 2>&1 &
done
wait
echo "folds done $(date +%T)"
timeout ${POOL_LIMIT:-120} bash -c "$(declare -f fl); fl train $A -o $O/impli-folds10-bal-thr -q" > $O/logs/bal-pool.log 2>&1 &
timeout ${POOL_LIMIT:-120} bash -c "$(declare -f fl); fl train $B -o $O/impli-folds10-all-lw-thr -q" > $O/logs/all-pool.log 2>&1 &
wait
echo "pooled $(date +%T)"
tar -C /tmp/o --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='checkpoint*' -czf $OUT/impli-thr.tgz .
ls -la $OUT; tail -n 3 $O/logs/*.log
