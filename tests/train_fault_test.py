#!/usr/bin/env python3
"""--save under faults (ch11, ch12 and ch13 share the checkpoint folder code, and each runs this
test): the folder afterwards holds the previous checkpoint whole or the new one whole, never a
mix, and no temporary folder is left once the next run has started.

  1. a kill (SIGKILL) at each step of the save (TS_TEST_KILL_AT, a test-only hook in
     src/train/checkpoint.cpp): before the swap the old checkpoint stays, after it the new one;
     the next --save removes the leftover;
  2. SIGTERM during the save (held until the save ends: the new checkpoint, nothing left) and
     during training (the old checkpoint stays);
  3. two runs saving into one folder at once: both succeed, the folder holds one of them whole;
  4. a full disk (a 8 MB tmpfs, root only): exit 1 naming the failure, the old checkpoint intact;
  5. a filesystem without RENAME_EXCHANGE (TS_TEST_NO_EXCHANGE=1 takes that route): the save
     moves the previous folder aside, then the new one in; a kill between the two leaves no
     folder, and the next --load puts the previous checkpoint back and loads it.
Cases that cannot run here (not root, no tmpfs) are reported as SKIP with the reason, and the
script then exits 77 (ctest: Skipped), never a silent pass.

usage: train_fault_test.py BUILD/ch11_training (or ch12_gpt, ch13_classifier)
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from script_args import args_or_usage
import time

results, skipped = [], []


def check(label, ok, detail=""):
    print(f"{'OK    ' if ok else 'NOT OK'}  {label}" + (f": {detail}" if detail and not ok else ""))
    results.append(ok)


def skip(label, why):
    print(f"SKIP    {label}: {why}")
    skipped.append(label)


def run(binary, args, env=None, **kw):
    return subprocess.run([binary, "--no-color", "--plain"] + args, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, **(env or {})), **kw)


def digest(folder):
    """The checkpoint's two files, hashed; None if the folder is not exactly those two files."""
    if not os.path.isdir(folder) or sorted(os.listdir(folder)) != ["model.safetensors", "optimizer.safetensors"]:
        return None
    return tuple(hashlib.sha256(open(os.path.join(folder, f), "rb").read()).hexdigest()
                 for f in ("model.safetensors", "optimizer.safetensors"))


def step_of(folder):
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))["__metadata__"]["step"]


def leftovers(parent):
    return [n for n in os.listdir(parent) if ".ts-save-" in n or ".ts-old-" in n]


def loads(binary, folder):
    p = run(binary, ["--load", folder])
    return p.returncode == 0, p.stderr.strip()


