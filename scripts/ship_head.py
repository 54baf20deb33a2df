"""Copy a finished probe run's head into the package, with its record, so that it answers as figlang:NAME.

    python scripts/ship_head.py runs/cpu/idiom-probe-qwen-sel idiom-probe-qwen --overwrite
    python scripts/ship_head.py RUN NAME --root runs/heads   # a trial folder: FIGLANG_HEADS_DIR=runs/heads finds it

Writes src/figlang/resources/heads/NAME/ (choice_head.safetensors, figlang.json without machine paths,
record.json); see figlang.methods.trained.heads. Base-model weights are never copied.
"""

import argparse
import json
import sys

from figlang.core.errors import FiglangError
from figlang.methods.trained.heads import RECORD_FILE, ship_head

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("run", help="a finished `figlang train --preset cpu-probe` folder")
parser.add_argument("name", help="the head's name (figlang:NAME), e.g. idiom-probe-qwen")
parser.add_argument("--root", help="heads folder (default: the package's src/figlang/resources/heads)")
parser.add_argument("--overwrite", action="store_true", help="replace a head of the same name")
parser.add_argument("--allow-dirty", action="store_true", help="ship a run trained from a modified tree (a trial folder)")
parser.add_argument("--command", help="the `figlang train` command that made the run, for the record")
args = parser.parse_args()
try:
    folder = ship_head(args.run, args.name, root=args.root, overwrite=args.overwrite, allow_dirty=args.allow_dirty, command=args.command)
except FiglangError as err:
    sys.exit(f"error: {err}")
record = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
base = record["base_model"]
print(
    f"shipped figlang:{args.name} -> {folder} ({record['head']['bytes']:,} bytes; base {base['catalog']} "
    f"layers {base['layers_read']}, chosen on {record['selection_split']}, commit {str((record.get('code') or {}).get('git_commit'))[:10]})"
)
