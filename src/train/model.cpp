// train/model.cpp: forward with caches, and the backward pass walked by hand in reverse.
#include "train/model.hpp"
#include "base/code_site.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "exact/rng.hpp"
#include "transformer/annotated.hpp"

namespace ts::train {

std::string model_source() { return code_site_path(__FILE__); }

// ================================================================ layout
Layout make_layout(const ModelConfig& cfg) {
  Layout L;
  const int64_t C = cfg.d_model, Fd = cfg.d_ff;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    ParamSpec p{name, std::move(shape), L.total, 1};
    for (int64_t d : p.shape) p.numel *= static_cast<size_t>(d);
    L.total += p.numel;
    L.specs.push_back(p);
    return p.offset;
  };
  auto attn = [&](const std::string& pre) {
    Layout::Attn a{};
    for (int i = 0; i < 4; ++i) {
      a.w[i] = add(pre + ".linears." + std::to_string(i) + ".weight", {C, C});
      a.b[i] = add(pre + ".linears." + std::to_string(i) + ".bias", {C});
    }
    return a;
  };
  auto ffn = [&](const std::string& pre) {
    Layout::Ffn f{};
    f.w1 = add(pre + ".w_1.weight", {Fd, C});
    f.b1 = add(pre + ".w_1.bias", {Fd});
    f.w2 = add(pre + ".w_2.weight", {C, Fd});
    f.b2 = add(pre + ".w_2.bias", {C});
    return f;
  };
  auto norm = [&](const std::string& pre) { return Layout::Norm{add(pre + ".a_2", {C}), add(pre + ".b_2", {C})}; };
  // article 002's Transformer.parameters(): encoder, decoder, src_embed, tgt_embed, generator
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    Layout::Enc e{};
    e.self_attn = attn(p + ".self_attn");
    e.ff = ffn(p + ".feed_forward");
    for (int s = 0; s < 2; ++s) e.norm[s] = norm(p + ".sublayer." + std::to_string(s) + ".norm");
    L.enc.push_back(e);
  }
  L.enc_norm = norm("encoder.norm");
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    Layout::Dec d{};
    d.self_attn = attn(p + ".self_attn");
    d.src_attn = attn(p + ".src_attn");
    d.ff = ffn(p + ".feed_forward");
    for (int s = 0; s < 3; ++s) d.norm[s] = norm(p + ".sublayer." + std::to_string(s) + ".norm");
    L.dec.push_back(d);
  }
  L.dec_norm = norm("decoder.norm");
  L.src_lut = add("src_embed.0.lut.weight", {cfg.src_vocab, C});
  L.tgt_lut = add("tgt_embed.0.lut.weight", {cfg.tgt_vocab, C});
  L.proj_w = add("generator.proj.weight", {cfg.tgt_vocab, C});
  L.proj_b = add("generator.proj.bias", {cfg.tgt_vocab});
  return L;
}

Model<float> init_model(const ModelConfig& cfg, uint64_t seed) {
  Model<float> m;
  m.cfg = cfg;
  m.layout = make_layout(cfg);
  m.params.assign(m.layout.total, 0.0f);
  // ch10's create_model draws exactly what torch.manual_seed(seed) + article 002's code draws
  ts::manual_seed(seed);
  EncoderDecoder ref = create_model(cfg.src_vocab, cfg.tgt_vocab, cfg.layers, cfg.d_model, cfg.d_ff, cfg.heads,
                                    cfg.dropout);
  const auto named = ref.named_parameters();
  if (named.size() != m.layout.specs.size()) throw std::logic_error("init_model: parameter count differs");
  for (size_t i = 0; i < named.size(); ++i) {
    const ParamSpec& s = m.layout.specs[i];
    if (named[i].first != s.name || named[i].second->size() != s.numel)
      throw std::logic_error("init_model: parameter " + s.name + " differs from create_model's " + named[i].first);
    std::copy_n(named[i].second->data(), s.numel, m.params.begin() + static_cast<std::ptrdiff_t>(s.offset));
  }
  // the positional table: article 002's PositionalEncoding buffer (torch's float bits)
  const size_t C = static_cast<size_t>(cfg.d_model);
  m.pe.assign(ref.src_embed.pos.pe.data(), ref.src_embed.pos.pe.data() + static_cast<size_t>(cfg.max_len) * C);
  return m;
}

