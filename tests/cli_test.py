#!/usr/bin/env python3
"""Bad input must give one clear line on stderr and exit code 2; --help must exit 0.

usage: cli_test.py BINARY [CASES.bad]
Generic cases apply to every chapter; CASES.bad adds the chapter's own (one per line, shell
words; LONGTEXT stands for a 600-word sentence, longer than BERT's 512 positions).
"""
import os
import shlex
import subprocess
import sys

GENERIC = [
    ["--bogus"],
    ["--seed", "abc"],
    ["--seed", "1.5"],
    ["--seed", "99999999999999999999999"],
    ["--seed"],
    ["--plain", "--transcript"],
    ["--dump", "/proc/forbidden/dir"],
]


def check(binary, args):
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=300)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    name = os.path.basename(binary)
    ok = p.returncode == 2 and len(lines) == 1 and "error" in lines[0] and "Sanitizer" not in p.stderr
    shown = " ".join(shlex.quote(a) if len(a) < 40 else "<long>" for a in args)
    print(f"{'OK    ' if ok else 'NOT OK'}  {name} {shown} -> exit {p.returncode}: {lines[0] if lines else '(no message)'}")
    if not ok and len(lines) > 1:
        print("        stderr had %d lines:\n        %s" % (len(lines), "\n        ".join(lines[:8])))
    return ok


def main():
    binary = sys.argv[1]
    cases = list(GENERIC)
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        for line in open(sys.argv[2], encoding="utf-8"):
            line = line.strip()
            if line and not line.startswith("#"):
                cases.append([("word " * 600).strip() if w == "LONGTEXT" else w for w in shlex.split(line)])
    results = [check(binary, c) for c in cases]
    h = subprocess.run([binary, "--help"], capture_output=True, text=True)
    help_ok = h.returncode == 0 and "--seed" in h.stdout
    print(f"{'OK    ' if help_ok else 'NOT OK'}  --help -> exit {h.returncode}")
    results.append(help_ok)
    # A full default run (explained mode, colour off) must succeed: under the ASan/UBSan
    # build this is the chapter's memory-safety check.
    r = subprocess.run([binary, "--no-color", "--seed", "1"], capture_output=True, text=True, timeout=900)
    run_ok = r.returncode == 0 and r.stdout.strip() != "" and "Sanitizer" not in r.stderr and "runtime error" not in r.stderr
    print(f"{'OK    ' if run_ok else 'NOT OK'}  full run --seed 1 -> exit {r.returncode}" + ("" if run_ok else ": " + r.stderr[-2000:]))
    results.append(run_ok)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
