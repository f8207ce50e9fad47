// annotated.cpp: article 002's modules. Each forward reads top to bottom like the
// article's Python (tests/twins/article002.py); comments give the formula, then the shape.
#include "transformer/annotated.hpp"
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "exact/fp_contract.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/grad.hpp"


namespace ts {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument(msg); }

// A bool mask read as if broadcast to (B,H,T,S): right-aligned, size-1 dims repeat.
struct MaskIndex {
  const bool* data = nullptr;
  size_t st[4] = {0, 0, 0, 0};
  MaskIndex(const BTensor& m, const size_t (&target)[4]) {
    const size_t r = m.dimension();
    if (r > 4) fail("attention: the mask has more than 4 dims");
    data = m.data();
    size_t stride = 1;
    for (size_t i = 0; i < r; ++i) {
      const size_t md = r - 1 - i, td = 3 - i;
      const size_t n = m.shape()[md];
      if (n != 1 && n != target[td])
        fail("attention: mask dim " + std::to_string(md) + " (" + std::to_string(n) +
             ") does not broadcast to " + std::to_string(target[td]));
      st[td] = n == 1 ? 0 : stride;
      stride *= n;
    }
  }
  bool keep(size_t b, size_t h, size_t t, size_t s) const {
    return data[b * st[0] + h * st[1] + t * st[2] + s * st[3]];
  }
};

// scores / sqrt(d_k), then masked_fill(mask == 0, -1e9), softmax, dropout (in place on scores).
// scores (B,H,T,S) -> p (B,H,T,S)
// *p_softmax (if not null) = the weights before dropout.
Tensor scale_mask_softmax(Tensor scores, size_t d_k, const BTensor* mask, const Dropout* dropout,
                          Tensor* p_softmax = nullptr, bool scale_scores = true) {
  // 1) scores = Q K^T / sqrt(d_k): torch divides by the Python float, cast to float32
  //    (scale_scores false: an exercise leaves them unscaled)
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_k)));
  if (scale_scores)
    for (float& s : scores) s = s / scale;
  // 2) masked_fill(mask == 0, -1e9)
  if (mask) {
    const size_t tgt[4] = {scores.shape()[0], scores.shape()[1], scores.shape()[2], scores.shape()[3]};
    const MaskIndex mi(*mask, tgt);
    const float hidden = static_cast<float>(-1e9);
    float* p = scores.data();
    for (size_t b = 0; b < tgt[0]; ++b)
      for (size_t h = 0; h < tgt[1]; ++h)
        for (size_t t = 0; t < tgt[2]; ++t)
          for (size_t s = 0; s < tgt[3]; ++s, ++p)
            if (!mi.keep(b, h, t, s)) *p = hidden;
  }
  // 3) p_attn = softmax(scores, dim=-1);  4) p_attn = dropout(p_attn)
  Tensor p = softmax(scores);
  if (p_softmax) *p_softmax = p;
  if (dropout) p = (*dropout)(p);
  return p;
}

// mask.unsqueeze(1): (B,T,S) -> (B,1,T,S)
BTensor unsqueeze1(const BTensor& m) {
  Shape s = shape_of(m);
  s.insert(s.begin() + (s.empty() ? 0 : 1), 1);
  BTensor out = m;
  out.reshape(s);
  return out;
}

ModuleRepr dropout_child(const Dropout& d) { return d.repr(); }

}  // namespace

std::string annotated_source() { return code_site_path(__FILE__); }

// ---------------------------------------------------------------- masks
BTensor subsequent_mask(int64_t size) {
  TS_CODE_SITE();
  // triu(ones, k=1) == 0  ->  keep (t, s) when s <= t
  // (1,T,T)
  if (size < 0) fail("subsequent_mask: size must be >= 0");
  const size_t n = static_cast<size_t>(size);
  BTensor m = BTensor::from_shape({1, n, n});
  for (size_t t = 0; t < n; ++t)
    for (size_t s = 0; s < n; ++s) m(0, t, s) = s <= t;
  return m;
}

// ---------------------------------------------------------------- attention
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const BTensor* mask, const Dropout* dropout,
                 Tensor* p_attn_out) {
  TS_CODE_SITE();
  if (q.dimension() != 4 || k.dimension() != 4 || v.dimension() != 4)
    fail("attention: q, k, v must be (B,H,T,D), (B,H,S,D), (B,H,S,D)");
  const size_t B = q.shape()[0], H = q.shape()[1], T = q.shape()[2], D = q.shape()[3];
  const size_t S = k.shape()[2];
  if (k.shape()[0] != B || k.shape()[1] != H || k.shape()[3] != D || v.shape()[0] != B || v.shape()[1] != H ||
      v.shape()[2] != S)
    fail("attention: q, k, v disagree in B, H, S or D");
  // torch.matmul on 4-D contiguous operands folds (B,H) into one batch and calls bmm,
  // with key.transpose(-2,-1) read through transposed strides (bmm_nt).
  Tensor q3 = q, k3 = k, v3 = v;
  q3.reshape({B * H, T, D});
  k3.reshape({B * H, S, D});
  v3.reshape({B * H, S, v.shape()[3]});
  // 1) scores = Q K^T                   (B*H,T,S) -> (B,H,T,S)
  Tensor scores = bmm_nt(q3, k3);
  scores.reshape({B, H, T, S});
  // 2) p = dropout(softmax(masked(scores / sqrt(D))))
  Tensor p = scale_mask_softmax(std::move(scores), D, mask, dropout);
  // 3) out = p V                        (B*H,T,S) x (B*H,S,Dv) -> (B,H,T,Dv)
  Tensor p3 = p;
  p3.reshape({B * H, T, S});
  Tensor out = bmm(p3, v3);
  out.reshape({B, H, T, v.shape()[3]});
  if (p_attn_out) *p_attn_out = std::move(p);
  return out;
}

