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
  return trace_output(scaled_dot_product_attention(q(query), k(key), v(value), mask));
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
  // 3) output projection
  //    (B,T,C) -> (B,T,C)
  return output_linear(x);
}

ModuleRepr MultiHeadAttention::repr() const {
  std::vector<ModuleRepr> items;
  for (const AttentionHead& h : heads) items.push_back(h.repr());
  return {"MultiHeadAttention", "", {{"heads", module_list_repr(items)}, {"output_linear", output_linear.repr()}}};
}

// ---------------------------------------------------------------- feed-forward: feed_forward.cpp


}  // namespace ts
