#!/usr/bin/env python3
"""What llvm-mca predicts for the packed GEMM's inner loop on cores we cannot run.

usage: python3 bench/mca.py BUILD_DIR [--llvm-mca PATH] [--markdown]

The fast path's GEMM micro-kernel (src/fast/simd/route_impl.hpp, micro_tile<MR, NV>) computes an
MR x NR tile (NR = NV vectors): per step k, NV vector loads of the packed weight panel, MR
broadcasts of x and MR NV fused multiply-adds. Each kind of core gets its own MR and NV (isa.hpp:
two-port and double-pumped AVX-512, AVX2); this script models each blocking. It takes the loop the
compiler actually emitted (the objects of src/fast/simd/route_avx512.cpp and route_avx2.cpp in
BUILD_DIR, disassembled with objdump: the backward-jumping block of micro_tile<MR, NV> with the
most vfmadd), and asks llvm-mca how many cycles
one iteration takes on each core kind (-mcpu). The core's own FMA throughput comes from the same
model: a block of 12 independent vfmadd231ps of the route's width (what bench_peak runs), so the
"% of the FMA peak" column compares two predictions of one model, not a prediction with a typed
figure. These are predictions (steady state, everything in L1), not measurements: make bench
measures what runs here.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# One row group per blocking of the packed GEMM (route_impl.hpp; the kind of core it is chosen for
# at run time, isa.hpp): (blocking, object file, lanes, vector register prefix, MR, vectors per
# panel step NV, the cores to model). Each blocking is modelled on its own kind of core and on the
# other AVX-512 kind, so the table shows why each kind gets its own.
BLOCKINGS = [
    ("12x32 two-port", "route_avx512.cpp.o", 16, "zmm", 12, 2, ["sapphirerapids", "icelake-server", "skylake-avx512", "znver4"]),
    ("6x64 double-pumped", "route_avx512.cpp.o", 16, "zmm", 6, 4, ["znver4", "sapphirerapids", "icelake-server", "skylake-avx512"]),
    ("6x16 avx2", "route_avx2.cpp.o", 8, "ymm", 6, 2, ["znver3", "znver2", "skylake", "alderlake"]),
]


def find_mca(explicit):
    if explicit:
        return explicit
    for v in range(25, 13, -1):  # the newest llvm-mca knows the most cores (znver4 needs LLVM >= 17)
        p = shutil.which(f"llvm-mca-{v}")
        if p:
            return p
    return shutil.which("llvm-mca")


def loop_of(obj, mr, nv):
    """the AT&T text of micro_tile<mr, nv>'s inner loop in obj (the backward jump's block with the most FMAs)"""
    out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", "-M", "att", obj],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    funcs, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m and name:
            funcs[name].append((int(m.group(1), 16), m.group(2).split("#")[0].strip()))
    want = f"micro_tile<{mr}, {nv}, "
    body = next((v for k, v in funcs.items() if want in k), None)
    if body is None:
        sys.exit(f"mca: no micro_tile<{mr}, {nv}> in {obj} (build the route first)")
    best = []
    for i, (addr, ins) in enumerate(body):
        m = re.match(r"^j\w+\s+([0-9a-f]+)\b", ins)
        if not m or int(m.group(1), 16) >= addr:
            continue
        start = int(m.group(1), 16)
        block = [x for a, x in body[:i] if a >= start]
        if sum("vfmadd" in x for x in block) > sum("vfmadd" in x for x in best):
            best = block
    if not best:
        sys.exit(f"mca: found no loop in micro_tile<{mr}, {nv}>")
    return best


def mca(tool, cpu, lines):
    """llvm-mca's (cycles per iteration, its summary text) for the instruction lines"""
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        p = subprocess.run([tool, f"-mcpu={cpu}", "-iterations=200", "-summary-view", "-resource-pressure=false",
                            "-instruction-info=false", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[0] if p.stderr.strip() else f"exit {p.returncode}"
    it = int(re.search(r"Iterations:\s+(\d+)", p.stdout).group(1))
    cyc = int(re.search(r"Total Cycles:\s+(\d+)", p.stdout).group(1))
    return cyc / it, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--llvm-mca", default="")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    tool = find_mca(a.llvm_mca)
    if not tool:
        print("mca: llvm-mca not found: install the newest llvm-NN package your release has (llvm-mca 17 or newer knows znver4)", file=sys.stderr)
        return 2
    version = subprocess.run([tool, "--version"], stdout=subprocess.PIPE, text=True).stdout
    version = re.search(r"version ([\d.]+)", version).group(1) if re.search(r"version ([\d.]+)", version) else "?"
    rows = []
    for route, objname, lanes, reg, mr, nv, cpus in BLOCKINGS:
        obj = os.path.join(a.build, "CMakeFiles", "ts_core.dir", "src", "fast", "simd", objname)
        if not os.path.exists(obj):
            print(f"mca: {obj} missing (an x86-64 build of the fast path)", file=sys.stderr)
            continue
        loop = [re.sub(r"^(j\w+)\s+[0-9a-f]+.*$", r"\1 .Lloop", x) for x in loop_of(obj, mr, nv)]
        loop = [".Lloop:"] + loop
        fmas = sum("vfmadd" in x for x in loop)
        chains = [f"vfmadd231ps %{reg}14, %{reg}15, %{reg}{i}" for i in range(12)]
        for cpu in cpus:
            cyc, err = mca(tool, cpu, loop)
            peak, err2 = mca(tool, cpu, chains)
            if err or err2:
                rows.append((route, cpu, fmas, None, None, None, err or err2))
                continue
            kernel = fmas * 2 * lanes / cyc       # FLOP per cycle of the loop
            ceiling = 12 * 2 * lanes / peak       # FLOP per cycle of independent FMAs
            rows.append((route, cpu, fmas, cyc, kernel, 100 * kernel / ceiling, None))
    head = ["blocking", "-mcpu", "FMAs / iteration", "cycles / iteration", "FLOP / cycle", "% of the FMA peak"]
    cells = [[r[0], r[1], str(r[2]), "-" if r[3] is None else f"{r[3]:.2f}", "-" if r[4] is None else f"{r[4]:.1f}",
              r[6] if r[6] else f"{r[5]:.0f}"] for r in rows]
    print(f"llvm-mca {version} ({tool}) on micro_tile's inner loop as compiled in {a.build}")
    if a.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for c in cells:
            print("| " + " | ".join(c) + " |")
    else:
        w = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for c in cells:
            print("  ".join(x.ljust(w[i]) for i, x in enumerate(c)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
