#!/usr/bin/env python3
"""Run a chapter binary and its PyTorch twin with the same flags; their outputs must be equal.

usage: twin_compare.py BINARY TWIN.py [chapter flags...]
Compares --plain (what the article prints) and --transcript (every tensor both print),
live on this machine with the same environment (OPENBLAS_* included) on both sides.
Prints each block side by side with OK / NOT OK, then one verdict line; exit 0 if equal.
"""
import os
import subprocess
import sys

from script_args import args_or_usage

PYTHON = os.environ.get("TS_PYTHON", "/usr/bin/python3")


def cpu_route():
    """The widest SIMD set this CPU runs, as src/fast/isa.cpp says it: avx512, avx2 or scalar."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "scalar"


def openblas_pick():
    """The core OpenBLAS picks by itself on this CPU ("" if it cannot be asked)."""
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return ""


def blas_env():
    """The environment both sides run in, with OPENBLAS_CORETYPE resolved by the chapters'
    own rule (src/exact/matmul.cpp, choose_blas_core): an explicit value wins; otherwise an
    AVX-512 CPU runs OpenBLAS's SkylakeX kernel, and an AVX2 CPU whose pick has no AVX2
    kernels (an unknown CPU gets Prescott) runs Haswell. Set explicitly on BOTH sides, so
    the chapter and PyTorch load the very same sgemm kernel."""
    env = os.environ.copy()
    if not env.get("OPENBLAS_CORETYPE"):
        route, picked = cpu_route(), openblas_pick()
        if route == "avx512" and picked not in ("SkylakeX", "Cooperlake", "SapphireRapids"):
            env["OPENBLAS_CORETYPE"] = "SkylakeX"
        elif route == "avx2" and picked and picked not in (
                "SkylakeX", "Cooperlake", "SapphireRapids", "Haswell", "Zen", "Excavator"):
            env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


ENV = blas_env()


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        sys.stdout.write(f"NOT OK: {' '.join(cmd)} exited {p.returncode}\n{p.stderr}")
        sys.exit(1)
    return p.stdout


def blocks(text):
    """Split a transcript into (expr, value) blocks; a plain output is one block."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith(">>> "):
            cur = [line[4:], []]
            out.append(cur)
        elif cur is not None:
            cur[1].append(line)
        else:
            cur = ["(plain)", [line]]
            out.append(cur)
    return [(e, "\n".join(v)) for e, v in out]


def build_torch(binary):
    """The PyTorch the binary reproduces: $TS_TORCH when set (it overrides the build's choice),
    else TS_TORCH in the CMakeCache.txt of the build tree that holds it (None when the binary
    is not in one)."""
    if os.environ.get("TS_TORCH"):
        return os.environ["TS_TORCH"]
    d = os.path.dirname(os.path.abspath(binary))
    for _ in range(3):
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache, encoding="utf-8") as f:
                for line in f:
                    if line.startswith("TS_TORCH:"):
                        return line.split("=", 1)[1].strip()
            return None
        d = os.path.dirname(d)
    return None


def twin_torch():
    """The version of the PyTorch the twins run, e.g. '2.6.0'."""
    # the installed package's metadata (importing torch for its __version__ costs seconds per case)
    p = subprocess.run([PYTHON, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                       capture_output=True, text=True, env=ENV)
    if p.returncode != 0 or not p.stdout.strip():
        p = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True, env=ENV)
    return p.stdout.strip() if p.returncode == 0 else None


def same_torch(built, installed):
    """A build for 1.13 reproduces PyTorch 1.13.x, one for 2.6 PyTorch 2.6.x."""
    return installed.split("+")[0].startswith(built + ".")


def compare(mode, ours, theirs):
    ok = ours == theirs
    if ok:
        n = len(blocks(ours))
        print(f"OK      {mode}: {n} block(s), {len(ours)} bytes identical")
        return True
    a, b = blocks(ours), blocks(theirs)
    for i in range(max(len(a), len(b))):
        ea, va = a[i] if i < len(a) else ("(missing)", "")
        eb, vb = b[i] if i < len(b) else ("(missing)", "")
        if (ea, va) == (eb, vb):
            print(f"OK      {mode} >>> {ea}")
            continue
        print(f"NOT OK  {mode} >>> {ea}   vs twin >>> {eb}")
        la, lb = va.splitlines(), vb.splitlines()
        for j in range(max(len(la), len(lb))):
            x = la[j] if j < len(la) else ""
            y = lb[j] if j < len(lb) else ""
            if x != y:
                print(f"    chapter: {x}\n    twin:    {y}")
    return False


def main():
    binary, twin, *flags = args_or_usage(__doc__, 2)
    # flags after "--ours" go to the chapter only (e.g. --lang zh: the twin has no languages,
    # and --plain / --transcript must not change with the chapter's)
    ours_only = []
    if "--ours" in flags:
        at = flags.index("--ours")
        flags, ours_only = flags[:at], flags[at + 1:]
    # A build reproduces one PyTorch's arithmetic (TS_TORCH): against another, every tensor
    # would differ in its last digits. Say so once instead of diffing.
    # OPENBLAS_CORETYPE naming an AVX-512 kernel (ctest twin_*_skylakex: PyTorch's products on the
    # kernel an Intel AVX-512 CPU runs) is skipped where the CPU cannot run it
    core = ENV.get("OPENBLAS_CORETYPE", "")
    if core.lower() in ("skylakex", "cooperlake", "sapphirerapids") and cpu_route() != "avx512":
        print(f"skipped: OPENBLAS_CORETYPE={core} needs AVX-512, which this CPU does not run")
        return 77
    built, installed = build_torch(binary), twin_torch()
    if built and installed and not same_torch(built, installed):
        print(f"NOT OK: {os.path.basename(binary)} reproduces PyTorch {built}, the twins run PyTorch {installed} "
              f"({PYTHON}): configure the build for it (cmake -DTS_TORCH=<1.13|2.6>; a fresh configure "
              f"picks the installed one) or run with TS_TORCH=<1.13|2.6>")
        return 1
    results = []
    # the twin runs once for both modes (twinlib's --both: one PyTorch start per case)
    both = run([PYTHON, twin, "--both"] + flags)
    sep = "\x1e twin --transcript follows \x1e\n"  # twinlib.BOTH_SEPARATOR and its newline
    if both.count(sep) != 1:
        print(f"NOT OK: {os.path.basename(twin)} --both printed {both.count(sep)} separators, not 1 "
              f"(tests/twins/twinlib.py Twin.show, _write_both)")
        return 1
    twin_out = dict(zip(("--plain", "--transcript"), both.split(sep)))
    for mode in ("--plain", "--transcript"):
        ours = run([binary, mode, "--no-color"] + flags + ours_only)
        theirs = twin_out[mode]
        if not ours.strip():
            # An empty --plain is right only when the articles print nothing in the chapter's
            # sections (ch06): the twin must agree, and the transcript below must not be empty.
            if mode == "--plain" and not theirs.strip():
                print(f"OK      {mode}: the articles print nothing here; chapter and twin both empty")
                results.append(True)
                continue
            print(f"NOT OK  {mode}: the chapter printed nothing")
            results.append(False)
            continue
        results.append(compare(mode, ours, theirs))
    verdict = all(results)
    name = os.path.basename(binary)
    print(f"{'OK' if verdict else 'NOT OK'}: {name} {' '.join(flags)} equals its PyTorch twin" if verdict
          else f"NOT OK: {name} {' '.join(flags)} differs from its PyTorch twin")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
