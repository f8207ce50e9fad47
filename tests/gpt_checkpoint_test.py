#!/usr/bin/env python3
"""ch12's --save / --load / --prompt: a checkpoint completes a held-out number it never trained on
and gives the same held-out score after the round trip; --load resumes Adam's step; a truncated,
incomplete or foreign checkpoint, a size knob that contradicts it, or a symlink target is refused
with one line on stderr and exit 2.

usage: gpt_checkpoint_test.py BUILD/ch12_gpt [BUILD/ch11_training]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "twins"))
from checkpoint_steps import Checkpoints, check, main_of, refused, run  # noqa: E402
from number_words import number_words  # noqa: E402


def words(n):
    """the task's own spelling (tests/twins/number_words.py): 2048 -> two thousand forty eight"""
    return " ".join(number_words(n))


def completions(text):
    """{number: words} of the '<n> = <words>' lines of --plain"""
    out = {}
    for line in text.splitlines():
        head, sep, tail = line.partition(" = ")
        if sep and head.isdigit():
            out[int(head)] = tail
    return out


def checks(binary, tmp):
    c = Checkpoints(binary, tmp, plain=["--plain"])
    first = c.save(300)
    held = [n for n, w in completions(first.stdout).items() if w == words(n)]
    check("the run completes some held-out numbers right", len(held) > 0, first.stdout[-500:])
    n = held[0] if held else 0
    again = run(binary, ["--plain", "--load", c.d, "--prompt", str(n)])
    score = [l for l in first.stdout.splitlines() if l.startswith("held-out exact match")]
    check("--load gives the same held-out exact match",
          again.returncode == 0 and score and score[0] in again.stdout, again.stderr)
    check("--load --prompt %d completes the held-out number it never trained on" % n,
          ("%d = %s" % (n, words(n))) in again.stdout.splitlines(), again.stdout[-300:])
    c.resume(5)
    c.truncated()
    c.checksummed()
    c.missing()
    refused(binary, "--load with a size knob that contradicts the checkpoint", ["--load", c.d, "--layers", "3"])
    refused(binary, "--load with --untied of a tied checkpoint", ["--load", c.d, "--untied"])
    c.mixed()
    if len(sys.argv) > 2:  # a ch11 checkpoint is another model
        c11 = os.path.join(tmp, "ch11")
        p = run(sys.argv[2], ["--plain", "--steps", "1", "--save", c11])
        check("ch11 --save", p.returncode == 0, p.stderr)
        refused(binary, "--load of a ch11 checkpoint", ["--load", c11])
    c.symlinked()


if __name__ == "__main__":
    sys.exit(main_of("ts_gpt_ckpt_", lambda tmp: checks(sys.argv[1], tmp)))
