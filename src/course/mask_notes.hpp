// mask_notes.hpp: ch08's checks and notes on masks and their weights, each worded for its
// outcome (introduced in ch08; moved out of the chapter so its main shows the masks). `keep` is
// a 0/1 mask the size of the weights (1 = keep); the statistics are course/mask_stats.hpp's.
#pragma once

#include <cstddef>
#include <string>

#include "course/chapter.hpp"
#include "exact/tensor.hpp"

namespace ts {

// Two results that should be the same bits; any gap is a finding.
constexpr double kSameWeights = 0.0;
// A softmax row sums to 1 up to float32 rounding below this.
constexpr double kRowSum = 1e-6;

// Under mask[0] (T,T): what it keeps, and the check that it is the causal triangle.
std::string mask_note(Chapter& ch, const Tensor& mask0, bool causal, const std::string& pattern);
// Under the masked weights: hidden keys get 0 and rows sum to 1 (a verdict).
std::string weights_note(Chapter& ch, const Tensor& w, const Tensor& keep);
// Under the weights of masked_fill(mask == 0, fill) (article 002: fill = -1e9): the rows that keep
// no key are uniform 1/S (a verdict), if any.
std::string empty_rows_1e9_note(Chapter& ch, const Tensor& w, const Tensor& keep, float fill);
// After them: -inf and `fill` agree on the rows that keep a key exactly when e^(fill - row max)
// of `scores` (B,T,S) underflows to 0 in float32 (a verdict on that prediction), and what the
// fully masked rows (n_empty) do with each.
void inf_vs_1e9_notes(Chapter& ch, const Tensor& scores, const Tensor& w_inf, const Tensor& w_1e9, size_t n_empty,
                      float fill);
// Under article 004's softmax of the logits: uniform over the visible keys, 0 on hidden ones.
std::string visible_uniform_note(Chapter& ch, const Tensor& w, const Tensor& keep);
// Mix-up A: article 004's look-ahead mask (look1, 1 = hide) read as 1 = keep; look_causal: it
// hides exactly the future.
std::string mixup_a_note(const Tensor& w, const Tensor& look1, bool look_causal);
// Mix-up B: Step 2's mask (1 = keep) given to article 004's function (1 = hide).
std::string mixup_b_note(const Tensor& w, const Tensor& mask, bool causal);

// After the masked scores: the article's printout of them (26.8082 on the diagonal, ...) came
// from a run that seeds nothing, so only their shape and the -inf triangle can match this one.
void unseeded_note(Chapter& ch);

}  // namespace ts
