#!/usr/bin/python3
"""PyTorch twin of src/exact/stats.hpp: writes inputs and torch 1.13 var/std/mean as raw float32.

Usage: /usr/bin/python3 tests/twins/stats_reference.py OUT_DIR

For every input it writes OUT_DIR/<name>.x.f32, and for every op it checks
OUT_DIR/<name>.<op>.<correction>.f32 = x.var / x.std (dim=-1, keepdim=True, correction)
or x.mean(-1, keepdim=True) (correction written as 0). OUT_DIR/manifest.txt has one line
per (input, op, correction):
    <name> <op> <correction> <dim0> <dim1> ...
tests/test_stats.cpp runs ts::var_lastdim / std_lastdim / mean_lastdim_keepdim on the same
input and requires 0 mismatching bits and the same (keepdim) shape.

The inputs cover both algorithms torch 1.13 picks between: a result with more than one
element (Welford per row, in double) and a result with exactly one element (two-pass sum
around the float mean). The "shifted" inputs (large mean, tiny spread) are where the two
algorithms round differently, so using the wrong one fails the test.
"""
import os
import sys

import torch

from raw_reference import RawReference

ref = RawReference(2024)
out_dir, manifest, gen = ref.out_dir, ref.manifest, ref.gen
randn, save = ref.randn, ref.save


def case(name, x):
    x = x.contiguous()
    save(name + ".x.f32", x)
    dims = " ".join(str(d) for d in x.shape)
    for op in ("var", "std"):
        for corr in (1, 0):
            y = getattr(x, op)(-1, keepdim=True, correction=corr)
            assert tuple(y.shape) == tuple(x.shape[:-1]) + (1,)
            save(f"{name}.{op}.{corr}.f32", y)
            manifest.append(f"{name} {op} {corr} {dims}")
    save(f"{name}.mean.0.f32", x.mean(-1, keepdim=True))
    manifest.append(f"{name} mean 0 {dims}")


# ---- rows > 1: Welford per row --------------------------------------------
case("embedding_1x5x768", randn(1, 5, 768))                 # ch06/ch07's nn.Embedding output
case("activations_2x5x768", randn(2, 5, 768, scale=7.0, shift=0.3))
case("shifted_200x37", randn(200, 37, scale=0.01, shift=100.0))
case("wide_range_64x768", randn(64, 768, scale=3e4))
case("short_rows_500x3", randn(500, 3, scale=1e4))
case("pairs_300x2", randn(300, 2))
case("length_one_4x1", randn(4, 1))                           # correction 1 -> NaN (0/0)
case("constant_3x16", torch.full((3, 16), 2.5))
case("batched_2x3x4x5", randn(2, 3, 4, 5))
case("ints_2x4", torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0]]))
# ---- exactly one result: two-pass around the float mean ---------------------
case("row_1x4", torch.tensor([[1.0, 2.0, 3.0, 4.0]]))       # ch06's visible-gap example
case("row_4", torch.tensor([1.0, 2.0, 3.0, 4.0]))             # 1-D input
case("row_1x1x768", randn(1, 1, 768, scale=3.0, shift=1.0))
case("shifted_row_1x3000", randn(1, 3000, scale=1e-3, shift=7.0))
case("shifted_row_1x37", randn(1, 37, scale=0.01, shift=100.0))
case("single_1x1", randn(1, 1))

ref.finish()
