#!/bin/sh
# Install llama-cpp-python (figlang's llama.cpp backend and the HTTP backend's test server), built for AVX2.
#
# Why not pip's default build: it compiles llama.cpp with -march=native. On Sapphire-Rapids-class CPUs
# (AMX in /proc/cpuinfo) that turns on ggml's AMX kernels, which segfault on the first forward pass of
# figlang's GGUF models (ggml_backend_amx_mul_mat; ggml-org/llama.cpp#20824). And pip caches the wheel
# it built without regard to the build flags, so a native wheel made on one machine is reused on
# another whose CPU may lack its instructions. This script builds with fixed AVX2 flags (any x86-64 CPU
# since 2013) and keeps the wheel in a cache folder named for the version and the flags.
# Usage: sh scripts/install_llama_cpp.sh PYTHON   (PYTHON: the venv's python)
set -eu

PY=${1:-python3}
VERSION=0.3.36
FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF"
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/figlang/wheels/llama-cpp-python-$VERSION-avx2"

if [ "$(uname -m)" != "x86_64" ]; then
    FLAGS=""  # the x86 flags mean nothing elsewhere; ggml's default build is used
    WHEELS="${WHEELS%-avx2}-$(uname -m)"
fi

if ! ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $VERSION (${FLAGS:-default flags}) into $WHEELS (once; a few minutes)"
    CMAKE_ARGS="$FLAGS" "$PY" -m pip --disable-pip-version-check wheel --quiet --no-deps --no-cache-dir \
        --no-binary llama-cpp-python -w "$WHEELS" "llama-cpp-python==$VERSION"
fi
WHEEL=$(ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl | head -n 1)
"$PY" -m pip --disable-pip-version-check install --quiet --force-reinstall --no-deps "$WHEEL"
"$PY" -m pip --disable-pip-version-check install --quiet "llama-cpp-python[server] @ file://$WHEEL"
echo "llama-cpp-python $VERSION installed from $WHEEL"
