// attention.cpp: the one multi-head attention (attention.hpp). Each forward reads top to bottom
// like article 002's Python (tests/twins/article002.py); comments give the formula, then the shape.
#include "transformer/attention.hpp"
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
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

// scores / sqrt(d_k), then masked_fill(mask == 0, hidden), softmax, dropout (in place on scores).
// scores (B,H,T,S) -> p (B,H,T,S)
// *p_softmax (if not null) = the weights before dropout.
Tensor scale_mask_softmax(Tensor scores, size_t d_k, const BTensor* mask, const Dropout* dropout,
                          Tensor* p_softmax = nullptr, bool scale_scores = true, float hidden = -1e9f) {
  // 1) scores = Q K^T / sqrt(d_k): torch divides by the Python float, cast to float32
  //    (scale_scores false: an exercise leaves them unscaled)
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_k)));
  if (scale_scores)
    for (float& s : scores) s = s / scale;
  // 2) masked_fill(mask == 0, hidden): -1e9 (article 002) or -inf (article 000)
  if (mask) {
    const size_t tgt[4] = {scores.shape()[0], scores.shape()[1], scores.shape()[2], scores.shape()[3]};
    const MaskIndex mi(*mask, tgt);
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

}  // namespace

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
                       const Dropout* dropout, Tensor* p_attn_out, Tensor* p_softmax_out, bool scale_scores,
                       float hidden) {
  TS_CODE_SITE();
  if (q.dimension() != 3 || k.dimension() != 3 || v.dimension() != 3)
    fail("attention_heads: q must be (B,T,C), k and v (B,S,C)");
  if (h <= 0 || q.shape()[2] % static_cast<size_t>(h) != 0) fail("attention_heads: C must be divisible by h");
  const size_t d_k = q.shape()[2] / static_cast<size_t>(h);
  // 1) scores = Q_h K_h^T on the per-head views   (B,H,T,S)
  Tensor scores = matmul_heads_qk(q, k, h);
  // 2) p = dropout(softmax(masked(scores / sqrt(D))))   (B,H,T,S)
  Tensor p = scale_mask_softmax(std::move(scores), d_k, mask, dropout, p_softmax_out, scale_scores, hidden);
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

// ---------------------------------------------------------------- MultiHeadedAttention
MultiHeadedAttention::MultiHeadedAttention(int64_t h_, int64_t d_model, double p) : h(h_), dropout(p) {
  if (h_ <= 0 || d_model <= 0 || d_model % h_ != 0) fail("MultiHeadedAttention: d_model % h must be 0");
  d_k = d_model / h_;
  // [deepcopy(nn.Linear(d_model, d_model)) for i in range(4)]: the comprehension builds a NEW
  // Linear on every iteration, so four independent draws, in order (the deepcopy copies each
  // fresh Linear once and changes nothing)
  for (int i = 0; i < 4; ++i) linears.emplace_back(d_model, d_model);
}

MultiHeadedAttention multi_head_attention(const Config& config) {
  const int64_t C = config.hidden_size, H = config.num_attention_heads;
  if (H <= 0 || C <= 0 || C % H != 0) fail("MultiHeadAttention: hidden_size % num_attention_heads must be 0");
  MultiHeadedAttention m;
  m.article = AttentionArticle::Article000;
  m.h = H, m.d_k = C / H;
  m.dropout = Dropout(0.0);  // article 000 has no dropout on the weights (and none is run)
  // nn.ModuleList([AttentionHead(C, D) for _ in range(H)]): head i draws its q, k, v in turn
  for (int64_t i = 0; i < H; ++i)
    for (int j = 0; j < 3; ++j) m.linears.emplace_back(C, m.d_k);
  m.linears.emplace_back(C, C);  // output_linear
  return m;
}

std::string MultiHeadedAttention::linear_name(size_t i) const {
  static const char* const k004[4] = {"wq", "wk", "wv", "dense"};
  static const char* const k000[3] = {"q", "k", "v"};
  if (article == AttentionArticle::Article004 && i < 4) return k004[i];
  if (article == AttentionArticle::Article000)
    return i + 1 == linears.size() ? "output_linear" : "heads." + std::to_string(i / 3) + "." + k000[i % 3];
  return "linears." + std::to_string(i);
}

float MultiHeadedAttention::hidden_score() const {
  return article == AttentionArticle::Article000 ? -INFINITY : static_cast<float>(-1e9);
}

Tensor MultiHeadedAttention::project(size_t which, const Tensor& x) const {
  if (article != AttentionArticle::Article000) return linears[which](x);
  // article 000: head i's own Linear(C, D), the H outputs side by side   H x (B,T,D) -> (B,T,C)
  std::vector<Tensor> outs;
  for (int64_t i = 0; i < h; ++i) outs.push_back(linears[size_t(3 * i) + which](x));
  return cat(outs, -1);
}

Tensor MultiHeadedAttention::project_backward(size_t which, const Tensor& x, const Tensor& dp,
                                              MultiHeadedAttention& grad) const {
  if (article != AttentionArticle::Article000) return linears[which].backward(x, dp, grad.linears[which]);
  // article 000: head i's D columns of dp through its own Linear, the H input gradients summed in order
  const size_t C = dp.shape().back(), rows = dp.size() / C, D = size_t(d_k);
  Tensor dx = zeros(shape_of(x));
  Shape shape = shape_of(dp);
  shape.back() = D;
  Tensor dh = Tensor::from_shape(shape);
  for (int64_t i = 0; i < h; ++i) {
    for (size_t r = 0; r < rows; ++r) std::copy_n(dp.data() + r * C + size_t(i) * D, D, dh.data() + r * D);
    const size_t l = size_t(3 * i) + which;
    dx += linears[l].backward(x, dh, grad.linears[l]);
  }
  return dx;
}

std::string attention_source() { return code_site_path(__FILE__); }

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
  TS_TRACE_SCOPE(article == AttentionArticle::Article004   ? "MutilHeadAttention"
                 : article == AttentionArticle::Article000 ? "MultiHeadAttention"
                                                           : "MultiHeadedAttention",
                 query);
  if (query.dimension() != 3 || key.dimension() != 3 || value.dimension() != 3)
    fail("MultiHeadedAttention: query, key, value must be (B,T,C), (B,S,C), (B,S,C)");
  // 0) mask.unsqueeze(1): the same mask for every head   (B,1,T,S)
  BTensor m4;
  if (mask) m4 = unsqueeze1(*mask);
  // 1) project: Q = linears[0](query), K = linears[1](key), V = linears[2](value)   (B,T|S,C)
  //    (article 000: every head's own q, k, v Linear, side by side: project())
  Tensor q = project(0, query);
  Tensor k, v;
  if (!cache || !cache->fixed || cache->len() == 0) k = project(1, key), v = project(2, value);
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
                             scale_scores, hidden_score());
  // 4) merge heads: x.transpose(1,2).contiguous().view(B,-1,h*d_k)   (B,T,C)
  Tensor merged = merge_heads(x);
  // 5) output projection linears[3] (article 000: output_linear)   (B,T,C)
  Tensor out = output_linear()(merged);
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
  const Tensor dmerged = output_linear().backward(saved.merged, dy, grad.linears.back());
  // 4) + 3) + 2) the heads' attention, read per head in place   dq (B,T,C), dk, dv (B,S,C)
  Tensor dq = zeros(shape_of(saved.q)), dk = zeros(shape_of(saved.k)), dv = zeros(shape_of(saved.v));
  attention_heads_backward(dmerged, saved.q, saved.k, saved.v, h, saved.p, attn, drop, dq, dk, dv, scale_scores);
  // 1) the three projections
  return {project_backward(0, saved.query, dq, grad), project_backward(1, saved.key_in(), dk, grad),
          project_backward(2, saved.value_in(), dv, grad)};
}

