#!/usr/bin/env python3
"""Every chapter fits the terminal (ctest width_<chapter>).

usage: width_check.py CHAPTER_BINARY [WIDTH...]   (default widths: 60 80 120)
Runs the chapter in the default (explained) mode with TS_COLUMNS=W (the width the chapters
lay their output out for, terminal or not), in English and in Chinese, and fails on any line
wider than W terminal columns (display width: a CJK character takes 2, colour sequences
none), which a terminal would break. Prints OK / NOT OK per run and the first wide lines.
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


def main():
    binary, *given = args_or_usage(__doc__, 1)
    widths = [int(w) for w in given] or [60, 80, 120]
    name = os.path.basename(binary)
    failed = 0
    for lang in ("en", "zh"):
        for width in widths:
            env = dict(os.environ, TS_COLUMNS=str(width), NO_COLOR="1")
            run = subprocess.run([binary, "--lang", lang] + quick_flags(binary), capture_output=True, text=True, env=env, timeout=900)
            wide = [(i + 1, l) for i, l in enumerate(run.stdout.splitlines()) if columns(l) > width]
            if run.returncode != 0 or wide:
                failed += 1
                why = f"exit {run.returncode}: {run.stderr.strip()[:200]}" if run.returncode else f"{len(wide)} lines wider"
                print(f"NOT OK  {name} --lang {lang} at {width} columns: {why}")
                for no, line in wide[:5]:
                    print(f"        line {no} ({columns(line)} columns): {line}")
            else:
                print(f"OK      {name} --lang {lang} at {width} columns: {len(run.stdout.splitlines())} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
