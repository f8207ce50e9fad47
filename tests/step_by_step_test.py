#!/usr/bin/env python3
"""--step-by-step and --step N, as a learner meets them (ctest step_by_step).

usage: step_by_step_test.py CHAPTER_BINARY WALKTHROUGH BUILD_DIR
On a terminal (a tmux pane of 80 x 40): the chapter pauses after step 1 and shows no more;
at 80 x 24 a step taller than the screen pauses page by page, its title on screen at each pause;
Enter shows step 2; b shows step 2 again; q ends the chapter with exit code 0. The walkthrough
passes --step-by-step on a terminal. Piped, --step-by-step changes no byte; --step N starts at
step N's header. Prints OK / NOT OK per check; exit 0 if all hold.
"""
import os
import re
import shutil
import subprocess
import sys
import time

failures = 0


def check(ok, what, detail=""):
    global failures
    print(("OK      " if ok else "NOT OK  ") + what + ("" if ok else f": {detail}"))
    failures += 0 if ok else 1


def tmux(*args):
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True)


def pane():
    """Everything the pane showed, scrollback included."""
    return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t").stdout


def screen():
    """What the pane shows now (no scrollback)."""
    return tmux("capture-pane", "-p", "-J", "-t", "t").stdout


def through_pages(n, timeout=60):
    """Enter at each page prompt of step n until its end-of-step prompt shows."""
    end = time.time() + timeout
    while time.time() < end:
        shown = screen()
        if f"step {n} · Enter" in shown:
            return True
        if f"step {n} goes on" in shown:
            tmux("send-keys", "-t", "t", "Enter")
            time.sleep(0.3)
        time.sleep(0.2)
    return False


def wait_for(text, count=1, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if pane().count(text) >= count:
            return True
        time.sleep(0.2)
    return False


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
done = f"/tmp/{sock}.rc"
try:
    cmd = f"NO_COLOR=1 {binary} --step-by-step; echo $? > {done}; sleep 600"
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "40", cmd)
    check(wait_for("step 1 · Enter"), "on a terminal it pauses after step 1", pane()[-300:])
    check("── Step 2" not in pane(), "and shows nothing of step 2 before Enter")
    tmux("send-keys", "-t", "t", "Enter")
    check(through_pages(2), "Enter shows step 2 and pauses again", pane()[-300:])
    tmux("send-keys", "-t", "t", "b", "Enter")
    check(wait_for("── Step 2", count=2), "b shows step 2 again", pane()[-300:])
    through_pages(2)
    tmux("send-keys", "-t", "t", "q", "Enter")
    end = time.time() + 30
    while not os.path.exists(done) and time.time() < end:
        time.sleep(0.2)
    rc = open(done).read().strip() if os.path.exists(done) else "none"
    check(rc == "0", "q ends the chapter with exit code 0", f"exit {rc}")
    check("── Step 3" not in pane(), "and nothing of step 3 is shown")
    tmux("kill-session", "-t", "t")
    # at 80 x 24 every step either fits the screen or pauses page by page, and at every pause
    # (a page's or a step's) the step's title is on the screen
    if os.path.exists(done):
        os.remove(done)
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", f"NO_COLOR=1 {binary} --step-by-step; echo $? > {done}; sleep 600")
    pauses, pages, lost, last = 0, 0, [], ""
    end = time.time() + 300
    while time.time() < end and not os.path.exists(done):
        shown = screen()
        prompt = [l for l in shown.splitlines() if l.strip()][-1:] or [""]
        m = re.search(r"step (\d+)( goes on| · Enter)", prompt[0])
        if not m or shown == last:
            time.sleep(0.2)
            continue
        last = shown
        pauses += 1
        pages += m.group(2) == " goes on"
        if not re.search(rf"^── Step {m.group(1)}\b", shown, re.M):
            lost.append(f"step {m.group(1)}: " + shown.replace("\n", " | ")[-160:])
        tmux("send-keys", "-t", "t", "Enter")
        time.sleep(0.3)
    rc = open(done).read().strip() if os.path.exists(done) else "none"
    check(rc == "0" and pauses > 0 and pages > 0, "80 x 24: steps taller than the screen pause page by page",
          f"exit {rc}, {pauses} pauses, {pages} of them inside a step")
    check(not lost, "80 x 24: the step's title is on the screen at every pause", lost[:2])
    tmux("kill-session", "-t", "t")
    if os.path.exists(done):
        os.remove(done)
    # the walkthrough on a terminal: the first chapter pauses after its first step
    cmd = f"NO_COLOR=1 {walkthrough} {build}; sleep 600"
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "40", cmd)
    check(wait_for("step 1 · Enter"), "the walkthrough pauses after step 1", pane()[-300:])
finally:
    tmux("kill-server")
    if os.path.exists(done):
        os.remove(done)
print(f"{name}: " + ("every check holds" if failures == 0 else f"{failures} check(s) failed"))
sys.exit(1 if failures else 0)
