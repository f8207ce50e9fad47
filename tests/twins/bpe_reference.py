#!/usr/bin/python3
"""Reference twin for src/text/bpe.cpp: byte-level BPE training the plain way (minbpe-style).

The algorithm, with nothing clever in it:
  ids = the text's bytes (one list per chunk: GPT-2's pattern cuts the text, or the whole text)
  repeat: count every adjacent pair in every chunk (overlapping pairs count: "aaa" has (a, a)
          twice); take the pair with the highest count, the smaller pair (left id, then right id)
          on a tie; give it the next id (256, 257, ...); rewrite every chunk left to right.
Encoding applies the learned merges to a new text in the order they were learned, each everywhere.
The chunks sit in one numpy array with a separator between them, so each full recount is one
np.unique over all pairs, and each rewrite one np.delete.

GPT-2's pattern runs here as a Python `re` pattern: `re` has no \\p{L} or \\p{N}, so those are
character classes built from this Python's unicodedata (categories L* and N*), and \\s is
JavaScript's list (the twin of node's regex, not Python's \\s). Bytes that are not valid UTF-8
become lone surrogates (errors="surrogateescape"), which the pattern treats as "other", and go back
to the same bytes after the split: every byte lands in a chunk, as in the C++ Keep policy.

The test compares, on fortunes-min and on the hostile corpus (tests/twins/bpe_corpus.py), in
both modes: every merge (pair, new id, count) of the C++ trainer (tests/tools/bpe_dump) with this
one's, the C++ pre-tokenizer's chunks with this pattern's, and the ids of a held-out text.
Usage: bpe_reference.py BPE_DUMP [--quick]    (exit 77: data/fortunes is missing)
"""
import os
import re
import subprocess
import sys
import tempfile
import unicodedata

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe_corpus  # noqa: E402

JS_SPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def category_class(prefix):
    """A `re` character class body of every code point whose category starts with prefix."""
    parts, start = [], None
    for c in range(sys.maxunicode + 2):
        hit = c <= sys.maxunicode and unicodedata.category(chr(c)).startswith(prefix)
        if hit and start is None:
            start = c
        elif not hit and start is not None:
            a, b = re.escape(chr(start)), re.escape(chr(c - 1))
            parts.append(a if start == c - 1 else f"{a}-{b}")
            start = None
    return "".join(parts)


L, N = category_class("L"), category_class("N")
GPT2_PATTERN = re.compile(
    rf"""'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{JS_SPACE}{L}{N}]+|[{JS_SPACE}]+(?![^{JS_SPACE}])|[{JS_SPACE}]+""")


def split(text, mode):
    if mode == "bytes":
        return [text] if text else []
    s = text.decode("utf-8", errors="surrogateescape")
    return [m.encode("utf-8", errors="surrogateescape") for m in GPT2_PATTERN.findall(s)]


SEP = -1  # between chunks: no pair with it is ever counted, so nothing merges across chunks
SHIFT = 1 << 20  # pair (left, right) -> left * SHIFT + right: sorting keys sorts pairs by (left, right)


def flat(text, mode):
    """The chunks' bytes in one array, SEP between chunks."""
    out = []
    for chunk in split(text, mode):
        out.extend(chunk)
        out.append(SEP)
    return np.array(out, dtype=np.int64)


