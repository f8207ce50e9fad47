#!/usr/bin/env bash
# make bench: our Google Benchmark side and both peers (PyTorch, ONNX Runtime) in one run, one table.
#   scripts/bench.sh [BUILD_DIR] [report.py options, e.g. --reps 9 --filter encoder]
#   TS_ISA=avx2 scripts/bench.sh     (on an AVX-512 CPU: emulate an AVX2-only machine)
# Builds bench_peak, bench_encoder, bench_matmul, bench_train, bench_gpt and bench_bpe (Release, -march=native; libbenchmark-dev
# from make deps); bench/bpe_report.py first times BPE training and GPT-2 encoding beside npm's encoder
# (its own table, BUILD_DIR/bench/bpe.csv), then bench/report.py runs the others, bench/bench_pytorch.py on the same OpenBLAS
# core and ONNX Runtime (the pinned onnxruntime-node of bench/ort/, installed by npm into
# BUILD_DIR/bench/ort on first use), prints the table and writes BUILD_DIR/bench/results.csv
# and the table section of docs/performance.md.
# Timings need a quiet machine: anything else running on these cores shows up in them.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
python=${TS_PYTHON:-/usr/bin/python3}

if [ ! -f "$build/CMakeCache.txt" ] || ! grep -q '^TS_BENCH:BOOL=ON' "$build/CMakeCache.txt" \
   || ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt"; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTS_BENCH=ON >/dev/null
fi
if ! grep -q '^benchmark_DIR:PATH=/' "$build/CMakeCache.txt"; then  # installed since? look again
  cmake -S "$here" -B "$build" >/dev/null
fi
if ! grep -q '^benchmark_DIR:PATH=/' "$build/CMakeCache.txt"; then
  echo "bench: Google Benchmark not found (libbenchmark-dev): run 'make deps' first" >&2
  exit 1
fi
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" --target bench_peak bench_encoder bench_matmul bench_train bench_gpt bench_bpe
# the tokenizers first (bench/bpe_report.py: BPE training, GPT-2 encoding beside npm's encoder)
"$python" "$here/bench/bpe_report.py" "$build" || echo "bench: the tokenizer rows failed (the line above says why); the rest goes on" >&2
exec "$python" "$here/bench/report.py" "$build" "$@"
