"""PyTorch twin of chapters/ch09_decoder.cpp (run: /usr/bin/python3 tests/twins/ch09_decoder.py --seed 0).

torch.manual_seed(S); article 002's MultiHeadedAttention(h, d_model) (four Linears, four
independent draws, as listing 9.2 writes them), PositionwiseFeedForward(d_model, d_ff), DecoderLayer of deep copies; then
tgt = randn(1, T, d_model), memory = randn(1, S, d_model); train mode unless --eval."""
from copy import deepcopy

import torch

from twinlib import TWIN, Twin
from article002 import (Decoder, DecoderLayer, MultiHeadedAttention, PositionwiseFeedForward, attention,
                        subsequent_mask)

tw = Twin(__doc__, [(("--d-model",), dict(type=int, default=256)),
                    (("--heads",), dict(type=int, default=8)),
                    (("--d-ff",), dict(type=int, default=1024)),
                    (("--tgt-len",), dict(type=int, default=5)),
                    (("--src-len",), dict(type=int, default=6)),
                    (("--layers",), dict(type=int, default=6))])
a = tw.args
T, S, C = a.tgt_len, a.src_len, a.d_model

# Step 1: the layer and its inputs
attn = MultiHeadedAttention(a.heads, C)
ff = PositionwiseFeedForward(C, a.d_ff, 0.1)
layer = DecoderLayer(C, deepcopy(attn), deepcopy(attn), deepcopy(ff), 0.1)
if not tw.training:
    layer.eval()
tw.show("layer", layer, TWIN)
tgt = torch.randn(1, T, C)
memory = torch.randn(1, S, C)
tw.show("tgt.shape", tgt.shape)
tw.show("memory.shape", memory.shape)
tgt_mask = subsequent_mask(tgt.size(1))
tw.show("subsequent_mask(tgt.size(1))[0]", tgt_mask[0])
batch, num_steps = 1, T
dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch, 1)
tw.show("dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch, 1)", dec_valid_lens, TWIN)

# Step 2: sublayer 0, masked self-attention
x1 = layer.sublayer[0](tgt, lambda x: layer.self_attn(x, x, x, tgt_mask))
tw.show("x1.shape", x1.shape)
tw.show("x1", x1, TWIN)
tw.show("layer.self_attn.attn.shape", layer.self_attn.attn.shape, TWIN)
tw.show("layer.self_attn.attn[0, 0]", layer.self_attn.attn[0, 0], TWIN)

# Step 3: sublayer 1, cross-attention over memory
x2 = layer.sublayer[1](x1, lambda x: layer.src_attn(x, memory, memory, None))
tw.show("x2.shape", x2.shape)
tw.show("x2", x2, TWIN)
tw.show("layer.src_attn.attn.shape", layer.src_attn.attn.shape, TWIN)
tw.show("layer.src_attn.attn[:, 0].shape", layer.src_attn.attn[:, 0].shape)
tw.show("layer.src_attn.attn[0, 0]", layer.src_attn.attn[0, 0], TWIN)

# Step 4: sublayer 2, feed-forward
out = layer.sublayer[2](x2, layer.feed_forward)
tw.show("out.shape", out.shape)
tw.show("out", out, TWIN)

# Step 5: post-LN wiring of the same modules (articles 001 and 004)
sub = layer.sublayer
p1 = sub[0].norm(tgt + sub[0].dropout(layer.self_attn(tgt, tgt, tgt, tgt_mask)))
p2 = sub[1].norm(p1 + sub[1].dropout(layer.src_attn(p1, memory, memory, None)))
post = sub[2].norm(p2 + sub[2].dropout(layer.feed_forward(p2)))
tw.show("post", post, TWIN)

# Step 6: one token at a time with per-layer caches, in eval mode
# (deepcopy refuses the non-leaf weights the last forward left in .attn: drop them first)
layer.self_attn.attn = layer.src_attn.attn = None
decoder = Decoder(layer, a.layers)
decoder.eval()
full = decoder(tgt, memory, None, tgt_mask)
tw.show("full = decoder(tgt, memory, None, tgt_mask)", full, TWIN)


def step_inputs(layer, x, cache, i):
    """Article 001's cache: keep the rows self-attention reads, attend over all of them."""
    def self_part(n):
        cache[i] = n if cache[i] is None else torch.cat((cache[i], n), dim=1)
        return layer.self_attn(n, cache[i], cache[i])
    x = layer.sublayer[0](x, self_part)
    x = layer.sublayer[1](x, lambda n: layer.src_attn(n, memory, memory, None))
    return layer.sublayer[2](x, layer.feed_forward)


def attend_row(mha, q, k, v, mask=None):
    nb = q.size(0)
    heads = [t.view(nb, -1, mha.h, mha.d_k).transpose(1, 2) for t in (q, k, v)]
    x, mha.attn = attention(*heads, mask=mask, dropout=mha.dropout)
    x = x.transpose(1, 2).contiguous().view(nb, -1, mha.h * mha.d_k)
    return mha.linears[3](x)


def step_kv(layer, x, c):
    """A key/value cache: project only the new row; the memory's keys and values once."""
    sa, xa = layer.self_attn, layer.src_attn

    def self_part(n):
        q, k, v = sa.linears[0](n), sa.linears[1](n), sa.linears[2](n)
        c["k"] = k if c["k"] is None else torch.cat((c["k"], k), dim=1)
        c["v"] = v if c["v"] is None else torch.cat((c["v"], v), dim=1)
        return attend_row(sa, q, c["k"], c["v"])
    x = layer.sublayer[0](x, self_part)
    if c["mem_k"] is None:
        c["mem_k"], c["mem_v"] = xa.linears[1](memory), xa.linears[2](memory)
    x = layer.sublayer[1](x, lambda n: attend_row(xa, xa.linears[0](n), c["mem_k"], c["mem_v"]))
    return layer.sublayer[2](x, layer.feed_forward)


in_cache = [None] * len(decoder.layers)
kv_cache = [dict(k=None, v=None, mem_k=None, mem_v=None) for _ in decoder.layers]
in_rows, kv_rows = [], []
for t in range(T):
    x_t = tgt[:, t:t + 1]
    x = x_t
    for i, l in enumerate(decoder.layers):
        x = step_inputs(l, x, in_cache, i)
    in_rows.append(decoder.norm(x))
    x = x_t
    for i, l in enumerate(decoder.layers):
        x = step_kv(l, x, kv_cache[i])
    kv_rows.append(decoder.norm(x))
cached_in = torch.cat(in_rows, dim=1)
cached = torch.cat(kv_rows, dim=1)
tw.show("kv_cache[0].k.shape", kv_cache[0]["k"].shape, TWIN)
tw.show("kv_cache[0].mem_k.shape", kv_cache[0]["mem_k"].shape, TWIN)
tw.show("cached = torch.cat(rows, dim=1)", cached, TWIN)
tw.show("(full - cached).abs().max()", "%.2e" % float((full - cached).abs().max()), TWIN)
tw.show("torch.equal(full, cached)", str(torch.equal(full, cached)), TWIN)
tw.show("(full - cached_inputs).abs().max()", "%.2e" % float((full - cached_in).abs().max()), TWIN)
