#!/usr/bin/env bash
# A Debian 13 (trixie) chroot to build and test the course on the next Debian release
# (g++ 14, xsimd 13, xtensor 0.25, Catch2 3, fmt 10, OpenBLAS 0.3.29, python3-torch 2.6, glibc 2.41).
#
#   scripts/debian13.sh setup        make the chroot (debootstrap + scripts/deps.sh all inside); cached
#   scripts/debian13.sh start        setup in the background (make test: it overlaps the host's builds);
#                                    its output goes to $TS_DEBIAN13_ROOT.setup.log
#   scripts/debian13.sh join         wait for what start began; its failure is this command's (exit 1,
#                                    the log's last lines printed)
#   scripts/debian13.sh run CMD...   run CMD inside, the repository bind-mounted at the same path, cwd kept
#   scripts/debian13.sh test         setup, then configure + build build-debian13/ inside and run ctest
#                                    (TS_DEBIAN13_TESTS, below: by default the tests whose result can
#                                    differ on Debian 13; all: the whole ctest)
#   scripts/debian13.sh shell        an interactive shell inside
#
# The chroot lives in $TS_DEBIAN13_ROOT (default /var/cache/transformer-steps/debian13) and is
# reused. It is remade in two stages, each stamped inside it with the hash of its recipe:
#   base  debootstrap, remade from scratch when the suite, mirror or package list below changes;
#   deps  scripts/deps.sh all, run again (it installs only what is missing) when deps.sh or
#         one of the scripts/fetch_*.sh it calls changes.
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
deps_recipe() { cat "$here/scripts/deps.sh" "$here"/scripts/fetch_*.sh | hash_of; }

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
  # the host's own certificate authorities (a TLS-inspecting proxy's, say) are trusted inside too:
  # without them npm (scripts/fetch_vocab.sh) and pip fail there with SELF_SIGNED_CERT_IN_CHAIN
  local cas=/usr/local/share/ca-certificates
  if [ -n "$(ls -A "$cas" 2>/dev/null)" ] && [ -x "$root/usr/sbin/update-ca-certificates" ] &&
     ! diff -rq "$cas" "$root$cas" >/dev/null 2>&1; then
    mkdir -p "$root$cas"
    cp -r "$cas/." "$root$cas/"
    chroot "$root" /usr/sbin/update-ca-certificates >/dev/null 2>&1 ||
      echo "debian13: update-ca-certificates failed inside the chroot (HTTPS downloads there may fail)" >&2
  fi
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

# debootstrap on the host: installed in the foreground (start), so that no apt-get of the host
# runs in the background beside make test's own.
need_debootstrap() {
  command -v debootstrap >/dev/null && return
  command -v apt-get >/dev/null || die "debootstrap is missing: install it (Debian: apt-get install debootstrap)"
  echo "debian13: apt-get install debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null \
    || die "apt-get install debootstrap failed: install it, then run make test-debian13 again"
}

# Each stage's time, in the log (the setup's cost is part of make test's).
stamp() { echo "debian13: $1 in $(( $(date +%s) - $2 )) s ($(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) load)"; }

setup() {
  mkdir -p "$(dirname "$root")"
  # start hands its lock down (fd 9, already held); otherwise take it here
  if [ "${TS_DEBIAN13_LOCKED:-}" != 1 ]; then
    exec 9>"$root.lock"
    flock 9
  fi
  local want t0
  want=$(printf '%s' "$base_recipe" | hash_of)
  if [ "$(cat "$root/.base-recipe" 2>/dev/null)" != "$want" ]; then
    need_debootstrap
    t0=$(date +%s)
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
    stamp "debootstrap done" "$t0"
  fi
  want=$(deps_recipe)
  if [ "$(cat "$root/.deps-recipe" 2>/dev/null)" != "$want" ]; then
    rm -f "$root/.ready"
    t0=$(date +%s)
    echo "debian13: scripts/deps.sh all inside the chroot"
    # a dpkg run cut short before (a setup interrupted) would stop apt-get: finish it first
    enter dpkg --configure -a
    enter "$here/scripts/deps.sh" all
    printf '%s\n' "$want" >"$root/.deps-recipe"
    touch "$root/.ready"
    stamp "deps.sh all done" "$t0"
  fi
}

# start: setup in the background. The lock is taken here and handed to the background job (an
# open file description held by it and its children), so join, waiting for the lock, waits for
# exactly that job, however it ends; the job writes its exit status last ($root.setup.rc).
start() {
  mkdir -p "$(dirname "$root")"
  need_debootstrap
  exec 9>"$root.lock"
  flock 9
  rm -f "$root.setup.rc"
  echo "debian13: making the Debian 13 chroot in the background (log: $root.setup.log)"
  ( trap '' HUP
    rc=0
    TS_DEBIAN13_LOCKED=1 "$here/scripts/debian13.sh" setup || rc=$?
    echo "$rc" >"$root.setup.rc"
  ) </dev/null >"$root.setup.log" 2>&1 &
}