Model<double> to_double(const Model<float>& m) {
  Model<double> d;
  d.cfg = m.cfg;
  d.layout = m.layout;
  d.params.assign(m.params.begin(), m.params.end());
  d.pe.assign(m.pe.begin(), m.pe.end());
  return d;
}

// ================================================================ helpers
template <class F>
static F* sized(std::vector<F>& v, int64_t n) {
  v.resize(static_cast<size_t>(n));
  return v.data();
}
template <class F>
static F* zeroed(std::vector<F>& v, int64_t n) {
  v.assign(static_cast<size_t>(n), F(0));
  return v.data();
}

template <class F>
struct Dims {
  int64_t B, S, T, C, H, D, Fd, V;
  F scale;
  bool relu;  // the feed-forward's activation (ModelConfig::relu)
};

// ================================================================ multi-head attention
// 1) project q, k, v  2) split heads  3) attend  4) merge heads  5) output projection
// xq (B,Tq,C), xkv (B,Tk,C), mask (B,Tq,Tk) -> c.out (B,Tq,C)
template <class F>
static void mha_forward(AttnCache<F>& c, const Layout::Attn& L, const F* P, const F* xq, const F* xkv,
                        const F* mask, int64_t B, int64_t Tq, int64_t Tk, const Dims<F>& d, double p_drop,
                        bool training, Rng& rng) {
  const int64_t C = d.C, H = d.H, D = d.D;
  linear_forward(sized(c.q, B * Tq * C), xq, P + L.w[0], P + L.b[0], B * Tq, C, C);
  linear_forward(sized(c.k, B * Tk * C), xkv, P + L.w[1], P + L.b[1], B * Tk, C, C);
  linear_forward(sized(c.v, B * Tk * C), xkv, P + L.w[2], P + L.b[2], B * Tk, C, C);
  split_heads(sized(c.qh, B * Tq * C), c.q.data(), B, Tq, H, D);
  split_heads(sized(c.kh, B * Tk * C), c.k.data(), B, Tk, H, D);
  split_heads(sized(c.vh, B * Tk * C), c.v.data(), B, Tk, H, D);
  attention_forward(sized(c.ctxh, B * Tq * C), sized(c.p, B * H * Tq * Tk), sized(c.keep, B * H * Tq * Tk),
                    c.qh.data(), c.kh.data(), c.vh.data(), mask, B, H, Tq, Tk, D, d.scale, p_drop, training, rng);
  merge_heads(sized(c.ctx, B * Tq * C), c.ctxh.data(), B, Tq, H, D);
  linear_forward(sized(c.out, B * Tq * C), c.ctx.data(), P + L.w[3], P + L.b[3], B * Tq, C, C);
}

