"""PyTorch / numpy twin of the line width in src/exact/print.cpp and tfprint.cpp: what
print(t) shows under torch.set_printoptions(linewidth=W), and numpy's array_str (which
TensorFlow's str() uses) under np.set_printoptions(linewidth=W), for narrow and wide W.

Usage: /usr/bin/python3 tests/twins/print_width_reference.py DIR
Writes DIR/cases.json: {"torch": [{"dtype", "shape", "values" (hex floats or ints),
"requires_grad", "linewidth", "printed"}], "numpy": [{"shape", "values" (hex float32),
"linewidth", "printed"}]}. The cases are drawn from a fixed seed: 1-D, 2-D, 3-D, summarised
(more than 1000 values, '...'), negative, sci mode, integers, a grad suffix.
"""
import json
import os
import sys

import numpy as np
import torch

WIDTHS = [20, 33, 40, 57, 63, 80, 101]


def shapes_and_values(rng):
    """(name, shape, float64 values) for each kind of tensor the chapters print."""
    out = []
    out.append(("1-D", (30,), rng.standard_normal(30)))
    out.append(("2-D", (5, 8), rng.standard_normal(40)))
    out.append(("3-D", (2, 3, 7), rng.standard_normal(42) * 10))
    out.append(("4-D", (2, 2, 2, 9), rng.standard_normal(72)))
    out.append(("positive", (4, 12), rng.random(48)))
    out.append(("negative", (3, 11), -rng.random(33) * 100))
    out.append(("sci", (4, 9), rng.standard_normal(36) * 10.0 ** rng.integers(-9, 6, 36)))
    out.append(("sci 1-D", (25,), rng.standard_normal(25) * 1e-6))
    out.append(("summarised 1-D", (2000,), rng.standard_normal(2000)))
    out.append(("summarised 2-D", (40, 50), rng.standard_normal(2000)))
    out.append(("summarised 3-D", (3, 20, 30), rng.standard_normal(1800) * 1e3))
    out.append(("big", (3, 10), rng.standard_normal(30) * 1e9))
    return out


def main():
    rng = np.random.default_rng(20261126)
    cases = {"torch": [], "numpy": []}
    for name, shape, vals in shapes_and_values(rng):
        f32 = np.asarray(vals, dtype=np.float32)
        for w in WIDTHS:
            for requires_grad in (False, True):
                t = torch.tensor(f32).reshape(shape)
                if requires_grad:
                    t.requires_grad_(True)
                torch.set_printoptions(linewidth=w)
                printed = str(t)
                torch.set_printoptions(profile="default")
                cases["torch"].append({"name": name, "dtype": "float32", "shape": list(shape),
                                       "values": [float(v).hex() for v in f32], "requires_grad": requires_grad,
                                       "linewidth": w, "printed": printed})
            ints = torch.tensor(np.round(vals * 100).astype(np.int64)).reshape(shape)
            torch.set_printoptions(linewidth=w)
            printed = str(ints)
            torch.set_printoptions(profile="default")
            cases["torch"].append({"name": name + " int64", "dtype": "int64", "shape": list(shape),
                                   "values": [int(v) for v in ints.reshape(-1).tolist()], "requires_grad": False,
                                   "linewidth": w, "printed": printed})
            if name.startswith("big"):
                continue  # numpy's array_str of these is covered by the others' formats
            saved = np.get_printoptions()
            np.set_printoptions(linewidth=w)
            printed = str(f32.reshape(shape))  # np.array_str, as tf.Tensor's str() calls it
            np.set_printoptions(**saved)
            cases["numpy"].append({"name": name, "shape": list(shape), "values": [float(v).hex() for v in f32],
                                   "linewidth": w, "printed": printed})
    with open(os.path.join(sys.argv[1], "cases.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    main()
