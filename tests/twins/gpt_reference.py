"""PyTorch side of ch12's checks (run: /usr/bin/python3 tests/twins/gpt_reference.py BUILD/gpt_dump [--quick]).

Runs gpt_dump into a temporary folder, then checks what it wrote against torch autograd:
  1. the GPT's own code around its blocks (src/transformer/gpt.cpp with 0 blocks: wte[idx] +
     wpe[t], ln_f, the tied head) with the same random upstream gradient: max |diff| <= 1e-5 *
     max |grad| (the blocks' modules are module_reference.py's);
  2. the whole GPT at step 0, tied and untied head: the C++-initialised weights are LOADED from
     the safetensors ch12 --save writes (so the checkpoint format is tested too), the same batch,
     dropout off: per tensor max |diff| <= 1e-4 * max |grad|;
  3. (not --quick) the losses of the first 20 Adam steps, within 1e-4;
  4. (not --quick) a C++-trained checkpoint loaded into the twin completes the same 50 held-out
     numbers with the same greedy words.
The twin is nanoGPT's GPT (token + learned position embeddings, pre-LN blocks with causal
self-attention and a GELU MLP, ln_f, lm_head tied to wte) with the course's LayerNorm
(article 002: unbiased std, eps 1e-6 inside the square root), as src/transformer/gpt.hpp says.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autograd_twin import (check_grads, check_losses, equal_words, leaf, load_safetensors,  # noqa: E402
                           main_of, report)

torch.set_num_threads(1)


class LayerNorm(nn.Module):
    """the course's LayerNorm (article 002), with nn.LayerNorm's parameter names"""

    def __init__(self, C):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))
        self.bias = nn.Parameter(torch.zeros(C))

    def forward(self, x):
        mean, std = x.mean(-1, keepdim=True), x.std(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(std ** 2 + 1e-6) + self.bias


class CausalSelfAttention(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.c_attn, self.c_proj, self.H = nn.Linear(C, 3 * C), nn.Linear(C, C), H

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.H, C // self.H
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))  # (B,H,T,D)
        hide = torch.triu(torch.ones(T, T), diagonal=1)                                          # 1 = hide
        att = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(D)) + hide * -1e9, dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, C, Fd):
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(C, Fd), nn.Linear(Fd, C)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, C, H, Fd):
        super().__init__()
        self.ln_1, self.attn, self.ln_2, self.mlp = LayerNorm(C), CausalSelfAttention(C, H), LayerNorm(C), MLP(C, Fd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, V, T_ctx, N, C, H, Fd, tied):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, C), wpe=nn.Embedding(T_ctx, C),
                                              h=nn.ModuleList(Block(C, H, Fd) for _ in range(N)), ln_f=LayerNorm(C)))
        self.lm_head = nn.Linear(C, V, bias=False)
        if tied:
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx):
        T = idx.size(1)
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def twin_model(ckpt_dir):
    weights, meta = load_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    tied = meta["tied"] == "true"
    N, C, H, Fd, T_ctx = (int(meta[k]) for k in ("layers", "d_model", "heads", "d_ff", "ctx"))
    V = weights["transformer.wte.weight"].shape[0]
    model = GPT(V, T_ctx, N, C, H, Fd, tied)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert missing == (["lm_head.weight"] if tied else []) and not unexpected, (missing, unexpected)
    return model, V


def loss_fn(model, x, y, V):
    """mean cross-entropy over the answer tokens: y == 0 (<pad>, the prompt's targets) is skipped"""
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=0)


def check_ops(ops):
    print("--- the GPT around its blocks (0 blocks: wte[idx] + wpe[t], ln_f, tied head) vs torch autograd "
          "(random upstream gradient), <= 1e-5 x max |grad|")
    model = GPT(7, 5, 0, 4, 1, 4, True)
    with torch.no_grad():
        model.transformer.wte.weight.copy_(ops["gpt0.wte"])
        model.transformer.wpe.weight.copy_(ops["gpt0.wpe"])
        model.transformer.ln_f.weight.copy_(ops["gpt0.ln_f.weight"])
        model.transformer.ln_f.bias.copy_(ops["gpt0.ln_f.bias"])
    out = model(ops["gpt0.idx"].long())
    out.backward(ops["gpt0.dout"])
    report("logits", ops["gpt0.out"], out, 1e-5)
    report("dwte (embedding and tied head)", ops["gpt0.dwte"], model.transformer.wte.weight.grad, 1e-5)
    report("dwpe", ops["gpt0.dwpe"], model.transformer.wpe.weight.grad, 1e-5)
    report("dln_f.weight", ops["gpt0.dln_f.weight"], model.transformer.ln_f.weight.grad, 1e-5)
    report("dln_f.bias", ops["gpt0.dln_f.bias"], model.transformer.ln_f.bias.grad, 1e-5)


def check_grads0(model, V, batches, grads0, label):
    print("--- every parameter's gradient at step 0, %s (weights loaded from the C++ safetensors), "
          "<= 1e-4 x max |grad|" % label)
    model.zero_grad()
    loss_fn(model, batches["x.0"], batches["y.0"], V).backward()
    check_grads(grads0, dict(model.named_parameters()))  # a tied lm_head.weight is wte.weight: listed once

def check_model(d, quick):
    batches, _ = load_safetensors(os.path.join(d, "batches.safetensors"))
    for sub, gfile, label in (("untied", "grads0_untied", "untied head"), ("init", "grads0", "tied head")):
        model, V = twin_model(os.path.join(d, sub))
        check_grads0(model, V, batches, load_safetensors(os.path.join(d, gfile + ".safetensors"))[0], label)
    losses, _ = load_safetensors(os.path.join(d, "losses.safetensors"))
    if quick:
        return
    opt = torch.optim.Adam(model.parameters(), lr=0.002, betas=(0.9, 0.98), eps=1e-9)
    steps = losses["loss"].numel()
    ref = []
    for s in range(steps):
        opt.zero_grad()
        loss = loss_fn(model, batches["x.%d" % s], batches["y.%d" % s], V)
        loss.backward()
        opt.step()
        ref.append(float(loss))
    check_losses([float(a) for a in losses["loss"]], ref)
    print("--- a C++-trained checkpoint loaded into the twin: greedy completions")
    model, V = twin_model(os.path.join(d, "trained"))
    words = ["<pad>"] + [str(i) for i in range(10)] + ["="] + (
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand").split()
    words.append("<end>")
    assert len(words) == V, (len(words), V)
    rows = []
    for line in open(os.path.join(d, "completions.txt"), encoding="utf-8"):
        number, theirs = line.rstrip("\n").split("\t")
        ids = [1 + int(c) for c in number] + [11]
        pred = []
        with torch.no_grad():
            while len(ids) < model.transformer.wpe.weight.shape[0]:
                nxt = int(model(torch.tensor([ids]))[0, -1].argmax())
                if nxt == V - 1:
                    break
                pred.append(nxt)
                ids.append(nxt)
        rows.append((number, theirs, " ".join(words[i] for i in pred if 11 < i < V - 1)))
    equal_words(rows, "completions")


if __name__ == "__main__":
    sys.exit(main_of(__doc__, "ts_gpt_", check_ops, check_model))
