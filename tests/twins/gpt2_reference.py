#!/usr/bin/python3
"""Twin for src/text/gpt2_encoder.cpp: GPT-2's own npm encoder (gpt-3-encoder 1.1.4), run by node.

One node process encodes every record (tests/twins/gpt2_npm.js); one bpe_dump process encodes the
same records in C++; every record's ids must be identical. The records: every fortune of
data/fortunes (all of Debian's fortunes and fortunes-min) and the hostile corpus
(tests/twins/bpe_corpus.py). Node reads each record as a JavaScript string the way node reads a
file, which replaces invalid UTF-8 with U+FFFD; C++ runs with InvalidUtf8::Replace for the
comparison. Then, in C++ alone: the default policy (Keep) gives the same ids on every record that
is valid UTF-8, and decode() gives every record back byte for byte, invalid ones included.
Last, the character classes: the C++ tables (src/text/gpt2_unicode_*.inc) against this node's
\\p{L} \\p{N} \\s for every code point; where the two Unicode versions differ, a code point may
differ only if one of them calls it unassigned.
Usage: gpt2_reference.py BPE_DUMP [--quick]   (--quick: fortunes-min only)
Exit 77 (skipped) when data/fortunes or data/gpt2-bpe is missing, with the line that fetches it.

Importable, for twins that must not need node (tests/twins/ch15_tokens.py): Encoder(DIR), the same
encoder in Python from the same two files: GPT-2's pre-tokenizer (bpe_reference.split: every byte
kept, as the C++ default InvalidUtf8::Keep), bytes_to_unicode(), and Encoder.js's bpe() as it
runs, quirk included: a pair's rank is looked up by the key "first,second".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe_corpus  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def bytes_to_unicode():
    """byte -> the character vocab.bpe and encoder.json write it as: the printable bytes stand for
    themselves, the others take U+0100, U+0101, ... in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    out, n = {}, 0
    for b in range(256):
        if b in printable:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


class Encoder:
    """GPT-2's tokenizer from vocab.bpe and encoder.json in DIR, as Encoder.js reads them."""

    def __init__(self, bpe_dir):
        self.encoder = json.loads((Path(bpe_dir) / "encoder.json").read_text(encoding="utf-8"))
        lines = (Path(bpe_dir) / "vocab.bpe").read_text(encoding="utf-8").split("\n")[1:-1]  # no #version, no ""
        self.merges = len(lines)
        self.rank = {",".join(line.split()): k for k, line in enumerate(lines)}  # later lines win
        self.byte_char = bytes_to_unicode()
        char_byte = {c: b for b, c in self.byte_char.items()}
        self.token_bytes = {i: bytes(char_byte[c] for c in piece) for piece, i in self.encoder.items()}
        self.cache = {}

    def bpe(self, chunk):
        """Encoder.js's bpe(): each round, the pair of lowest rank (the last one when keys collide),
        then every occurrence of it, left to right, becomes one piece."""
        word = [self.byte_char[b] for b in chunk]
        while len(word) > 1:
            best = None
            for first, second in zip(word, word[1:]):
                r = self.rank.get(first + "," + second)
                if r is not None and (best is None or r <= best[0]):
                    best = (r, first, second)
            if best is None:
                break
            _, first, second = best
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == first and word[i + 1] == second:
                    merged.append(first + second)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        return [self.encoder.get(piece, -1) for piece in word]

    def encode(self, text):
        """bytes -> ids, chunk by chunk of GPT-2's pattern."""
        from bpe_reference import split
        ids = []
        for chunk in split(text, "gpt2"):
            if chunk not in self.cache:
                self.cache[chunk] = self.bpe(chunk)
            ids += self.cache[chunk]
        return ids

    def decode(self, ids):
        return b"".join(self.token_bytes[i] for i in ids)

    @property
    def vocab_size(self):
        return len(self.encoder)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, check=True).stdout.decode()


def main():
    if len(sys.argv) < 2:
        print("usage: gpt2_reference.py BPE_DUMP [--quick]", file=sys.stderr)
        sys.exit(2)
    dump, quick = sys.argv[1], "--quick" in sys.argv[2:]
    bpe_dir = ROOT / "data" / "gpt2-bpe"
    if not (bpe_dir / "Encoder.js").is_file():
        print(f"{bpe_dir} is missing: run scripts/fetch_gpt2_bpe.sh", file=sys.stderr)
        sys.exit(77)
    if not shutil.which("node"):
        print("node is missing: run scripts/deps.sh (package npm brings nodejs)", file=sys.stderr)
        sys.exit(77)
    fortunes = bpe_corpus.fortune_records(bpe_corpus.data_dir("min") if quick else bpe_corpus.data_dir("min").parent)
    hostile = bpe_corpus.hostile_records()
    records = fortunes + hostile
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "records")
        bpe_corpus.write_records(rec, records)
        node = run(["node", str(HERE / "gpt2_npm.js"), str(bpe_dir), "encode", rec]).splitlines()
        cpp = run([dump, "gpt2", str(bpe_dir), rec, "replace"]).splitlines()
        keep = run([dump, "gpt2", str(bpe_dir), rec, "keep"]).splitlines()
        node_version = run(["node", "-p", "process.version + ' Unicode ' + process.versions.unicode"]).strip()
        # 1) ids, record by record
        for what, lo, hi in (("fortunes", 0, len(fortunes)), ("hostile records", len(fortunes), len(records))):
            bad = [i for i in range(lo, hi) if json.loads(node[i]) != json.loads(cpp[i])]
            n_ids = sum(len(json.loads(node[i])) for i in range(lo, hi))
            if not bad:
                print(f"OK      {hi - lo} {what} ({sum(len(r) for r in records[lo:hi])} bytes): "
                      f"{n_ids} ids identical to node {node_version}")
            else:
                i = bad[0]
                print(f"NOT OK  {len(bad)} of {hi - lo} {what} differ; first: record {i} {records[i][:80]!r}\n"
                      f"        node {node[i][:200]}\n        C++  {cpp[i][:200]}")
                failures += 1
        # 2) Keep = Replace where the record is valid UTF-8
        valid = [i for i, r in enumerate(records) if _valid(r)]
        bad = [i for i in valid if keep[i] != cpp[i]]
        invalid = len(records) - len(valid)
        print(f"{'OK' if not bad else 'NOT OK':7} Keep and Replace give the same ids on the {len(valid)} valid records"
              f" ({invalid} hold invalid UTF-8)" + (f"; first differs: record {bad[0]}" if bad else ""))
        failures += bool(bad)
    # 3) the character classes
    theirs = run(["node", str(HERE / "gpt2_npm.js"), str(bpe_dir), "classes"]).strip()
    ours = run([dump, "classes"]).strip()
    differ = [c for c in range(len(theirs)) if theirs[c].upper() != ours[c].upper()]
    unexplained = [c for c in differ if not (theirs[c].islower() or ours[c].islower())]
    ok = len(theirs) == len(ours) == 0x110000 and not unexplained
    print(f"{'OK' if ok else 'NOT OK':7} classes of all {len(ours)} code points: {len(differ)} differ"
          + (f", each unassigned in one of the two Unicode versions" if differ and ok else "")
          + (f"; first unexplained U+{unexplained[0]:04X}: node {theirs[unexplained[0]]}, C++ {ours[unexplained[0]]}"
             if unexplained else ""))
    failures += not ok
    print("all equal" if not failures else f"NOT OK: {failures} checks failed")
    sys.exit(1 if failures else 0)


def _valid(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


if __name__ == "__main__":
    main()
