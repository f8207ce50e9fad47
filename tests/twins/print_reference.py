"""PyTorch twin of src/exact/print.cpp: what torch 1.13 prints for given tensors, floats, sizes, modules.

Usage: /usr/bin/python3 tests/twins/print_reference.py IN.json OUT.json

IN.json = {
  "tensors": [{"dtype": "float32"|"float64"|"int64"|"int32"|"uint8"|"bool", "shape": [...],
               "values": [...],          # floats as hex strings ("0x1.8p+1", "-0x0p+0", "inf", "nan"),
                                         # ints as JSON ints, bools as JSON bools
               "requires_grad": bool,    # optional: a leaf that requires grad
               "grad_fn": "ViewBackward0" | "MulBackward0" | "CloneBackward0"}],  # optional
  "floats":  ["0x1.999999999999ap-4", ...],     # -> repr(float)
  "sizes":   [[1, 5, 768], ...],                # -> str(torch.Size(...))
  "modules": [{"kind": "linear", "in": 768, "out": 64, "bias": true}, ...],  # -> repr(module)
  "np_arrays": [{"shape": [...], "values": [hex floats]}, ...]   # float32 -> numpy.array_str
}
OUT.json = {"tensors": [str, ...], "floats": [...], "sizes": [...], "modules": [...], "np_arrays": [...]}
"""
import json
import sys

import numpy as np
import torch
from torch import nn

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
    "int32": torch.int32, "uint8": torch.uint8, "bool": torch.bool,
}


def make_tensor(case):
    dtype = DTYPES[case["dtype"]]
    values = case["values"]
    if dtype.is_floating_point:
        values = [float.fromhex(v) for v in values]  # exact: no decimal round trip
    t = torch.tensor(values, dtype=dtype).reshape(case["shape"])
    grad_fn = case.get("grad_fn")
    if grad_fn or case.get("requires_grad"):
        t.requires_grad_(True)
    if grad_fn:
        # ops that keep every value (and the sign of zero) bit for bit
        make = {"ViewBackward0": lambda x: x.view(x.shape),
                "MulBackward0": lambda x: x * 1,
                "CloneBackward0": lambda x: x.clone()}[grad_fn]
        t = make(t)
        assert type(t.grad_fn).__name__ == grad_fn, type(t.grad_fn).__name__
    return t


def make_module(spec):
    kind = spec["kind"]
    if kind == "linear":
        return nn.Linear(spec["in"], spec["out"], bias=spec["bias"])
    if kind == "embedding":
        return nn.Embedding(spec["n"], spec["d"], padding_idx=spec.get("padding_idx"))
    if kind == "layer_norm":
        return nn.LayerNorm(spec["d"], eps=float.fromhex(spec["eps"]))
    if kind == "dropout":
        return nn.Dropout(float.fromhex(spec["p"]))
    if kind == "gelu":
        return nn.GELU()
    if kind == "relu":
        return nn.ReLU()
    if kind == "softmax":
        return nn.Softmax(dim=spec["dim"])
    if kind == "list":
        return nn.ModuleList([make_module(s) for s in spec["items"]])
    if kind == "custom":  # a user module: class name + named children
        m = type(spec["name"], (nn.Module,), {})()
        for key, child in spec["children"]:
            m.add_module(key, make_module(child))
        return m
    raise ValueError(kind)


def module_list_repr_torch2(self):
    """torch 2.x's ModuleList.__repr__ (torch/nn/modules/container.py, BSD licence): a run of
    children with equal reprs is one line "(a-b): n x repr". torch 1.13 prints every child."""
    list_of_reprs = [repr(item) for item in self]
    if len(list_of_reprs) == 0:
        return self._get_name() + "()"
    start_end_indices = [[0, 0]]
    repeated_blocks = [list_of_reprs[0]]
    for i, r in enumerate(list_of_reprs[1:], 1):
        if r == repeated_blocks[-1]:
            start_end_indices[-1][1] += 1
            continue
        start_end_indices.append([i, i])
        repeated_blocks.append(r)
    lines = []
    main_str = self._get_name() + "("
    for (start_id, end_id), b in zip(start_end_indices, repeated_blocks):
        local_repr = f"({start_id}): {b}"
        if start_id != end_id:
            n = end_id - start_id + 1
            local_repr = f"({start_id}-{end_id}): {n} x {b}"
        local_repr = nn.modules.module._addindent(local_repr, 2)
        lines.append(local_repr)
    main_str += "\n  " + "\n  ".join(lines) + "\n"
    main_str += ")"
    return main_str


def collapsed_repr(module):
    saved = nn.ModuleList.__repr__
    nn.ModuleList.__repr__ = module_list_repr_torch2
    try:
        return repr(module)
    finally:
        nn.ModuleList.__repr__ = saved


def main():
    with open(sys.argv[1]) as f:
        req = json.load(f)
    out = {
        "tensors": [str(make_tensor(c)) for c in req.get("tensors", [])],
        "floats": [repr(float.fromhex(h)) for h in req.get("floats", [])],
        "sizes": [str(torch.Size(s)) for s in req.get("sizes", [])],
        "modules": [repr(make_module(s)) for s in req.get("modules", [])],
        "modules_collapsed": [collapsed_repr(make_module(s)) for s in req.get("modules", [])],
        # what TensorFlow's str() shows inside tf.Tensor(...) (article 004, src/exact/tfprint.cpp)
        "np_arrays": [np.array_str(np.array([float.fromhex(v) for v in a["values"]], dtype=np.float32)
                                   .reshape(a["shape"])) for a in req.get("np_arrays", [])],
    }
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
