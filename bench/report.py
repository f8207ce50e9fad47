#!/usr/bin/env python3
"""Run our benchmarks and the PyTorch peer in one go; print one table; write CSV and docs.

usage: python3 bench/report.py BUILD_DIR [--reps 7] [--filter REGEX] [--no-docs]

1. BUILD_DIR/bench_encoder and BUILD_DIR/bench_matmul (Google Benchmark): every workload at
   1 and 2 threads, a warm-up, then --reps repetitions (interleaved in random order); we
   keep the median.
2. bench/bench_pytorch.py under /usr/bin/python3 with the SAME OpenBLAS core: the core our
   side ran is passed as OPENBLAS_CORETYPE (unless the caller set one, which then governs
   both sides) and the peer refuses to run if its OpenBLAS reports another core. On an
   AVX-512 CPU PyTorch also gets its AVX-512 kernels (ATEN_CPU_CAPABILITY=avx512; its
   default here is AVX2, measured slower) unless the caller set that variable.
   PyTorch is timed at every (torch threads, OpenBLAS threads) pair; a row with t threads
   gets PyTorch's best time with both <= t ("its best thread setting").
3. One table: workload, threads, ours (ms), PyTorch (ms), ratio = ours / PyTorch, GFLOP/s
   (ours), % of peak = GFLOP/s / (223 GFLOP/s x threads). Written to BUILD_DIR/bench/
   results.csv and, between the markers <!-- bench:begin --> and <!-- bench:end -->, into
   docs/performance.md with the machine it ran on.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEAK_PER_CORE = 223.0  # GFLOP/s: 2 AVX-512 FMA units x 16 floats x 2 flop x ~3.5 GHz (issue 5)
PYTHON = os.environ.get("TS_PYTHON", "/usr/bin/python3")  # the interpreter with torch (python3-torch)

# (key, display name, PyTorch peer key or None); the table's order
ROWS = [
    ("encoder_1x5", "encoder 12L [1,5,768]", "encoder_1x5"),
    ("encoder_1x128", "encoder 12L [1,128,768]", "encoder_1x128"),
    ("encoder_8x128", "encoder 12L [8,128,768]", "encoder_8x128"),
    ("sgemmroute_1x5", "  same [1,5,768], OpenBLAS sgemm route", "encoder_1x5"),
    ("sgemmroute_1x128", "  same [1,128,768], OpenBLAS sgemm route", "encoder_1x128"),
    ("sgemmroute_8x128", "  same [8,128,768], OpenBLAS sgemm route", "encoder_8x128"),
    ("exact_1x5", "  same [1,5,768], exact path (torch's bits)", "encoder_1x5"),
    ("exact_1x128", "  same [1,128,768], exact path (torch's bits)", "encoder_1x128"),
    ("layer_8x128", "one layer [8,128,768]", "layer_8x128"),
    ("qk_8x128", "QK^T [8,12,128,128]", "qk_8x128"),
    ("softmax_8x12x128x128", "softmax [8,12,128,128]", "softmax_8x12x128x128"),
    ("layernorm_8x128x768", "LayerNorm [8,128,768]", "layernorm_8x128x768"),
    ("gelu_8x128x3072", "GELU [8,128,3072]", "gelu_8x128x3072"),
    ("linear_128x768x3072", "matmul 128x768x3072: ts::linear", "linear_128x768x3072"),
    ("sgemm_128x768x3072", "matmul 128x768x3072: raw cblas_sgemm", None),
    ("train_step_64", "ch11 train step, B=64 (fwd + bwd + Adam)", "train_step_64"),
]


def run(cmd, env=None):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"bench: {cmd[0]} failed (exit {p.returncode})")
    return p.stdout


def google_bench(binary, out_json, reps, filt):
    # repetitions of all benchmarks interleaved in random order: a change of load hits them alike
    cmd = [binary, f"--benchmark_repetitions={reps}", "--benchmark_enable_random_interleaving=true",
           "--benchmark_report_aggregates_only=true",
           f"--benchmark_out={out_json}", "--benchmark_out_format=json", f"--benchmark_filter={filt}"]
    sys.stderr.write(run(cmd))
    with open(out_json) as f:
        data = json.load(f)
    medians = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name, threads = b["run_name"].split("/")[:2]
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        medians[(name, int(threads))] = {"ms": b["real_time"] * scale, "flop": b.get("flop", 0.0)}
    return medians, data.get("context", {})


def cpu_model():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (x.strip() for x in line.split(":", 1))
                    info.setdefault(k, v)
    except OSError:
        pass
    name = info.get("model name", platform.processor() or "?")
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']}, stepping {info.get('stepping', '?')})"
    flags = info.get("flags", "").split()
    name += "; AVX-512: " + ("yes" if "avx512f" in flags else "no")
    return name


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def loadavg():
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--filter", default="", help="regex on workload keys (default: all)")
    p.add_argument("--no-docs", action="store_true", help="do not rewrite docs/performance.md")
    a = p.parse_args()
    if a.reps < 7:
        print("bench: note: fewer than 7 repetitions", file=sys.stderr)
    out_dir = os.path.join(a.build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    keys = [k for k, _, _ in ROWS if re.search(a.filter, k)]
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = loadavg()
    try:
        if os.getloadavg()[0] > 0.5:
            print(f"bench: warning: load average {load_before}: other work on these cores will show up in the "
                  f"timings (run on a quiet machine)", file=sys.stderr)
    except OSError:
        pass

    # 1) ours
    enc_keys = [k for k in keys if not k.endswith("128x768x3072") and not k.startswith("train_")] + ["fma_peak"]
    ours, context = google_bench(os.path.join(a.build, "bench_encoder"), os.path.join(out_dir, "ours_encoder.json"),
                                 a.reps, "^(" + "|".join(enc_keys) + ")/")
    mm_keys = [k for k in keys if k.endswith("128x768x3072")]
    if mm_keys:
        mm, _ = google_bench(os.path.join(a.build, "bench_matmul"), os.path.join(out_dir, "ours_matmul.json"),
                             a.reps, "^(" + "|".join(mm_keys) + ")/")
        ours.update(mm)
    train_keys = [k for k in keys if k.startswith("train_")]
    if train_keys:
        tr, _ = google_bench(os.path.join(a.build, "bench_train"), os.path.join(out_dir, "ours_train.json"),
                             a.reps, "^(" + "|".join(train_keys) + ")/")
        ours.update(tr)
    core = context.get("openblas_core", "")

    # 2) PyTorch, on the same OpenBLAS core
    env = os.environ.copy()
    if core and not env.get("OPENBLAS_CORETYPE"):
        env["OPENBLAS_CORETYPE"] = core
    if "avx512f" in cpu_flags() and not env.get("ATEN_CPU_CAPABILITY"):
        env["ATEN_CPU_CAPABILITY"] = "avx512"
    peers = sorted({peer for k, _, peer in ROWS if k in keys and peer})
    py_out = os.path.join(out_dir, "pytorch.json")
    cmd = [PYTHON, os.path.join(ROOT, "bench", "bench_pytorch.py"), "--reps", str(a.reps), "--out", py_out,
           "--filter", "^(" + "|".join(peers) + ")/"]
    if core:
        cmd += ["--expect-core", core]
    sys.stderr.write(run(cmd, env=env))
    with open(py_out) as f:
        py_rows = json.load(f)
    torch_ms = {}  # (workload, threads) -> (best ms, "torch i / OpenBLAS b") over that many threads
    for r in py_rows:
        key = (r["workload"], r["threads"])
        setting = f"{r['torch_threads']}/{r['openblas_threads']}"
        if key not in torch_ms or r["ms"] < torch_ms[key][0]:
            torch_ms[key] = (r["ms"], setting)
    torch_version = py_rows[0]["torch"] if py_rows else "?"

    # 3) the table
    rows = []
    for key, label, peer in ROWS:
        for t in (1, 2):
            o = ours.get((key, t))
            if key not in keys or o is None:
                continue
            best = [torch_ms[(peer, s)] for s in range(1, t + 1) if peer and (peer, s) in torch_ms]
            py, py_threads = min(best) if best else (None, None)
            gflops = o["flop"] / (o["ms"] * 1e-3) / 1e9 if o["flop"] else None
            rows.append({"workload": label.strip(), "label": label, "threads": t, "ours_ms": o["ms"],
                         "pytorch_ms": py, "pytorch_threads": py_threads,
                         "ratio": o["ms"] / py if py else None, "gflops": gflops,
                         "pct_peak": 100.0 * gflops / (PEAK_PER_CORE * t) if gflops else None})
    peak = ours.get(("fma_peak", 1))
    measured_peak = peak["flop"] / (peak["ms"] * 1e-3) / 1e9 if peak else None

    head = ["workload", "threads", "ours ms", "PyTorch ms", "ratio", "GFLOP/s", "% of peak"]
    table = [[r["label"], str(r["threads"]), fmt(r["ours_ms"], ".3f"),
              fmt(r["pytorch_ms"], ".3f") + ("" if r["pytorch_threads"] is None else f" ({r['pytorch_threads']})"),
              fmt(r["ratio"], ".2f"), fmt(r["gflops"], ".1f"), fmt(r["pct_peak"], ".1f")] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in table)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(head))
    print("  ".join("-" * w for w in widths))
    for c in table:
        print(line(c))

    # checks of issue 2 and issue 5's targets, computed from the rows
    def get(key, t):
        label = dict((k, l.strip()) for k, l, _ in ROWS)[key]
        return next((r for r in rows if r["workload"] == label and r["threads"] == t), None)

    checks = []
    for t in (1, 2):
        lin, raw = get("linear_128x768x3072", t), get("sgemm_128x768x3072", t)
        if lin and raw:
            over = lin["ours_ms"] / raw["ours_ms"] - 1
            checks.append(f"ts::linear vs raw sgemm at 128x768x3072, {t} thread(s): {100 * over:+.1f} % "
                          f"(limit +5 %): {'met' if over <= 0.05 else 'NOT met'}")
    for key, limit in (("encoder_1x5", 0.5), ("encoder_1x128", 0.85), ("encoder_8x128", 0.85)):
        for t in (1, 2):
            r = get(key, t)
            if r and r["ratio"] is not None:
                checks.append(f"{r['workload']}, {t} thread(s): ours / PyTorch = {r['ratio']:.2f} "
                              f"(target <= {limit}): {'met' if r['ratio'] <= limit else 'NOT met'}")
    for t in (1, 2):
        r = get("train_step_64", t)
        if r and r["ratio"] is not None:
            checks.append(f"ch11 training, {t} thread(s): {1e3 / r['ours_ms']:.1f} steps/s ours vs "
                          f"{1e3 / r['pytorch_ms']:.1f} PyTorch eager = {1 / r['ratio']:.2f}x (target >= 2x): "
                          f"{'met' if r['ratio'] <= 0.5 else 'NOT met'}")
    r = get("encoder_8x128", 2)
    if r:
        checks.append(f"{r['workload']}, 2 threads: {r['pct_peak']:.1f} % of peak (aim >= 70 %): "
                      f"{'met' if r['pct_peak'] >= 70 else 'NOT met'}")
    print()
    for c in checks:
        print(c)

    csv_path = os.path.join(out_dir, "results.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "threads", "ours_ms", "pytorch_ms", "ratio", "gflops", "pct_peak"])
        for r in rows:
            w.writerow([r["workload"], r["threads"], f"{r['ours_ms']:.4f}",
                        "" if r["pytorch_ms"] is None else f"{r['pytorch_ms']:.4f}",
                        "" if r["ratio"] is None else f"{r['ratio']:.4f}",
                        "" if r["gflops"] is None else f"{r['gflops']:.2f}",
                        "" if r["pct_peak"] is None else f"{r['pct_peak']:.2f}"])
    print(f"\nwrote {csv_path}", file=sys.stderr)

    if a.no_docs:
        return 0
    load_after = loadavg()
    md = []
    md.append(f"Generated by `make bench` (scripts/bench.sh -> bench/report.py) on "
              f"{started.strftime('%Y-%m-%d %H:%M UTC')}; do not edit by hand.\n")
    md.append("| machine | |\n|---|---|")
    md.append(f"| CPU | {cpu_model()} |")
    md.append(f"| logical CPUs | {os.cpu_count()} |")
    md.append(f"| OpenBLAS core | {core or '?'} ({context.get('openblas_core_reason', '?')}) |")
    md.append(f"| fast path GEMM | {context.get('fast_gemm', '?')} |")
    md.append(f"| PyTorch | {torch_version} (`{PYTHON}`), article 000's model, eval, inference_mode |")
    md.append(f"| measured FMA rate, 1 core | {fmt(measured_peak, '.1f')} GFLOP/s (the % column uses "
              f"{PEAK_PER_CORE:.0f} GFLOP/s per core) |")
    md.append(f"| load average (1/5/15 min) | before {load_before}, after {load_after} |")
    md.append(f"| PyTorch settings | OPENBLAS_CORETYPE={env.get('OPENBLAS_CORETYPE', '(unset)')}, "
              f"ATEN_CPU_CAPABILITY={env.get('ATEN_CPU_CAPABILITY', '(default)')}; (i/b) after its time = "
              f"torch.set_num_threads(i), OpenBLAS threads b: its best pair with i, b <= the row's threads |")
    md.append(f"| repetitions | median of {a.reps} after a warm-up, each side |")
    md.append("")
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for c in table:
        md.append("| " + " | ".join([c[0].strip().replace("  ", "")] + c[1:]) + " |")
    md.append("")
    for c in checks:
        md.append(f"- {c}")
    block = "\n".join(md) + "\n"

    doc = os.path.join(ROOT, "docs", "performance.md")
    text = open(doc).read() if os.path.exists(doc) else "# Performance\n"
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin in text and end in text:
        text = text[:text.index(begin) + len(begin)] + "\n" + block + text[text.index(end):]
    else:
        text = text.rstrip("\n") + f"\n\n{begin}\n{block}{end}\n"
    with open(doc, "w") as f:
        f.write(text)
    print(f"wrote {doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
