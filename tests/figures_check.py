#!/usr/bin/env python3
"""Every figure a docs page shows reads cleanly in a browser: no two texts overlap, none is cut off.

usage: figures_check.py PAGE_OR_SVG...
For each docs page (docs/chNN_x.md), the SVG files its images name (figures/.../*.svg, written
by scripts/figures.py); an argument ending in .svg is checked by itself. The figures of a page
are put inline in one HTML file and laid out by headless Chromium (Debian package `chromium`:
`chromium --headless --dump-dom`, the fonts of this machine); a script in the page takes every
<text> element's box (getBBox(), turned by its own transform, so a slanted label is a slanted
box) and reports each pair of boxes that overlap by more than half a pixel, and each box that
leaves the picture. Prints OK / NOT OK per figure, naming the two labels; exit 0 if all hold,
1 if not, 77 (ctest: skipped) when there is no chromium to render with. A snap's wrapper
(Ubuntu's `chromium-browser` deb, /snap/bin/*) does not count: where snapd does not run (WSL,
containers, CI) it only says to install the snap, and it is not tried here.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from script_args import args_or_usage

IMAGE = re.compile(r"!\[(?:\\.|[^\]\\])*\]\((figures/[^)]+\.svg)\)")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
EPS = 0.5  # px: boxes that only touch (rounding in the layout) do not count

# Runs in the page: for every inline <svg data-name=...>, its texts as boxes (4 corners in the
# picture's own pixels), then the pairs that overlap (separating-axis test on the two boxes),
# written as JSON into <pre id="result">.
SCRIPT = r"""
<script>
(function () {
  const EPS = %EPS%;
  function corners(el, svg) {
    const b = el.getBBox();
    if (b.width <= 0 || b.height <= 0) return null;
    const m = svg.getScreenCTM().inverse().multiply(el.getScreenCTM());
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
        .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  }
  function project(poly, ax) {
    let lo = Infinity, hi = -Infinity;
    for (const [x, y] of poly) { const p = x * ax[0] + y * ax[1]; lo = Math.min(lo, p); hi = Math.max(hi, p); }
    return [lo, hi];
  }
  function overlap(p, q) {  // depth of the overlap along the best separating axis (<= EPS: apart)
    let depth = Infinity;
    for (const poly of [p, q])
      for (let i = 0; i < 2; ++i) {
        const dx = poly[i + 1][0] - poly[i][0], dy = poly[i + 1][1] - poly[i][1], n = Math.hypot(dx, dy);
        if (n === 0) continue;
        const ax = [-dy / n, dx / n], a = project(p, ax), b = project(q, ax);
        depth = Math.min(depth, Math.min(a[1], b[1]) - Math.max(a[0], b[0]));
      }
    return depth;
  }
  const report = [];
  for (const svg of document.querySelectorAll('svg[data-name]')) {
    const vb = svg.viewBox.baseVal, W = vb && vb.width ? vb.width : svg.width.baseVal.value,
          H = vb && vb.height ? vb.height : svg.height.baseVal.value;
    const texts = [];
    for (const el of svg.querySelectorAll('text')) {
      const c = corners(el, svg);
      if (c) texts.push({text: el.textContent, c: c});
    }
    const problems = [];
    for (const t of texts) {
      const xs = t.c.map(p => p[0]), ys = t.c.map(p => p[1]);
      if (Math.min(...xs) < -EPS || Math.min(...ys) < -EPS || Math.max(...xs) > W + EPS || Math.max(...ys) > H + EPS)
        problems.push({kind: 'outside', a: t.text, at: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)],
                       size: [W, H]});
    }
    for (let i = 0; i < texts.length; ++i)
      for (let j = i + 1; j < texts.length; ++j) {
        const d = overlap(texts[i].c, texts[j].c);
        if (d > EPS) problems.push({kind: 'overlap', a: texts[i].text, b: texts[j].text, depth: d,
                                    at: texts[i].c[0], bt: texts[j].c[0]});
      }
    report.push({name: svg.getAttribute('data-name'), texts: texts.length, problems: problems});
  }
  document.getElementById('result').textContent = JSON.stringify(report);
})();
</script>
""".replace("%EPS%", str(EPS))


def is_snap(path):
    """A snap's command (a link to /usr/bin/snap) or a script that hands over to one (/snap/...)."""
    if os.path.basename(os.path.realpath(path)) == "snap":
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError:
        return False
    return head.startswith(b"#!") and b"/snap/" in head


