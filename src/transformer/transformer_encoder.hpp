// transformer_encoder.hpp: article 000's encoder ("a Transformer encoder step by step"): the
// pre-LN TransformerEncoderLayer, Embeddings (token + learned position) and TransformerEncoder,
// composed from the one set of layers (nn.hpp, attention.hpp) and named as the article names them
// (introduced in ch07, trained in ch13). Construction draws as the article's constructors do.
// Shapes: B batch, T positions, C = hidden_size, H heads, D = C/H, F = intermediate_size.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exact/print.hpp"
#include "exact/tensor.hpp"
#include "transformer/attention.hpp"
#include "transformer/nn.hpp"

namespace ts {

// "src/transformer/transformer_encoder.cpp", from the compiler: where the modules below are written
std::string transformer_encoder_source();

// Article 000's mask (1|B,T,S), 0 = hide, as the attention reads it: true = keep
BTensor keep_where_nonzero(const Tensor& mask);

// Pre-LN encoder layer (article 000): x = x + attn(ln1(x)); x = x + ff(ln2(x)).
struct TransformerEncoderLayer {
  LayerNorm layer_norm_1, layer_norm_2;
  // the one attention (attention.hpp) in article 000's setting; mutable as the modules' saved
  // state is: a forward keeps its weights and what its backward needs
  mutable MultiHeadedAttention attention;
  FeedForward feed_forward;
  TransformerEncoderLayer() = default;
  explicit TransformerEncoderLayer(const Config& config);   // LNs, then attention, then feed_forward
  // x (B,T,C), mask (1|B,T,S) true = keep, or nullptr -> (B,T,C)   pre-LN
  Tensor operator()(const Tensor& x, const BTensor* mask = nullptr) const;
  // Post-LN (articles 001/004, the original paper) with the same weights:
  // x = ln1(x + attn(x)); x = ln2(x + ff(x)).
  Tensor post_ln(const Tensor& x, const BTensor* mask = nullptr) const;
  // The pre-LN forward's backward:   dy (B,T,C) -> dx (B,T,C)
  //   y = x + ffn(LN2(x)):   dx = dy + LN2.backward(x, ffn.backward(dy))
  //   x = x_in + attn(h, h, h), h = LN1(x_in):   dx_in = dx + LN1.backward(x_in, dquery + dkey + dvalue)
  Tensor backward(const Tensor& dy, TransformerEncoderLayer& grad) const;
  ModuleRepr repr() const;
  void train(bool on) { feed_forward.train(on); }
  // the last forward's input x_in and x = x_in + attn (B,T,C) (EnableGrad only)
  mutable struct Saved { Tensor x_in, x; } saved;
};

// Token embedding + learned position embedding, LayerNorm(eps 1e-12), Dropout(p = 0.5).
struct Embeddings {
  Embedding token_embeddings, position_embeddings;
  LayerNorm layer_norm;
  Dropout dropout;
  Embeddings() = default;
  explicit Embeddings(const Config& config);     // draws token table, then position table
  Tensor operator()(const ITensor& input_ids) const;  // (B,T) -> (B,T,C)
  // de = layer_norm.backward(token + position, dropout.backward(dy))   (B,T,C);
  // grad.token_embeddings.weight[ids[b,t]] += de[b,t];  grad.position_embeddings.weight[t] += sum_b de[b,t]
  void backward(const ITensor& input_ids, const Tensor& dy, Embeddings& grad) const;
  ModuleRepr repr() const;
  void train(bool on) { dropout.training = on; }
  // the last forward's token + position embeddings (B,T,C), the LayerNorm's input (EnableGrad only)
  mutable struct Saved { Tensor embeddings; } saved;
};

// Embeddings, then num_hidden_layers pre-LN encoder layers.
struct TransformerEncoder {
  Embeddings embeddings;
  std::vector<TransformerEncoderLayer> layers;
  TransformerEncoder() = default;
  explicit TransformerEncoder(const Config& config);
  // input_ids (B,T), mask (1|B,T,T) 0 = hide (article 000's), or nullptr -> (B,T,C)
  Tensor operator()(const ITensor& input_ids, const Tensor* mask = nullptr) const;
  // the layers' backwards, last first, then the embeddings'   dy (B,T,C); the ids of the last forward
  void backward(const Tensor& dy, TransformerEncoder& grad) const;
  // every parameter under its state_dict key ("embeddings.token_embeddings.weight", ...), in
  // named_parameters() order
  std::vector<std::pair<std::string, Tensor*>> named_parameters();
  ModuleRepr repr() const;
  void train(bool on);
  mutable ITensor saved_ids;  // the last forward's input_ids (EnableGrad only)
};

// Every parameter of grads set to 0 (grads: a copy of the model that holds its gradients).
void zero_grad(TransformerEncoder& grads);

}  // namespace ts
