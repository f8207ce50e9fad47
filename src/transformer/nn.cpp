// nn.cpp: article 000's modules. Each forward reads top to bottom like the article's Python.
#include "transformer/nn.hpp"
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

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
    : weight(zeros({static_cast<size_t>(num_embeddings), static_cast<size_t>(embedding_dim)})) {
  TS_CODE_SITE();
  // zeros first: a table the init below does not fill reads 0 on every machine, never old memory
  init_embedding_(weight);  // N(0, 1)
}

Tensor Embedding::operator()(const ITensor& ids) const {
  TS_CODE_SITE();
  // out[b, t, :] = weight[ids[b, t], :]
  // (B,T) -> (B,T,C)
  const size_t V = weight.shape()[0], C = weight.shape()[1];
  // the copy below reads row id at weight + id C: V rows of C numbers must be the whole table
  if (weight.dimension() != 2 || V * C != weight.size()) {
    static const CodeSite here{__FILE__, __LINE__, __PRETTY_FUNCTION__};
    throw CheckFailure(fmt::format("Embedding: V = {} rows of C = {} numbers make {} values, but the table holds {}: "
                                   "V and C must be its two dimensions (look at {})",
                                   V, C, V * C, weight.size(), code_site_words(here)));
  }
  Shape shape = shape_of(ids);
  shape.push_back(C);
  Tensor out = Tensor::from_shape(shape);
  // the copy below writes C values per id: out must hold them all (else it writes past its end)
  if (out.size() != ids.size() * C) {
    static const CodeSite here{__FILE__, __LINE__, __PRETTY_FUNCTION__};
    throw CheckFailure(fmt::format("Embedding: the output holds {} values where {} ids of C = {} numbers need {}: its "
                                   "shape must be ids' shape with C appended (look at {})",
                                   out.size(), ids.size(), C, ids.size() * C, code_site_words(here)));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids.data()[i];
    // an id outside the table is the code's doing (the chapters refuse bad input before a model
    // runs): a check that names this function, not an internal error
    if (id < 0 || static_cast<size_t>(id) >= V) {
      static const CodeSite here{__FILE__, __LINE__, __PRETTY_FUNCTION__};
      throw CheckFailure(fmt::format("Embedding: id {} (entry {} of the {} ids) is outside the table of {} rows: "
                                     "the ids it is given must be 0 to {} (look at {}, and at the code that "
                                     "built the ids)",
                                     id, i, ids.size(), V, V - 1, code_site_words(here)));
    }
    std::copy_n(weight.data() + static_cast<size_t>(id) * C, C, out.data() + i * C);
  }
  return out;
}

void Embedding::backward(const ITensor& ids, const Tensor& dy, Embedding& grad) const {
  // grad.weight[ids[n]] += dy[n]   (V,C)
  const size_t C = weight.shape()[1];
  if (dy.size() != ids.size() * C) throw std::invalid_argument("Embedding.backward: ids (B,T) and dy (B,T,C) disagree");
  for (size_t i = 0; i < ids.size(); ++i) {
    float* g = grad.weight.data() + static_cast<size_t>(ids.data()[i]) * C;
    const float* d = dy.data() + i * C;
    for (size_t c = 0; c < C; ++c) g[c] += d[c];
  }
}

ModuleRepr Embedding::repr() const {
  return embedding_repr(static_cast<int64_t>(weight.shape()[0]), static_cast<int64_t>(weight.shape()[1]));
}

// ---------------------------------------------------------------- LayerNorm: layer_norm.cpp

// ---------------------------------------------------------------- Dropout
Tensor Dropout::operator()(const Tensor& x) const { return (*this)(Tensor(x)); }

