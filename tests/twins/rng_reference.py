#!/usr/bin/python3
"""PyTorch twin of src/exact/rng.cpp: runs each probe in torch and dumps the raw bits.

Usage: /usr/bin/python3 tests/twins/rng_reference.py OUT_DIR

For every probe (a short sequence of torch random calls, starting from its own
manual_seed) it writes OUT_DIR/<probe>_<k>.bin (tensor.numpy().tofile: raw
float32 / float64 / int64, row-major) and lists them in OUT_DIR/index.json:
  {"probes": {name: [{"file", "dtype", "shape"}, ...]},
   "seeds":  [{"text": str, "seed": uint64 or null}, ...],   # parse_seed cases
   "timing": {"embedding_30522x768_s": best of 3}}
tests/test_rng.cpp runs the same probes in C++ and requires identical bits.
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)


# ---- probes: name -> function returning the list of tensors to compare ----
# Keep each probe in step with the lambda of the same name in tests/test_rng.cpp.

def rand_4x4():
    torch.manual_seed(42)
    return [torch.rand(4, 4)]


def randn_5x768():
    torch.manual_seed(42)
    return [torch.randn(5, 768)]


def randn3_twice():  # the cached sin value starts the 2nd call
    torch.manual_seed(42)
    return [torch.randn(3), torch.randn(3)]


def randn_tails():  # n < 16 scalar path, n = 16 one block, n % 16 != 0 tails
    outs = []
    for n in (15, 16, 17, 37, 1, 31, 48, 100):
        torch.manual_seed(7)
        outs.append(torch.randn(n))
    return outs


def randn_sequence():  # cache survives block calls; only manual_seed clears it
    torch.manual_seed(0)
    outs = [torch.randn(15), torch.randn(16), torch.randn(17), torch.randn(37), torch.randn(1),
            torch.rand(15), torch.randn(3)]
    torch.manual_seed(0)
    outs.append(torch.randn(1))
    return outs


def normal_mean_std():
    torch.manual_seed(3)
    return [torch.empty(1000).normal_(2, .5), torch.empty(7).normal_(2, .5),
            torch.empty(33).normal_(-1.5, 3.25), torch.empty(2, 8).normal_(0.1, 1e-3)]


def uniform_range():
    torch.manual_seed(5)
    return [torch.empty(1000).uniform_(-3.7, 2.1), torch.empty(5).uniform_(-3.7, 2.1),
            torch.empty(64).uniform_(0.3, 0.30001), torch.empty(10).uniform_(-1e6, 1e6)]


def linear_768_64():
    torch.manual_seed(42)
    m = nn.Linear(768, 64)
    return [m.weight, m.bias]


def linear_3072_768():
    torch.manual_seed(42)
    m = nn.Linear(3072, 768)
    return [m.weight, m.bias]


def linear_small():  # no bias; odd sizes
    torch.manual_seed(11)
    a = nn.Linear(10, 3, bias=False)
    b = nn.Linear(7, 5)
    return [a.weight, b.weight, b.bias]


def embedding_1000_64():
    torch.manual_seed(42)
    return [nn.Embedding(1000, 64).weight]


def embedding_bert():  # the full BERT vocabulary table: 23.4M normals
    torch.manual_seed(42)
    return [nn.Embedding(30522, 768).weight]


def embedding_padding():
    torch.manual_seed(1)
    return [nn.Embedding(50, 16, padding_idx=0).weight, nn.Embedding(50, 16, padding_idx=-1).weight,
            nn.Embedding(7, 3, padding_idx=2).weight, nn.Embedding(5, 3).weight]


def xavier():
    torch.manual_seed(42)
    a = torch.empty(256, 256)
    b = torch.empty(1000, 256)
    c = torch.empty(8, 4, 3, 3)
    nn.init.xavier_uniform_(a)
    nn.init.xavier_uniform_(b)
    nn.init.xavier_uniform_(c, gain=nn.init.calculate_gain('relu'))
    return [a, b, c]


def dropout():  # values of both signs: dropped negatives must stay -0.0
    torch.manual_seed(42)
    x = torch.randn(5, 768)
    outs = [x, F.dropout(x, 0.1, training=True), F.dropout(x, 0.5, training=True),
            F.dropout(x, 0.0, training=True), F.dropout(x, 1.0, training=True)]
    outs.append(torch.randn(4))  # p = 0 and p = 1 drew nothing
    outs.append(F.dropout(torch.randn(3, 7), 0.25, training=True))
    return outs


def randint():
    torch.manual_seed(42)
    return [torch.randint(0, 10, (20,)), torch.randint(-5, 5, (7,)), torch.randint(30522, (10,)),
            torch.randint(0, 2**33, (5,)), torch.randint(-2**40, 2**40, (5,)), torch.randint(3, 4, (3,))]


def float64():
    torch.manual_seed(42)
    d = torch.float64
    return [torch.randn(5, 768, dtype=d), torch.rand(4, 4, dtype=d), torch.randn(3, dtype=d),
            torch.empty(100, dtype=d).normal_(2, .5), torch.empty(100, dtype=d).uniform_(-3.7, 2.1),
            torch.randn(17, dtype=d), torch.randn(3, dtype=d), torch.randn(3),
            torch.empty(519, dtype=d).normal_(0.3, 1.7), torch.empty(5, dtype=d).normal_(0.3, 1.7)]


def big_seeds():  # only the low 32 bits reach the engine; negatives wrap
    outs = []
    for s in (2**32 + 42, 2**64 - 1, -1, -2**63, 0):
        torch.manual_seed(s)
        outs += [torch.rand(5), torch.randn(20), torch.randn(3)]
    return outs


def interleaved():  # stream positions across a realistic sequence of calls
    torch.manual_seed(42)
    lin = nn.Linear(64, 32)
    r1 = torch.randn(3)
    emb = nn.Embedding(100, 16)
    drop = F.dropout(torch.randn(4, 8), 0.1, training=True)
    r2 = torch.randn(3)
    lin2 = nn.Linear(16, 8)
    r3 = torch.rand(5)
    return [lin.weight, lin.bias, r1, emb.weight, drop, r2, lin2.weight, lin2.bias, r3]


def own_generator():  # a fresh torch.Generator() has the default seed 67280421310721
    g = torch.Generator()
    out = [torch.rand(4, generator=g), torch.randn(20, generator=g)]
    g.manual_seed(123)
    out.append(torch.rand(3, generator=g))
    return out


PROBES = [rand_4x4, randn_5x768, randn3_twice, randn_tails, randn_sequence, normal_mean_std,
          uniform_range, linear_768_64, linear_3072_768, linear_small, embedding_1000_64,
          embedding_bert, embedding_padding, xavier, dropout, randint, float64, big_seeds,
          interleaved, own_generator]

# parse_seed cases: what torch.manual_seed(int(text)) does with each command-line text
SEED_TEXTS = ["42", "0", "-1", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
              "-9223372036854775809", "9223372036854775808", "4294967338", "", " ", "abc", "12abc", "1.5",
              "1e3", "0x10", " 7 ", "+5", "-0", "1_000", "_1", "1_", "1__0", "007", "--1", "- 1", "\t13\n",
              "+", "-", "99999999999999999999999", "-18446744073709551615"]


def seed_of(text):
    try:
        torch.manual_seed(int(text))
    except (ValueError, RuntimeError, OverflowError):
        return None
    return torch.initial_seed()


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    index = {"probes": {}, "seeds": [], "timing": {}}
    for probe in PROBES:
        entries = []
        for k, t in enumerate(probe()):
            a = t.detach().contiguous().numpy()
            name = f"{probe.__name__}_{k}.bin"
            a.tofile(os.path.join(out_dir, name))
            entries.append({"file": name, "dtype": str(a.dtype), "shape": list(a.shape)})
        index["probes"][probe.__name__] = entries
    index["seeds"] = [{"text": s, "seed": seed_of(s)} for s in SEED_TEXTS]
    best = math.inf
    for _ in range(3):
        torch.manual_seed(42)
        t0 = time.perf_counter()
        nn.Embedding(30522, 768)
        best = min(best, time.perf_counter() - t0)
    index["timing"]["embedding_30522x768_s"] = best
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
