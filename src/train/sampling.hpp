// train/sampling.hpp: the next token from the logits: greedy, temperature, top-k, top-p
// (nucleus), as GPT-2's and Hugging Face's generate() apply them (introduced in ch12).
//   scaled = logits / temperature          temperature 0 means greedy: the argmax, nothing drawn
//   top-k:  keep the k largest scaled logits (k = 0 or k >= V: keep all)
//   p = softmax(scaled over the kept)
//   top-p:  keep the fewest most likely tokens whose probabilities sum to >= top_p (1: keep all;
//           the most likely token is always kept)
//   renormalise over what is kept, draw one token with the seeded generator
// The chapter refuses temperature < 0, top-k < 0 and top-p outside (0, 1] as bad input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/gpt.hpp"

namespace ts::train {

struct Sampler {
  double temperature = 0.0;  // 0: greedy
  int64_t top_k = 0;         // 0: off
  double top_p = 1.0;        // 1: off
  bool greedy() const { return temperature == 0.0; }
};

// What each transform did to one step's distribution (for the chapter to print).
struct SampleTrace {
  std::vector<double> probs;       // softmax(logits), temperature 1   (V)
  std::vector<double> scaled;      // logits / temperature             (V)
  std::vector<char> kept_k, kept_p;  // 1 = survives top-k / top-k then top-p
  std::vector<double> final;       // renormalised over the kept, 0 elsewhere
  int64_t chosen = -1;
};

int64_t sample_next(const float* logits, int64_t V, const Sampler& s, Rng& rng, SampleTrace* trace = nullptr);
std::string sample_next_site();  // "src/train/sampling.cpp:LINE sample_next", from the compiler

// prompt, then up to max_new tokens until <end> (not returned), through the modules' GPT g: the
// prompt fills one KVCache per block in one forward, then each new token is fed alone
// (next_logits); use_cache false recomputes the whole prefix for every token (last_logits)
std::vector<int64_t> generate(GPT& g, const std::vector<int64_t>& prompt, int64_t max_new, const Sampler& s,
                              Rng& rng, bool use_cache = true);
// the same through m.module()
std::vector<int64_t> generate(const Gpt& m, const std::vector<int64_t>& prompt, int64_t max_new, const Sampler& s,
                              Rng& rng, bool use_cache = true);

// The share of the 500 held-out numbers whose completion of "N =" is exactly
// number_to_words(N) with <end>; `wrong` (if given) receives the others. Greedy (which draws
// nothing) runs the numbers whose prompts have one length as one batch through the caches;
// a sampler draws from one generator, the numbers one at a time, in order.
double held_out_exact_match(const Gpt& m, const Sampler& s, uint64_t seed, std::vector<int64_t>* wrong = nullptr);

}  // namespace ts::train
