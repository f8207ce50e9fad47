#!/usr/bin/env python3
"""Run our benchmarks and both peers (PyTorch, ONNX Runtime) in one go; print one table; write CSV and docs.

usage: python3 bench/report.py BUILD_DIR [--reps 7] [--filter REGEX] [--no-docs]

Thread counts: TS_BENCH_THREADS ("1,2,4") if set, else 1, 2, 4, ... up to the CPUs this process
may use, and that count itself (bench_threads(); bench/bench_isa.hpp computes the same list, and
every binary and peer is given it). Each row with t > 1 threads shows its parallel efficiency,
time at 1 thread / (t x time at t).
1. BUILD_DIR/bench_peak: the FMA peak of the SIMD route in use (ts::active_isa(): TS_ISA caps
   it) at every thread count -- what the "% of peak" column divides by. It is measured three
   times, interleaved with the rows (before ours, between ours and the peers, after the peers),
   each a warm-up for the clock to settle then --reps repetitions; the peak is the best of them
   all, and the spread between the lowest and the highest is printed: a host whose clock moves
   shows it there. A measured product above the peak (ours, OpenBLAS's sgemm, a peer's encoder
   at its FLOP count) is said under the table. A bad TS_ISA stops here (the binary's one line,
   exit 2).
2. BUILD_DIR/bench_encoder and BUILD_DIR/bench_matmul (Google Benchmark): every workload at
   every thread count, a warm-up, then --reps repetitions (interleaved in random order); we
   keep the median. The row kernels (softmax, LayerNorm, GELU) run in a process of their
   own, so no thread left spinning by an encoder row shares their cores.
3. bench/bench_pytorch.py under /usr/bin/python3 with the SAME OpenBLAS core: the core our
   side ran is passed as OPENBLAS_CORETYPE (unless the caller set one, which then governs
   both sides) and the peer refuses to run if its OpenBLAS reports another core. PyTorch's
   kernels follow our route (ATEN_CPU_CAPABILITY=avx512 / avx2 / default; torch 1.13's own
   default on an AVX-512 CPU is AVX2, measured slower) unless the caller set that variable.
   TS_ISA=avx2 on an AVX-512 CPU emulates an AVX2-only machine: both sides then also run
   OpenBLAS's Haswell core (unless OPENBLAS_CORETYPE is set).
   A PyTorch built on another BLAS (pip's wheels: MKL) cannot be put on our core: the table's
   PyTorch settings line says which BLAS it ran.
   PyTorch is timed at (torch threads i, OpenBLAS threads b) with b = 1 or b = i; a row with t
   threads gets PyTorch's best time with both <= t ("its best thread setting"). Beside the
   article's eager code, PyTorch's fused encoder (nn.TransformerEncoder, norm_first, GELU, eval,
   inference_mode: its CPU fast path) runs the encoder rows on the same weights, checked equal
   first (bench_pytorch.py's FUSED_CHECK).
4. ONNX Runtime (bench/ort_peer.py): Python's onnxruntime where the torch interpreter has one
   (bench/bench_ort.py), else the pinned onnxruntime-node from npm (bench/bench_ort.js), article 000's
   encoder exported by torch.onnx.export, timed at intra-op threads of
   every count (inter-op 1); a row with t threads gets its best with threads <= t. Its output is
   checked against PyTorch's first. It has no switch to cap its instruction set. Where it
   cannot run, its column stays empty and one line says why.
5. One table: workload, threads, ours (ms), PyTorch (ms), ratio = ours / PyTorch, ONNX
   Runtime (ms), ours / ONNX Runtime, GFLOP/s (ours), % of peak = GFLOP/s / the measured
   peak at that many threads. Written to BUILD_DIR/bench/results.csv and, between the
   markers <!-- bench:begin ISA VENDOR --> and <!-- bench:end ISA VENDOR --> of the route in use
   and the CPU's vendor (one table per CPU kind: avx512, avx2, scalar on intel, amd or other), into
   docs/performance.md with the machine it ran on; ch12's GPT rows (bench_gpt, and bench_peak's
   mem_read_bw: the generation bound) go between <!-- bench:begin gpt ISA VENDOR --> and
   <!-- bench:end gpt ISA VENDOR --> instead.
   The checks under the table (the issues' targets) are computed from its rows.
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

import ort_peer  # bench/ort_peer.py, next to this file
from report_checks import GPT_KEYS, ROW_KERNELS, target_checks  # bench/report_checks.py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.environ.get("TS_PYTHON", "/usr/bin/python3")  # the interpreter with torch (python3-torch)

# (key, display name, peer key or None: the name of the same workload in bench_pytorch.py and, for
# the encoder rows, bench_ort.js); the table's order
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
    ("gpt_train_step_64", "ch12 GPT train step, B=64 (fwd + bwd + Adam)", "gpt_train_step_64"),
    ("gpt_gen_stories15m", "ch12 generation, stories15M size, 256 tokens, KV cache", "gpt_gen_stories15m"),
    ("mem_read_bw", "memory read, 256 MB, the route's widest loads (bench_peak: the generation bound)", None),
]

# what each route's peak is measured with (bench/bench_peak.cpp), and PyTorch's matching kernels
PEAK_OP = {"avx512": "_mm512_fmadd_ps", "avx2": "_mm256_fmadd_ps",
           "scalar": "SSE2 mul + add, baseline x86-64"}
KIND_TITLE = {"avx512": "AVX-512 CPUs (the avx512 route)", "avx2": "AVX2-only CPUs (the avx2 route)",
              "scalar": "Baseline x86-64 (the scalar route)"}
VENDOR_TITLE = {"intel": "Intel", "amd": "AMD", "other": "other"}
ATEN_FOR_ISA = {"avx512": "avx512", "avx2": "avx2", "scalar": "default"}


def run(cmd, env=None):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if p.returncode == 2:  # bad input (e.g. TS_ISA): the binary said why in one line
        sys.exit(2)
    if p.returncode != 0:
        sys.exit(f"bench: {cmd[0]} failed (exit {p.returncode})")
    return p.stdout


def bench_threads():
    """the thread counts of every row: TS_BENCH_THREADS, or 1, 2, 4, ... up to the usable CPUs and that count"""
    env = os.environ.get("TS_BENCH_THREADS", "").strip()
    if env:
        try:
            counts = [int(x) for x in env.split(",")]
        except ValueError:
            counts = []
        if not counts or any(not 1 <= c <= 1024 for c in counts):
            print(f"bench: error: TS_BENCH_THREADS={env!r}: expected thread counts like 1,2,4 (each 1..1024)",
                  file=sys.stderr)
            sys.exit(2)
        return counts
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS: no affinity
        cores = os.cpu_count() or 1
    counts, t = [], 1
    while t <= cores:
        counts.append(t)
        t *= 2
    return counts + ([cores] if counts[-1] != cores else [])


def bench_json(binary, out_json, reps, filt, env=None, aggregates_only=False):
    """Run a Google Benchmark binary, repetitions of all its benchmarks interleaved in random order
    (a change of load hits them alike): (its JSON entries, its context)."""
    cmd = [binary, f"--benchmark_repetitions={reps}", "--benchmark_enable_random_interleaving=true"]
    cmd += ["--benchmark_report_aggregates_only=true"] if aggregates_only else []
    cmd += [f"--benchmark_out={out_json}", "--benchmark_out_format=json", f"--benchmark_filter={filt}"]
    sys.stderr.write(run(cmd, env))
    with open(out_json) as f:
        data = json.load(f)
    return data["benchmarks"], data.get("context", {})


def bench_entry(b):
    """One JSON entry -> (name, threads), its wall time in ms, its flop counter."""
    name, threads = b["run_name"].split("/")[:2]
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    return (name, int(threads)), b["real_time"] * scale, b.get("flop", 0.0)


def every_run(binary, out_json, reps, filt, env=None):
    """bench_peak's runs, every repetition kept: {(name, threads): [(ms, flop), ...]}"""
    entries, context = bench_json(binary, out_json, reps, filt, env)
    runs = {}
    for b in entries:
        if b.get("run_type") == "iteration":
            key, ms, flop = bench_entry(b)
            runs.setdefault(key, []).append((ms, flop))
    return runs, context


