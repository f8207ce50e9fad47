#!/usr/bin/env bash
# arm64.sh: the course on arm64, checked on an x86-64 Debian host (make test-arm64).
#   scripts/arm64.sh [X86_BUILD]        X86_BUILD: the x86 build to compare with (default build/)
# 1) setup, once: Debian's cross compiler (crossbuild-essential-arm64), qemu-user, and the arm64
#    libraries by multiarch (libopenblas-dev:arm64 libsleef-dev:arm64 libfmt-dev:arm64); the
#    header-only libraries are the host's. Installs only what is missing (needs root then).
# 2) cross-build the chapters and ts_tests into build-arm64/ (cmake/aarch64-linux-gnu.cmake,
#    -DTS_NATIVE=OFF), warning-free; the folder is kept, so a warm run rebuilds only what changed.
# 3) the arm64 build takes the NEON route: asked for AVX2, it must refuse and name neon as the
#    widest route this CPU runs (src/fast/isa.cpp).
# 4) every chapter's --plain under qemu-aarch64, JOBS at a time, compared byte for byte with the
#    x86 build's output of the same command; the training chapters in their short forms (the
#    flags of scripts/clang.sh). The x86 outputs are kept in X86_BUILD/arm64-ref/, one per
#    chapter, keyed by a hash of what decides them (the x86 program, the libraries it loads,
#    data/, flags and environment): rerun only when one of those changed.
# 5) the unit tests whose results depend on the CPU (ts_tests) under qemu; the ones that compare
#    with PyTorch run the host's (x86) torch, so the arm64 bits are checked against x86 torch's.
# Prints the wall time of each stage and of the whole run; exit 1 when anything differs or fails.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
x86=${1:-build}
arm=${ARM_BUILD:-build-arm64}
JOBS=${JOBS:-$(nproc)}
fail=0
t0=$(date +%s)
stage_start=$t0
stage() {  # stage NAME: the wall time of the stage that just ended
  local now; now=$(date +%s)
  echo "arm64: $1 took $((now - stage_start)) s"
  stage_start=$now
}
die() { echo "arm64: $*" >&2; exit 2; }

# ---- 1) setup ----
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
arm_pkgs=(libopenblas-dev:arm64 libsleef-dev:arm64 libfmt-dev:arm64)
host_pkgs=(crossbuild-essential-arm64 qemu-user libxtensor-dev libxsimd-dev xtl-dev catch2 libcli11-dev
           nlohmann-json3-dev gettext cmake)
missing=()
for p in "${host_pkgs[@]}" "${arm_pkgs[@]}"; do have "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing packages ${missing[*]}: run this script as root once (it installs them with apt-get)"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64 || die "dpkg --add-architecture arm64 failed"
  fi
  apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
fi
command -v qemu-aarch64 >/dev/null || die "qemu-aarch64 not found (Debian package qemu-user)"
stage "setup"

# ---- 2) builds: the x86 one (if not there yet) and the arm64 cross build ----
if [ ! -f "$x86/CMakeCache.txt" ]; then
  cmake -S . -B "$x86" -DCMAKE_BUILD_TYPE=Release -DTS_BENCH=OFF >/dev/null || die "x86 configure failed"
fi
cmake --build "$x86" -j "$JOBS" --target chapters >/dev/null || die "x86 build failed (cmake --build $x86 --target chapters)"
stage "x86 build"
xtensor_cfg=$(dpkg -L libxtensor-dev | grep -m1 '/xtensorConfig.cmake$')
if [ ! -f "$arm/CMakeCache.txt" ]; then
  cmake -S . -B "$arm" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
    -DTS_NATIVE=OFF -DTS_BENCH=OFF -Dxtensor_DIR="$(dirname "$xtensor_cfg")" >"$x86/arm64-configure.log" 2>&1 \
    || { cat "$x86/arm64-configure.log"; die "arm64 configure failed"; }