Tensor Dropout::operator()(Tensor&& x) const {
  if (!training) return std::move(x);
  // p = 0 keeps every element and draws nothing (torch returns the input): keep stays empty
  if (p == 0.0) {
    if (grad_enabled()) keep = Tensor();
    return std::move(x);
  }
  if (!grad_enabled()) {
    dropout_(x.data(), x.size(), p, dropout_generator());
    return std::move(x);
  }
  // under EnableGrad: the same draws on a tensor of ones give keep; x * keep is dropout(x)'s bits
  keep = Tensor::from_shape(shape_of(x));
  keep.fill(1.0f);
  dropout_(keep.data(), keep.size(), p, dropout_generator());
  for (size_t i = 0; i < x.size(); ++i) x.data()[i] = x.data()[i] * keep.data()[i];
  return std::move(x);
}

bool Dropout::ready_for(const Tensor& dy) const {
  // (compare shapes: an empty xarray's size() is 1, so sizes alone let a (1)-shaped dy through)
  return !training || p == 0.0 || shape_of(keep) == shape_of(dy);
}

Tensor Dropout::backward(const Tensor& dy) const { return backward(Tensor(dy)); }

Tensor Dropout::backward(Tensor&& dy) const {
  // dx = dy * keep   (shape of dy);  eval mode or p = 0: dx = dy (nothing was dropped)
  if (!training || p == 0.0) return std::move(dy);
  if (!ready_for(dy)) throw std::logic_error("Dropout.backward: no train-mode forward under EnableGrad");
  for (size_t i = 0; i < dy.size(); ++i) dy.data()[i] = dy.data()[i] * keep.data()[i];
  return std::move(dy);
}

ModuleRepr Dropout::repr() const { return dropout_repr(p); }

// A backward that undoes a step its forward no longer takes (a learner edit of the forward
// alone: a sublayer, or a dropout, no longer called) cannot go on: its dropout has no mask, its
// norm no input. Says so as a failed check naming both functions, instead of failing deep
// inside the backward. part: what the forward no longer calls ("sublayer[1]", "dropout").
void require_forward(bool ran, const std::string& part, const CodeSite& forward, const CodeSite& backward) {
  if (ran) return;
  // a dropout is off under --check-grads (eval mode): only the edit itself can tell
  const std::string fix = part == "dropout"
                              ? "Edit the backward beside the forward to skip dropout's backward too, or call dropout "
                                "in the forward again"
                              : "Edit the backward beside the forward to do the same, or run --check-grads";
  throw CheckFailure(fmt::format(
      "{} ({}:{}) runs {}'s backward, but {} ({}:{}) no longer calls {}: the backward does not match its "
      "forward. {}",
      backward.func, code_site_path(backward.file), backward.line, part, forward.func, code_site_path(forward.file),
      forward.line, part, fix));
}

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

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                                    Tensor* weights_out) {
  TS_CODE_SITE();
  // 1) scores = Q K^T / sqrt(d_k)
  //    (B,T,D) x (B,S,D)^T -> (B,T,S)
  Tensor scores = scaled_scores(q, k);
  // 2) hide masked positions: masked_fill(mask == 0, -inf)
  if (mask) scores = masked_fill_zero(scores, *mask, -INFINITY);
  // 3) weights = softmax(scores, dim=-1)
  //    (B,T,S)
  Tensor weights = softmax(scores);
  if (weights_out) *weights_out = weights;  // kept for the backward
  // 4) out = weights V
  //    (B,T,S) x (B,S,Dv) -> (B,T,Dv)
  return bmm(weights, v);
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                     const Tensor& p, const Tensor& dy) {
  TS_CODE_SITE();
  const int64_t B = int64_t(q.shape()[0]), T = int64_t(q.shape()[1]), D = int64_t(q.shape()[2]);
  const int64_t S = int64_t(k.shape()[1]), Dv = int64_t(v.shape()[2]);
  AttentionGrads g{Tensor::from_shape(shape_of(q)), Tensor::from_shape(shape_of(k)), Tensor::from_shape(shape_of(v))};
  Tensor dp = Tensor::from_shape(shape_of(p));
  // 1) dV = P^T dy   (S,Dv);   dP = dy V^T   (T,S)      per batch row
  for (int64_t b = 0; b < B; ++b) {
    mm_rows(true, false, S, Dv, T, p.data() + b * T * S, S, dy.data() + b * T * Dv, Dv, 0.0f, g.dv.data() + b * S * Dv, Dv);
    mm_rows(false, true, T, S, Dv, dy.data() + b * T * Dv, Dv, v.data() + b * S * Dv, Dv, 0.0f, dp.data() + b * T * S, S);
  }
  // 2) dS = P (dP - sum_s dP P) / sqrt(d_k)   (the forward divided by float(sqrt(d_k)))
  const double scale = static_cast<float>(std::sqrt(static_cast<double>(D)));
  for (int64_t r = 0; r < B * T; ++r) {
    const float* pr = p.data() + r * S;
    float* dr = dp.data() + r * S;
    double dot = 0.0;
    for (int64_t s = 0; s < S; ++s) dot += double(dr[s]) * double(pr[s]);
    for (int64_t s = 0; s < S; ++s) dr[s] = static_cast<float>(double(pr[s]) * (double(dr[s]) - dot) / scale);
  }
  // 3) dQ = dS K   (T,D);   dK = dS^T Q   (S,D)
  for (int64_t b = 0; b < B; ++b) {
    mm_rows(false, false, T, D, S, dp.data() + b * T * S, S, k.data() + b * S * D, D, 0.0f, g.dq.data() + b * T * D, D);
    mm_rows(true, false, S, D, T, dp.data() + b * T * S, S, q.data() + b * T * D, D, 0.0f, g.dk.data() + b * S * D, D);
  }
  return g;
}

