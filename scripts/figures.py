#!/usr/bin/env python3
"""Make the docs pages' figures from real runs: docs/figures/<chapter>/*.svg.

usage: scripts/figures.py [BUILD_DIR]   (default: build)
For every chapter, runs `OPENBLAS_CORETYPE=Haswell ./build/<chapter> [knobs] --svg
docs/figures/<chapter>` (ch12 with TS_ISA=avx2 too: ENVS; seed 0, the explained mode, English) and writes, in its docs page
before "## Summary", a section "## Figures" that states that command right above the
pictures and shows each one. A chapter that draws no figure gets no section.
tests/docs_check.py (ctest docs_samples) runs the stated command again and fails unless it
writes the same files, byte for byte.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KNOBS = {"ch11_training": "--steps 400"}  # 400 steps: the README's sample, in about 30 s
# ch14: its figures are the masks, drawn before any training; a few steps keep the run short
KNOBS["ch14_three_kinds"] = "--max-steps 10 --check-every 10"
ENV = "OPENBLAS_CORETYPE=Haswell"
# ch12's loss curve also depends on the SIMD route (its GELU backward): the route is stated too
ENVS = {"ch12_gpt": ENV + " TS_ISA=avx2"}
SECTION = re.compile(r"^## Figures\n.*?(?=^## )", re.S | re.M)


def title_of(svg_path):
    text = open(svg_path, encoding="utf-8").read()
    lines = re.findall(r'font-weight="bold">([^<]*)</text>', text)
    return " ".join(lines).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    for page in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        m = re.match(r"(ch\d\d_\w+)\.md$", page)
        if not m:
            continue
        chapter = m.group(1)
        out = os.path.join("docs", "figures", chapter)
        stated = ENVS.get(chapter, ENV)
        command = f"{stated} ./build/{chapter} {KNOBS.get(chapter, '')} --svg {out}".replace("  ", " ")
        env = {k: v for k, v in os.environ.items() if k not in ("TS_COLUMNS", "COLUMNS", "TS_ISA")}
        env.update(dict(kv.split("=", 1) for kv in stated.split()), NO_COLOR="1")
        argv = [os.path.join(build, chapter)] + KNOBS.get(chapter, "").split() + ["--svg", out]  # relative: the manifest names no machine
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        figures = sorted(f for f in os.listdir(os.path.join(ROOT, out)) if f.endswith(".svg"))
        path = os.path.join(ROOT, "docs", page)
        text = open(path, encoding="utf-8").read()
        text = SECTION.sub("", text)
        if not figures:
            os.remove(os.path.join(ROOT, out, "ts-dump-manifest.txt"))
            os.rmdir(os.path.join(ROOT, out))
            open(path, "w", encoding="utf-8").write(text)
            print(f"{chapter}: no figures")
            continue
        section = ["## Figures", "",
                   "Every figure the chapter shows in its explained mode (heatmaps, masks, positional encodings,",
                   "loss curves, histograms, trees), as the chapter draws it with `--svg DIR` (seed 0;",
                   "`docs_samples` runs the command again and fails unless it writes these same files):", "",
                   f"Figures made with `{command}`:", ""]
        for f in figures:
            alt = re.sub(r"([\[\]\\])", r"\\\1", title_of(os.path.join(ROOT, out, f)))
            section.append(f"![{alt}](figures/{chapter}/{f})")
            section.append("")
        at = text.index("\n## Summary") + 1
        text = text[:at] + "\n".join(section) + "\n" + text[at:]
        open(path, "w", encoding="utf-8").write(text)
        print(f"{chapter}: {len(figures)} figures")


if __name__ == "__main__":
    main()
