#!/usr/bin/env python3
"""ch11's --save / --load: a round trip gives the same translations; --load takes the model's
settings from the checkpoint (a flag that disagrees is refused naming both values); a truncated,
mismatched, inconsistent, altered or hostile checkpoint (NaN weights, a lying step, duplicate
keys, fractional or overlapping offsets, trailing bytes, a FIFO, a device, a 5 GiB sparse file,
an older format), or a symlink target, is refused with one line on stderr and exit 2 at once,
and leaves nothing half-written.

usage: train_checkpoint_test.py BUILD/ch11_training
"""
import json
import os
import shutil
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_steps import Checkpoints, check, main_of, read_st, refused, run, write_st  # noqa: E402


def answer_lines(text):
    return [l for l in text.splitlines() if l.startswith("held-out exact match") or l.startswith("预测输出")]


def altered(src, tmp, name, edit, which="model.safetensors"):
    """A copy of the checkpoint `src` whose file `which` is rewritten by edit(header, data)."""
    d = os.path.join(tmp, name)
    shutil.copytree(src, d)
    header, data = read_st(os.path.join(d, which))
    header, data = edit(header, data)
    write_st(os.path.join(d, which), header, data)
    return d


def first_tensor(header):
    return sorted((v["data_offsets"][0], k) for k, v in header.items() if k != "__metadata__")[0][1]


def set_meta(key, value):
    def edit(h, data):
        h["__metadata__"][key] = value
        return h, data
    return edit


