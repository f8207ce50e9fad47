#!/usr/bin/env python3
"""ch12's --save / --load / --prompt: a checkpoint completes a held-out number it never trained on
and gives the same held-out score after the round trip; --load resumes Adam's step; a truncated,
incomplete or foreign checkpoint, a size knob that contradicts it, or a symlink target is refused
with one line on stderr and exit 2.

usage: gpt_checkpoint_test.py BUILD/ch12_gpt [BUILD/ch11_training]
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_checkpoint_test import check, refused, results, run, step_of  # noqa: E402

ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen").split()
TENS = "- - twenty thirty forty fifty sixty seventy eighty ninety".split()


def words(n):
    """the task's own spelling, written again here: 2048 -> two thousand forty eight"""
    if n == 0:
        return "zero"
    w = []
    if n >= 1000:
        w += [ONES[n // 1000], "thousand"]
    if n // 100 % 10:
        w += [ONES[n // 100 % 10], "hundred"]
    r = n % 100
    if r >= 20:
        w += [TENS[r // 10]] + ([ONES[r % 10]] if r % 10 else [])
    elif r:
        w.append(ONES[r])
    return " ".join(w)


def completions(text):
    """{number: words} of the '<n> = <words>' lines of --plain"""
    out = {}
    for line in text.splitlines():
        head, sep, tail = line.partition(" = ")
        if sep and head.isdigit():
            out[int(head)] = tail
    return out


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ts_gpt_ckpt_")
    try:
        d = os.path.join(tmp, "ckpt")
        first = run(binary, ["--plain", "--steps", "300", "--save", d])
        check("--save after 300 steps", first.returncode == 0, first.stderr)
        check("the folder holds exactly the two files",
              sorted(os.listdir(d)) == ["model.safetensors", "optimizer.safetensors"], str(os.listdir(d)))
        held = [n for n, w in completions(first.stdout).items() if w == words(n)]
        check("the run completes some held-out numbers right", len(held) > 0, first.stdout[-500:])
        n = held[0] if held else 0
        again = run(binary, ["--plain", "--load", d, "--prompt", str(n)])
        score = [l for l in first.stdout.splitlines() if l.startswith("held-out exact match")]
        check("--load gives the same held-out exact match",
              again.returncode == 0 and score and score[0] in again.stdout, again.stderr)
        check("--load --prompt %d completes the held-out number it never trained on" % n,
              ("%d = %s" % (n, words(n))) in again.stdout.splitlines(), again.stdout[-300:])
        d2 = os.path.join(tmp, "resumed")
        r = run(binary, ["--plain", "--load", d, "--steps", "5", "--save", d2])
        check("--load + --steps 5 resumes at step 300 and saves step 305",
              r.returncode == 0 and step_of(os.path.join(d2, "model.safetensors")) == "305", r.stderr)
        t = os.path.join(tmp, "truncated")
        shutil.copytree(d, t)
        mp = os.path.join(t, "model.safetensors")
        with open(mp, "r+b") as f:
            f.truncate(os.path.getsize(mp) - 100)
        refused(binary, "--load of a truncated checkpoint", ["--load", t])
        m = os.path.join(tmp, "missing")
        shutil.copytree(d, m)
        os.remove(os.path.join(m, "optimizer.safetensors"))
        refused(binary, "--load without optimizer.safetensors", ["--load", m])
        refused(binary, "--load with a size knob that contradicts the checkpoint", ["--load", d, "--layers", "3"])
        refused(binary, "--load with --untied of a tied checkpoint", ["--load", d, "--untied"])
        mix = os.path.join(tmp, "mixed")
        shutil.copytree(d, mix)
        shutil.copy(os.path.join(d2, "optimizer.safetensors"), os.path.join(mix, "optimizer.safetensors"))
        refused(binary, "--load of a model and an optimizer from two saves", ["--load", mix])
        if len(sys.argv) > 2:  # a ch11 checkpoint is another model
            c11 = os.path.join(tmp, "ch11")
            p = run(sys.argv[2], ["--plain", "--steps", "1", "--save", c11])
            check("ch11 --save", p.returncode == 0, p.stderr)
            refused(binary, "--load of a ch11 checkpoint", ["--load", c11])
        s = os.path.join(tmp, "symlinked")
        os.makedirs(s)
        target = os.path.join(tmp, "elsewhere.bin")
        open(target, "wb").write(b"keep me")
        os.symlink(target, os.path.join(s, "model.safetensors"))
        refused(binary, "--save over a symlink", ["--steps", "1", "--save", s])
        check("the symlink and its target are untouched",
              os.path.islink(os.path.join(s, "model.safetensors")) and open(target, "rb").read() == b"keep me",
              str(os.listdir(s)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = results.count(False)
    print(f"{len(results) - bad} passed, {bad} failed")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