Tensor MultiHeadedAttention::self_backward(const Tensor& dy, MultiHeadedAttention& grad) const {
  const InputGrads g = backward(dy, grad);
  return g.dquery + g.dkey + g.dvalue;
}

ModuleRepr MultiHeadedAttention::repr() const {
  if (article == AttentionArticle::Article000) {  // MultiHeadAttention(heads: H x AttentionHead(q, k, v), output_linear)
    std::vector<ModuleRepr> heads;
    for (size_t i = 0; i + 3 < linears.size(); i += 3)
      heads.push_back({"AttentionHead", "", {{"q", linears[i].repr()}, {"k", linears[i + 1].repr()}, {"v", linears[i + 2].repr()}}});
    return {"MultiHeadAttention", "", {{"heads", module_list_repr(heads)}, {"output_linear", output_linear().repr()}}};
  }
  if (article == AttentionArticle::Article004) {  // the twin's MutilHeadAttention: four Dense, no dropout
    ModuleRepr r{"MutilHeadAttention", "", {}};
    for (size_t i = 0; i < linears.size(); ++i) r.children.push_back({linear_name(i), linears[i].repr()});
    return r;
  }
  std::vector<ModuleRepr> items;
  for (const Linear& l : linears) items.push_back(l.repr());
  return {"MultiHeadedAttention", "", {{"linears", module_list_repr(items)}, {"dropout", dropout.repr()}}};
}

}  // namespace ts
