"""PyTorch twin of chapters/ch02_attention_scores.cpp (run: /usr/bin/python3 tests/twins/ch02_attention_scores.py --seed 0)."""
from math import sqrt

import numpy as np
import torch

from twinlib import ARTICLE, BERT_BASE, TWIN, Twin, tf_str
from article004 import TOY_K, TOY_Q, TOY_V, scaled_dot_product_attention

tw = Twin(__doc__, [(("--d-model",), dict(type=int, default=BERT_BASE.hidden_size))])
config = BERT_BASE

# Step 1: ids -> embeddings; q = k = v
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, tw.args.d_model)
tw.show("inputs_embeds.size()", inputs_embeds.size(), TWIN)

# Step 2: scores = bmm(q, k^T) / sqrt(dim_k)
query = key = value = inputs_embeds
dim_k = key.size(-1)
tw.show("dim_k", dim_k, TWIN)
scores = torch.bmm(query, key.transpose(1, 2)) / sqrt(dim_k)
tw.show("scores.size()", scores.size())
tw.show("scores", scores, TWIN)

# Step 3: article 004's toy example (printed as TensorFlow prints, with the article's
# np.set_printoptions(suppress=True)), one query at a time, then all three together.
temp_k = torch.tensor(TOY_K, dtype=torch.float32)
temp_v = torch.tensor(TOY_V, dtype=torch.float32)
tw.show("k", tf_str(temp_k), TWIN)
tw.show("v", tf_str(temp_v), TWIN)
for row in (1, 0, 2):
    temp_q = torch.tensor([TOY_Q[row]], dtype=torch.float32)
    temp_out, temp_attn = scaled_dot_product_attention(temp_q, temp_k, temp_v, None)
    tw.show("temp_q", tf_str(temp_q), TWIN)
    with np.printoptions(suppress=True):
        tw.show("temp_attn", tf_str(temp_attn), TWIN)
        tw.show("temp_out", tf_str(temp_out), TWIN)

q = torch.tensor(TOY_Q, dtype=torch.float32)
out, att = scaled_dot_product_attention(q, temp_k, temp_v, None)
with np.printoptions(suppress=True):
    tw.show("att", tf_str(att))
    tw.show("out", tf_str(out))
tw.show("att  # np.set_printoptions(suppress=False)", tf_str(att), TWIN)
tw.show("out  # np.set_printoptions(suppress=False)", tf_str(out), TWIN)