Tensor attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int64_t h, const BTensor* mask,
                       const Dropout* dropout, Tensor* p_attn_out, Tensor* p_softmax_out, bool scale_scores) {
  TS_CODE_SITE();
  if (q.dimension() != 3 || k.dimension() != 3 || v.dimension() != 3)
    fail("attention_heads: q must be (B,T,C), k and v (B,S,C)");
  if (h <= 0 || q.shape()[2] % static_cast<size_t>(h) != 0) fail("attention_heads: C must be divisible by h");
  const size_t d_k = q.shape()[2] / static_cast<size_t>(h);
  // 1) scores = Q_h K_h^T on the per-head views   (B,H,T,S)
  Tensor scores = matmul_heads_qk(q, k, h);
  // 2) p = dropout(softmax(masked(scores / sqrt(D))))   (B,H,T,S)
  Tensor p = scale_mask_softmax(std::move(scores), d_k, mask, dropout, p_softmax_out, scale_scores);
  // 3) out = p V_h                                       (B,H,T,D)
  Tensor out = matmul_heads_pv(p, v);
  if (p_attn_out) *p_attn_out = std::move(p);
  return out;
}

void attention_heads_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v, int64_t h,
                              const Tensor& p, const Tensor& pd, const Dropout* dropout, Tensor& dq, Tensor& dk,
                              Tensor& dv, bool scale_scores) {
  TS_CODE_SITE();
  const int64_t B = int64_t(q.shape()[0]), T = int64_t(q.shape()[1]), C = int64_t(q.shape()[2]);
  const int64_t S = int64_t(k.shape()[1]), H = h, D = C / H;
  const int64_t TS = T * S;
  // 1) dpd = dout V^T   (B,H,T,S);  dV += pd^T dout   (S,D) per head, in place in (B,S,C)
  Tensor dpd = zeros(shape_of(p));  // zeros, though beta 0 overwrites it: an edited product leaves 0, not old memory
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hh = 0; hh < H; ++hh) {
      const float* dO = dout.data() + b * T * C + hh * D;
      const float* pdh = pd.data() + (b * H + hh) * TS;
      mm_rows(false, true, T, S, D, dO, C, v.data() + b * S * C + hh * D, C, 0.0f, dpd.data() + (b * H + hh) * TS, S);
      mm_rows(true, false, S, D, T, pdh, S, dO, C, 1.0f, dv.data() + b * S * C + hh * D, C);
    }
  // 2) dp = dropout.backward(dpd);  ds = p (dp - sum_s dp p) / sqrt(D)   (a hidden score has p = 0)
  const Tensor dp = dropout ? dropout->backward(std::move(dpd)) : std::move(dpd);
  const float scale = scale_scores ? static_cast<float>(std::sqrt(static_cast<double>(D))) : 1.0f;
  Tensor ds = Tensor::from_shape(shape_of(p));
  for (int64_t r = 0; r < B * H * T; ++r) {
    const float* pr = p.data() + r * S;
    const float* dpr = dp.data() + r * S;
    double dot = 0.0;
    for (int64_t s2 = 0; s2 < S; ++s2) dot += double(dpr[s2]) * double(pr[s2]);
    for (int64_t s2 = 0; s2 < S; ++s2)
      ds.data()[r * S + s2] = static_cast<float>(double(pr[s2]) * (double(dpr[s2]) - dot) / double(scale));
  }
  // 3) dQ += ds K   (T,D);  dK += ds^T Q   (S,D)   per head
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hh = 0; hh < H; ++hh) {
      const float* dsh = ds.data() + (b * H + hh) * TS;
      mm_rows(false, false, T, D, S, dsh, S, k.data() + b * S * C + hh * D, C, 1.0f, dq.data() + b * T * C + hh * D, C);
      mm_rows(true, false, S, D, T, dsh, S, q.data() + b * T * C + hh * D, C, 1.0f, dk.data() + b * S * C + hh * D, C);
    }
}

// ---------------------------------------------------------------- SublayerConnection
const char* norm_place_name(NormPlace p) { return p == NormPlace::Pre ? "pre-LN" : "post-LN"; }

SublayerConnection::SublayerConnection(int64_t size, double p, NormPlace place)
    : norm(size, LayerNormArithmetic::Article002), dropout(p), norm_place(place) {}

