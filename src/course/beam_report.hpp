// course/beam_report.hpp: what ch11 and ch12 print about beam search (--beam K), kept out of
// the chapters so their main reads as the model (introduced in ch11, used by ch12). Every
// figure is read from the search (train/beam.hpp) or measured on the run's held-out numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "course/chapter.hpp"
#include "train/beam_models.hpp"

namespace ts {

// --beam K and --length-penalty A, refused with the fix unless 1 <= K <= kMaxBeam and
// 0 <= A <= 5 (a finite number).
constexpr int64_t kMaxBeam = 16;
void check_beam_knobs(const Chapter& ch, int64_t K, double alpha);

// "beam search (K = 4, length penalty ((5 + |Y|) / 6)^0.6)" or "... plain sum of log-probabilities"
std::string beam_name(const train::BeamOptions& o);

// The words of a hypothesis: vocabulary words of its tokens, then "<end>" if it ended.
std::string beam_words(const train::Hypothesis& h, const std::vector<std::string>& vocab);

// One search, step by step (a search run with trace = true): at each step the live beams it
// extends, the kept candidates (live or finished) and the best dropped ones, each with its
// summed log-probability (and its penalised score when alpha != 0); then the finished beams
// ranked and the winner. `what` names the input ("translate('2048')").
// With `rescore` (a model that recomputes every prefix, e.g. GptRecompute), every candidate shown
// is checked to score its parent's sum plus the log-probability of its token, and a verdict says so.
void show_beam_steps(Chapter& ch, const std::string& what, const train::BeamResult& r, const train::BeamOptions& o,
                     const std::vector<std::string>& vocab, train::BeamModel* rescore = nullptr);

// The held-out numbers decoded greedily, by beam 1 and by beam K (token ids without <end>):
// the verdict "beam 1 = greedy" (tokens compared on every number) and, when K > 1, on how
// many numbers greedy and beam K disagree and how many each gets right (`right(i, tokens)`).
void show_beam_vs_greedy(Chapter& ch, const std::vector<int64_t>& numbers,
                         const std::vector<std::vector<int64_t>>& greedy,
                         const std::vector<std::vector<int64_t>>& beam1,
                         const std::vector<std::vector<int64_t>>& beamK, const train::BeamOptions& o,
                         const std::function<bool(size_t, const std::vector<int64_t>&)>& right,
                         const std::function<std::string(const std::vector<int64_t>&)>& words);

// The cache check: the cached model with its reordered per-beam caches against recomputing
// every prefix (train::CacheCheck: one-beam and K-beam searches). `edit` names the cached step
// (file:line) a learner who edits the model must also change, `reorder` the code that copies
// a parent's cache; `stale` is non-empty when the run's configuration makes cached rows differ
// by construction (no look-ahead / causal mask). The NOT OK's cause: `stale` if given; else the
// step if the one-beam searches already differ; else the reorder (only the K-beam ones differ).
void show_beam_cache_check(Chapter& ch, const train::CacheCheck& c, const std::string& cached_name,
                           const std::string& full_name, const std::string& edit, const std::string& reorder,
                           const std::string& stale);
// What the decoder's self-attention mask (create_mask, on a target of T real tokens) makes
// impossible for a cache, read from the mask (course/mask_stats.hpp mask_breaks_cache); "" when
// it is the causal triangle a cache reproduces.
std::string translation_mask_breaks_cache(const train::ModelConfig& cfg, int64_t T);

// The tolerance of that check grows with the log-probabilities compared (exact/compare.hpp):
// kBeamCacheGrowth * FLT_EPSILON * max(1, max |log p|). Each log p has run through the whole
// decoder twice, one row at a time and as a batch (other kernels, other orders of every sum),
// then a log-softmax over V: 8x exact/compare.hpp's kRoundingGrowth, 1.2e-4 for values of size 1.
constexpr double kBeamCacheGrowth = 1024;

}  // namespace ts
