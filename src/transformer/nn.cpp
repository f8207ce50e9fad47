// nn.cpp: article 000's modules. Each forward reads top to bottom like the article's Python.
#include "transformer/nn.hpp"
#include "base/code_site.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/grad.hpp"

namespace ts {

// ---------------------------------------------------------------- Linear
Linear::Linear(int64_t in, int64_t out)
    : in_features(in), out_features(out),
      weight(Tensor::from_shape({static_cast<size_t>(out), static_cast<size_t>(in)})),
      bias(Tensor::from_shape({static_cast<size_t>(out)})) {
  init_linear_(weight, &bias);  // weight ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming a=sqrt(5)), then bias
}

Tensor Linear::operator()(const Tensor& x) const {
  // y = x W^T + b
  // (...,in) -> (...,out)
  return linear(x, weight, &bias);
}

Tensor Linear::backward(const Tensor& x, const Tensor& dy, Linear& grad) const {
  // dx = dy W   (N,in);   dW += dy^T x   (out,in);   db += sum_n dy[n]   (out),   N = rows of x
  const int64_t I = in_features, O = out_features;
  if (x.dimension() == 0 || static_cast<int64_t>(x.shape().back()) != I || dy.size() * static_cast<size_t>(I) != x.size() * static_cast<size_t>(O))
    throw std::invalid_argument("Linear.backward: x (...,in) and dy (...,out) disagree");
  const int64_t N = static_cast<int64_t>(x.size()) / std::max<int64_t>(I, 1);
  Tensor dx = Tensor::from_shape(shape_of(x));
  mm_rows(false, false, N, I, O, dy.data(), O, weight.data(), I, 0.0f, dx.data(), I);
  mm_rows(true, false, O, I, N, dy.data(), O, x.data(), I, 1.0f, grad.weight.data(), I);
  float* db = grad.bias.data();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) db[o] += dy.data()[n * O + o];
  return dx;
}

ModuleRepr Linear::repr() const { return linear_repr(in_features, out_features, true); }

// ---------------------------------------------------------------- Embedding
Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim)
    : weight(Tensor::from_shape({static_cast<size_t>(num_embeddings), static_cast<size_t>(embedding_dim)})) {
  init_embedding_(weight);  // N(0, 1)
}

Tensor Embedding::operator()(const ITensor& ids) const {
  TS_CODE_SITE();
  // out[b, t, :] = weight[ids[b, t], :]
  // (B,T) -> (B,T,C)
  const size_t V = weight.shape()[0], C = weight.shape()[1];
  Shape shape = shape_of(ids);
  shape.push_back(C);
  Tensor out = Tensor::from_shape(shape);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids.data()[i];
    if (id < 0 || static_cast<size_t>(id) >= V)
      throw std::out_of_range("Embedding: id " + std::to_string(id) + " is outside the table of " +
                              std::to_string(V) + " rows");
    std::copy_n(weight.data() + static_cast<size_t>(id) * C, C, out.data() + i * C);
  }
  return out;
}

ModuleRepr Embedding::repr() const {
  return embedding_repr(static_cast<int64_t>(weight.shape()[0]), static_cast<int64_t>(weight.shape()[1]));
}

// ---------------------------------------------------------------- LayerNorm
LayerNorm::LayerNorm(int64_t normalized_shape, double eps)
    : weight(Tensor::from_shape({static_cast<size_t>(normalized_shape)})),
      bias(Tensor::from_shape({static_cast<size_t>(normalized_shape)})), eps(eps) {
  weight.fill(1.0f);
  bias.fill(0.0f);
}

Tensor LayerNorm::operator()(const Tensor& x) const { return layer_norm(x, weight, bias, eps); }

ModuleRepr LayerNorm::repr() const { return layer_norm_repr(static_cast<int64_t>(weight.size()), eps); }

// ---------------------------------------------------------------- Dropout
Tensor Dropout::operator()(const Tensor& x) const {
  if (!training) return Tensor(x);
  if (!grad_enabled()) return dropout(x, p, dropout_generator());
  // under EnableGrad: the same draws on a tensor of ones give keep; x * keep is dropout(x)'s bits
  Tensor ones = Tensor::from_shape(shape_of(x));
  ones.fill(1.0f);
  keep = dropout(ones, p, dropout_generator());
  Tensor y = x;
  for (size_t i = 0; i < y.size(); ++i) y.data()[i] = x.data()[i] * keep.data()[i];
  return y;
}

Tensor Dropout::backward(const Tensor& dy) const {
  // dx = dy * keep   (shape of dy)
  if (!training) return Tensor(dy);
  // (compare shapes: an empty xarray's size() is 1, so sizes alone let a (1)-shaped dy through)
  if (shape_of(keep) != shape_of(dy)) throw std::logic_error("Dropout.backward: no train-mode forward under EnableGrad");
  Tensor dx = dy;
  for (size_t i = 0; i < dx.size(); ++i) dx.data()[i] = dy.data()[i] * keep.data()[i];
  return dx;
}

