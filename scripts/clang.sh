#!/usr/bin/env bash
# scripts/clang.sh [CLANG_BUILD [GCC_BUILD]]: the course built by clang with libc++ (the nearest
# thing to macOS's toolchain on Debian), checked against the GCC build (make test-clang).
#
#   1. configures CLANG_BUILD (default build-clang): clang++, -stdlib=libc++, Release, no
#      benchmarks, every warning an error (-Wall -Wextra, CMAKE_COMPILE_WARNING_AS_ERROR);
#   2. builds only what the checks need: ts_tests and the chapters;
#   3. runs its unit tests (ctest -L unit); with Catch2 3, a library built against libstdc++
#      (Debian 13), from a second clang build with libstdc++ (CLANG_BUILD-libstdcxx);
#   4. runs every chapter with --plain in both builds (ch11-ch14 with short training flags) and
#      compares the outputs byte for byte: clang must print GCC's digits.
# GCC_BUILD (default build) is the usual build; its chapters are built first if missing.
# CLANGXX names the compiler (default: clang++, else the newest clang++-N). JOBS: parallel jobs.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-build-clang}
ref=${2:-build}
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}

cxx=${CLANGXX:-}
if [[ -z $cxx ]]; then
  cxx=$(command -v clang++ || true)
  [[ -n $cxx ]] || cxx=$(ls /usr/bin/clang++-[0-9]* 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [[ -z $cxx ]] || ! command -v "$cxx" >/dev/null; then
  echo "scripts/clang.sh: no clang++ found: install clang (make deps) or name it in CLANGXX" >&2
  exit 2
fi
if ! echo '#include <string>
int main() { return std::string("x").size() == 1 ? 0 : 1; }' | "$cxx" -stdlib=libc++ -x c++ - -o /dev/null 2>/dev/null; then
  echo "scripts/clang.sh: $cxx cannot build with -stdlib=libc++: install libc++-dev and libc++abi-dev" >&2
  exit 2
fi
if [[ ! -f $ref/CMakeCache.txt ]]; then
  echo "scripts/clang.sh: no GCC build in $ref to compare with: run make build first (or give its folder)" >&2
  exit 2
fi

t0=$SECONDS
stamp() { echo "clang.sh: $1 ($((SECONDS - t0)) s)"; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTS_BENCH=OFF -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
rm -f "$build.configure.log"
stamp "configured $build with $("$cxx" --version | head -n 1) and libc++"
# Catch2 3 (Debian 13) is a compiled library, built against libstdc++: a libc++ program cannot link
# it. There the unit tests run from a second clang build with libstdc++ (same warnings as errors);
# the chapters, compared with GCC's below, stay libc++'s.
catch2_dir=$(sed -n 's/^Catch2_DIR:PATH=//p' "$build/CMakeCache.txt")
catch2_v3=0
if [[ -n $catch2_dir ]] && grep -qs 'PACKAGE_VERSION "3' "$catch2_dir/Catch2ConfigVersion.cmake"; then catch2_v3=1; fi
if ((catch2_v3)); then
  cmake --build "$build" -j "$jobs" --target chapters
  stamp "built the chapters with libc++, warning-free"
  unit=$build-libstdcxx
  cmake -S . -B "$unit" -DCMAKE_BUILD_TYPE=Release -DTS_BENCH=OFF -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$unit.configure.log" 2>&1 || { cat "$unit.configure.log" >&2; exit 1; }
  rm -f "$unit.configure.log"
  cmake --build "$unit" -j "$jobs" --target unit_targets  # what ctest -L unit runs (CMakeLists.txt)
  stamp "Catch2 3 is built against libstdc++: ts_tests (and ch07) built by clang with libstdc++ in $unit, warning-free"
else
  unit=$build
  cmake --build "$build" -j "$jobs" --target unit_targets chapters
  stamp "built ts_tests and the chapters, warning-free"
fi
(cd "$unit" && ctest -L unit --output-on-failure -j "$jobs")
stamp "unit tests passed"

chapters=$(ls chapters/ch*.cpp | xargs -n 1 basename | sed 's/\.cpp$//')
missing=()
for ch in $chapters; do [[ -x $ref/$ch ]] || missing+=("$ch"); done
if ((${#missing[@]})); then cmake --build "$ref" -j "$jobs" --target "${missing[@]}"; fi

# the short forms of the training chapters (their full runs take minutes)
flags_of() {
  case $1 in
    *) if [[ -f tests/cases/$1.quick ]]; then sed 's/#.*//' "tests/cases/$1.quick" | tr '\n' ' '; fi ;;
  esac
}
# a training chapter's pace note (a measured time, printed past ~10 s) differs from run to run:
# dropped from both sides, as scripts/arm64.sh does
no_pace() { sed -E '/: note: .* took [^ ]+ s(;| of processor time;) at that pace /d'; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
for ch in $chapters; do
  read -r -a flags <<<"$(flags_of "$ch")"
  "$ref/$ch" --plain "${flags[@]}" >"$out/$ch.gcc.raw" 2>&1 || { echo "clang.sh: $ref/$ch --plain ${flags[*]} failed" >&2; failed=1; continue; }
  "$build/$ch" --plain "${flags[@]}" >"$out/$ch.clang.raw" 2>&1 || { echo "clang.sh: $build/$ch --plain ${flags[*]} failed" >&2; failed=1; continue; }
  no_pace <"$out/$ch.gcc.raw" >"$out/$ch.gcc"; no_pace <"$out/$ch.clang.raw" >"$out/$ch.clang"
  if cmp -s "$out/$ch.gcc" "$out/$ch.clang"; then
    echo "  $ch --plain ${flags[*]}: identical ($(wc -l <"$out/$ch.gcc") lines)"
  else
    echo "  $ch --plain ${flags[*]}: clang prints otherwise than GCC:" >&2
    diff "$out/$ch.gcc" "$out/$ch.clang" | head -n 20 >&2 || true
    failed=1
  fi
done
((failed == 0)) || { echo "clang.sh: FAILED: the clang build's output differs from GCC's (above)" >&2; exit 1; }
stamp "every chapter's --plain output byte-identical to GCC's"
