// train/sampling.cpp: see sampling.hpp.
#include "train/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/code_site.hpp"

namespace ts::train {

// softmax over the entries with keep[i], 0 elsewhere
static std::vector<double> softmax_kept(const std::vector<double>& z, const std::vector<char>& keep) {
  double mx = -INFINITY, sum = 0;
  for (size_t i = 0; i < z.size(); ++i)
    if (keep[i]) mx = std::max(mx, z[i]);
  std::vector<double> p(z.size(), 0.0);
  for (size_t i = 0; i < z.size(); ++i)
    if (keep[i]) sum += p[i] = std::exp(z[i] - mx);
  for (double& v : p) v /= sum;
  return p;
}

// the line below: sample_next's own, for sample_next_site()
static const CodeSite kSampleSite{__FILE__, __LINE__ + 1, "sample_next"};
int64_t sample_next(const float* logits, int64_t V, const Sampler& s, Rng& rng, SampleTrace* trace) {
  TS_CODE_SITE();
  if (s.greedy() && !trace) return std::max_element(logits, logits + V) - logits;  // the argmax, nothing else
  const size_t n = static_cast<size_t>(V);
  const std::vector<char> all(n, 1);
  std::vector<double> z(logits, logits + V);
  const int64_t argmax = std::max_element(z.begin(), z.end()) - z.begin();
  SampleTrace t;
  t.probs = softmax_kept(z, all);
  // 1) scaled = logits / temperature (greedy: no scaling, no cut)
  const double temp = s.greedy() ? 1.0 : s.temperature;
  t.scaled = z;
  for (double& v : t.scaled) v /= temp;
  // 2) top-k: rank by scaled logit (ties: the lower id first)
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.scaled[a] > t.scaled[b]; });
  t.kept_k = all;
  if (!s.greedy() && s.top_k > 0 && s.top_k < V)
    for (size_t r = static_cast<size_t>(s.top_k); r < n; ++r) t.kept_k[order[r]] = 0;
  // 3) top-p over the softmax of what top-k kept, most likely first
  const std::vector<double> pk = softmax_kept(t.scaled, t.kept_k);
  t.kept_p = t.kept_k;
  if (!s.greedy() && s.top_p < 1.0) {
    double cum = 0;
    bool done = false;
    for (size_t i : order) {
      if (!t.kept_k[i]) continue;
      if (done) t.kept_p[i] = 0;
      cum += pk[i];
      done = done || cum >= s.top_p;
    }
  }
  // 4) renormalise and draw
  t.final = softmax_kept(t.scaled, t.kept_p);
  if (s.greedy()) {
    t.chosen = argmax;
  } else {
    const double u = rng.uniform();
    double cum = 0;
    t.chosen = -1;
    for (size_t i : order) {
      if (!t.kept_p[i]) continue;
      cum += t.final[i];
      t.chosen = static_cast<int64_t>(i);
      if (u < cum) break;
    }
  }
  const int64_t chosen = t.chosen;
  if (trace) *trace = std::move(t);
  return chosen;
}

std::string sample_next_site() {
  return code_site_path(kSampleSite.file) + ":" + std::to_string(kSampleSite.line) + " " + kSampleSite.func;
}

std::vector<int64_t> generate(GPT& g, const std::vector<int64_t>& prompt, int64_t max_new, const Sampler& s,
                              Rng& rng, bool use_cache) {
  const int64_t end = seq_vocab().end, V = g.config.vocab_size, ctx = g.config.block_size;
  std::vector<int64_t> ids = prompt, out;
  GptCache cache = g.make_caches();
  std::vector<float> logits;
  if (use_cache) logits = next_logits(g, cache, prompt);  // the prompt's keys and values, cached
  for (int64_t i = 0; i < max_new && static_cast<int64_t>(ids.size()) <= ctx; ++i) {
    if (!use_cache) logits = last_logits(g, ids);
    const int64_t next = sample_next(logits.data(), V, s, rng);
    if (next == end) break;
    out.push_back(next);
    ids.push_back(next);
    if (use_cache && static_cast<int64_t>(ids.size()) <= ctx) logits = next_logits(g, cache, {next});
  }
  return out;
}

std::vector<int64_t> generate(const Gpt& m, const std::vector<int64_t>& prompt, int64_t max_new, const Sampler& s,
                              Rng& rng, bool use_cache) {
  GPT g = m.module();
  return generate(g, prompt, max_new, s, rng, use_cache);
}

// Greedy completions of prompts of one length L, as one batch: the prompts (B,L) fill the caches
// in one forward, then each step feeds every row's new token (B,1). Greedy draws nothing, so each
// row gets the tokens generate() gives it alone, in fewer and larger products.
static std::vector<std::vector<int64_t>> greedy_batch(GPT& g, const std::vector<std::vector<int64_t>>& prompts) {
  const size_t B = prompts.size(), L = prompts[0].size();
  const int64_t end = seq_vocab().end, V = g.config.vocab_size, ctx = g.config.block_size;
  ITensor idx = ITensor::from_shape({B, L});
  for (size_t b = 0; b < B; ++b) std::copy(prompts[b].begin(), prompts[b].end(), idx.begin() + b * L);
  GptCache cache = g.make_caches();
  Tensor logits = g.forward(idx, &cache);  // (B,L,V): row b's next token from position L-1
  size_t row = L, stride = L;               // where row b's last position is: (b * stride + row - 1) * V
  std::vector<std::vector<int64_t>> out(B);
  std::vector<bool> done(B, false);
  Rng unused(0);
  for (int64_t i = 0, len = int64_t(L); i < ctx && len <= ctx; ++i) {
    ITensor next = ITensor::from_shape({B, 1});
    bool all_done = true;
    for (size_t b = 0; b < B; ++b) {
      const int64_t id = sample_next(logits.data() + (b * stride + row - 1) * size_t(V), V, Sampler{}, unused);
      next(b, 0) = id;
      if (done[b]) continue;
      if (id == end) done[b] = true;
      else out[b].push_back(id);
      all_done = all_done && done[b];
    }
    if (all_done || ++len > ctx) break;
    logits = g.forward(next, &cache);  // (B,1,V)
    row = 1, stride = 1;
  }
  return out;
}

double held_out_exact_match(const Gpt& m, const Sampler& s, uint64_t seed, std::vector<int64_t>* wrong) {
  const auto& held = number_split().held_out;
  GPT g = m.module();  // one module for every number
  std::vector<std::vector<int64_t>> got(held.size());
  if (s.greedy()) {
    // greedy: the numbers whose prompts have the same length run as one batch
    for (size_t L = 1; L <= 5; ++L) {
      std::vector<size_t> rows;
      std::vector<std::vector<int64_t>> prompts;
      for (size_t i = 0; i < held.size(); ++i)
        if (encode_prompt(held[i]).size() == L) rows.push_back(i), prompts.push_back(encode_prompt(held[i]));
      if (rows.empty()) continue;
      const auto out = greedy_batch(g, prompts);
      for (size_t r = 0; r < rows.size(); ++r) got[rows[r]] = out[r];
    }
  } else {
    Rng rng(seed);  // one generator, the numbers in order
    for (size_t i = 0; i < held.size(); ++i) got[i] = generate(g, encode_prompt(held[i]), m.cfg.ctx, s, rng);
  }
  int64_t exact = 0;
  for (size_t i = 0; i < held.size(); ++i) {
    const bool ok = seq_vocab().decode(got[i]) == number_to_words(held[i]);
    exact += ok;
    if (!ok && wrong) wrong->push_back(held[i]);
  }
  return double(exact) / double(held.size());
}

}  // namespace ts::train
