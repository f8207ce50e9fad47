#!/usr/bin/env python3
"""Every docs page's sample output must be what the chapter prints now.

usage: docs_check.py BUILD_DIR PAGE...
In each page, the code block after a heading "## Sample output (`./build/chNN_x FLAGS`...)"
(or its Chinese twin "## 输出示例 (`./build/chNN_x --lang zh ...`...)") or
after a line "<!-- sample: ./build/chNN_x FLAGS -->" (the README) is compared with a real run
of that command (from BUILD_DIR). A sample is abridged: its lines
must appear in the run's output in the same order, a line that is only "..." (or "…")
stands for lines left out, and a line ending in "...", "…" or "(...)" was cut short (its
start must match). Runs use the OpenBLAS kernel the committed transcripts pin
(OPENBLAS_CORETYPE=Haswell, present on every x86-64 CPU of this kind), so a page's numbers do
not depend on the machine. Wall-clock timings are the one thing allowed to differ: on a line
that reports a time or a speed ("ms", "GFLOP/s", "x the ... speed") numbers are masked.
Prints OK / NOT OK per page and the first missing line; exit 0 if every page holds.
"""
import os
import re
import shlex
import subprocess
import sys

HEADING = re.compile(r"^## (?:Sample output|输出示例) \(`(\./build/[^`]+)`")
MARKER = re.compile(r"^<!-- sample: (\./build/\S.*?) -->$")  # README: a marked block per chapter
TIMING = re.compile(r"\bms\b|ms/forward|GFLOP/s|speed|faster|slower")
NUMBER = re.compile(r"\d+(\.\d+)?")
ELISION = {"...", "…"}


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
    return all([check(build, os.path.basename(page), command, sample) for command, sample in found])


def check(build, name, command, sample):
    argv = shlex.split(command)
    argv[0] = os.path.join(build, os.path.basename(argv[0]))
    if "--no-color" not in argv:
        argv.append("--no-color")
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell", NO_COLOR="1")
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        print(f"NOT OK  {name}: `{command}` exited {run.returncode}: {run.stderr.strip()[:200]}")
        return False
    output = [norm(l) for l in run.stdout.splitlines()]
    pos, checked = 0, 0
    for line in sample:
        if line.strip() in ELISION or not line.strip():
            continue
        want = norm(line)
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
    print(f"OK      {name}: {checked} sample lines found, in order, in `{command}`")
    return True


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build, pages = sys.argv[1], sys.argv[2:]
    results = [check_page(build, p) for p in pages]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
