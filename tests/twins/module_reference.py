"""PyTorch side of the module backward checks (run: /usr/bin/python3 tests/twins/module_reference.py BUILD/module_dump [--quick]).

The backward written beside each module of src/transformer/annotated.cpp (llm.c's habit: one
backward per forward, its formula above it), against torch autograd on article 002's own classes
(tests/twins/article002.py), with the inputs, weights and random upstream gradient module_dump wrote:
  1. LayerNorm, MultiHeadedAttention (query, key, value all different, a padding mask),
     PositionwiseFeedForward (no activation, and GELU as ch12's MLP), Generator: outputs and every
     input and parameter gradient, max |diff| <= 1e-5 * max |ref|;
     and article 004's settings: a post-LN SublayerConnection around a ReLU feed-forward, dropout
     on (the twin multiplies by the keep masks the C++ side drew);
  2. a small create_model (N=2, C=16, F=32, H=4, eval mode), with article 002's settings and with
     article 004's (ReLU, post-LN): the generator's log-probabilities (1e-5) and every parameter's
     gradient (1e-4 * max |ref|, no tensor's scale below 1e-4 x the model's largest gradient, as
     the step-0 check of tests/twins/autograd_twin.py).
Printed llm.c-style: first values side by side, then OK / NOT OK with the max difference.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import article002  # noqa: E402
from autograd_twin import check_grads, leaf, load_safetensors, main_of, report  # noqa: E402

torch.set_num_threads(1)


class ReLUFeedForward(article002.PositionwiseFeedForward):
    """article 004's feed-forward: w_2(dropout(relu(w_1(x))))"""
    def forward(self, x):
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))


class PostLNSublayer(article002.SublayerConnection):
    """article 004's (and the paper's) post-LN: norm(x + dropout(sublayer(x)))"""
    def forward(self, x, sublayer):
        return self.norm(x + self.dropout(sublayer(x)))


def article004_settings(model):
    """create_model's modules given article 004's settings (the classes differ only in forward)."""
    for m in model.modules():
        if type(m) is article002.PositionwiseFeedForward:
            m.__class__ = ReLUFeedForward
        elif type(m) is article002.SublayerConnection:
            m.__class__ = PostLNSublayer
    return model


def set_linear(lin, ops, p):
    with torch.no_grad():
        lin.weight.copy_(ops[p + ".weight"])
        lin.bias.copy_(ops[p + ".bias"])


def report_linear(name, lin, ops, p, bias_is_zero=False):
    """bias_is_zero: the key projection's bias, whose true gradient is exactly 0 (softmax ignores a
    constant added to a whole row of scores, and q . b_k is one): both sides are rounding noise,
    so its scale is taken from its weight's gradient."""
    report(name + " dweight", ops[p + ".dweight"], lin.weight.grad, 1e-5)
    floor = float(lin.weight.grad.abs().max()) if bias_is_zero else 0.0
    report(name + " dbias", ops[p + ".dbias"], lin.bias.grad, 1e-5, floor)


