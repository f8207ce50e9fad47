#!/usr/bin/env bash
# A Debian 13 (trixie) chroot to build and test the course on the next Debian release
# (g++ 14, xsimd 13, xtensor 0.25, Catch2 3, fmt 10, OpenBLAS 0.3.29, python3-torch 2.6, glibc 2.41).
#
#   scripts/debian13.sh setup        make the chroot (debootstrap + scripts/deps.sh all inside); cached
#   scripts/debian13.sh run CMD...   run CMD inside, the repository bind-mounted at the same path, cwd kept
#   scripts/debian13.sh test         setup, then configure + build build-debian13/ inside and run ctest:
#                                    the unit tests, every chapter's twin (PyTorch 2.6), the --lang zh
#                                    tests, the docs samples (TS_DEBIAN13_TESTS=all: the whole ctest)
#   scripts/debian13.sh shell        an interactive shell inside
#
# The chroot lives in $TS_DEBIAN13_ROOT (default /var/cache/transformer-steps/debian13) and is
# reused. It is remade in two stages, each stamped inside it with the hash of its recipe:
#   base  debootstrap, remade from scratch when the suite, mirror or package list below changes;
#   deps  scripts/deps.sh all, run again (it installs only what is missing) when deps.sh or
#         fetch_vocab.sh change.
# When the deps stage is done, $root/.ready exists. Needs root (debootstrap, chroot, mount).
# Mounts (/proc, /dev, /sys, the repository) are made in a private mount namespace (unshare -m),
# so the kernel removes them when the command ends, whether it succeeds, fails or is killed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=${TS_DEBIAN13_ROOT:-/var/cache/transformer-steps/debian13}
suite=trixie
# The mirror this machine's own apt uses (deb.debian.org serves every release).
mirror=${TS_DEBIAN13_MIRROR:-$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' \
          /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
include=ca-certificates,ccache  # ccache: a fresh checkout's build-debian13 compiles from the cache
base_recipe="suite=$suite mirror=$mirror variant=minbase include=$include sources=main,updates,security dpkg=unsafe-io v1"

die() { echo "debian13: $*" >&2; exit 2; }
hash_of() { sha256sum | cut -c1-16; }
deps_recipe() { cat "$here/scripts/deps.sh" "$here/scripts/fetch_vocab.sh" | hash_of; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and mount): run it with sudo"

# Inside the private mount namespace: mount, chroot, run. Called by `enter` only.
inside() {
  local cwd=$1; shift
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  mkdir -p "$root$here"
  mount --bind "$here" "$root$here"
  # A git worktree's .git names a directory elsewhere (the main checkout's .git): mount it too.
  if [ -f "$here/.git" ]; then
    local common
    common=$(git -C "$here" rev-parse --git-common-dir 2>/dev/null || true)
    common=$(cd "$here" && cd "$common" 2>/dev/null && pwd || true)
    if [ -n "$common" ] && [ "${common#"$here"/}" = "$common" ]; then
      mkdir -p "$root$common"; mount --bind -o ro "$common" "$root$common" || true
    fi
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  case $cwd in "$here"|"$here"/*) ;; *) cwd=$here ;; esac
  exec env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    chroot "$root" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$cwd" "$@"
}

enter() {
  [ -x "$root/bin/sh" ] || die "no chroot at $root: run scripts/debian13.sh setup"
  unshare --mount --propagation private -- "$here/scripts/debian13.sh" __inside "$PWD" "$@"
}
# enter, as the last thing this script does (bash reads a script as it runs: exec, so that an
# edit of this file meanwhile cannot change what a long command does when it returns)
enter_last() {
  [ -x "$root/bin/sh" ] || die "no chroot at $root: run scripts/debian13.sh setup"
  exec unshare --mount --propagation private -- "$here/scripts/debian13.sh" __inside "$PWD" "$@"
}

setup() {
  mkdir -p "$(dirname "$root")"
  exec 9>"$root.lock"
  flock 9
  local want
  want=$(printf '%s' "$base_recipe" | hash_of)
  if [ "$(cat "$root/.base-recipe" 2>/dev/null)" != "$want" ]; then
    if ! command -v debootstrap >/dev/null; then  # (make test on a fresh Debian host)
      command -v apt-get >/dev/null || die "debootstrap is missing: install it (Debian: apt-get install debootstrap)"
      echo "debian13: apt-get install debootstrap"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
        || die "apt-get install debootstrap failed: install it, then run make test-debian13 again"
    fi
    echo "debian13: debootstrap $suite from $mirror into $root (a few minutes, once)"
    rm -rf "$root.new"
    debootstrap --variant=minbase --include="$include" "$suite" "$root.new" "$mirror" \
      >"$root.new.log" 2>&1 || { tail -5 "$root.new.log" >&2; die "debootstrap failed (log: $root.new.log)"; }
    rm -f "$root.new.log"
    rm -f "$root.new/etc/apt/sources.list"
    # a throwaway root: dpkg need not fsync every file it unpacks (minutes saved on a cold setup)
    echo force-unsafe-io >"$root.new/etc/dpkg/dpkg.cfg.d/unsafe-io"
    cat >"$root.new/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    printf '%s\n' "$want" >"$root.new/.base-recipe"
    rm -rf "$root"
    mv "$root.new" "$root"
  fi
  want=$(deps_recipe)
  if [ "$(cat "$root/.deps-recipe" 2>/dev/null)" != "$want" ]; then
    rm -f "$root/.ready"
    echo "debian13: scripts/deps.sh all inside the chroot"
    enter "$here/scripts/deps.sh" all
    printf '%s\n' "$want" >"$root/.deps-recipe"
    touch "$root/.ready"
  fi
}

# configure + build build-debian13/ inside, then the tests. Which ones (TS_DEBIAN13_TESTS):
#   platform  (default) every test whose result can differ on Debian 13: the unit tests (Catch2 3,
#             xsimd 13, numpy 2, Python 3.13's Unicode), every chapter's twins against PyTorch
#             2.6 (the module, train, GPT and classifier twins too), the cli_* tests (--lang zh
#             under glibc 2.41), the checkpoint tests, the docs samples (OpenBLAS 0.3.29). Left
#             out: what prints the same bytes whatever the libraries and is slow, which the
#             Debian 12 run already covers: width_* (the layout at 20-200 columns), the
#             exercises and learner edits (patch, rebuild, rerun), golden_transcripts (the
#             articles' torch 1.13 runs), docs_figures, the fuzzers.
#   all       the whole ctest
#   REGEX     ctest -R REGEX
tests_platform='^(unit|threads_same|po_complete|glossary|isa_routes|layers|fp_contract|twin_.*|cli_.*|.*_checkpoints|.*_save_faults|train_twin|module_twin|gpt_twin|classifier_twin|docs_samples)$'
case ${TS_DEBIAN13_TESTS:-platform} in
  platform) TEST_REGEX=$tests_platform ;;
  all) TEST_REGEX=. ;;
  *) TEST_REGEX=$TS_DEBIAN13_TESTS ;;
esac
run_tests() {
  local jobs; jobs=$(nproc)
  enter_last env CCACHE_DIR=/var/cache/ccache CCACHE_BASEDIR="$here" \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime sh -c '
    set -e
    # the vocabulary lands in the checkout that made the chroot: another checkout fetches its
    # own (a no-op when present; npm is in the chroot)
    scripts/fetch_vocab.sh
    b=build-debian13
    [ -f "$b/CMakeCache.txt" ] || cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DTS_BENCH=OFF \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
    cmake --build "$b" -j "$1" >"$b/build.log" 2>&1 || { tail -40 "$b/build.log"; exit 1; }
    if grep -E "warning:" "$b/build.log" | head -20 | grep .; then echo "debian13: the build warns" >&2; exit 1; fi
    cd "$b"
    ctest --output-on-failure -j "$1" -R "$2"
  ' sh "$jobs" "$TEST_REGEX"
}

cmd=${1:-}
case $cmd in
  __inside) shift; inside "$@" ;;
  setup) setup ;;
  run) shift; [ $# -gt 0 ] || die "usage: scripts/debian13.sh run CMD [ARGS...]"; enter_last "$@" ;;
  shell) enter_last /bin/bash ;;
  test) ( setup ); cd "$here"; run_tests ;;
  *) die "usage: scripts/debian13.sh setup | run CMD... | test | shell" ;;
esac
