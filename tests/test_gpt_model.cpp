// test_gpt_model: ch12 trains and generates with the GPT composed from the course's modules
// (src/transformer/gpt.hpp). Checked here: train::Gpt (the flat layout of the checkpoint, the
// batch in parts, token_losses) gives the loss and gradients of one module run on the whole
// batch; every gradient matches finite differences of the forward (gpt_check_grads, float);
// cached generation (the attention's KVCache argument) gives the full forward's logits; the
// causal mask. (The PyTorch twin, tests/twins/gpt_reference.py, checks the same model in torch.)
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

TEST_CASE("gpt model: Gpt's parts give one module's loss and gradients on the whole batch", "[gpt]") {
  for (bool tied : {true, false}) {
    INFO("tied " << tied);
    GptConfig cfg;
    cfg.vocab = seq_vocab().size(), cfg.tied = tied;
    Gpt m(cfg, 3, 2);
    // the norms get random weights too, so a swapped gamma / beta or ln_1 / ln_2 shows
    Rng draw(11);
    const NamedTensors params = m.parameters();
    for (const CheckpointKey& k : m.keys)
      if (k.key.find("ln_") != std::string::npos)
        for (size_t i : k.params)
          for (float& v : *params[i].second) v = float(0.5 + draw.uniform());
    const SeqBatch b = make_seq_batch({2048, 7, 915, 31, 9999});
    const double loss = m.forward(b, false);
    m.zero_grad();
    m.backward();

    // the same weights in one GPT, the whole batch at once
    GPT g = m.module();
    GPT grad = g;
    zero_grad(grad);
    ITensor idx = ITensor::from_shape({size_t(b.B), size_t(b.T)});
    std::copy(b.x.begin(), b.x.end(), idx.begin());
    double want = 0.0;
    {
      EnableGrad on;
      const Tensor logits = g.forward(idx);
      for (double l : token_losses(logits, b.y)) want += l;
      want /= double(b.answer_tokens());
      g.backward(token_losses_backward(logits, b.y, 1.0f / float(b.answer_tokens())), grad);
    }
    CHECK(std::fabs(loss - want) <= 1e-6 * std::fabs(want));
    // the parts' summed gradients are the one module's, tensor by tensor
    const NamedTensors ours = m.gradients(), one = grad.named_parameters();
    REQUIRE(ours.size() == one.size());
    double gmax = 0.0;
    for (const auto& nt : ours) gmax = std::max(gmax, max_abs(nt.second->data(), nt.second->size()));
    for (size_t i = 0; i < ours.size(); ++i) {
      INFO(ours[i].first);
      REQUIRE(ours[i].second->size() == one[i].second->size());
      const double scale = std::max(max_abs(ours[i].second->data(), ours[i].second->size()), 1e-3 * gmax);
      CHECK(max_diff(one[i].second->data(), ours[i].second->data(), ours[i].second->size()) <= 1e-5 * scale);
    }
    // the checkpoint keys hold every parameter once: c_attn = q, k, v; nanoGPT's 12 keys per block
    CHECK(m.keys.size() == size_t(4 + 12 * cfg.layers + (tied ? 0 : 1)));
    size_t held = 0;
    for (const CheckpointKey& k : m.keys) held += k.params.size();
    CHECK(held == params.size());
    CHECK(m.keys[4].key == "transformer.h.0.attn.c_attn.weight");
    CHECK(m.keys[4].shape == std::vector<int64_t>{3 * cfg.d_model, cfg.d_model});
    CHECK(m.keys[4].params.size() == 3);
  }
}

TEST_CASE("gpt model: every gradient of the modules' GPT matches finite differences of its forward", "[gpt]") {
  for (bool tied : {true, false}) {
    INFO("tied " << tied);
    GptConfig tiny;
    tiny.vocab = seq_vocab().size(), tiny.tied = tied;
    tiny.layers = 2, tiny.d_model = 8, tiny.heads = 2, tiny.d_ff = 16;
    for (const GradCheckRow& r : gpt_check_grads(tiny, 0, {7, 42, 905, 2048})) {
      INFO(r.name << " maxdiff " << r.maxdiff << " max |grad| " << r.maxgrad);
      CHECK(r.ok);
    }
  }
}

TEST_CASE("gpt model: one token at a time through the KVCaches gives the full forward's logits", "[gpt]") {
  GptConfig cfg;
  cfg.vocab = seq_vocab().size();
  const Gpt m(cfg, 3, 1);
  GPT g = m.module();
  const std::vector<int64_t> seq = encode_sequence(2048);
  ITensor all = ITensor::from_shape({1, seq.size()});
  std::copy(seq.begin(), seq.end(), all.data());
  const Tensor full = g.forward(all);
  const size_t V = size_t(cfg.vocab);
  // the prompt in one call, then one token per call (as generate feeds them)
  GptCache caches = g.make_caches();
  const std::vector<int64_t> prompt = encode_prompt(2048);
  std::vector<float> step = next_logits(g, caches, prompt);
  double worst = max_diff(step.data(), full.data() + (prompt.size() - 1) * V, V);
  for (size_t t = prompt.size(); t < seq.size(); ++t) {
    step = next_logits(g, caches, {seq[t]});
    worst = std::max(worst, max_diff(step.data(), full.data() + t * V, V));
    // and recomputing the prefix gives the same row
    const std::vector<float> again = last_logits(g, std::vector<int64_t>(seq.begin(), seq.begin() + long(t) + 1));
    worst = std::max(worst, max_diff(again.data(), full.data() + t * V, V));
  }
  CHECK(caches[0].len() == seq.size());
  CHECK(worst <= 1e-5 * std::max(1.0, max_abs(full.data(), full.size())));
}

TEST_CASE("gpt model: the causal mask lets query t see keys 0..past+t", "[gpt]") {
  const BTensor m = gpt_causal_mask(3, 2, true);
  REQUIRE(shape_of(m) == Shape{1, 3, 5});
  for (size_t t = 0; t < 3; ++t)
    for (size_t s = 0; s < 5; ++s) CHECK(m(0, t, s) == (s <= 2 + t));
  const BTensor open = gpt_causal_mask(2, 0, false);
  CHECK(std::all_of(open.begin(), open.end(), [](bool k) { return k; }));
  // gpt_mask reads it back as 1 = hide
  GptConfig c;
  const std::vector<float> hide = gpt_mask(c, 3);
  for (size_t t = 0; t < 3; ++t)
    for (size_t s = 0; s < 3; ++s) CHECK(hide[t * 3 + s] == (s > t ? 1.0f : 0.0f));
}
