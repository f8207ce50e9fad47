#!/usr/bin/env python3
"""Hostile input and failing I/O, for one chapter binary (the README's promise):
  - bad input: exit code 2 and ONE line on stderr naming the fix (never a crash or exit 1);
  - a failed write (stdout to /dev/full, a closed stdout, a --dump file that cannot be
    written): a message on stderr and a non-zero exit, never exit 0 with the output lost;
  - --dump never follows a symlink, never leaves a half-written file, never mixes runs.

usage: cli_test.py BINARY [CASES.bad]
GENERIC cases apply to every chapter; CASES.bad adds the chapter's own (one per line, shell
words). In both, these words stand for things made fresh in a temporary directory:
  LONGTEXT  a 600-word sentence (longer than BERT's 512 positions)
  FIFO      a named pipe (a vocabulary read from it would block forever)
  LOOP      a symlink loop          LONGPATH  a path longer than PATH_MAX
  DUPVOCAB  the vocabulary with one line repeated
  BIGVOCAB  the vocabulary with one line more than BERT's 30522 rows
  NOTADIR   a regular file          STRANGER  a directory holding a file no --dump wrote
  TRAP      a directory whose 01_*.npy is a symlink to a victim file (checked untouched)
  OUTDIR    a folder that does not exist yet     OUTDIR_AGAIN  the same, written D/./out/
  LONGDIGITS  130,000 digits
A line may end with "#expect TEXT": the message must then contain TEXT. A line may start with
NAME=VALUE words: the run gets them in its environment (OPENBLAS_CORETYPE=Bogus, TS_LOCALEDIR=...).
CASES.good, if it exists, holds odd inputs that are VALID (same syntax): each run must exit 0 with
no error and no NOT OK; "#expect TEXT" (stdout or stderr contains it) and "#never TEXT" (neither
does) may follow, several times, in that order.
CASES.quick, if it exists, holds flags added to every run that does the chapter's whole work (the
I/O, --dump and full runs): a chapter whose default run is long names its quick form there.
"""
import os
import pty
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from script_args import args_or_usage

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK = []  # the flags of tests/cases/<chapter>.quick (main), for the runs that do the whole work
VOCAB = os.environ.get("TS_VOCAB", os.path.join(HERE, "..", "data", "bert-base-uncased-vocab.txt"))

