#!/usr/bin/python3
"""Generate src/text/unicode_tables_<version>.inc: the Unicode data the WordPiece tokenizer needs.

BERT's BasicTokenizer (HF transformers, tokenization_bert.py) asks Python's
`unicodedata` five questions about a character. The C++ tokenizer (src/text/tokenizer.cpp)
answers them from the tables written here, so both see the same Unicode version:

  question                              Python                        table
  is it a control char (dropped)?       category(c).startswith("C")   kControlRanges
  is it a space separator?              category(c) == "Zs"           kSpaceSeparatorRanges
  does str.split() split on it too?     c.isspace()                   kExtraSplitSpaces
  every c str.split() splits on         c.isspace()                   kPythonSpaces
  is it punctuation?                    category(c).startswith("P")   kPunctuationRanges
  is it an accent (dropped)?            category(c) == "Mn"           kNonspacingMarkRanges
  lower case                            c.lower()                     kLowerRuns + kLowerSpecial
  canonical decomposition (NFD)         normalize("NFD", s)           kDecompositions + kCombiningClassRanges

One table set per Unicode version, named by it (unicode_tables_14_0_0.inc from Debian 12's
Python 3.11, unicode_tables_15_1_0.inc from Debian 13's 3.13): configure picks the one of the
Unicode that /usr/bin/python3 has (CMakeLists.txt, TS_UNICODE), so the tokenizer agrees with
the learner's own Python. Run it with the same interpreter as the reference twin:
    /usr/bin/python3 scripts/gen_unicode_tables.py          # writes this Python's table set
    /usr/bin/python3 scripts/gen_unicode_tables.py --check  # exit 1 if it is stale, 77 if absent
Before writing, the script replays the C++ algorithm on the tables for every code point
and compares with Python, so a table bug fails here, not in a chapter.

src/course/display_width.inc (terminal columns, which follow the terminal, not Python) is one
file, made from the Unicode its header names: written and checked only by a Python of that
Unicode (or when it is absent).
"""
import re
import sys
import unicodedata
from pathlib import Path

MAX = sys.maxunicode  # 0x10FFFF
SRC = Path(__file__).resolve().parent.parent / "src"
# This Python's table set: src/text/unicode_tables_14_0_0.inc for Unicode 14.0.0
OUT = SRC / "text" / f"unicode_tables_{unicodedata.unidata_version.replace('.', '_')}.inc"
# The terminal columns of a character, for course/layout.cpp's display_width (CJK text in
# tables, heatmaps and wrapped prose takes two columns per character).
OUT_WIDTH = SRC / "course" / "display_width.inc"

# Hangul syllables decompose algorithmically (Unicode ch. 3.12); tokenizer.cpp does it in code.
S_BASE, S_COUNT = 0xAC00, 11172


def cat(c):
    return unicodedata.category(chr(c))


def ranges(pred):
    """Maximal runs [first, last] of code points where pred holds."""
    out, start = [], None
    for c in range(MAX + 2):
        hit = c <= MAX and pred(c)
        if hit and start is None:
            start = c
        elif not hit and start is not None:
            out.append((start, c - 1))
            start = None
    return out


def lower_runs():
    """Single-char lower-case mappings as runs (first, last, delta, stride):
    every stride-th code point from first to last maps to itself + delta."""
    pairs = []
    for c in range(MAX + 1):
        low = chr(c).lower()
        if len(low) == 1 and low != chr(c):
            pairs.append((c, ord(low) - c))
    runs = []  # [first, last, delta, stride]
    for c, d in pairs:
        if runs:
            r = runs[-1]
            step = c - r[1]
            if r[2] == d and ((r[0] == r[1] and step in (1, 2)) or (r[0] != r[1] and step == r[3])):
                r[1], r[3] = c, step
                continue
        runs.append([c, c, d, 1])
    return [tuple(r) for r in runs]


def lower_special():
    """Code points whose lower case is several code points (U+0130 -> 'i' + U+0307)."""
    return [(c, chr(c).lower()) for c in range(MAX + 1) if len(chr(c).lower()) > 1]