// dout (B,Tq,C) -> dxq += (B,Tq,C), dxkv += (B,Tk,C) (the same buffer for self-attention)
template <class F>
static void mha_backward(AttnCache<F>& c, const Layout::Attn& L, const F* P, F* G, const F* dout, const F* xq,
                         const F* xkv, F* dxq, F* dxkv, int64_t B, int64_t Tq, int64_t Tk, const Dims<F>& d,
                         std::vector<F>* tmp) {
  const int64_t C = d.C, H = d.H, D = d.D;
  // 5) output projection
  F* dctx = zeroed(tmp[0], B * Tq * C);
  linear_backward(dctx, G + L.w[3], G + L.b[3], dout, c.ctx.data(), P + L.w[3], B * Tq, C, C);
  // 4) merge heads
  F* dctxh = zeroed(tmp[1], B * Tq * C);
  merge_heads_backward(dctxh, dctx, B, Tq, H, D);
  // 3) attention
  F* dqh = zeroed(tmp[2], B * Tq * C);
  F* dkh = zeroed(tmp[3], B * Tk * C);
  F* dvh = zeroed(tmp[4], B * Tk * C);
  attention_backward(dqh, dkh, dvh, dctxh, c.qh.data(), c.kh.data(), c.vh.data(), c.p.data(), c.keep.data(), B, H,
                     Tq, Tk, D, d.scale);
  // 2) split heads (tmp[0] is free again)
  F* dq = zeroed(tmp[0], B * Tq * C);
  F* dk = zeroed(tmp[1], B * Tk * C);
  F* dv = zeroed(tmp[5], B * Tk * C);
  split_heads_backward(dq, dqh, B, Tq, H, D);
  split_heads_backward(dk, dkh, B, Tk, H, D);
  split_heads_backward(dv, dvh, B, Tk, H, D);
  // 1) projections
  linear_backward(dxq, G + L.w[0], G + L.b[0], dq, xq, P + L.w[0], B * Tq, C, C);
  linear_backward(dxkv, G + L.w[1], G + L.b[1], dk, xkv, P + L.w[1], B * Tk, C, C);
  linear_backward(dxkv, G + L.w[2], G + L.b[2], dv, xkv, P + L.w[2], B * Tk, C, C);
}

// ================================================================ feed-forward
// out = w_2(dropout(relu(w_1(x))))   x (N,C) -> (N,C)   (relu off: w_2(dropout(w_1(x))))
template <class F>
static void ffn_forward(FfnCache<F>& c, const Layout::Ffn& L, const F* P, const F* x, int64_t N, const Dims<F>& d,
                        double p_drop, bool training, Rng& rng) {
  const int64_t C = d.C, Fd = d.Fd;
  linear_forward(sized(c.h, N * Fd), x, P + L.w1, P + L.b1, N, C, Fd);
  if (d.relu)
    relu_forward(sized(c.a, N * Fd), c.h.data(), N * Fd);
  else
    c.a = c.h;
  dropout_forward(sized(c.ad, N * Fd), sized(c.keep, N * Fd), c.a.data(), N * Fd, p_drop, training, rng);
  linear_forward(sized(c.out, N * C), c.ad.data(), P + L.w2, P + L.b2, N, Fd, C);
}

template <class F>
static void ffn_backward(FfnCache<F>& c, const Layout::Ffn& L, const F* P, F* G, const F* dout, const F* x, F* dx,
                         int64_t N, const Dims<F>& d, std::vector<F>* tmp) {
  const int64_t C = d.C, Fd = d.Fd;
  F* dad = zeroed(tmp[0], N * Fd);
  linear_backward(dad, G + L.w2, G + L.b2, dout, c.ad.data(), P + L.w2, N, Fd, C);
  F* da = zeroed(tmp[1], N * Fd);
  dropout_backward(da, dad, c.keep.data(), N * Fd);
  F* dh = zeroed(tmp[2], N * Fd);
  if (d.relu)
    relu_backward(dh, da, c.h.data(), N * Fd);
  else
    for (int64_t i = 0; i < N * Fd; ++i) dh[i] += da[i];
  linear_backward(dx, G + L.w1, G + L.b1, dh, x, P + L.w1, N, C, Fd);
}

// ================================================================ residual sublayer
// pre-LN: y = x + dropout(f(LN(x)));  post-LN: y = LN(x + dropout(f(x)))      x (N,C) -> y (N,C)
// f(in) runs the block on `in` and returns its output (N,C).
template <class F, class Fn>
static void sublayer_forward(SublayerCache<F>& s, const Layout::Norm& L, const F* P, const F* x, int64_t N,
                             const Dims<F>& d, bool pre_ln, double p_drop, bool training, Rng& rng, Fn f) {
  const int64_t n = N * d.C;
  s.x.assign(x, x + n);
  if (pre_ln) {
    layernorm_forward(sized(s.ln.y, n), sized(s.ln.mean, N), sized(s.ln.rstd, N), s.x.data(), P + L.a, P + L.b, N,
                      d.C, F(1e-6));
    const F* out = f(s.ln.y.data());
    dropout_forward(sized(s.fd, n), sized(s.keep, n), out, n, p_drop, training, rng);
    residual_forward(sized(s.y, n), s.x.data(), s.fd.data(), n);
  } else {
    const F* out = f(s.x.data());
    dropout_forward(sized(s.fd, n), sized(s.keep, n), out, n, p_drop, training, rng);
    residual_forward(sized(s.sum, n), s.x.data(), s.fd.data(), n);
    layernorm_forward(sized(s.y, n), sized(s.ln.mean, N), sized(s.ln.rstd, N), s.sum.data(), P + L.a, P + L.b, N,
                      d.C, F(1e-6));
  }
}

