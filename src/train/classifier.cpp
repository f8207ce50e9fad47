// train/classifier.cpp: see classifier.hpp. The forward is article 000's encoder, op by op
// (train/ops.hpp, train/encoder_ops.hpp); the backward calls their *_backward in reverse.
#include "train/classifier.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "base/code_site.hpp"
#include "train/encoder_ops.hpp"
#include "train/numbers.hpp"
#include "train/checkpoint.hpp"
#include "train/safetensors.hpp"
#include "train/wiring.hpp"

namespace ts::train {

int64_t cls_id() { return target_vocab().vocab_size; }
int64_t classifier_vocab() { return target_vocab().vocab_size + 1; }
std::string classifier_token(int64_t id) {
  if (id == cls_id()) return "[CLS]";
  return target_vocab().words[static_cast<size_t>(id)];
}

// ---------------------------------------------------------------- layout and init
static ClassifierLayout make_classifier_layout(const ClassifierConfig& c) {
  ClassifierLayout L;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    ParamSpec s;
    s.name = name, s.shape = shape, s.offset = L.total, s.numel = 1;
    for (int64_t d : shape) s.numel *= static_cast<size_t>(d);
    L.total += s.numel;
    L.specs.push_back(s);
    return s.offset;
  };
  auto lin = [&](const std::string& name, int64_t in, int64_t out) {
    ClassifierLayout::Lin l;
    l.w = add(name + ".weight", {out, in});
    l.b = add(name + ".bias", {out});
    return l;
  };
  auto norm = [&](const std::string& name, int64_t C) {
    ClassifierLayout::Norm n;
    n.w = add(name + ".weight", {C});
    n.b = add(name + ".bias", {C});
    return n;
  };
  const int64_t C = c.d_model, D = c.d_model / c.heads;
  L.tok = add("encoder.embeddings.token_embeddings.weight", {c.vocab, C});
  L.pos = add("encoder.embeddings.position_embeddings.weight", {c.max_len, C});
  L.emb_ln = norm("encoder.embeddings.layer_norm", C);
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = fmt::format("encoder.layers.{}.", l);
    ClassifierLayout::Layer y;
    y.ln1 = norm(p + "layer_norm_1", C);
    y.ln2 = norm(p + "layer_norm_2", C);
    for (int64_t h = 0; h < c.heads; ++h) {
      const std::string hp = p + fmt::format("attention.heads.{}.", h);
      y.q.push_back(lin(hp + "q", C, D));
      y.k.push_back(lin(hp + "k", C, D));
      y.v.push_back(lin(hp + "v", C, D));
    }
    y.out = lin(p + "attention.output_linear", C, C);
    y.ff1 = lin(p + "feed_forward.linear_1", C, c.d_ff);
    y.ff2 = lin(p + "feed_forward.linear_2", c.d_ff, C);
    L.layers.push_back(y);
  }
  L.head = lin("classifier", C, c.classes);
  return L;
}

