source docs/results/gpu-minilm/scripts/env.sh
cd .
nvidia-smi -L
echo "start $(date +%T)"
# IMPLI: the same preset as the leaky CPU table (cpu-impli-folds), on the linked folds; 5 processes x 2 folds
for i in 0 1 2 3 4; do
  fl train -t impli -m nli --model minilm -o $O/impli-folds10-linked --folds 10 --fold $((2*i)) --fold $((2*i+1)) --device cuda --threads 2 -q > $O/logs/impli-f$i.log 2>&1 &
done
knowledge() { # task short
  local t=$1 s=$2
  fl train -t $t -m mc --model minilm -o $O/$s-mc-minilm --device cuda --threads 2 -q > $O/logs/$s-mc.log 2>&1
  for k in context literal; do
    fl train -t $t -m mc-$k --model $O/$s-mc-minilm -o $O/$s-mc-$k-minilm --device cuda --threads 2 \
       --limit 100000 --epochs 3 --batch-size 8 --grad-accum 1 --lr 2e-5 --eval-batch-size 16 -q > $O/logs/$s-mc-$k.log 2>&1 &
  done
  wait
  for k in context literal; do
    fl relations --model $O/$s-mc-$k-minilm -t $t -s dev --baseline $O/$s-mc-minilm/eval/dev/predictions.jsonl \
       -o $O/relations-$s-$k-dev.json --device cuda > $O/logs/relations-$s-$k.log 2>&1
  done
}
knowledge idiom-cloze idiom &
knowledge simile-cloze simile &
wait
echo "knowledge+folds done $(date +%T)"
fl train -t impli -m nli --model minilm -o $O/impli-folds10-linked --folds 10 --device cuda --threads 2 -q > $O/logs/impli-pool.log 2>&1
fl report $O/impli-folds10-linked/pooled -o $O/impli-folds10-linked-report > $O/logs/impli-report.log 2>&1
echo "pooled done $(date +%T)"
# the same folds with every training pair (about 23,500 a fold), 2 epochs
for i in 0 1 2 3 4; do
  fl train -t impli -m nli --model minilm -o $O/impli-folds10-linked-all --folds 10 --fold $((2*i)) --fold $((2*i+1)) --device cuda --threads 2 --limit 100000 -q > $O/logs/impli-all-f$i.log 2>&1 &
done
wait
fl train -t impli -m nli --model minilm -o $O/impli-folds10-linked-all --folds 10 --device cuda --threads 2 --limit 100000 -q > $O/logs/impli-all-pool.log 2>&1
fl report $O/impli-folds10-linked-all/pooled -o $O/impli-folds10-linked-all-report > $O/logs/impli-all-report.log 2>&1
echo "all done $(date +%T)"
