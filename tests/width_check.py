#!/usr/bin/env python3
"""Every chapter fits the terminal (ctest width_<chapter>).

usage: width_check.py CHAPTER_BINARY [--langs en,zh] [WIDTH...]
        (default: English at 20 40 60 80 120 columns, Chinese at 60 80 120)
Runs the chapter in the default (explained) mode with TS_COLUMNS=W (the width the chapters
lay their output out for, terminal or not), and fails on any line wider than W terminal
columns (display width: a CJK character takes 2, colour sequences none), which a terminal
would break, and on any run of more than 2 blank lines (a 4-D tensor's blocks are 2 apart;
more is a layout that lost its text). Prints OK / NOT OK per run and the first bad lines.
Every width from 20 to 120: width_check.py CHAPTER --langs en $(seq 20 120)
A chapter whose default run is long runs with the flags of tests/cases/<chapter>.quick (cli_test.py).
"""
import os
import re
import subprocess
import sys
import unicodedata
from script_args import args_or_usage

from cli_test import quick_flags

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def columns(line):
    n = 0
    for ch in ANSI.sub("", line):
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def blank_runs(lines):
    """[(line number, length)] of each run of more than 2 blank lines."""
    runs, start = [], None
    for i, line in enumerate(lines + ["end"]):
        if not line.strip():
            start = i if start is None else start
            continue
        if start is not None and i - start > 2:
            runs.append((start + 1, i - start))
        start = None
    return runs


def main():
    binary, *given = args_or_usage(__doc__, 1)
    langs = None
    if "--langs" in given:
        at = given.index("--langs")
        langs = given[at + 1].split(",")
        del given[at:at + 2]
    default = {"en": (20, 40, 60, 80, 120), "zh": (60, 80, 120)}
    plan = [(lang, int(w)) for lang in (langs or ("en", "zh")) for w in (given or default[lang])]
    name = os.path.basename(binary)
    failed = 0
    for lang, width in plan:
        env = dict(os.environ, TS_COLUMNS=str(width), NO_COLOR="1")
        run = subprocess.run([binary, "--lang", lang] + quick_flags(binary), capture_output=True, text=True, env=env, timeout=900)
        lines = run.stdout.splitlines()
        wide = [(i + 1, l) for i, l in enumerate(lines) if columns(l) > width]
        blanks = blank_runs(lines)
        if run.returncode != 0 or wide or blanks:
            failed += 1
            why = f"exit {run.returncode}: {run.stderr.strip()[:200]}" if run.returncode else \
                f"{len(wide)} lines wider, {len(blanks)} runs of blank lines"
            print(f"NOT OK  {name} --lang {lang} at {width} columns: {why}")
            for no, line in wide[:5]:
                print(f"        line {no} ({columns(line)} columns): {line}")
            for no, n in blanks[:3]:
                print(f"        line {no}: {n} blank lines, then: {lines[no - 1 + n] if no - 1 + n < len(lines) else ''}")
        else:
            print(f"OK      {name} --lang {lang} at {width} columns: {len(run.stdout.splitlines())} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
