#!/usr/bin/python3
"""PyTorch twin of src/exact/kernels.hpp: writes inputs and the installed torch's outputs as raw float32
(1.13 or 2.6: torch_version.txt says which, and the C++ test replays that version's kernels).

Usage: /usr/bin/python3 tests/twins/kernels_reference.py OUT_DIR

For every case it writes OUT_DIR/<name>.x.f32 (input), .y.f32 (torch's output) and, for
LayerNorm, .g.f32 / .b.f32 (weight, bias); OUT_DIR/manifest.txt has one line per case:
    <name> <op> <rows> <n> <eps> <naive_tol>
with op one of softmax, log_softmax, layer_norm, sum, mean, gelu, relu. The input is
(rows, n) row-major; gelu/relu use rows = 1. tests/test_kernels.cpp runs our kernels on
the same inputs and counts mismatching bits (exact path) or checks the naive path to
naive_tol * max(1, |torch|).
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

from raw_reference import RawReference

ref = RawReference(1234)
out_dir, manifest, gen = ref.out_dir, ref.manifest, ref.gen
randn, save = ref.randn, ref.save


def case(name, op, x, y, eps=0.0, gamma=None, beta=None, naive_tol=1e-5):
    n = x.shape[-1] if x.dim() > 0 else 1
    rows = x.numel() // n if op not in ("gelu", "relu") else 1
    if op in ("gelu", "relu"):
        n = x.numel()
    save(name + ".x.f32", x)
    save(name + ".y.f32", y)
    if gamma is not None:
        save(name + ".g.f32", gamma)
        save(name + ".b.f32", beta)
    manifest.append(f"{name} {op} {rows} {n} {eps!r} {naive_tol!r}")


def with_mask(x, frac=0.3):
    """Masks a random share of x (rows, n) with -inf; the last row is fully masked."""
    m = torch.rand(x.shape, generator=gen) < frac
    x = x.masked_fill(m, float("-inf"))
    x[-1, :] = float("-inf")
    return x


# ---- softmax -------------------------------------------------------------
# attention scores like the article's (1,5,5): q = k = an embedding, / sqrt(768)
emb = randn(1, 5, 768)
scores = torch.bmm(emb, emb.transpose(1, 2)) / math.sqrt(768)
weights = F.softmax(scores, dim=-1)
case("softmax_scores_1x5x5", "softmax", scores, weights)
# the (8,12,128,128) attention-shaped block of random scores
big = randn(8, 12, 128, 128, scale=3.0)
case("softmax_8x12x128x128", "softmax", big, F.softmax(big, dim=-1))
# causal mask with -inf (Annotated Transformer style), plus a fully masked row
causal = randn(1, 4, 16, 16, scale=2.0)
causal = causal.masked_fill(torch.triu(torch.ones(16, 16, dtype=torch.bool), 1), float("-inf"))
causal[0, 0, 3, :] = float("-inf")
case("softmax_causal_4x16x16", "softmax", causal, F.softmax(causal, dim=-1))
for n in (1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 60, 128, 768, 3072):
    x = randn(6, n, scale=4.0)
    case(f"softmax_n{n}", "softmax", x, F.softmax(x, dim=-1))
    xm = with_mask(randn(6, n, scale=4.0))
    case(f"softmax_masked_n{n}", "softmax", xm, F.softmax(xm, dim=-1))
# -1e9 masking (TensorFlow article) and large offsets
x = randn(5, 40, scale=3.0).masked_fill(torch.rand(5, 40, generator=gen) < 0.5, -1e9)
case("softmax_minus1e9", "softmax", x, F.softmax(x, dim=-1))
x = randn(5, 33, scale=0.5, shift=1000.0)
case("softmax_offset", "softmax", x, F.softmax(x, dim=-1))

# ---- log_softmax ---------------------------------------------------------
for rows, n in ((16, 1000), (3, 30000), (8, 1), (8, 3), (8, 7), (8, 8), (8, 9), (8, 60),
                (8, 768), (40, 5)):
    x = randn(rows, n, scale=3.0)
    case(f"log_softmax_{rows}x{n}", "log_softmax", x, F.log_softmax(x, dim=-1))
xm = with_mask(randn(6, 37, scale=3.0))
case("log_softmax_masked", "log_softmax", xm, F.log_softmax(xm, dim=-1))

# ---- layer_norm ----------------------------------------------------------
def ln_case(name, shape, eps, affine_random, scale=1.0, shift=0.0, naive_tol=1e-5):
    x = randn(*shape, scale=scale, shift=shift)
    c = shape[-1]
    ln = torch.nn.LayerNorm(c, eps=eps)
    if affine_random:
        with torch.no_grad():
            ln.weight.copy_(randn(c, scale=0.5, shift=1.0))
            ln.bias.copy_(randn(c, scale=0.3))
    with torch.no_grad():
        y = ln(x)
    case(name, "layer_norm", x, y, eps=eps, gamma=ln.weight, beta=ln.bias, naive_tol=naive_tol)


ln_case("ln_1x5x768_default", (1, 5, 768), 1e-5, False)
ln_case("ln_1x5x768_random", (1, 5, 768), 1e-5, True)
ln_case("ln_1x5x768_eps1e-12", (1, 5, 768), 1e-12, True)
ln_case("ln_1x5x768_eps1e-12_default", (1, 5, 768), 1e-12, False)
# torch computes y = (x * rstd + (-rstd * mean)) * gamma + beta: when |mean| >> std the
# two terms cancel and torch itself is off the exact value by up to ~3e-5 (n = 1: var = 0,
# rstd = 1/sqrt(eps) ~ 316, and the rounding of x * rstd survives). The textbook
# (x - mean) * rstd is closer to the truth there, so those cases allow 1e-4.
for n in (1, 3, 4, 5, 8, 13, 100, 256, 768, 3000):
    ln_case(f"ln_n{n}", (7, n), 1e-5, True, scale=2.0, shift=3.0, naive_tol=1e-4 if n == 1 else 1e-5)
ln_case("ln_n768_eps1e-12", (7, 768), 1e-12, True, scale=0.01, shift=-2.0, naive_tol=1e-4)
ln_case("ln_n33000", (2, 33000), 1e-5, True, scale=2.0, shift=1.0)

# ---- sum / mean ----------------------------------------------------------
case("sum_softmax_weights", "sum", weights, weights.sum(dim=-1))
case("mean_softmax_weights", "mean", weights, weights.mean(dim=-1))
sm = F.softmax(big[0, 0], dim=-1)
case("sum_softmax_128", "sum", sm, sm.sum(dim=-1))
for n in (1, 2, 3, 5, 7, 8, 9, 16, 31, 60, 100, 768, 1000, 3072, 30000, 70000):
    x = randn(5, n, scale=2.0, shift=0.5)
    case(f"sum_n{n}", "sum", x, x.sum(dim=-1))
    case(f"mean_n{n}", "mean", x, x.mean(dim=-1))
x = randn(1, 5, 768)
case("sum_1x5x768", "sum", x, x.sum(dim=-1))
case("mean_1x5x768", "mean", x, x.mean(dim=-1))

# ---- gelu / relu ---------------------------------------------------------
for n in (15360, 17, 1, 15, 16, 33):
    x = randn(n, scale=3.0)
    case(f"gelu_{n}", "gelu", x, F.gelu(x))
# the whole range, through exp underflow (|x| > 13) and tiny / subnormal inputs
x = torch.cat([torch.linspace(-20, 20, 4001), torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40, 88.0, -88.0])])
case("gelu_range", "gelu", x, F.gelu(x))
x = randn(1, 5, 3072, scale=2.0)
case("gelu_nn_1x5x3072", "gelu", x, torch.nn.GELU()(x))
for n in (15360, 17):
    x = randn(n)
    x[::7] = -0.0
    x[3::11] = 0.0
    case(f"relu_{n}", "relu", x, torch.nn.ReLU()(x))

ref.finish()
