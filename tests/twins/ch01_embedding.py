"""PyTorch twin of chapters/ch01_embedding.cpp (run: /usr/bin/python3 tests/twins/ch01_embedding.py --seed 0)."""
import numpy as np
import torch
from torch import nn

from twinlib import ARTICLE, BERT_BASE, TWIN, Twin, tf_shape
from article000 import Embeddings

tw = Twin(__doc__, [(("--special",), dict(action="store_true")),
                    (("--pe-len",), dict(type=int, default=50)),
                    (("--pe-dim",), dict(type=int, default=512))])
config = BERT_BASE

# Step 1: text -> ids
input_ids = tw.input_ids(add_special_tokens=tw.args.special)
tw.show("inputs.input_ids", input_ids)

# Step 2: nn.Embedding
token_emb = nn.Embedding(config.vocab_size, config.hidden_size)
tw.show("token_emb", token_emb)
inputs_embeds = token_emb(input_ids)
tw.show("inputs_embeds.size()", inputs_embeds.size())
tw.show("inputs_embeds", inputs_embeds, TWIN)
first = int(input_ids[0, 0])
tw.show(f"token_emb.weight[{first}, :8]", token_emb.weight[first, :8], TWIN)
tw.show("token_emb.weight", token_emb.weight, TWIN)

# Step 3: article 000's Embeddings (learned positions)
embedding_layer = Embeddings(config)
if not tw.training:
    embedding_layer.eval()
tw.show("embedding_layer", embedding_layer, TWIN)
embedded = embedding_layer(input_ids)
tw.show("embedding_layer(inputs.input_ids).size()", embedded.size())
tw.show("embedding_layer(inputs.input_ids)", embedded, TWIN)


# Step 4: article 004's sinusoidal positional_encoding (numpy, then float32)
def get_angles(pos, i, d_model):
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    return pos * angle_rates


def positional_encoding(l_1, d_model):
    angle_rads = get_angles(np.arange(l_1)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads.astype(np.float32)


pos_encoding = positional_encoding(tw.args.pe_len, tw.args.pe_dim)
tw.show("pos_encoding.shape", tf_shape(pos_encoding.shape))
r, c = min(5, pos_encoding.shape[0]), min(8, pos_encoding.shape[1])
tw.show(f"torch.from_numpy(pos_encoding[:{r}, :{c}])", torch.from_numpy(np.ascontiguousarray(pos_encoding[:r, :c])), TWIN)
