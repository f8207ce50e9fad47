#!/usr/bin/env bash
# Regenerate docs/transcripts/ from the PyTorch twins (never edit those files by hand).
#   scripts/transcripts.sh [OUTDIR]     default OUTDIR: docs/transcripts
# For each chapter twin: chNN_x.txt (--transcript: every tensor, '>>> expr' + value) and
# chNN_x.plain.txt (--plain: what the article prints), at seed 0 in train mode.
# Outputs depend on the OpenBLAS kernel this CPU selects (see docs/performance.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/docs/transcripts}
python=${TS_PYTHON:-/usr/bin/python3}
# docs/transcripts/ are PyTorch 1.13's runs (the articles'): another PyTorch writes elsewhere only
if [ "$out" = "$here/docs/transcripts" ]; then
  ver=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null) || ver=none
  case $ver in
    1.13*) ;;
    *) echo "transcripts: docs/transcripts/ hold PyTorch 1.13's runs and this machine has PyTorch $ver: give another OUTDIR (scripts/transcripts.sh DIR)" >&2; exit 2 ;;
  esac
fi
# Committed transcripts must not depend on which OpenBLAS kernel this CPU would pick:
# pin the AVX2 kernels (OpenBLAS "Haswell", ATen AVX2), present on every x86-64 CPU of
# this kind. Live chapter-vs-twin tests use whatever the environment says, on both sides.
export OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2
mkdir -p "$out"
for twin in "$here"/tests/twins/ch[0-9][0-9]_*.py; do
  name=$(basename "$twin" .py)
  "$python" "$twin" --seed 0 --transcript > "$out/$name.txt"
  "$python" "$twin" --seed 0 --plain > "$out/$name.plain.txt"
done
echo "transcripts: wrote $(ls "$out" | wc -l) files to $out"