// the lines below: SublayerConnection's forward and backward, named when they disagree
static const CodeSite kSublayerForwardSite{__FILE__, __LINE__ + 1, "SublayerConnection::operator()"};
Tensor SublayerConnection::operator()(const Tensor& x, const std::function<Tensor(const Tensor&)>& sublayer) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("SublayerConnection", x);
  if (norm_place == NormPlace::Post) {
    // out = norm(x + dropout(sublayer(x)))   (B,T,C) -> (B,T,C)
    Tensor sum = x + dropout(sublayer(x));
    Tensor out = norm(sum);
    if (grad_enabled()) {
      saved_x = std::move(sum);
      ran = true;
    }
    return out;
  }
  // out = x + dropout(sublayer(norm(x)))
  // (B,T,C) -> (B,T,C)
  if (grad_enabled()) {
    saved_x = x;
    ran = true;
  }
  Tensor y = dropout(sublayer(norm(x)));
  // out = x + y   (added in y's storage: the same sums, no new tensor)
  y += x;
  return y;
}

static void require_forward(const SublayerConnection& s, size_t i, const CodeSite& forward, const CodeSite& backward) {
  require_forward(s.ran, "sublayer[" + std::to_string(i) + "]", forward, backward);
}

static const CodeSite kSublayerBackwardSite{__FILE__, __LINE__ + 1, "SublayerConnection::backward"};
Tensor SublayerConnection::backward(const Tensor& dy, const std::function<Tensor(const Tensor&)>& sublayer_backward,
                                    SublayerConnection& grad) const {
  TS_CODE_SITE();
  require_forward(dropout.ready_for(dy), "dropout", kSublayerForwardSite, kSublayerBackwardSite);
  if (norm_place == NormPlace::Post) {
    // ds = norm.backward(sum, dy);  dx = ds (the residual) + sublayer_backward(dropout.backward(ds))
    Tensor ds = norm.backward(saved_x, dy, grad.norm);
    ds += sublayer_backward(dropout.backward(ds));
    return ds;
  }
  // dx = dy (the residual) + norm.backward(x, sublayer_backward(dropout.backward(dy)))   (B,T,C)
  const Tensor dn = sublayer_backward(dropout.backward(dy));
  Tensor dx = norm.backward(saved_x, dn, grad.norm);
  dx += dy;
  return dx;
}

ModuleRepr SublayerConnection::repr() const {
  return {"SublayerConnection", "", {{"norm", norm.repr()}, {"dropout", dropout_child(dropout)}}};
}

// ---------------------------------------------------------------- MultiHeadedAttention
MultiHeadedAttention::MultiHeadedAttention(int64_t h_, int64_t d_model, double p) : h(h_), dropout(p) {
  if (h_ <= 0 || d_model <= 0 || d_model % h_ != 0) fail("MultiHeadedAttention: d_model % h must be 0");
  d_k = d_model / h_;
  // [deepcopy(nn.Linear(d_model, d_model)) for i in range(4)]: the comprehension builds a NEW
  // Linear on every iteration, so four independent draws, in order (the deepcopy copies each
  // fresh Linear once and changes nothing)
  for (int i = 0; i < 4; ++i) linears.emplace_back(d_model, d_model);
}

std::string MultiHeadedAttention::linear_name(size_t i) const {
  static const char* const k004[4] = {"wq", "wk", "wv", "dense"};
  if (article == AttentionArticle::Article004 && i < 4) return k004[i];
  return "linears." + std::to_string(i);
}

// ---------------------------------------------------------------- KVCache
size_t KVCache::len() const { return k.dimension() == 3 ? k.shape()[1] : 0; }

// the line below: KVCache::append's own, for kv_cache_append_site()
static const CodeSite kAppendSite{__FILE__, __LINE__ + 1, "KVCache::append"};
void KVCache::append(const Tensor& k_new, const Tensor& v_new) {
  // K = cat(K, k), V = cat(V, v)   (B,t,C) + (B,u,C) -> (B,t+u,C)
  if (len() == 0) {
    k = k_new, v = v_new;  // the first step: nothing cached yet
    return;
  }
  if (k_new.dimension() != 3 || k_new.shape()[0] != k.shape()[0] || k_new.shape()[2] != k.shape()[2])
    fail("KVCache::append: the new keys must be (B,u,C) like the cached (B,t,C)");
  k = cat(std::vector<const Tensor*>{&k, &k_new}, 1);
  v = cat(std::vector<const Tensor*>{&v, &v_new}, 1);
}

std::string kv_cache_append_site() {
  return code_site_path(kAppendSite.file) + ":" + std::to_string(kAppendSite.line) + " " + kAppendSite.func;
}