GENERIC = [
    # unknown, missing, repeated, misplaced
    "--bogus", "-x", "extra_word", "--seed", "--seed 1 --seed 2", "--plain --plain", "--plain=yes",
    "--plain --transcript", "--eval=1", "--full=1",
    # colour: --color takes auto, always or never; --no-color is never and may not contradict it
    "--color sometimes #expect auto, always or never", "--color '' #expect auto, always or never",
    "--no-color --color=always #expect disagree",
    # language: zh or en (the value is checked with the other knobs)
    "--lang fr #expect zh or en", "--lang '' #expect zh or en",
    # a flag taken as a value: refused (write --opt=value to mean it)
    "--seed --plain", "--dump --plain #expect --dump=--plain", "--text --plain #expect --text=--plain",
    # numbers: Python's int() in decimal only
    "--seed abc", "--seed 1.5", "--seed 99999999999999999999999", "--seed 0x10", "--seed ''", "--seed 1e3",
    "--seed=-9223372036854775809",
    # paths ("--dump /proc/forbidden/dir" is an I/O failure, exit 1: io_cases)
    "--dump ''", "--dump NOTADIR #expect not a directory",
    "--dump STRANGER #expect no earlier --dump", "--dump TRAP #expect no earlier --dump",
    "--vocab ''", "--vocab /dev/zero", "--vocab FIFO", "--vocab LOOP", "--vocab LONGPATH", "--vocab /tmp",
    "--vocab /nonexistent/vocab.txt", "--vocab DUPVOCAB", "--vocab BIGVOCAB",
    # text that is not UTF-8: \xff\xfe, a lone continuation byte, Latin-1, truncated, overlong,
    # a surrogate, beyond U+10FFFF
    "--text $'\\xff\\xfe' #expect byte 0", "--text $'\\x80'", "--text $'caf\\xe9' #expect byte 3",
    "--text $'ab\\xe2\\x82'", "--text $'\\xc0\\xaf'", "--text $'\\xed\\xa0\\x80'", "--text $'\\xf4\\x90\\x80\\x80'",
    # one folder for both outputs: refused before either is made (each keeps its own manifest)
    "--svg OUTDIR --dump OUTDIR #expect same folder", "--dump OUTDIR --svg OUTDIR_AGAIN #expect same folder",
    # an echoed value is cut, its length said; an invisible character is named with its byte
    "--seed LONGDIGITS #expect 130000 bytes", "--seed $'4\\xc2\\xa02' #expect U+00A0 NO-BREAK SPACE at byte 1",
    # every invisible (Unicode category C*, Zs, Zl, Zp) and bidi character is named, and echoed as \\uNNNN
    "--seed $'4\\xe2\\x80\\x8e2' #expect U+200E LEFT-TO-RIGHT MARK at byte 1",
    "--seed $'\\xe2\\x81\\xa642' #expect '\\u206642' (U+2066 LEFT-TO-RIGHT ISOLATE at byte 0)",
    "--seed $'1\\xc2\\xad' #expect U+00AD SOFT HYPHEN", "--seed $'1\\xef\\xbb\\xbf' #expect U+FEFF",
    "--seed $'1\\xee\\x80\\x80' #expect (U+E000: an invisible character", "--seed $'1\\xe2\\x80\\xa8' #expect U+2028",
    "--lang $'zh\\xe2\\x80\\x8f' #expect U+200F RIGHT-TO-LEFT MARK", "--color $'\\xe2\\x80\\xaeauto' #expect U+202E",
    # the environment: a Chinese catalog that is not there, an OpenBLAS core it does not know
    "TS_LOCALEDIR=/nonexistent --lang zh #expect TS_LOCALEDIR=/nonexistent holds no catalog",
    "LANG=zh_CN.UTF-8 LC_ALL= LC_MESSAGES= TS_LOCALEDIR=/nonexistent #expect LANG=zh_CN.UTF-8 asks for Chinese",
    "OPENBLAS_CORETYPE=Bogus #expect OPENBLAS_CORETYPE='Bogus' is not a core",
    "OPENBLAS_CORETYPE=$'Haswell\\xe2\\x80\\x8b' #expect U+200B",
]


def bash_words(line):
    """Shell words of one case line, $'...' escapes included (bash does the quoting)."""
    out = subprocess.run(["bash", "-c", 'for a in ' + line + '; do printf "%s\\0" "$a"; done'],
                         capture_output=True, check=True).stdout
    return [w.decode("utf-8", "surrogateescape") for w in out.split(b"\0")[:-1]]