def check_ops(ops):
    print("--- each module's backward vs torch autograd (random upstream gradient), <= 1e-5 x max |ref|")
    # LayerNorm
    ln = article002.LayerNorm(8)
    with torch.no_grad():
        ln.a_2.copy_(ops["layernorm.a_2"])
        ln.b_2.copy_(ops["layernorm.b_2"])
    x = leaf(ops["layernorm.x"])
    out = ln(x)
    out.backward(ops["layernorm.dout"])
    report("LayerNorm out", ops["layernorm.out"], out, 1e-5)
    report("LayerNorm dx", ops["layernorm.dx"], x.grad, 1e-5)
    report("LayerNorm da_2", ops["layernorm.da_2"], ln.a_2.grad, 1e-5)
    report("LayerNorm db_2", ops["layernorm.db_2"], ln.b_2.grad, 1e-5)
    # MultiHeadedAttention
    mha = article002.MultiHeadedAttention(2, 8, dropout=0.0).eval()
    for j in range(4):
        set_linear(mha.linears[j], ops, "mha.linears.%d" % j)
    q, k, v = leaf(ops["mha.query"]), leaf(ops["mha.key"]), leaf(ops["mha.value"])
    out = mha(q, k, v, ops["mha.mask"].bool())
    out.backward(ops["mha.dout"])
    report("MultiHeadedAttention out", ops["mha.out"], out, 1e-5)
    for n, t in (("dquery", q), ("dkey", k), ("dvalue", v)):
        report("MultiHeadedAttention " + n, ops["mha." + n], t.grad, 1e-5)
    for j in range(4):
        report_linear("MultiHeadedAttention linears.%d" % j, mha.linears[j], ops, "mha.linears.%d" % j, j == 1)
    # PositionwiseFeedForward
    ff = article002.PositionwiseFeedForward(8, 16, 0.0).eval()
    set_linear(ff.w_1, ops, "ffn.w_1")
    set_linear(ff.w_2, ops, "ffn.w_2")
    x = leaf(ops["ffn.x"])
    out = ff(x)
    out.backward(ops["ffn.dout"])
    report("PositionwiseFeedForward out", ops["ffn.out"], out, 1e-5)
    report("PositionwiseFeedForward dx", ops["ffn.dx"], x.grad, 1e-5)
    report_linear("PositionwiseFeedForward w_1", ff.w_1, ops, "ffn.w_1")
    report_linear("PositionwiseFeedForward w_2", ff.w_2, ops, "ffn.w_2")
    # GPT-2's MLP (ch12): the same feed-forward with a GELU (exact erf) between the Linears
    ff = article002.PositionwiseFeedForward(8, 16, 0.0).eval()
    set_linear(ff.w_1, ops, "gelu_ffn.w_1")
    set_linear(ff.w_2, ops, "gelu_ffn.w_2")
    x = leaf(ops["gelu_ffn.x"])
    out = ff.w_2(F.gelu(ff.w_1(x)))
    out.backward(ops["gelu_ffn.dout"])
    report("PositionwiseFeedForward(GELU) out", ops["gelu_ffn.out"], out, 1e-5)
    report("PositionwiseFeedForward(GELU) dx", ops["gelu_ffn.dx"], x.grad, 1e-5)
    report_linear("PositionwiseFeedForward(GELU) w_1", ff.w_1, ops, "gelu_ffn.w_1")
    report_linear("PositionwiseFeedForward(GELU) w_2", ff.w_2, ops, "gelu_ffn.w_2")
    # article 004's settings, dropout on with the C++ keep masks
    ff = article002.PositionwiseFeedForward(8, 16, 0.0)
    set_linear(ff.w_1, ops, "postln.w_1")
    set_linear(ff.w_2, ops, "postln.w_2")
    sub = article002.SublayerConnection(8, 0.0)
    with torch.no_grad():
        sub.norm.a_2.copy_(ops["postln.a_2"])
        sub.norm.b_2.copy_(ops["postln.b_2"])
    x = leaf(ops["postln.x"])
    def ffn(y):  # noqa: E306
        return ff.w_2(torch.relu(ff.w_1(y)) * ops["postln.ffn_keep"])
    out = sub.norm(x + ffn(x) * ops["postln.keep"])
    out.backward(ops["postln.dout"])
    report("post-LN Sublayer(ReLU FFN) out", ops["postln.out"], out, 1e-5)
    report("post-LN Sublayer(ReLU FFN) dx", ops["postln.dx"], x.grad, 1e-5)
    report("post-LN Sublayer norm da_2", ops["postln.da_2"], sub.norm.a_2.grad, 1e-5)
    report("post-LN Sublayer norm db_2", ops["postln.db_2"], sub.norm.b_2.grad, 1e-5)
    report_linear("post-LN Sublayer ReLU FFN w_1", ff.w_1, ops, "postln.w_1")
    report_linear("post-LN Sublayer ReLU FFN w_2", ff.w_2, ops, "postln.w_2")
    # Generator
    gen = article002.Generator(8, 7)
    set_linear(gen.proj, ops, "generator.proj")
    x = leaf(ops["generator.x"])
    out = gen(x)
    out.backward(ops["generator.dout"])
    report("Generator out", ops["generator.out"], out, 1e-5)
    report("Generator dx", ops["generator.dx"], x.grad, 1e-5)
    report_linear("Generator proj", gen.proj, ops, "generator.proj")

    # article 004's LayerNormalization: gamma (x - mean) / (std + eps) + beta, the population std
    # (tf.keras.backend.std), eps 1e-6 added to the std (the one LayerNorm, Article004 setting)
    gamma, beta = leaf(ops["layernorm004.gamma"]), leaf(ops["layernorm004.beta"])
    x = leaf(ops["layernorm004.x"])
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True, unbiased=False)
    out = gamma * (x - mean) / (std + 1e-6) + beta
    out.backward(ops["layernorm004.dout"])
    report("LayerNormalization (004) out", ops["layernorm004.out"], out, 1e-5)
    report("LayerNormalization (004) dx", ops["layernorm004.dx"], x.grad, 1e-4)
    report("LayerNormalization (004) dgamma", ops["layernorm004.dgamma"], gamma.grad, 1e-5)
    report("LayerNormalization (004) dbeta", ops["layernorm004.dbeta"], beta.grad, 1e-5)


def check_model(d, quick):
    check_one_model(os.path.join(d, "model.safetensors"), "article 002's settings", lambda m: m)
    check_one_model(os.path.join(d, "model004.safetensors"), "article 004's settings (ReLU, post-LN)",
                    article004_settings)


def check_one_model(path, what, settings):
    print("--- create_model(11, 13, N=2, C=16, F=32, H=4), %s, eval: every parameter's gradient, "
          "<= 1e-4 x max |ref|" % what)
    m = load_safetensors(path)[0]
    model = settings(article002.create_model(11, 13, N=2, d_model=16, d_ff=32, h=4, dropout=0.1)).eval()
    named = dict(model.named_parameters())
    with torch.no_grad():
        for name, p in named.items():
            p.copy_(m["param." + name])
    out = model(m["src"], m["tgt"], m["src_mask"].bool(), m["tgt_mask"].bool())
    logp = model.generator(out)
    logp.backward(m["dlogp"])
    report("generator(forward) log-probabilities", m["logp"], logp, 1e-5)
    ours = {k[len("grad."):]: v for k, v in m.items() if k.startswith("grad.")}
    # a key projection's bias has a true gradient of 0 (see report_linear): scale from its weight's
    for name in [n for n in ours if n.endswith("linears.1.bias")]:
        w = named[name[:-len("bias")] + "weight"].grad
        report(name + " (true gradient 0)", ours.pop(name), named.pop(name).grad, 1e-4, float(w.abs().max()))
    check_grads(ours, named)


if __name__ == "__main__":
    sys.exit(main_of(__doc__, "module_twin_", check_ops, check_model))
