#!/usr/bin/env python3
"""Fill a .po file's empty or fuzzy msgstr from translation drafts.

usage: po_fill.py FILE.po DRAFT.py...
Each DRAFT.py defines T = {msgid: msgstr} (msgid and msgstr as they appear between the
quotes in a .po file, i.e. with \\n and \\" escapes). A translator's helper for batches of
messages; scripts/po.sh preview uses it. Prints how many messages are still untranslated.
"""
import importlib.util
import re
import sys


def po_escape(text):
    """A Python string as it is written between a .po file's quotes."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def raw(text):
    """True if `text` holds a real newline or an unescaped quote: written as Python text, not .po text."""
    return "\n" in text or "\t" in text or re.search(r'(?<!\\)"', text) is not None


def drafts(paths):
    """msgid (as in the .po file) -> msgstr (as in the .po file). A draft may write its
    strings either way: as .po text (escapes kept, r"..." or "\\n") or as plain Python text
    (real newlines and quotes), which is escaped here."""
    table = {}
    for path in paths:
        spec = importlib.util.spec_from_file_location("draft", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for k, v in mod.T.items():
            v = po_escape(v) if raw(v) else v
            table[k] = v
            if raw(k):
                table[po_escape(k)] = v
    return table


def main():
    po, table = sys.argv[1], drafts(sys.argv[2:])
    entries = open(po, encoding="utf-8").read().split("\n\n")
    out, missing = [], 0
    for e in entries:
        lines = e.split("\n")
        mid = [i for i, l in enumerate(lines) if l.startswith("msgid ")]
        sid = [i for i, l in enumerate(lines) if l.startswith("msgstr ")]
        if mid and sid:
            # msgid may continue on following "..." lines (no-wrap keeps one, but be safe)
            msgid = "".join(re.match(r'^(?:msgid )?"(.*)"$', l).group(1) for l in lines[mid[0]:sid[0]])
            msgstr = "".join(re.match(r'^(?:msgstr )?"(.*)"$', l).group(1) for l in lines[sid[0]:] if l.strip())
            fuzzy = any(l.startswith("#,") and "fuzzy" in l for l in lines)
            if msgid and msgid in table and (not msgstr or fuzzy):
                keep = [l for l in lines[:sid[0]] if not (l.startswith("#,") and "fuzzy" in l)]
                keep = [l for l in keep if not l.startswith("#| ")]
                lines = keep + ['msgstr "%s"' % table[msgid]]
                msgstr = table[msgid]
            if msgid and not msgstr:
                missing += 1
        out.append("\n".join(lines))
    open(po, "w", encoding="utf-8").write("\n\n".join(out))
    print("po_fill: %d message(s) still untranslated in %s" % (missing, po))


if __name__ == "__main__":
    main()
