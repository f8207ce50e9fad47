#!/usr/bin/env python3
"""--step-by-step and --step N, as a learner meets them (ctest step_by_step).

usage: step_by_step_test.py CHAPTER_BINARY WALKTHROUGH BUILD_DIR
On a terminal (a tmux pane of 80 x 40): the chapter pauses after step 1 and shows no more;
Enter shows step 2; b (a single key, no Enter) shows step 2 again; q ends the chapter with exit
code 0; the terminal is back in its own mode afterwards, also after Ctrl-C at a pause, and Ctrl-Z
at a pause gives it back until the chapter is continued. At 80 x 24, in English and Chinese, for
the given chapter and for ch02, ch03, ch06, ch08 and ch10 of BUILD_DIR (heatmaps, masks, a tensor
whose grad_fn line a page break used to cut off, titles longer than a row): a step taller than
the screen pauses page by page, its title on screen at each pause; no tensor print and no figure
is cut between two pages unless the pause says it was cut between two rows (then the next page
starts with a row); the title repeated above a page fits the row and is cut only at a word's end,
with "…". ch14's note on stderr (how long the run takes) leaves the chapter's header on the first
screen. The walkthrough passes --step-by-step on a terminal. Piped, --step-by-step changes no
byte; --step N starts at step N's header. Prints OK / NOT OK per check; exit 0 if all hold.
"""
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata

failures = 0


def check(ok, what, detail=""):
    global failures
    print(("OK      " if ok else "NOT OK  ") + what + ("" if ok else f": {detail}"))
    failures += 0 if ok else 1


def tmux(*args):
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True)


def pane(t="t"):
    """Everything the pane showed, scrollback included."""
    return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", t).stdout


def screen(t="t"):
    """What the pane shows now (no scrollback)."""
    return tmux("capture-pane", "-p", "-t", t).stdout


def keys(t, *k):
    tmux("send-keys", "-t", t, *k)


def through_pages(n, timeout=60):
    """Enter at each page prompt of step n until its end-of-step prompt shows."""
    end = time.time() + timeout
    while time.time() < end:
        shown = screen()
        if f"step {n} · Enter" in shown:
            return True
        if f"step {n} goes on" in shown:
            keys("t", "Enter")
            time.sleep(0.3)
        time.sleep(0.2)
    return False


def wait_for(text, count=1, timeout=60, t="t"):
    end = time.time() + timeout
    while time.time() < end:
        if pane(t).count(text) >= count:
            return True
        time.sleep(0.2)
    return False


def wait_file(path, timeout=30):
    end = time.time() + timeout
    while not os.path.exists(path) and time.time() < end:
        time.sleep(0.2)
    return open(path).read().strip() if os.path.exists(path) else "none"


def tty_mode(t="t"):
    """The pane's terminal modes, as stty prints them."""
    tty = tmux("display-message", "-p", "-t", t, "#{pane_tty}").stdout.strip()
    return subprocess.run(["stty", "-a", "-F", tty], capture_output=True, text=True).stdout


def cooked(mode):
    return re.search(r"(?<!-)\bicanon\b", mode) is not None and re.search(r"(?<!-)\becho\b", mode) is not None


binary, walkthrough, build = sys.argv[1], sys.argv[2], sys.argv[3]
name = os.path.basename(binary)
# piped runs laid out for 80 columns whoever runs the test; the panes below take tmux's width
os.environ.pop("TS_COLUMNS", None)
env = dict(os.environ, NO_COLOR="1", OPENBLAS_CORETYPE="Haswell", TS_COLUMNS="80")

# piped: --step-by-step changes nothing; --step 2 starts at step 2
plain = subprocess.run([binary], capture_output=True, env=env).stdout
stepped = subprocess.run([binary, "--step-by-step"], capture_output=True, env=env, stdin=subprocess.DEVNULL).stdout
check(plain == stepped, "piped, --step-by-step prints the same bytes", f"{len(plain)} vs {len(stepped)} bytes")
from2 = subprocess.run([binary, "--step", "2"], capture_output=True, env=env).stdout.decode()
lines = [l for l in from2.splitlines() if l.startswith("── ")]
check(bool(lines) and "Step 2" in lines[0] and "Step 1" not in from2, "--step 2 starts at step 2's header",
      lines[:1])
bad = subprocess.run([binary, "--step", "999"], capture_output=True, env=env)
check(bad.returncode == 2 and b"--step 999" in bad.stderr, "--step past the last step: exit 2 with the fix",
      bad.stderr[-200:])

if shutil.which("tmux") is None:
    print("tmux is missing: install it (apt-get install tmux) to test the pauses on a terminal")
    sys.exit(1)
sock = f"ts-step-{os.getpid()}"
tmp = f"/tmp/{sock}"
os.makedirs(tmp, exist_ok=True)

