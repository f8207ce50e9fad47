#!/usr/bin/env python3
"""make bench's thread counts, without timing anything.

usage: python3 tests/bench_args_test.py BENCH_PEAK

- bench_peak lists its rows at the counts of TS_BENCH_THREADS (--benchmark_list_tests: nothing runs);
- unset, at 1, 2, 4, ... up to the usable CPUs and that count (what bench/report.py's bench_threads() says too);
- a malformed TS_BENCH_THREADS is bad input in both: one line on stderr naming the variable, exit 2.
Prints OK / NOT OK per case and 'N passed, N failed'."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.path.insert(0, HERE)
from script_args import args_or_usage  # noqa: E402

binary = args_or_usage(__doc__, 1)[0]
results = []


def case(name, ok, detail=""):
    results.append(ok)
    print(f"{'OK' if ok else 'NOT OK'}  {name}" + (f"  ({detail})" if detail and not ok else ""))


def listed(env_value):
    env = dict(os.environ)
    env.pop("TS_BENCH_THREADS", None)
    if env_value is not None:
        env["TS_BENCH_THREADS"] = env_value
    p = subprocess.run([binary, "--benchmark_list_tests=true", "--benchmark_filter=^fma_peak/"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout.split(), p.stderr


rc, rows, _ = listed("1,3,5")
case("TS_BENCH_THREADS=1,3,5 -> fma_peak/1, /3, /5", rc == 0 and [r.split("/")[1] for r in rows] == ["1", "3", "5"],
     f"exit {rc}, rows {rows}")

import report  # noqa: E402  (bench/report.py: the same rule on the Python side)
os.environ.pop("TS_BENCH_THREADS", None)
want = report.bench_threads()
rc, rows, _ = listed(None)
got = [int(r.split("/")[1]) for r in rows] if rc == 0 else None
cores = len(os.sched_getaffinity(0))
case(f"unset -> the same counts as report.py's bench_threads() {want}", got == want, f"bench_peak: {got}")
case(f"unset -> powers of two up to {cores} and {cores} itself",
     want[-1] == cores and all(b == 2 * a for a, b in zip(want, want[1:-1])) and want[0] == 1, f"{want}")

for bad in ("two", "0", "1,,2", "4,-1"):
    rc, _, err = listed(bad)
    lines = err.strip().splitlines()
    case(f"bench_peak TS_BENCH_THREADS={bad!r} -> exit 2, one line naming it",
         rc == 2 and len(lines) == 1 and "TS_BENCH_THREADS" in lines[0], f"exit {rc}, stderr {lines}")
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import report; "
                        "report.bench_threads()", os.path.join(HERE, "..", "bench")],
                       env={**os.environ, "TS_BENCH_THREADS": bad}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    lines = p.stderr.strip().splitlines()
    case(f"report.py TS_BENCH_THREADS={bad!r} -> exit 2, one line naming it",
         p.returncode == 2 and len(lines) == 1 and "TS_BENCH_THREADS" in lines[0], f"exit {p.returncode}, {lines}")

failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
