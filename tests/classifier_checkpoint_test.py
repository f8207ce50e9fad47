#!/usr/bin/env python3
"""ch13's --save / --load: a round trip gives the same held-out accuracy and --classify answer; a truncated, mismatched or
inconsistent checkpoint, or a symlink target, is refused with one line on stderr and exit 2,
and leaves nothing half-written.

usage: classifier_checkpoint_test.py BUILD/ch13_classifier
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_checkpoint_test import check, refused, results, run, step_of  # noqa: E402  (ch11's helpers)


def answer_lines(text):
    """The lines a reloaded model must print again: the held-out score and --classify's class."""
    return [l for l in text.splitlines() if l.startswith("held-out accuracy") or l.startswith("class: ")]


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ts_ckpt_")
    try:
        d = os.path.join(tmp, "ckpt")
        first = run(binary, ["--steps", "200", "--save", d, "--classify", "forty eight"])
        check("--save after 200 steps", first.returncode == 0, first.stderr)
        check("the folder holds exactly the two files",
              sorted(os.listdir(d)) == ["model.safetensors", "optimizer.safetensors"], str(os.listdir(d)))
        again = run(binary, ["--load", d, "--classify", "forty eight"])
        check("--load gives the same held-out accuracy and class",
              again.returncode == 0 and len(answer_lines(first.stdout)) == 2 and answer_lines(again.stdout) == answer_lines(first.stdout),
              f"{answer_lines(first.stdout)} vs {answer_lines(again.stdout)}")
        # resume: 10 more steps continue from step 200
        d2 = os.path.join(tmp, "resumed")
        r = run(binary, ["--load", d, "--steps", "10", "--save", d2])
        check("--load + --steps 10 resumes at step 200 and saves step 210",
              r.returncode == 0 and step_of(os.path.join(d2, "model.safetensors")) == "210", r.stderr)
        # truncated
        t = os.path.join(tmp, "truncated")
        shutil.copytree(d, t)
        mp = os.path.join(t, "model.safetensors")
        with open(mp, "r+b") as f:
            f.truncate(os.path.getsize(mp) - 100)
        refused(binary, "--load of a truncated checkpoint", ["--load", t])
        with open(mp, "r+b") as f:
            f.truncate(6)
        refused(binary, "--load of a 6-byte model file", ["--load", t])
        # missing file
        m = os.path.join(tmp, "missing")
        shutil.copytree(d, m)
        os.remove(os.path.join(m, "optimizer.safetensors"))
        refused(binary, "--load without optimizer.safetensors", ["--load", m])
        # mismatched shapes and keys
        refused(binary, "--load into a wider model (wrong shapes)", ["--load", d, "--d-model", "32"])
        refused(binary, "--load into a deeper model (missing keys)", ["--load", d, "--layers", "3"])
        refused(binary, "--load into a shallower model (extra keys)", ["--load", d, "--layers", "1"])
        refused(binary, "--load into fewer heads (missing keys)", ["--load", d, "--heads", "2"])
        # inconsistent: the optimizer of another save
        mix = os.path.join(tmp, "mixed")
        shutil.copytree(d, mix)
        shutil.copy(os.path.join(d2, "optimizer.safetensors"), os.path.join(mix, "optimizer.safetensors"))
        refused(binary, "--load of a model and an optimizer from two saves", ["--load", mix])
        # a symlink target is refused, the link and its target stay as they were
        s = os.path.join(tmp, "symlinked")
        os.makedirs(s)
        target = os.path.join(tmp, "elsewhere.bin")
        open(target, "wb").write(b"keep me")
        os.symlink(target, os.path.join(s, "model.safetensors"))
        refused(binary, "--save over a symlink", ["--steps", "1", "--save", s])
        check("the symlink and its target are untouched, no temporary file left",
              os.path.islink(os.path.join(s, "model.safetensors")) and open(target, "rb").read() == b"keep me"
              and sorted(os.listdir(s)) == ["model.safetensors"], str(os.listdir(s)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = results.count(False)
    print(f"{len(results) - bad} passed, {bad} failed")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
