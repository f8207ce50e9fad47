"""PyTorch twin of chapters/ch05_ffn.cpp (run: /usr/bin/python3 tests/twins/ch05_ffn.py --seed 0).

Order of the random draws (the issue's scenario, then the demonstrations):
  nn.Embedding(30522, C); article 000's MultiHeadAttention(config); FeedForward(config);
  feed_forward(attn_output) (dropout draws in train mode); article 001's PositionWiseFFN
  (LazyLinear: dense1 and dense2 drawn at the first call); article 002's
  PositionwiseFeedForward(C, F, 0.1); ff(attn_output) (dropout draws in train mode);
  the merged nn.Linear(C, C) (drawn, then overwritten).
"""
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from twinlib import D_FF, D_MODEL, HEADS, TWIN, Twin
from article000 import FeedForward, MultiHeadAttention
from article002 import PositionwiseFeedForward

warnings.filterwarnings("ignore", message="Lazy modules are a new feature")


class PositionWiseFFN(nn.Module):
    """Article 001's position-wise FFN (d2l style): LazyLinear, ReLU, LazyLinear."""

    def __init__(self, ffn_hidden_dims, ffn_output_dims):
        super().__init__()
        self.dense1 = nn.LazyLinear(ffn_hidden_dims)
        self.relu = nn.ReLU()
        self.dense2 = nn.LazyLinear(ffn_output_dims)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


tw = Twin(__doc__, [D_MODEL, HEADS, D_FF])
config = tw.bert_config()

# Step 1: chapter 4's multi-head attention output
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, config.hidden_size)
query = key = value = inputs_embeds
multihead_attn = MultiHeadAttention(config)
attn_output = multihead_attn(query, key, value)
tw.show("attn_output", attn_output, TWIN)

# Step 2: article 000's FeedForward: Linear(C, F), GELU, Linear(F, C), Dropout
feed_forward = FeedForward(config)
if tw.args.eval:
    feed_forward.eval()
tw.show("feed_forward", feed_forward, TWIN)
tw.show("feed_forward.training", feed_forward.training, TWIN)
hidden = feed_forward.linear_1(attn_output)
tw.show("feed_forward.linear_1(attn_output).size()", hidden.size(), TWIN)
tw.show("feed_forward.gelu(feed_forward.linear_1(attn_output))", feed_forward.gelu(hidden), TWIN)
ff_outputs = feed_forward(attn_output)
tw.show("ff_outputs.size()", ff_outputs.size())
tw.show("ff_outputs", ff_outputs, TWIN)

# Step 3: GELU vs ReLU: the two curves, then the same weights with either activation
z = torch.tensor([-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
tw.show("z", z, TWIN)
tw.show("F.gelu(z)", F.gelu(z), TWIN)
tw.show("F.relu(z)", F.relu(z), TWIN)
with_gelu = feed_forward.linear_2(F.gelu(hidden))
with_relu = feed_forward.linear_2(F.relu(hidden))
tw.show("with_gelu = feed_forward.linear_2(F.gelu(hidden))", with_gelu, TWIN)
tw.show("with_relu = feed_forward.linear_2(F.relu(hidden))", with_relu, TWIN)
tw.show("(with_gelu - with_relu).abs().max()", (with_gelu - with_relu).abs().max(), TWIN)

# Step 4: article 001's PositionWiseFFN: LazyLinear learns its input size at the first call
ffn = PositionWiseFFN(config.intermediate_size, config.hidden_size)
tw.show(f"ffn = PositionWiseFFN({config.intermediate_size}, {config.hidden_size})", ffn, TWIN)
ffn_outputs = ffn(attn_output)
tw.show("ffn  # after ffn(attn_output)", ffn, TWIN)
tw.show("ffn(attn_output)", ffn_outputs, TWIN)

# Step 5: article 002's PositionwiseFeedForward has no activation between its Linears
ff = PositionwiseFeedForward(config.hidden_size, config.intermediate_size, config.hidden_dropout_prob)
if tw.args.eval:
    ff.eval()
tw.show(f"ff = PositionwiseFeedForward({config.hidden_size}, {config.intermediate_size})", ff, TWIN)
tw.show("ff(attn_output)", ff(attn_output), TWIN)

# Step 6: without an activation the two Linears are one: W = W2 W1, b = W2 b1 + b2
ff.eval()
W = ff.w_2.weight @ ff.w_1.weight
b = ff.w_2(ff.w_1.bias)
tw.show("W = ff.w_2.weight @ ff.w_1.weight; W.shape", W.shape, TWIN)
tw.show("b = ff.w_2(ff.w_1.bias); b.shape", b.shape, TWIN)
merged = nn.Linear(config.hidden_size, config.hidden_size)
with torch.no_grad():
    merged.weight.copy_(W)
    merged.bias.copy_(b)
tw.show("merged", merged, TWIN)
tw.show("(ff(attn_output) - merged(attn_output)).abs().max()",
        (ff(attn_output) - merged(attn_output)).abs().max(), TWIN)
tw.show("(ff.w_2(F.gelu(ff.w_1(attn_output))) - merged(attn_output)).abs().max()",
        (ff.w_2(F.gelu(ff.w_1(attn_output))) - merged(attn_output)).abs().max(), TWIN)
tw.show("(ff.w_2(F.relu(ff.w_1(attn_output))) - merged(attn_output)).abs().max()",
        (ff.w_2(F.relu(ff.w_1(attn_output))) - merged(attn_output)).abs().max(), TWIN)
