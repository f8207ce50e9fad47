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

double held_out_exact_match(const Gpt& m, const Sampler& s, uint64_t seed, std::vector<int64_t>* wrong) {
  const auto& held = number_split().held_out;
  Rng rng(seed);
  int64_t exact = 0;
  GPT g = m.module();  // one module for every number
  for (int64_t n : held) {
    const bool ok = seq_vocab().decode(generate(g, encode_prompt(n), m.cfg.ctx, s, rng)) == number_to_words(n);
    exact += ok;
    if (!ok && wrong) wrong->push_back(n);
  }
  return double(exact) / double(held.size());
}

}  // namespace ts::train