// dy (N,C) -> dx += (N,C). fb(dout, din) runs the block's backward: given d(f's output) it
// adds d(f's input) into din. t[0..2]: scratch buffers.
template <class F, class Fn>
static void sublayer_backward(SublayerCache<F>& s, const Layout::Norm& L, const F* P, F* G, const F* dy, F* dx,
                              int64_t N, const Dims<F>& d, bool pre_ln, std::vector<F>* t, Fn fb) {
  const int64_t n = N * d.C;
  F* dfd = zeroed(t[0], n);
  F* dout = zeroed(t[1], n);
  if (pre_ln) {
    // y = x + fd: dx += dy, dfd += dy; fd = dropout(out)
    residual_backward(dx, dfd, dy, n);
    dropout_backward(dout, dfd, s.keep.data(), n);
    // f ran on LN(x): its input gradient goes through the LayerNorm backward into dx
    F* dln = zeroed(t[2], n);
    fb(dout, dln);
    layernorm_backward(dx, G + L.a, G + L.b, dln, s.x.data(), s.ln.mean.data(), s.ln.rstd.data(), P + L.a, N, d.C);
  } else {
    // y = LN(sum): dsum = LN backward; sum = x + fd: dx += dsum, dfd += dsum
    F* dsum = zeroed(t[2], n);
    layernorm_backward(dsum, G + L.a, G + L.b, dy, s.sum.data(), s.ln.mean.data(), s.ln.rstd.data(), P + L.a, N,
                       d.C);
    residual_backward(dx, dfd, dsum, n);
    dropout_backward(dout, dfd, s.keep.data(), n);
    fb(dout, dx);  // f ran on x itself
  }
}

