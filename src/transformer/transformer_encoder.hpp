// transformer_encoder.hpp: article 000's encoder ("a Transformer encoder step by step"): the
// pre-LN TransformerEncoderLayer, Embeddings (token + learned position) and TransformerEncoder,
// composed from the one set of layers (nn.hpp, attention.hpp, annotated.hpp's EncoderLayer) and
// named as the article names them
// (introduced in ch07, trained in ch13). Construction draws as the article's constructors do.
// Shapes: B batch, T positions, C = hidden_size, H heads, D = C/H, F = intermediate_size.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exact/print.hpp"
#include "exact/tensor.hpp"
#include "transformer/annotated.hpp"
#include "transformer/attention.hpp"
#include "transformer/nn.hpp"

namespace ts {

// "src/transformer/transformer_encoder.cpp", from the compiler: where the modules below are written
std::string transformer_encoder_source();

// Article 000's mask (1|B,T,S), 0 = hide, as the attention reads it: true = keep
BTensor keep_where_nonzero(const Tensor& mask);

// Article 000's pre-LN layer: x = x + attention(layer_norm_1(x)); x = x + feed_forward(layer_norm_2(x)).
// It is the one block (annotated.hpp's EncoderLayer, which ch11 and ch12 train too) in article 000's
// setting: its attention in the per-head layout, a GELU FeedForward with its dropout after linear_2,
// PyTorch's LayerNorm (eps 1e-5), and residuals without a dropout of their own (each sublayer's p = 0,
// no draws). Its forward and backward are EncoderLayer's; its repr and state_dict names the article's:
//   layer_norm_1 = sublayer[0].norm   layer_norm_2 = sublayer[1].norm   attention = self_attn
struct TransformerEncoderLayer : EncoderLayer {
  TransformerEncoderLayer() = default;
  explicit TransformerEncoderLayer(const Config& config);   // draws the attention, then feed_forward
  LayerNorm& layer_norm_1() { return sublayer[0].norm; }
  const LayerNorm& layer_norm_1() const { return sublayer[0].norm; }
  LayerNorm& layer_norm_2() { return sublayer[1].norm; }
  const LayerNorm& layer_norm_2() const { return sublayer[1].norm; }
  MultiHeadedAttention& attention() const { return self_attn; }
  // Post-LN (articles 001/004, the original paper) with the same weights: a copy of the layer whose
  // two sublayers put their norm after the residual: x = ln1(x + attn(x)); x = ln2(x + ff(x)).
  Tensor post_ln(const Tensor& x, const BTensor* mask = nullptr) const;
  ModuleRepr repr() const;
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