AttentionHead::AttentionHead(int64_t embed_dim, int64_t head_dim) {
  q = Linear(embed_dim, head_dim);
  k = Linear(embed_dim, head_dim);
  v = Linear(embed_dim, head_dim);
}

Tensor AttentionHead::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                 const Tensor* mask) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("AttentionHead", query);
  // head = Attention(query W_q, key W_k, value W_v)
  // (B,T,C) -> (B,T,D)
  if (!grad_enabled()) return trace_output(scaled_dot_product_attention(q(query), k(key), v(value), mask));
  saved = {q(query), k(key), v(value), Tensor()};  // kept for the backward
  return trace_output(scaled_dot_product_attention(saved.q, saved.k, saved.v, mask, &saved.p));
}

AttentionHead::InputGrads AttentionHead::backward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                  const Tensor& dy, AttentionHead& grad) const {
  TS_CODE_SITE();
  // 1) through the attention: dq (B,T,D), dk, dv (B,S,D)
  if (saved.p.dimension() == 0) throw std::logic_error("AttentionHead.backward: no forward under EnableGrad");
  const AttentionGrads a = scaled_dot_product_attention_backward(saved.q, saved.k, saved.v, saved.p, dy);
  // 2) through the three projections: (B,T,D) -> (B,T,C)
  return {q.backward(query, a.dq, grad.q), k.backward(key, a.dk, grad.k), v.backward(value, a.dv, grad.v)};
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
  TS_TRACE_SCOPE("MultiHeadAttention", query);
  // 1) every head attends on its own projection
  //    (B,T,C) -> H x (B,T,D)
  std::vector<Tensor> outs;
  outs.reserve(heads.size());
  for (const AttentionHead& h : heads) outs.push_back(h(query, key, value, mask));
  // 2) concatenate the heads: (B,T,H*D) = (B,T,C)
  Tensor x = cat(outs, -1);
  if (grad_enabled()) saved = {query, key, value, x};  // kept for the backward
  // 3) output projection
  //    (B,T,C) -> (B,T,C)
  return output_linear(x);
}