fi
# Catch2 3 (Debian 13) is a compiled library, and Debian's catch2 is not multi-arch: its x86
# libCatch2.a cannot be linked into an arm64 ts_tests, nor an arm64 one installed beside it. There
# the arm64 check is the chapters' (below); the unit tests under qemu run where Catch2 is the
# header-only 2 (Debian 12).
catch2_dir=$(sed -n 's/^Catch2_DIR:PATH=//p' "$arm/CMakeCache.txt")
unit_tests=1
if [ -n "$catch2_dir" ] && grep -qs 'PACKAGE_VERSION "3' "$catch2_dir/Catch2ConfigVersion.cmake"; then unit_tests=0; fi
if ! cmake --build "$arm" -j "$JOBS" --target chapters $([ $unit_tests = 1 ] && echo ts_tests) >"$arm/build.log" 2>&1; then
  tail -n 30 "$arm/build.log"
  die "arm64 build failed (log: $arm/build.log)"
fi
if grep -q 'warning:' "$arm/build.log"; then
  grep 'warning:' "$arm/build.log" | sort -u
  echo "NOT OK the arm64 build printed warnings"
  fail=1
fi
stage "arm64 build"

# ---- 3) the route: NEON ----
aarch64-linux-gnu-readelf -h "$arm/ch01_embedding" | grep -q AArch64 || die "$arm/ch01_embedding is not an arm64 program"
isa_err=$(env LANG=C.UTF-8 LC_ALL=C.UTF-8 LANGUAGE= TS_ISA=avx2 qemu-aarch64 "$arm/ch01_embedding" --plain 2>&1 >/dev/null); isa_rc=$?
if [ $isa_rc = 2 ] && [[ $isa_err == *"it supports neon, scalar"* ]]; then
  echo "OK     NEON route: TS_ISA=avx2 refused, widest route neon ($isa_err)"
else
  echo "NOT OK NEON route: TS_ISA=avx2 gave exit $isa_rc, want 2 naming 'neon, scalar' first: $isa_err"; fail=1
fi

# ---- 4) every chapter's --plain, x86 against arm64 (qemu) ----
out=$arm/plain ref=$x86/arm64-ref
rm -rf "$out"
mkdir -p "$out" "$ref"
# the same environment on both sides: 80 columns, no colour, English
run_env=(env TS_COLUMNS=80 COLUMNS=80 TERM=dumb NO_COLOR=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 LANGUAGE= TS_ISA=)
# OpenBLAS's kernel: x86 keeps what the environment or src/fast/blas_core.cpp picks; under qemu
# OpenBLAS knows no CPU model and takes its generic ARMV8 kernel, said here so that an x86 core
# name in OPENBLAS_CORETYPE does not reach it
arm_env=(OPENBLAS_CORETYPE=ARMV8)
flags_of() {  # the short forms of the long chapters (tests/cases/<chapter>.quick), as scripts/clang.sh runs them
  echo --plain $(if [ -f "tests/cases/$1.quick" ]; then sed 's/#.*//' "tests/cases/$1.quick"; fi)
}
# what decides an x86 output besides its program and flags: the libraries it loads, data/
common_key=$( { ldd "$x86/ch01_embedding" | awk '$3 ~ /^\// {print $3}' | xargs -r stat -L -c '%n %s %Y';
                find data -type f -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum; echo "${run_env[*]}"; env | grep '^OPENBLAS_' | sort; } | sha256sum | cut -c1-16)
