#!/bin/sh
# Install llama-cpp-python (figlang's llama.cpp backend and the HTTP backend's test server), built on
# x86-64 with run-time CPU dispatch: one wheel whose CPU backend is a module per instruction set
# (libggml-cpu-haswell.so: AVX2, -skylakex: AVX-512, -zen4: AVX-512 VBMI/VNNI/BF16, ...), of which
# ggml loads the best one the CPU runs. AVX-512 CPUs get AVX-512 kernels, others AVX2 or less.
#
# Why not pip's default build: it compiles llama.cpp with -march=native. On Sapphire-Rapids-class CPUs
# (AMX in /proc/cpuinfo) that turns on ggml's AMX kernels, which segfault on the first forward pass of
# figlang's GGUF models (ggml_backend_amx_mul_mat; ggml-org/llama.cpp#20824). And pip caches the wheel
# it built without regard to the build flags, so a native wheel made on one machine is reused on
# another whose CPU may lack its instructions.
#
# What this script does (x86-64): it downloads the sdist, applies scripts/llama_cpp_dispatch.patch (no
# AMX variant; llama_cpp loads the best module from llama_cpp/lib on import, since ggml by itself
# looks only beside python and in the working directory), and builds with GGML_BACKEND_DL +
# GGML_CPU_ALL_VARIANTS, the modules installed into llama_cpp/lib (upstream's wheel would put them in
# site-packages/bin, where nothing looks). Variants built: x64, sse42,
# sandybridge, haswell, skylakex, cascadelake, icelake, cooperlake, zen4, alderlake (not ivybridge,
# piledriver, cannonlake: rare, the next one down serves them; not sapphirerapids: AMX). The build
# took 12 and 19 minutes on 2 shared cores, once: the wheel is kept in a cache folder named for the
# version and a checksum of the flags and the patch, so an older (AVX2-only) wheel is never reused.
# On a 2-core Sapphire Rapids VM (AVX-512 BF16, AMX hidden) the zen4 module loads, and qwen2.5-1.5b
# (Q4 GGUF, 2 threads) prefills 1.37x as fast as with the former AVX2-only build (91.0 against 66.2
# tokens/s) and decodes at the same speed (72.9 against 73.3 ms a token; memory-bound):
# python benchmarks/bench_llama_build.py --build avx2=PYTHON --build dispatch=PYTHON --threads 2 --repeat 5
# (docs/results/bench/llama_build_dispatch.json).
# The instruction sets of the module loaded (AVX512 = 1 where an AVX-512 one did):
#   python -c "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
# Usage: sh scripts/install_llama_cpp.sh PYTHON   (PYTHON: the venv's python)
set -eu

PY=${1:-python3}
VERSION=0.3.36
PATCH="$(cd "$(dirname "$0")" && pwd)/llama_cpp_dispatch.patch"
# CMAKE_INSTALL_BINDIR: ggml installs the CPU modules into bin/, which would be site-packages/bin
FLAGS="-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_BINDIR=llama_cpp/lib"
KEY=$( (echo "$FLAGS"; cat "$PATCH") | cksum | cut -d' ' -f1)  # a changed flag or patch builds a new wheel
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/figlang/wheels/llama-cpp-python-$VERSION-x86dispatch-noamx-$KEY"

if [ "$(uname -m)" != "x86_64" ]; then
    FLAGS=""  # the x86 flags and variants mean nothing elsewhere; ggml's default build is used
    PATCH=""
    WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/figlang/wheels/llama-cpp-python-$VERSION-$(uname -m)"
fi

if ! ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $VERSION (${FLAGS:-default flags}) into $WHEELS (once; ~15-20 minutes on 2 cores)"
    if [ -n "$PATCH" ]; then
        SRC=$(mktemp -d)
        trap 'rm -rf "$SRC"' EXIT
        "$PY" -m pip --disable-pip-version-check download --quiet --no-deps --no-binary :all: \
            -d "$SRC" "llama-cpp-python==$VERSION"
        tar xzf "$SRC"/llama_cpp_python-$VERSION.tar.gz -C "$SRC"
        patch --quiet -p1 -d "$SRC/llama_cpp_python-$VERSION" < "$PATCH"
        CMAKE_ARGS="$FLAGS" "$PY" -m pip --disable-pip-version-check wheel --quiet --no-deps --no-cache-dir \
            -w "$WHEELS" "$SRC/llama_cpp_python-$VERSION"
    else
        "$PY" -m pip --disable-pip-version-check wheel --quiet --no-deps --no-cache-dir \
            --no-binary llama-cpp-python -w "$WHEELS" "llama-cpp-python==$VERSION"
    fi
fi
WHEEL=$(ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl | head -n 1)
"$PY" -m pip --disable-pip-version-check install --quiet --force-reinstall --no-deps "$WHEEL"
"$PY" -m pip --disable-pip-version-check install --quiet "llama-cpp-python[server] @ file://$WHEEL"
echo "llama-cpp-python $VERSION installed from $WHEEL"
