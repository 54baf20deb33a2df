"""Train IMPLI's ten fold heads on the shipped FLUTE label model, score every test fold once, optionally ship them.

    python scripts/train_fold_heads.py runs/cpu/impli-folds-flute-mpnet --data-dir ../shared/data
    python scripts/train_fold_heads.py runs/cpu/impli-folds-flute-mpnet --ship     # copy a clean commit's run into the package
    figlang eval -t impli -s all -p runs/cpu/impli-folds-flute-mpnet/predictions.jsonl --ci-cluster expression -o OUT

The features of every IMPLI pair are computed once and kept in OUT/features.pt (a rerun reuses them); each fold's
head, penalty and threshold are chosen on its own selection slice (figlang.methods.trained.fold_heads).
"""

import argparse
import json
import sys

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.methods.trained.fold_heads import BASE
from figlang.training.fold_heads import ship_fold_heads, train_fold_heads

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("out", help="the run folder (features, heads, routes, record.json, pooled predictions.jsonl)")
parser.add_argument("--data-dir", help="the datasets folder (default: $FIGLANG_DATA_DIR, else the user cache)")
parser.add_argument("--base", default=BASE, help=f"the frozen NLI classifier the heads read (default {BASE})")
parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
parser.add_argument("--batch-size", type=int, default=64, help="pairs per encoder batch (default 64)")
parser.add_argument("--ship", action="store_true", help="copy the finished run into the package instead of training")
args = parser.parse_args()
try:
    if args.ship:
        print(f"shipped -> {ship_fold_heads(args.out)}")
        sys.exit(0)
    ctx = RunContext.create(data_dir=args.data_dir, threads=args.threads)
    record = train_fold_heads(args.out, ctx, base=args.base, batch_size=args.batch_size)
except FiglangError as err:
    sys.exit(f"error: {err}")
print(json.dumps({f["fold"]: {k: f[k] for k in ("penalty", "test_accuracy", "test_by_gold_label")} for f in record["folds"]}, indent=1))
print(f"{record['file']['bytes_per_fold']:,} bytes a fold; {record['seconds']} s; commit {record['code'].get('git_commit')}")
