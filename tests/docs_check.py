#!/usr/bin/env python3
"""Every docs page's sample output must be what the chapter prints now.

usage: docs_check.py BUILD_DIR PAGE...
In each page, the code block after a heading "## Sample output (`ENV=x ./build/chNN_x FLAGS`...)"
(or its Chinese twin "## 输出示例 (`ENV=x ./build/chNN_x --lang zh ...`...)") or
after a line "Made with `ENV=x ./build/chNN_x FLAGS`:" (the README) is compared with a real run
of that command (from BUILD_DIR), under the conditions the command states right above the
sample (e.g. OPENBLAS_CORETYPE=Haswell, the sgemm kernel the committed transcripts pin):
nothing else of the caller's environment that changes the numbers or the layout
(OPENBLAS_CORETYPE, TS_ISA, TS_COLUMNS) is passed on, so a sample reproduces as stated. A sample is abridged: its lines
must appear in the run's output in the same order, a line that is only "..." (or "…")
stands for lines left out, and a line ending in "...", "…" or "(...)" was cut short (its
start must match). Wall-clock timings are the one thing allowed to differ: on a line
that reports a time or a speed ("ms", "GFLOP/s", "x the ... speed") numbers are masked.
Prints OK / NOT OK per page and the first missing line; exit 0 if every page holds.
"""
import os
import re
import shlex
import subprocess
import sys

ENVS = r"(?:[A-Z_][A-Z0-9_]*=\S* )*"
HEADING = re.compile(r"^## (?:Sample output|输出示例) \(`(" + ENVS + r"\./build/[^`]+)`")
MARKER = re.compile(r"^Made with `(" + ENVS + r"\./build/\S[^`]*)`:$")  # README: a block per chapter
UNSTATED = ("OPENBLAS_CORETYPE", "TS_ISA", "TS_COLUMNS", "COLUMNS")
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
    env = {k: v for k, v in os.environ.items() if k not in UNSTATED}
    while "=" in argv[0] and not argv[0].startswith("."):  # the stated conditions
        key, value = argv.pop(0).split("=", 1)
        env[key] = value
    argv[0] = os.path.join(build, os.path.basename(argv[0]))
    if "--no-color" not in argv:
        argv.append("--no-color")
    env["NO_COLOR"] = "1"
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
