#!/usr/bin/env python3
"""Every docs page's sample output must be what the chapter prints now.

usage: docs_check.py [--cpus] BUILD_DIR PAGE...
--cpus: only the samples whose command states neither OPENBLAS_CORETYPE nor TS_ISA, each run under
two other CPUs' picks (an AVX-512 CPU: SkylakeX with the scalar route, then Haswell with avx2;
an AVX2 CPU: Zen with scalar, then Haswell with avx2): such a sample claims that its lines hold
on every CPU (exit 77, skipped, on a CPU without AVX2).
In each page, the code block after a heading "## Sample output (`ENV=x ./build/chNN_x FLAGS`...)"
(or its Chinese twin "## 输出示例 (`ENV=x ./build/chNN_x --lang zh ...`...)") or
after a line "Made with `ENV=x ./build/chNN_x FLAGS`:" (the README) is compared with a real run
of that command (from BUILD_DIR), under the conditions the command states right above the
sample (e.g. OPENBLAS_CORETYPE=Haswell, the sgemm kernel the committed transcripts pin, and
TS_ISA=avx2 where the SIMD route changes a digit, as in ch12's training): nothing else of the
caller's environment that changes the layout or PyTorch's arithmetic (TS_COLUMNS, TS_TORCH) is
passed on, so a sample reproduces as stated. What a command does not state is the machine's:
the caller's OPENBLAS_CORETYPE and TS_ISA stand for another CPU's picks (OpenBLAS's kernel, the
widest SIMD route), so `OPENBLAS_CORETYPE=SkylakeX TS_ISA=scalar docs_check.py ...` checks the
samples as such a CPU runs them, and a sample whose digits depend on either states it (ctest
docs_samples_cpus runs the samples that state neither under two other picks). The samples
keep each line as the chapter writes it (TS_COLUMNS=0, set here unless the command states a
width); at a terminal the same lines are laid out to its width. A sample is abridged: its lines
must appear in the run's output in the same order, a line that is only "..." (or "…")
stands for lines left out, and a line ending in "...", "…" or "(...)" was cut short (its
start must match). Wall-clock timings are the one thing allowed to differ: on a line
that reports a time or a speed ("ms", "GFLOP/s", "x the ... speed") numbers are masked.
A line "Figures made with `ENV=x ./build/chNN_x ... --svg docs/figures/chNN_x`:" (the
page's "## Figures", written by scripts/figures.py) is checked the same way: the command is
run again with --svg into a new directory, and it must write exactly the SVG files of
docs/figures/chNN_x, byte for byte; every figure the page shows must exist.
Two figures depend on OpenBLAS's own build, not only on the kernel the command pins (both
measured through the fast path's sgemm): ch09's cache difference (OpenBLAS 0.3.21's Haswell
kernel gives 7.15e-07, 0.3.29's 9.54e-07) and its post-LN max |std - 1| (4.8e-07, 5.4e-07). The samples were made with
SAMPLES_OPENBLAS; under another OpenBLAS such a line (BLAS_FIGURES, and the bare value printed
after its `>>>` line) is compared without its digits: its words and verdict must still match.
ch04's per-head vs fused difference and ch10's cache difference are such figures too (the
first 2.7e-07 under 0.3.21's Haswell kernel, 0 under 0.3.29's).
The samples show the arithmetic of PyTorch 1.13 (SAMPLES_TORCH, every chapter's header names
it): a command is run with TS_TORCH=1.13 unless it states another, so a build made for another
PyTorch (Debian 13's 2.6: GELU, softmax, LayerNorm, sin and cos differ in the last bits, and
a training run with them) reproduces the samples through the exact path's 1.13 kernels.
Prints OK / NOT OK per page and the first missing line; exit 0 if every page holds.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from script_args import args_or_usage

ENVS = r"(?:[A-Z_][A-Z0-9_]*=\S* )*"
HEADING = re.compile(r"^## (?:Sample output|输出示例) \(`(" + ENVS + r"\./build/[^`]+)`")
MARKER = re.compile(r"^Made with `(" + ENVS + r"\./build/\S[^`]*)`:$")  # README: a block per chapter
FIGURES = re.compile(r"^Figures made with `(" + ENVS + r"\./build/\S[^`]*--svg (\S+))`:$")
IMAGE = re.compile(r"!\[(?:\\.|[^\]\\])*\]\((figures/[^)]+\.svg)\)")
UNSTATED = ("TS_COLUMNS", "COLUMNS", "TS_TORCH")  # set here unless stated (OPENBLAS_CORETYPE, TS_ISA: the CPU's)
TIMING = re.compile(r"\bms\b|ms/forward|GFLOP/s|speed|faster|slower")
NUMBER = re.compile(r"\d+(\.\d+)?")
# a BLAS figure without its digits: a whole number as torch prints it (2.6822e-07 and 0. alike)
BLAS_NUMBER = re.compile(r"\d+(\.\d*)?(e[-+]?\d+)?")
ELISION = {"...", "…"}
SAMPLES_OPENBLAS = "0.3.21"  # Debian 12's, which made every sample
BLAS_FIGURES = re.compile(r"max \|(?:full - cached\w*|std - 1)\||^>>> \(full - cached\w*\)\.abs\(\)\.max\(\)$"
                          r"|^>>> \(per_head\(x, x, x\) - mha\(x, x, x\)\)\.abs\(\)\.max\(\)$"
                          r"|separate heads and article 002's fused layer differ by"
                          r"|largest log-prob difference over|对数概率的最大差值")
SAMPLES_TORCH = "1.13"  # Debian 12's, whose arithmetic every sample shows


def openblas_version():
    """The OpenBLAS the chapters load (its openblas_get_config()), e.g. "0.3.29"; "" if unknown."""
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_config.restype = ctypes.c_char_p
        m = re.search(r"OpenBLAS (\d+\.\d+\.\d+)", lib.openblas_get_config().decode())
        return m.group(1) if m else ""
    except (OSError, AttributeError):
        return ""


SAME_BLAS = openblas_version() in ("", SAMPLES_OPENBLAS)


def samples_of(page):
    """[(command, [sample lines])]: the code block after each sample heading or marker."""
    lines = open(page, encoding="utf-8").read().splitlines()
    found = []
    for i, line in enumerate(lines):
        m = HEADING.match(line) or MARKER.match(line)
        if not m:
            continue
        start = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        end = next(j for j in range(start + 1, len(lines)) if lines[j].startswith("```"))
        found.append((m.group(1), lines[start + 1:end]))
    return found


def norm(line):
    line = line.rstrip()
    if TIMING.search(line):
        line = NUMBER.sub("#", line)
        line = re.sub(r"OpenBLAS \w+", "OpenBLAS #", line)
        line = re.sub(r"\s+", " ", line)
    return line


def matches(want, got):
    """A sample line cut short with a trailing "...", "…" or "(...)" matches by its prefix."""
    for cut in ("(...)", "...", "…"):
        if want.endswith(cut) and want.strip() not in ELISION:
            return got.startswith(want[: -len(cut)].rstrip())
    return want == got


def check_page(build, page):
    found = samples_of(page)
    if not found:
        print(f"NOT OK  {os.path.basename(page)}: no '## Sample output (`./build/...`)' section")
        return False
    results = [check(build, os.path.basename(page), command, sample) for command, sample in found]
    return all(results) and check_figures(build, page)


def run_stated(build, command, extra_env=None):
    """The command (its stated ENV=x first) run from BUILD_DIR under exactly those conditions."""
    argv = shlex.split(command)
    env = {k: v for k, v in os.environ.items() if k not in UNSTATED}
    while "=" in argv[0] and not argv[0].startswith("."):
        key, value = argv.pop(0).split("=", 1)
        env[key] = value
    argv[0] = os.path.join(build, os.path.basename(argv[0]))
    env["NO_COLOR"] = "1"
    env.setdefault("TS_TORCH", SAMPLES_TORCH)
    env.setdefault("TS_COLUMNS", "0")  # lines as written, whoever runs the test (and whatever /dev/tty is)
    return argv, env


def check_figures(build, page):
    """The page's figures are what its stated --svg command writes now, and all exist."""
    name = os.path.basename(page)
    root = os.path.dirname(os.path.dirname(os.path.abspath(page))) if os.path.basename(
        os.path.dirname(os.path.abspath(page))) == "docs" else os.path.dirname(os.path.abspath(page))
    docs = os.path.dirname(os.path.abspath(page))
    text = open(page, encoding="utf-8").read()
    for image in IMAGE.findall(text):
        if not os.path.isfile(os.path.join(docs, image)):
            print(f"NOT OK  {name}: shows {image}, which does not exist (run scripts/figures.py)")
            return False
    for line in text.splitlines():
        m = FIGURES.match(line)
        if not m:
            continue
        command, folder = m.group(1), m.group(2)
        with tempfile.TemporaryDirectory() as tmp:
            argv, env = run_stated(build, command.replace("--svg " + folder, "--svg " + os.path.join(tmp, "f")))
            run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
            if run.returncode != 0:
                print(f"NOT OK  {name}: `{command}` exited {run.returncode}: {run.stderr.strip()[:200]}")
                return False
            made = sorted(f for f in os.listdir(os.path.join(tmp, "f")) if f.endswith(".svg"))
            committed_dir = os.path.join(root, folder)
            committed = sorted(f for f in os.listdir(committed_dir) if f.endswith(".svg")) \
                if os.path.isdir(committed_dir) else []
            if made != committed:
                print(f"NOT OK  {name}: `{command}` writes {made}, {folder} holds {committed} (run scripts/figures.py)")
                return False
            for f in made:
                if open(os.path.join(tmp, "f", f), "rb").read() != open(os.path.join(committed_dir, f), "rb").read():
                    print(f"NOT OK  {name}: {folder}/{f} is not what `{command}` draws now (run scripts/figures.py)")
                    return False
            shown = {os.path.basename(i) for i in IMAGE.findall(text)}
            if set(made) - shown:
                print(f"NOT OK  {name}: the page does not show {sorted(set(made) - shown)[0]}")
                return False
            print(f"OK      {name}: {len(made)} figures are what `{command}` draws")
    return True