# ---- the pager's pages at 80 x 24: what each pause shows ----
LANGS = {
    "en": dict(page=r"step (\d+) goes on", end=r"step (\d+) · Enter", cut="cut between two rows",
               title=r"── Step {n}\b", more="(continued)"),
    "zh": dict(page=r"第 (\d+) 步还没完", end=r"第 (\d+) 步 · 回车", cut="在两行之间断开",
               title=r"── 第 {n} 步", more="（续）"),
}
SHADES = set("░▒▓█")


def wide(c):
    return unicodedata.east_asian_width(c) in "WF"


def width(s):
    return sum(2 if wide(c) else 0 if unicodedata.combining(c) else 1 for c in s)


def content(shown):
    """The screen's lines above the prompt, trailing blank lines dropped."""
    rows = shown.rstrip("\n").split("\n")
    rows = rows[:-1]  # the prompt
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def open_tensor(rows):
    """The page ends inside a printed value: its >>> line(s) and no value yet, or a value whose
    brackets are still open (nothing after the value closes counts: notes, prose, code lines)."""
    at = max((i for i, r in enumerate(rows) if r.startswith(">>> ")), default=None)
    if at is None:
        return False
    depth = 0
    for r in rows[at + 1:]:
        if r.startswith("... "):  # the >>> line folded
            continue
        if not r.strip() or r.startswith(("   ↳", "  code:", "── ", "  !")):
            return False
        depth += r.count("(") + r.count("[") - r.count(")") - r.count("]")
        if depth <= 0:
            return False  # the value closed (or had no brackets)
    return True


FIGURE_ROW = re.compile(r"^\S.{0,15}? ([ ░▒▓█x!?]{2,})$")  # a heatmap's row: its label, then only cells


def figure_row(line):
    m = FIGURE_ROW.match(line)
    return bool(m) and bool(set(m.group(1)) & (SHADES | {"x"}))


def figure_legend(line):
    return "░▒▓█" in line  # a heatmap's legend shows its whole ramp


def walk(t, lang, binary, done, titles, deadline):
    """Every pause of the chapter in pane t, Enter at each: a list of problems and some counts."""
    L = LANGS[lang]
    problems, seen, last = [], dict(pauses=0, pages=0, cuts=0, fitted=0), ""
    prev = None  # (kind, rows) of the page before the last Enter
    while time.time() < deadline and not os.path.exists(done):
        shown = screen(t)
        nonblank = [l for l in shown.splitlines() if l.strip()]
        prompt = nonblank[-1] if nonblank else ""
        page, end = re.search(L["page"], prompt), re.search(L["end"], prompt)
        if not (page or end) or shown == last:
            time.sleep(0.15)
            continue
        last = shown
        n = (page or end).group(1)
        rows = content(shown)
        seen["pauses"] += 1
        where = f"{os.path.basename(binary)} --lang {lang} step {n}"
        if not any(re.match(L["title"].format(n=n), r) for r in rows):
            problems.append(f"{where}: the step's title is not on the screen: " + " | ".join(rows[-6:]))
        # the title repeated above this page: one row, the whole title when it fits, else cut at a
        # word's end (a space, or next to a CJK character) and marked with …
        for r in rows:
            if L["more"] in r and r.startswith("── "):
                head = r[: r.rindex(L["more"])].rstrip()
                # its own step's title (the page before, still on screen, may show the step before)
                num = re.match(L["title"].format(n=r"(\d+)"), head)
                own = next((f for f in titles if num and re.match(L["title"].format(n=num.group(1)), f)), None)
                if own is None:
                    problems.append(f"{where}: the repeated title {r!r} names no step of the chapter")
                    continue
                full = own
                if width(r) > 80:
                    problems.append(f"{where}: the repeated title is wider than the pane: {r!r}")
                if width(full + " " + L["more"]) < 80:
                    if head != full:
                        problems.append(f"{where}: the repeated title {r!r} is not the step's title {full!r}")
                    continue
                seen["fitted"] += 1
                stem = head[:-1]
                if not head.endswith("…") or not full.startswith(stem) or len(stem) < 4:
                    problems.append(f"{where}: the repeated title {r!r} is not {full!r} cut with …")
                elif not (full[len(stem)] == " " or wide(full[len(stem)]) or wide(stem[-1])):
                    problems.append(f"{where}: the repeated title {r!r} is cut inside a word of {full!r}")
        # the page before this one: was something cut at that pause?
        if prev is not None:
            kind, before = prev
            after = rows
            i = next((k for k, r in enumerate(after) if L["more"] in r and r.startswith("── ")), None)
            first = next((r for r in after[i + 1:] if r.strip()), "") if i is not None else ""
            tail = before[-1] if before else ""
            if kind == "page" and open_tensor(before):
                problems.append(f"{where}: a printed value is cut between two pages: ..." + " | ".join(before[-3:]) +
                                f" || {first}")
            if kind == "page" and figure_row(tail) and (figure_row(first) or figure_legend(first)):
                problems.append(f"{where}: a figure is cut between two pages: {tail!r} || {first!r}")
            if kind == "cut" and open_tensor(before) and not first.lstrip().startswith(("[", "(", "...")):
                problems.append(f"{where}: a value cut between pages goes on inside a row: {first!r}")
        kind = "cut" if page and L["cut"] in prompt else "page" if page else "end"
        seen["pages"] += kind != "end"
        seen["cuts"] += kind == "cut"
        prev = (kind, rows) if kind != "end" else None
        keys(t, "Enter")
        time.sleep(0.25)
    return problems, seen