class Fixture:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ts_cli_")
        d = self.dir
        self.victim = os.path.join(d, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("precious\n")
        os.mkfifo(os.path.join(d, "fifo"))
        os.symlink(os.path.join(d, "loop"), os.path.join(d, "loop"))
        lines = open(VOCAB, encoding="utf-8").read().splitlines()
        with open(os.path.join(d, "dup.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines[:2000] + [lines[1500]]) + "\n")
        with open(os.path.join(d, "big.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines + ["extraline"]) + "\n")
        open(os.path.join(d, "notadir"), "w").close()
        os.makedirs(os.path.join(d, "stranger"))
        open(os.path.join(d, "stranger", "notes.txt"), "w").close()
        os.makedirs(os.path.join(d, "trap"))
        os.symlink(self.victim, os.path.join(d, "trap", "01_inputs_input_ids.npy"))
        self.words = {
            "LONGTEXT": ("word " * 600).strip(), "FIFO": os.path.join(d, "fifo"), "LOOP": os.path.join(d, "loop"),
            "LONGPATH": "/tmp/" + "x" * 5000, "DUPVOCAB": os.path.join(d, "dup.txt"),
            "BIGVOCAB": os.path.join(d, "big.txt"), "NOTADIR": os.path.join(d, "notadir"),
            "STRANGER": os.path.join(d, "stranger"), "TRAP": os.path.join(d, "trap"),
            "OUTDIR": os.path.join(d, "out"), "OUTDIR_AGAIN": os.path.join(d, ".", "out") + "/",
            "LONGDIGITS": "1" * 130000,
        }

    def victim_intact(self):
        return open(self.victim).read() == "precious\n"

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def sanitizer_clean(stderr):
    return "Sanitizer" not in stderr and "runtime error" not in stderr


class Results:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def record(self, ok, what, detail):
        print(f"{'OK    ' if ok else 'NOT OK'}  {self.name} {what} -> {detail}")
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def run(binary, args, **kw):
    if "stdout" not in kw and "stderr" not in kw:
        kw["capture_output"] = True
    # laid out for 80 columns whoever runs the test (not for the terminal /dev/tty is)
    kw["env"] = dict(kw.get("env") or os.environ)
    kw["env"].setdefault("TS_COLUMNS", "80")
    return subprocess.run([binary] + args, timeout=900, **kw)


def env_and_args(fx, line):
    """The NAME=VALUE words a case line starts with (its environment), and its arguments."""
    words = [fx.words.get(w, w) for w in bash_words(line)]
    env = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, words


def bad_input(res, fx, binary, line, help_text):
    expect = None
    if "#expect " in line:
        line, expect = line.split("#expect ", 1)
        expect = expect.strip()
        first = [w for w in line.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
        option = first[0].split("=", 1)[0] if first else ""  # --flag=value names --flag
        if option.startswith("--") and option not in help_text:  # a generic case for an option
            expect = "unknown option"                                            # this chapter lacks: refused as unknown
    env, args = env_and_args(fx, line)
    p = run(binary, args, env=dict(os.environ, **env))
    err = p.stderr.decode("utf-8", "replace")
    lines = [l for l in err.splitlines() if l.strip()]
    ok = (p.returncode == 2 and len(lines) == 1 and "error" in lines[0] and sanitizer_clean(err)
          and (expect is None or expect in lines[0]) and fx.victim_intact())
    shown = line.strip() if len(line) < 80 else line[:77] + "..."
    detail = f"exit {p.returncode}: {lines[0] if lines else '(no message)'}"
    if not ok and len(lines) > 1:
        detail += "\n        stderr had %d lines:\n        %s" % (len(lines), "\n        ".join(lines[:8]))
    if not ok and expect:
        detail += f"\n        expected the message to contain: {expect}"
    return res.record(ok, shown, detail)


def until_note(res, binary, shown, args, env, text):
    """A run too long to finish in a test: TEXT (its note) must come on stderr first, within 300 s;
    the run is then stopped (SIGTERM)."""
    p = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=dict(os.environ, TS_COLUMNS="80", **env))
    seen, lines = False, []
    timer = threading.Timer(300, p.kill)
    timer.start()
    start = time.monotonic()
    for raw in p.stderr:
        lines.append(raw.decode("utf-8", "replace").rstrip())
        if text in lines[-1]:
            seen = True
            break
    timer.cancel()
    p.terminate()
    p.wait(timeout=60)
    took = time.monotonic() - start
    # no note is right only for a run that ended well within the note's 10 s (a faster machine)
    quick = not seen and p.returncode == 0 and took < 15
    return res.record(seen or quick, "valid: " + shown,
                      (lines[-1] if lines else "(no message)") + (f" (ended in {took:.1f} s)" if not seen else ""))


def good_input(res, fx, binary, line):
    """A valid odd input: exit 0, nothing called an error on stderr, no NOT OK in the output; each
    "#expect TEXT" found in stdout or stderr, each "#never TEXT" in neither. "#until TEXT": a run too
    long for a test, stopped once TEXT is on stderr (until_note)."""
    parts = re.split(r"#(expect|never|until) ", line)
    line, marks = parts[0], list(zip(parts[1::2], (t.strip() for t in parts[2::2])))
    env, args = env_and_args(fx, line)
    until = [t for kind, t in marks if kind == "until"]
    if until:
        return until_note(res, binary, line.strip(), args, env, until[0])
    p = run(binary, with_quick(args), env=dict(os.environ, **env))
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    both = out + err
    missing = [t for kind, t in marks if kind == "expect" and t not in both]
    present = [t for kind, t in marks if kind == "never" and t in both]
    ok = (p.returncode == 0 and "error" not in err and "NOT OK" not in out and sanitizer_clean(err)
          and not missing and not present)
    shown = line.strip() if len(line) < 80 else line[:77] + "..."
    detail = f"exit {p.returncode}" + (f": {err.strip().splitlines()[-1]}" if err.strip() else "")
    if missing:
        detail += f"; missing: {missing}"
    if present:
        detail += f"; present: {present}"
    if "NOT OK" in out:
        detail += "; " + next(l.strip() for l in out.splitlines() if "NOT OK" in l)
    return res.record(ok, "valid: " + shown, detail)


def io_failure(res, binary, what, args, want, **kw):
    """A failed write: non-zero exit and a message containing `want`."""
    p = run(binary, args, **kw)
    err = p.stderr.decode("utf-8", "replace")
    ok = p.returncode != 0 and want in err and sanitizer_clean(err)
    return res.record(ok, what, f"exit {p.returncode}: {err.strip().splitlines()[-1] if err.strip() else '(no message)'}")


def columns_cases(res, binary):
    """TS_COLUMNS set to what is not a width: refused in one line naming the fix (exit 2); 0 and
    20..1000 accepted (20 run here; every other run of this test sets 80)."""
    for value in ("abc", "5", "80x", "1001", "-80"):
        p = run(binary, ["--plain"] + QUICK, env=dict(os.environ, TS_COLUMNS=value))
        err = p.stderr.decode("utf-8", "replace")
        lines = [l for l in err.splitlines() if l.strip()]
        res.record(p.returncode == 2 and len(lines) == 1 and "TS_COLUMNS" in lines[0] and sanitizer_clean(err),
                   f"TS_COLUMNS={value!r}", f"exit {p.returncode}: {lines[0] if lines else '(no message)'}")
    for value in ("20",):
        # explained mode: the one that lays lines out at the width (--plain prints nothing at all
        # for a chapter whose article prints no tensor, as ch06's)
        p = run(binary, QUICK, env=dict(os.environ, TS_COLUMNS=value))
        printed = p.stdout.decode("utf-8", "replace")
        res.record(p.returncode == 0 and printed.strip() != "" and "error" not in p.stderr.decode("utf-8", "replace"),
                   f"TS_COLUMNS={value!r} accepted", f"exit {p.returncode}, {len(printed)} bytes printed")


def io_cases(res, fx, binary):
    with open("/dev/full", "wb") as full:
        io_failure(res, binary, "> /dev/full", ["--no-color", "--seed", "1"] + QUICK, "write error: No space left on device",
                   stdout=full, stderr=subprocess.PIPE)
        io_failure(res, binary, "--help > /dev/full", ["--help"], "write error: No space left on device",
                   stdout=full, stderr=subprocess.PIPE)
    # a closed stdout (>&-): must not run silently, nor let a file it opens take fd 1
    p = subprocess.run(["bash", "-c", 'exec "$0" --plain "${@}" >&-', binary] + QUICK, capture_output=True, timeout=900)
    err = p.stderr.decode("utf-8", "replace")
    res.record(p.returncode != 0 and "standard output is closed" in err and sanitizer_clean(err), "--plain >&-",
               f"exit {p.returncode}: {err.strip() or '(no message)'}")
    # an output folder the system will not let us make or write: an I/O failure, exit 1, one line
    # (as a full disk is), whether the refusal is /proc's, /sys's or a folder's permissions
    unwritable = [("/proc/forbidden/dir", None), ("/proc/self/ts-dump", None), ("/sys/ts-dump", None)]
    ro = os.path.join(fx.dir, "readonly")
    os.makedirs(ro)
    os.chmod(ro, 0o555)
    os.chmod(fx.dir, 0o755)
    # root writes anywhere: the read-only folder is tried as nobody (setpriv), when this runs as root
    as_nobody = None
    if os.geteuid() == 0 and shutil.which("setpriv"):
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    if os.geteuid() != 0 or as_nobody:
        unwritable += [(os.path.join(ro, "out"), as_nobody), (ro, as_nobody)]
    for path, prefix in unwritable:
        cmd = (prefix or []) + [binary, "--plain", "--dump", path] + QUICK
        p = subprocess.run(cmd, capture_output=True, timeout=900, env=dict(os.environ, TS_COLUMNS="80"))
        err = p.stderr.decode("utf-8", "replace")
        lines = [l for l in err.splitlines() if l.strip()]
        res.record(p.returncode == 1 and len(lines) == 1 and "--dump" in lines[0] and sanitizer_clean(err),
                   f"--dump {path}{' (as nobody)' if prefix else ''}: an I/O failure",
                   f"exit {p.returncode}: {lines[0] if lines else '(no message)'}")
    os.chmod(ro, 0o755)
    # --dump where the disk fills up (RLIMIT_FSIZE makes every write past 4 kB fail with EFBIG)
    out = os.path.join(fx.dir, "dump_full")
    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    p = run(binary, ["--plain", "--dump", out] + QUICK, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=small_files)
    err = p.stderr.decode("utf-8", "replace")
    sizes_ok = True
    for name in os.listdir(out) if os.path.isdir(out) else []:
        path = os.path.join(out, name)
        if name.endswith(".npy"):
            sizes_ok &= npy_complete(path)
        else:
            sizes_ok &= name == "ts-dump-manifest.txt"
    wrote_big = p.returncode != 0
    # a run that wrote nothing big must say nothing but, at most, the budget's note on its time
    quiet = all(": note: " in l for l in err.strip().splitlines())
    res.record((wrote_big and "File too large" in err or p.returncode == 0 and quiet) and sizes_ok
               and sanitizer_clean(err), "--dump DIR with every file capped at 4 kB",
               f"exit {p.returncode}: {err.strip() or '(no message)'}; every .npy left is complete: {sizes_ok}")


def npy_complete(path):
    """The .npy file holds as many bytes as its header promises."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        return False
    hlen = data[8] | data[9] << 8
    header = data[10:10 + hlen].decode("latin-1")
    shape = eval(header.split("'shape': ")[1].split(")")[0] + ")")
    size = 1
    for d in shape:
        size *= d
    item = {"<f4": 4, "<i8": 8, "|b1": 1}[header.split("'descr': '")[1].split("'")[0]]
    return len(data) == 10 + hlen + size * item


def dump_cases(res, fx, binary):
    """--dump twice into one directory: the second run replaces the first, never mixes with it,
    and a symlink planted on a file the manifest lists is replaced, not followed."""
    out = os.path.join(fx.dir, "dump_twice")
    p1 = run(binary, ["--plain", "--dump", out] + QUICK, stdout=subprocess.DEVNULL)
    first = sorted(os.listdir(out)) if os.path.isdir(out) else []
    npys = [n for n in first if n.endswith(".npy")]
    if npys:
        os.remove(os.path.join(out, npys[0]))
        os.symlink(fx.victim, os.path.join(out, npys[0]))
    p2 = run(binary, ["--plain", "--dump", out, "--seed", "3"] + QUICK, stdout=subprocess.DEVNULL)
    second = sorted(os.listdir(out))
    manifest = open(os.path.join(out, "ts-dump-manifest.txt")).read() if "ts-dump-manifest.txt" in second else ""
    listed = sorted(l[5:] for l in manifest.splitlines() if l.startswith("file "))
    # a chapter whose --plain shows no tensor (ch11 prints progress lines) dumps none: then
    # both runs must still succeed and leave a manifest that lists no file
    dumps_nothing = p1.returncode == 0 and "ts-dump-manifest.txt" in first and not npys
    ok = (p1.returncode == 0 and p2.returncode == 0 and (len(npys) > 0 or dumps_nothing) and fx.victim_intact()
          and second == sorted(listed + ["ts-dump-manifest.txt"]) and "--seed 3" in manifest
          and not any(os.path.islink(os.path.join(out, n)) for n in second)
          and all(npy_complete(os.path.join(out, n)) for n in listed))
    res.record(ok, "--dump DIR twice, a symlink to a victim planted in between",
               f"exit {p1.returncode}/{p2.returncode}, {len(npys)} files, victim intact: {fx.victim_intact()}")
    # two runs started at once on one new directory: the lock lets one write; the other waits
    # for nothing and is refused (exit 2, one line) unless the first had already finished
    out = os.path.join(fx.dir, "dump_race")
    procs = [subprocess.Popen([binary, "--plain", "--dump", out, "--seed", str(s)] + QUICK, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for s in (1, 2)]
    errs = [p.communicate(timeout=900)[1].decode("utf-8", "replace").strip() for p in procs]
    codes = [p.returncode for p in procs]
    names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    manifest = open(os.path.join(out, "ts-dump-manifest.txt")).read() if "ts-dump-manifest.txt" in names else ""
    listed = sorted(l[5:] for l in manifest.splitlines() if l.startswith("file "))
    refusals_ok = all(c == 0 or (c == 2 and "another run" in e and len(e.splitlines()) == 1) for c, e in zip(codes, errs))
    ok = (0 in codes and refusals_ok and names == sorted(listed + ["ts-dump-manifest.txt"])
          and manifest.count("\ncommand ") == 1 and all(npy_complete(os.path.join(out, n)) for n in listed))
    res.record(ok, "--dump DIR by two runs started at once: one run's files under one manifest",
               f"exits {codes}: {' | '.join(e for e in errs if e) or 'no message'}")


def quick_flags(binary):
    """tests/cases/<chapter>.quick: one line of shell words (comments after #), or no file: none."""
    path = os.path.join(HERE, "cases", os.path.basename(binary) + ".quick")
    if not os.path.exists(path):
        return []
    lines = [l.split("#")[0].strip() for l in open(path, encoding="utf-8")]
    return shlex.split(" ".join(l for l in lines if l))


def with_quick(args):
    """ARGS after the quick flags it does not give itself (a case's own --steps wins over the quick one's)."""
    given = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    kept, i = [], 0
    while i < len(QUICK):
        flag = QUICK[i]
        takes_value = i + 1 < len(QUICK) and not QUICK[i + 1].startswith("--") and "=" not in flag
        if flag.split("=", 1)[0] not in given:
            kept += QUICK[i:i + 2] if takes_value else [flag]
        i += 2 if takes_value else 1
    return kept + args


def main():
    binary, *bad = args_or_usage(__doc__, 1)
    cases = list(GENERIC)
    if bad and os.path.exists(bad[0]):
        for line in open(bad[0], encoding="utf-8"):
            line = line.strip()
            if line and not line.startswith("#"):
                cases.append(line)
    good = []
    good_path = bad[0][:-4] + ".good" if bad and bad[0].endswith(".bad") else ""
    if good_path and os.path.exists(good_path):
        good = [l.strip() for l in open(good_path, encoding="utf-8") if l.strip() and not l.startswith("#")]
    QUICK[:] = quick_flags(binary)
    res = Results(os.path.basename(binary))
    fx = Fixture()
    try:
        help_text = run(binary, ["--help"], text=True).stdout
        for c in cases:
            bad_input(res, fx, binary, c, help_text)
        for g in good:
            good_input(res, fx, binary, g)
        io_cases(res, fx, binary)
        columns_cases(res, binary)
        dump_cases(res, fx, binary)
        h = run(binary, ["--help"], text=True)
        res.record(h.returncode == 0 and "--seed" in h.stdout, "--help", f"exit {h.returncode}")
        # A full default run (explained mode, colour off) must succeed: under the ASan/UBSan
        # build this is the chapter's memory-safety check.
        r = run(binary, ["--no-color", "--seed", "1"] + QUICK, text=True)
        ok = r.returncode == 0 and r.stdout.strip() != "" and sanitizer_clean(r.stderr)
        res.record(ok, "full run --seed 1", f"exit {r.returncode}" + ("" if ok else ": " + r.stderr[-2000:]))
        # the code: line names at most three entries (the step's line first), the rest behind --code-all
        code = [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("code: ")]
        long = [l for l in code if len(l.split(" · ")) > 4 or (len(l.split(" · ")) == 4 and "--code-all" not in l)]
        first = all(re.match(r"^code: chapters/\w+\.cpp:\d+", l) for l in code)
        res.record("--code-all" in h.stdout and code and not long and first,
                   "code: lines: the step's chapter line first, at most 3 entries (+ the count --code-all shows)",
                   f"{len(code)} code: lines; too long: {long[:1]}")
        # --color=always colours a pipe (for less -R); the piped default and --plain never do.
        # (Chapter::run decides for every chapter alike: the colour run is ch01's, the quickest.)
        plain_c = run(binary, ["--color=always", "--plain"] + QUICK, text=True)
        ok = "\033[" not in r.stdout and "\033[" not in plain_c.stdout and plain_c.returncode == 0
        if os.path.basename(binary).startswith("ch01"):
            c = run(binary, ["--color=always", "--seed", "1"], text=True)
            ok = ok and c.returncode == 0 and "\033[" in c.stdout
        res.record(ok, "colour: --color=always through a pipe; none by default when piped or with --plain",
                   f"exit {plain_c.returncode}")
        # --help names the kind of every value (N, X, DIR, FILE, TEXT); no number is called TEXT
        kinds = [l.split()[1] for l in h.stdout.splitlines() if l.strip().startswith("--") and len(l.split()) > 1
                 and l.split()[1].isupper()]
        numbers = [l.strip() for l in h.stdout.splitlines()
                   if l.strip().startswith(("--seed", "--steps", "--prompt", "--translate", "--d-model"))]
        ok = "N" in kinds and all(" TEXT" not in l.split("  ")[0] for l in numbers)
        res.record(ok, "--help: each value's kind (N, X, DIR, FILE, TEXT)", f"kinds {sorted(set(kinds))}")
        # TERM=dumb on a terminal: no colour (the escape sequences would show as
        # text); Chapter::run decides for every chapter alike, so ch01's run, the quickest, tries it
        if os.path.basename(binary).startswith("ch01"):
            master, slave = pty.openpty()
            env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
            d = subprocess.Popen([binary, "--seed", "1"] + QUICK, stdin=subprocess.DEVNULL, stdout=slave,
                                 stderr=subprocess.DEVNULL, env=dict(env, TERM="dumb", TS_COLUMNS="80"))
            os.close(slave)
            shown = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            os.close(master)
            d.wait(timeout=900)
            escapes = shown.count(b"\033[")
            res.record(d.returncode == 0 and escapes == 0, "TERM=dumb on a terminal: no colour",
                       f"exit {d.returncode}, {escapes} escape sequences")
        # --svg DIR --plain draws nothing: the folder holds only its manifest, and stderr says so
        out = os.path.join(fx.dir, "svg_plain")
        sp = run(binary, ["--plain", "--svg", out] + QUICK, text=True)
        ok = sp.returncode == 0 and "note: --svg" in sp.stderr and os.listdir(out) == ["ts-dump-manifest.txt"]
        res.record(ok, "--svg DIR --plain: an empty folder is said on stderr", f"exit {sp.returncode}: {sp.stderr.strip()}")
        # --lang zh and LANG=zh_CN.UTF-8: bad input is refused in Chinese, still one line and exit 2
        zh = run(binary, ["--lang", "zh", "--seed", "abc"])
        env_zh = subprocess.run([binary, "--seed", "abc"], capture_output=True,
                                env=dict(os.environ, LANG="zh_CN.UTF-8", LC_ALL="", LC_MESSAGES=""))
        msgs = [p.stderr.decode("utf-8", "replace").strip() for p in (zh, env_zh)]
        ok = all(p.returncode == 2 for p in (zh, env_zh)) and all("错误" in m and "\n" not in m for m in msgs)
        res.record(ok, "--lang zh / LANG=zh_CN.UTF-8: bad input refused in Chinese", " | ".join(msgs))
    finally:
        fx.close()
    print(f"{res.passed} passed, {res.failed} failed ({len(cases)} bad-input cases, {len(good)} valid odd inputs, "
          f"I/O and dump cases)")
    return 0 if res.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
