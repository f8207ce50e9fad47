// train/beam_models.cpp: ch11's decoder one row at a time with a cache per beam, ch12's GPT
// with a KvCache per beam, and both recomputing every prefix (the reference).
#include "train/beam_models.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/code_site.hpp"

namespace ts::train {

// ================================================================ both: a cache per beam
namespace {

// Every live beam's next-token log-probabilities (L,V), one cached step per beam: the beam's
// last token (or `first` while it has written none) fed by step(cache, token, logits).
template <class Cache, class Step>
std::vector<double> cached_log_probs(std::vector<Cache>& beams, const std::vector<std::vector<int64_t>>& prefixes,
                                     int64_t first, int64_t V, const Step& step) {
  if (prefixes.size() != beams.size()) throw std::logic_error("beam search: one cache per beam");
  std::vector<double> out;
  std::vector<float> logits(static_cast<size_t>(V));
  for (size_t i = 0; i < prefixes.size(); ++i) {
    step(beams[i], prefixes[i].empty() ? first : prefixes[i].back(), logits.data());
    const std::vector<double> row = log_softmax_row(logits.data(), V);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// New beam i continues old beam parent[i]: its cache becomes a copy of the parent's (a copy,
// not a move: two children may share a parent).
template <class Cache>
void reorder_caches(std::vector<Cache>& beams, const std::vector<int64_t>& parent) {
  std::vector<Cache> next;
  for (int64_t p : parent) next.push_back(beams[size_t(p)]);
  beams = std::move(next);
}

// ================================================================ ch11

// The decoder of src/train/model.cpp's forward, for ONE new token of one beam, in eval mode:
//   y = lut(token) * sqrt(C) + pe[pos]
//   N layers: self-attention over the beam's cached keys/values (+ this row's), cross-attention
//             over the memory's keys/values, feed-forward; each as pre-LN x + f(LN(x)) or
//             post-LN LN(x + f(x)), as the model is configured
//   logits = proj(LN(y))                                     (V)
// cache.k, cache.v (layers, H, max_len, D): this row's keys/values are written at `pos`.
// mem_k, mem_v (layers, H, S, D); src_mask (S) 1 = hide.
struct RowCache {
  float* k;
  float* v;
};
// the line below: decoder_row_step's own, for decoder_row_step_site()
const CodeSite kRowStepSite{__FILE__, __LINE__ + 1, "decoder_row_step"};
void decoder_row_step(const Model<float>& m, RowCache cache, int64_t token, int64_t pos, const float* mem_k,
                      const float* mem_v, const float* src_mask, int64_t S, float* logits) {
  TS_CODE_SITE();
  const ModelConfig& cfg = m.cfg;
  const Layout& L = m.layout;
  const float* P = m.params.data();
  const int64_t C = cfg.d_model, H = cfg.heads, D = C / H, Fd = cfg.d_ff, T = cfg.max_len;
  const float scale = cfg.scale_scores ? 1.0f / std::sqrt(float(D)) : 1.0f;
  if (pos >= T) throw std::invalid_argument("decoder_row_step: longer than max_len");
  const auto buf = [](int64_t n) { return std::vector<float>(static_cast<size_t>(n)); };
  std::vector<float> x = buf(C), ln = buf(C), sum = buf(C), q = buf(C), k = buf(C), v = buf(C), ctx = buf(C),
                     out = buf(C), h = buf(Fd), a = buf(Fd), p = buf(std::max(S, T)), keep = buf(std::max(S, T));
  float mean = 0, rstd = 0;
  Rng unused(0);
  // x + f(LN(x)) (pre-LN) or LN(x + f(x)) (post-LN); f(in, out) writes out (C)
  const auto sublayer = [&](const Layout::Norm& N, const auto& f) {
    if (cfg.pre_ln) {
      layernorm_forward(ln.data(), &mean, &rstd, x.data(), P + N.a, P + N.b, 1, C, 1e-6f);
      f(ln.data(), out.data());
      residual_forward(x.data(), x.data(), out.data(), C);
    } else {
      f(x.data(), out.data());
      residual_forward(sum.data(), x.data(), out.data(), C);
      layernorm_forward(x.data(), &mean, &rstd, sum.data(), P + N.a, P + N.b, 1, C, 1e-6f);
    }
  };
  embedding_forward(x.data(), &token, P + L.tgt_lut, m.pe.data() + pos * C, 1, 1, C, std::sqrt(float(C)));
  for (int64_t l = 0; l < cfg.layers; ++l) {
    const Layout::Dec& Dl = L.dec[size_t(l)];
    float* kc = cache.k + l * H * T * D;  // (H, max_len, D)
    float* vc = cache.v + l * H * T * D;
    // 1) masked self-attention: the earlier rows are in the cache, so nothing later is there to hide
    sublayer(Dl.norm[0], [&](const float* in, float* o) {
      const Layout::Attn& A = Dl.self_attn;
      linear_forward(q.data(), in, P + A.w[0], P + A.b[0], 1, C, C);
      linear_forward(k.data(), in, P + A.w[1], P + A.b[1], 1, C, C);
      linear_forward(v.data(), in, P + A.w[2], P + A.b[2], 1, C, C);
      for (int64_t hh = 0; hh < H; ++hh)
        for (int64_t d = 0; d < D; ++d) {
          kc[(hh * T + pos) * D + d] = k[size_t(hh * D + d)];
          vc[(hh * T + pos) * D + d] = v[size_t(hh * D + d)];
        }
      for (int64_t hh = 0; hh < H; ++hh)
        attention_forward(ctx.data() + hh * D, p.data(), keep.data(), q.data() + hh * D, kc + hh * T * D,
                          vc + hh * T * D, static_cast<const float*>(nullptr), 1, 1, 1, pos + 1, D, scale, 0.0, false,
                          unused);
      linear_forward(o, ctx.data(), P + A.w[3], P + A.b[3], 1, C, C);
    });
    // 2) cross-attention: the memory's keys and values were projected once per source
    sublayer(Dl.norm[1], [&](const float* in, float* o) {
      const Layout::Attn& A = Dl.src_attn;
      linear_forward(q.data(), in, P + A.w[0], P + A.b[0], 1, C, C);
      for (int64_t hh = 0; hh < H; ++hh)
        attention_forward(ctx.data() + hh * D, p.data(), keep.data(), q.data() + hh * D,
                          mem_k + (l * H + hh) * S * D, mem_v + (l * H + hh) * S * D, src_mask, 1, 1, 1, S, D, scale,
                          0.0, false, unused);
      linear_forward(o, ctx.data(), P + A.w[3], P + A.b[3], 1, C, C);
    });
    // 3) feed-forward: w_2(relu(w_1(x)))
    sublayer(Dl.norm[2], [&](const float* in, float* o) {
      linear_forward(h.data(), in, P + Dl.ff.w1, P + Dl.ff.b1, 1, C, Fd);
      if (cfg.relu)
        relu_forward(a.data(), h.data(), Fd);
      else
        a = h;
      linear_forward(o, a.data(), P + Dl.ff.w2, P + Dl.ff.b2, 1, Fd, C);
    });
  }
  layernorm_forward(ln.data(), &mean, &rstd, x.data(), P + L.dec_norm.a, P + L.dec_norm.b, 1, C, 1e-6f);
  linear_forward(logits, ln.data(), P + L.proj_w, P + L.proj_b, 1, C, cfg.tgt_vocab);
}

}  // namespace

static std::string site(const CodeSite& s) { return code_site_path(s.file) + ":" + std::to_string(s.line) + " " + s.func; }
std::string decoder_row_step_site() { return site(kRowStepSite); }

TranslationBeams::TranslationBeams(const Model<float>& m, int64_t number) : m_(m) {
  const ModelConfig& cfg = m.cfg;
  const int64_t C = cfg.d_model, H = cfg.heads, D = C / H;
  // 1) the encoder, once: forward with a one-token target leaves the memory in w.enc_norm.y   (S,C)
  Batch b = make_batch({number});
  b.T = 1;
  b.tar_inp = {target_vocab().start()};
  b.tar_real = {kPad};
  Workspace<float> w;
  Rng unused(0);
  forward(m, w, b, false, unused);
  S_ = b.S;
  for (int64_t s = 0; s < S_; ++s) src_mask_.push_back(b.inputs[size_t(s)] == kPad ? 1.0f : 0.0f);
  // 2) every layer's cross-attention keys and values, once   (layers, H, S, D)
  mem_k_.assign(size_t(cfg.layers * S_ * C), 0.0f);
  mem_v_ = mem_k_;
  std::vector<float> kv(size_t(S_ * C));
  for (int64_t l = 0; l < cfg.layers; ++l) {
    const Layout::Attn& A = m.layout.dec[size_t(l)].src_attn;
    const float* P = m.params.data();
    linear_forward(kv.data(), w.enc_norm.y.data(), P + A.w[1], P + A.b[1], S_, C, C);
    split_heads(mem_k_.data() + l * S_ * C, kv.data(), 1, S_, H, D);
    linear_forward(kv.data(), w.enc_norm.y.data(), P + A.w[2], P + A.b[2], S_, C, C);
    split_heads(mem_v_.data() + l * S_ * C, kv.data(), 1, S_, H, D);
  }
  // 3) one empty self-attention cache: the first beam
  SelfCache c;
  c.k.assign(size_t(cfg.layers * cfg.max_len * C), 0.0f);
  c.v = c.k;
  beams_.push_back(std::move(c));
}

int64_t TranslationBeams::end_id() const { return target_vocab().end(); }

std::vector<double> TranslationBeams::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  // the decoder input is [start] + prefix: feed its last token at position len
  return cached_log_probs(beams_, prefixes, target_vocab().start(), vocab(),
                          [&](SelfCache& c, int64_t token, float* logits) {
                            decoder_row_step(m_, RowCache{c.k.data(), c.v.data()}, token, c.len++, mem_k_.data(),
                                             mem_v_.data(), src_mask_.data(), S_, logits);
                          });
}

// the line below: TranslationBeams::reorder's own
const CodeSite kTranslationReorderSite{__FILE__, __LINE__ + 1, "TranslationBeams::reorder"};
void TranslationBeams::reorder(const std::vector<int64_t>& parent) { reorder_caches(beams_, parent); }

int64_t TranslationRecompute::end_id() const { return target_vocab().end(); }

std::vector<double> TranslationRecompute::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  const int64_t Lb = static_cast<int64_t>(prefixes.size()), V = vocab();
  const int64_t T = static_cast<int64_t>(prefixes.front().size()) + 1;
  Batch b = make_batch(std::vector<int64_t>(size_t(Lb), number_));
  b.T = T;
  b.tar_inp.clear();
  for (const auto& pre : prefixes) {
    b.tar_inp.push_back(target_vocab().start());
    b.tar_inp.insert(b.tar_inp.end(), pre.begin(), pre.end());
  }
  b.tar_real.assign(size_t(Lb * T), kPad);
  Workspace<float> w;
  Rng unused(0);
  forward(m_, w, b, false, unused);
  std::vector<double> out;
  for (int64_t i = 0; i < Lb; ++i) {
    const std::vector<double> row = log_softmax_row(w.logits.data() + (i * T + T - 1) * V, V);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> beam_translate(const Model<float>& m, const std::vector<int64_t>& numbers,
                                                 const BeamOptions& opt) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t n : numbers) {
    TranslationBeams beams(m, n);
    out.push_back(beam_search(beams, opt).best().tokens);
  }
  return out;
}

// ================================================================ ch12
GptBeams::GptBeams(const Gpt& m, int64_t number) : m_(m), prompt_(encode_prompt(number)) {
  std::vector<float> logits(static_cast<size_t>(m.cfg.vocab));
  beams_.push_back(make_kv_cache(m));
  for (size_t j = 0; j + 1 < prompt_.size(); ++j) gpt_step(m, beams_[0], prompt_[j], logits.data());
}

int64_t GptBeams::end_id() const { return seq_vocab().end; }

int64_t GptBeams::max_len() const { return m_.cfg.ctx - static_cast<int64_t>(prompt_.size()) + 1; }

std::vector<double> GptBeams::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  // the prompt but its last token is in the cache: feed that token first, then the beam's
  return cached_log_probs(beams_, prefixes, prompt_.back(), vocab(),
                          [&](KvCache& c, int64_t token, float* logits) { gpt_step(m_, c, token, logits); });
}

