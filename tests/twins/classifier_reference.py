"""PyTorch side of ch13's backward checks (run: /usr/bin/python3 tests/twins/classifier_reference.py BUILD/classifier_dump [--quick]).

Runs classifier_dump into a temporary folder, then checks what it wrote against torch autograd:
  1. the backward written beside each module of src/transformer/nn.cpp that ch13 trains (GELU,
     LayerNorm, Embeddings, MultiHeadAttention with a padding mask, FeedForward,
     TransformerEncoderLayer) and EncoderClassifier's two poolings, against article 000's classes
     (tests/twins/article000.py) with the same weights and random upstream gradient:
     every output, input gradient and parameter gradient <= 1e-5 x max |grad|;
  2. the whole classifier at step 0, [CLS] and mean pooling: the C++-initialised weights are
     LOADED from the safetensors the C++ side wrote into article 000's TransformerEncoder
     (tests/twins/article000.py) plus a Linear head, the same batch, dropout off: every
     parameter's gradient within 1e-4 x max |grad|;
  3. the losses of the first 20 Adam steps (torch.optim.Adam, betas (0.9, 0.98), eps 1e-9), within 1e-4;
  4. (not --quick) a C++-trained checkpoint loaded into the twin gives the same held-out logits.
Printed llm.c-style: first values side by side, then OK / NOT OK with the max difference.
"""
import os
import sys
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from article000 import TransformerEncoder  # noqa: E402
from autograd_twin import check_op, leaf, load_safetensors, main_of, report, verdict  # noqa: E402

torch.set_num_threads(1)