join() {
  [ -e "$root.setup.log" ] || die "nothing to join: scripts/debian13.sh start was not run"
  exec 9>"$root.lock"
  flock 9
  local rc; rc=$(cat "$root.setup.rc" 2>/dev/null || true)
  if [ "$rc" != 0 ]; then
    if [ -z "$rc" ]; then
      echo "debian13: the background setup was killed (it wrote no exit status); the end of $root.setup.log:" >&2
    else
      echo "debian13: the background setup failed (exit status $rc); the end of $root.setup.log:" >&2
    fi
    tail -20 "$root.setup.log" >&2
    exit 1
  fi
  grep '^debian13: .* done in ' "$root.setup.log" || true
}

# configure + build build-debian13/ inside, then the tests. Which ones (TS_DEBIAN13_TESTS):
#   lean      (default; make test's Debian 13 stage) the tests whose result can differ on Debian 13
#             and that make test can afford: the unit tests (Catch2 3, xsimd 13, numpy 2, Python
#             3.13's Unicode, the [kernels] [matmul] [annotated] bits against torch 2.6), the
#             catalogue and ISA-route checks (msgfmt, g++ 14's objects), each chapter's seed-0
#             twin against PyTorch 2.6 (ch01-ch10; ch11-ch13 by the train, module, GPT and
#             classifier twins), the cli_* tests (--lang zh under glibc 2.41: Chinese), the
#             checkpoint tests, and the seed-0 twins again on OpenBLAS's SkylakeX kernel (on an
#             AVX-512 CPU: OpenBLAS 0.3.29 has its own small-matrix paths there). Built: only what those run (the chapters, ts_tests, the
#             catalogues, the four dump tools).
#   platform  lean, and every other twin (seeds 1 and 42, --eval, the cases, isa_scalar, lang_zh),
#             threads_same, the save-fault tests and the docs samples (OpenBLAS 0.3.29's digits).
#             Left out of both: what prints the same bytes whatever the libraries and is slow,
#             which the Debian 12 run already covers: width_* (the layout at 20-200 columns),
#             the exercises and learner edits (patch, rebuild, rerun), golden_transcripts (the
#             articles' torch 1.13 runs), docs_figures, the source checks (layers,
#             fp_contract), the fuzzers.
#   all       the whole ctest (everything built)
#   REGEX     ctest -R REGEX (everything built)
tests_lean='^(unit|po_complete|glossary|isa_routes|twin_.*_seed0|twin_.*_skylakex|cli_.*|.*_checkpoints|train_twin|module_twin|gpt_twin|classifier_twin)$'
tests_platform='^(unit|threads_same|po_complete|glossary|isa_routes|twin_.*|cli_.*|.*_checkpoints|.*_save_faults|train_twin|module_twin|gpt_twin|classifier_twin|docs_samples|docs_samples_cpus)$'
targets_lean='chapters ts_tests translations train_dump module_dump gpt_dump classifier_dump'
TARGETS=all
case ${TS_DEBIAN13_TESTS:-lean} in
  lean) TEST_REGEX=$tests_lean; TARGETS=$targets_lean ;;
  platform) TEST_REGEX=$tests_platform; TARGETS=$targets_lean ;;
  all) TEST_REGEX=. ;;
  *) TEST_REGEX=$TS_DEBIAN13_TESTS ;;
esac
run_tests() {
  local jobs=${JOBS:-$(nproc)}
  enter_last env CCACHE_DIR=/var/cache/ccache CCACHE_BASEDIR="$here" \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime sh -c '
    set -e
    # the vocabulary lands in the checkout that made the chroot: another checkout fetches its
    # own (a no-op when present; npm is in the chroot)
    scripts/fetch_vocab.sh
    b=build-debian13
    [ -f "$b/CMakeCache.txt" ] || cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DTS_BENCH=OFF \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
    t0=$(date +%s)
    # $3 unquoted: the target list
    cmake --build "$b" -j "$1" --target $3 >"$b/build.log" 2>&1 || { tail -40 "$b/build.log"; exit 1; }
    if grep -E "warning:" "$b/build.log" | head -20 | grep .; then echo "debian13: the build warns" >&2; exit 1; fi
    echo "debian13: built ($3) in $(( $(date +%s) - t0 )) s ($(cut -d" " -f1-3 /proc/loadavg) load)"
    cd "$b"
    t0=$(date +%s)
    ctest --output-on-failure -j "$1" -R "$2"
    echo "debian13: ctest in $(( $(date +%s) - t0 )) s ($(cut -d" " -f1-3 /proc/loadavg) load)"
  ' sh "$jobs" "$TEST_REGEX" "$TARGETS"
}

cmd=${1:-}
case $cmd in
  __inside) shift; inside "$@" ;;
  setup) setup ;;
  start) start ;;
  join) join ;;
  run) shift; [ $# -gt 0 ] || die "usage: scripts/debian13.sh run CMD [ARGS...]"; enter_last "$@" ;;
  shell) enter_last /bin/bash ;;
  test) ( setup ); cd "$here"; run_tests ;;
  *) die "usage: scripts/debian13.sh setup | start | join | run CMD... | test | shell" ;;
esac
