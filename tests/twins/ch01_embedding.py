"""PyTorch twin of chapters/ch01_embedding.cpp (run: /usr/bin/python3 tests/twins/ch01_embedding.py --seed 0)."""
from types import SimpleNamespace

import numpy as np
import torch
from torch import nn

from twinlib import ARTICLE, BERT_BASE, TWIN, Twin, tf_shape
from article000 import Embeddings
from article002 import PositionalEncoding
from article004 import positional_encoding
from tokenizer_reference import BertTokenizer

tw = Twin(__doc__, [(("--special",), dict(action="store_true")),
                    (("--d-model",), dict(type=int, default=BERT_BASE.hidden_size)),
                    (("--seq-len", "--pe-len"), dict(type=int, default=50, dest="pe_len")),
                    (("--pe-dim",), dict(type=int, default=512))])
config = SimpleNamespace(**{**vars(BERT_BASE), "hidden_size": tw.args.d_model})

# Step 1: text -> pieces -> ids
tokenizer = BertTokenizer(tw.args.vocab)
tw.show("tokenizer.tokenize(text)", tokenizer.tokenize(tw.args.text), TWIN)
words = tokenizer.tokenize_with_words(tw.args.text)[0]
if all(len(tokenizer.wordpiece_tokenizer.tokenize(w)) == 1 for w in words):
    demo = tokenizer.tokenize("unaffable tokenization")
    tw.show('tokenizer.tokenize("unaffable tokenization")', demo, TWIN)
    tw.show("tokenizer.convert_tokens_to_ids(_)", tokenizer.convert_tokens_to_ids(demo), TWIN)
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

# Step 4: article 004's sinusoidal positional_encoding (numpy, then float32), and article 002's
# PositionalEncoding (float32 torch ops) for the same size: no random draws
L, C = tw.args.pe_len, tw.args.pe_dim
pos_encoding = positional_encoding(L, C)
tw.show("pos_encoding.shape", tf_shape(pos_encoding.shape))
r, c = min(5, pos_encoding.shape[0]), min(8, pos_encoding.shape[1])
tw.show(f"torch.from_numpy(pos_encoding[:{r}, :{c}])", torch.from_numpy(np.ascontiguousarray(pos_encoding[:r, :c])), TWIN)
if C % 2 == 0:
    tw.show(f"(torch.from_numpy(pos_encoding) - PositionalEncoding({C}, 0.1, max_len={L}).pe[0]).abs().max()",
            (torch.from_numpy(pos_encoding) - PositionalEncoding(C, 0.1, max_len=L).pe[0]).abs().max(), TWIN)