// the line below: GptBeams::reorder's own
const CodeSite kGptReorderSite{__FILE__, __LINE__ + 1, "GptBeams::reorder"};
void GptBeams::reorder(const std::vector<int64_t>& parent) { reorder_caches(beams_, parent); }

GptRecompute::GptRecompute(const Gpt& m, int64_t number) : m_(m), prompt_(encode_prompt(number)) {}

int64_t GptRecompute::end_id() const { return seq_vocab().end; }

std::vector<double> GptRecompute::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  std::vector<double> out;
  for (const auto& pre : prefixes) {
    std::vector<int64_t> ids = prompt_;
    ids.insert(ids.end(), pre.begin(), pre.end());
    const std::vector<float> logits = gpt_last_logits(m_, ids);
    const std::vector<double> row = log_softmax_row(logits.data(), vocab());
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> beam_complete(const Gpt& m, const std::vector<int64_t>& numbers, BeamOptions opt) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t n : numbers) {
    GptBeams beams(m, n);
    opt.max_len = beams.max_len();
    out.push_back(beam_search(beams, opt).best().tokens);
  }
  return out;
}

std::string gpt_step_site(const Gpt& m) {
  std::vector<const CodeSite*> sites;
  {
    CodeSiteRecorder rec(sites);
    KvCache c = make_kv_cache(m);
    std::vector<float> logits(static_cast<size_t>(m.cfg.vocab));
    gpt_step(m, c, 1, logits.data());
  }
  for (const CodeSite* s : sites)
    if (code_site_name(s->func).find("gpt_step") != std::string::npos)
      return code_site_path(s->file) + ":" + std::to_string(s->line) + " gpt_step";
  return "src/train/gpt.cpp gpt_step";
}