def browser():
    """(path, None), or (None, why there is none)."""
    snaps = []
    for name in BROWSERS:
        path = shutil.which(name)
        if path and is_snap(path):
            snaps.append(path)
        elif path:
            return path, None
    if snaps:
        return None, f"{', '.join(snaps)}: a snap's wrapper, not used; install a deb of chromium or Google Chrome"
    return None, "install the Debian package `chromium`, or run scripts/deps.sh all"


def figures_of(arg):
    """[(name, path)]: the SVG itself, or the figures a docs page shows (in its order)."""
    if arg.endswith(".svg"):
        return [(os.path.basename(arg), arg)]
    text = open(arg, encoding="utf-8").read()
    here = os.path.dirname(arg)
    return [(os.path.join(os.path.basename(arg), ref), os.path.join(here, ref)) for ref in IMAGE.findall(text)]


def inline(svg_text, name):
    svg_text = re.sub(r"^<\?xml[^>]*>\s*", "", svg_text)
    return svg_text.replace("<svg ", f'<svg data-name="{html.escape(name)}" ', 1)


def render(chrome, figures, tmp):
    """The report of the in-page script for these figures (a list, one entry per figure)."""
    body = "\n".join(f"<div>{inline(open(path, encoding='utf-8').read(), name)}</div>" for name, path in figures)
    page = os.path.join(tmp, "figures.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write('<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body style="margin:0">\n'
                f'{body}\n<pre id="result"></pre>\n{SCRIPT}</body></html>\n')
    argv = [chrome, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={os.path.join(tmp, 'profile')}", "--dump-dom", "file://" + page]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="result">(.*?)</pre>', run.stdout, re.S)
    if run.returncode != 0 or not m or not m.group(1).strip():
        sys.exit(f"figures_check: {os.path.basename(chrome)} did not lay out the page (exit {run.returncode}): "
                 f"{run.stderr.strip()[-400:]}")
    return json.loads(html.unescape(m.group(1)))


def describe(p):
    if p["kind"] == "outside":
        x0, y0, x1, y1 = p["at"]
        return (f"'{p['a']}' leaves the picture: its box ({x0:.0f},{y0:.0f})-({x1:.0f},{y1:.0f}) "
                f"is not inside {p['size'][0]:.0f} x {p['size'][1]:.0f}")
    return (f"'{p['a']}' (at {p['at'][0]:.0f},{p['at'][1]:.0f}) overlaps '{p['b']}' "
            f"(at {p['bt'][0]:.0f},{p['bt'][1]:.0f}) by {p['depth']:.1f} px")


def main():
    args = args_or_usage(__doc__, 1)
    chrome, why = browser()
    if chrome is None:
        print(f"figures_check: SKIPPED, no chromium to render the figures with ({why})")
        return 77
    ok = True
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arg in args:
            figures = figures_of(arg)
            missing = [name for name, path in figures if not os.path.exists(path)]
            for name in missing:
                print(f"NOT OK  {name}: the file does not exist")
                ok = False
            figures = [(n, p) for n, p in figures if n not in missing]
            if not figures:
                continue
            for fig in render(chrome, figures, tmp):
                total += 1
                if not fig["problems"]:
                    print(f"OK      {fig['name']}: {fig['texts']} texts, none overlaps another or leaves the picture")
                    continue
                ok = False
                print(f"NOT OK  {fig['name']}: {len(fig['problems'])} problems")
                for p in fig["problems"][:6]:
                    print(f"          {describe(p)}")
                if len(fig["problems"]) > 6:
                    print(f"          ... and {len(fig['problems']) - 6} more")
    print(("OK" if ok else "NOT OK") + f": {total} figures laid out by {os.path.basename(chrome)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