// the lines below: MultiHeadedAttention's forward and backward, named when they disagree
static const CodeSite kAttentionForwardSite{__FILE__, __LINE__ + 1, "MultiHeadedAttention::operator()"};
Tensor MultiHeadedAttention::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                        const BTensor* mask, KVCache* cache) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE(article == AttentionArticle::Article004 ? "MutilHeadAttention" : "MultiHeadedAttention", query);
  if (query.dimension() != 3 || key.dimension() != 3 || value.dimension() != 3)
    fail("MultiHeadedAttention: query, key, value must be (B,T,C), (B,S,C), (B,S,C)");
  // 0) mask.unsqueeze(1): the same mask for every head   (B,1,T,S)
  BTensor m4;
  if (mask) m4 = unsqueeze1(*mask);
  // 1) project: Q = linears[0](query), K = linears[1](key), V = linears[2](value)   (B,T|S,C)
  Tensor q = linears[0](query);
  Tensor k, v;
  if (!cache || !cache->fixed || cache->len() == 0) k = linears[1](key), v = linears[2](value);
  //    with a cache: append this step's k, v (or keep the fixed memory's), attend over all of them   (B,t,C)
  if (cache && !cache->fixed) {
    const size_t before = cache->len();
    cache->append(k, v);
    // a mask the caller built for every cached position and the new ones needs the cache to hold them all
    const int keys_line = __LINE__ + 1;  // the line below, for the NOT OK to name
    const size_t S = mask && mask->dimension() > 0 ? mask->shape().back() : 1;
    if (S != 1 && S != cache->len()) {  // a failed check (NOT OK, exit 3): a learner's edit, measured
      // the cache grew by exactly the new rows: append did its part, the keys expected here did not
      const bool appended = cache->len() == before + k.shape()[1];
      throw CheckFailure((mask ? "the mask covers " + std::to_string(S) + " keys"
                               : "with no mask, this check expected " + std::to_string(S) + " keys") +
                         ", the KV cache holds " + std::to_string(cache->len()) + " after appending " +
                         std::to_string(k.shape()[1]) + " to " + std::to_string(before) +
                         (appended ? ": the cache grew by exactly the new rows (look at how the keys expected are "
                                     "read, " + code_site_path(__FILE__) + ":" + std::to_string(keys_line) +
                                     " MultiHeadedAttention::operator(), and at the mask's maker)"
                                   : std::string(cache->len() < before + k.shape()[1] ? ": it dropped some" : "") +
                                         " (look at " + kv_cache_append_site() + ")"));
    }
  }
  if (cache && cache->fixed && cache->len() == 0) cache->k = k, cache->v = v;
  const Tensor& keys = cache ? cache->k : k;
  const Tensor& values = cache ? cache->v : v;
  // 2) split heads (view(B,-1,h,d_k).transpose(1,2)) and 3) attend   (B,H,T,D)
  //    (the dropout on the weights is article 002's; article 004 has none)
  const bool keep = grad_enabled();
  const Dropout* drop = article == AttentionArticle::Article002 ? &dropout : nullptr;
  Tensor x = attention_heads(q, keys, values, h, mask ? &m4 : nullptr, drop, &attn, keep ? &saved.p : nullptr,
                             scale_scores);
  // 4) merge heads: x.transpose(1,2).contiguous().view(B,-1,h*d_k)   (B,T,C)
  Tensor merged = merge_heads(x);
  // 5) output projection linears[3]   (B,T,C)
  Tensor out = linears[3](merged);
  // what the backward needs (this call's own tensors moved in, not copied)
  if (keep) {
    const bool key_is_query = &key == &query, value_is_key = &value == &key;
    saved = Saved{query, key_is_query ? Tensor() : key, value_is_key ? Tensor() : value, std::move(q),
                  cache ? keys : std::move(k), cache ? values : std::move(v), std::move(saved.p), std::move(merged),
                  key_is_query, value_is_key};
  }
  return out;
}

static const CodeSite kAttentionBackwardSite{__FILE__, __LINE__ + 1, "MultiHeadedAttention::backward"};
MultiHeadedAttention::InputGrads MultiHeadedAttention::backward(const Tensor& dy, MultiHeadedAttention& grad) const {
  TS_CODE_SITE();
  const Dropout* drop = article == AttentionArticle::Article002 ? &dropout : nullptr;  // as the forward ran
  require_forward(!drop || drop->ready_for(saved.p), "dropout", kAttentionForwardSite, kAttentionBackwardSite);
  // 5) dmerged = linears[3].backward(merged, dy)   (B,T,C)
  const Tensor dmerged = linears[3].backward(saved.merged, dy, grad.linears[3]);
  // 4) + 3) + 2) the heads' attention, read per head in place   dq (B,T,C), dk, dv (B,S,C)
  Tensor dq = zeros(shape_of(saved.q)), dk = zeros(shape_of(saved.k)), dv = zeros(shape_of(saved.v));
  attention_heads_backward(dmerged, saved.q, saved.k, saved.v, h, saved.p, attn, drop, dq, dk, dv, scale_scores);
  // 1) the three projections
  return {linears[0].backward(saved.query, dq, grad.linears[0]), linears[1].backward(saved.key_in(), dk, grad.linears[1]),
          linears[2].backward(saved.value_in(), dv, grad.linears[2])};
}

ModuleRepr MultiHeadedAttention::repr() const {
  if (article == AttentionArticle::Article004) {  // the twin's MutilHeadAttention: four Dense, no dropout
    ModuleRepr r{"MutilHeadAttention", "", {}};
    for (size_t i = 0; i < linears.size(); ++i) r.children.push_back({linear_name(i), linears[i].repr()});
    return r;
  }
  std::vector<ModuleRepr> items;
  for (const Linear& l : linears) items.push_back(l.repr());
  return {"MultiHeadedAttention", "", {{"linears", module_list_repr(items)}, {"dropout", dropout.repr()}}};
}

// ---------------------------------------------------------------- encoder
EncoderLayer::EncoderLayer(int64_t size_, const MultiHeadedAttention& attn, const FeedForward& ff,
                           double dropout)
    : self_attn(attn), feed_forward(ff), sublayer(2, SublayerConnection(size_, dropout)), size(size_) {}

