#!/usr/bin/env bash
# make walkthrough: every chapter in article order.
#   scripts/walkthrough.sh [BUILD_DIR] [chapter flags, e.g. --color=always]
# On a terminal it pauses after each step of a chapter (the chapters' --step-by-step: Enter
# for the next step, b to see the step again, q to leave the chapter) and before each chapter
# after the first ("chapter 2: ... press Enter (q to stop)"), so the output can be read beside
# the article. Piped or redirected (make walkthrough | less -R, > out.txt), it runs straight
# through, as before.
# The pause speaks the chapters' language (--lang zh, or LC_ALL / LC_MESSAGES / LANG zh*):
# its text is in the same gettext catalog (po/), read with gettext(1).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
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
n=0
for ch in $chapters; do
  n=$((n + 1))
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