# A job-control shell's way of running a command, without its care for the terminal's modes:
# job.py DONE MODE COMMAND... runs COMMAND as the terminal's foreground process group, waits for it
# (it may stop and be continued), then writes `stty -a` to MODE and its exit status to DONE.
JOB = """import os, signal, subprocess, sys
done, mode, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(0, os.getpgrp())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    os.execvp(argv[0], argv)

while True:
    _, st = os.waitpid(pid, os.WUNTRACED | os.WCONTINUED)
    if os.WIFEXITED(st) or os.WIFSIGNALED(st):
        break
os.tcsetpgrp(0, os.getpgrp())
open(mode, "w").write(subprocess.run(["stty", "-a"], capture_output=True, text=True).stdout)
open(done, "w").write(str(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)))
"""

try:
    # ---- 80 x 40: single keys; the terminal's own mode back on every way out ----
    done, mode = f"{tmp}/rc", f"{tmp}/stty"
    cmd = f"NO_COLOR=1 {binary} --step-by-step; rc=$?; stty -a > {mode}; echo $rc > {done}; sleep 600"
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "40", cmd)
    check(wait_for("step 1 · Enter"), "on a terminal it pauses after step 1", pane()[-300:])
    check("── Step 2" not in pane(), "and shows nothing of step 2 before Enter")
    m = tty_mode()
    check(not cooked(m), "at a pause the terminal reads single keys, without echo", m[-200:])
    keys("t", "Enter")
    check(through_pages(2), "Enter shows step 2 and pauses again", pane()[-300:])
    keys("t", "b")  # a single key: no Enter after it
    check(wait_for("── Step 2", count=2), "b, as it is pressed, shows step 2 again", pane()[-300:])
    through_pages(2)
    time.sleep(0.5)
    before = pane()  # what the pause shows (how many step-2 titles are on screen depends on the pages)
    keys("t", "x")  # another key does nothing
    time.sleep(1.0)
    after = pane()
    check("── Step 3" not in after and after.count("── Step 2") == before.count("── Step 2"),
          "a key that means nothing is ignored", after[-300:])
    keys("t", "q")
    rc = wait_file(done)
    check(rc == "0", "q, as it is pressed, ends the chapter with exit code 0", f"exit {rc}")
    check("── Step 3" not in pane(), "and nothing of step 3 is shown")
    check(cooked(wait_file(mode)), "and the terminal is back in its own mode (icanon echo)", open(mode).read()[-200:]
          if os.path.exists(mode) else "no stty")
    tmux("kill-session", "-t", "t")
    for f in (done, mode):
        if os.path.exists(f):
            os.remove(f)
    # Ctrl-Z at a pause: the terminal is given back while the chapter is stopped, taken again after
    # it is continued; Ctrl-C at a pause: the chapter ends, the terminal in its own mode. The chapter
    # runs as a job-control shell runs it (its own process group, the terminal's foreground one),
    # under a parent that leaves the terminal's modes alone, so that what stty shows is the chapter's doing
    job = f"{tmp}/job.py"
    with open(job, "w") as f:
        f.write(JOB)
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "40",
         f"NO_COLOR=1 {sys.executable} {job} {done} {mode} {binary} --step-by-step; sleep 600")
    wait_for("step 1 · Enter")
    pid = subprocess.run(["pgrep", "-f", "-n", f"^{binary} --step-by-step"], capture_output=True, text=True).stdout.strip()
    keys("t", "C-z")
    time.sleep(0.7)
    state = open(f"/proc/{pid}/stat").read().split()[2] if pid and os.path.exists(f"/proc/{pid}/stat") else "?"
    check(state == "T" and cooked(tty_mode()), "Ctrl-Z at a pause stops the chapter and gives the terminal back",
          f"state {state}, {tty_mode()[-120:]}")
    if pid:
        os.kill(int(pid), 18)  # SIGCONT, as fg sends it
    time.sleep(0.7)
    check(not cooked(tty_mode()), "continued, the pause reads single keys again", tty_mode()[-120:])
    keys("t", "Enter")
    check(through_pages(2), "and Enter goes on to step 2", pane()[-300:])
    keys("t", "C-c")
    rc = wait_file(done)
    check(rc == "130" and cooked(wait_file(mode)), "Ctrl-C at a pause ends the chapter (130), the terminal in its "
          "own mode", f"exit {rc}, {open(mode).read()[-120:] if os.path.exists(mode) else 'no stty'}")
    tmux("kill-session", "-t", "t")

    # ---- 80 x 24, English and Chinese: every pause of six chapters, side by side in six panes ----
    chapters = [binary] + [os.path.join(build, c) for c in
                           ("ch02_attention_scores", "ch03_softmax", "ch06_layernorm", "ch08_masks", "ch10_transformer")]
    chapters = list(dict.fromkeys(chapters))
    for lang in ("en", "zh"):
        runs = []
        for k, ch in enumerate(chapters):
            t, done = f"p{k}", f"{tmp}/rc-{lang}-{k}"
            # each step's title, as the chapter colours it apart from its (article ref)
            piped = subprocess.run([ch, "--lang", lang, "--color=always"], capture_output=True, text=True,
                                   env=dict(env, TS_COLUMNS="0")).stdout
            titles = re.findall(r"^\033\[1;36m(── [^\033]*)\033\[0m", piped, re.M)
            tmux("new-session", "-d", "-s", t, "-x", "80", "-y", "24",
                 f"NO_COLOR=1 {ch} --lang {lang} --step-by-step; echo $? > {done}; sleep 600")
            runs.append((t, ch, done, titles))
        deadline = time.time() + 240
        # one pane after another, each to its end (the others wait at their first pause meanwhile)
        totals = dict(pauses=0, pages=0, cuts=0, fitted=0)
        problems = []
        for t, ch, done, titles in runs:
            p, seen = walk(t, lang, ch, done, titles, deadline)
            problems += p
            rc = wait_file(done, timeout=5)
            if rc != "0":
                problems.append(f"{os.path.basename(ch)} --lang {lang}: exit {rc} after {seen['pauses']} pauses")
            for key in totals:
                totals[key] += seen[key]
            if os.path.basename(ch) == "ch10_transformer" and lang == "en" and seen["fitted"] == 0:
                problems.append("ch10_transformer: step 1's title, too long for a row with \"(continued)\", was "
                                "never seen repeated: the check of its cut saw nothing")
            tmux("kill-session", "-t", t)
        check(not problems and totals["pages"] > 0,
              f"80 x 24 --lang {lang}: {totals['pauses']} pauses ({totals['pages']} inside a step, "
              f"{totals['cuts']} of them in a block taller than the page, {totals['fitted']} titles fitted "
              f"with …): every title on screen, no value or figure cut between pages, titles cut at a word's end",
              "; ".join(problems[:6]))

    # ---- ch14's note on stderr (how long the run may take) is counted on its page: the chapter's
    # header stays on the first screen, and the note shows with its step's title ----
    ch14 = os.path.join(build, "ch14_three_kinds")
    done = f"{tmp}/rc-14"
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24",
         f"NO_COLOR=1 {ch14} --step-by-step; echo $? > {done}; sleep 600")
    first, noted = "", ""
    end = time.time() + 90
    while time.time() < end and not noted:
        shown = screen()
        nonblank = [l for l in shown.splitlines() if l.strip()]
        if nonblank and re.search(r"step 1 (goes on|· Enter)", nonblank[-1]):
            first = first or shown
            if "ch14_three_kinds: note:" in shown:
                noted = shown
                break
            keys("t", "Enter")
            time.sleep(0.5)
        time.sleep(0.2)
    check(first.startswith("ch14_three_kinds ·"), "ch14 at 80 x 24: the chapter's header is on the first screen",
          first.replace("\n", " | ")[:300])
    check(bool(re.search(r"^── Step 1\b", noted, re.M)), "and its time note on stderr shows at a pause of step 1, "
          "with the step's title on the screen", noted.replace("\n", " | ")[-300:])
    keys("t", "q")
    check(wait_file(done) == "0", "and q there ends it")
    tmux("kill-session", "-t", "t")

    # the walkthrough on a terminal: the first chapter pauses after its first step
    cmd = f"NO_COLOR=1 {walkthrough} {build}; sleep 600"
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "40", cmd)
    check(wait_for("step 1 · Enter"), "the walkthrough pauses after step 1", pane()[-300:])
finally:
    tmux("kill-server")
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{name}: " + ("every check holds" if failures == 0 else f"{failures} check(s) failed"))
sys.exit(1 if failures else 0)
