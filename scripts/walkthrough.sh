#!/usr/bin/env bash
# make walkthrough: every chapter in article order.
#   scripts/walkthrough.sh [--build] [BUILD_DIR] [chapter flags, e.g. --color=always]
# --build (what make walkthrough passes): build only what the chapters need, chapter 1 first.
# A BUILD_DIR without a CMake cache is configured for the chapters alone (-DTS_TESTS=OFF
# -DTS_BENCH=OFF: no tests, tools or benchmarks; `make test` later turns them on in the same
# folder and reuses every object built here). The course's core and ch01 are built, chapter 1
# starts, and the other chapters build in the background meanwhile, one after another, each into
# BUILD_DIR/walkthrough/<chapter>.log; a chapter not built yet is waited for, one that does not
# build stops the walkthrough with its compiler's messages. Without --build the binaries must be
# there already. JOBS (default: the number of CPUs) is the build's -j.
# On a terminal it pauses after each step of a chapter (the chapters' --step-by-step: Enter
# for the next step, b to see the step again, q to leave the chapter) and before each chapter
# after the first ("chapter 2: ... press Enter (q to stop)"), so the output can be read beside
# the article. Piped or redirected (make walkthrough | less -R, > out.txt), it runs straight
# through, as before.
# The pause speaks the chapters' language (--lang zh, or LC_ALL / LC_MESSAGES / LANG zh*):
# its text is in the same gettext catalog (po/), read with gettext(1).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
building=0
[ "${1:-}" = --build ] && { building=1; shift; }
build=${1:-build}
[ $# -gt 0 ] && shift
chapters=$(cd "$here/chapters" && ls ch*.cpp | sed 's/\.cpp$//' | sort)
interactive=0
[ -t 0 ] && [ -t 1 ] && interactive=1
bold=$'\033[1m' plain=$'\033[0m'
case " $* " in *" --no-color "*|*" --color=never "*|*" --color never "*) bold='' plain='' ;; esac
[ -n "${NO_COLOR:-}" ] && bold='' plain=
# the language, chosen as the chapters choose it (src/course/i18n.cpp)
lang=${LC_ALL:-${LC_MESSAGES:-${LANG:-}}}
prev=
for a in "$@"; do
  case "$a" in --lang=*) lang=${a#--lang=} ;; esac
  [ "$prev" = --lang ] && lang=$a
  prev=$a
done
export TEXTDOMAIN=transformer-steps TEXTDOMAINDIR=${TS_LOCALEDIR:-$build/locale}
case "$lang" in zh*) tr() { LC_ALL=C.UTF-8 LANGUAGE=zh_CN gettext "$1"; } ;; *) tr() { printf '%s' "$1"; } ;; esac
command -v gettext >/dev/null || tr() { printf '%s' "$1"; }

# ---- building (--build): the core and chapter 1 now, the other chapters in the background ----
state=$build/walkthrough
bg=
stop_background() {
  if [ -n "$bg" ] && kill -0 "$bg" 2>/dev/null; then
    kill -TERM -- "-$bg" 2>/dev/null || kill -TERM "$bg" 2>/dev/null
    echo "walkthrough: the chapters still building were stopped; make walkthrough builds them next time" >&2
  fi
}
# The compiler's messages of a build that failed: its errors first, then the end of its log.
show_failure() {  # LOG WHAT
  echo "walkthrough: $2 did not build; the compiler said (full log: $1):" >&2
  { grep -E -A3 'error|Error [0-9]' "$1" | head -n 40; echo "[...]"; tail -n 15 "$1"; } >&2
}
if [ $building = 1 ]; then
  jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
  mkdir -p "$state"
  rm -f "$state"/*.ok "$state"/*.failed
  first=$(printf '%s\n' $chapters | head -n 1)
  t0=$(date +%s)
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "walkthrough: configuring $build for the chapters alone (no tests, no benchmarks)"
    if ! cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTS_TESTS=OFF -DTS_BENCH=OFF \
         >"$state/configure.log" 2>&1; then
      echo "walkthrough: cmake could not configure $build (log: $state/configure.log):" >&2
      tail -n 20 "$state/configure.log" >&2
      exit 1
    fi
  fi
  echo "walkthrough: building the course's core and $first with -j $jobs (log: $state/$first.log)"
  if ! cmake --build "$build" -j "$jobs" --target "$first" >"$state/$first.log" 2>&1; then
    show_failure "$state/$first.log" "$first"
    exit 1
  fi
  touch "$state/$first.ok"
  echo "walkthrough: $first built in $(( $(date +%s) - t0 )) s; the other chapters build in the background"
  # its own process group (set -m), so that leaving the walkthrough stops all of it
  set -m
  (
    for ch in $chapters; do
      [ "$ch" = "$first" ] && continue
      if cmake --build "$build" -j "$jobs" --target "$ch" >"$state/$ch.log" 2>&1; then
        touch "$state/$ch.ok"
      else
        touch "$state/$ch.failed"
      fi
    done
  ) </dev/null >/dev/null 2>&1 &
  bg=$!
  set +m
  trap stop_background EXIT
  trap 'exit 130' INT TERM HUP
fi
# Waits until chapter $1 is built (--build); exits with its compiler's messages if it failed.
wait_built() {
  [ $building = 1 ] || return 0
  [ -f "$state/$1.ok" ] && return 0
  local said=0
  while [ ! -f "$state/$1.ok" ]; do
    if [ -f "$state/$1.failed" ]; then
      show_failure "$state/$1.log" "$1"
      exit 1
    fi
    if ! kill -0 "$bg" 2>/dev/null && [ ! -f "$state/$1.ok" ] && [ ! -f "$state/$1.failed" ]; then
      echo "walkthrough: the background build stopped before $1 (log: $state/)" >&2
      exit 1
    fi
    [ $said = 0 ] && { echo "walkthrough: waiting for $1 to finish building (log: $state/$1.log)"; said=1; }
    sleep 0.5
  done
}

n=0
for ch in $chapters; do
  n=$((n + 1))
  wait_built "$ch"
  if [ $n -gt 1 ] && [ $interactive = 1 ]; then
    # the chapter's title: the first line of its --help, up to "(follows" / "（对应"
    title=$("$build/$ch" "$@" --help 2>/dev/null | head -n 1 | sed 's/ (follows.*//; s/（对应.*//')
    # TRANSLATORS: the walkthrough's pause before a chapter: its number and title
    printf "\n%s$(tr "chapter %d: %s  press Enter (q to stop) ")%s" "$bold" "$n" "${title:-$ch}" "$plain"
    read -r answer || { echo; exit 0; }
    case "$answer" in q|Q|quit|exit) exit 0 ;; esac
  fi
  if [ $interactive = 1 ] && ! case " $* " in *" --step-by-step "*) true ;; *) false ;; esac; then "$build/$ch" --step-by-step "$@"; else "$build/$ch" "$@"; fi
  code=$?
  if [ $code -ne 0 ]; then
    echo "walkthrough: $ch exited with code $code" >&2
    exit $code
  fi
done
