#!/usr/bin/env python3
"""Every exercise of every docs page, done as the page says, and the chapter's notes checked.

usage: exercises_check.py BUILD_DIR [FILTER]
       exercises_check.py BUILD_DIR [FILTER] --edits   the learner-edit suite instead (below)

The pages' "## Exercises" sections are numbered lists. Exercise N of docs/chNN_x.md is
done by docs/exercises/chNN_x/N.patch: a few header lines, then (for an edit of the code)
a unified diff of chapters/chNN_x.cpp (and of src/**/*.cpp files, for an exercise inside the
core: those are compiled too and linked ahead of libts_core.a). The header says how to run the result and what the
output must then say:

    # run: --eval --d-ff 16          the chapter's arguments (optional)
    # exit: 3                        the exit code expected (default 0)
    # expect: NOT OK: .*0\\.0414      a regex that must match a line of stdout or stderr
    # reject: float rounding only    a regex that must match no line

The patch is applied (git apply) to a copy of the chapter in a temporary directory, which
is compiled and linked exactly as the build does (compile_commands.json and the target's
link line), against the build's libts_core.a. Nothing in the source tree changes.
An exercise in a page without its file, or a file for no exercise, fails the check.
Prints OK / NOT OK per exercise; exit 0 if all hold.

With --edits: the edits a curious learner makes that no docs page asks for (a size constant,
an activation, a residual, a mask's polarity, the sqrt(d) scaling, a layer count...), in
tests/edits/chNN_x/NAME.patch, same format, plus
    # why: what the learner changed and what must follow from it   (required)
Each needs at least one '# expect:' (a sentence that must now say the new truth) and one
'# reject:' (a sentence the edit made false, which must no longer be printed).
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOCS = os.path.join(ROOT, "docs")
EXERCISES = os.path.join(DOCS, "exercises")
EDITS = os.path.join(ROOT, "tests", "edits")


def exercises_of(page):
    """Numbers of the items of the page's '## Exercises' list."""
    nums, inside = [], False
    for line in open(page, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.strip().lower().startswith("## exercises")
            continue
        m = re.match(r"^(\d+)\. ", line)
        if inside and m:
            nums.append(int(m.group(1)))
    return nums


def parse(path):
    """(header dict of lists, patch text or '')"""
    header, body = {}, []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        m = re.match(r"^# (\w+):\s?(.*)$", lines[i].rstrip("\n"))
        if m:
            header.setdefault(m.group(1), []).append(m.group(2))
        i += 1
    body = "".join(lines[i:]).lstrip("\n")
    return header, body


def compile_one(build, cc, rel, src, obj):
    """Compile `src` (a copy of ROOT/rel) into `obj` with the build's own command for rel."""
    entry = next((e for e in cc if os.path.normpath(e["file"]) == os.path.join(ROOT, rel)), None)
    if entry is None:
        raise RuntimeError("no compile command for %s in %s" % (rel, build))
    args = shlex.split(entry["command"])
    args[args.index("-o") + 1] = obj
    args[-1] = src
    r = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
    if r.returncode != 0:
        err = RuntimeError("the edited %s does not compile:\n%s" % (rel, r.stderr[-3000:]))
        err.stderr = r.stderr  # all of it (scripts/mutants.py reads every line it names)
        raise err


def build_variant(build, chapter, patch, tmp):
    """Apply `patch` to copies of the files it edits (the chapter, and .cpp files of src/ for an
    exercise inside the core), compile them as the build does and link the chapter with them
    ahead of the build's libts_core.a (an edited core object replaces the library's); the binary's path."""
    main_rel = os.path.join("chapters", chapter + ".cpp")
    edited = [main_rel]
    if patch:
        for rel in re.findall(r"^\+\+\+ b/(\S+)", patch, re.M):
            if rel not in edited:
                if not (rel.startswith("src/") and rel.endswith(".cpp")):
                    raise RuntimeError("an exercise may edit its chapter and src/*.cpp files, not %s" % rel)
                edited.append(rel)
        # a patch of src/ alone links the build's own chapter object (one compile fewer)
        if not re.search(r"^\+\+\+ b/%s$" % re.escape(main_rel), patch, re.M):
            edited.remove(main_rel)
    for rel in edited:
        os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            original = f.read()
        with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
            f.write(original)
    if patch:
        p = os.path.join(tmp, "edit.patch")
        with open(p, "w", encoding="utf-8") as f:
            f.write(patch)
        r = subprocess.run(["git", "apply", "--whitespace=nowarn", p], cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("the patch no longer applies to %s: %s" % (", ".join(edited), r.stderr.strip()))
    cc = json.load(open(os.path.join(build, "compile_commands.json")))
    objs = []
    for i, rel in enumerate(edited):
        obj = os.path.join(tmp, "edit%d.o" % i)
        compile_one(build, cc, rel, os.path.join(tmp, rel), obj)
        objs.append(obj)
    return link_chapter(build, chapter, objs, main_rel in edited, tmp)


def link_chapter(build, chapter, objs, replaces_chapter, tmp):
    """Link `chapter` into tmp with `objs` ahead of the build's libraries (an edited core object
    replaces the library's; replaces_chapter: one of them is the edited chapter); its path."""
    link = shlex.split(open(os.path.join(build, "CMakeFiles", chapter + ".dir", "link.txt")).read())
    exe = os.path.join(tmp, chapter)
    at = next(i for i, a in enumerate(link) if a.endswith(".cpp.o"))
    link = link[:at] + objs + link[at + (1 if replaces_chapter else 0):]
    link[link.index("-o") + 1] = exe
    r = subprocess.run(link, cwd=build, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("the edited chapter does not link:\n" + r.stderr[-3000:])
    return exe


def run_env():
    """the environment a patched chapter runs in (scripts/mutants.py runs its mutants in it too)"""
    env = dict(os.environ, OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "Haswell"), TS_COLUMNS="0")
    env.setdefault("TS_TORCH", "1.13")
    env.pop("TS_LANG", None)
    # glibc fills every allocation with 0x5a bytes (and freed memory with 0xa5): an edit that reads
    # memory nothing wrote sees the same garbage on every machine, not zeros from a fresh mmap on one
    # and old values on another (stop 47's CI failed on such an edit that passed everywhere else)
    env.setdefault("MALLOC_PERTURB_", "165")
    return env


def check(build, chapter, n, path, edits=False):
    header, patch = parse(path)
    with tempfile.TemporaryDirectory(prefix="ts-exercise-") as tmp:
        exe = build_variant(build, chapter, patch, tmp) if patch else os.path.join(build, chapter)
        args = shlex.split(" ".join(header.get("run", [])))
        # TS_COLUMNS=0: each line as the chapter writes it (the patterns match whole sentences),
        # whoever runs the test and whatever terminal /dev/tty is
        # TS_TORCH=1.13 (unless the caller set one): the pages show PyTorch 1.13's arithmetic, as the
        # docs samples do (docs_check.py), so a build for PyTorch 2.6 (Debian 13) runs them through
        # the exact path's 1.13 kernels
        r = subprocess.run([exe] + args, capture_output=True, text=True, env=run_env(), timeout=600)
    out = (r.stdout + "\n" + r.stderr).splitlines()
    problems = []
    want = int(header.get("exit", ["0"])[0])
    if r.returncode != want:
        problems.append("exit code %d, expected %d (stderr: %s)" % (r.returncode, want, r.stderr.strip()[-300:]))
    for rx in header.get("expect", []):
        if not any(re.search(rx, line) for line in out):
            problems.append("no line matches %r" % rx)
    for rx in header.get("reject", []):
        hit = next((line for line in out if re.search(rx, line)), None)
        if hit is not None:
            problems.append("a line matches %r: %s" % (rx, hit.strip()))
    if not header.get("expect"):
        problems.append("the file has no '# expect:' line: the exercise checks nothing")
    if edits and not header.get("reject"):
        problems.append("the file has no '# reject:' line: an edit must name the sentence it would make false")
    if edits and not header.get("why"):
        problems.append("the file has no '# why:' line")
    if edits and not patch:
        problems.append("the file has no patch: an edit edits the code")
    return problems


# Every chapter has at least this many learner edits (issue "edit anything").
MIN_EDITS = 3


def edit_jobs(only):
    """(messages, jobs) for tests/edits/chNN_x/*.patch"""
    messages, jobs = [], []
    for src in sorted(os.listdir(os.path.join(ROOT, "chapters"))):
        chapter = src[:-4]
        if not src.endswith(".cpp") or only not in chapter:
            continue
        folder = os.path.join(EDITS, chapter)
        n = len([f for f in os.listdir(folder) if f.endswith(".patch")]) if os.path.isdir(folder) else 0
        if n < MIN_EDITS:
            messages.append("NOT OK tests/edits/%s: %d learner edit(s), every chapter needs at least %d"
                            % (chapter, n, MIN_EDITS))
    for chapter in sorted(os.listdir(EDITS)) if os.path.isdir(EDITS) else []:
        folder = os.path.join(EDITS, chapter)
        if not os.path.isdir(folder) or only not in chapter:
            continue
        if not os.path.exists(os.path.join(ROOT, "chapters", chapter + ".cpp")):
            messages.append("NOT OK tests/edits/%s: no chapters/%s.cpp" % (chapter, chapter))
            continue
        for f in sorted(os.listdir(folder)):
            if f.endswith(".patch"):
                jobs.append(("%s edit %s" % (chapter, f[:-6]), chapter, f[:-6], os.path.join(folder, f)))
    return messages, jobs


def main():
    args = [a for a in sys.argv[1:] if a != "--edits"]
    edits = "--edits" in sys.argv[1:]
    build = os.path.abspath(args[0] if args else "build")
    only = args[1] if len(args) > 1 else ""
    messages, jobs = [], []  # jobs: (name, chapter, n, path), run on every core
    if edits:
        messages, jobs = edit_jobs(only)
    for page in sorted(os.listdir(DOCS)) if not edits else []:
        m = re.match(r"^(ch\d\d_\w+)\.md$", page)
        if not m or only not in m.group(1):
            continue
        chapter = m.group(1)
        nums = exercises_of(os.path.join(DOCS, page))
        folder = os.path.join(EXERCISES, chapter)
        files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        for f in files:
            if not re.match(r"^\d+\.patch$", f) or int(f.split(".")[0]) not in nums:
                messages.append("NOT OK %s: docs/exercises/%s/%s is for no exercise of docs/%s" % (chapter, chapter, f, page))
        for n in nums:
            path = os.path.join(folder, "%d.patch" % n)
            name = "%s exercise %d" % (chapter, n)
            if not os.path.exists(path):
                messages.append("NOT OK %s: no docs/exercises/%s/%d.patch" % (name, chapter, n))
                continue
            jobs.append((name, chapter, n, path))

    def one(job):
        name, chapter, n, path = job
        try:
            problems = check(build, chapter, n, path, edits)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problems = [str(e)]
        return ("OK " if not problems else "NOT OK ") + name + "".join("\n    " + p for p in problems)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(one, jobs))
    for line in messages + results:
        print(line)
    failed = sum(line.startswith("NOT OK") for line in messages + results)
    what = "edits" if edits else "exercises"
    if not jobs and not messages:
        print("no %s found%s" % (what, " for " + only if only else ""))
        return 1
    print("%d %s failed" % (failed, what) if failed else "all %d %s hold" % (len(jobs), what))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
