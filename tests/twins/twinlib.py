"""twinlib: what every PyTorch twin script shares.

A twin runs the article's code in PyTorch, after torch.manual_seed(S), with the same
configuration and in the same order as the C++ chapter, and prints in one of two modes:
  --plain       only what the article's own print() calls show
  --transcript  every tensor the chapter shows, as '>>> expr' then print(value)
  --both        the two above from one run: --plain's text, the line BOTH_SEPARATOR, --transcript's
                (tests/twin_compare.py: one PyTorch start per case instead of two)
tests/twin_compare.py runs a chapter and its twin in both modes and diffs them.
"""
import argparse
import atexit
import os
import sys
from copy import copy
from math import sqrt
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from torch import nn  # noqa: E402

ARTICLE, TWIN = "article", "twin"
# --both: what separates --plain's text from --transcript's (a record separator, never in a print)
BOTH_SEPARATOR = "\x1e twin --transcript follows \x1e"

# Article 000's AutoConfig.from_pretrained("bert-base-uncased"), the fields it uses.
BERT_BASE = SimpleNamespace(
    vocab_size=30522, hidden_size=768, num_attention_heads=12, intermediate_size=3072,
    hidden_dropout_prob=0.1, max_position_embeddings=512, num_hidden_layers=12)

# The size knobs the chapters share (Twin's extra_args), each defaulting to bert-base-uncased's size,
# and the config field each sets in Twin.bert_config().
D_MODEL = (("--d-model",), dict(type=int, default=BERT_BASE.hidden_size))
HEADS = (("--heads",), dict(type=int, default=BERT_BASE.num_attention_heads))
D_FF = (("--d-ff",), dict(type=int, default=BERT_BASE.intermediate_size))
LAYERS = (("--layers",), dict(type=int, default=BERT_BASE.num_hidden_layers))
SIZE_FIELDS = (("d_model", "hidden_size"), ("heads", "num_attention_heads"), ("d_ff", "intermediate_size"),
               ("layers", "num_hidden_layers"))

DEFAULT_TEXT = "time flies like an arrow"
DEFAULT_VOCAB = os.path.join(HERE, "..", "..", "data", "bert-base-uncased-vocab.txt")


class Twin:
    def __init__(self, description, extra_args=None):
        p = argparse.ArgumentParser(description=description)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--eval", action="store_true")
        mode = p.add_mutually_exclusive_group()
        mode.add_argument("--plain", action="store_true")
        mode.add_argument("--transcript", action="store_true")
        mode.add_argument("--both", action="store_true")
        p.add_argument("--text", default=DEFAULT_TEXT)
        p.add_argument("--vocab", default=os.environ.get("TS_VOCAB", DEFAULT_VOCAB))
        for args, kwargs in (extra_args or []):
            p.add_argument(*args, **kwargs)
        self.args = p.parse_args()
        if not (self.args.plain or self.args.transcript or self.args.both):
            self.args.transcript = True
        self._plain, self._transcript = [], []
        if self.args.both:
            atexit.register(self._write_both)
        torch.manual_seed(self.args.seed)

    def bert_config(self):
        """A copy of BERT_BASE with the size knobs this twin takes (--d-model, --heads, --d-ff, --layers)."""
        config = copy(BERT_BASE)
        for knob, field in SIZE_FIELDS:
            if hasattr(self.args, knob):
                setattr(config, field, getattr(self.args, knob))
        return config

    @property
    def training(self):
        return not self.args.eval

    def show(self, expr, value, who=ARTICLE):
        """print(value) as the article does; `expr` labels it in transcript mode."""
        text = value if isinstance(value, str) else str(value)
        if self.args.both:
            if who == ARTICLE:
                self._plain.append(text + "\n")
            self._transcript.append(">>> " + expr + "\n" + text + "\n")
        elif self.args.plain:
            if who == ARTICLE:
                print(text)
        else:
            print(">>> " + expr)
            print(text)

    def _write_both(self):
        sys.stdout.write("".join(self._plain) + BOTH_SEPARATOR + "\n" + "".join(self._transcript))
        sys.stdout.flush()

    def input_ids(self, add_special_tokens=False):
        """The article's bert-base-uncased ids of --text (reference WordPiece, tests/twins/tokenizer_reference.py)."""
        from tokenizer_reference import BertTokenizer
        tok = BertTokenizer(self.args.vocab)
        return torch.tensor([tok.encode(self.args.text, add_special_tokens=add_special_tokens)])

    def embedded_ids(self, vocab_size, d_model, show_ids=True):
        """Article 000's first lines (ch02-ch08 start from them): the ids of --text (shown as
        inputs.input_ids unless show_ids is False), then token_emb = nn.Embedding(vocab_size, d_model),
        the twin's first random draw, applied to them. Returns (input_ids, inputs_embeds (1,T,d_model))."""
        input_ids = self.input_ids()
        if show_ids:
            self.show("inputs.input_ids", input_ids, TWIN)
        token_emb = nn.Embedding(vocab_size, d_model)
        return input_ids, token_emb(input_ids)


def scaled_scores(query, key):
    """Article 000's scores = torch.bmm(query, key.transpose(1, 2)) / sqrt(dim_k), dim_k = key.size(-1)
    (introduced in ch02): (B,T,D), (B,S,D) -> (B,T,S)."""
    dim_k = key.size(-1)
    return torch.bmm(query, key.transpose(1, 2)) / sqrt(dim_k)


def tf_shape(shape):
    """TensorFlow's print of a shape: (50, 512)."""
    return str(tuple(int(d) for d in shape))


def tf_str(array):
    """TensorFlow's str() of a float32 tensor: numpy.array_str inside tf.Tensor(...)."""
    import numpy as np
    a = np.asarray(array, dtype=np.float32)
    text = np.array_str(a)
    if "\n" in text:
        text = "\n" + text
    return "tf.Tensor(%s, shape=%s, dtype=float32)" % (text, tf_shape(a.shape))
