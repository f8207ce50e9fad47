#!/usr/bin/env bash
# arm64.sh: the course on arm64, checked on an x86-64 Debian host (make test-arm64).
#   scripts/arm64.sh [X86_BUILD]        X86_BUILD: the x86 build to compare with (default build/)
# 1) setup, once: Debian's cross compiler (crossbuild-essential-arm64), qemu-user, and the arm64
#    libraries by multiarch (libopenblas-dev:arm64 libsleef-dev:arm64 libfmt-dev:arm64); the
#    header-only libraries are the host's. Installs only what is missing (needs root then).
# 2) cross-build the chapters and ts_tests into build-arm64/ (cmake/aarch64-linux-gnu.cmake,
#    -DTS_NATIVE=OFF); a warm run rebuilds only what changed.
# 3) run every chapter's --plain under qemu-aarch64 (NEON route: the arm64 default), JOBS at a
#    time, and compare it byte for byte with the x86 build's output of the same command; the
#    training chapters with few steps, the same on both sides.
# 4) the CPU-dependent unit tests (ts_tests) under qemu: test_kernels' twin runs the host's
#    PyTorch, so the exact kernels are checked against torch's bits on arm64 too.
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
if ! cmake --build "$arm" -j "$JOBS" --target chapters ts_tests >"$arm/build.log" 2>&1; then
  tail -n 30 "$arm/build.log"
  die "arm64 build failed (log: $arm/build.log)"
fi
if grep -q 'warning:' "$arm/build.log"; then
  grep 'warning:' "$arm/build.log" | sort -u
  echo "NOT OK the arm64 build printed warnings"
  fail=1
fi
stage "arm64 build"

# ---- 3) every chapter's --plain, x86 against arm64 (qemu) ----
out=$arm/plain
mkdir -p "$out"
aarch64-linux-gnu-readelf -h "$arm/ch01_embedding" | grep -q AArch64 || die "$arm/ch01_embedding is not an arm64 program"
flags_of() {  # few steps under qemu for the training chapters, the same flags on both sides
  case $1 in
    ch11_*|ch12_*|ch13_*) echo --plain --steps 20 ;;
    ch14_*) echo --plain --max-steps 20 ;;
    *) echo --plain ;;
  esac
}
run_one() {  # run_one CHAPTER: both outputs and exit codes into $out
  local ch=$1 flags; read -ra flags <<<"$(flags_of "$ch")"
  "$x86/$ch" "${flags[@]}" >"$out/$ch.x86" 2>&1; echo $? >"$out/$ch.x86.rc"
  TS_ISA= qemu-aarch64 "$arm/$ch" "${flags[@]}" >"$out/$ch.arm64" 2>&1; echo $? >"$out/$ch.arm64.rc"
}
chapters=$(cd chapters && ls ch*.cpp | sed 's/\.cpp$//' | sort)
for ch in $chapters; do  # JOBS chapters at a time
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_one "$ch" &
done
wait
for ch in $chapters; do
  flags=$(flags_of "$ch") rx=$(cat "$out/$ch.x86.rc") ra=$(cat "$out/$ch.arm64.rc")
  if [ "$rx" != "$ra" ]; then
    echo "NOT OK $ch $flags: exit $rx on x86, $ra on arm64"; fail=1
  elif ! cmp -s "$out/$ch.x86" "$out/$ch.arm64"; then
    echo "NOT OK $ch $flags: the outputs differ (diff $out/$ch.x86 $out/$ch.arm64):"
    diff "$out/$ch.x86" "$out/$ch.arm64" | head -n 8; fail=1
  else
    echo "OK     $ch $flags: $(wc -l <"$out/$ch.x86") lines, byte-identical (exit $rx)"
  fi
done
stage "chapters under qemu"

# ---- 4) the unit tests whose results depend on the CPU, under qemu ----
# (exact kernels against the host's PyTorch, the fast path on the NEON and scalar routes, RNG,
# products, statistics, printing); ARM64_TESTS='' runs every test (slow under qemu).
# Not [annotated] nor [matmul]: they compare products and whole modules with x86 torch bit for bit, and on arm64 two things
# differ in the last bit: OpenBLAS's arm64 sgemm sums in another order than its Haswell kernel,
# and SLEEF's 8-lane sinf/cosf path for PositionalEncoding rows past 125 (src/exact/vec8.hpp).
# Not [slow] either (BERT-base size: more than 25 minutes under qemu on a busy 2-core machine).
tests=${ARM64_TESTS-[kernels],[vec8],[fast_encoder]~[slow],[rng],[stats],[compare],[print]}
( cd "$arm" && qemu-aarch64 ./ts_tests $tests >"$here/$arm/ts_tests.log" 2>&1 ); rt=$?
tail -n 3 "$arm/ts_tests.log"
if [ $rt != 0 ]; then echo "NOT OK ts_tests under qemu: exit $rt (log: $arm/ts_tests.log)"; fail=1; fi
stage "ts_tests under qemu"

echo "arm64: total $(( $(date +%s) - t0 )) s"
[ $fail = 0 ] && echo "arm64: OK (every chapter's --plain byte-identical to x86, ts_tests pass under qemu)" \
              || echo "arm64: NOT OK"
exit $fail