std::string translation_reorder_site() { return site(kTranslationReorderSite); }
std::string gpt_reorder_site() { return site(kGptReorderSite); }

// ================================================================ the cache check
static void add(CacheCheck& c, const CompareBeams& b, int64_t K) {
  c.maxdiff = std::max(c.maxdiff, b.maxdiff);
  c.scale = std::max(c.scale, b.scale);
  if (K == 1) c.maxdiff_one = std::max(c.maxdiff_one, b.maxdiff);
  c.rows += b.rows, c.argmax_differ += b.argmax_differ, c.moved += b.moved;
}

// each number searched with one beam and with opt.K, the cached model beside the recomputing one
template <class Cached, class Full, class M, class MaxLen>
static CacheCheck check_cache(const M& m, const std::vector<int64_t>& numbers, const BeamOptions& opt,
                              const MaxLen& max_len) {
  CacheCheck c;
  c.K = opt.K;
  c.numbers = static_cast<int64_t>(numbers.size());
  for (int64_t n : numbers)
    for (int64_t K : {int64_t(1), opt.K}) {
      Cached cached(m, n);
      Full full(m, n);
      CompareBeams both(cached, full);
      beam_search(both, BeamOptions{K, opt.alpha, max_len(cached)});
      add(c, both, K);
    }
  return c;
}

CacheCheck check_translation_cache(const Model<float>& m, const std::vector<int64_t>& numbers, const BeamOptions& opt) {
  return check_cache<TranslationBeams, TranslationRecompute>(m, numbers, opt,
                                                             [&](const TranslationBeams&) { return opt.max_len; });
}

CacheCheck check_gpt_cache(const Gpt& m, const std::vector<int64_t>& numbers, BeamOptions opt) {
  return check_cache<GptBeams, GptRecompute>(m, numbers, opt, [](const GptBeams& b) { return b.max_len(); });
}

}  // namespace ts::train
