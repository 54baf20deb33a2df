"""Publish a finished `figlang suite` run: its files into docs/results/suite, its table into README.md.

    make run                                          # writes runs/suite (suite.md, suite.json, one folder per row)
    python scripts/publish_suite.py runs/suite        # -> docs/results/suite/ (predictions gzip'd) + README's suite block
    python scripts/results_index.py                   # registers the new table's figures (docs/results/INDEX.yaml)

README's block between its suite-output markers becomes the suite's table (exactly the cells `make run`
printed), its notes and the command of every row; see figlang.evaluation.suite.publish_suite.
"""

import argparse
import sys

from figlang.core.errors import FiglangError
from figlang.evaluation.suite import publish_suite

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("run", help="the suite's --out folder (make run: runs/suite)")
parser.add_argument("--dest", default="docs/results/suite", help="where the result files go (default: docs/results/suite)")
parser.add_argument("--readme", default="README.md", help="the README whose suite block is rewritten ('' for none)")
args = parser.parse_args()
try:
    written = publish_suite(args.run, args.dest, args.readme or None)
except FiglangError as err:
    sys.exit(f"error: {err}")
print(
    f"wrote {len(written)} files: {args.dest}/ (suite.md, suite.json, per row results.json, results.md, predictions.jsonl.gz)"
    + (f" and {args.readme}" if args.readme else "")
)