// ================================================================ forward
template <class F>
F forward(const Model<F>& m, Workspace<F>& w, const Batch& b, bool training, Rng& rng) {
  TS_CODE_SITE();
  const ModelConfig& cfg = m.cfg;
  const Layout& L = m.layout;
  const F* P = m.params.data();
  const int64_t B = b.B, S = b.S, T = b.T, C = cfg.d_model, H = cfg.heads, V = cfg.tgt_vocab;
  if (S > cfg.max_len || T > cfg.max_len) throw std::invalid_argument("forward: sequence longer than max_len");
  const Dims<F> d{B, S, T, C, H, C / H, cfg.d_ff, V,
                  cfg.scale_scores ? F(1) / std::sqrt(F(C / H)) : F(1), cfg.relu};
  const double p = cfg.dropout;
  w.B = B, w.S = S, w.T = T;
  w.enc.resize(static_cast<size_t>(cfg.layers));
  w.dec.resize(static_cast<size_t>(cfg.layers));
  // create_mask(inputs, tar_inp): (B,S,S), (B,T,T), (B,T,S), 1 = hide
  w.masks = create_mask<F>(b.inputs, b.tar_inp, B, S, T, cfg.look_ahead);
  const F emb_scale = std::sqrt(F(C));

  // ---- encoder: x = dropout(lut(src) * sqrt(C) + pe); N layers; memory = LN(x)
  embedding_forward(sized(w.src_emb, B * S * C), b.inputs.data(), P + L.src_lut, m.pe.data(), B * S, S, C, emb_scale);
  dropout_forward(sized(w.src_x, B * S * C), sized(w.src_keep, B * S * C), w.src_emb.data(), B * S * C, p, training,
                  rng);
  const F* x = w.src_x.data();
  for (int64_t l = 0; l < cfg.layers; ++l) {
    auto& c = w.enc[static_cast<size_t>(l)];
    const auto& E = L.enc[static_cast<size_t>(l)];
    sublayer_forward(c.s[0], E.norm[0], P, x, B * S, d, cfg.pre_ln, p, training, rng, [&](const F* in) {
      mha_forward(c.attn, E.self_attn, P, in, in, w.masks.enc.data(), B, S, S, d, p, training, rng);
      return c.attn.out.data();
    });
    sublayer_forward(c.s[1], E.norm[1], P, c.s[0].y.data(), B * S, d, cfg.pre_ln, p, training, rng,
                     [&](const F* in) {
                       ffn_forward(c.ffn, E.ff, P, in, B * S, d, p, training, rng);
                       return c.ffn.out.data();
                     });
    x = c.s[1].y.data();
  }
  layernorm_forward(sized(w.enc_norm.y, B * S * C), sized(w.enc_norm.mean, B * S), sized(w.enc_norm.rstd, B * S), x,
                    P + L.enc_norm.a, P + L.enc_norm.b, B * S, C, F(1e-6));
  const F* memory = w.enc_norm.y.data();

  // ---- decoder: y = dropout(lut(tar_inp) * sqrt(C) + pe); N layers; LN
  embedding_forward(sized(w.tgt_emb, B * T * C), b.tar_inp.data(), P + L.tgt_lut, m.pe.data(), B * T, T, C, emb_scale);
  dropout_forward(sized(w.tgt_x, B * T * C), sized(w.tgt_keep, B * T * C), w.tgt_emb.data(), B * T * C, p, training,
                  rng);
  const F* y = w.tgt_x.data();
  for (int64_t l = 0; l < cfg.layers; ++l) {
    auto& c = w.dec[static_cast<size_t>(l)];
    const auto& Dl = L.dec[static_cast<size_t>(l)];
    // masked self-attention (combined mask)
    sublayer_forward(c.s[0], Dl.norm[0], P, y, B * T, d, cfg.pre_ln, p, training, rng, [&](const F* in) {
      mha_forward(c.self_attn, Dl.self_attn, P, in, in, w.masks.dec_self.data(), B, T, T, d, p, training, rng);
      return c.self_attn.out.data();
    });
    // cross-attention over the memory (source padding mask)
    sublayer_forward(c.s[1], Dl.norm[1], P, c.s[0].y.data(), B * T, d, cfg.pre_ln, p, training, rng,
                     [&](const F* in) {
                       mha_forward(c.src_attn, Dl.src_attn, P, in, memory, w.masks.dec_cross.data(), B, T, S, d, p,
                                   training, rng);
                       return c.src_attn.out.data();
                     });
    sublayer_forward(c.s[2], Dl.norm[2], P, c.s[1].y.data(), B * T, d, cfg.pre_ln, p, training, rng,
                     [&](const F* in) {
                       ffn_forward(c.ffn, Dl.ff, P, in, B * T, d, p, training, rng);
                       return c.ffn.out.data();
                     });
    y = c.s[2].y.data();
  }
  layernorm_forward(sized(w.dec_norm.y, B * T * C), sized(w.dec_norm.mean, B * T), sized(w.dec_norm.rstd, B * T), y,
                    P + L.dec_norm.a, P + L.dec_norm.b, B * T, C, F(1e-6));

  // ---- generator + loss: logits = proj(h); per-token cross-entropy, 0 on padding
  linear_forward(sized(w.logits, B * T * V), w.dec_norm.y.data(), P + L.proj_w, P + L.proj_b, B * T, C, V);
  cross_entropy_forward(sized(w.loss, B * T), sized(w.probs, B * T * V), w.logits.data(), b.tar_real.data(), B * T, V,
                        kPad, F(cfg.label_smoothing));
  F sum = 0;
  for (F v : w.loss) sum += v;
  return sum;
}

