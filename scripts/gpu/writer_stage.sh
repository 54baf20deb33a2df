# Staging for the lent-GPU writer training (writer_jobs.sh); sourced from the repository root on the GPU machine.
# The staging calls copied .gpu/w1..w4 (wheels, rouge_score + nltk, FLUTE data, the bf16 smollm2 base in pieces)
# to /tmp/stage (scripts/gpu/writer_prep.sh made them). The GPU machine reaches no package index.
S=/tmp/stage
mkdir -p /tmp/site /tmp/data
if [ ! -d /tmp/wb ]; then
  cat $S/base.part* > /tmp/base.tgz && (cd /tmp && sha256sum -c $S/base.sha) && tar -xzf /tmp/base.tgz -C /tmp || exit 1
fi
[ -d /tmp/site/transformers ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $S/whl/*.whl || exit 1
[ -d /tmp/site/rouge_score ] || tar -xzf $S/pylib.tgz -C /tmp/site || exit 1
[ -d /tmp/data/flute ] || tar -xzf $S/flute.tgz -C /tmp/data || exit 1
export PYTHONPATH=src:/tmp/site HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 FIGLANG_DATA_DIR=/tmp/data TOKENIZERS_PARALLELISM=false
BASE=/tmp/wb
fl() { python3 -c 'import sys; from figlang.cli.main import main; sys.argv[0]="figlang"; sys.exit(main())' "$@"; }
O=/tmp/o; mkdir -p $O/logs $O/ret