// the lines below: EncoderLayer's forward and backward, named when they disagree
static const CodeSite kEncoderLayerForwardSite{__FILE__, __LINE__ + 1, "EncoderLayer::operator()"};
Tensor EncoderLayer::operator()(const Tensor& x_in, const BTensor* mask) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("EncoderLayer", x_in);
  // x = x + dropout(self_attn(norm(x)))   (B,S,C)
  Tensor x = sublayer[0](x_in, [&](const Tensor& y) { return self_attn(y, y, y, mask); });
  // out = x + dropout(feed_forward(norm(x)))   (B,S,C)
  return sublayer[1](x, [&](const Tensor& y) { return feed_forward(y); });
}

static const CodeSite kEncoderLayerBackwardSite{__FILE__, __LINE__ + 1, "EncoderLayer::backward"};
Tensor EncoderLayer::backward(const Tensor& dy, EncoderLayer& grad) const {
  TS_CODE_SITE();
  for (size_t i = 0; i < sublayer.size(); ++i)
    require_forward(sublayer[i], i, kEncoderLayerForwardSite, kEncoderLayerBackwardSite);
  // the forward's two sublayers in reverse: feed-forward, then self-attention (its three inputs are one x)
  const Tensor dx = sublayer[1].backward(
      dy, [&](const Tensor& d) { return feed_forward.backward(d, grad.feed_forward); }, grad.sublayer[1]);
  return sublayer[0].backward(
      dx,
      [&](const Tensor& d) {
        const MultiHeadedAttention::InputGrads g = self_attn.backward(d, grad.self_attn);
        return Tensor(g.dquery + g.dkey + g.dvalue);
      },
      grad.sublayer[0]);
}

ModuleRepr EncoderLayer::repr() const {
  std::vector<ModuleRepr> subs;
  for (const SublayerConnection& s : sublayer) subs.push_back(s.repr());
  return {"EncoderLayer", "",
          {{"self_attn", self_attn.repr()}, {"feed_forward", feed_forward.repr()}, {"sublayer", module_list_repr(subs)}}};
}

void EncoderLayer::train(bool on) {
  self_attn.train(on);
  feed_forward.train(on);
  for (SublayerConnection& s : sublayer) s.train(on);
}

Tensor Encoder::operator()(const Tensor& x_in, const BTensor* mask) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("Encoder", x_in);
  // x = layer(x) for each of the N layers, then the final norm   (B,S,C)
  // (the article re-applies self.norm inside the loop; only the last result is kept, and the
  // norm draws no random numbers, so applying it once after the loop gives the same tensor)
  Tensor x = x_in;
  for (EncoderLayer& layer : layers) x = layer(x, mask);
  if (grad_enabled()) saved_x = x;
  return norm(x);
}

Tensor Encoder::backward(const Tensor& dy, Encoder& grad) const {
  TS_CODE_SITE();
  // the final norm, then the N layers in reverse   (B,S,C)
  Tensor dx = norm.backward(saved_x, dy, grad.norm);
  for (size_t i = layers.size(); i-- > 0;) dx = layers[i].backward(dx, grad.layers[i]);
  return dx;
}

// ---------------------------------------------------------------- decoder
DecoderLayer::DecoderLayer(int64_t size_, const MultiHeadedAttention& self, const MultiHeadedAttention& src,
                           const FeedForward& ff, double dropout)
    : size(size_), self_attn(self), src_attn(src), feed_forward(ff), sublayer(3, SublayerConnection(size_, dropout)) {}

// the lines below: DecoderLayer's forward and backward, named when they disagree
static const CodeSite kDecoderLayerForwardSite{__FILE__, __LINE__ + 1, "DecoderLayer::operator()"};
Tensor DecoderLayer::operator()(const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                                const BTensor* tgt_mask, DecoderLayerCache* cache) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("DecoderLayer", x_in);
  // 1) masked self-attention: x = x + dropout(self_attn(n, n, n, tgt_mask)), n = norm(x)   (B,T,C)
  //    with a cache, n holds the new rows only and attends over the cached past too; article
  //    001's way (cache->inputs) caches the rows: rows = cat(rows, n); self_attn(n, rows, rows)
  Tensor x = sublayer[0](x_in, [&](const Tensor& y) {
    if (cache && cache->inputs) {
      cache->rows = cache->rows.dimension() == 3 ? cat(std::vector<const Tensor*>{&cache->rows, &y}, 1) : y;
      return self_attn(y, cache->rows, cache->rows, tgt_mask);
    }
    return self_attn(y, y, y, tgt_mask, cache ? &cache->self_attn : nullptr);
  });
  // 2) cross-attention: x = x + dropout(src_attn(n, memory, memory, src_mask))   (B,T,C)
  //    with a key/value cache the memory's keys and values are projected once (article 001: every step)
  x = sublayer[1](x, [&](const Tensor& y) {
    return src_attn(y, memory, memory, src_mask, cache && !cache->inputs ? &cache->src_attn : nullptr);
  });
  // 3) feed-forward: out = x + dropout(feed_forward(norm(x)))   (B,T,C)
  return sublayer[2](x, [&](const Tensor& y) { return feed_forward(y); });
}

