source docs/results/gpu-minilm/scripts/env.sh
cd .
echo "start $(date +%T)"
python3 -c "from figlang.models.install import prepare; print(prepare('smollm2-135m'))" || exit 1
gen() { # task short method bs evalbs extra...
  local t=$1 s=$2 m=$3 bs=$4 ebs=$5; shift 5
  fl train -t $t -m $m --model smollm2-135m -o $O/$s-$m --device cuda --threads 2 --batch-size $bs --report-limit 2 "$@" -q > $O/logs/$s-$m.log 2>&1
  fl eval -t $t -s dev --method trained --model $O/$s-$m -O batch_size=$ebs -O device=cuda --bertscore-model $MINILM --bertscore-layers 6 \
     --no-cache -o $O/$s-$m/eval-dev-all > $O/logs/$s-$m-eval.log 2>&1
}
gen idiom-generation idiom generator 16 64 &
gen idiom-generation idiom generator-context 32 192 --limit 100000 --eval-every 200 --dev-limit 40 &
gen simile-generation simile generator 16 64 &
gen simile-generation simile generator-context 32 192 --limit 100000 --eval-every 200 --dev-limit 40 &
wait
echo "all done $(date +%T)"