key_of() { { sha256sum <"$x86/$1"; flags_of "$1"; echo "$common_key"; } | sha256sum | cut -c1-16; }
# the one line that is allowed to differ: a training chapter's pace note ("the first step took
# 0.65 s; at that pace the whole takes about 13 s"), a measured time, printed past ~10 s; qemu
# and a busy machine print it where x86 does not. It goes to stderr and is dropped from both sides.
no_pace() { sed -E '/: note: .* took [^ ]+ s(;| of processor time;) at that pace /d'; }
run_one() {  # run_one CHAPTER: the x86 output (kept by key) and the arm64 one, with exit codes
  local ch=$1 flags key; read -ra flags <<<"$(flags_of "$ch")"
  key=$(key_of "$ch")
  if [ ! -f "$ref/$ch.$key.rc" ]; then
    rm -f "$ref/$ch".*
    { "${run_env[@]}" "$x86/$ch" "${flags[@]}" 2>&1; echo $? >"$ref/$ch.$key.rc.tmp"; } | no_pace >"$ref/$ch.$key.out"
    mv "$ref/$ch.$key.rc.tmp" "$ref/$ch.$key.rc"
  fi
  cp "$ref/$ch.$key.out" "$out/$ch.x86"; cp "$ref/$ch.$key.rc" "$out/$ch.x86.rc"
  { "${run_env[@]}" "${arm_env[@]}" qemu-aarch64 "$arm/$ch" "${flags[@]}" 2>&1; echo $? >"$out/$ch.arm64.rc"; } | no_pace >"$out/$ch.arm64"
}
# the longest first (the training chapters), JOBS at a time
chapters=$(cd chapters && ls ch*.cpp | sed 's/\.cpp$//' | sort)
by_time=$(printf '%s\n' $chapters | grep -E '^ch1[1-4]_'; printf '%s\n' $chapters | grep -vE '^ch1[1-4]_')
for ch in $by_time; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_one "$ch" &
done
wait
for ch in $chapters; do
  flags=$(flags_of "$ch") rx=$(cat "$out/$ch.x86.rc") ra=$(cat "$out/$ch.arm64.rc")
  if [ "$rx" != 0 ] || [ "$ra" != 0 ]; then
    echo "NOT OK $ch $flags: exit $rx on x86, $ra on arm64"; tail -n 3 "$out/$ch.x86" "$out/$ch.arm64"; fail=1
  elif ! cmp -s "$out/$ch.x86" "$out/$ch.arm64"; then
    echo "NOT OK $ch $flags: the outputs differ (diff $out/$ch.x86 $out/$ch.arm64):"
    diff "$out/$ch.x86" "$out/$ch.arm64" | head -n 8; fail=1
  else
    echo "OK     $ch $flags: $(wc -l <"$out/$ch.x86") lines, byte-identical"
  fi
done
stage "chapters under qemu"

# ---- 5) the unit tests under qemu ----
# Every ts_tests case but [slow] (BERT-base sizes: more than 25 minutes under qemu on a busy
# 2-core machine) and the ones that compare matrix products with x86 torch bit for bit:
# [matmul] and [annotated] (its PositionalEncoding case runs: SLEEF's sin/cos, no products).
# OpenBLAS's ARMV8 sgemm sums in another order than its x86 Haswell kernel: most entries of a
# product differ in the last bits (relative 1e-6 at most in [matmul]). The cases that ask the
# host's PyTorch (exact kernels, RNG, printing, statistics) check arm64's bits against x86 torch.
# ARM64_TESTS='' runs every case (slow), ARM64_TESTS=SPEC a Catch2 test spec of your own.
tests=${ARM64_TESTS-'~[slow]~[annotated]~[matmul],annotated: PositionalEncoding buffer equals torch bit for bit'}
# (the environment's OPENBLAS_CORETYPE stays: the x86 torch it starts reads it too)
if [ $unit_tests = 1 ]; then
  ( cd "$arm" && qemu-aarch64 ./ts_tests ${tests:+"$tests"} >"$here/$arm/ts_tests.log" 2>&1 ); rt=$?
  tail -n 2 "$arm/ts_tests.log"
  if [ $rt != 0 ]; then echo "NOT OK ts_tests under qemu: exit $rt (log: $arm/ts_tests.log)"; fail=1; fi
  stage "ts_tests under qemu"
else
  echo "arm64: ts_tests not built: this Catch2 3 is an x86 library (Debian's catch2 is not multi-arch); the unit tests under qemu run on Debian 12"
fi

echo "arm64: total $(( $(date +%s) - t0 )) s"
what="NEON route; every chapter's --plain byte-identical to x86"
[ $unit_tests = 1 ] && what="$what; ts_tests pass under qemu"
[ $fail = 0 ] && echo "arm64: OK ($what)" || echo "arm64: NOT OK"
exit $fail