Classifier init_classifier(const ClassifierConfig& cfg, uint64_t seed) {
  Classifier m;
  m.cfg = cfg;
  m.layout = make_classifier_layout(cfg);
  m.params.assign(m.layout.total, 0.0f);
  Rng rng(seed * 7919ull + 13);
  for (const ParamSpec& s : m.layout.specs) {
    float* p = m.params.data() + s.offset;
    const bool embedding = s.name.find("embeddings.weight") != std::string::npos && s.name.find("_norm") == std::string::npos;
    if (s.name.find("layer_norm") != std::string::npos) {
      std::fill_n(p, s.numel, s.name.size() > 7 && s.name.compare(s.name.size() - 7, 7, ".weight") == 0 ? 1.0f : 0.0f);
    } else if (embedding) {
      for (size_t i = 0; i < s.numel; ++i) {  // N(0, 1), Box-Muller
        const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
        p[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
      }
    } else {
      // a Linear's weight (out, in) and its bias: U(-1/sqrt(in), 1/sqrt(in)), in = the weight's columns
      const ParamSpec& w = s.shape.size() == 2 ? s : m.layout.specs[static_cast<size_t>(&s - m.layout.specs.data() - 1)];
      const double bound = 1.0 / std::sqrt(static_cast<double>(w.shape[1]));
      for (size_t i = 0; i < s.numel; ++i) p[i] = static_cast<float>((2.0 * rng.uniform() - 1.0) * bound);
    }
  }
  return m;
}

// the line below: make_cls_batch's own, for make_cls_batch_site()
static const CodeSite kBatchSite{__FILE__, __LINE__ + 1, "make_cls_batch"};
ClsBatch make_cls_batch(const std::vector<int64_t>& numbers) {
  ClsBatch b;
  b.B = static_cast<int64_t>(numbers.size());
  b.numbers = numbers;
  // [CLS] words: encode_target's <start> words <end>, with [CLS] for <start> and no <end>
  const EncodedRows e = encode_rows(numbers, [](int64_t n) {
    std::vector<int64_t> r = encode_target(n);
    r.front() = cls_id();
    r.pop_back();
    return r;
  });
  b.T = e.longest;
  b.ids.assign(static_cast<size_t>(b.B * b.T), kPad);
  for (size_t i = 0; i < e.rows.size(); ++i) std::copy(e.rows[i].begin(), e.rows[i].end(), b.ids.begin() + i * b.T);
  for (int64_t n : numbers) b.labels.push_back(n % 10);
  return b;
}

// ---------------------------------------------------------------- per-head Linears
// out[b,h,t,:] = x[b,t,:] W_h^T + b_h   x (N,C), W_h (D,C) -> out (B,H,T,D), head h only
static void head_linear_forward(float* out, const float* x, const float* W, const float* bias, int64_t B, int64_t T,
                                int64_t C, int64_t H, int64_t h, int64_t D, std::vector<float>& tmp) {
  tmp.resize(static_cast<size_t>(B * T * D));
  linear_forward(tmp.data(), x, W, bias, B * T, C, D);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      std::copy_n(tmp.data() + (b * T + t) * D, D, out + ((b * H + h) * T + t) * D);
}
// its backward: gather head h's gradient (N,D), then linear_backward
static void head_linear_backward(float* dx, float* dW, float* db, const float* dout, const float* x, const float* W,
                                 int64_t B, int64_t T, int64_t C, int64_t H, int64_t h, int64_t D,
                                 std::vector<float>& tmp) {
  tmp.resize(static_cast<size_t>(B * T * D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      std::copy_n(dout + ((b * H + h) * T + t) * D, D, tmp.data() + (b * T + t) * D);
  linear_backward(dx, dW, db, tmp.data(), x, W, B * T, C, D);
}

static void resize(std::vector<float>& v, int64_t n) { v.assign(static_cast<size_t>(n), 0.0f); }

// ---------------------------------------------------------------- the feed-forward's activation
// article 000's FeedForward: GELU (what the forward below runs between linear_1 and linear_2)
static void ffn_activation(float* y, const float* x, int64_t n) { gelu_forward(y, x, n); }

std::string classifier_activation() {
  // ask the activation itself: GELU(-1) = -0.1587, ReLU(-1) = 0, identity(-1) = -1
  const float x[2] = {-1.0f, 1.0f};
  float y[2] = {0, 0};
  ffn_activation(y, x, 2);
  if (std::fabs(y[0] + 0.158655f) < 1e-4f && std::fabs(y[1] - 0.841345f) < 1e-4f) return "GELU";
  if (y[0] == 0.0f && y[1] == 1.0f) return "ReLU";
  if (y[0] == -1.0f && y[1] == 1.0f) return "no activation";
  return fmt::format("f(x) with f(-1) = {:.4g}, f(1) = {:.4g}", y[0], y[1]);
}

// ---------------------------------------------------------------- the layer's wiring, measured
std::string classifier_block_wiring() {
  // one layer of C = 4, one head, F = 2C, on the one token [CLS]; a head K = C with W = I, so the
  // logits are the layer's output. Attention over one key returns v = W_v LN1(x): W_v =
  // output_linear = I makes it an identity, and linear_1 = [I; -I], linear_2 = [I, -I] make the
  // feed-forward one: act(h) - act(-h) = h. x is the embeddings' LayerNorm of a token row.
  ClassifierConfig c;
  c.vocab = cls_id() + 1, c.max_len = 1, c.layers = 1, c.d_model = 4, c.heads = 1, c.d_ff = 8, c.classes = 4;
  c.dropout = 0.0;
  Classifier m;
  m.cfg = c, m.layout = make_classifier_layout(c);
  const ClassifierLayout& L = m.layout;
  const ClassifierLayout::Layer& y = L.layers[0];
  const size_t C = 4, F = 8;
  const float e[4] = {1.0f, -1.0f, 2.0f, 0.0f}, g0[4] = {2.0f, 1.0f, 0.5f, 3.0f}, b0[4] = {1.0f, -0.5f, 0.25f, 0.5f},
              g1[4] = {1.0f, 2.0f, 0.5f, 1.5f}, g2[4] = {0.5f, 1.0f, 3.0f, 2.0f};
  std::vector<float>& P = m.params;
  P.assign(L.total, 0.0f);
  for (size_t i = 0; i < C; ++i) {
    P[L.tok + size_t(cls_id()) * C + i] = e[i];
    P[L.emb_ln.w + i] = g0[i], P[L.emb_ln.b + i] = b0[i];
    P[y.ln1.w + i] = g1[i], P[y.ln2.w + i] = g2[i];
    P[y.v[0].w + i * C + i] = 1.0f, P[y.out.w + i * C + i] = 1.0f;
    P[y.ff1.w + i * C + i] = 1.0f, P[y.ff1.w + (C + i) * C + i] = -1.0f;
    P[y.ff2.w + i * F + i] = 1.0f, P[y.ff2.w + i * F + C + i] = -1.0f;
    P[L.head.w + i * C + i] = 1.0f;
  }
  ClsBatch b;
  b.B = 1, b.T = 1, b.numbers = {0}, b.ids = {cls_id()}, b.labels = {0};
  ClsWorkspace w;
  Rng rng(0);
  classifier_forward(m, w, b, false, rng);
  // the torch LayerNorm, as classifier_forward calls it (a changed eps moves the output by less than tol)
  auto norm = [&](size_t weight, size_t bias, float eps) {
    return [&, weight, bias, eps](const std::vector<float>& v) {
      std::vector<float> out(C), mean(1), rstd(1);
      layernorm_forward(out.data(), mean.data(), rstd.data(), v.data(), P.data() + weight, P.data() + bias,
                        int64_t(1), int64_t(C), eps, Variance::Biased);
      return out;
    };
  };
  const std::vector<float> x = norm(L.emb_ln.w, L.emb_ln.b, 1e-12f)(std::vector<float>(e, e + C));
  return block_wiring(x, w.logits, norm(y.ln1.w, y.ln1.b, 1e-5f), norm(y.ln2.w, y.ln2.b, 1e-5f),
                      [](const std::vector<float>& v) { return v; }, 1e-3);
}

// ---------------------------------------------------------------- forward
void classifier_forward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b, bool training, Rng& rng) {
  TS_CODE_SITE();
  const ClassifierConfig& c = m.cfg;
  const ClassifierLayout& L = m.layout;
  const float* P = m.params.data();
  const int64_t B = b.B, T = b.T, N = B * T, C = c.d_model, H = c.heads, D = C / H, F = c.d_ff;
  const double p = training ? c.dropout : 0.0;
  w.B = B, w.T = T;
  // the padding mask, 1 = hide: every query row hides the padded keys of its sentence   (B,T,T)
  resize(w.mask, B * T * T);
  for (int64_t i = 0; i < B; ++i)
    for (int64_t q = 0; q < T; ++q)
      for (int64_t s = 0; s < T; ++s) w.mask[size_t((i * T + q) * T + s)] = b.ids[size_t(i * T + s)] == kPad;
  // 1) embeddings: token + learned position, LayerNorm (eps 1e-12), dropout   (N,C)
  for (auto* v : {&w.emb, &w.emb_ln, &w.emb_keep, &w.x0}) resize(*v, N * C);
  resize(w.emb_mean, N), resize(w.emb_rstd, N);
  embedding_forward(w.emb.data(), b.ids.data(), P + L.tok, P + L.pos, N, T, C, 1.0f);
  layernorm_forward(w.emb_ln.data(), w.emb_mean.data(), w.emb_rstd.data(), w.emb.data(), P + L.emb_ln.w,
                    P + L.emb_ln.b, N, C, 1e-12f, Variance::Biased);
  dropout_forward(w.x0.data(), w.emb_keep.data(), w.emb_ln.data(), N * C, p, training, rng);
  // 2) the pre-LN layers: x = x + attn(LN1(x));  x = x + dropout(ffn(LN2(x)))
  w.layers.resize(static_cast<size_t>(c.layers));
  std::vector<float> tmp;
  const float* x = w.x0.data();
  for (int64_t l = 0; l < c.layers; ++l) {
    ClsWorkspace::Layer& a = w.layers[size_t(l)];
    const ClassifierLayout::Layer& y = L.layers[size_t(l)];
    a.x.assign(x, x + N * C);
    for (auto* v : {&a.ln1, &a.ctx, &a.attn, &a.mid, &a.ln2, &a.f, &a.fkeep, &a.fd, &a.y}) resize(*v, N * C);
    for (auto* v : {&a.mean1, &a.rstd1, &a.mean2, &a.rstd2}) resize(*v, N);
    for (auto* v : {&a.qh, &a.kh, &a.vh, &a.ctxh}) resize(*v, N * C);
    resize(a.p, B * H * T * T), resize(a.keep, B * H * T * T);
    for (auto* v : {&a.h, &a.g}) resize(*v, N * F);
    layernorm_forward(a.ln1.data(), a.mean1.data(), a.rstd1.data(), a.x.data(), P + y.ln1.w, P + y.ln1.b, N, C,
                      1e-5f, Variance::Biased);
    for (int64_t h = 0; h < H; ++h) {  // article 000's AttentionHead: its own q, k, v Linears C -> D
      head_linear_forward(a.qh.data(), a.ln1.data(), P + y.q[size_t(h)].w, P + y.q[size_t(h)].b, B, T, C, H, h, D, tmp);
      head_linear_forward(a.kh.data(), a.ln1.data(), P + y.k[size_t(h)].w, P + y.k[size_t(h)].b, B, T, C, H, h, D, tmp);
      head_linear_forward(a.vh.data(), a.ln1.data(), P + y.v[size_t(h)].w, P + y.v[size_t(h)].b, B, T, C, H, h, D, tmp);
    }
    attention_forward(a.ctxh.data(), a.p.data(), a.keep.data(), a.qh.data(), a.kh.data(), a.vh.data(), w.mask.data(),
                      B, H, T, T, D, 1.0f / std::sqrt(float(D)), 0.0, false, rng);
    merge_heads(a.ctx.data(), a.ctxh.data(), B, T, H, D);  // concatenate the heads
    linear_forward(a.attn.data(), a.ctx.data(), P + y.out.w, P + y.out.b, N, C, C);
    residual_forward(a.mid.data(), a.x.data(), a.attn.data(), N * C);
    layernorm_forward(a.ln2.data(), a.mean2.data(), a.rstd2.data(), a.mid.data(), P + y.ln2.w, P + y.ln2.b, N, C,
                      1e-5f, Variance::Biased);
    linear_forward(a.h.data(), a.ln2.data(), P + y.ff1.w, P + y.ff1.b, N, C, F);
    ffn_activation(a.g.data(), a.h.data(), N * F);
    linear_forward(a.f.data(), a.g.data(), P + y.ff2.w, P + y.ff2.b, N, F, C);
    dropout_forward(a.fd.data(), a.fkeep.data(), a.f.data(), N * C, p, training, rng);
    residual_forward(a.y.data(), a.mid.data(), a.fd.data(), N * C);
    x = a.y.data();
  }
  // 3) one vector per sentence, the classifier
  classifier_head_forward(m, w, b, x, training, rng);
}

// the line below + 1: classifier_head_forward's own, for classifier_head_site()
static const CodeSite kHeadSite{__FILE__, __LINE__ + 1, "classifier_head_forward"};
void classifier_head_forward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b, const float* x, bool training,
                             Rng& rng) {
  const ClassifierConfig& c = m.cfg;
  const float* P = m.params.data();
  const int64_t B = b.B, T = b.T, C = c.d_model;
  const double p = training ? c.dropout : 0.0;
  // one vector per sentence ([CLS] or mean), dropout, the classifier   (B,T,C) -> (B,C) -> (B,K)
  for (auto* v : {&w.pooled, &w.pool_keep, &w.pooled_d}) resize(*v, B * C);
  resize(w.logits, B * c.classes);
  pool_forward(w.pooled.data(), x, b.ids.data(), B, T, C, c.mean_pool, kPad);
  dropout_forward(w.pooled_d.data(), w.pool_keep.data(), w.pooled.data(), B * C, p, training, rng);
  linear_forward(w.logits.data(), w.pooled_d.data(), P + m.layout.head.w, P + m.layout.head.b, B, C, c.classes);
}

std::string make_cls_batch_site() {
  return code_site_path(kBatchSite.file) + ":" + std::to_string(kBatchSite.line) + " " + kBatchSite.func;
}

std::string classifier_head_site() {
  return code_site_path(kHeadSite.file) + ":" + std::to_string(kHeadSite.line) + " " + kHeadSite.func;
}

float classifier_loss(ClsWorkspace& w, const ClsBatch& b, int64_t K) {
  resize(w.probs, b.B * K), resize(w.loss, b.B);
  cross_entropy_forward(w.loss.data(), w.probs.data(), w.logits.data(), b.labels.data(), b.B, K, int64_t(-1), 0.0f);
  double sum = 0;
  for (float v : w.loss) sum += v;
  return static_cast<float>(sum / double(b.B));
}

// ---------------------------------------------------------------- backward
void classifier_backward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b) {
  TS_CODE_SITE();
  const ClassifierConfig& c = m.cfg;
  const ClassifierLayout& L = m.layout;
  const float* P = m.params.data();
  float* G = w.grads.data();
  const int64_t B = b.B, T = b.T, N = B * T, C = c.d_model, H = c.heads, D = C / H, F = c.d_ff, K = c.classes;
  // 3) the head: mean over B sentences, so dloss = 1/B each
  std::vector<float> dloss(size_t(B), 1.0f / float(B)), dlogits(size_t(B * K), 0.0f), dpd(size_t(B * C), 0.0f),
      dpooled(size_t(B * C), 0.0f);
  cross_entropy_backward(dlogits.data(), w.probs.data(), b.labels.data(), dloss.data(), B, K, int64_t(-1), 0.0f);
  linear_backward(dpd.data(), G + L.head.w, G + L.head.b, dlogits.data(), w.pooled_d.data(), P + L.head.w, B, C, K);
  dropout_backward(dpooled.data(), dpd.data(), w.pool_keep.data(), B * C);
  std::vector<float> dx(size_t(N * C), 0.0f);  // gradient of the current layer's output
  pool_backward(dx.data(), dpooled.data(), b.ids.data(), B, T, C, c.mean_pool, kPad);
  // 2) the layers, last first
  std::vector<float> tmp, dmid, dfd, df, dg, dh, dln2, dattn, dctx, dctxh, dq, dk, dv, dln1, dxin;
  for (int64_t l = c.layers - 1; l >= 0; --l) {
    const ClsWorkspace::Layer& a = w.layers[size_t(l)];
    const ClassifierLayout::Layer& y = L.layers[size_t(l)];
    for (auto* v : {&dmid, &dfd, &df, &dln2, &dattn, &dctx, &dctxh, &dq, &dk, &dv, &dln1, &dxin}) resize(*v, N * C);
    for (auto* v : {&dg, &dh}) resize(*v, N * F);
    // y = mid + fd
    residual_backward(dmid.data(), dfd.data(), dx.data(), N * C);
    dropout_backward(df.data(), dfd.data(), a.fkeep.data(), N * C);
    linear_backward(dg.data(), G + y.ff2.w, G + y.ff2.b, df.data(), a.g.data(), P + y.ff2.w, N, F, C);
    gelu_backward(dh.data(), dg.data(), a.h.data(), N * F);
    linear_backward(dln2.data(), G + y.ff1.w, G + y.ff1.b, dh.data(), a.ln2.data(), P + y.ff1.w, N, C, F);
    layernorm_backward(dmid.data(), G + y.ln2.w, G + y.ln2.b, dln2.data(), a.mid.data(), a.mean2.data(),
                       a.rstd2.data(), P + y.ln2.w, N, C, Variance::Biased);
    // mid = x + attn
    residual_backward(dxin.data(), dattn.data(), dmid.data(), N * C);
    linear_backward(dctx.data(), G + y.out.w, G + y.out.b, dattn.data(), a.ctx.data(), P + y.out.w, N, C, C);
    merge_heads_backward(dctxh.data(), dctx.data(), B, T, H, D);
    attention_backward(dq.data(), dk.data(), dv.data(), dctxh.data(), a.qh.data(), a.kh.data(), a.vh.data(),
                       a.p.data(), a.keep.data(), B, H, T, T, D, 1.0f / std::sqrt(float(D)));
    for (int64_t h = 0; h < H; ++h) {
      head_linear_backward(dln1.data(), G + y.q[size_t(h)].w, G + y.q[size_t(h)].b, dq.data(), a.ln1.data(),
                           P + y.q[size_t(h)].w, B, T, C, H, h, D, tmp);
      head_linear_backward(dln1.data(), G + y.k[size_t(h)].w, G + y.k[size_t(h)].b, dk.data(), a.ln1.data(),
                           P + y.k[size_t(h)].w, B, T, C, H, h, D, tmp);
      head_linear_backward(dln1.data(), G + y.v[size_t(h)].w, G + y.v[size_t(h)].b, dv.data(), a.ln1.data(),
                           P + y.v[size_t(h)].w, B, T, C, H, h, D, tmp);
    }
    layernorm_backward(dxin.data(), G + y.ln1.w, G + y.ln1.b, dln1.data(), a.x.data(), a.mean1.data(),
                       a.rstd1.data(), P + y.ln1.w, N, C, Variance::Biased);
    dx.swap(dxin);
  }
  // 1) embeddings
  std::vector<float> dln(size_t(N * C), 0.0f), demb(size_t(N * C), 0.0f);
  dropout_backward(dln.data(), dx.data(), w.emb_keep.data(), N * C);
  layernorm_backward(demb.data(), G + L.emb_ln.w, G + L.emb_ln.b, dln.data(), w.emb.data(), w.emb_mean.data(),
                     w.emb_rstd.data(), P + L.emb_ln.w, N, C, Variance::Biased);
  embedding_backward(G + L.tok, demb.data(), b.ids.data(), N, C, 1.0f);
  positions_backward(G + L.pos, demb.data(), B, T, C);
}

