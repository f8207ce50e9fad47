// test_gpt_model: ch12's GPT composed from the course's modules (src/transformer/gpt.hpp) against
// the hand-written trainable copy it is to replace (src/train/gpt.cpp), on the same weights:
// the logits, every parameter's gradient (the modules' backwards vs gpt_backward), and cached
// generation (the attention's KVCache argument) vs the full forward.
#include "catch_compat.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "train/gpt.hpp"
#include "transformer/gpt.hpp"
#include "transformer/grad.hpp"

using namespace ts;
using namespace ts::train;

namespace {

// copy n floats of a flat vector (train's layout) into t, or out of t (to = false)
void copy_rows(Tensor& t, std::vector<float>& flat, size_t offset, bool to = true) {
  if (to)
    std::copy_n(flat.data() + offset, t.size(), t.data());
  else
    std::copy_n(t.data(), t.size(), flat.data() + offset);
}

// Every module tensor paired with where train's layout keeps it: c_attn's (3C,C) rows are the
// q, k, v Linears' weights, in that order.
template <class Fn>
void for_each_pair(GPT& g, const GptLayout& L, int64_t C, Fn fn) {
  const size_t CC = size_t(C * C);
  fn("wte", g.wte.weight, L.wte);
  fn("wpe", g.wpe.weight, L.wpe);
  for (size_t l = 0; l < g.h.size(); ++l) {
    const GptLayout::Block& p = L.h[l];
    Block& b = g.h[l];
    const std::string n = "h." + std::to_string(l) + ".";
    fn(n + "ln_1.weight", b.sublayer[0].norm.a_2, p.ln1_w);
    fn(n + "ln_1.bias", b.sublayer[0].norm.b_2, p.ln1_b);
    for (size_t j = 0; j < 3; ++j) {
      fn(n + "attn.linears." + std::to_string(j) + ".weight", b.self_attn.linears[j].weight, p.attn_w + j * CC);
      fn(n + "attn.linears." + std::to_string(j) + ".bias", b.self_attn.linears[j].bias, p.attn_b + j * size_t(C));
    }
    fn(n + "attn.linears.3.weight", b.self_attn.linears[3].weight, p.proj_w);
    fn(n + "attn.linears.3.bias", b.self_attn.linears[3].bias, p.proj_b);
    fn(n + "ln_2.weight", b.sublayer[1].norm.a_2, p.ln2_w);
    fn(n + "ln_2.bias", b.sublayer[1].norm.b_2, p.ln2_b);
    fn(n + "mlp.w_1.weight", b.feed_forward.w_1.weight, p.fc_w);
    fn(n + "mlp.w_1.bias", b.feed_forward.w_1.bias, p.fc_b);
    fn(n + "mlp.w_2.weight", b.feed_forward.w_2.weight, p.fc2_w);
    fn(n + "mlp.w_2.bias", b.feed_forward.w_2.bias, p.fc2_b);
  }
  fn("ln_f.weight", g.ln_f.a_2, L.lnf_w);
  fn("ln_f.bias", g.ln_f.b_2, L.lnf_b);
  if (!g.config.tied) fn("lm_head", g.lm_head, L.head);
}

double max_abs(const float* a, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(a[i])));
  return m;
}

double max_diff(const float* a, const float* b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

}  // namespace

TEST_CASE("gpt model: the modules' GPT computes train/gpt.cpp's logits, gradients and cached steps", "[gpt]") {
  for (bool tied : {true, false}) {
    GptConfig cfg;
    cfg.vocab = seq_vocab().size(), cfg.tied = tied;
    Gpt m(cfg, 3, 1);
    // train's weights are drawn N(0, 0.02); the norms get random weights too, so a swapped
    // gamma / beta or ln_1 / ln_2 shows
    Rng draw(11);
    for (const ParamSpec& s : m.layout.specs)
      if (s.name.find("ln_") != std::string::npos)
        for (size_t i = 0; i < s.numel; ++i) m.params[s.offset + i] = float(0.5 + draw.uniform());
    GPT g(module_config(cfg));
    for_each_pair(g, m.layout, cfg.d_model, [&](const std::string&, Tensor& t, size_t off) { copy_rows(t, m.params, off); });
    g.train(false);

    const SeqBatch b = make_seq_batch({2048, 7, 915, 31, 9999});
    GptWork<float> w;
    Rng unused(0);
    gpt_forward(cfg, m.layout, m.params.data(), w, b, false, unused);
    ITensor idx = ITensor::from_shape({size_t(b.B), size_t(b.T)});
    std::copy(b.x.begin(), b.x.end(), idx.data());
    Tensor logits;
    GPT grad = g;
    zero_grad(grad);
    {
      EnableGrad on;
      logits = g.forward(idx);
      // the same upstream gradient: gpt_backward's d loss / d logits
      w.grads.assign(m.layout.total, 0.0f);
      gpt_backward(cfg, m.layout, m.params.data(), w, b, 1.0f / float(b.answer_tokens()));
      Tensor dlogits = Tensor::from_shape(shape_of(logits));
      std::copy(w.d.dlogits.begin(), w.d.dlogits.end(), dlogits.data());
      g.backward(dlogits, grad);
    }
    INFO("tied " << tied);
    REQUIRE(logits.size() == w.logits.size());
    const double ref = max_abs(w.logits.data(), w.logits.size());
    CHECK(max_diff(logits.data(), w.logits.data(), logits.size()) <= 1e-5 * ref);
    // every parameter's gradient, per tensor, against the largest gradient of the model
    std::vector<float> gflat(m.layout.total, 0.0f);
    for_each_pair(grad, m.layout, cfg.d_model,
                  [&](const std::string&, Tensor& t, size_t off) { copy_rows(t, gflat, off, false); });
    const double gmax = max_abs(w.grads.data(), w.grads.size());
    for_each_pair(grad, m.layout, cfg.d_model, [&](const std::string& name, Tensor& t, size_t off) {
      INFO(name);
      const double scale = std::max(max_abs(w.grads.data() + off, t.size()), 1e-3 * gmax);
      CHECK(max_diff(gflat.data() + off, w.grads.data() + off, t.size()) <= 1e-4 * scale);
    });

    // cached generation: one token at a time through the KVCaches = the full forward's rows
    std::vector<KVCache> caches = g.make_caches();
    const std::vector<int64_t> seq = encode_sequence(2048);
    ITensor all = ITensor::from_shape({1, seq.size()});
    std::copy(seq.begin(), seq.end(), all.data());
    const Tensor full = g.forward(all);
    const size_t V = size_t(cfg.vocab);
    double worst = 0.0;
    for (size_t t = 0; t < seq.size(); ++t) {
      ITensor one = ITensor::from_shape({1, 1});
      one(0, 0) = seq[t];
      const Tensor step = g.forward(one, &caches);
      worst = std::max(worst, max_diff(step.data(), full.data() + t * V, V));
    }
    CHECK(caches[0].len() == seq.size());
    CHECK(worst <= 1e-5 * max_abs(full.data(), full.size()));
  }
}

TEST_CASE("gpt model: the causal mask lets query t see keys 0..past+t", "[gpt]") {
  const BTensor m = gpt_causal_mask(3, 2, true);
  REQUIRE(shape_of(m) == Shape{1, 3, 5});
  for (size_t t = 0; t < 3; ++t)
    for (size_t s = 0; s < 5; ++s) CHECK(m(0, t, s) == (s <= 2 + t));
  const BTensor open = gpt_causal_mask(2, 0, false);
  CHECK(std::all_of(open.begin(), open.end(), [](bool k) { return k; }));
}
