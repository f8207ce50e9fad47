"""The --save / --load checks ch11, ch12 and ch13 share (tests/*_checkpoint_test.py).

Each chapter's test saves a checkpoint, checks its own round trip, then runs the same refusals
through a Checkpoints session: a truncated model file, a missing optimizer file, the optimizer of
another save, a symlink where a file would go, a tensor that no longer matches its checksum. Every check prints one OK / NOT OK line and lands in
`results`; finish() prints the count and gives the exit code.
"""
import json
import os
import shutil
import struct
import subprocess
import tempfile

results = []


def run(binary, args, timeout=900):
    # TS_COLUMNS=0: each line as the chapter writes it (the checks find whole lines), whoever runs
    # the test and whatever terminal /dev/tty is
    return subprocess.run([binary, "--no-color"] + args, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, TS_COLUMNS="0"))


def check(label, ok, detail=""):
    print(f"{'OK    ' if ok else 'NOT OK'}  {label}" + (f": {detail}" if detail and not ok else ""))
    results.append(ok)


def refused(binary, label, args, expect=None):
    """args must be refused at once: exit 2 and one line on stderr naming an error (and `expect`)."""
    try:
        p = run(binary, args, timeout=60)
    except subprocess.TimeoutExpired:
        check(label, False, "still running after 60 s (it hangs)")
        return
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    ok = p.returncode == 2 and len(lines) == 1 and "error" in lines[0] and (expect is None or expect in lines[0])
    print(f"{'OK    ' if ok else 'NOT OK'}  {label} -> exit {p.returncode}: {lines[0] if lines else '(no message)'}")
    results.append(ok)


def read_st(path):
    """A safetensors file's header (parsed JSON) and its data bytes."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]), data[8 + n:]


def write_st(path, header, data):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + data)


def step_of(path):
    """The Adam step a safetensors file's metadata records."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))["__metadata__"]["step"]


def finish():
    """Print the count of passed and failed checks; the exit code is 1 if any failed."""
    bad = results.count(False)
    print(f"{len(results) - bad} passed, {bad} failed")
    return 0 if bad == 0 else 1