ModuleRepr Dropout::repr() const { return dropout_repr(p); }

// ---------------------------------------------------------------- attention
Tensor masked_fill_zero(const Tensor& scores, const Tensor& mask, float value) {
  TS_CODE_SITE();
  // scores.masked_fill(mask == 0, value)
  // (B,T,S), mask (1|B,T,S) -> (B,T,S)
  if (mask.dimension() != scores.dimension() || mask.shape()[1] != scores.shape()[1] ||
      mask.shape()[2] != scores.shape()[2] || (mask.shape()[0] != 1 && mask.shape()[0] != scores.shape()[0]))
    throw std::invalid_argument("masked_fill: mask shape does not broadcast to the scores");
  Tensor out = scores;
  const size_t B = scores.shape()[0], TS = scores.shape()[1] * scores.shape()[2];
  for (size_t b = 0; b < B; ++b) {
    const float* m = mask.data() + (mask.shape()[0] == 1 ? 0 : b * TS);
    float* o = out.data() + b * TS;
    for (size_t i = 0; i < TS; ++i)
      if (m[i] == 0.0f) o[i] = value;
  }
  return out;
}

Tensor scaled_scores(const Tensor& q, const Tensor& k) {
  TS_CODE_SITE();
  // scores = Q K^T / sqrt(d_k)
  // (B,T,D) x (B,S,D)^T -> (B,T,S)
  const double d_k = static_cast<double>(q.shape()[q.dimension() - 1]);
  Tensor scores = bmm_nt(q, k);
  const float scale = static_cast<float>(std::sqrt(d_k));  // Python float, cast to float32 by torch
  for (float& s : scores) s = s / scale;
  return scores;
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask) {
  TS_CODE_SITE();
  // 1) scores = Q K^T / sqrt(d_k)
  //    (B,T,D) x (B,S,D)^T -> (B,T,S)
  Tensor scores = scaled_scores(q, k);
  // 2) hide masked positions: masked_fill(mask == 0, -inf)
  if (mask) scores = masked_fill_zero(scores, *mask, -INFINITY);
  // 3) weights = softmax(scores, dim=-1)
  //    (B,T,S)
  Tensor weights = softmax(scores);
  // 4) out = weights V
  //    (B,T,S) x (B,S,Dv) -> (B,T,Dv)
  return bmm(weights, v);
}

AttentionHead::AttentionHead(int64_t embed_dim, int64_t head_dim) {
  q = Linear(embed_dim, head_dim);
  k = Linear(embed_dim, head_dim);
  v = Linear(embed_dim, head_dim);
}

Tensor AttentionHead::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                 const Tensor* mask) const {
  TS_CODE_SITE();
  // head = Attention(query W_q, key W_k, value W_v)
  // (B,T,C) -> (B,T,D)
  return scaled_dot_product_attention(q(query), k(key), v(value), mask);
}

ModuleRepr AttentionHead::repr() const {
  return {"AttentionHead", "", {{"q", q.repr()}, {"k", k.repr()}, {"v", v.repr()}}};
}

MultiHeadAttention::MultiHeadAttention(const Config& config) {
  const int64_t embed_dim = config.hidden_size;
  const int64_t num_heads = config.num_attention_heads;
  const int64_t head_dim = embed_dim / num_heads;
  for (int64_t h = 0; h < num_heads; ++h) heads.emplace_back(embed_dim, head_dim);
  output_linear = Linear(embed_dim, embed_dim);
}

Tensor MultiHeadAttention::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const Tensor* mask) const {
  TS_CODE_SITE();
  // 1) every head attends on its own projection
  //    (B,T,C) -> H x (B,T,D)
  std::vector<Tensor> outs;
  outs.reserve(heads.size());
  for (const AttentionHead& h : heads) outs.push_back(h(query, key, value, mask));
  // 2) concatenate the heads: (B,T,H*D) = (B,T,C)
  Tensor x = cat(outs, -1);
  // 3) output projection
  //    (B,T,C) -> (B,T,C)
  return output_linear(x);
}

ModuleRepr MultiHeadAttention::repr() const {
  std::vector<ModuleRepr> items;
  for (const AttentionHead& h : heads) items.push_back(h.repr());
  return {"MultiHeadAttention", "", {{"heads", module_list_repr(items)}, {"output_linear", output_linear.repr()}}};
}

// ---------------------------------------------------------------- feed-forward
FeedForward::FeedForward(const Config& config) {
  linear_1 = Linear(config.hidden_size, config.intermediate_size);
  linear_2 = Linear(config.intermediate_size, config.hidden_size);
  dropout = Dropout(config.hidden_dropout_prob);
}

