#!/usr/bin/env python3
"""The house view: src/'s folders are layers, and every #include points down (or sideways).

usage: layers_check.py            (from anywhere; reads ROOT/src)
Order, lowest first (docs/conventions.md, "Layers"):
    base < exact < text < transformer < fast < train < course
A file of a folder may include its own folder and any folder before it, never one after it.
Prints the arrows between folders with their counts, then OK, or NOT OK with every include
that runs up (file:line and the header); exit 1 if any does.
"""
import collections
import os
import re
import sys

LAYERS = ["base", "data", "exact", "text", "transformer", "fast", "train", "course"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"(\w+)/([^"]+)"')


def main():
    arrows, up = collections.Counter(), []
    src = os.path.join(ROOT, "src")
    for folder in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, folder)):
            continue
        if folder not in LAYERS:
            up.append("src/%s/ is in no layer: add it to LAYERS (tests/layers_check.py) and docs/conventions.md" % folder)
            continue
        for root, _, files in os.walk(os.path.join(src, folder)):
            for name in sorted(files):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) not in LAYERS:
                            continue
                        to = m.group(1)
                        if to != folder:
                            arrows[(folder, to)] += 1
                        if LAYERS.index(to) > LAYERS.index(folder):
                            up.append("%s:%d includes %s/%s, a higher layer" % (rel, n, to, m.group(2)))
    for (a, b), count in sorted(arrows.items(), key=lambda x: (LAYERS.index(x[0][0]), LAYERS.index(x[0][1]))):
        print("  %-11s -> %-11s %3d" % (a, b, count))
    if up:
        print("NOT OK: %d include(s) run up the layers %s:" % (len(up), " < ".join(LAYERS)))
        for u in up:
            print("  " + u)
        return 1
    print("OK: every include points down the layers %s" % " < ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
