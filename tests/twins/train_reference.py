"""PyTorch side of ch11's backward checks (run: /usr/bin/python3 tests/twins/train_reference.py BUILD/train_dump [--quick]).

Runs train_dump into a temporary folder, then checks what it wrote against torch autograd:
  1. the loss's backward (src/train/loss.hpp: cross-entropy with a padding mask, with and
     without label smoothing) with the same random upstream gradient: max |diff| <= 1e-5 *
     max |grad|, outputs likewise (each layer's backward is checked by module_reference.py);
  2. the whole model at step 0: the C++-initialised weights are LOADED from the safetensors the
     C++ side wrote (so torch's init RNG is not needed, and the safetensors round trip is tested),
     the same batch, dropout off: per tensor max |diff| <= 1e-4 * max |grad|;
  3. (not --quick) the losses of the first 20 Adam steps, dropout off, within 1e-4;
  4. (not --quick) a C++-trained checkpoint loaded into the twin gives the same greedy translations.
Printed llm.c-style: first values side by side, then OK / NOT OK with the max difference.
The twin's model is article 002's create_model (tests/twins/article002.py) with article 004's
ReLU in the feed-forward, as ch11 trains ch10's EncoderDecoder (src/train/trainer.hpp, module_settings).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import article002  # noqa: E402
from article002 import create_model, subsequent_mask  # noqa: E402
from autograd_twin import (check_grads, check_losses, equal_words, leaf, load_safetensors,  # noqa: E402
                           main_of, report)

torch.set_num_threads(1)


def check_ops(ops):
    print("--- the loss's backward vs torch autograd (random upstream gradient), <= 1e-5 x max |grad|")
    g = lambda k: ops[k]  # noqa: E731
    # cross-entropy with a padding mask (and label smoothing)
    for pre in ("xent", "xent_smooth"):
        logits, y = leaf(g(pre + ".logits")), g(pre + ".y")
        eps = float(g(pre + ".eps")[0])
        loss = F.cross_entropy(logits, y, reduction="none", label_smoothing=eps) * (y != 0)
        loss.backward(g(pre + ".dout"))
        report(pre + " out", g(pre + ".out"), loss, 1e-5)
        report(pre + " dlogits", g(pre + ".dlogits"), logits.grad, 1e-5)


def relu_ffn(self, x):
    """article 004's feed-forward: w_2(dropout(relu(w_1(x))))"""
    return self.w_2(self.dropout(torch.relu(self.w_1(x))))


article002.PositionwiseFeedForward.forward = relu_ffn


def twin_model(ckpt_dir, dropout):
    weights, meta = load_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    N, d_model, h, d_ff = (int(meta[k]) for k in ("layers", "d_model", "heads", "d_ff"))
    V_src, V_tgt = weights["src_embed.0.lut.weight"].shape[0], weights["generator.proj.weight"].shape[0]
    model = create_model(V_src, V_tgt, N=N, d_model=d_model, d_ff=d_ff, h=h, dropout=dropout)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    # only the positional tables (buffers, not trained) are not in the file
    assert all(k.endswith(".pe") for k in missing) and not unexpected, (missing, unexpected)
    return model, V_tgt


def loss_fun(model, inputs, tar_inp, tar_real, V):
    """article 004's loss_fun on article 002's model: masked CE, reduce_mean over all B*T positions"""
    src_mask = (inputs != 0).unsqueeze(-2)
    tgt_mask = (tar_inp != 0).unsqueeze(-2) & subsequent_mask(tar_inp.size(-1))
    out = model.decode(model.encode(inputs, src_mask), src_mask, tar_inp, tgt_mask)
    logits = model.generator.proj(out)
    loss_ = F.cross_entropy(logits.reshape(-1, V), tar_real.reshape(-1), reduction="none")
    return (loss_ * (tar_real.reshape(-1) != 0)).mean()


def check_model(d, quick):
    model, V = twin_model(os.path.join(d, "init"), 0.0)
    model.eval()  # dropout off (MultiHeadedAttention's own 0.1 included)
    batches, _ = load_safetensors(os.path.join(d, "batches.safetensors"))
    grads0, _ = load_safetensors(os.path.join(d, "grads0.safetensors"))
    losses, _ = load_safetensors(os.path.join(d, "losses.safetensors"))
    print("--- every parameter's gradient at step 0 (weights loaded from the C++ safetensors), <= 1e-4 x max |grad|")
    opt = torch.optim.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.98), eps=1e-9)
    steps = losses["loss"].numel()
    ours_losses, ref_losses = [], []
    for s in range(steps):
        opt.zero_grad()
        loss = loss_fun(model, batches["inputs.%d" % s], batches["tar_inp.%d" % s], batches["tar_real.%d" % s], V)
        loss.backward()
        if s == 0:
            check_grads(grads0, dict(model.named_parameters()))
        opt.step()
        ours_losses.append(float(losses["loss"][s]))
        ref_losses.append(float(loss))
    if quick:
        return
    check_losses(ours_losses, ref_losses)
    # a C++-trained checkpoint in the twin: the same greedy translations
    print("--- a C++-trained checkpoint loaded into the twin: greedy translations")
    model, V = twin_model(os.path.join(d, "trained"), 0.1)
    model.eval()
    words = ["<pad>"] + ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                         "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
                         "eighty ninety hundred thousand").split()
    start, end = len(words), len(words) + 1
    rows = []
    for line in open(os.path.join(d, "translations.txt"), encoding="utf-8"):
        number, theirs = line.rstrip("\n").split("\t")
        src = torch.tensor([[11] + [1 + int(c) for c in number] + [12]])
        src_mask = (src != 0).unsqueeze(-2)
        memory = model.encode(src, src_mask)
        ys = torch.tensor([[start]])
        pred = []
        with torch.no_grad():
            for _ in range(10):
                out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)))
                nxt = int(model.generator.proj(out[:, -1]).argmax(dim=-1))
                if nxt == end:
                    break
                pred.append(nxt)
                ys = torch.cat([ys, torch.tensor([[nxt]])], dim=1)
        rows.append((number, theirs, " ".join(words[i] for i in pred if 0 < i < start)))
    equal_words(rows, "translations")


if __name__ == "__main__":
    sys.exit(main_of(__doc__, "ts_train_", check_ops, check_model))
