#!/usr/bin/python3
"""PyTorch twin of src/transformer/annotated.hpp (article 002's modules): writes torch 1.13's results.

Usage: /usr/bin/python3 tests/twins/annotated_reference.py OUT_DIR

Each scenario starts with torch.manual_seed(seed) and then builds and runs article 002's
modules (tests/twins/article002.py) in a fixed order; tests/test_annotated.cpp replays the
same order in C++ and compares every saved tensor bit for bit. OUT_DIR/manifest.txt has one
line per tensor: <key> <numel>; the tensor is OUT_DIR/<key>.f32 (row-major float32).
Module reprs are saved as OUT_DIR/<key>.txt.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import article002 as A  # noqa: E402

torch.set_num_threads(1)
out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
manifest = []


def save(key, t):
    t = t.detach().contiguous().to(torch.float32)
    t.numpy().tofile(os.path.join(out_dir, key + ".f32"))
    manifest.append("%s %d" % (key, t.numel()))


def save_text(key, text):
    with open(os.path.join(out_dir, key + ".txt"), "w") as f:
        f.write(text)


# 1) transcript 14's scenario (MultiHeadedAttention h=8, C=256), train and eval
for mode in ("train", "eval"):
    torch.manual_seed(0)
    mha = A.MultiHeadedAttention(8, 256)
    if mode == "eval":
        mha.eval()
    x = torch.randn(1, 6, 256)
    out = mha(x, x, x)
    save("mha_%s.self" % mode, out)
    save("mha_%s.self_attn" % mode, mha.attn)
    save("mha_%s.masked" % mode, mha(x, x, x, mask=A.subsequent_mask(6)))
    save("mha_%s.masked_attn" % mode, mha.attn)
    tgt = torch.randn(1, 5, 256)
    out = mha(tgt, x, x)
    save("mha_%s.cross" % mode, out)
    save("mha_%s.cross_attn" % mode, mha.attn)
    if mode == "train":
        save_text("mha_repr", str(mha))

# 2) attention() on contiguous (B,H,T,D) tensors, batch 2, a (B,1,1,S) padding mask, dropout
torch.manual_seed(1)
q, k, v = torch.randn(2, 4, 3, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 8)
pad = torch.tensor([[1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]]).bool().view(2, 1, 1, 7)
drop = torch.nn.Dropout(0.1)
o, p = A.attention(q, k, v, mask=pad, dropout=drop)
save("attn.out", o)
save("attn.p", p)
o, p = A.attention(q, k, v)
save("attn.out_nomask", o)
save("attn.p_nomask", p)

# 3) LayerNorm (article 002) on rows > 1, a single row, and with non-trivial a_2 / b_2
torch.manual_seed(2)
ln = A.LayerNorm(256)
x = torch.randn(3, 5, 256) * 3 + 1
save("ln.x", x)
save("ln.y", ln(x))
x1 = torch.randn(1, 256) * 0.5
save("ln.x1", x1)
save("ln.y1", ln(x1))
with torch.no_grad():
    ln.a_2.copy_(torch.randn(256))
    ln.b_2.copy_(torch.randn(256))
save("ln.a_2", ln.a_2)
save("ln.b_2", ln.b_2)
save("ln.y2", ln(x))

# 4) PositionalEncoding buffer (d_model 256, max_len 5000) and d_model 512, max_len 60
pe = A.PositionalEncoding(256, 0.1)
save("pe.256", pe.pe)
save("pe.512", A.PositionalEncoding(512, 0.1, max_len=60).pe)

# 5) ch09's scenario: MHA, FFN, DecoderLayer of deep copies; tgt, memory; train and eval
from copy import deepcopy  # noqa: E402
for mode in ("train", "eval"):
    torch.manual_seed(42)
    attn = A.MultiHeadedAttention(8, 256)
    ff = A.PositionwiseFeedForward(256, 1024, 0.1)
    layer = A.DecoderLayer(256, deepcopy(attn), deepcopy(attn), deepcopy(ff), 0.1)
    if mode == "eval":
        layer.eval()
    tgt = torch.randn(1, 5, 256)
    memory = torch.randn(1, 6, 256)
    y = layer(tgt, memory, None, A.subsequent_mask(5))
    save("dec_%s.y" % mode, y)
    save("dec_%s.cross_attn" % mode, layer.src_attn.attn)
    save("dec_%s.ff" % mode, ff(tgt))
    if mode == "train":
        save_text("dec_repr", str(layer))

# 6) create_model, small: src_vocab 11, tgt_vocab 13, N 2; encode, decode, generator (train)
torch.manual_seed(3)
model = A.create_model(11, 13, N=2, d_model=32, d_ff=64, h=4)
for name, p in model.named_parameters():
    save("model.param." + name, p)
src = torch.tensor([[1, 5, 7, 3, 9, 2]])
src_mask = (src != 0).unsqueeze(-2)
memory = model.encode(src, src_mask)
save("model.memory", memory)
tgt = torch.tensor([[1, 4, 4, 12, 6]])
out = model.decode(memory, src_mask, tgt, A.subsequent_mask(5))
save("model.decode", out)
save("model.logp", model.generator(out))
save_text("model_repr", str(model))
save_text("model_param_names", "\n".join(n for n, _ in model.named_parameters()) + "\n")

with open(os.path.join(out_dir, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
