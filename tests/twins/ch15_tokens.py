"""Twin of chapters/ch15_tokens.cpp (run: /usr/bin/python3 tests/twins/ch15_tokens.py --seed 0 [--merges M]
[--fortunes min|all | --corpus FILE]).

The chapter's recipe, recomputed here from data/ (or $TS_DATA_DIR) with nothing taken from the C++:
  1) the text: the fortune files data/MANIFEST.tsv lists under fortunes/min/ (min) or fortunes/ (all),
     cut into records as src/data/fortunes.cpp cuts them (bpe_corpus.parse_fortunes), or the lines of
     --corpus that are not blank; each record goes to a split by src/data/pairs.cpp's rule: FNV-1a 64
     of the record trimmed, spaces squeezed, lower-cased, % 100: 0-79 train, 80-89 validation, 90-99 test
  2) BPE: --merges merges learned on the training records joined, cut first by GPT-2's pattern
     (bpe_reference.train: the most frequent pair, the smallest on a tie)
  3) bytes per token of the test records, in that BPE and in GPT-2's tokenizer (gpt2_reference.Encoder:
     Encoder.js's algorithm in Python, from data/gpt2-bpe's vocab.bpe and encoder.json)
  4) the chapter's hostile byte strings come back byte for byte from both
  5) GPT-2's files, the pre-tokenizer's chunks of the chapter's sentence, and its ids
The chapter draws nothing: --seed and --eval change no line (the twin takes them as every twin does).
Where data/ is missing the twin stops as the chapter does: one line on stderr, exit 2.
"""
import os
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np

from twinlib import Twin
import bpe_corpus
import bpe_reference
from gpt2_reference import Encoder

# src/data's default_data_dir(): $TS_DATA_DIR, else this checkout's data/
DATA_DIR = Path(os.environ.get("TS_DATA_DIR") or Path(__file__).resolve().parents[2] / "data")

# the chapter's own inputs (Step 4, Step 5)
HOSTILE = [b"ok \xff\xfe", b"caf\xe9", b"\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", b"e\xcc\x81 vs \xc3\xa9",
           b"a\x00b"]
SENTENCE = b"Hello world's  2024 tokens: na\xc3\xafve caf\xc3\xa9 \xf0\x9f\xa4\x97!"


def usage_error(message):
    """What the chapter does with a text it cannot read: one line on stderr, exit 2."""
    print(f"ch15_tokens twin: error: {message}", file=sys.stderr)
    sys.exit(2)


def thousands(n):
    return f"{n:,}"


def visible(data):
    """src/course/token_report.cpp's visible(): bytes in single quotes, \\n \\t \\r \\\\ \\' escaped, a control
    byte or one that starts no valid UTF-8 as \\xNN, a character of category C or a space other than ' '
    as \\uNNNN (\\UNNNNNNNN), every other character as itself."""
    out, i = "'", 0
    while i < len(data):
        b = data[i]
        n = 1 if b < 0x80 else 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4 if b >> 3 == 30 else 0
        try:
            c = data[i:i + n].decode("utf-8") if n else None
        except UnicodeDecodeError:
            c = None
        if c is None or (n == 1 and (b < 0x20 or b == 0x7F) and c not in "\n\t\r"):
            out += f"\\x{b:02x}"
            i += 1
            continue
        if c in "\n\t\r\\'":
            out += {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}[c]
        elif n > 1 and (unicodedata.category(c).startswith("C") or unicodedata.category(c) == "Zs"):
            out += f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
        else:
            out += c
        i += n
    return out + "'"


def split_of(record):
    """src/data/pairs.cpp: FNV-1a 64 of the key (trimmed, runs of spaces squeezed, ASCII lower-cased) % 100."""
    key = re.sub(rb" +", b" ", record.strip(b" \t\n\r")).lower()
    h = 14695981039346656037
    for byte in key:
        h = ((h ^ byte) * 1099511628211) % 2**64
    bucket = h % 100
    return 0 if bucket < 80 else 1 if bucket < 90 else 2  # train, validation, test