AttentionHead::InputGrads MultiHeadAttention::backward(const Tensor& dy, MultiHeadAttention& grad) const {
  TS_CODE_SITE();
  if (saved.merged.dimension() == 0) throw std::logic_error("MultiHeadAttention.backward: no forward under EnableGrad");
  // 3) output projection: dmerged (B,T,C)
  const Tensor dmerged = output_linear.backward(saved.merged, dy, grad.output_linear);
  // 2) the concatenation: head h's gradient is its D columns of dmerged   (B,T,D)
  const size_t C = dmerged.shape().back(), rows = dmerged.size() / C, D = C / heads.size();
  AttentionHead::InputGrads in{Tensor::from_shape(shape_of(saved.query)), Tensor::from_shape(shape_of(saved.key)),
                               Tensor::from_shape(shape_of(saved.value))};
  for (Tensor* t : {&in.dquery, &in.dkey, &in.dvalue}) t->fill(0.0f);
  for (size_t h = 0; h < heads.size(); ++h) {
    Shape shape = shape_of(dmerged);
    shape.back() = D;
    Tensor dh = Tensor::from_shape(shape);
    for (size_t r = 0; r < rows; ++r) std::copy_n(dmerged.data() + r * C + h * D, D, dh.data() + r * D);
    // 1) every head adds its gradients of the (shared) query, key and value
    const AttentionHead::InputGrads g = heads[h].backward(saved.query, saved.key, saved.value, dh, grad.heads[h]);
    in.dquery += g.dquery, in.dkey += g.dkey, in.dvalue += g.dvalue;
  }
  return in;
}

ModuleRepr MultiHeadAttention::repr() const {
  std::vector<ModuleRepr> items;
  for (const AttentionHead& h : heads) items.push_back(h.repr());
  return {"MultiHeadAttention", "", {{"heads", module_list_repr(items)}, {"output_linear", output_linear.repr()}}};
}

// ---------------------------------------------------------------- feed-forward: feed_forward.cpp

// ---------------------------------------------------------------- encoder layer
TransformerEncoderLayer::TransformerEncoderLayer(const Config& config) {
  layer_norm_1 = LayerNorm(config.hidden_size);
  layer_norm_2 = LayerNorm(config.hidden_size);
  attention = MultiHeadAttention(config);
  feed_forward = FeedForward(config);
}

Tensor TransformerEncoderLayer::operator()(const Tensor& x_in, const Tensor* mask) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("TransformerEncoderLayer", x_in);
  // 1) h = LN1(x)                       (B,T,C)
  Tensor hidden_state = layer_norm_1(x_in);
  // 2) x = x + MHA(h, h, h)             (B,T,C)
  Tensor x = x_in + attention(hidden_state, hidden_state, hidden_state, mask);
  if (grad_enabled()) saved = {x_in, x};  // kept for the backward
  // 3) x = x + FFN(LN2(x))              (B,T,C)
  Tensor y = x + feed_forward(layer_norm_2(x));
  return y;
}

Tensor TransformerEncoderLayer::backward(const Tensor& dy, TransformerEncoderLayer& grad) const {
  TS_CODE_SITE();
  if (saved.x.dimension() == 0) throw std::logic_error("TransformerEncoderLayer.backward: no forward under EnableGrad");
  // 3) y = x + FFN(LN2(x)):   dx = dy + LN2.backward(x, FFN.backward(dy))   (B,T,C)
  Tensor dx = dy + layer_norm_2.backward(saved.x, feed_forward.backward(dy, grad.feed_forward), grad.layer_norm_2);
  // 2) x = x_in + MHA(h, h, h):   dh = dquery + dkey + dvalue   (B,T,C)
  const AttentionHead::InputGrads a = attention.backward(dx, grad.attention);
  Tensor dh = a.dquery + a.dkey + a.dvalue;
  // 1) h = LN1(x_in):   dx_in = dx + LN1.backward(x_in, dh)   (B,T,C)
  Tensor dx_in = dx + layer_norm_1.backward(saved.x_in, dh, grad.layer_norm_1);
  return dx_in;
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
  layer_norm = LayerNorm(config.hidden_size, LayerNormArithmetic::Article000, 1e-12);
  dropout = Dropout();  // nn.Dropout() defaults to p = 0.5
}

static const CodeSite kEmbeddingsForwardSite{__FILE__, __LINE__ + 1, "Embeddings::operator()"};
Tensor Embeddings::operator()(const ITensor& input_ids) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("Embeddings", input_ids);
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
  if (grad_enabled()) saved.embeddings = embeddings;  // kept for the backward
  // 3) LayerNorm, then Dropout          (B,T,C)
  return dropout(layer_norm(embeddings));
}

