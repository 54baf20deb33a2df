# FLUTE's I->OR writer (smollm2-135m, bf16 base) fine-tuned for more than the one epoch 2 CPU cores allowed (issue #18),
# four recipes side by side on one lent GPU; the one with the lowest dev loss on `selection` (the trainer's own
# selection split) is sent back as a per-row int8 difference from the base (scripts/gpu/writer_delta.py).
# Run from the repository root on the GPU machine after the staging calls (writer_prep.sh says which).
set -u
source scripts/gpu/writer_stage.sh
C="-t flute -m iro --model $BASE --bf16 --device ${DEVICE:-cuda} --threads 1 --limit 100000 --eval-every 200 --save-every 100000 --report-split val --report-limit 8 -q ${EXTRA:-}"
echo "start $(date +%T)"; nvidia-smi -L 2>/dev/null
for cfg in ${CONFIGS:-a:3:1e-4 b:3:2e-4 c:5:1e-4 d:2:2e-4}; do  # name:epochs:lr
  set -- $(echo $cfg | tr : " ")
  timeout ${TRAIN_LIMIT:-330} bash -c "$(declare -f fl); fl train $C --epochs $2 --lr $3 --max-minutes ${MAX_MIN:-4.6} -o $O/writer-$1" > $O/logs/$1.log 2>&1 &
done
wait
echo "trained $(date +%T)"
best=$(python3 - <<'PY'
import json, pathlib
rows = []
for d in sorted(pathlib.Path("/tmp/o").glob("writer-*")):
    try:
        j = json.loads((d / "figlang.json").read_text())
    except (OSError, ValueError):
        print(f"{d.name}: no figlang.json", file=__import__("sys").stderr); continue
    b = j.get("best") or {}
    print(d.name, j.get("status"), b, file=__import__("sys").stderr)
    if b.get("dev_loss") is not None and (d / "model.safetensors").exists():
        rows.append((b["dev_loss"], d.name))
print(min(rows)[1] if rows else "")
PY
)
echo "best: $best"
[ -n "$best" ] || { tail -n 5 $O/logs/*.log; exit 1; }
echo "$best" > $O/best.txt
python3 scripts/gpu/writer_delta.py pack $BASE $O/$best $O/ret/delta.npz || exit 1
cp $O/ret/delta.json $O/
(cd $O/ret && split -b 16M -d -a 2 delta.npz delta.npz.part && sha256sum delta.npz > delta.sha && ls -la)
(cd $O && find . -path ./ret -prune -o -type f \( -name figlang.json -o -name train_log.jsonl -o -name train_result.json -o -name loss_curve.png \
   -o -name '*.log' -o -name best.txt -o -name delta.json -o -path '*/eval/*' \) -print | tar -czf $OUT/writer-runs.tgz -T -)
cp $O/ret/delta.sha $O/ret/delta.npz.part00 $O/ret/delta.npz.part01 $O/ret/delta.npz.part02 $OUT/ 2>/dev/null
ls -la $OUT; tail -n 3 $O/logs/*.log; echo "done $(date +%T)"
