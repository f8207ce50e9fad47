#!/usr/bin/env bash
# The translations (GNU gettext), for translators and for the tests.
#   scripts/po.sh update   extract the marked messages (_(), N_(), trf()) from src/ and
#                          chapters/ into po/transformer-steps.pot, merge them into each
#                          po/<lang>.po (new messages arrive untranslated, changed ones fuzzy)
#   scripts/po.sh preview DIR [DICT.py ...]
#                          a catalog of the code as it is now, without touching po/: merged
#                          with po/<lang>.po, filled from the DICT files' T = {msgid: msgstr}
#                          (a translator's drafts), compiled into DIR even if incomplete;
#                          try it with TS_LOCALEDIR=DIR ./build/chNN_x --lang zh
#   scripts/po.sh check    fail unless every catalog translates every marked message:
#                          msgcmp (no message missing) and msgfmt --check --statistics
#                          (0 fuzzy, 0 untranslated)
# Edit po/zh_CN.po with any PO editor (poedit, Emacs po-mode, Lokalize) or by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
pot_of() {  # the template, written to $1
  find src chapters -name '*.cpp' -o -name '*.hpp' | LC_ALL=C sort |
    xgettext --files-from=- --language=C++ --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=trf --keyword=trfn:1,2 \
      --add-comments=TRANSLATORS: --package-name=transformer-steps --msgid-bugs-address=none \
      --sort-by-file --no-wrap -o "$1"
  # the walkthrough's pause (scripts/walkthrough.sh, read with gettext(1))
  xgettext --join-existing --language=Shell --from-code=UTF-8 --keyword=tr --add-comments=TRANSLATORS: \
    --no-wrap -o "$1" scripts/walkthrough.sh
  # the messages are fmt formats, never printf ones: a "%" before a letter ("{pct}% of") is not a
  # C directive, so drop xgettext's c-format guess (msgfmt --check would hold translations to it)
  # (-i.bak, then rm: the one in-place form GNU and BSD/macOS sed both read the same way)
  sed -i.bak -e '/^#, c-format$/d' -e 's/^\(#,.*\), c-format/\1/' -e 's/^#, c-format, /#, /' "$1"
  rm -f "$1.bak"
}
case "${1:-}" in
  update)
    pot_of po/transformer-steps.pot
    for po in po/*.po; do
      msgmerge --quiet --update --backup=none --no-wrap "$po" po/transformer-steps.pot
    done
    echo "po: $(grep -c '^msgid ' po/transformer-steps.pot) messages in po/transformer-steps.pot"
    ;;
  preview)
    dir=${2:?usage: scripts/po.sh preview DIR [DICT.py ...]}
    shift 2
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    pot_of "$tmp/now.pot"
    for po in po/*.po; do
      lang=$(basename "$po" .po)
      msgmerge --quiet --no-fuzzy-matching --no-wrap -o "$tmp/$lang.po" "$po" "$tmp/now.pot"
      [ $# -gt 0 ] && /usr/bin/python3 scripts/po_fill.py "$tmp/$lang.po" "$@"
      mkdir -p "$dir/$lang/LC_MESSAGES"
      msgfmt --statistics -o "$dir/$lang/LC_MESSAGES/transformer-steps.mo" "$tmp/$lang.po"
    done
    ;;
  check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    pot_of "$tmp/now.pot"
    status=0
    for po in po/*.po; do
      if ! msgcmp --use-untranslated "$po" "$tmp/now.pot" 2>"$tmp/cmp.txt"; then
        echo "po: $po lacks messages the code now has (run scripts/po.sh update, then translate):" >&2
        grep -v '^msgcmp: found' "$tmp/cmp.txt" | head -20 >&2
        status=1
      fi
      stats=$(msgfmt --check --statistics -o /dev/null "$po" 2>&1) || { echo "$stats" >&2; status=1; }
      if echo "$stats" | grep -Eq 'fuzzy|untranslated'; then
        echo "po: $po: $stats (every message must be translated, none fuzzy)" >&2
        status=1
      else
        echo "po: $po: $stats"
      fi
    done
    exit $status
    ;;
  *) echo "usage: scripts/po.sh update|check" >&2; exit 2 ;;
esac
