"""Texts the BPE twins share (tests/twins/bpe_reference.py, gpt2_reference.py).

hostile_records(): a deterministic list of byte strings that a tokenizer gets wrong first:
astral characters and emoji sequences, combining marks, right-to-left text, CJK, numbers in many
scripts, runs of every kind of space, contractions, NUL and other controls, and invalid UTF-8
(lone continuation bytes, overlong forms, encoded surrogates, truncated sequences). Random
records are drawn (random.Random(seed)) only from characters this Python's unicodedata calls
assigned, so a node or a table of a newer Unicode classes them the same way.
fortune_records(DIR): the `%`-separated fortunes of every file under DIR (data/fortunes).
parse_fortunes(BYTES): one file's records exactly as the chapters read them (src/data/fortunes.cpp).
write_records(PATH, records): 4-byte little-endian length, then the bytes, per record.
"""
import random
import struct
import sys
import unicodedata
from pathlib import Path

FIXED = [
    "Hello world's  2024!!\n", "it's I'M we'll they'd 'tis ''s 're've'll'd 'S", "don't\u2019t",
    "\U0001F469\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 family \U0001F1EB\U0001F1F7 \U0001F44D\U0001F3FD",
    "e\u0301 a\u0300\u0301\u0302\u0303 Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o \u0915\u094D\u0937",
    "\u05E9\u05DC\u05D5\u05DD \u05E2\u05D5\u05DC\u05DD, \u0645\u0631\u062D\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645 \u0661\u0662\u0663",
    "\u6F22\u5B57\u304B\u306A\u30AB\u30CA\uD55C\uAD6D\uC5B4 \u4E2D\u6587\u3002\u3001 \uFF21\uFF22\uFF23\uFF11\uFF12",
    "\u0663\u0664\u0665 \u096A\u096B\u096C \u0ED5\u0ED6 \u0BE7\u0BE8 \u216B \u00BD \u2460 \U0001D7D8\U0001D7D9 \u00B2\u00B3 12,345.67 1e10 0x1F",
    "a  \t\n\n  b", "\u00A0\u2003\u3000x\u2028y\u2029", "\uFEFFbom", "\u0085next\u001C\u001D\u001E\u001F",
    "\x00a\x00\x00b\x00", "trailing spaces   ", "   ", " ", "\n", "\r\n\r\n", "", "\t\t\tx",
    "\U0001D518\U0001D52B\U0001D526\U0001D520\U0001D52C\U0001D521\U0001D522 \U00010348 \U0001F004 \U00020000\U0002A6D6",
    "$$$ ,,, ... !!! ??? ~~~ ---- ==== **** \u2014\u2013 \u00AB\u00BB \u201Cquoted\u201D",
    "<|endoftext|> [CLS] @user #tag http://example.com/a?b=c&d=e",
    "x,,y ,,, \",\" ),( }{ \"},{\" ,'' ,,'\" \u0120,\u0120 ,\u00A0,",
    "caf\u00E9 na\u00EFve \u00C5ngstr\u00F6m \u0130stanbul \u03A3\u03C3\u03C2 stra\u00DFe \uFB01",
    "\u202Eevil\u202C \u200B\u200C\u200D \u2060 \u00AD soft",
]
INVALID = [
    b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xe2\x82",
    b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"abc\x80def", b"caf\xc3", b"\xc3 \xa9",
    b" \xff\xfe x", b"it\xe2\x80s", b"\x80\x80\x80", b"\xf0\x9f\x98", b"\xf0\x9f\x98 smile",
    b"a\xe2\x82b\xff", b"\xc2", b"12\xff34", b"\xe2\x80\xa8\xe2\x80",
]


def _assigned_pool(rng, lo, hi, n):
    out = []
    while len(out) < n:
        c = rng.randrange(lo, hi)
        if 0xD800 <= c <= 0xDFFF:
            continue
        if unicodedata.category(chr(c)) not in ("Cn", "Co", "Cs"):
            out.append(chr(c))
    return out


def hostile_records(seed=20240601, n_random=400):
    rng = random.Random(seed)
    records = [s.encode("utf-8") for s in FIXED] + list(INVALID)
    pools = [
        list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), list("0123456789"),
        list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), list("''''sstlmdrev"),
        [" ", " ", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00A0", "\u2003", "\u3000", "\u2028", "\uFEFF", "\u0085"],
        _assigned_pool(rng, 0x80, 0x800, 300), _assigned_pool(rng, 0x800, 0x10000, 400),
        _assigned_pool(rng, 0x10000, 0x30000, 200),
        ["\u0301", "\u0308", "\u20DD", "\uFE0F", "\u200D", "\U0001F3FB", "\U0001F600", "\U0001F1FA"],
    ]
    for _ in range(n_random):
        parts = []
        for _ in range(rng.randrange(1, 40)):
            pool = pools[rng.randrange(len(pools))]
            parts.append("".join(rng.choice(pool) for _ in range(rng.randrange(1, 6))))
        rec = "".join(parts).encode("utf-8")
        if rng.random() < 0.15:  # a few invalid bytes somewhere
            b = bytearray(rec)
            for _ in range(rng.randrange(1, 4)):
                b.insert(rng.randrange(len(b) + 1), rng.choice([0x80, 0xBF, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]))
            rec = bytes(b)
        records.append(rec)
    return records


def fortune_records(root):
    """Every fortune (the text between lines holding only '%') of every file under root."""
    out = []
    for path in sorted(Path(root).rglob("*")):
        if not path.is_file() or path.suffix in (".dat", ".u8"):
            continue
        for rec in path.read_bytes().split(b"\n%\n"):
            if rec.strip(b"%\n"):
                out.append(rec)
    return out


def parse_fortunes(data):
    """One fortune file's records as src/data/fortunes.cpp cuts them (the chapters' reading, ch15's
    twin): a record runs up to a line holding only '%' and keeps its last newline; a record of
    nothing but spaces, tabs and newlines is skipped."""
    out, start, line = [], 0, 0

    def close(end):
        if data[start:end].strip(b" \t\r\n"):
            out.append(data[start:end])

    while line < len(data):
        nl = data.find(b"\n", line)
        end = len(data) if nl < 0 else nl
        if data[line:end] == b"%":  # a delimiter line
            close(line)
            start = len(data) if nl < 0 else nl + 1
        line = len(data) if nl < 0 else nl + 1
    close(len(data))
    return out


def write_records(path, records):
    with open(path, "wb") as f:
        for r in records:
            f.write(struct.pack("<I", len(r)))
            f.write(r)


def data_dir(sub):
    """data/fortunes/<sub> of this checkout, or exit 77 (skipped) with one line naming the fix."""
    d = Path(__file__).resolve().parents[2] / "data" / "fortunes" / sub
    if not d.is_dir() or not any(d.iterdir()):
        print(f"{d} is missing: run scripts/fetch_data.sh (Debian's fortunes-min and fortunes)", file=sys.stderr)
        sys.exit(77)
    return d