def decompositions():
    """Canonical decomposition mappings (one or two code points, as in UnicodeData.txt)
    of every character that can reach NFD in the tokenizer: text is lower-cased first,
    so only lower-case fixed points matter, plus whatever their mappings refer to."""
    def mapping(c):
        d = unicodedata.decomposition(chr(c))
        if not d or d.startswith("<"):  # none, or a compatibility mapping (NFKD only)
            return None
        return [int(x, 16) for x in d.split()]

    todo = [c for c in range(MAX + 1) if chr(c).lower() == chr(c) and mapping(c)]
    todo = [c for c in todo if not S_BASE <= c < S_BASE + S_COUNT]
    table = {}
    while todo:
        c = todo.pop()
        if c in table:
            continue
        table[c] = mapping(c)
        todo += [x for x in table[c] if mapping(x)]
    assert all(1 <= len(m) <= 2 for m in table.values())
    return sorted(table.items())


def hangul_nfd(c):
    s = c - S_BASE
    out = [0x1100 + s // 588, 0x1161 + (s % 588) // 28]
    if s % 28:
        out.append(0x11A7 + s % 28)
    return out


def check(tables):
    """Replay tokenizer.cpp's lower -> NFD -> drop Mn on the tables; compare with Python."""
    import bisect

    def in_ranges(rs, c):
        i = bisect.bisect_right(rs, (c, MAX + 1)) - 1
        return i >= 0 and rs[i][0] <= c <= rs[i][1]

    runs = tables["lower"]
    firsts = [r[0] for r in runs]
    special = dict(tables["lower_special"])
    decomp = dict(tables["decomp"])
    ccc = {c: k for (a, b, k) in tables["ccc"] for c in range(a, b + 1)}

    def lower(c):
        if c in special:
            return [ord(x) for x in special[c]]
        i = bisect.bisect_right(firsts, c) - 1
        if i >= 0:
            a, b, d, s = runs[i]
            if c <= b and (c - a) % s == 0:
                return [c + d]
        return [c]

    def nfd(cs):
        out = []
        def push(c):
            if S_BASE <= c < S_BASE + S_COUNT:
                out.extend(hangul_nfd(c))
            elif c in decomp:
                for x in decomp[c]:
                    push(x)
            else:
                out.append(c)
        for c in cs:
            push(c)
        # canonical ordering: stable sort of each run of non-starters by combining class
        i = 0
        while i < len(out):
            if ccc.get(out[i], 0) == 0:
                i += 1
                continue
            j = i
            while j < len(out) and ccc.get(out[j], 0) != 0:
                j += 1
            out[i:j] = sorted(out[i:j], key=lambda x: ccc[x])
            i = j
        return out

    mn = tables["Mn"]
    bad = 0
    for c in range(MAX + 1):
        if 0xD800 <= c <= 0xDFFF:
            continue
        want = "".join(x for x in unicodedata.normalize("NFD", chr(c).lower())
                       if unicodedata.category(x) != "Mn")
        got = "".join(chr(x) for x in nfd(lower(c)) if not in_ranges(mn, x))
        if want != got:
            bad += 1
            if bad < 10:
                print(f"mismatch U+{c:04X}: want {want!r} got {got!r}", file=sys.stderr)
    # a few strings that exercise canonical reordering across characters
    for s in ["\U0001D16D\U0001D165", "\U0001D16D\u034F\U0001D165", "a\u0301\u0316\u302E\u302Fb",
              "\u1E0B\u0323", "\u0344\u0F73\u0F75", "\uAC00\u11A8"]:
        want = "".join(x for x in unicodedata.normalize("NFD", s.lower())
                       if unicodedata.category(x) != "Mn")
        lowered = [y for x in s for y in lower(ord(x))]
        got = "".join(chr(x) for x in nfd(lowered) if not in_ranges(mn, x))
        if want != got:
            bad += 1
            print(f"mismatch {s!r}: want {want!r} got {got!r}", file=sys.stderr)
    # assumptions tokenizer.cpp relies on
    for c in range(MAX + 1):
        low = chr(c).lower()
        assert all(x.lower() == x for x in low), f"lower not idempotent at U+{c:04X}"
        if low != chr(c):  # lower-casing never creates whitespace, controls or punctuation
            for x in low:
                assert not (x.isspace() or cat(ord(x))[0] in "CPZ"), f"U+{c:04X}"
    return bad == 0


def fmt_rows(items, per_line):
    rows = []
    for i in range(0, len(items), per_line):
        rows.append("    " + " ".join(items[i:i + per_line]))
    return "\n".join(rows)


def hx(c):
    return f"0x{c:04X}"


def render(tables):
    v = sys.version.split()[0]
    out = [
        f"// src/text/{OUT.name}: GENERATED by scripts/gen_unicode_tables.py; do not edit.",
        f"// Source: Python {v} unicodedata, Unicode {unicodedata.unidata_version} (the /usr/bin/python3",
        "// that runs the reference twin, so C++ and Python agree on every character).",
        "// Included once, by src/text/tokenizer.cpp (the set configure chose: TS_UNICODE), which",
        "// defines LowerRun, LowerSpecial, Decomposition and CombiningClassRange.",
        "",
        f'constexpr char kUnicodeVersion[] = "{unicodedata.unidata_version}";',
        "",
    ]

    def range_table(name, comment, rs):
        out.append(f"// {comment} ({len(rs)} ranges [first, last])")
        out.append(f"constexpr CodeRange {name}[] = {{")
        out.append(fmt_rows([f"{{{hx(a)}, {hx(b)}}}," for a, b in rs], 6))
        out.append("};")
        out.append("")

    range_table("kControlRanges", 'category "C*": Cc, Cf, Cs, Co and unassigned Cn', tables["C"])
    range_table("kSpaceSeparatorRanges", 'category "Zs"', tables["Zs"])
    range_table("kPunctuationRanges", 'category "P*"', tables["P"])
    range_table("kNonspacingMarkRanges", 'category "Mn" (accents, dropped after NFD)', tables["Mn"])

    extra = tables["extra_space"]
    out.append("// Neither control nor Zs, yet str.split() splits on them (c.isspace() is True)")
    out.append("constexpr char32_t kExtraSplitSpaces[] = {" + ", ".join(hx(c) for c in extra) + "};")
    out.append("")
    out.append("// Every code point str.split() splits on (c.isspace() is True), sorted")
    out.append("constexpr char32_t kPythonSpaces[] = {" + ", ".join(hx(c) for c in tables["py_space"]) + "};")
    out.append("")

    runs = tables["lower"]
    out.append(f"// str.lower(), one code point to one: every stride-th code point in [first, last]")
    out.append(f"// maps to itself + delta ({len(runs)} runs {{first, last, delta, stride}})")
    out.append("constexpr LowerRun kLowerRuns[] = {")
    out.append(fmt_rows([f"{{{hx(a)}, {hx(b)}, {d}, {s}}}," for a, b, d, s in runs], 4))
    out.append("};")
    out.append("")
    out.append("// str.lower() giving several code points {from, {to...}} (SpecialCasing.txt)")
    out.append("constexpr LowerSpecial kLowerSpecial[] = {")
    for c, low in tables["lower_special"]:
        assert len(low) <= 3
        out.append(f"    {{{hx(c)}, {{{', '.join(hx(ord(x)) for x in low)}}}}},")
    out.append("};")
    out.append("")

    dec = tables["decomp"]
    out.append("// Canonical decompositions {code point, first, second or 0} of the characters that")
    out.append("// survive lower-casing; apply recursively. Hangul syllables are done in code.")
    out.append(f"// ({len(dec)} entries)")
    out.append("constexpr Decomposition kDecompositions[] = {")
    out.append(fmt_rows([f"{{{hx(c)}, {hx(m[0])}, {hx(m[1]) if len(m) > 1 else 0}}}," for c, m in dec], 4))
    out.append("};")
    out.append("")
    ccc = tables["ccc"]
    out.append(f"// Canonical combining class != 0, for NFD's reordering ({len(ccc)} ranges {{first, last, class}})")
    out.append("constexpr CombiningClassRange kCombiningClassRanges[] = {")
    out.append(fmt_rows([f"{{{hx(a)}, {hx(b)}, {k}}}," for a, b, k in ccc], 5))
    out.append("};")
    out.append("")
    return "\n".join(out)


def render_width():
    """East Asian Width W and F: two columns; marks and format characters: none."""
    v = sys.version.split()[0]
    # (assigned characters only: this Python answers "F" for unassigned code points)
    wide = ranges(lambda c: cat(c) != "Cn" and unicodedata.east_asian_width(chr(c)) in ("W", "F"))
    zero = ranges(lambda c: cat(c) in ("Mn", "Me", "Cf") and c != 0xAD)
    out = [
        "// src/course/display_width.inc: GENERATED by scripts/gen_unicode_tables.py; do not edit.",
        f"// Source: Python {v} unicodedata, Unicode {unicodedata.unidata_version}.",
        "// Included once, by src/course/layout.cpp, which defines ColumnRange.",
        "",
    ]
    for name, comment, rs in (("kWideRanges", "East Asian Width W or F: two terminal columns", wide),
                              ("kZeroWidthRanges", "categories Mn, Me, Cf (not U+00AD): no column", zero)):
        out.append(f"// {comment} ({len(rs)} ranges [first, last])")
        out.append(f"constexpr ColumnRange {name}[] = {{")
        out.append(fmt_rows([f"{{{hx(a)}, {hx(b)}}}," for a, b in rs], 6))
        out.append("};")
        out.append("")
    return "\n".join(out)


def combining_ranges():
    out = []
    for c in range(MAX + 1):
        k = unicodedata.combining(chr(c))
        if k == 0:
            continue
        if out and out[-1][1] == c - 1 and out[-1][2] == k:
            out[-1][1] = c
        else:
            out.append([c, c, k])
    return [tuple(r) for r in out]


def main():
    tables = {
        "C": ranges(lambda c: cat(c)[0] == "C"),
        "Zs": ranges(lambda c: cat(c) == "Zs"),
        "P": ranges(lambda c: cat(c)[0] == "P"),
        "Mn": ranges(lambda c: cat(c) == "Mn"),
        "extra_space": [c for c in range(MAX + 1)
                        if chr(c).isspace() and not (cat(c)[0] == "C" or cat(c) == "Zs")],
        "py_space": [c for c in range(MAX + 1) if chr(c).isspace()],
        "lower": lower_runs(),
        "lower_special": lower_special(),
        "decomp": decompositions(),
        "ccc": combining_ranges(),
    }
    text = render(tables)
    width_text = render_width()
    # display_width.inc keeps the Unicode it was made from (its header says which)
    made = re.search(r"Unicode ([0-9.]+)\.", OUT_WIDTH.read_text(encoding="utf-8")) if OUT_WIDTH.exists() else None
    width_ours = made is None or made.group(1) == unicodedata.unidata_version
    if "--check" in sys.argv:  # (the replay ran when the file was written)
        if not OUT.exists():
            print(f"no table set for this Python's Unicode {unicodedata.unidata_version} ({OUT.name}): "
                  f"run /usr/bin/python3 scripts/gen_unicode_tables.py", file=sys.stderr)
            sys.exit(77)
        for path, want in ((OUT, text), (OUT_WIDTH, width_text)) if width_ours else ((OUT, text),):
            if not path.exists() or path.read_text(encoding="utf-8") != want:
                sys.exit(f"{path} is stale: run /usr/bin/python3 scripts/gen_unicode_tables.py")
            print(f"{path} is up to date")
        if not width_ours:
            print(f"{OUT_WIDTH} is Unicode {made.group(1)}: not compared with this Python's")
        return
    if not check(tables):
        sys.exit("gen_unicode_tables: the tables do not reproduce Python; not writing")
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(text)} bytes, Unicode {unicodedata.unidata_version})")
    if width_ours:
        OUT_WIDTH.write_text(width_text, encoding="utf-8")
        print(f"wrote {OUT_WIDTH} ({len(width_text)} bytes)")
    else:
        print(f"{OUT_WIDTH} is Unicode {made.group(1)}: left as it is")

if __name__ == "__main__":
    main()