static const CodeSite kDecoderLayerBackwardSite{__FILE__, __LINE__ + 1, "DecoderLayer::backward"};
Tensor DecoderLayer::backward(const Tensor& dy, DecoderLayer& grad, Tensor& dmemory) const {
  TS_CODE_SITE();
  for (size_t i = 0; i < sublayer.size(); ++i)
    require_forward(sublayer[i], i, kDecoderLayerForwardSite, kDecoderLayerBackwardSite);
  // 3) feed-forward
  Tensor dx = sublayer[2].backward(
      dy, [&](const Tensor& d) { return feed_forward.backward(d, grad.feed_forward); }, grad.sublayer[2]);
  // 2) cross-attention: the query is x; key and value are the memory
  dx = sublayer[1].backward(
      dx,
      [&](const Tensor& d) {
        const MultiHeadedAttention::InputGrads g = src_attn.backward(d, grad.src_attn);
        dmemory += g.dkey;
        dmemory += g.dvalue;
        return g.dquery;
      },
      grad.sublayer[1]);
  // 1) masked self-attention: query, key and value are all x
  return sublayer[0].backward(
      dx,
      [&](const Tensor& d) {
        const MultiHeadedAttention::InputGrads g = self_attn.backward(d, grad.self_attn);
        return Tensor(g.dquery + g.dkey + g.dvalue);
      },
      grad.sublayer[0]);
}

ModuleRepr DecoderLayer::repr() const {
  std::vector<ModuleRepr> subs;
  for (const SublayerConnection& s : sublayer) subs.push_back(s.repr());
  return {"DecoderLayer", "",
          {{"self_attn", self_attn.repr()},
           {"src_attn", src_attn.repr()},
           {"feed_forward", feed_forward.repr()},
           {"sublayer", module_list_repr(subs)}}};
}

void DecoderLayer::train(bool on) {
  self_attn.train(on);
  src_attn.train(on);
  feed_forward.train(on);
  for (SublayerConnection& s : sublayer) s.train(on);
}

Tensor Decoder::operator()(const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                           const BTensor* tgt_mask, std::vector<DecoderLayerCache>* caches) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("Decoder", x_in);
  if (caches && caches->size() != layers.size())
    fail("Decoder: " + std::to_string(caches->size()) + " caches for " + std::to_string(layers.size()) + " layers");
  // x = layer(x, memory) for each of the N layers (layer i with cache i), then the final norm   (B,T,C)
  Tensor x = x_in;
  for (size_t i = 0; i < layers.size(); ++i) x = layers[i](x, memory, src_mask, tgt_mask, caches ? &(*caches)[i] : nullptr);
  if (grad_enabled()) saved_x = x;
  return norm(x);
}

Tensor Decoder::backward(const Tensor& dy, Decoder& grad, Tensor& dmemory) const {
  TS_CODE_SITE();
  // the final norm, then the N layers in reverse   (B,T,C); each adds into dmemory (B,S,C)
  Tensor dx = norm.backward(saved_x, dy, grad.norm);
  for (size_t i = layers.size(); i-- > 0;) dx = layers[i].backward(dx, grad.layers[i], dmemory);
  return dx;
}

// ---------------------------------------------------------------- PositionalEncoding
TS_NO_FP_CONTRACT PositionalEncoding::PositionalEncoding(int64_t d_model, double p, int64_t max_len) : dropout(p) {
  TS_NO_FP_CONTRACT_BODY
  if (d_model <= 0 || max_len <= 0) fail("PositionalEncoding: d_model and max_len must be positive");
  const size_t C = static_cast<size_t>(d_model), L = static_cast<size_t>(max_len);
  const size_t half = (C + 1) / 2;  // torch.arange(0, C, 2) has ceil(C/2) values
  // 1) div_term = exp(arange(0, C, 2) * -(ln(10000) / C))   (half)
  //    torch: a float multiply by the Python float (cast to float32), then SLEEF expf (8 lanes)
  const float k = static_cast<float>(-(std::log(10000.0) / static_cast<double>(d_model)));
  std::vector<float> div_term(half);
  for (size_t i = 0; i < half; ++i) div_term[i] = static_cast<float>(2 * i) * k;
  //    (torch's vec::map: full 8-lane vectors, then the tail as one partial vector)
  exact::sleef_exp(div_term.data(), int64_t(half));
  // 2) pe_pos = position * div_term   (L, half)
  std::vector<float> pos(L * half), sn, cs;
  for (size_t l = 0; l < L; ++l)
    for (size_t i = 0; i < half; ++i) pos[l * half + i] = static_cast<float>(l) * div_term[i];
  sn = pos;
  cs = pos;
  // 3) pe[:, 0::2] = sin(pe_pos);  pe[:, 1::2] = cos(pe_pos)   (1, L, C)
  exact::sleef_sin(sn.data(), int64_t(sn.size()));
  exact::sleef_cos(cs.data(), int64_t(cs.size()));
  pe = Tensor::from_shape({1, L, C});
  pe.fill(0.0f);
  for (size_t l = 0; l < L; ++l)
    for (size_t i = 0; i < half; ++i) {
      pe.data()[l * C + 2 * i] = sn[l * half + i];
      if (2 * i + 1 < C) pe.data()[l * C + 2 * i + 1] = cs[l * half + i];
    }
}