Tensor FeedForward::operator()(const Tensor& x) const {
  TS_CODE_SITE();
  // FFN(x) = Dropout(GELU(x W1^T + b1) W2^T + b2)
  // (B,T,C) -> (B,T,F) -> (B,T,C)
  Tensor h = gelu(linear_1(x));
  return dropout(linear_2(h));
}

ModuleRepr FeedForward::repr() const {
  return {"FeedForward", "",
          {{"linear_1", linear_1.repr()}, {"linear_2", linear_2.repr()}, {"gelu", gelu_repr()},
           {"dropout", dropout.repr()}}};
}

// ---------------------------------------------------------------- encoder layer
TransformerEncoderLayer::TransformerEncoderLayer(const Config& config) {
  layer_norm_1 = LayerNorm(config.hidden_size);
  layer_norm_2 = LayerNorm(config.hidden_size);
  attention = MultiHeadAttention(config);
  feed_forward = FeedForward(config);
}

Tensor TransformerEncoderLayer::operator()(const Tensor& x_in, const Tensor* mask) const {
  TS_CODE_SITE();
  // 1) h = LN1(x)                       (B,T,C)
  Tensor hidden_state = layer_norm_1(x_in);
  // 2) x = x + MHA(h, h, h)             (B,T,C)
  Tensor x = x_in + attention(hidden_state, hidden_state, hidden_state, mask);
  // 3) x = x + FFN(LN2(x))              (B,T,C)
  Tensor y = x + feed_forward(layer_norm_2(x));
  return y;
}

Tensor TransformerEncoderLayer::post_ln(const Tensor& x_in, const Tensor* mask) const {
  TS_CODE_SITE();
  // 1) x = LN1(x + MHA(x, x, x))        (B,T,C)
  Tensor a = x_in + attention(x_in, x_in, x_in, mask);
  Tensor x = layer_norm_1(a);
  // 2) x = LN2(x + FFN(x))              (B,T,C)
  Tensor b = x + feed_forward(x);
  return layer_norm_2(b);
}

ModuleRepr TransformerEncoderLayer::repr() const {
  return {"TransformerEncoderLayer", "",
          {{"layer_norm_1", layer_norm_1.repr()}, {"layer_norm_2", layer_norm_2.repr()},
           {"attention", attention.repr()}, {"feed_forward", feed_forward.repr()}}};
}

// ---------------------------------------------------------------- embeddings + encoder
Embeddings::Embeddings(const Config& config) {
  token_embeddings = Embedding(config.vocab_size, config.hidden_size);
  position_embeddings = Embedding(config.max_position_embeddings, config.hidden_size);
  layer_norm = LayerNorm(config.hidden_size, 1e-12);
  dropout = Dropout();  // nn.Dropout() defaults to p = 0.5
}

Tensor Embeddings::operator()(const ITensor& input_ids) const {
  TS_CODE_SITE();
  // 1) position ids 0..T-1              (1,T)
  const size_t T = input_ids.shape()[1];
  if (T > position_embeddings.weight.shape()[0])
    throw std::invalid_argument("Embeddings: sequence longer than the position table");
  ITensor position_ids = ITensor::from_shape({1, T});
  for (size_t t = 0; t < T; ++t) position_ids(0, t) = static_cast<int64_t>(t);
  // 2) token + position embeddings      (B,T,C) + (1,T,C)
  Tensor token = token_embeddings(input_ids);
  Tensor position = position_embeddings(position_ids);
  Tensor embeddings = token + position;
  // 3) LayerNorm, then Dropout          (B,T,C)
  return dropout(layer_norm(embeddings));
}

ModuleRepr Embeddings::repr() const {
  return {"Embeddings", "",
          {{"token_embeddings", token_embeddings.repr()}, {"position_embeddings", position_embeddings.repr()},
           {"layer_norm", layer_norm.repr()}, {"dropout", dropout.repr()}}};
}

TransformerEncoder::TransformerEncoder(const Config& config) {
  embeddings = Embeddings(config);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) layers.emplace_back(config);
}

Tensor TransformerEncoder::operator()(const ITensor& input_ids, const Tensor* mask) const {
  TS_CODE_SITE();
  // x = Embeddings(ids); then x = layer(x) for each of the N layers
  // (B,T) -> (B,T,C)
  Tensor x = embeddings(input_ids);
  for (const TransformerEncoderLayer& layer : layers) x = layer(x, mask);
  return x;
}

ModuleRepr TransformerEncoder::repr() const {
  std::vector<ModuleRepr> items;
  for (const TransformerEncoderLayer& l : layers) items.push_back(l.repr());
  return {"TransformerEncoder", "", {{"embeddings", embeddings.repr()}, {"layers", module_list_repr(items)}}};
}

void TransformerEncoder::train(bool on) {
  embeddings.train(on);
  for (TransformerEncoderLayer& l : layers) l.train(on);
}


}  // namespace ts
