"""Article 004 (TensorFlow/Keras, "GPT (1): transformer principles and code") re-typed in PyTorch.

The article's functions, one for one, so the twins can run them after torch.manual_seed(S):
  positional_encoding(l_1, d_model)        numpy, then float32        -> (L, C)
  create_padding_mask(seq)                 1.0 where seq == 0          -> (B, 1, 1, S)
  create_look_ahead_mask(size)             1 - band_part(ones, -1, 0)  -> (S, S), 1 = hidden
  scaled_dot_product_attention(q, k, v, mask=None)                    -> (output, attn_weight)
  MutilHeadAttention(d_model, num_heads)   split_heads multi-head layer (Dense = keras_dense)
Masks follow the article's polarity: 1 means HIDE (PyTorch articles use 1 = keep).
tf.matmul(q, k, transpose_b=True) is torch.matmul(q, k.transpose(-2, -1)); tf.nn.softmax is F.softmax.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F


def get_angles(pos, i, d_model):
    # i covers both 2i and 2i+1 of the formula
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    return pos * angle_rates


def positional_encoding(l_1, d_model):
    """(l_1, d_model) float32 numpy array: sin on even dimensions, cos on odd ones."""
    angle_rads = get_angles(np.arange(l_1)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads.astype(np.float32)


def create_padding_mask(seq):
    """seq (B, S) ids -> (B, 1, 1, S) float, 1.0 where the id is the padding id 0."""
    seq = torch.as_tensor(seq)
    mask = (seq == 0).to(torch.float32)
    return mask[:, None, None, :]


def create_look_ahead_mask(size):
    """(size, size) float: 1.0 above the diagonal (future positions a query may not see)."""
    return 1 - torch.tril(torch.ones(size, size))


def scaled_dot_product_attention(q, k, v, mask=None):
    """q (..., T, D), k (..., S, D), v (..., S, Dv), mask broadcastable to (..., T, S), 1 = hide
    -> (output (..., T, Dv), attn_weight (..., T, S))."""
    matmul_qk = torch.matmul(q, k.transpose(-2, -1))
    dk = float(k.shape[-1])
    attn_weight = matmul_qk / math.sqrt(dk)
    if mask is not None:
        attn_weight = attn_weight + (mask * -1e9)
    attn_weight = F.softmax(attn_weight, dim=-1)
    output = torch.matmul(attn_weight, v)
    return output, attn_weight


# The toy example of article 004 §3.2 (q 3x3, k 4x3, v 4x2).
TOY_K = [[10, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]]
TOY_V = [[1, 0], [10, 0], [100, 5], [1000, 6]]
TOY_Q = [[0, 0, 10], [0, 10, 0], [10, 10, 0]]


def keras_dense(in_units, units):
    """tf.keras.layers.Dense(units) in PyTorch: a Linear with Keras's default initialisers
    (kernel glorot_uniform = xavier_uniform_, bias zeros). Keras builds the layer on its first
    call; here it is built at once (nn.Linear's own init draws first, then xavier_uniform_)."""
    dense = torch.nn.Linear(in_units, units)
    torch.nn.init.xavier_uniform_(dense.weight)
    torch.nn.init.zeros_(dense.bias)
    return dense


class MutilHeadAttention(torch.nn.Module):
    """Article 004's multi-head attention layer (its spelling), one fused Dense per q/k/v:
    split_heads reshapes (B, T, d_model) to (B, T, num_heads, depth) and moves the heads
    in front -> (B, num_heads, T, depth). call(v, k, q, mask) -> (output (B, T, d_model),
    attention_weights (B, num_heads, T, S))."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_model = d_model
        assert d_model % num_heads == 0
        self.depth = d_model // num_heads
        self.wq = keras_dense(d_model, d_model)
        self.wk = keras_dense(d_model, d_model)
        self.wv = keras_dense(d_model, d_model)
        self.dense = keras_dense(d_model, d_model)

    def split_heads(self, x, batch_size):
        x = torch.reshape(x, (batch_size, -1, self.num_heads, self.depth))
        return x.permute(0, 2, 1, 3)

    def forward(self, v, k, q, mask):
        batch_size = q.shape[0]
        q = self.wq(q)
        k = self.wk(k)
        v = self.wv(v)
        q = self.split_heads(q, batch_size)
        k = self.split_heads(k, batch_size)
        v = self.split_heads(v, batch_size)
        scaled_attention, attention_weights = scaled_dot_product_attention(q, k, v, mask)
        scaled_attention = scaled_attention.permute(0, 2, 1, 3)
        concat_attention = torch.reshape(scaled_attention, (batch_size, -1, self.d_model))
        output = self.dense(concat_attention)
        return output, attention_weights