std::vector<int64_t> predictions(const ClsWorkspace& w, int64_t K) {
  std::vector<int64_t> out;
  for (size_t i = 0; i + size_t(K) <= w.logits.size(); i += size_t(K))
    out.push_back(std::max_element(w.logits.begin() + long(i), w.logits.begin() + long(i) + K) - w.logits.begin() -
                  long(i));
  return out;
}

// ---------------------------------------------------------------- checkpoints
// The folder, its two files, the lock and the swap are ch11's (train/checkpoint); the keys are
// the twin's, the settings the classifier's.
void save_classifier(const std::string& dir, const Classifier& m, const Adam& adam) {
  CheckpointFiles f = checkpoint_files(m.layout.specs, m.params, adam);
  const ClassifierConfig& c = m.cfg;
  f.wmeta = {{"format", "pt"}, {"layers", std::to_string(c.layers)}, {"d_model", std::to_string(c.d_model)},
             {"heads", std::to_string(c.heads)}, {"d_ff", std::to_string(c.d_ff)},
             {"classes", std::to_string(c.classes)}, {"vocab", std::to_string(c.vocab)},
             {"max_len", std::to_string(c.max_len)}, {"pool", c.mean_pool ? "mean" : "cls"}};
  save_checkpoint_folder(dir, "classifier", adam.step, std::move(f));
}