def hostile_cases(binary, tmp, d):
    """Altered and hostile checkpoints, each refused at once with one line and exit 2."""
    f32 = lambda x: struct.pack("<f", x)
    name = None

    def poke(value, which_first=True):
        def edit(h, data):
            nonlocal name
            name = first_tensor(h)
            b = h[name]["data_offsets"][0]
            return h, data[:b] + f32(value) + data[b + 4:]
        return edit
    refused(binary, "a NaN weight", ["--load", altered(d, tmp, "nan", poke(float("nan")))], "NaN")
    refused(binary, "an infinite Adam moment", ["--load", altered(d, tmp, "inf", poke(float("inf")),
                                                                    "optimizer.safetensors")], "infinity")
    for i, step in enumerate(["-5", "9223372036854775807", "12abc", " 3", "3.0", ""]):
        refused(binary, f"step {step!r} in the metadata", ["--load", altered(d, tmp, f"step{i}", set_meta("step", step))],
                "step")
    refused(binary, "an older format (no ts_checkpoint)",
            ["--load", altered(d, tmp, "old", lambda h, data: ({k: v for k, v in h.items() if k != "__metadata__"}
                                                              | {"__metadata__": {k: v for k, v in h["__metadata__"].items()
                                                                                  if k != "ts_checkpoint"}}, data))],
            "--save it with this version")
    refused(binary, "heads that do not divide d_model", ["--load", altered(d, tmp, "heads", set_meta("heads", "5"))])
    refused(binary, "norm 'sideways'", ["--load", altered(d, tmp, "norm", set_meta("norm", "sideways"))])

    def duplicate(h, data):
        text = json.dumps(h)
        return (text[:-1] + ', "__metadata__": ' + json.dumps(h["__metadata__"]) + "}").encode(), data
    refused(binary, "a duplicate key in the header", ["--load", altered(d, tmp, "dup", duplicate)], "twice")

    def fractional(key, index):
        def edit(h, data):
            t = first_tensor(h)
            text = json.dumps(h).replace(json.dumps(h[t]), json.dumps(h[t]).replace(
                f'"{key}": {json.dumps(h[t][key])}',
                f'"{key}": ' + json.dumps(h[t][key]).replace(str(h[t][key][index]), f"{h[t][key][index]}.0", 1)))
            return text.encode(), data
        return edit
    refused(binary, "fractional data_offsets", ["--load", altered(d, tmp, "fracoff", fractional("data_offsets", 1))],
            "integer")
    refused(binary, "a fractional shape", ["--load", altered(d, tmp, "fracshape", fractional("shape", 0))], "integer")

    def overlap(h, data):
        order = sorted((v["data_offsets"][0], k) for k, v in h.items() if k != "__metadata__")
        a, b = order[0][1], order[1][1]
        h[b]["data_offsets"] = [h[b]["data_offsets"][0] - 4, h[b]["data_offsets"][1] - 4]
        return h, data
    refused(binary, "overlapping tensors", ["--load", altered(d, tmp, "overlap", overlap)], "overlaps")
    refused(binary, "trailing bytes after the data",
            ["--load", altered(d, tmp, "trail", lambda h, data: (h, data + b"\0" * 16))], "follow the last tensor")
    refused(binary, "a NUL after the JSON",
            ["--load", altered(d, tmp, "nul", lambda h, data: (json.dumps(h).encode() + b"\0", data))], "NUL")

    def negative(h, data):
        h[first_tensor(h)]["data_offsets"][0] = -4
        return h, data
    refused(binary, "a negative offset", ["--load", altered(d, tmp, "neg", negative)], "non-negative")

    def huge(h, data):
        h[first_tensor(h)]["shape"] = [2 ** 40, 2 ** 40]
        return h, data
    refused(binary, "a huge shape", ["--load", altered(d, tmp, "huge", huge)], "larger than the file")

    def dtype_lie(h, data):
        t = first_tensor(h)
        h[t]["dtype"] = "I64"
        h[t]["shape"] = [(h[t]["data_offsets"][1] - h[t]["data_offsets"][0]) // 8]
        return h, data
    refused(binary, "a dtype lie (F32 bytes called I64)", ["--load", altered(d, tmp, "dtype", dtype_lie)], "not F32")

    def renamed(h, data):
        t = first_tensor(h)
        h["encoder.layers.9.oops"] = h.pop(t)
        return h, data
    refused(binary, "a tensor under a wrong name", ["--load", altered(d, tmp, "renamed", renamed)])

    def extra(h, data):
        h["extra.weight"] = {"dtype": "F32", "shape": [1], "data_offsets": [len(data), len(data) + 4]}
        return h, data + f32(1.0)
    refused(binary, "an extra tensor", ["--load", altered(d, tmp, "extra", extra)], "extra.weight")

    def negative_v(h, data):
        t = sorted((v["data_offsets"][0], k) for k, v in h.items() if k.endswith(".exp_avg_sq"))[0][1]
        b, e = h[t]["data_offsets"]
        data = data[:b] + f32(-1.0) + data[b + 4:]
        h["__metadata__"]["crc32:" + t] = "%08x" % zlib.crc32(data[b:e])  # a writer that checksums what it wrote
        return h, data
    refused(binary, "a negative exp_avg_sq", ["--load", altered(d, tmp, "negv", negative_v, "optimizer.safetensors")],
            "negative")
    # not a regular file: refused at once, never read or waited on
    for label, make in (("a FIFO", lambda p: os.mkfifo(p)), ("a directory", lambda p: os.makedirs(p)),
                        ("a symlink to /dev/zero", lambda p: os.symlink("/dev/zero", p)),
                        ("a 5 GiB sparse file", lambda p: os.truncate(open(p, "wb").name, 5 << 30))):
        x = os.path.join(tmp, "x_" + label.split()[-1].replace("/", "_"))
        shutil.copytree(d, x)
        os.remove(os.path.join(x, "model.safetensors"))
        make(os.path.join(x, "model.safetensors"))
        refused(binary, f"model.safetensors is {label}", ["--load", x],
                "bytes, more than" if "sparse" in label else "not a regular file")
        shutil.rmtree(x)
    # the folder itself
    plain = os.path.join(tmp, "plain_file")
    open(plain, "w").close()
    refused(binary, "--load of a file, not a folder", ["--load", plain], "not a folder")
    refused(binary, "--save into a file, not a folder", ["--steps", "1", "--save", plain], "not a folder")
    stranger = os.path.join(tmp, "stranger")
    os.makedirs(stranger)
    open(os.path.join(stranger, "notes.txt"), "w").write("mine")
    refused(binary, "--save into a folder holding another file", ["--steps", "1", "--save", stranger], "notes.txt")
    check("  the other file stays", open(os.path.join(stranger, "notes.txt")).read() == "mine")
    if os.geteuid() != 0:
        ro = os.path.join(tmp, "readonly")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        # the system refusing the write is an I/O failure: exit 1 (as /proc or a full disk), one line
        p = run(binary, ["--steps", "1", "--save", ro])
        err = p.stderr.decode("utf-8", "replace") if isinstance(p.stderr, bytes) else p.stderr
        check("--save into a read-only folder: exit 1 (an I/O failure), one line naming it",
              p.returncode == 1 and "writable" in err and len(err.strip().splitlines()) == 1, err)
        os.chmod(ro, 0o755)
    else:
        print("SKIP    --save into a read-only folder: root may write anywhere")


def settings_cases(binary, tmp):
    """--load takes the settings the checkpoint was saved with; a flag that disagrees is refused."""
    d = os.path.join(tmp, "h8post")
    saved = run(binary, ["--steps", "30", "--heads", "8", "--post-ln", "--save", d])
    check("--save with --heads 8 --post-ln", saved.returncode == 0, saved.stderr)
    plain = run(binary, ["--load", d])
    explicit = run(binary, ["--load", d, "--heads", "8", "--post-ln"])
    check("--load without flags adopts heads 8 and post-LN (the same score as with the flags)",
          plain.returncode == 0 and "h=8, dropout=" in plain.stdout and "; post-LN; dropout" in plain.stdout and
          answer_lines(plain.stdout) == answer_lines(explicit.stdout) == answer_lines(saved.stdout),
          f"{answer_lines(plain.stdout)} vs {answer_lines(saved.stdout)}")
    refused(binary, "--load with --heads 4 (saved with 8)", ["--load", d, "--heads", "4"], "--heads 8")
    refused(binary, "--load with --d-ff 128 (saved with 256)", ["--load", d, "--d-ff", "128"], "--d-ff 256")
    pre = os.path.join(tmp, "pre")
    run(binary, ["--steps", "1", "--save", pre])
    refused(binary, "--load --post-ln of a pre-LN checkpoint", ["--load", pre, "--post-ln"], "pre-LN")
    refused(binary, "--load --no-scale of a scaled checkpoint", ["--load", pre, "--no-scale"], "--no-scale")


def checks(binary, tmp):
    c = Checkpoints(binary, tmp)
    first = c.save(40, ["--translate", "1234"])
    again = run(binary, ["--load", c.d, "--translate", "1234"])
    check("--load gives the same held-out score and translations",
          again.returncode == 0 and answer_lines(again.stdout) == answer_lines(first.stdout),
          f"{answer_lines(first.stdout)} vs {answer_lines(again.stdout)}")
    c.faults(10)
    check("no temporary folder left beside the checkpoints", not [n for n in os.listdir(tmp) if ".ts-save-" in n],
          str(os.listdir(tmp)))
    hostile_cases(binary, tmp, c.d)
    settings_cases(binary, tmp)


if __name__ == "__main__":
    sys.exit(main_of("ts_ckpt_", lambda tmp: checks(sys.argv[1], tmp)))
