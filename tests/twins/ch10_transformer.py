"""PyTorch twin of chapters/ch10_transformer.cpp (run: /usr/bin/python3 tests/twins/ch10_transformer.py --seed 0).

torch.manual_seed(S); article 002's create_model(src_vocab, tgt_vocab, N, d_model, d_ff, h) (its
xavier_uniform_ included); train mode unless --eval for encode/decode; greedy decoding always
in eval mode (article 004's evaluate()); then two train-mode tries of the first step."""
import math
import sys

import torch

from twinlib import TWIN, Twin
from article002 import create_model, subsequent_mask

# The chapter's own default sentence (twinlib's default is article 000's).
if not any(arg == "--text" or arg.startswith("--text=") for arg in sys.argv[1:]):
    sys.argv[1:1] = ["--text", "How are you?"]

FRENCH = ["<pad>", "<bos>", "<eos>", "<unk>", "comment", "et", "es-vous", "?", "je", "ne", "parle",
          "pas", "français", "bonjour", "merci", "vous", "allez", "bien", "très", "oui", "non", "le",
          "la", "un", "une", "!", ".", ",", "suis", "étudiant", "ça", "va"]
PAD, BOS, EOS, UNK = 0, 1, 2, 3

tw = Twin(__doc__, [(("--target",), dict(default="comment et es-vous ?")),
                    (("--layers",), dict(type=int, default=6)),
                    (("--d-model",), dict(type=int, default=256)),
                    (("--heads",), dict(type=int, default=8)),
                    (("--d-ff",), dict(type=int, default=1024)),
                    (("--max-len",), dict(type=int, default=10)),
                    (("--src-vocab",), dict(type=int, default=30522)),
                    (("--tgt-vocab",), dict(type=int, default=len(FRENCH)))])
a = tw.args


def french(i):
    return FRENCH[i] if 0 <= i < len(FRENCH) else "<%d>" % i


def words(ids):
    return " ".join(french(int(i)) for i in ids)


def top_line(lp):
    values, indices = lp[0].topk(5)
    return ", ".join("%s %.4f" % (french(int(i)), float(v)) for v, i in zip(values, indices))


# Step 1: create_model
model = create_model(a.src_vocab, a.tgt_vocab, N=a.layers, d_model=a.d_model, d_ff=a.d_ff, h=a.heads)
if not tw.training:
    model.eval()
tw.show("model.src_embed", model.src_embed, TWIN)
tw.show("model.generator", model.generator, TWIN)
parts = {}
for name, p in model.named_parameters():
    part = name.split(".")[0]
    parts[part] = parts.get(part, 0) + p.numel()
table = "\n".join("%-10s %12s" % (k, "{:,}".format(v)) for k, v in parts.items())
table += "\n%-10s %12s" % ("total", "{:,}".format(sum(parts.values())))
tw.show("{part: sum(p.numel() for p in module.parameters())}", table, TWIN)
tw.show("model.generator.proj.weight[0, :6]", model.generator.proj.weight[0, :6], TWIN)

# Step 2: encode
src = tw.input_ids(add_special_tokens=True)
tw.show("src", src, TWIN)
src_mask = (src != 0).unsqueeze(-2)
tw.show("src_mask = (src != 0).unsqueeze(-2)", src_mask, TWIN)
memory = model.encode(src, src_mask)
tw.show("memory.shape", memory.shape)
tw.show("memory", memory, TWIN)

# Step 3: decode a known target
tgt = torch.tensor([[BOS] + [FRENCH.index(w) if w in FRENCH else UNK for w in a.target.split()]])
tw.show("tgt", tgt, TWIN)
tgt_mask = (tgt != PAD).unsqueeze(-2) & subsequent_mask(tgt.size(-1))
tw.show("tgt_mask = (tgt != 0).unsqueeze(-2) & subsequent_mask(tgt.size(-1))", tgt_mask, TWIN)
out = model.decode(memory, src_mask, tgt, tgt_mask)
tw.show("out.shape", out.shape)
tw.show("out", out, TWIN)
tw.show("model.decoder.layers[-1].src_attn.attn[:, 0].shape", model.decoder.layers[-1].src_attn.attn[:, 0].shape)

# Step 4: the generator
logp = model.generator(out)
tw.show("logp = model.generator(out)", logp, TWIN)
tw.show("logp.argmax(dim=-1)", logp.argmax(dim=-1), TWIN)

# Step 5: greedy decoding (article 004's evaluate()), eval mode
model.eval()
memory = model.encode(src, src_mask)
ys = torch.tensor([[BOS]])
for i in range(a.max_len):
    out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)))
    lp = model.generator(out[:, -1])
    next_word = int(lp.argmax(dim=-1))
    tw.show("step %d: model.generator(model.decode(memory, src_mask, ys, subsequent_mask(%d))[:, -1])" % (i + 1, ys.size(1)),
            "ys = [%s] -> next = %s (id %d)\ntop-5: %s" % (words(ys[0]), french(next_word), next_word, top_line(lp)),
            TWIN)
    if next_word == EOS:
        break
    ys = torch.cat([ys, torch.tensor([[next_word]])], dim=1)
tw.show("print('输入: {}'.format(sentence))", "输入: " + a.text)
tw.show("print('预测输出: {}'.format(predicted_sentence))", "预测输出: " + words(ys[0, 1:]))

# Step 7: the first step again in train mode, twice
model.train()
first = torch.tensor([[BOS]])
for trial in (1, 2):
    mem_tr = model.encode(src, src_mask)
    lp = model.generator(model.decode(mem_tr, src_mask, first, subsequent_mask(1))[:, -1])
    tw.show("train mode, try %d: step 1 top-5" % trial, top_line(lp), TWIN)