ClassifierConfig classifier_checkpoint_config(const std::string& dir, const ClassifierConfig& asked,
                                              const std::function<bool(const std::string&)>& given) {
  const std::string path = dir + "/model.safetensors";
  const StMeta meta = checkpoint_metadata(dir, "classifier");
  ClassifierConfig c = asked;
  const struct {
    const char* key;
    const char* flag;
    int64_t ClassifierConfig::*field;
  } sizes[] = {{"layers", "--layers", &ClassifierConfig::layers},
               {"d_model", "--d-model", &ClassifierConfig::d_model},
               {"heads", "--heads", &ClassifierConfig::heads},
               {"d_ff", "--d-ff", &ClassifierConfig::d_ff}};
  for (const auto& s : sizes) {
    const int64_t saved = checkpoint_int(meta, s.key, 1, 1000000, path);
    if (given(s.flag) && asked.*s.field != saved)
      throw FileError(N_("{flag} {asked} disagrees with the checkpoint, saved with {flag} {saved}: drop {flag} to use the "
                         "checkpoint's"),
                      fmt::arg("flag", s.flag), fmt::arg("asked", asked.*s.field), fmt::arg("saved", saved));
    c.*s.field = saved;
  }
  if (c.d_model % c.heads != 0)
    throw FileError(N_("{path}: its heads {H} do not divide its d_model {C}: it was not written by --save"),
                    fmt::arg("path", path), fmt::arg("H", c.heads), fmt::arg("C", c.d_model));
  // the pooling: the checkpoint's, unless --pool asks for the other (an experiment, not an error)
  const auto pool = meta.find("pool");
  if (!given("--pool") && pool != meta.end()) c.mean_pool = pool->second == "mean";
  return c;
}

