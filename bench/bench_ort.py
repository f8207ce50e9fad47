"""bench_ort.py: bench_ort.js's twin for Python's onnxruntime (pip's or a distribution's package):
the encoder rows, the same names, sessions, ids, timing and check, one JSON object per line.

usage: python3 bench/bench_ort.py --model FILE [--threads 1,2] [--reps 7] [--filter REGEX]
                                  [--check DIR] [--out FILE.json]

bench/ort_peer.py uses it where the torch interpreter can import onnxruntime (a machine without
npm, or one whose ONNX Runtime is the one to compare with), else the pinned onnxruntime-node.
Sessions: CPU execution provider, all graph optimisations, sequential execution, inter-op 1 thread,
intra-op t threads. Timing: two warm-up runs, then the median over --reps repetitions of a fixed
number of runs (bench_ort.js's WORKLOADS), time.perf_counter.
"""
import argparse
import json
import re
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

# name -> (B, T, runs per repetition): bench_ort.js's WORKLOADS
WORKLOADS = {"encoder_1x5": (1, 5, 10), "encoder_1x128": (1, 128, 3), "encoder_8x128": (8, 128, 1)}
VOCAB = 30522


def ids(B, T):
    """(B,T) int64: bench_ort.js's 32-bit LCG, seed 1234"""
    s, out = 1234, np.empty(B * T, dtype=np.int64)
    for i in range(B * T):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        out[i] = s % VOCAB
    return out.reshape(B, T)


def timed(fn, reps, runs):
    fn()
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(runs):
            fn()
        times.append((time.perf_counter() - t0) / runs)
    return statistics.median(times)


def check(session, d):
    with open(f"{d}/check.json") as f:
        meta = json.load(f)
    x = np.fromfile(f"{d}/check_ids.bin", dtype="<i8").reshape(meta["ids_shape"])
    ref = np.fromfile(f"{d}/check_out.bin", dtype="<f4")
    y = session.run(None, {"ids": x})[0]
    if list(y.shape) != meta["out_shape"] or y.size != ref.size:
        raise SystemExit(f"bench_ort: error: check: output shape {list(y.shape)} but PyTorch's is {meta['out_shape']}")
    return {"check": "onnxruntime vs pytorch", "shape": meta["out_shape"],
            "max_abs_diff": float(np.abs(y.reshape(-1) - ref).max()), "out_max_abs": meta["out_max_abs"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--filter", default="")
    p.add_argument("--check", default="")
    p.add_argument("--out", default="")
    a = p.parse_args()
    version = ort.__version__
    rows, checked = [], not a.check
    for t in [int(x) for x in a.threads.split(",")]:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads, so.inter_op_num_threads = t, 1
        session = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
        if not checked:
            print(json.dumps({**check(session, a.check), "onnxruntime": version, "binding": "Python onnxruntime"}), flush=True)
            checked = True
        for name, (B, T, runs) in WORKLOADS.items():
            if not re.search(a.filter, f"{name}/{t}"):
                continue
            feeds = {"ids": ids(B, T)}
            sec = timed(lambda: session.run(None, feeds), a.reps, runs)
            r = {"workload": name, "threads": t, "intra_op_threads": t, "inter_op_threads": 1, "ms": sec * 1e3,
                 "onnxruntime": version}
            rows.append(r)
            print(json.dumps(r), flush=True)
        del session
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