def google_bench(binary, out_json, reps, filt, env=None):
    """The median of each benchmark's repetitions: {(name, threads): {"ms", "flop"}}"""
    entries, context = bench_json(binary, out_json, reps, filt, env, aggregates_only=True)
    medians = {}
    for b in entries:
        # with one repetition Google Benchmark writes no aggregate: that run
        if b.get("aggregate_name") == "median" or (reps == 1 and b.get("run_type") == "iteration"):
            key, ms, flop = bench_entry(b)
            medians[key] = {"ms": ms, "flop": flop}
    return medians, context


def cpu_vendor():
    """'intel', 'amd' or 'other': the docs keep one table per route and CPU vendor (two-port AVX-512 Xeons and
    double-pumped Zen 4/5 run the same route at different speeds)"""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read(4096)
    except OSError:
        return "other"
    return "intel" if "GenuineIntel" in text else "amd" if "AuthenticAMD" in text else "other"


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


def best_peer(times, peer, t):
    """the peer's best (ms, setting) for a row with t threads: over its settings with <= t threads"""
    best = [times[(peer, s)] for s in range(1, t + 1) if peer and (peer, s) in times]
    return min(best) if best else (None, None)


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

    threads = bench_threads()
    os.environ["TS_BENCH_THREADS"] = ",".join(map(str, threads))  # every binary and peer runs these counts

    # 1) the measured peak of the route in use (a bad TS_ISA exits 2 here), the first of three
    # measurements interleaved with the rows; (and, for ch12's generation bound, the memory's read
    # bandwidth, measured the same way, once)
    peak_gflops = {}  # threads -> [GFLOP/s of every repetition of every measurement]
    peak_when = []    # (when, {threads: best GFLOP/s of that measurement})

    def measure_peak(when, with_bw=False):
        runs, ctx = every_run(os.path.join(a.build, "bench_peak"), os.path.join(out_dir, f"peak_{when}.json"),
                              a.reps, "^(fma_peak|mem_read_bw)/" if with_bw else "^fma_peak/")
        best = {}
        for (name, t), got in runs.items():
            if name == "fma_peak":
                g = [flop / (ms * 1e-3) / 1e9 for ms, flop in got]
                peak_gflops.setdefault(t, []).extend(g)
                best[t] = max(g)
        peak_when.append((when, best))
        return runs, ctx

    first_runs, peak_ctx = measure_peak("before", "mem_read_bw" in keys)
    peak_runs = {k: {"ms": sorted(ms for ms, _ in v)[len(v) // 2], "flop": 0.0}
                 for k, v in first_runs.items() if k[0] == "mem_read_bw"}  # the median, as every row
    isa, cpu_isa = peak_ctx.get("peak_isa", "?"), peak_ctx.get("cpu_isa", "?")

    # the environment of both sides: TS_ISA=avx2 on an AVX-512 CPU emulates an AVX2-only machine
    # (ATEN_CPU_CAPABILITY: PyTorch's kernels, unless the caller chose; our binaries ignore it)
    env = os.environ.copy()
    if not env.get("ATEN_CPU_CAPABILITY") and isa in ATEN_FOR_ISA:
        env["ATEN_CPU_CAPABILITY"] = ATEN_FOR_ISA[isa]
    notes = []
    if isa != cpu_isa:
        if isa == "avx2" and not env.get("OPENBLAS_CORETYPE"):
            env["OPENBLAS_CORETYPE"] = "Haswell"  # OpenBLAS's AVX2 kernel, on both sides
        notes.append(f"TS_ISA={isa} on an {cpu_isa} CPU: emulating a CPU whose widest route is {isa}. PyTorch runs "
                     f"ATEN_CPU_CAPABILITY={env['ATEN_CPU_CAPABILITY']}; OpenBLAS (both sides) "
                     + (f"OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}" if env.get("OPENBLAS_CORETYPE")
                        else "keeps its own core")
                     + ". ONNX Runtime has no switch to cap its instruction set: it runs this CPU's widest kernels")

    # 2) ours
    # the row kernels run in a process of their own: interleaved with the encoder rows, they could
    # start while a previous row's threads (OpenBLAS's workers, our team) still spin on the other core
    enc_keys = [k for k in keys if not k.endswith("128x768x3072") and not k.startswith("train_") and k not in GPT_KEYS]
    ours, context = {}, {}
    parts = (("bench_encoder", "encoder", [k for k in enc_keys if k not in ROW_KERNELS]),
             ("bench_encoder", "rows", [k for k in enc_keys if k in ROW_KERNELS]),
             ("bench_matmul", "matmul", [k for k in keys if k.endswith("128x768x3072")]),
             ("bench_train", "train", [k for k in keys if k.startswith("train_")]),
             ("bench_gpt", "gpt", [k for k in keys if k in GPT_KEYS and k != "mem_read_bw"]))
    for binary, part, part_keys in parts:
        if not part_keys:
            continue
        got, ctx = google_bench(os.path.join(a.build, binary), os.path.join(out_dir, f"ours_{part}.json"),
                                a.reps, "^(" + "|".join(part_keys) + ")/", env)
        if ctx.get("isa", isa) != isa:
            sys.exit(f"bench: {binary} ran route {ctx['isa']} but bench_peak measured {isa}")
        ours.update(got)
        if part != "train":  # the first binary's context wins; bench_train's is not shown
            context = {**ctx, **context}
    ours.update(peak_runs)  # mem_read_bw: the generation bound
    core = context.get("openblas_core", "")
    measure_peak("between")  # the second peak: after ours, before the peers

    # 3) PyTorch, on the same OpenBLAS core and the matching ATen kernels
    if core and not env.get("OPENBLAS_CORETYPE"):
        env["OPENBLAS_CORETYPE"] = core
    peers = sorted({peer for k, _, peer in ROWS if k in keys and peer})
    torch_blas, torch_openblas = "?", True  # the BLAS PyTorch was built with (bench_pytorch.py reads it)
    torch_ms, torch_version = {}, "?"  # (workload, threads) -> (best ms, "torch i / OpenBLAS b") over that many threads
    if peers:
        py_out = os.path.join(out_dir, "pytorch.json")
        cmd = [PYTHON, os.path.join(ROOT, "bench", "bench_pytorch.py"), "--reps", str(a.reps), "--out", py_out,
               "--threads", ",".join(map(str, threads)),
               "--filter", "^(" + "|".join(peers + ["fused_" + p for p in peers if p.startswith("encoder_")]) + ")/"]
        if core:
            cmd += ["--expect-core", core]
        sys.stderr.write(run(cmd, env=env))
        with open(py_out) as f:
            py = json.load(f)
        py_rows, fused_check = py["rows"], py["fused_check"]
        for r in py_rows:
            key = (r["workload"], r["threads"])
            setting = f"{r['torch_threads']}/{r['openblas_threads']}"
            if key not in torch_ms or r["ms"] < torch_ms[key][0]:
                torch_ms[key] = (r["ms"], setting)
        torch_version = py_rows[0]["torch"] if py_rows else "?"
        torch_blas, torch_openblas = py.get("torch_blas", "?"), py.get("openblas", True)
        if not fused_check <= py["fused_limit"]:
            notes.append(f"PyTorch's fused encoder differs from article 000's by {fused_check:.3g} of the output's "
                         f"scale (> {py['fused_limit']:g}): not the same function, its column is empty")

    # 4) ONNX Runtime: the encoder rows
    ort_peers = sorted(k for k in peers if k.startswith("encoder_"))
    ort_ms, ort_check, ort_reason = {}, None, None
    if ort_peers:
        ort_rows, ort_check, ort_reason = ort_peer.measure(a.build, PYTHON, a.reps, "^(" + "|".join(ort_peers) + ")/",
                                                           threads)
        for r in ort_rows:
            key = (r["workload"], r["threads"])
            if key not in ort_ms or r["ms"] < ort_ms[key][0]:
                ort_ms[key] = (r["ms"], str(r["intra_op_threads"]))
        if ort_reason:
            print(f"bench: ONNX Runtime column empty: {ort_reason}", file=sys.stderr)
    ort_version = ort_check["onnxruntime"] if ort_check else ort_peer.pinned_version()
    measure_peak("after")  # the third peak, after the peers
    peak = {t: max(g) for t, g in peak_gflops.items()}
    spread = {t: 100.0 * (max(g) - min(g)) / max(g) for t, g in peak_gflops.items()}

    # 5) the table
    rows = []
    for key, label, peer in ROWS:
        for t in threads:
            o = ours.get((key, t))
            if key not in keys or o is None:
                continue
            py, py_threads = best_peer(torch_ms, peer, t)
            fu, fu_threads = best_peer(torch_ms, "fused_" + peer if peer and peer.startswith("encoder_") else None, t)
            ort, ort_threads = best_peer(ort_ms, peer, t)
            one = ours.get((key, 1))
            gflops = o["flop"] / (o["ms"] * 1e-3) / 1e9 if o["flop"] else None
            rows.append({"key": key, "workload": label.strip(), "label": label, "threads": t, "ours_ms": o["ms"],
                         "pytorch_ms": py, "pytorch_threads": py_threads, "ratio": o["ms"] / py if py else None,
                         "fused_ms": fu, "fused_threads": fu_threads, "ratio_fused": o["ms"] / fu if fu else None,
                         "ort_ms": ort, "ort_threads": ort_threads, "ratio_ort": o["ms"] / ort if ort else None,
                         "gflops": gflops, "peak_gflops": peak.get(t), "flop": o["flop"],
                         "pct_peak": 100.0 * gflops / peak[t] if gflops and peak.get(t) else None,
                         "efficiency": 100.0 * one["ms"] / (t * o["ms"]) if one and t > 1 else None})

    def with_setting(ms, setting):
        return fmt(ms, ".3f") + ("" if setting is None else f" ({setting})")

    head = ["workload", "threads", "ours ms", "PyTorch ms", "ratio", "fused ms", "ratio fused", "ORT ms", "ratio ORT",
            "GFLOP/s", "% of peak", "par. eff. %"]
    table = [[r["label"], str(r["threads"]), fmt(r["ours_ms"], ".3f"), with_setting(r["pytorch_ms"], r["pytorch_threads"]),
              fmt(r["ratio"], ".2f"), with_setting(r["fused_ms"], r["fused_threads"]), fmt(r["ratio_fused"], ".2f"),
              with_setting(r["ort_ms"], r["ort_threads"]), fmt(r["ratio_ort"], ".2f"),
              fmt(r["gflops"], ".1f"), fmt(r["pct_peak"], ".1f"), fmt(r["efficiency"], ".0f")] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in table)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    peak_line = (f"measured FMA peak, {isa} route ({PEAK_OP.get(isa, '?')}, 12 chains per thread), the best of "
                 f"{len(peak_when)} measurements x {a.reps} repetitions interleaved with the rows: "
                 + ", ".join(f"{t} thread{'s' if t > 1 else ''} {peak[t]:.1f} GFLOP/s (spread {spread[t]:.0f} %)"
                             for t in sorted(peak))
                 + " -- the % of peak column divides by it")
    peak_detail = "peak per measurement (GFLOP/s): " + "; ".join(
        f"{when}: " + ", ".join(f"{t}t {g:.1f}" for t, g in sorted(best.items())) for when, best in peak_when)
    if ort_reason:
        ort_line = f"ONNX Runtime column empty: {ort_reason}"
    elif not ort_check:
        ort_line = "ONNX Runtime: not run (it is the peer of the encoder rows only, and none was selected)"
    else:
        ort_line = (f"ONNX Runtime {ort_version} ({ort_check.get('binding', 'onnxruntime-node')}, CPU): its output = PyTorch's within "
                    f"{ort_check['max_abs_diff']:.2g} (check at {ort_check['shape']}); (n) after its time = "
                    f"intraOpNumThreads n, inter-op 1, its best with n <= the row's threads")
    print(peak_line)
    print(peak_detail)
    for n in notes:
        print(n)
    print(ort_line)
    print()
    print(line(head))
    print("  ".join("-" * w for w in widths))
    for c in table:
        print(line(c))

    # checks of the targets (issues 2, 5, 10, 33), computed from the rows
    checks, gpt_checks = target_checks(rows, threads, isa, {k: l.strip() for k, l, _ in ROWS})
    print()
    for c in checks + gpt_checks:
        print(c)

    csv_path = os.path.join(out_dir, "results.csv")
    columns = ["workload", "threads", "ours_ms", "pytorch_ms", "ratio", "fused_ms", "ratio_fused", "gflops", "pct_peak",
               "ort_ms", "ratio_ort", "peak_gflops", "efficiency"]
    digits = {"ours_ms": 4, "pytorch_ms": 4, "ratio": 4, "fused_ms": 4, "ratio_fused": 4, "gflops": 2, "pct_peak": 2,
              "ort_ms": 4, "ratio_ort": 4, "peak_gflops": 2, "efficiency": 1}
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow([r[c] if c not in digits else "" if r[c] is None else f"{r[c]:.{digits[c]}f}" for c in columns])
    print(f"\nwrote {csv_path}", file=sys.stderr)

    if a.no_docs:
        return 0
    load_after = loadavg()

    def section(sec_rows, sec_checks, gpt):
        """the machine, the table of sec_rows and the checks under it, as markdown"""
        md = []
        md.append(f"Generated by `make bench` (scripts/bench.sh -> bench/report.py) on "
                  f"{started.strftime('%Y-%m-%d %H:%M UTC')}; do not edit by hand.\n")
        md.append("| machine | |\n|---|---|")
        md.append(f"| CPU | {cpu_model()} |")
        md.append(f"| logical CPUs | {os.cpu_count()} |")
        md.append(f"| SIMD route (ours) | {isa}" + (f" (TS_ISA={isa} on an {cpu_isa} CPU: emulation)" if isa != cpu_isa
                                                   else " (the widest this CPU runs: measured natively)") + " |")
        md.append(f"| measured FMA peak | {peak_line}; {peak_detail} |")
        md.append(f"| OpenBLAS core | {core or '?'} ({context.get('openblas_core_reason', '?')}) |")
        if gpt:
            md.append(f"| PyTorch | {torch_version} (`{PYTHON}`), tests/twins/gpt_reference.py's GPT: training in eager "
                      f"mode (autograd, torch.optim.Adam); generation under inference_mode, its own KV-cache loop "
                      f"(bench/bench_pytorch.py), 1 thread |")
        else:
            md.append(f"| fast path GEMM | {context.get('fast_gemm', '?')} |")
            md.append(f"| PyTorch | {torch_version} (`{PYTHON}`), article 000's model, eval, inference_mode; "
                      f"fused = nn.TransformerEncoder(norm_first, GELU) on the same weights, its fast path |")
        if torch_openblas:
            md.append(f"| PyTorch settings | OPENBLAS_CORETYPE={env.get('OPENBLAS_CORETYPE', '(unset)')}, "
                      f"ATEN_CPU_CAPABILITY={env.get('ATEN_CPU_CAPABILITY', '(default)')}; (i/b) after its time = "
                      f"torch.set_num_threads(i), OpenBLAS threads b: its best pair with i, b <= the row's threads |")
        else:
            md.append(f"| PyTorch settings | its BLAS is {torch_blas}, not OpenBLAS (no OPENBLAS_* setting reaches it: "
                      f"its products run another library than ours); ATEN_CPU_CAPABILITY="
                      f"{env.get('ATEN_CPU_CAPABILITY', '(default)')}; (i/0) after its time = torch.set_num_threads(i), "
                      f"its best i <= the row's threads |")
        if not gpt:
            md.append(f"| ONNX Runtime | {ort_line} |")
        for n in notes:
            md.append(f"| note | {n} |")
        md.append(f"| load average (1/5/15 min) | before {load_before}, after {load_after} |")
        md.append(f"| repetitions | median of {a.reps} after a warm-up, each side |")
        md.append(f"| threads | {', '.join(map(str, threads))} (par. eff. = time at 1 thread / (t x time at t)) |")
        md.append("")
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for r, c in zip(rows, table):
            if r in sec_rows:
                md.append("| " + " | ".join([c[0].strip().replace("  ", "")] + c[1:]) + " |")
        md.append("")
        for c in sec_checks:
            md.append(f"- {c}")
        return "\n".join(md) + "\n"

    # one table per CPU kind (the route in use: native, or emulated with TS_ISA), each between its markers,
    # and ch12's GPT rows in a section of their own (a run rewrites only the sections it has rows for)
    doc = os.path.join(ROOT, "docs", "performance.md")
    text = open(doc).read() if os.path.exists(doc) else "# Performance\n"
    main_rows = [r for r in rows if r["key"] not in GPT_KEYS]
    gpt_rows = [r for r in rows if r["key"] in GPT_KEYS]
    vendor = cpu_vendor()
    kind = f"{KIND_TITLE.get(isa, isa)}, {VENDOR_TITLE.get(vendor, 'other')} CPUs"
    for name, title, sec_rows, sec_checks, gpt in (
            (f"{isa} {vendor}", kind, main_rows, checks, False),
            (f"gpt {isa} {vendor}", f"ch12's GPT, {kind}", gpt_rows, gpt_checks, True)):
        if not sec_rows:
            continue
        block = section(sec_rows, sec_checks, gpt)
        begin, end = f"<!-- bench:begin {name} -->", f"<!-- bench:end {name} -->"
        if begin in text and end in text:
            text = text[:text.index(begin) + len(begin)] + "\n" + block + text[text.index(end):]
        else:
            text = text.rstrip("\n") + f"\n\n### {title}\n\n{begin}\n{block}{end}\n"
    with open(doc, "w") as f:
        f.write(text)
    print(f"wrote {doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
