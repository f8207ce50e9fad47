"""PyTorch twin of chapters/ch03_softmax.cpp (run: /usr/bin/python3 tests/twins/ch03_softmax.py --seed 0)."""
from math import sqrt

import torch
import torch.nn.functional as F

from twinlib import BERT_BASE, TWIN, Twin, scaled_scores

tw = Twin(__doc__, [(("--d-model",), dict(type=int, default=BERT_BASE.hidden_size)),
                    (("--d-k",), dict(type=int, default=64))])
config = BERT_BASE

# Step 1: the scores of chapter 2
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, tw.args.d_model, show_ids=False)
query = key = value = inputs_embeds
scores = scaled_scores(query, key)
tw.show("scores", scores, TWIN)

# Step 2: softmax over the keys; every row sums to 1
weights = F.softmax(scores, dim=-1)
tw.show("weights", weights, TWIN)
tw.show("weights.sum(dim=-1)", weights.sum(dim=-1))

# Step 3: the weighted sum of the values
attn_outputs = torch.bmm(weights, value)
tw.show("attn_outputs.shape", attn_outputs.shape)
tw.show("attn_outputs", attn_outputs, TWIN)

# Step 4: why softmax subtracts the row maximum (unscaled scores overflow exp)
raw = torch.bmm(query, key.transpose(1, 2))
tw.show("raw = torch.bmm(query, key.transpose(1, 2))", raw, TWIN)
tw.show("torch.exp(raw)", torch.exp(raw), TWIN)
tw.show("torch.exp(raw) / torch.exp(raw).sum(dim=-1, keepdim=True)",
        torch.exp(raw) / torch.exp(raw).sum(dim=-1, keepdim=True), TWIN)
shifted = raw - raw.amax(dim=-1, keepdim=True)
tw.show("shifted = raw - raw.amax(dim=-1, keepdim=True)", shifted, TWIN)
tw.show("torch.exp(shifted) / torch.exp(shifted).sum(dim=-1, keepdim=True)",
        torch.exp(shifted) / torch.exp(shifted).sum(dim=-1, keepdim=True), TWIN)
tw.show("F.softmax(raw, dim=-1)", F.softmax(raw, dim=-1), TWIN)

# Step 5: what the 1/sqrt(d_k) scaling does to projected-like vectors (built after the above)
d_k = tw.args.d_k
T = input_ids.shape[1]
q = torch.randn(1, T, d_k)
k = torch.randn(1, T, d_k)
qk = torch.bmm(q, k.transpose(1, 2))
tw.show("qk = torch.bmm(q, k.transpose(1, 2))", qk, TWIN)
tw.show("F.softmax(qk, dim=-1)", F.softmax(qk, dim=-1), TWIN)
tw.show("F.softmax(qk / sqrt(d_k), dim=-1)", F.softmax(qk / sqrt(d_k), dim=-1), TWIN)
