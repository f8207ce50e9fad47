"""PyTorch twin of chapters/ch08_masks.cpp (run: /usr/bin/python3 tests/twins/ch08_masks.py --seed 0)."""

import numpy as np
import torch
import torch.nn.functional as F

from twinlib import BERT_BASE, TWIN, Twin, scaled_scores, tf_shape, tf_str
import article000
import article004
from article002 import subsequent_mask

tw = Twin(__doc__, [(("--d-model",), dict(type=int, default=BERT_BASE.hidden_size)),
                    (("--valid-len",), dict(type=int, default=None)),
                    (("--look-ahead",), dict(type=int, default=3))])
config = BERT_BASE


# Step 1: the scores of chapter 2 (q = k = v = the embedded sentence)
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, tw.args.d_model)
query = key = value = inputs_embeds
scores = scaled_scores(query, key)
tw.show("scores", scores, TWIN)

# Step 2: article 000's causal mask, 1 = keep, masked_fill(mask == 0, -inf)
seq_len = input_ids.size(-1)
mask = torch.tril(torch.ones(seq_len, seq_len)).unsqueeze(0)
tw.show("mask[0]", mask[0])
tw.show("mask == 0", mask == 0, TWIN)
masked_scores = scores.masked_fill(mask == 0, -float("inf"))
tw.show('scores.masked_fill(mask == 0, -float("inf"))', masked_scores)
masked_weights = F.softmax(masked_scores, dim=-1)
tw.show("masked_weights", masked_weights, TWIN)
tw.show("scaled_dot_product_attention(query, key, value, mask=mask)",
        article000.scaled_dot_product_attention(query, key, value, mask=mask), TWIN)

# Step 3: article 000's padding masks, combined with bmm
valid_len = min(3, seq_len) if tw.args.valid_len is None else tw.args.valid_len
query_mask = key_mask = (torch.arange(seq_len) < valid_len).float().unsqueeze(0)
tw.show("key_mask", key_mask, TWIN)
pad_mask = torch.bmm(query_mask.unsqueeze(-1), key_mask.unsqueeze(1))
tw.show("torch.bmm(query_mask.unsqueeze(-1), key_mask.unsqueeze(1))", pad_mask, TWIN)
pad_weights_inf = F.softmax(scores.masked_fill(pad_mask == 0, -float("inf")), dim=-1)
tw.show('F.softmax(scores.masked_fill(pad_mask == 0, -float("inf")), dim=-1)', pad_weights_inf, TWIN)
pad_out = article000.scaled_dot_product_attention(query, key, value, query_mask, key_mask)
tw.show("scaled_dot_product_attention(query, key, value, query_mask, key_mask)", pad_out, TWIN)
tw.show("scaled_dot_product_attention(pad_out, pad_out, pad_out, query_mask, key_mask)",
        article000.scaled_dot_product_attention(pad_out, pad_out, pad_out, query_mask, key_mask), TWIN)

# Step 4: the same fully masked rows with -1e9 (article 002's attention())
pad_scores_1e9 = scores.masked_fill(pad_mask == 0, -1e9)
tw.show("scores.masked_fill(pad_mask == 0, -1e9)", pad_scores_1e9, TWIN)
pad_weights_1e9 = F.softmax(pad_scores_1e9, dim=-1)
tw.show("F.softmax(scores.masked_fill(pad_mask == 0, -1e9), dim=-1)", pad_weights_1e9, TWIN)

# Step 5: article 004's masks, 1 = hide, printed as TensorFlow prints
x = [[1, 2, 0, 0, 0], [3, 4, 5, 0, 0]]
padding_mask = article004.create_padding_mask(x)
tw.show("create_padding_mask(x)", tf_str(padding_mask))
tw.show("create_padding_mask(x).shape", tf_shape(padding_mask.shape), TWIN)
tw.show(f"create_look_ahead_mask({tw.args.look_ahead})", tf_str(article004.create_look_ahead_mask(tw.args.look_ahead)))
combine_mask = torch.maximum(padding_mask, article004.create_look_ahead_mask(5))
tw.show("tf.maximum(create_padding_mask(x), create_look_ahead_mask(5))", tf_str(combine_mask), TWIN)
logits = torch.zeros(2, 1, 5, 5) + combine_mask * -1e9
tw.show("logits = tf.zeros((2, 1, 5, 5)) + combine_mask * -1e9", tf_str(logits), TWIN)
tw.show("tf.nn.softmax(logits, axis=-1)", tf_str(F.softmax(logits, dim=-1)), TWIN)
look_ahead_mask = article004.create_look_ahead_mask(seq_len)
_, attn_weight = article004.scaled_dot_product_attention(query, key, value, look_ahead_mask)
tw.show("torch.equal(attn_weight, masked_weights)", torch.equal(attn_weight, masked_weights), TWIN)

# Step 6: article 002's boolean tgt_mask
tgt_mask = subsequent_mask(seq_len)
tw.show("tgt_mask[0]", tgt_mask[0])
p_attn = F.softmax(scores.masked_fill(tgt_mask == 0, -1e9), dim=-1)
tw.show("torch.equal(p_attn, masked_weights)", torch.equal(p_attn, masked_weights), TWIN)

# Step 7: article 001's decoder_visible_mask (valid lengths, training mode)
num_steps, batch = seq_len, 1
decoder_visible_mask = torch.arange(1, num_steps + 1).repeat(batch, 1)
tw.show("decoder_visible_mask = torch.arange(1, num_steps + 1).repeat(batch, 1)", decoder_visible_mask, TWIN)
visible = torch.arange(num_steps)[None, :] < decoder_visible_mask[0][:, None]
tw.show("visible = torch.arange(num_steps)[None, :] < decoder_visible_mask[0][:, None]", visible, TWIN)
tw.show("torch.equal(visible, tgt_mask[0])", torch.equal(visible, tgt_mask[0]), TWIN)

# Step 8: the two polarities, and what mixing them up does
tw.show("torch.equal(1 - look_ahead_mask, mask[0])", torch.equal(1 - look_ahead_mask, mask[0]), TWIN)
tw.show("torch.equal(tgt_mask, mask == 1)", torch.equal(tgt_mask, mask == 1), TWIN)
wrong_a = F.softmax(scores.masked_fill(look_ahead_mask == 0, -float("inf")), dim=-1)
tw.show('F.softmax(scores.masked_fill(look_ahead_mask == 0, -float("inf")), dim=-1)', wrong_a, TWIN)
wrong_b = article004.scaled_dot_product_attention(query, key, value, mask)[1]
tw.show("article004.scaled_dot_product_attention(query, key, value, mask)[1]", wrong_b, TWIN)