class Classifier(nn.Module):
    """Article 000's encoder, a sentence vector (position 0, [CLS], or the mean of the real
    positions), dropout, and a Linear to the 10 classes."""

    def __init__(self, config, mean_pool):
        super().__init__()
        self.encoder = TransformerEncoder(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.mean_pool = mean_pool

    def forward(self, ids):
        real = ids != 0                                            # (B,T)
        mask = real.unsqueeze(1).expand(-1, ids.shape[1], -1)      # (B,T,T): 0 = hide the padded keys
        x = self.encoder(ids, mask=mask)                           # (B,T,C)
        if self.mean_pool:
            m = real.unsqueeze(-1).float()
            v = (x * m).sum(1) / m.sum(1)
        else:
            v = x[:, 0, :]
        return self.classifier(self.dropout(v))


def twin(ckpt_dir, mean_pool):
    weights, meta = load_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    C = int(meta["d_model"])
    config = SimpleNamespace(vocab_size=weights["encoder.embeddings.token_embeddings.weight"].shape[0],
                             hidden_size=C, num_attention_heads=int(meta["heads"]), intermediate_size=int(meta["d_ff"]),
                             hidden_dropout_prob=0.0,
                             max_position_embeddings=weights["encoder.embeddings.position_embeddings.weight"].shape[0],
                             num_hidden_layers=int(meta["layers"]), num_labels=weights["classifier.weight"].shape[0])
    model = Classifier(config, mean_pool)
    model.load_state_dict(weights, strict=True)
    model.eval()
    return model


def check_ops(ops):
    print("--- the backward beside each module of src/transformer/nn.cpp (and the pooling) vs torch autograd,\n"
          "    on article 000's classes (random upstream gradient), <= 1e-5 x max |grad|")
    g = lambda k: ops[k]  # noqa: E731
    check_op(ops, "gelu.", "GELU", F.gelu)
    config = SimpleNamespace(vocab_size=6, hidden_size=8, num_attention_heads=2, intermediate_size=16,
                             hidden_dropout_prob=0.0, max_position_embeddings=5, num_hidden_layers=1)
    enc = TransformerEncoder(config)
    enc.load_state_dict({k[len("param."):]: v for k, v in ops.items() if k.startswith("param.")}, strict=True)
    enc.eval()
    ids, mask = g("ids"), g("mask")

    print("(a key bias's gradient is 0 up to float noise on both sides, as at step 0 below: held to\n"
          " 1e-5 x 1e-2 = 1e-7 absolute)")

    def grads(prefix, module):
        for name, p in module.named_parameters():
            report("%s %s.grad" % (prefix, name), ops[prefix + ".grad." + name], p.grad, 1e-5,
                   floor=1e-2 if name.endswith(".k.bias") else 0.0)

    def run(prefix, module, inputs, fn):
        module.zero_grad()
        leaves = [leaf(g(prefix + "." + n)) for n in inputs]
        out = fn(*leaves)
        out.backward(g(prefix + ".dout"))
        report(prefix + " out", g(prefix + ".out"), out, 1e-5)
        for n, x in zip(inputs, leaves):
            report("%s d%s" % (prefix, n), g(prefix + ".d" + n), x.grad, 1e-5)
        grads(prefix, module)

    run("layernorm", enc.layers[0].layer_norm_1, ["x"], enc.layers[0].layer_norm_1)
    enc.zero_grad()
    out = enc.embeddings(ids)
    out.backward(g("embeddings.dout"))
    report("embeddings out", g("embeddings.out"), out, 1e-5)
    grads("embeddings", enc.embeddings)
    mha = enc.layers[0].attention
    run("mha", mha, ["query", "key", "value"], lambda q, k, v: mha(q, k, v, mask=mask))
    run("ffn", enc.layers[0].feed_forward, ["x"], enc.layers[0].feed_forward)
    run("layer", enc.layers[0], ["x"], lambda x: enc.layers[0](x, mask=mask))
    m = (ids != 0).unsqueeze(-1).float()
    check_op(ops, "pool_cls.", "pool [CLS]", lambda x: x[:, 0, :])
    check_op(ops, "pool_mean.", "pool mean", lambda x: (x * m).sum(1) / m.sum(1))


def check_model(d, quick):
    batches, _ = load_safetensors(os.path.join(d, "batches.safetensors"))
    for mean_pool, suffix in ((False, ""), (True, "_mean")):
        print("--- the whole classifier at step 0 (%s pooling, dropout off): every gradient, <= 1e-4 x max |grad|"
              % ("mean" if mean_pool else "[CLS]"))
        model = twin(os.path.join(d, "init" + suffix), mean_pool)
        loss = F.cross_entropy(model(batches["ids.0"]), batches["labels.0"])
        loss.backward()
        ours, _ = load_safetensors(os.path.join(d, "grads0%s.safetensors" % suffix))
        print("(a key bias adds q.b_k to a whole row of scores, which softmax ignores: its gradient is 0 up to\n"
              " float noise on both sides, so it is held to 1e-4 x 1e-3 = 1e-7 absolute)")
        for name, p in model.named_parameters():
            report(name + ".grad", ours[name], p.grad, 1e-4, floor=1e-3 if name.endswith(".k.bias") else 0.0)
    print("--- 20 Adam steps ([CLS], dropout off): the loss of each, within 1e-4")
    model = twin(os.path.join(d, "init"), False)
    opt = torch.optim.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.98), eps=1e-9)
    losses = []
    for s in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(model(batches["ids.%d" % s]), batches["labels.%d" % s])
        loss.backward()
        opt.step()
        losses.append(float(loss))
    ours, _ = load_safetensors(os.path.join(d, "losses.safetensors"))
    report("losses of 20 Adam steps", ours["loss"], torch.tensor(losses), 1e-4, floor=1.0)
    if quick:
        return
    print("--- a C++-trained checkpoint (200 steps, dropout on) in the twin: the held-out logits")
    model = twin(os.path.join(d, "trained"), False)
    held, _ = load_safetensors(os.path.join(d, "logits.safetensors"))
    with torch.no_grad():
        logits = model(held["ids"])
    report("held-out logits", held["logits"], logits, 1e-4)
    same = int((logits.argmax(-1) == held["logits"].argmax(-1)).sum())
    verdict(same == logits.shape[0], "held-out predictions: %d of %d the same" % (same, logits.shape[0]))


if __name__ == "__main__":
    sys.exit(main_of(__doc__, "ts_classifier_", check_ops, check_model))
