// nn.hpp: the building blocks of article 000 ("a Transformer encoder step by step"),
// named as the article names them, parameters named as PyTorch's state_dict keys.
//
// Construction draws random numbers exactly like the PyTorch module's __init__, in the
// same order, from ts::default_generator(): so after ts::manual_seed(S) the weights equal
// torch.manual_seed(S) followed by the same Python constructors.
//
// Where each block is explained:
//   Linear, Embedding          ch01 / ch04      scaled_dot_product_attention  ch02-ch03, ch08
//   AttentionHead              ch04             MultiHeadAttention            ch04
//   FeedForward                ch05             LayerNorm                     ch06
//   TransformerEncoderLayer    ch07             Embeddings                    ch01
//   TransformerEncoder         ch07
#pragma once

#include <cstdint>
#include <vector>

#include "exact/print.hpp"
#include "exact/tensor.hpp"

namespace ts {

// The BERT-base configuration article 000 loads with AutoConfig("bert-base-uncased").
struct Config {
  int64_t vocab_size = 30522;               // V
  int64_t hidden_size = 768;                // C
  int64_t num_attention_heads = 12;         // H
  int64_t intermediate_size = 3072;         // F
  double hidden_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t num_hidden_layers = 12;
};

// nn.Linear: y = x W^T + b.   weight (out,in), bias (out).
struct Linear {
  int64_t in_features = 0, out_features = 0;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out)
  Linear() = default;
  Linear(int64_t in, int64_t out);                // draws weight, then bias (kaiming-uniform init)
  Tensor operator()(const Tensor& x) const;       // x (...,in) -> (...,out)
  // dx = dy W   (...,in);   grad.weight += dy^T x   (out,in);   grad.bias += sum over rows of dy   (out)
  // x the forward's input (...,in), dy (...,out); grad a Linear of the same shape (its .grad).
  Tensor backward(const Tensor& x, const Tensor& dy, Linear& grad) const;
  ModuleRepr repr() const;
};

// nn.Embedding: a lookup table.   weight (V,C).
struct Embedding {
  Tensor weight;  // (num_embeddings, embedding_dim), drawn from N(0, 1)
  Embedding() = default;
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor operator()(const ITensor& ids) const;    // ids (B,T) -> (B,T,C)
  ModuleRepr repr() const;
};

// nn.LayerNorm over the last dimension: y = (x - mean) / sqrt(var + eps) * weight + bias.
struct LayerNorm {
  Tensor weight;  // (C) ones
  Tensor bias;    // (C) zeros
  double eps = 1e-5;
  LayerNorm() = default;
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5);  // no random draws
  Tensor operator()(const Tensor& x) const;       // x (...,C) -> (...,C)
  ModuleRepr repr() const;
};

// nn.Dropout: in train mode zero each element with probability p, scale the rest by 1/(1-p).
struct Dropout {
  double p = 0.5;
  bool training = true;  // a fresh nn.Module is in train mode
  Dropout() = default;
  explicit Dropout(double p) : p(p) {}
  Tensor operator()(const Tensor& x) const;       // draws 2 random numbers per element in train mode
  // dx = dy * keep   (shape of x): keep is 0 or 1/(1-p), the draws of the last train-mode forward
  // (kept only under EnableGrad, transformer/grad.hpp); in eval mode dx = dy.
  Tensor backward(const Tensor& dy) const;
  ModuleRepr repr() const;
  mutable Tensor keep;  // the last train-mode forward's 0 or 1/(1-p) per element (EnableGrad only)
};

// scores = Q K^T / sqrt(d_k); masked where mask == 0; softmax; times V.
// q (B,T,D), k (B,S,D), v (B,S,Dv), mask (1 or B,T,S) with 0 = hide, or nullptr -> (B,T,Dv)
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask = nullptr);
// scores = q k^T / sqrt(D), as article 000 writes it (torch.bmm, then / sqrt(dim_k) with D read
// from q's last dim): q (B,T,D), k (B,S,D) -> (B,T,S)
Tensor scaled_scores(const Tensor& q, const Tensor& k);
// scores.masked_fill(mask == 0, value): scores (B,T,S), mask broadcastable (1 or B,T,S)
Tensor masked_fill_zero(const Tensor& scores, const Tensor& mask, float value);

// One attention head: three Linears C -> D, then scaled dot-product attention.
struct AttentionHead {
  Linear q, k, v;
  AttentionHead() = default;
  AttentionHead(int64_t embed_dim, int64_t head_dim);  // draws q, then k, then v
  // query (B,T,C), key/value (B,S,C) -> (B,T,D)
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor* mask = nullptr) const;
  ModuleRepr repr() const;
};

// H heads side by side, concatenated back to C, then an output Linear C -> C.
struct MultiHeadAttention {
  std::vector<AttentionHead> heads;  // H heads of D = C / H
  Linear output_linear;
  MultiHeadAttention() = default;
  explicit MultiHeadAttention(const Config& config);  // draws heads 0..H-1, then output_linear
  // query (B,T,C), key/value (B,S,C) -> (B,T,C)
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor* mask = nullptr) const;
  ModuleRepr repr() const;
};

// Position-wise feed-forward: Linear C -> F, GELU, Linear F -> C, Dropout.
struct FeedForward {
  Linear linear_1, linear_2;
  Dropout dropout;
  FeedForward() = default;
  explicit FeedForward(const Config& config);  // draws linear_1, then linear_2
  Tensor operator()(const Tensor& x) const;     // x (B,T,C) -> (B,T,C)
  ModuleRepr repr() const;
  void train(bool on) { dropout.training = on; }
};

// Pre-LN encoder layer (article 000): x = x + attn(ln1(x)); x = x + ff(ln2(x)).
struct TransformerEncoderLayer {
  LayerNorm layer_norm_1, layer_norm_2;
  MultiHeadAttention attention;
  FeedForward feed_forward;
  TransformerEncoderLayer() = default;
  explicit TransformerEncoderLayer(const Config& config);   // LNs, then attention, then feed_forward
  Tensor operator()(const Tensor& x, const Tensor* mask = nullptr) const;  // pre-LN, (B,T,C) -> (B,T,C)
  // Post-LN (articles 001/004, the original paper) with the same weights:
  // x = ln1(x + attn(x)); x = ln2(x + ff(x)).
  Tensor post_ln(const Tensor& x, const Tensor* mask = nullptr) const;
  ModuleRepr repr() const;
  void train(bool on) { feed_forward.train(on); }
};

// Token embedding + learned position embedding, LayerNorm(eps 1e-12), Dropout(p = 0.5).
struct Embeddings {
  Embedding token_embeddings, position_embeddings;
  LayerNorm layer_norm;
  Dropout dropout;
  Embeddings() = default;
  explicit Embeddings(const Config& config);     // draws token table, then position table
  Tensor operator()(const ITensor& input_ids) const;  // (B,T) -> (B,T,C)
  ModuleRepr repr() const;
  void train(bool on) { dropout.training = on; }
};

// Embeddings, then num_hidden_layers pre-LN encoder layers.
struct TransformerEncoder {
  Embeddings embeddings;
  std::vector<TransformerEncoderLayer> layers;
  TransformerEncoder() = default;
  explicit TransformerEncoder(const Config& config);
  Tensor operator()(const ITensor& input_ids, const Tensor* mask = nullptr) const;  // (B,T) -> (B,T,C)
  ModuleRepr repr() const;
  void train(bool on);
};


}  // namespace ts