def main():
    binary, = args_or_usage(__doc__, 1)[:1]
    tmp = tempfile.mkdtemp(prefix="ts_fault_")
    try:
        ck = os.path.join(tmp, "ck")
        first = run(binary, ["--steps", "2", "--seed", "1", "--save", ck])
        check("a first checkpoint (2 steps)", first.returncode == 0 and digest(ck) is not None, first.stderr)
        old = digest(ck)
        # 1) SIGKILL at each step of the save
        for point, new_expected in (("folder", False), ("model", False), ("optimizer", False), ("swap", False),
                                    ("swapped", True)):
            p = run(binary, ["--steps", "3", "--seed", "2", "--save", ck], env={"TS_TEST_KILL_AT": point})
            now = digest(ck)
            whole = now == old if not new_expected else (now is not None and now != old and step_of(ck) == "3")
            ok, err = loads(binary, ck)
            check(f"SIGKILL at '{point}': exit {p.returncode}, the folder holds the "
                  f"{'new' if new_expected else 'previous'} checkpoint whole and loads",
                  p.returncode == -signal.SIGKILL and whole and ok, f"exit {p.returncode}, {err}")
            old = now
            # the next save removes what the killed one left beside the folder
            again = run(binary, ["--load", ck, "--save", ck])
            check(f"  after it, --load + --save into the same folder works and leaves no temporary folder",
                  again.returncode == 0 and not leftovers(tmp) and digest(ck) is not None,
                  f"exit {again.returncode} {again.stderr.strip()}, left: {leftovers(tmp)}")
            old = digest(ck)
        # 2) SIGTERM during the save (held until it ends) and during training (the old one stays)
        p = run(binary, ["--steps", "4", "--seed", "3", "--save", ck], env={"TS_TEST_KILL_AT": "model:TERM"})
        check("SIGTERM during the save: the save finishes first, then the run ends by SIGTERM",
              p.returncode == -signal.SIGTERM and digest(ck) not in (None, old) and step_of(ck) == "4"
              and not leftovers(tmp), f"exit {p.returncode}, step {step_of(ck)}, left: {leftovers(tmp)}")
        old = digest(ck)
        proc = subprocess.Popen([binary, "--plain", "--steps", "1000000", "--save", ck], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        check("SIGTERM during training: the run stops, the previous checkpoint stays whole",
              proc.returncode == -signal.SIGTERM and digest(ck) == old and not leftovers(tmp),
              f"exit {proc.returncode}, left: {leftovers(tmp)}")
        # 3) two saves into one folder at once
        procs = [subprocess.Popen([binary, "--plain", "--steps", str(s), "--seed", str(s), "--save", ck],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for s in (5, 6)]
        codes = [p.wait(timeout=900) for p in procs]
        ok, err = loads(binary, ck)
        check("two runs saving into one folder at once: both succeed, one checkpoint whole, nothing left",
              codes == [0, 0] and digest(ck) is not None and step_of(ck) in ("5", "6") and ok and not leftovers(tmp),
              f"exits {codes}, {err}, left: {leftovers(tmp)}")
        # 4) a full disk
        full_disk(binary)
        # 5) no RENAME_EXCHANGE: two renames, mended after a kill between them
        no_exchange(binary, tmp, ck)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = results.count(False)
    print(f"{len(results) - bad} passed, {bad} failed, {len(skipped)} skipped")
    if bad:
        return 1
    return 77 if skipped else 0


def no_exchange(binary, tmp, ck):
    old = digest(ck)
    no_x = {"TS_TEST_NO_EXCHANGE": "1"}
    p = run(binary, ["--steps", "2", "--seed", "7", "--save", ck], env=no_x)
    check("without RENAME_EXCHANGE: the save replaces the folder, nothing left beside it",
          p.returncode == 0 and digest(ck) not in (None, old) and not leftovers(tmp),
          f"exit {p.returncode} {p.stderr.strip()}, left: {leftovers(tmp)}")
    old = digest(ck)
    p = run(binary, ["--steps", "3", "--seed", "8", "--save", ck], env=dict(no_x, TS_TEST_KILL_AT="aside"))
    aside = [n for n in os.listdir(tmp) if ".ts-old-" in n]
    check("  SIGKILL between the two renames: no folder, the previous checkpoint whole beside it",
          p.returncode == -signal.SIGKILL and not os.path.exists(ck) and len(aside) == 1
          and digest(os.path.join(tmp, aside[0])) == old, f"exit {p.returncode}, listing {os.listdir(tmp)}")
    ok, err = loads(binary, ck)
    check("  the next --load puts the previous checkpoint back and loads it",
          ok and digest(ck) == old and not [n for n in os.listdir(tmp) if ".ts-old-" in n], err)
    again = run(binary, ["--load", ck, "--save", ck], env=no_x)
    check("  and --save into it works again, nothing left", again.returncode == 0 and digest(ck) is not None
          and not leftovers(tmp), f"exit {again.returncode} {again.stderr.strip()}, left: {leftovers(tmp)}")


def full_disk(binary):
    label = "a full disk during --save"
    if os.geteuid() != 0:
        return skip(label, "mounting a small tmpfs needs root")
    mnt = tempfile.mkdtemp(prefix="ts_tmpfs_")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt], capture_output=True).returncode != 0:
        os.rmdir(mnt)
        return skip(label, "cannot mount a tmpfs here (no privilege in this container?)")
    try:
        ck = os.path.join(mnt, "ck")
        first = run(binary, ["--steps", "2", "--seed", "1", "--save", ck])
        old = digest(ck)
        check("a first checkpoint on the 8 MB tmpfs", first.returncode == 0 and old is not None, first.stderr)
        # leave room for the new model file but not its optimizer (the case)
        st = os.statvfs(mnt)
        free = st.f_bavail * st.f_frsize
        model = os.path.getsize(os.path.join(ck, "model.safetensors"))
        with open(os.path.join(mnt, "filler"), "wb") as f:
            f.write(b"\0" * max(0, free - model - 256 * 1024))
        p = run(binary, ["--steps", "3", "--seed", "2", "--save", ck])
        err = p.stderr.strip()
        check("--save on a full disk: exit 1, one line naming the failure", p.returncode == 1 and
              "No space left on device" in err and len(err.splitlines()) == 1, f"exit {p.returncode}: {err}")
        check("  the previous checkpoint is whole, nothing else left on the disk",
              digest(ck) == old and sorted(os.listdir(mnt)) == ["ck", "filler"], str(os.listdir(mnt)))
        os.remove(os.path.join(mnt, "filler"))
        ok, err = loads(binary, ck)
        check("  and it loads", ok, err)
    finally:
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)


if __name__ == "__main__":
    sys.exit(main())