Tensor PositionalEncoding::operator()(const Tensor& x) const {
  TS_CODE_SITE();
  // out = dropout(x + pe[:, :T])
  // (B,T,C) + (1,T,C) -> (B,T,C)
  if (x.dimension() != 3 || x.shape()[2] != pe.shape()[2]) fail("PositionalEncoding: x must be (B,T,C)");
  const size_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2];
  if (T > pe.shape()[1]) fail("PositionalEncoding: sequence longer than max_len");
  Tensor y = x;
  for (size_t b = 0; b < B; ++b)
    for (size_t i = 0; i < T * C; ++i) y.data()[b * T * C + i] = x.data()[b * T * C + i] + pe.data()[i];
  return dropout(y);
}

ModuleRepr PositionalEncoding::repr() const { return {"PositionalEncoding", "", {{"dropout", dropout.repr()}}}; }

// ---------------------------------------------------------------- Embeddings, Generator
AnnotatedEmbeddings::AnnotatedEmbeddings(int64_t d_model_, int64_t vocab) : lut(vocab, d_model_), d_model(d_model_) {}

Tensor AnnotatedEmbeddings::operator()(const ITensor& x) const {
  TS_CODE_SITE();
  // out = lut(x) * sqrt(d_model)   (the Python float, cast to float32 by torch)
  // (B,T) -> (B,T,C)
  Tensor out = lut(x);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
  for (float& v : out) v = v * scale;
  return out;
}

void AnnotatedEmbeddings::backward(const ITensor& x, const Tensor& dy, AnnotatedEmbeddings& grad) const {
  TS_CODE_SITE();
  // grad.lut.weight[x[n]] += scale dy[n]   (a row used twice gets both gradients)
  const size_t C = static_cast<size_t>(d_model);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
  if (dy.size() != x.size() * C) throw std::invalid_argument("Embeddings.backward: dy must be (B,T,C)");
  for (size_t n = 0; n < x.size(); ++n) {
    float* row = grad.lut.weight.data() + static_cast<size_t>(x.data()[n]) * C;
    for (size_t c = 0; c < C; ++c) row[c] += scale * dy.data()[n * C + c];
  }
}

ModuleRepr AnnotatedEmbeddings::repr() const { return {"Embeddings", "", {{"lut", lut.repr()}}}; }

ModuleRepr EmbedSequential::repr() const { return {"Sequential", "", {{"0", embed.repr()}, {"1", pos.repr()}}}; }

AnnotatedGenerator::AnnotatedGenerator(int64_t d_model, int64_t vocab) : proj(d_model, vocab) {}

Tensor AnnotatedGenerator::operator()(const Tensor& x) const {
  TS_CODE_SITE();
  // log p = log_softmax(x W^T + b)
  // (B,T,C) -> (B,T,V)
  Tensor logp = log_softmax(proj(x));
  if (grad_enabled()) saved = Saved{x, logp};
  return logp;
}

Tensor AnnotatedGenerator::backward(const Tensor& dlogp, AnnotatedGenerator& grad) const {
  TS_CODE_SITE();
  // dz = dlogp - softmax(z) sum_v dlogp, softmax(z) = exp(logp)   (B,T,V);  dx = proj.backward(x, dz)
  const size_t V = static_cast<size_t>(proj.out_features), rows = dlogp.size() / std::max<size_t>(V, 1);
  Tensor dz = Tensor::from_shape(shape_of(dlogp));
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (size_t j = 0; j < V; ++j) sum += dlogp.data()[r * V + j];
    for (size_t j = 0; j < V; ++j)
      dz.data()[r * V + j] =
          static_cast<float>(dlogp.data()[r * V + j] - std::exp(double(saved.logp.data()[r * V + j])) * sum);
  }
  return proj.backward(saved.x, dz, grad.proj);
}

ModuleRepr AnnotatedGenerator::repr() const { return {"Generator", "", {{"proj", proj.repr()}}}; }

// ---------------------------------------------------------------- EncoderDecoder
Tensor EncoderDecoder::encode(const ITensor& src, const BTensor* src_mask) {
  TS_CODE_SITE();
  // memory = encoder(src_embed(src))   (B,S) -> (B,S,C)
  if (grad_enabled()) saved_src = src;
  return encoder(src_embed(src), src_mask);
}

Tensor EncoderDecoder::decode(const Tensor& memory, const BTensor* src_mask, const ITensor& tgt,
                              const BTensor* tgt_mask) {
  TS_CODE_SITE();
  // out = decoder(tgt_embed(tgt), memory)   (B,T) -> (B,T,C)
  if (grad_enabled()) saved_tgt = tgt;
  return decoder(tgt_embed(tgt), memory, src_mask, tgt_mask);
}

Tensor EncoderDecoder::forward(const ITensor& src, const ITensor& tgt, const BTensor* src_mask,
                               const BTensor* tgt_mask) {
  const Tensor memory = encode(src, src_mask);
  return decode(memory, src_mask, tgt, tgt_mask);
}

void EncoderDecoder::backward(const Tensor& dout, EncoderDecoder& grad) const {
  TS_CODE_SITE();
  // decode's backward: the decoder (every layer adds its memory gradient), then tgt_embed
  Tensor dmemory = zeros(shape_of(encoder.saved_x));
  const Tensor dtgt = decoder.backward(dout, grad.decoder, dmemory);
  tgt_embed.backward(saved_tgt, dtgt, grad.tgt_embed);
  // encode's backward: the encoder from dmemory, then src_embed
  const Tensor dsrc = encoder.backward(dmemory, grad.encoder);
  src_embed.backward(saved_src, dsrc, grad.src_embed);
}