// ================================================================ backward
template <class F>
void backward(const Model<F>& m, Workspace<F>& w, const Batch& b, F denom) {
  TS_CODE_SITE();
  const ModelConfig& cfg = m.cfg;
  const Layout& L = m.layout;
  const F* P = m.params.data();
  const int64_t B = w.B, S = w.S, T = w.T, C = cfg.d_model, H = cfg.heads, V = cfg.tgt_vocab;
  const Dims<F> d{B, S, T, C, H, C / H, cfg.d_ff, V,
                  cfg.scale_scores ? F(1) / std::sqrt(F(C / H)) : F(1), cfg.relu};
  if (w.grads.size() != L.total) w.grads.assign(L.total, F(0));
  F* G = w.grads.data();
  std::vector<F>* tmp = w.tmp;
  const F emb_scale = std::sqrt(F(C));

  // ---- loss and generator: dloss[n] = 1 / denom; dlogits = (p - q) / denom
  std::vector<F> dloss(static_cast<size_t>(B * T), F(1) / denom);
  std::vector<F> dlogits(static_cast<size_t>(B * T * V), F(0));
  cross_entropy_backward(dlogits.data(), w.probs.data(), b.tar_real.data(), dloss.data(), B * T, V, kPad,
                         F(cfg.label_smoothing));
  std::vector<F> dh(static_cast<size_t>(B * T * C), F(0));
  linear_backward(dh.data(), G + L.proj_w, G + L.proj_b, dlogits.data(), w.dec_norm.y.data(), P + L.proj_w, B * T, C,
                  V);
  // ---- decoder final LayerNorm
  std::vector<F> dy(static_cast<size_t>(B * T * C), F(0));
  const F* y_last = cfg.layers > 0 ? w.dec.back().s[2].y.data() : w.tgt_x.data();
  layernorm_backward(dy.data(), G + L.dec_norm.a, G + L.dec_norm.b, dh.data(), y_last, w.dec_norm.mean.data(),
                     w.dec_norm.rstd.data(), P + L.dec_norm.a, B * T, C);
  // ---- decoder layers, last first; dmemory collects every cross-attention's key/value gradient
  std::vector<F> dmemory(static_cast<size_t>(B * S * C), F(0));
  const F* memory = w.enc_norm.y.data();
  for (int64_t l = cfg.layers - 1; l >= 0; --l) {
    auto& c = w.dec[static_cast<size_t>(l)];
    const auto& Dl = L.dec[static_cast<size_t>(l)];
    std::vector<F> dx(static_cast<size_t>(B * T * C), F(0));
    // 3) feed-forward sublayer
    sublayer_backward(c.s[2], Dl.norm[2], P, G, dy.data(), dx.data(), B * T, d, cfg.pre_ln, tmp + 6,
                      [&](const F* dout, F* din) {
                        const F* in = cfg.pre_ln ? c.s[2].ln.y.data() : c.s[2].x.data();
                        ffn_backward(c.ffn, Dl.ff, P, G, dout, in, din, B * T, d, tmp);
                      });
    std::swap(dx, dy);
    std::fill(dx.begin(), dx.end(), F(0));
    // 2) cross-attention sublayer: queries from the decoder, keys/values from the memory
    sublayer_backward(c.s[1], Dl.norm[1], P, G, dy.data(), dx.data(), B * T, d, cfg.pre_ln, tmp + 6,
                      [&](const F* dout, F* din) {
                        const F* in = cfg.pre_ln ? c.s[1].ln.y.data() : c.s[1].x.data();
                        mha_backward(c.src_attn, Dl.src_attn, P, G, dout, in, memory, din, dmemory.data(), B, T, S, d,
                                     tmp);
                      });
    std::swap(dx, dy);
    std::fill(dx.begin(), dx.end(), F(0));
    // 1) masked self-attention sublayer
    sublayer_backward(c.s[0], Dl.norm[0], P, G, dy.data(), dx.data(), B * T, d, cfg.pre_ln, tmp + 6,
                      [&](const F* dout, F* din) {
                        const F* in = cfg.pre_ln ? c.s[0].ln.y.data() : c.s[0].x.data();
                        mha_backward(c.self_attn, Dl.self_attn, P, G, dout, in, in, din, din, B, T, T, d, tmp);
                      });
    std::swap(dx, dy);
  }
  // ---- target embedding: dropout, then the scaled lookup
  {
    std::vector<F> demb(static_cast<size_t>(B * T * C), F(0));
    dropout_backward(demb.data(), dy.data(), w.tgt_keep.data(), B * T * C);
    embedding_backward(G + L.tgt_lut, demb.data(), b.tar_inp.data(), B * T, C, emb_scale);
  }
  // ---- encoder final LayerNorm, then the layers, last first
  std::vector<F> dx(static_cast<size_t>(B * S * C), F(0));
  const F* x_last = cfg.layers > 0 ? w.enc.back().s[1].y.data() : w.src_x.data();
  layernorm_backward(dx.data(), G + L.enc_norm.a, G + L.enc_norm.b, dmemory.data(), x_last, w.enc_norm.mean.data(),
                     w.enc_norm.rstd.data(), P + L.enc_norm.a, B * S, C);
  for (int64_t l = cfg.layers - 1; l >= 0; --l) {
    auto& c = w.enc[static_cast<size_t>(l)];
    const auto& E = L.enc[static_cast<size_t>(l)];
    std::vector<F> dprev(static_cast<size_t>(B * S * C), F(0));
    sublayer_backward(c.s[1], E.norm[1], P, G, dx.data(), dprev.data(), B * S, d, cfg.pre_ln, tmp + 6,
                      [&](const F* dout, F* din) {
                        const F* in = cfg.pre_ln ? c.s[1].ln.y.data() : c.s[1].x.data();
                        ffn_backward(c.ffn, E.ff, P, G, dout, in, din, B * S, d, tmp);
                      });
    std::swap(dx, dprev);
    std::fill(dprev.begin(), dprev.end(), F(0));
    sublayer_backward(c.s[0], E.norm[0], P, G, dx.data(), dprev.data(), B * S, d, cfg.pre_ln, tmp + 6,
                      [&](const F* dout, F* din) {
                        const F* in = cfg.pre_ln ? c.s[0].ln.y.data() : c.s[0].x.data();
                        mha_backward(c.attn, E.self_attn, P, G, dout, in, in, din, din, B, S, S, d, tmp);
                      });
    std::swap(dx, dprev);
  }
  // ---- source embedding
  std::vector<F> demb(static_cast<size_t>(B * S * C), F(0));
  dropout_backward(demb.data(), dx.data(), w.src_keep.data(), B * S * C);
  embedding_backward(G + L.src_lut, demb.data(), b.inputs.data(), B * S, C, emb_scale);
}

