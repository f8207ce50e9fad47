#!/usr/bin/env python3
"""make bench's tokenizer part: BPE training time and GPT-2 encoding throughput beside npm's encoder.

usage: python3 bench/bpe_report.py BUILD_DIR [--reps 3] [--merges 4096]

1. BUILD_DIR/bench_bpe trains 4,096 merges on all of fortunes (data/fortunes: every file of
   Debian's fortunes and fortunes-min, concatenated), once per split (bytes, GPT-2 chunks), with
   incremental pair counts, one thread.
2. The same binary encodes every fortune (the `%`-separated records) with GPT-2's tokenizer, and
   node runs GPT-2's npm encoder (gpt-3-encoder 1.1.4, tests/twins/gpt2_npm.js) on the same
   records in the same run: --reps passes each, the first with an empty chunk cache (cold), the
   others with the cache the first one filled (warm, the best of them is kept). Both count the
   ids they produced; the counts must agree (the twin test checks every id).
3. One table, MB/s = 10^6 bytes of input per second, by CPU time (this thread's for ours, the node
   process's for npm) and by wall time, and the check against the issue's target: ours >= 20x
   npm's throughput by CPU time, cold and warm. Written to BUILD_DIR/bench/bpe.csv as well.
Needs data/fortunes (scripts/fetch_data.sh) and data/gpt2-bpe (scripts/fetch_gpt2_bpe.sh):
without them one line names the script, exit 2.
"""
import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "twins"))
import bpe_corpus  # noqa: E402

TARGET = 20.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--merges", type=int, default=4096)
    a = ap.parse_args()
    fortunes = os.path.join(ROOT, "data", "fortunes")
    gpt2_dir = os.path.join(ROOT, "data", "gpt2-bpe")
    if not os.path.isdir(fortunes):
        sys.exit(print("bpe_report: data/fortunes is missing: run scripts/fetch_data.sh", file=sys.stderr) or 2)
    if not os.path.isfile(os.path.join(gpt2_dir, "Encoder.js")):
        sys.exit(print("bpe_report: data/gpt2-bpe is missing: run scripts/fetch_gpt2_bpe.sh", file=sys.stderr) or 2)
    files = sorted(p for p in __import__("pathlib").Path(fortunes).rglob("*") if p.is_file() and p.suffix not in (".dat", ".u8"))
    text = b"".join(p.read_bytes() for p in files)
    records = bpe_corpus.fortune_records(fortunes)
    with tempfile.TemporaryDirectory() as tmp:
        text_path, rec_path = os.path.join(tmp, "text"), os.path.join(tmp, "records")
        with open(text_path, "wb") as f:
            f.write(text)
        bpe_corpus.write_records(rec_path, records)
        ours = json.loads(subprocess.run([os.path.join(a.build, "bench_bpe"), text_path, rec_path, gpt2_dir,
                                          str(a.merges), str(a.reps)], capture_output=True, check=True).stdout)
        npm = json.loads(subprocess.run(["node", os.path.join(ROOT, "tests", "twins", "gpt2_npm.js"), gpt2_dir,
                                         "time", rec_path, str(a.reps)], capture_output=True, check=True).stdout)
    nbytes = ours["encode"]["bytes"]
    mbs = lambda s: nbytes / s / 1e6  # noqa: E731
    rows = []
    for split in ("bytes", "gpt2"):
        t = ours[f"train_{split}"]
        rows.append((f"BPE training, {t['merges']} merges, split {split}, {t['bytes'] / 1e6:.2f} MB",
                     f"{t['seconds']['cpu']:.2f} s", f"{t['seconds']['wall']:.2f} s", "", "", ""))
    ok = ours["encode"]["tokens"] == npm["tokens"]
    checks = []
    o_runs, n_runs = ours["encode"]["seconds"], npm["seconds"]
    for name, o, n in (("cold (empty cache)", o_runs[0], n_runs[0]),
                       ("warm (cache filled)", min(o_runs[1:], key=lambda r: r["cpu"]), min(n_runs[1:], key=lambda r: r["cpu"]))):
        ratio = mbs(o["cpu"]) / mbs(n["cpu"])
        rows.append((f"GPT-2 encoding, {len(records)} fortunes, {name}", f"{mbs(o['cpu']):.1f} MB/s", f"{mbs(o['wall']):.1f} MB/s",
                     f"{mbs(n['cpu']):.2f} MB/s", f"{mbs(n['wall']):.2f} MB/s", f"{ratio:.1f}x"))
        checks.append((name, ratio))
    print(f"Tokenizers, one thread ({platform.processor() or platform.machine()}, node {npm['node']}, "
          f"load average {os.getloadavg()[0]:.1f}):")
    w = max(len(r[0]) for r in rows)
    print(f"  {'workload':{w}}  {'ours (CPU)':>12}  {'ours (wall)':>12}  {'npm (CPU)':>12}  {'npm (wall)':>12}  {'ours/npm':>8}")
    for r in rows:
        print(f"  {r[0]:{w}}  {r[1]:>12}  {r[2]:>12}  {r[3]:>12}  {r[4]:>12}  {r[5]:>8}")
    print("  (MB/s = 10^6 input bytes per second; CPU: this thread's (ours), the node process's (npm);"
          " ours/npm compares CPU throughput, which a busy shared machine disturbs least)")
    print(f"{'OK' if ok else 'NOT OK'}  both produced {npm['tokens']} ids" if ok else
          f"NOT OK  ids: ours {ours['encode']['tokens']}, npm {npm['tokens']} (run the gpt2_twin test)")
    for name, ratio in checks:
        print(f"{'OK' if ratio >= TARGET else 'NOT OK'}  {name}: ours is {ratio:.1f}x npm's throughput (target >= {TARGET:.0f}x)")
    os.makedirs(os.path.join(a.build, "bench"), exist_ok=True)
    with open(os.path.join(a.build, "bench", "bpe.csv"), "w", newline="") as f:
        csv.writer(f).writerows([("workload", "ours_cpu", "ours_wall", "npm_cpu", "npm_wall", "ratio")] + rows)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