void zero_grad(EncoderDecoder& grads) {
  for (auto& [name, p] : grads.named_parameters()) p->fill(0.0f);
}

ModuleRepr EncoderDecoder::repr() const {
  return {"Transformer", "",
          {{"encoder", encoder.repr()},
           {"decoder", decoder.repr()},
           {"src_embed", src_embed.repr()},
           {"tgt_embed", tgt_embed.repr()},
           {"generator", generator.repr()}}};
}

void EncoderDecoder::train(bool on) {
  encoder.train(on);
  decoder.train(on);
  src_embed.train(on);
  tgt_embed.train(on);
}

namespace {
void add_mha(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix, MultiHeadedAttention& m) {
  for (size_t j = 0; j < m.linears.size(); ++j) {
    out.emplace_back(prefix + ".linears." + std::to_string(j) + ".weight", &m.linears[j].weight);
    out.emplace_back(prefix + ".linears." + std::to_string(j) + ".bias", &m.linears[j].bias);
  }
}
void add_ff(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix, FeedForward& f) {
  const std::string w_1 = prefix + "." + f.linear_names().first, w_2 = prefix + "." + f.linear_names().second;
  out.emplace_back(w_1 + ".weight", &f.linear_1.weight);
  out.emplace_back(w_1 + ".bias", &f.linear_1.bias);
  out.emplace_back(w_2 + ".weight", &f.linear_2.weight);
  out.emplace_back(w_2 + ".bias", &f.linear_2.bias);
}
void add_norm(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix, LayerNorm& n) {
  out.emplace_back(prefix + "." + n.param_names().first, &n.weight);
  out.emplace_back(prefix + "." + n.param_names().second, &n.bias);
}
void add_subs(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix,
              std::vector<SublayerConnection>& subs) {
  for (size_t k = 0; k < subs.size(); ++k) add_norm(out, prefix + ".sublayer." + std::to_string(k) + ".norm", subs[k].norm);
}
}  // namespace

std::vector<std::pair<std::string, Tensor*>> EncoderDecoder::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < encoder.layers.size(); ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    add_mha(out, p + ".self_attn", encoder.layers[i].self_attn);
    add_ff(out, p + ".feed_forward", encoder.layers[i].feed_forward);
    add_subs(out, p, encoder.layers[i].sublayer);
  }
  add_norm(out, "encoder.norm", encoder.norm);
  for (size_t i = 0; i < decoder.layers.size(); ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    add_mha(out, p + ".self_attn", decoder.layers[i].self_attn);
    add_mha(out, p + ".src_attn", decoder.layers[i].src_attn);
    add_ff(out, p + ".feed_forward", decoder.layers[i].feed_forward);
    add_subs(out, p, decoder.layers[i].sublayer);
  }
  add_norm(out, "decoder.norm", decoder.norm);
  out.emplace_back("src_embed.0.lut.weight", &src_embed.embed.lut.weight);
  out.emplace_back("tgt_embed.0.lut.weight", &tgt_embed.embed.lut.weight);
  out.emplace_back("generator.proj.weight", &generator.proj.weight);
  out.emplace_back("generator.proj.bias", &generator.proj.bias);
  return out;
}

EncoderDecoder create_model(int64_t src_vocab, int64_t tgt_vocab, int64_t N, int64_t d_model, int64_t d_ff,
                            int64_t h, double dropout, const ModelSettings& settings) {
  // 1) attn, ff, pos: drawn once, deep-copied everywhere below
  // the article's MultiHeadedAttention(h, d_model) keeps its dropout default 0.1 (settings.attention_dropout)
  MultiHeadedAttention attn(h, d_model, settings.attention_dropout);
  attn.scale_scores = settings.scale_scores;
  const FeedForward ff = positionwise_feed_forward(d_model, d_ff, dropout, settings.activation);
  const PositionalEncoding pos(d_model, dropout);
  // 2) the five parts, constructed in the article's argument order
  EncoderDecoder model;
  model.encoder = Encoder(EncoderLayer(d_model, attn, ff, dropout), N);
  model.decoder = Decoder(DecoderLayer(d_model, attn, attn, ff, dropout), N);
  model.src_embed = EmbedSequential{AnnotatedEmbeddings(d_model, src_vocab), pos};
  model.tgt_embed = EmbedSequential{AnnotatedEmbeddings(d_model, tgt_vocab), pos};
  model.generator = AnnotatedGenerator(d_model, tgt_vocab);
  // where each sublayer puts its LayerNorm (draws nothing; the final norms stay either way)
  for (EncoderLayer& l : model.encoder.layers)
    for (SublayerConnection& s : l.sublayer) s.norm_place = settings.norm_place;
  for (DecoderLayer& l : model.decoder.layers)
    for (SublayerConnection& s : l.sublayer) s.norm_place = settings.norm_place;
  // 3) xavier_uniform_ on every parameter with more than one dim, in parameters() order
  for (auto& [name, p] : model.named_parameters())
    if (p->dimension() > 1) xavier_uniform_(*p);
  return model;
}

}  // namespace ts
