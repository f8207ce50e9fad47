"""ONNX Runtime, make bench's second peer: export the encoder, time it (Python's onnxruntime where the torch
interpreter has it, bench/bench_ort.py; else the pinned onnxruntime-node, installed here).

Used by bench/report.py. Everything lands in BUILD_DIR/bench/ort:
  node_modules/      `npm ci --ignore-scripts` of bench/ort/package.json + package-lock.json (the
                     pinned onnxruntime-node; its CPU library for Linux x64 is inside the package,
                     the skipped install script only fetches GPU libraries). Reinstalled only when
                     the pinned files change.
  encoder.onnx, check*  bench/export_onnx.py under the torch interpreter (re-exported only when
                     its sources change)
  npm.log            npm's output of the last install
Every step that cannot run here (no npm or node, no network for the first install, a platform the
package has no CPU library for) yields a one-line reason instead of rows: the column stays empty and
make bench still runs.
"""
import filecmp
import json
import os
import platform
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PINNED = os.path.join(HERE, "ort")  # package.json + package-lock.json
PINNED_FILES = ("package.json", "package-lock.json")
TOLERANCE = 1e-4  # max |ONNX Runtime - PyTorch| on the encoder output (values up to ~6) to count as the same function


def pinned_version():
    with open(os.path.join(PINNED, "package.json")) as f:
        return json.load(f)["dependencies"]["onnxruntime-node"]


def installed_version(ort_dir):
    try:
        with open(os.path.join(ort_dir, "node_modules", "onnxruntime-node", "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def install(ort_dir):
    """the pinned onnxruntime-node in ort_dir/node_modules -> None, or why it is not there"""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"onnxruntime-node's CPU library is used for Linux x86-64 only (this is {platform.system()} {platform.machine()})"
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        return "npm/node not found (Debian package npm; make deps installs it)"
    os.makedirs(ort_dir, exist_ok=True)
    same_pin = all(os.path.exists(os.path.join(ort_dir, n)) and
                   filecmp.cmp(os.path.join(PINNED, n), os.path.join(ort_dir, n), shallow=False) for n in PINNED_FILES)
    if not (same_pin and installed_version(ort_dir) == pinned_version()):
        for n in PINNED_FILES:
            shutil.copyfile(os.path.join(PINNED, n), os.path.join(ort_dir, n))
        log = os.path.join(ort_dir, "npm.log")
        print(f"bench: installing onnxruntime-node {pinned_version()} into {ort_dir} (npm ci --ignore-scripts; "
              f"~300 MB)", file=sys.stderr, flush=True)
        with open(log, "w") as f:
            p = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                               cwd=ort_dir, stdout=f, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return f"npm ci of onnxruntime-node {pinned_version()} failed (exit {p.returncode}; see {log})"
    binding = os.path.join(ort_dir, "node_modules", "onnxruntime-node", "bin", "napi-v6", "linux", "x64",
                           "onnxruntime_binding.node")
    if not os.path.exists(binding):
        return f"onnxruntime-node {installed_version(ort_dir)} has no Linux x64 CPU library ({binding} missing)"
    return None


def export(ort_dir, python):
    """encoder.onnx and the check data in ort_dir -> None, or why not"""
    cmd = [python, os.path.join(HERE, "export_onnx.py"), ort_dir]
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd)
    return None if p.returncode == 0 else f"bench/export_onnx.py failed (exit {p.returncode})"


def python_ort(python):
    """the onnxruntime version the torch interpreter imports, or None"""
    p = subprocess.run([python, "-c", "import onnxruntime; print(onnxruntime.__version__)"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def measure(build, python, reps, filt, threads=(1, 2)):
    """(timing rows, check row, None) or ([], None, reason): the encoder rows at each intra-op thread count.
    Python's onnxruntime (bench_ort.py) where the torch interpreter has one, else the pinned onnxruntime-node."""
    ort_dir = os.path.abspath(os.path.join(build, "bench", "ort"))
    out = os.path.join(ort_dir, "timings.json")
    common = ["--model", os.path.join(ort_dir, "encoder.onnx"), "--threads", ",".join(map(str, threads)),
              "--reps", str(reps), "--filter", filt, "--check", ort_dir, "--out", out]
    if python_ort(python):
        os.makedirs(ort_dir, exist_ok=True)
        reason = export(ort_dir, python)
        cmd = [python, os.path.join(HERE, "bench_ort.py")] + common
    else:
        reason = install(ort_dir) or export(ort_dir, python)
        cmd = ["node", os.path.join(HERE, "bench_ort.js"), "--ort", ort_dir] + common
    if reason:
        return [], None, reason
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    sys.stderr.write(p.stdout)
    if p.returncode != 0:
        return [], None, f"{os.path.relpath(cmd[1], os.path.dirname(HERE))} failed (exit {p.returncode})"
    check = next((json.loads(line) for line in p.stdout.splitlines() if '"check"' in line), None)
    if check is None:
        return [], None, f"{os.path.relpath(cmd[1], os.path.dirname(HERE))} printed no check of its output"
    if not check["max_abs_diff"] <= TOLERANCE:
        return [], check, (f"its output differs from PyTorch's by up to {check['max_abs_diff']:.3g} (> {TOLERANCE:g}): "
                           f"not the same function, not compared")
    with open(out) as f:
        return json.load(f), check, None