int64_t reduction_denominator(const Batch& b, Reduction r) {
  if (r == Reduction::ArticleMean) return b.B * b.T;
  int64_t n = 0;
  for (int64_t y : b.tar_real) n += y != kPad;
  return n;
}

template <class F>
int64_t correct_tokens(const Workspace<F>& w, const Batch& b, int64_t V, bool with_padding) {
  int64_t n = 0;
  for (int64_t i = 0; i < b.B * b.T; ++i) {
    if (b.tar_real[static_cast<size_t>(i)] == kPad && !with_padding) continue;
    const F* row = w.logits.data() + i * V;
    n += (std::max_element(row, row + V) - row) == b.tar_real[static_cast<size_t>(i)];
  }
  return n;
}

template float forward<float>(const Model<float>&, Workspace<float>&, const Batch&, bool, Rng&);
template double forward<double>(const Model<double>&, Workspace<double>&, const Batch&, bool, Rng&);
template void backward<float>(const Model<float>&, Workspace<float>&, const Batch&, float);
template void backward<double>(const Model<double>&, Workspace<double>&, const Batch&, double);
template int64_t correct_tokens<float>(const Workspace<float>&, const Batch&, int64_t, bool);
template int64_t correct_tokens<double>(const Workspace<double>&, const Batch&, int64_t, bool);

}  // namespace ts::train