void load_classifier(const std::string& dir, Classifier& m, Adam& adam) {
  CheckpointFiles f;
  const int64_t step = read_checkpoint_folder(dir, "classifier", m.params.size() * sizeof(float), f);
  const std::string path = dir + "/model.safetensors";
  const ClassifierConfig& c = m.cfg;
  const struct {
    const char* key;
    const char* flag;
    int64_t asked;
  } sizes[] = {{"layers", "--layers", c.layers}, {"d_model", "--d-model", c.d_model}, {"heads", "--heads", c.heads},
               {"d_ff", "--d-ff", c.d_ff},       {"classes", "", c.classes},       {"vocab", "", c.vocab},
               {"max_len", "", c.max_len}};
  for (const auto& s : sizes) {
    const int64_t saved = checkpoint_int(f.wmeta, s.key, 1, 1000000, path);
    if (saved == s.asked) continue;
    if (*s.flag == 0)
      throw FileError(N_("{path} was saved with {key} {saved}, this course's classifier has {asked}: it was saved for "
                         "another task; train and save it again"),
                      fmt::arg("path", path), fmt::arg("key", s.key), fmt::arg("saved", saved), fmt::arg("asked", s.asked));
    throw FileError(N_("{path} was saved with {flag} {saved}, this run builds {asked}: give {flag} {saved}"),
                    fmt::arg("path", path), fmt::arg("flag", s.flag), fmt::arg("saved", saved), fmt::arg("asked", s.asked));
  }
  CheckpointParams p = checkpoint_params(f, dir, m.layout.specs, m.params.size(), step);
  // everything read and checked: only now touch the model
  m.params = std::move(p.params);
  adam.step = step, adam.exp_avg = std::move(p.exp_avg), adam.exp_avg_sq = std::move(p.exp_avg_sq);
}

}  // namespace ts::train