def read_corpus(fortunes, corpus_path):
    """(files, bytes, records) of data/'s fortunes or of --corpus."""
    if corpus_path is not None:
        try:
            text = Path(corpus_path).read_bytes()
        except OSError as e:
            usage_error(f"--corpus: {e}")
        lines = text.split(b"\n")  # a record is one line, with its newline ('\n' only: '\r' stays in it)
        records = [line for line in [x + b"\n" for x in lines[:-1]] + lines[-1:] if line.strip(b" \t\r\n")]
        if not records:
            usage_error(f"--corpus {corpus_path} has no text")
        return [corpus_path], len(text), records
    manifest = DATA_DIR / "MANIFEST.tsv"
    if not manifest.is_file():
        usage_error(f"{manifest}: missing: run scripts/fetch_data.sh (or make deps): it fetches Debian's fortunes-min and fortunes packages into data/")
    prefix = "fortunes/min/" if fortunes == "min" else "fortunes/"
    rows = manifest.read_text(encoding="utf-8").split("\n")[1:]  # under the header row
    files = [DATA_DIR / row.split("\t")[4] for row in rows if row and row.split("\t")[4].startswith(prefix)]
    size, records = 0, []
    for f in files:
        text = f.read_bytes()
        size += len(text)
        records += bpe_corpus.parse_fortunes(text)
    return files, size, records


def bpe_encode(records, merges):
    """Each record's ids in the BPE: the records' chunks in one flat array (bpe_reference.flat), RECORD
    between records (negative, like SEP: never part of a pair), the merges replayed once over it all."""
    RECORD = -2
    ids = bpe_reference.replay(np.concatenate([np.append(bpe_reference.flat(r, "gpt2"), RECORD) for r in records]),
                               merges)
    out, start = [], 0
    for end in np.flatnonzero(ids == RECORD):
        out.append([int(t) for t in ids[start:end] if t >= 0])
        start = end + 1
    return out


tw = Twin(__doc__, [(("--merges",), dict(type=int, default=256)),
                    (("--fortunes",), dict(default=None)),
                    (("--corpus",), dict(default=None))])
args = tw.args
if args.corpus is not None and args.fortunes is not None:
    usage_error("--corpus and --fortunes both name the text: give one of them")
fortunes = args.fortunes or "min"
if fortunes not in ("min", "all"):
    usage_error(f"--fortunes takes min or all, not {fortunes!r}")

# Step 1: the text, and which part of it is held out
files, size, records = read_corpus(fortunes, args.corpus)
per_split = [0, 0, 0]
train_records, held_records = [], []
for r in records:
    s = split_of(r)
    per_split[s] += 1
    if s == 0:
        train_records.append(r)
    if s == 2:
        held_records.append(r)
train, held_out = b"".join(train_records), b"".join(held_records)
if not train:
    usage_error(f"none of the {len(records)} records falls in the training split: give a text of more lines")
tw.show("text", f"{len(files)} file{'' if len(files) == 1 else 's'}, {thousands(size)} bytes; "
                f"records: {thousands(len(records))}")
tw.show("split", f"records: train {per_split[0]} ({thousands(len(train))} bytes), validation {per_split[1]}, "
                 f"test {per_split[2]} ({thousands(len(held_out))} bytes, held out)")
# no record in the test split: the chapter measures on the training text, as one record
measured, measured_records = (held_out, held_records) if held_out else (train, [train])

# Step 2: byte-level BPE trained on the training text
merges = bpe_reference.train(train, args.merges, "gpt2")  # (left, right, id, count)
M = len(merges)
vocab = [bytes([b]) for b in range(256)]
for left, right, _, _ in merges:
    vocab.append(vocab[left] + vocab[right])
tw.show("BPE", f"256 bytes + {M} merges = {len(vocab)} tokens")

# Step 3: compression, bytes per token, on the held-out text
gpt2_dir = DATA_DIR / "gpt2-bpe"
if not (gpt2_dir / "vocab.bpe").is_file() or not (gpt2_dir / "encoder.json").is_file():
    usage_error(f"GPT-2's tokenizer files are missing ({gpt2_dir}): run make deps (scripts/fetch_gpt2_bpe.sh)")
enc = Encoder(gpt2_dir)
bpe_tokens = sum(len(ids) for ids in bpe_encode(measured_records, merges))
gpt2_tokens = sum(len(enc.encode(r)) for r in measured_records)
tw.show("bytes/token", f"BPE {len(measured) / max(bpe_tokens, 1):.3f}, GPT-2 {len(measured) / max(gpt2_tokens, 1):.3f}")

# Step 4: any byte string comes back exactly
back = [b"".join(vocab[i] for i in ids) == s and enc.decode(enc.encode(s)) == s
        for s, ids in zip(HOSTILE, bpe_encode(HOSTILE, merges))]
tw.show("decode(encode(s)) == s", str(all(back)))

# Step 5: GPT-2's tokenizer, from its own files
tw.show("files", f"vocab.bpe: {thousands(enc.merges)} merges; encoder.json: {thousands(enc.vocab_size)} ids")
chunks = bpe_reference.split(SENTENCE, "gpt2")
tw.show(f"pre-tokenize({visible(SENTENCE)})", "[" + ", ".join(visible(c) for c in chunks) + "]")
tw.show("enc.encode(text)", str(enc.encode(SENTENCE)))
