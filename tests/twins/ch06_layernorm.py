"""PyTorch twin of chapters/ch06_layernorm.cpp (run: /usr/bin/python3 tests/twins/ch06_layernorm.py --seed 0).

Scenario (issue 4): torch.manual_seed(S); nn.Embedding(30522, C) on the ids; the three LayerNorms
of the articles applied to its output (no draws); the same three on a short row; then article
001's AddNorm (its Dropout draws in train mode) on the embeddings and their parameter-free
self-attention (chapter 3's softmax(q k^T / sqrt(d)) v)."""

import torch
import torch.nn.functional as F
from torch import nn

from twinlib import BERT_BASE, TWIN, Twin, scaled_scores
from article002 import LayerNorm


class LayerNormalization(nn.Module):
    """Article 004's Keras LayerNormalization re-typed in PyTorch (used by ch06 only).
    tf.keras.backend.std is the POPULATION std (divides by n), and eps is added to the std,
    outside any square root: gamma * (x - mean) / (std + eps) + beta, eps 1e-6."""

    def __init__(self, features, epsilon=1e-6):
        super().__init__()
        self.eps = epsilon
        self.gamma = nn.Parameter(torch.ones(features))
        self.beta = nn.Parameter(torch.zeros(features))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True, unbiased=False)
        output = self.gamma * (x - mean) / (std + self.eps) + self.beta
        return output


class AddNorm(nn.Module):
    """Article 001's AddNorm (used by ch06 only): X is the residual input, Y the sublayer output."""

    def __init__(self, dim, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(dim)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


tw = Twin(__doc__, [(("--d-model",), dict(type=int, default=BERT_BASE.hidden_size)),
                    (("--row",), dict(default="1,2,3,4"))])
config = BERT_BASE
C = tw.args.d_model


def row_stats(name, y):
    tw.show(f"{name}.mean(-1)", y.mean(-1), TWIN)
    tw.show(f"{name}.var(-1, unbiased=False)", y.var(-1, unbiased=False), TWIN)


# Step 1: the rows to normalise
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, C)
tw.show("inputs_embeds", inputs_embeds, TWIN)
row_stats("inputs_embeds", inputs_embeds)

# Step 2: article 000's nn.LayerNorm (biased variance, eps 1e-5 inside the sqrt)
layer_norm = nn.LayerNorm(C)
tw.show("layer_norm", layer_norm, TWIN)
ln_000 = layer_norm(inputs_embeds)
tw.show("ln_000 = layer_norm(inputs_embeds)", ln_000, TWIN)
row_stats("ln_000", ln_000)

# Step 3: article 002's LayerNorm (unbiased std, sqrt(std**2 + 1e-6))
norm_002 = LayerNorm(C)
tw.show("norm_002", norm_002, TWIN)
ln_002 = norm_002(inputs_embeds)
tw.show("ln_002 = norm_002(inputs_embeds)", ln_002, TWIN)
row_stats("ln_002", ln_002)
tw.show("ln_002.std(-1)", ln_002.std(-1), TWIN)
tw.show("(ln_002 - ln_000).abs().max()", (ln_002 - ln_000).abs().max(), TWIN)

# Step 4: article 004's LayerNormalization (population std, std + 1e-6)
norm_004 = LayerNormalization(C)
ln_004 = norm_004(inputs_embeds)
tw.show("ln_004 = norm_004(inputs_embeds)", ln_004, TWIN)
row_stats("ln_004", ln_004)
tw.show("(ln_004 - ln_000).abs().max()", (ln_004 - ln_000).abs().max(), TWIN)

# Step 5: a short row, where the three disagree visibly; then the same row / 1000, where eps decides
x = torch.tensor([[float(v) for v in tw.args.row.split(",")]])
n = x.size(-1)
tw.show("x", x, TWIN)
x_small = x / 1000
for name, row in (("x", x), ("x_small", x_small)):
    if name == "x_small":
        tw.show("x_small = x / 1000", x_small, TWIN)
    y_000 = nn.LayerNorm(n)(row)
    y_002 = LayerNorm(n)(row)
    y_004 = LayerNormalization(n)(row)
    # (--plain prints nothing here: the articles print nothing in their LayerNorm sections.)
    who = TWIN
    tw.show(f"y_000 = nn.LayerNorm({n})({name})", y_000, who)
    tw.show(f"y_002 = LayerNorm({n})({name})  # article 002", y_002, who)
    tw.show(f"y_004 = LayerNormalization({n})({name})  # article 004", y_004, who)
    tw.show("y_002 - y_000", y_002 - y_000, TWIN)
    tw.show("y_004 - y_000", y_004 - y_000, TWIN)

# Step 6: article 001's Add & Norm: LayerNorm(dropout(Y) + X), Y = chapter 3's attention output
query = key = value = inputs_embeds
scores = scaled_scores(query, key)
attn_outputs = torch.bmm(F.softmax(scores, dim=-1), value)
tw.show("attn_outputs", attn_outputs, TWIN)
add_norm = AddNorm(C, config.hidden_dropout_prob)
if not tw.training:
    add_norm.eval()
tw.show("add_norm", add_norm, TWIN)
# add_norm(inputs_embeds, attn_outputs), one step at a time (the same ops in the same order)
summed = add_norm.dropout(attn_outputs) + inputs_embeds
tw.show("summed = add_norm.dropout(attn_outputs) + inputs_embeds", summed, TWIN)
tw.show("summed.std(-1)", summed.std(-1), TWIN)
out = add_norm.ln(summed)
tw.show("add_norm(inputs_embeds, attn_outputs)", out, TWIN)
row_stats("add_norm(inputs_embeds, attn_outputs)", out)
