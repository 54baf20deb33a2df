# Here (not on the GPU): make .gpu/w1..w4 for the writer training, each small enough to travel in one call beside
# the working tree (64 MiB in all). Calls: 1-3 copy .gpu/wN to /tmp/stage; call 4 copies w4 and runs writer_jobs.sh;
# then fetch the rest of the difference (delta.npz.part03...) and rebuild with writer_delta.py unpack.
set -eu
rm -rf .gpu/w1 .gpu/w2 .gpu/w3 .gpu/w4 /tmp/wstage; mkdir -p .gpu/w1/whl .gpu/w2 .gpu/w3 .gpu/w4 /tmp/wstage
.venv/bin/python scripts/gpu/writer_delta.py bf16-base ~/.cache/figlang/models/smollm2-135m /tmp/wstage/wb
(cd /tmp/wstage && GZIP=-1 tar -czf base.tgz wb && sha256sum base.tgz > base.sha)
# figlang's own needs that the GPU image lacks or has at another version (its transformers is older than ours)
.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 -d .gpu/w1/whl \
    transformers==5.24.0 rapidfuzz==3.14.6 platformdirs==4.14.8 dill==0.4.1 krippendorff==0.9.0 flask==3.1.3 \
    blinker==1.9.0 itsdangerous==2.2.0
tar -C .venv/lib/python3.11/site-packages -czf .gpu/w1/pylib.tgz rouge_score nltk
tar -C ../shared/data -czf .gpu/w1/flute.tgz flute
cp /tmp/wstage/base.sha .gpu/w1/
first=$((${FIRST_MB:-34} * 1000000)); rest=$((${REST_MB:-56} * 1000000))
head -c $first /tmp/wstage/base.tgz > .gpu/w1/base.part0
tail -c +$((first + 1)) /tmp/wstage/base.tgz | split -b $rest -d -a 1 - /tmp/wstage/rest.
i=1; for f in /tmp/wstage/rest.*; do mv $f .gpu/w$((i + 1))/base.part$i; i=$((i + 1)); done
du -sh .gpu/w*