def cpu_route():
    """The widest SIMD route this CPU runs, as src/fast/isa.cpp decides: avx512, avx2 or scalar."""
    try:
        flags = next((set(l.split(":", 1)[1].split()) for l in open("/proc/cpuinfo") if l.startswith("flags")), set())
    except OSError:
        flags = set()
    if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "avx512"
    return "avx2" if {"avx2", "fma"} <= flags else "scalar"


def other_cpus():
    """[{OPENBLAS_CORETYPE, TS_ISA}]: two picks another CPU could make, both runnable here."""
    route = cpu_route()
    if route == "scalar":
        return []
    wide = "SkylakeX" if route == "avx512" else "Zen"  # an AVX-512 kernel needs an AVX-512 CPU
    return [{"OPENBLAS_CORETYPE": wide, "TS_ISA": "scalar"}, {"OPENBLAS_CORETYPE": "Haswell", "TS_ISA": "avx2"}]


def states_cpu(command):
    """Whether the command fixes OpenBLAS's kernel or the SIMD route itself."""
    return any(w.startswith(("OPENBLAS_CORETYPE=", "TS_ISA=")) for w in shlex.split(command) if "=" in w)


def check(build, name, command, sample, cpu=None):
    argv, env = run_stated(build, command)  # under the conditions stated right above the sample
    if cpu:
        env.update(cpu)  # --cpus: the command states neither, so another CPU's picks stand in
        name = f"{name} ({' '.join(f'{k}={v}' for k, v in cpu.items())})"
    if "--no-color" not in argv:
        argv.append("--no-color")
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        print(f"NOT OK  {name}: `{command}` exited {run.returncode}: {run.stderr.strip()[:200]}")
        return False
    output = [norm(l) for l in run.stdout.splitlines()]
    pos, checked, blas_lines = 0, 0, 0
    after_blas_prompt = False
    for line in sample:
        if line.strip() in ELISION or not line.strip():
            continue
        want = norm(line)
        # a figure that depends on OpenBLAS's build: its digits only under the samples' OpenBLAS
        masked = not SAME_BLAS and (BLAS_FIGURES.search(line) or after_blas_prompt)
        after_blas_prompt = bool(BLAS_FIGURES.search(line)) and line.startswith(">>>")
        if masked:
            blas_lines += 1
            want = BLAS_NUMBER.sub("#", want)
            hit = next((j for j in range(pos, len(output)) if matches(want, BLAS_NUMBER.sub("#", output[j]))), None)
        else:
            hit = next((j for j in range(pos, len(output)) if matches(want, output[j])), None)
        if hit is not None:
            pos = hit + 1
            checked += 1
        else:
            where = "in this order" if any(matches(want, o) for o in output) else "anywhere"
            print(f"NOT OK  {name}: sample line not in the output of `{command}` ({where}):\n        {line}")
            return False
    if checked == 0:
        print(f"NOT OK  {name}: the sample is empty")
        return False
    note = (f" ({blas_lines} with digits from OpenBLAS {SAMPLES_OPENBLAS}, compared without them "
            f"under OpenBLAS {openblas_version()})") if blas_lines else ""
    print(f"OK      {name}: {checked} sample lines found, in order, in `{command}`{note}")
    return True


def check_cpus(build, page):
    """--cpus: the page's samples that state no CPU pick, under other_cpus()' picks."""
    found = [(c, s) for c, s in samples_of(page) if not states_cpu(c)]
    return all(check(build, os.path.basename(page), c, s, cpu) for c, s in found for cpu in other_cpus())


def main():
    cpus = sys.argv[1:2] == ["--cpus"]
    if cpus:
        del sys.argv[1]
    build, *pages = args_or_usage(__doc__, 2)
    if cpus and not other_cpus():
        print("skipped: this CPU has no AVX2, so no other CPU's picks can run here")
        return 77
    if cpus and not any(not states_cpu(c) for p in pages for c, _ in samples_of(p)):
        print("skipped: every sample states OPENBLAS_CORETYPE or TS_ISA, so no sample claims to hold on every CPU")
        return 77
    results = [check_cpus(build, p) if cpus else check_page(build, p) for p in pages]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