class Checkpoints:
    """One chapter binary's checkpoints in a temporary folder: `d` the first save, `d2` its resumed copy.
    `plain` are the flags every run that trains is given (ch12: --plain)."""

    def __init__(self, binary, tmp, plain=()):
        self.binary, self.tmp, self.plain = binary, tmp, list(plain)
        self.d = os.path.join(tmp, "ckpt")
        self.d2 = os.path.join(tmp, "resumed")
        self.steps = 0

    def copy(self, name):
        path = os.path.join(self.tmp, name)
        shutil.copytree(self.d, path)
        return path

    def save(self, steps, extra=()):
        """Train `steps` steps and --save into d: exit 0 and exactly the two files."""
        self.steps = steps
        first = run(self.binary, self.plain + ["--steps", str(steps), "--save", self.d] + list(extra))
        check(f"--save after {steps} steps", first.returncode == 0, first.stderr)
        check("the folder holds exactly the two files",
              sorted(os.listdir(self.d)) == ["model.safetensors", "optimizer.safetensors"], str(os.listdir(self.d)))
        return first

    def resume(self, more):
        """--load d and train `more` steps into d2: Adam's step goes on from the saved one."""
        r = run(self.binary, self.plain + ["--load", self.d, "--steps", str(more), "--save", self.d2])
        end = self.steps + more
        check(f"--load + --steps {more} resumes at step {self.steps} and saves step {end}",
              r.returncode == 0 and step_of(os.path.join(self.d2, "model.safetensors")) == str(end), r.stderr)

    def truncated(self):
        """A model file cut 100 bytes short, then cut to 6 bytes (shorter than its length field)."""
        mp = os.path.join(self.copy("truncated"), "model.safetensors")
        with open(mp, "r+b") as f:
            f.truncate(os.path.getsize(mp) - 100)
        refused(self.binary, "--load of a truncated checkpoint", ["--load", os.path.dirname(mp)])
        with open(mp, "r+b") as f:
            f.truncate(6)
        refused(self.binary, "--load of a 6-byte model file", ["--load", os.path.dirname(mp)])

    def missing(self):
        m = self.copy("missing")
        os.remove(os.path.join(m, "optimizer.safetensors"))
        refused(self.binary, "--load without optimizer.safetensors", ["--load", m])

    def mismatched(self):
        """A size flag that contradicts the checkpoint (saved with the defaults, width 64 and 2 layers)."""
        refused(self.binary, "--load into a wider model (wrong shapes)", ["--load", self.d, "--d-model", "32"],
                "--d-model 64")
        refused(self.binary, "--load into a deeper model (missing keys)", ["--load", self.d, "--layers", "3"],
                "--layers 2")
        refused(self.binary, "--load into a shallower model (extra keys)", ["--load", self.d, "--layers", "1"],
                "--layers 2")

    def mixed(self):
        """d's model with d2's optimizer: two saves, refused."""
        mix = self.copy("mixed")
        shutil.copy(os.path.join(self.d2, "optimizer.safetensors"), os.path.join(mix, "optimizer.safetensors"))
        refused(self.binary, "--load of a model and an optimizer from two saves", ["--load", mix])

    def checksummed(self):
        """Each tensor's CRC-32 in its file's metadata, checked at --load: one byte flipped, one weight
        set to a finite 1e30, a checksum removed -> refused naming the tensor; a checkpoint with no
        checksums at all (saved before them) loads, said once on stderr."""
        def edit(name, change, which="model.safetensors"):
            d = self.copy(name)
            path = os.path.join(d, which)
            header, data = read_st(path)
            tensor = sorted((v["data_offsets"][0], k) for k, v in header.items() if k != "__metadata__")[-1][1]
            header, data = change(header, data, tensor)
            write_st(path, header, data)
            return d, tensor

        def flip(h, data, t):
            b = h[t]["data_offsets"][0] + 1
            return h, data[:b] + bytes([data[b] ^ 0x01]) + data[b + 1:]
        d, t = edit("flipped", flip)
        refused(self.binary, "--load of a model with one byte flipped", ["--load", d], t)

        def huge(h, data, t):
            b = h[t]["data_offsets"][0]
            return h, data[:b] + struct.pack("<f", 1e30) + data[b + 4:]
        d, t = edit("huge_weight", huge)
        refused(self.binary, "--load of a model with one weight set to 1e30", ["--load", d], "checksum")
        d, t = edit("flipped_moment", flip, "optimizer.safetensors")
        refused(self.binary, "--load of an optimizer with one byte flipped", ["--load", d], t)

        def drop_one(h, data, t):
            del h["__metadata__"]["crc32:" + t]
            return h, data
        d, t = edit("one_checksum_gone", drop_one)
        refused(self.binary, "--load of a model with one checksum removed", ["--load", d], t)

        old = self.copy("no_checksums")
        for which in ("model.safetensors", "optimizer.safetensors"):
            path = os.path.join(old, which)
            header, data = read_st(path)
            header["__metadata__"] = {k: v for k, v in header["__metadata__"].items() if not k.startswith("crc32:")}
            write_st(path, header, data)
        r = run(self.binary, self.plain + ["--load", old])
        notes = [l for l in r.stderr.splitlines() if "checksums" in l]
        check("--load of a checkpoint without checksums (an older one) works and says so once",
              r.returncode == 0 and len(notes) == 1, f"exit {r.returncode}, stderr {r.stderr!r}")

    def faults(self, more):
        """The checks every trained chapter's checkpoints get, after save(): resume by `more` steps, a
        truncated file, changed bytes, a missing file, contradicting size flags, two saves mixed, a
        symlink. Chapter-specific refusals go in the chapter's own test."""
        self.resume(more)
        self.truncated()
        self.checksummed()
        self.missing()
        self.mismatched()
        self.mixed()
        self.symlinked()

    def symlinked(self):
        """--save over a symlink is refused; the link and its target stay as they were."""
        s = os.path.join(self.tmp, "symlinked")
        os.makedirs(s)
        target = os.path.join(self.tmp, "elsewhere.bin")
        open(target, "wb").write(b"keep me")
        os.symlink(target, os.path.join(s, "model.safetensors"))
        refused(self.binary, "--save over a symlink", ["--steps", "1", "--save", s])
        check("the symlink and its target are untouched, no temporary file left",
              os.path.islink(os.path.join(s, "model.safetensors")) and open(target, "rb").read() == b"keep me"
              and sorted(os.listdir(s)) == ["model.safetensors"], str(os.listdir(s)))


def main_of(prefix, body):
    """Run body(tmp) in a fresh temporary folder, remove it, then finish()."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        body(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()
