"""PyTorch twin of chapters/ch04_multihead.cpp (run: /usr/bin/python3 tests/twins/ch04_multihead.py --seed 0).

Order of the random draws (the issue's scenario, then the demonstrations):
  nn.Embedding(30522, C); article 000's MultiHeadAttention(config); [no draws: fused copy of it];
  article 002's MultiHeadedAttention(8, 256); x = randn(1, 6, 256); mha(x, x, x) (dropout draws
  in train mode); a per-head MultiHeadAttention for 256/8 (overwritten by slices of mha);
  article 004's MutilHeadAttention(512, 8); y = rand(1, L, 512).
"""
from copy import copy
from math import sqrt

import torch
import torch.nn.functional as F

from twinlib import ARTICLE, BERT_BASE, D_MODEL, HEADS, TWIN, Twin, tf_shape, tf_str
from article000 import MultiHeadAttention
from article002 import MultiHeadedAttention, attention
from article004 import MutilHeadAttention

tw = Twin(__doc__, [D_MODEL, HEADS, (("--seq-len",), dict(type=int, default=60))])
config = tw.bert_config()

# Step 1: ids -> embeddings; q = k = v
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, config.hidden_size)
query = key = value = inputs_embeds

# Step 2: one head of article 000's MultiHeadAttention (heads[0] is drawn right after the
# embedding, exactly like a lone AttentionHead(768, 64))
multihead_attn = MultiHeadAttention(config)
head = multihead_attn.heads[0]
tw.show("head = multihead_attn.heads[0]", head, TWIN)
tw.show("head.q(query)", head.q(query), TWIN)
tw.show("head(query, key, value).size()", head(query, key, value).size(), TWIN)
tw.show("head(query, key, value)", head(query, key, value), TWIN)

# Step 3: every head's attention weights
head_dim = config.hidden_size // config.num_attention_heads
weights = torch.stack([F.softmax(torch.bmm(h.q(query), h.k(key).transpose(1, 2)) / sqrt(head_dim), dim=-1)
                       for h in multihead_attn.heads], dim=1)
tw.show("weights = torch.stack([softmax(q_h k_h^T / sqrt(head_dim)) for h in heads], dim=1)", weights, TWIN)

# Step 4: the whole layer: 12 heads, concatenated, output_linear
tw.show("multihead_attn", multihead_attn, TWIN)
attn_output = multihead_attn(query, key, value)
tw.show("attn_output.size()", attn_output.size())
tw.show("attn_output", attn_output, TWIN)

# Step 5: the same layer fused: one (C, C) Linear per q/k/v stacked from the heads' weights,
# split into heads with view/transpose, article 002's attention()
H, D = config.num_attention_heads, head_dim
W_q = torch.cat([h.q.weight for h in multihead_attn.heads], dim=0)
b_q = torch.cat([h.q.bias for h in multihead_attn.heads], dim=0)
W_k = torch.cat([h.k.weight for h in multihead_attn.heads], dim=0)
b_k = torch.cat([h.k.bias for h in multihead_attn.heads], dim=0)
W_v = torch.cat([h.v.weight for h in multihead_attn.heads], dim=0)
b_v = torch.cat([h.v.bias for h in multihead_attn.heads], dim=0)
tw.show("W_q = torch.cat([h.q.weight for h in multihead_attn.heads], dim=0); W_q.shape", W_q.shape, TWIN)
Q = F.linear(query, W_q, b_q).view(1, -1, H, D).transpose(1, 2)
K = F.linear(key, W_k, b_k).view(1, -1, H, D).transpose(1, 2)
V = F.linear(value, W_v, b_v).view(1, -1, H, D).transpose(1, 2)
tw.show("Q = F.linear(query, W_q, b_q).view(1, -1, H, D).transpose(1, 2); Q.shape", Q.shape, TWIN)
fused, p_attn = attention(Q, K, V)
fused = fused.transpose(1, 2).contiguous().view(1, -1, H * D)
fused_output = multihead_attn.output_linear(fused)
tw.show("(p_attn - weights).abs().max()", (p_attn - weights).abs().max(), TWIN)
tw.show("(fused_output - attn_output).abs().max()", (fused_output - attn_output).abs().max(), TWIN)

# Step 6: article 002's MultiHeadedAttention: d_model 256 split into 8 heads of 32
mha = MultiHeadedAttention(8, 256)
if tw.args.eval:
    mha.eval()
tw.show("mha = MultiHeadedAttention(8, 256)", mha, TWIN)
tw.show("torch.equal(mha.linears[0].weight, mha.linears[1].weight)",
        str(torch.equal(mha.linears[0].weight, mha.linears[1].weight)), TWIN)
x = torch.randn(1, 6, 256)
tw.show("x = torch.randn(1, 6, 256); x.shape", x.shape, TWIN)
q_x = mha.linears[0](x)
tw.show("mha.linears[0](x).shape", q_x.shape, TWIN)
q_heads = q_x.view(1, -1, mha.h, mha.d_k).transpose(1, 2)
tw.show("mha.linears[0](x).view(1, -1, 8, 32).transpose(1, 2).shape", q_heads.shape, TWIN)
tw.show("mha.linears[0](x).view(1, -1, 8, 32).transpose(1, 2)[:, 0].shape", q_heads[:, 0].shape, TWIN)
out = mha(x, x, x)
tw.show("mha(x, x, x).shape", out.shape, TWIN)
tw.show("mha.attn.shape", mha.attn.shape, TWIN)
tw.show("mha(x, x, x)", out, TWIN)

# Step 7: per-head == fused: article 000's per-head layer loaded with slices of mha's weights
mha.eval()
config_256 = copy(BERT_BASE)
config_256.hidden_size, config_256.num_attention_heads = 256, 8
per_head = MultiHeadAttention(config_256)
with torch.no_grad():
    for i, h in enumerate(per_head.heads):
        rows = slice(i * mha.d_k, (i + 1) * mha.d_k)
        for lin, fused_lin in zip((h.q, h.k, h.v), mha.linears[:3]):
            lin.weight.copy_(fused_lin.weight[rows])
            lin.bias.copy_(fused_lin.bias[rows])
    per_head.output_linear.weight.copy_(mha.linears[3].weight)
    per_head.output_linear.bias.copy_(mha.linears[3].bias)
tw.show("per_head.heads[1].q.weight.shape", per_head.heads[1].q.weight.shape, TWIN)
tw.show("(per_head(x, x, x) - mha(x, x, x)).abs().max()", (per_head(x, x, x) - mha(x, x, x)).abs().max(), TWIN)

# Step 8: article 004's split_heads layer (TensorFlow, printed the TensorFlow way)
mha004 = MutilHeadAttention(d_model=512, num_heads=8)
y = torch.rand(1, tw.args.seq_len, 512)
output, att = mha004(y, k=y, q=y, mask=None)
tw.show("print(output.shape, att.shape)", tf_shape(output.shape) + " " + tf_shape(att.shape))
tw.show("output", tf_str(output.detach()), TWIN)