static const CodeSite kEmbeddingsBackwardSite{__FILE__, __LINE__ + 1, "Embeddings::backward"};
void Embeddings::backward(const ITensor& input_ids, const Tensor& dy, Embeddings& grad) const {
  TS_CODE_SITE();
  if (saved.embeddings.size() != dy.size()) throw std::logic_error("Embeddings.backward: no forward under EnableGrad");
  require_forward(dropout.ready_for(dy), "dropout", kEmbeddingsForwardSite, kEmbeddingsBackwardSite);
  // 3) de = LN.backward(token + position, dropout.backward(dy))   (B,T,C)
  const Tensor de = layer_norm.backward(saved.embeddings, dropout.backward(dy), grad.layer_norm);
  // 2) the token rows: grad.token_embeddings.weight[ids[b,t]] += de[b,t]
  token_embeddings.backward(input_ids, de, grad.token_embeddings);
  // 1) the position rows, shared by the B sentences: dpos[t] = sum_b de[b,t]   (1,T,C)
  const size_t B = de.shape()[0], T = de.shape()[1], C = de.shape()[2];
  Tensor dpos = Tensor::from_shape({1, T, C});
  dpos.fill(0.0f);
  for (size_t b = 0; b < B; ++b)
    for (size_t i = 0; i < T * C; ++i) dpos.data()[i] += de.data()[b * T * C + i];
  ITensor position_ids = ITensor::from_shape({1, T});
  for (size_t t = 0; t < T; ++t) position_ids(0, t) = static_cast<int64_t>(t);
  position_embeddings.backward(position_ids, dpos, grad.position_embeddings);
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
  TS_TRACE_SCOPE("TransformerEncoder", input_ids);
  // x = Embeddings(ids); then x = layer(x) for each of the N layers
  // (B,T) -> (B,T,C)
  Tensor x = embeddings(input_ids);
  if (grad_enabled()) saved_ids = input_ids;  // kept for the backward
  for (const TransformerEncoderLayer& layer : layers) x = layer(x, mask);
  return x;
}

void TransformerEncoder::backward(const Tensor& dy, TransformerEncoder& grad) const {
  TS_CODE_SITE();
  // the layers last first, then the embeddings   (B,T,C)
  Tensor d = dy;
  for (size_t l = layers.size(); l-- > 0;) d = layers[l].backward(d, grad.layers[l]);
  embeddings.backward(saved_ids, d, grad.embeddings);
}

std::vector<std::pair<std::string, Tensor*>> TransformerEncoder::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  auto lin = [&](const std::string& name, Linear& l) {
    out.push_back({name + ".weight", &l.weight});
    out.push_back({name + ".bias", &l.bias});
  };
  auto norm = [&](const std::string& name, LayerNorm& n) {
    out.push_back({name + ".weight", &n.weight});
    out.push_back({name + ".bias", &n.bias});
  };
  out.push_back({"embeddings.token_embeddings.weight", &embeddings.token_embeddings.weight});
  out.push_back({"embeddings.position_embeddings.weight", &embeddings.position_embeddings.weight});
  norm("embeddings.layer_norm", embeddings.layer_norm);
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    TransformerEncoderLayer& y = layers[l];
    norm(p + "layer_norm_1", y.layer_norm_1);
    norm(p + "layer_norm_2", y.layer_norm_2);
    for (size_t h = 0; h < y.attention.heads.size(); ++h) {
      const std::string hp = p + "attention.heads." + std::to_string(h) + ".";
      lin(hp + "q", y.attention.heads[h].q);
      lin(hp + "k", y.attention.heads[h].k);
      lin(hp + "v", y.attention.heads[h].v);
    }
    lin(p + "attention.output_linear", y.attention.output_linear);
    lin(p + "feed_forward.linear_1", y.feed_forward.linear_1);
    lin(p + "feed_forward.linear_2", y.feed_forward.linear_2);
  }
  return out;
}

void zero_grad(TransformerEncoder& grads) {
  for (auto& [name, p] : grads.named_parameters()) p->fill(0.0f);
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