def train(text, num_merges, mode):
    ids = flat(text, mode)
    merges = []  # (left, right, id, count)
    for i in range(num_merges):
        # every adjacent pair, counted; np.unique sorts the keys, so argmax's first maximum is
        # the smallest pair among the most frequent
        real = (ids[:-1] != SEP) & (ids[1:] != SEP)
        keys, counts = np.unique((ids[:-1] * SHIFT + ids[1:])[real], return_counts=True)
        if len(keys) == 0:
            break
        best = int(np.argmax(counts))
        pair = (int(keys[best]) // SHIFT, int(keys[best]) % SHIFT)
        new_id = 256 + i
        ids = replace(ids, pair, new_id)
        merges.append((pair[0], pair[1], new_id, int(counts[best])))
    return merges


def replace(ids, pair, new_id):
    """Every occurrence of pair, left to right, becomes new_id."""
    at = np.flatnonzero((ids[:-1] == pair[0]) & (ids[1:] == pair[1]))
    if pair[0] == pair[1]:  # "aaa": the occurrence at 1 overlaps the one at 0, which goes first
        keep, last = [], -2
        for p in at.tolist():
            if p != last + 1:
                keep.append(p)
                last = p
        at = np.array(keep, dtype=np.int64)
    out = ids.copy()
    out[at] = new_id
    return np.delete(out, at + 1)


def replay(ids, merges):
    """The merges replayed on a flat array (flat()) in the order learned: when merge k runs, no
    earlier merge's pair is left, and no later one can bring one back (a new pair holds the new
    token, learned after). A negative value, SEP or any other, is never part of a pair."""
    for left, right, new_id, _ in merges:
        ids = replace(ids, (left, right), new_id)
    return ids


def encode(text, merges, mode):
    return [int(t) for t in replay(flat(text, mode), merges) if t != SEP]


def main():
    if len(sys.argv) < 2:
        print("usage: bpe_reference.py BPE_DUMP [--quick]", file=sys.stderr)
        sys.exit(2)
    dump, quick = sys.argv[1], "--quick" in sys.argv[2:]
    fortunes_min = b"".join(p.read_bytes() for p in sorted(bpe_corpus.data_dir("min").iterdir()) if p.is_file())
    hostile_list = bpe_corpus.hostile_records()
    hostile = b"\n".join(hostile_list)
    num = 60 if quick else 300
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, data in (("fortunes-min", fortunes_min), ("hostile", hostile)):
            files[name] = os.path.join(tmp, name)
            with open(files[name], "wb") as f:
                f.write(data)
        # 1) the pre-tokenizer's chunks, record by record
        rec_path = os.path.join(tmp, "records")
        bpe_corpus.write_records(rec_path, hostile_list)
        got = subprocess.run([dump, "chunks", rec_path], capture_output=True, check=True).stdout.decode().splitlines()
        bad = [i for i, r in enumerate(hostile_list) if [bytes(c) for c in __import__("json").loads(got[i])] != split(r, "gpt2")]
        print(f"{'OK' if not bad else 'NOT OK'}  GPT-2 chunks of {len(hostile_list)} hostile records"
              + (f": first differs at record {bad[0]}: {hostile_list[bad[0]]!r}" if bad else ""))
        failures += bool(bad)
        # 2) merges and held-out ids, both modes, both texts
        for mode in ("bytes", "gpt2"):
            for name, data in (("fortunes-min", fortunes_min), ("hostile", hostile)):
                other = "hostile" if name == "fortunes-min" else "fortunes-min"
                out = subprocess.run([dump, "train", mode, str(num), files[name], files[other]],
                                     capture_output=True, check=True).stdout.decode().splitlines()
                cpp = [tuple(int(x) for x in line.split()) for line in out[:-1]]
                cpp_ids = [int(x) for x in out[-1].split()[1:]]
                ref = train(data, num, mode)
                ref_ids = encode(fortunes_min if other == "fortunes-min" else hostile, ref, mode)
                first = next((k for k in range(max(len(cpp), len(ref)))
                              if k >= len(cpp) or k >= len(ref) or cpp[k] != ref[k]), None)
                ok = first is None and cpp_ids == ref_ids
                detail = (f"{len(ref)} merges (pair, id, count) equal, first {ref[0]}, last {ref[-1]}; "
                          f"{len(ref_ids)} ids of {other} equal") if ok else (
                    f"merge {first}: C++ {cpp[first] if first is not None and first < len(cpp) else None}"
                    f" twin {ref[first] if first is not None and first < len(ref) else None}" if first is not None
                    else f"ids of {other} differ ({len(cpp_ids)} vs {len(ref_ids)})")
                print(f"{'OK' if ok else 'NOT OK'}  {mode:5} {name:12}: {detail}")
                failures += not ok
    print("all equal" if not failures else f"NOT OK: {failures} comparisons differ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
