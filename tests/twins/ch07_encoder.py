"""PyTorch twin of chapters/ch07_encoder.cpp (run: /usr/bin/python3 tests/twins/ch07_encoder.py --seed 0).

Scenario (issue 4): torch.manual_seed(S); nn.Embedding(30522, C) on the ids; article 000's pre-LN
TransformerEncoderLayer(config) applied to the embedding output; the post-LN arrangement on the
same weights; article 002's SublayerConnection (no draws: LayerNorm of ones/zeros, Dropout) around
the same two sublayers; then article 000's TransformerEncoder(config) (Embeddings, then N layers)
applied to input_ids, one layer at a time; article 002's final LayerNorm on its output; and the
post-LN stack on the same weights, from the same embedding output."""
from copy import deepcopy

import torch
from torch import nn

from twinlib import ARTICLE, D_FF, D_MODEL, HEADS, LAYERS, TWIN, Twin
from article000 import TransformerEncoder, TransformerEncoderLayer
from article002 import LayerNorm, SublayerConnection

tw = Twin(__doc__, [LAYERS, D_MODEL, HEADS, D_FF])
config = tw.bert_config()
C = config.hidden_size


def mode(module):
    if not tw.training:
        module.eval()
    return module


# Step 1: the input of the encoder layer
input_ids, inputs_embeds = tw.embedded_ids(config.vocab_size, C)
tw.show("inputs_embeds.shape", inputs_embeds.shape)
tw.show("inputs_embeds.std(-1)", inputs_embeds.std(-1), TWIN)

# Step 2: article 000's pre-LN layer
encoder_layer = mode(TransformerEncoderLayer(config))
tw.show("encoder_layer", encoder_layer, TWIN)
pre_ln = encoder_layer(inputs_embeds)
tw.show("encoder_layer(inputs_embeds).size()", pre_ln.size())
tw.show("pre_ln = encoder_layer(inputs_embeds)", pre_ln, TWIN)
tw.show("pre_ln.std(-1)", pre_ln.std(-1), TWIN)

# Step 3: post-LN (articles 001/004) on the same weights
post_ln = encoder_layer.post_ln(inputs_embeds)
tw.show("post_ln = encoder_layer.post_ln(inputs_embeds)", post_ln, TWIN)
tw.show("post_ln.std(-1)", post_ln.std(-1), TWIN)
tw.show("pre_ln - post_ln", pre_ln - post_ln, TWIN)
tw.show("(pre_ln - post_ln).abs().max()", (pre_ln - post_ln).abs().max(), TWIN)

# Step 4: article 002's SublayerConnection around the same two sublayers
sublayer = mode(nn.ModuleList([deepcopy(SublayerConnection(C, config.hidden_dropout_prob)) for i in range(2)]))
tw.show("sublayer[0]", sublayer[0], TWIN)
x = sublayer[0](inputs_embeds, lambda x: encoder_layer.attention(x, x, x))
out_002 = sublayer[1](x, encoder_layer.feed_forward)
tw.show("out_002 = sublayer[1](sublayer[0](inputs_embeds, self_attn), feed_forward)", out_002, TWIN)
tw.show("(out_002 - pre_ln).abs().max()", (out_002 - pre_ln).abs().max(), TWIN)

# Step 5: the whole encoder, one layer at a time (the same ops as encoder(input_ids))
encoder = mode(TransformerEncoder(config))
x = encoder.embeddings(input_ids)
pre_hidden = [x]
for layer in encoder.layers:
    x = layer(x)
    pre_hidden.append(x)
tw.show("encoder(inputs.input_ids).size()", x.size())
tw.show("encoder(inputs.input_ids)", x, TWIN)
tw.show("encoder(inputs.input_ids).std(-1)", x.std(-1), TWIN)
norm = LayerNorm(C)
final = norm(x)
tw.show("norm(encoder(inputs.input_ids))  # article 002's Encoder.norm", final, TWIN)
tw.show("norm(encoder(inputs.input_ids)).std(-1)", final.std(-1), TWIN)

# Step 6: the post-LN stack on the same weights, from the same embedding output
y = pre_hidden[0]
post_hidden = [y]
for layer in encoder.layers:
    y = layer.post_ln(y)
    post_hidden.append(y)
tw.show("post_ln_stack[-1]", y, TWIN)
layer_std = torch.tensor([[h.std(-1).mean().item(), p.std(-1).mean().item()]
                          for h, p in zip(pre_hidden, post_hidden)])
tw.show("layer_std  # row l: after l layers (0 = embeddings); columns: pre-LN, post-LN", layer_std, TWIN)
