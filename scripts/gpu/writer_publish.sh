# Bring the lent-GPU writer grids (writer_jobs.sh; each call's writer-runs.tgz) into docs/results/explain/flute-iro-writer-gpu/:
# per recipe figlang.json, train_log.jsonl and loss_curve.png (no weights), the GPU machine's paths made relative,
# and grid.json: each recipe's epochs, lr, kept step and dev loss beside the CPU writer's (runs/gen/flute-iro-all).
# Usage: bash scripts/gpu/writer_publish.sh TARBALL...
set -eu
D=docs/results/explain/flute-iro-writer-gpu
rm -rf $D; mkdir -p $D
for t in "$@"; do
  x=$(mktemp -d); tar -xzf "$t" -C "$x"
  for w in "$x"/writer-*; do n=$(basename "$w"); mkdir -p $D/$n; cp "$w"/figlang.json "$w"/train_log.jsonl "$w"/loss_curve.png $D/$n/; done
  rm -rf "$x"
done
grep -rl '/tmp/' $D | while read -r f; do
  sed -i -e "s#/tmp/o/#$D/#g" -e 's#/tmp/data#../shared/data#g' -e 's#/tmp/wb#smollm2-135m-bf16#g' "$f"
done
.venv/bin/python - "$D" <<'PY'
import json, subprocess, sys
from pathlib import Path
d = Path(sys.argv[1])
cpu = json.loads(Path("docs/results/explain/flute-iro-writer/figlang.json").read_text())
rows = []
for w in sorted(d.glob("writer-*")):
    j = json.loads((w / "figlang.json").read_text())
    stop = [json.loads(l) for l in (w / "train_log.jsonl").read_text().splitlines() if '"stop"' in l]
    t = j["training"]
    rows.append({"recipe": w.name, "device": t["device"], "epochs": t["epochs"], "lr": t["lr"], "total_steps": t["total_steps"],
                 "stopped_at_step": stop[-1]["step"] if stop else None, "stop_reason": stop[-1]["reason"] if stop else None,
                 "best_step": j["best"]["step"], "best_epoch": j["best"]["epoch"], "best_dev_loss": j["best"]["dev_loss"]})
best = min(rows, key=lambda r: r["best_dev_loss"])
out = {"what": "FLUTE I->OR writer recipes on a lent H200 (scripts/gpu/writer_jobs.sh), chosen by dev loss on 150 `selection` pairs",
       "base": "smollm2-135m with its float32 weights rounded to bfloat16 (scripts/gpu/writer_delta.py bf16-base), so the GPU rows start from a base the CPU writer did not",
       "rows": rows, "best_gpu": best["recipe"],
       "cpu_writer": {"recipe": "runs/gen/flute-iro-all (docs/results/explain/flute-iro-writer)", "device": "cpu", "epochs": cpu["training"]["epochs"],
                      "lr": cpu["training"]["lr"], "best_step": cpu["best"]["step"], "best_dev_loss": cpu["best"]["dev_loss"]},
       "kept": "cpu_writer" if cpu["best"]["dev_loss"] <= best["best_dev_loss"] else best["recipe"],
       "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()}
(d / "grid.json").write_text(json.dumps(out, indent=1) + "\n")
for r in rows:
    print(r)
print("kept:", out["kept"])
PY
