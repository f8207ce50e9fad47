#!/usr/bin/env python3
"""ch13's --save / --load: a round trip gives the same held-out accuracy and --classify answer; a truncated, mismatched or
inconsistent checkpoint, or a symlink target, is refused with one line on stderr and exit 2,
and leaves nothing half-written.

usage: classifier_checkpoint_test.py BUILD/ch13_classifier
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_steps import Checkpoints, check, main_of, refused, run  # noqa: E402


def answer_lines(text):
    """The lines a reloaded model must print again: the held-out score and --classify's class."""
    return [l for l in text.splitlines() if l.startswith("held-out accuracy") or l.startswith("class: ")]


def checks(binary, tmp):
    c = Checkpoints(binary, tmp)
    first = c.save(200, ["--classify", "forty eight"])
    again = run(binary, ["--load", c.d, "--classify", "forty eight"])
    check("--load gives the same held-out accuracy and class",
          again.returncode == 0 and len(answer_lines(first.stdout)) == 2
          and answer_lines(again.stdout) == answer_lines(first.stdout),
          f"{answer_lines(first.stdout)} vs {answer_lines(again.stdout)}")
    c.faults(10)
    refused(binary, "--load into fewer heads (missing keys)", ["--load", c.d, "--heads", "2"])


if __name__ == "__main__":
    sys.exit(main_of("ts_ckpt_", lambda tmp: checks(sys.argv[1], tmp)))
