"""What the PyTorch sides of ch11, ch12 and ch13's backward checks share
(tests/twins/train_reference.py, gpt_reference.py, classifier_reference.py).

Each runs its dump tool (tests/tools/*_dump.cpp) into a temporary folder, reads the safetensors it
wrote and checks them against torch autograd, printing llm.c-style lines: first values side by side,
then OK / NOT OK with the max difference. Every check lands in `results`.
"""
import json
import shutil
import subprocess
import sys
import tempfile
import os

import numpy as np
import torch

DTYPES = {"F32": np.float32, "I64": np.int64}
results = []


def load_safetensors(path):
    """{name: tensor}, metadata: the format is 8 bytes of header length, a JSON header, raw bytes."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        arr = np.frombuffer(data[8 + n + a:8 + n + b], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out, meta


def report(name, ours, ref, rel, floor=0.0):
    """llm.c's check_tensor: first values side by side, then OK / NOT OK and the max difference.
    The bound is rel * max(max |ref|, floor)."""
    ours, ref = ours.detach().double().flatten(), ref.detach().double().flatten()
    maxdiff = float((ours - ref).abs().max()) if ours.numel() else 0.0
    scale = max(float(ref.abs().max()) if ref.numel() else 0.0, floor)
    ok = ours.shape == ref.shape and maxdiff <= rel * max(scale, 1e-12)
    firsts = "  ".join("%+.5e/%+.5e" % (float(a), float(b)) for a, b in zip(ours[:3], ref[:3]))
    print("%-6s %-46s %s  maxdiff %.3e (max |ref| %.3e)" % ("OK" if ok else "NOT OK", name, firsts, maxdiff, scale))
    results.append(ok)
    return ok


def leaf(t):
    return t.clone().requires_grad_(True)


def check_op(ops, p, name, fn):
    """An op the dump tool ran (P.x, P.dout, P.out, P.dx, as classifier_dump writes them): fn on
    ops[P.x], backward from ops[P.dout]; reports NAME out against P.out and NAME dx against P.dx,
    <= 1e-5 x max. Gives x."""
    x = leaf(ops[p + "x"])
    out = fn(x)
    out.backward(ops[p + "dout"])
    report(name + " out", ops[p + "out"], out, 1e-5)
    report(name + " dx", ops[p + "dx"], x.grad, 1e-5)
    return x


def verdict(ok, text):
    """One OK / NOT OK line for a check that is not a tensor comparison."""
    print("%-6s %s" % ("OK" if ok else "NOT OK", text))
    results.append(ok)


def check_grads(grads0, named):
    """Every parameter's step-0 gradient, C++ (grads0) against autograd (named: model.named_parameters()).
    A bias can have a true gradient of exactly 0 (the key projection's: softmax ignores a constant
    added to a whole row of scores), where both sides show only rounding noise (~1e-10), so no
    tensor's scale is taken below 1e-4 x the largest gradient of the model."""
    floor = 1e-4 * max(float(p.grad.abs().max()) for p in named.values())
    for name in grads0:
        report(name, grads0[name], named[name].grad, 1e-4, floor)
    if set(grads0) != set(named):
        print("NOT OK  parameter names differ:", sorted(set(grads0) ^ set(named)))
        results.append(False)


def check_losses(ours, ref):
    """The losses of the first Adam steps, C++ (ours) against torch (ref), within 1e-4."""
    steps = len(ref)
    print("--- the losses of the first %d Adam steps (dropout off), within 1e-4" % steps)
    worst = max(abs(a - b) for a, b in zip(ours, ref))
    for s in (0, 1, 2, steps - 1):
        print("step %2d  ours %.6f  torch %.6f" % (s, ours[s], ref[s]))
    verdict(worst <= 1e-4, "losses of %d steps: maxdiff %.3e" % (steps, worst))


def equal_words(rows, what):
    """rows of (number, C++ words, twin words): each difference on its own line, then one verdict."""
    same = 0
    for number, theirs, mine in rows:
        same += mine == theirs
        if mine != theirs:
            print("NOT OK  %s: C++ '%s', twin '%s'" % (number, theirs, mine))
    verdict(same == len(rows) and len(rows) > 0, "%d/%d %s equal" % (same, len(rows), what))


def main_of(doc, prefix, check_ops, check_model):
    """argv: TOOL [--quick]. Run TOOL into a temporary folder, check_ops on its ops.safetensors,
    check_model on the folder, then one summary line; the exit code is 1 if any check failed."""
    if len(sys.argv) < 2:
        print(doc)
        return 2
    tool, quick = sys.argv[1], "--quick" in sys.argv[2:]
    d = tempfile.mkdtemp(prefix=prefix)
    try:
        p = subprocess.run([tool, d] + (["--quick"] if quick else []), capture_output=True, text=True)
        if p.returncode != 0:
            print("NOT OK: %s exited %d\n%s" % (tool, p.returncode, p.stderr))
            return 1
        check_ops(load_safetensors(os.path.join(d, "ops.safetensors"))[0])
        check_model(d, quick)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    bad = results.count(False)
    print("%s: %d checks, %d failed" % ("OK" if bad == 0 else "NOT OK", len(results), bad))
    return 0 if bad == 0 else 1
