#include "course/mask_notes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "course/i18n.hpp"
#include "course/mask_stats.hpp"
#include "course/weight_stats.hpp"

namespace ts {

std::string mask_note(Chapter& ch, const Tensor& mask0, bool causal, const std::string& pattern) {
  const size_t n = mask0.size(), kept = count_equal(mask0, 1.0f);
  if (causal)
    return trf("torch.tril(torch.ones(seq_len, seq_len)), 1 = keep: row t marks the keys query t may see; {kept} of "
               "the {n} (query, key) pairs are kept. {check}",
               fmt::arg("kept", kept), fmt::arg("n", n),
               fmt::arg("check", ch.verdict(true, _("row t keeps exactly keys 0..t, the causal triangle"))));
  return trf("1 = keep: row t marks the keys query t may see; {kept} of the {n} (query, key) pairs are kept. {check}",
             fmt::arg("kept", kept), fmt::arg("n", n),
             fmt::arg("check", ch.verdict(false, mask_differs(false, pattern, "torch.tril(...)"))));
}

std::string weights_note(Chapter& ch, const Tensor& w, const Tensor& keep) {
  const float w_hidden = max_hidden(w, keep);
  const double w_sum = row_sum_dev(w);
  if (w_hidden == 0.0f && w_sum <= kRowSum)
    return ch.verdict(true, trf("the hidden keys get weight {w:.3g} (exactly 0 expected); every row sums to 1 within "
                                "{dev:.1e} over the keys it may see",
                                fmt::arg("w", w_hidden), fmt::arg("dev", w_sum)));
  return ch.verdict(false, trf("the largest weight on a hidden key is {w:.3g} and the rows' sums are off 1 by up to "
                               "{dev:.1e} (0 and 1 expected); {nan} row(s) keep no key and are nan",
                               fmt::arg("w", w_hidden), fmt::arg("dev", w_sum), fmt::arg("nan", nan_rows(w))));
}

std::string empty_rows_1e9_note(Chapter& ch, const Tensor& w, const Tensor& keep, float fill) {
  const size_t n_empty = empty_rows(keep), T = w.shape()[w.dimension() - 1];
  if (!n_empty)
    return trf("every row keeps a key: no row is left to {fill} alone", fmt::arg("fill", short_sci(fill)));
  const double empty_dev = uniform_dev(w, keep, true);
  const std::string check =
      empty_dev <= kRowSum
          ? ch.verdict(true, trf("the {empty} such rows are uniform 1/{T} within {dev:.1e}, over padding keys too "
                                 "(wrong but finite)",
                                 fmt::arg("empty", n_empty), fmt::arg("T", T), fmt::arg("dev", empty_dev)))
          : ch.verdict(false, trf("the {empty} such rows stray from uniform 1/{T} by up to {dev:.1e}",
                                  fmt::arg("empty", n_empty), fmt::arg("T", T), fmt::arg("dev", empty_dev)));
  return trf("a row with no key left is now {T} equal numbers: {check}", fmt::arg("T", T), fmt::arg("check", check));
}

void inf_vs_1e9_notes(Chapter& ch, const Tensor& scores, const Tensor& w_inf, const Tensor& w_1e9, size_t n_empty,
                      float fill) {
  const double row_diff = kept_rows_diff(w_inf, w_1e9);
  const size_t T = w_inf.shape()[w_inf.dimension() - 1];
  // the largest e^(fill - row max) over the rows: 0.0 in float32 when fill is far below every score
  float leak = 0.0f;
  for (size_t r = 0; r < scores.size() / T; ++r) {
    const float* row = scores.data() + r * T;
    leak = std::max(leak, std::exp(fill - *std::max_element(row, row + T)));
  }
  const bool same = row_diff <= kSameWeights, predicted_same = leak == 0.0f;
  const std::string f = short_sci(fill);
  std::string verdict;
  if (same && predicted_same)
    verdict = ch.verdict(true, trf("-inf vs {fill}: the rows that keep at least one key differ by {d:.1e} (0 "
                                   "expected: e^({fill} - max) is 0.0 in float32, exactly like e^-inf)",
                                   fmt::arg("fill", f), fmt::arg("d", row_diff)));
  else if (!same && !predicted_same)
    verdict = ch.verdict(true, trf("-inf vs {fill}: the rows that keep at least one key differ by {d:.1e}, as "
                                   "expected: e^({fill} - row max) reaches {e:.2g} in float32, not 0, so the hidden "
                                   "keys keep some weight",
                                   fmt::arg("fill", f), fmt::arg("d", row_diff), fmt::arg("e", leak)));
  else
    verdict = ch.verdict(false, trf("-inf vs {fill}: the rows that keep at least one key differ by {d:.1e}, while "
                                    "e^({fill} - row max) is at most {e:.2g} in float32",
                                    fmt::arg("fill", f), fmt::arg("d", row_diff), fmt::arg("e", leak)));
  ch.say("  " + verdict);
  if (n_empty && same)
    ch.say(trf("  Only the {empty} fully masked row(s) differ: nan with -inf, 1/{T} with {fill}. The {fill} rows are "
               "garbage (they attend to padding too) but finite, and a loss can ignore them; the nan rows are not "
               "harmless, because the next layer multiplies them by 0 and 0 * nan = nan (Step 3).",
               fmt::arg("empty", n_empty), fmt::arg("T", T), fmt::arg("fill", f)));
  else if (n_empty)
    ch.say(trf("  The {empty} fully masked row(s) differ too: nan with -inf, 1/{T} with {fill}; the nan rows are not "
               "harmless, because the next layer multiplies them by 0 and 0 * nan = nan (Step 3).",
               fmt::arg("empty", n_empty), fmt::arg("T", T), fmt::arg("fill", f)));
  else
    ch.say(trf("  No row is fully masked here. Try --valid-len 1 for the rows where -inf and {fill} part.",
               fmt::arg("fill", f)));
}

std::string visible_uniform_note(Chapter& ch, const Tensor& w, const Tensor& keep) {
  const double u_dev = uniform_dev(w, keep, false);
  const float u_hidden = max_hidden(w, keep);
  if (u_dev <= kRowSum && u_hidden == 0.0f)
    return ch.verdict(true, trf("each row is uniform over its visible keys (1, 1/2, 1/3, ...) within {dev:.1e}, and a "
                                "hidden key gets {w:.3g}: never any weight on padding",
                                fmt::arg("dev", u_dev), fmt::arg("w", u_hidden)));
  return ch.verdict(false, trf("a hidden key gets up to {w:.3g} and the rows stray from uniform over their visible "
                               "keys by up to {dev:.1e} (0 expected for both)",
                               fmt::arg("dev", u_dev), fmt::arg("w", u_hidden)));
}

std::string mixup_a_note(const Tensor& w, const Tensor& look1, bool look_causal) {
  const float past = max_on_or_below_diagonal(w, look1);
  if (look_causal)
    return trf("article 004's mask (1 = hide) read as 1 = keep: the largest weight a token gives itself or its past "
               "is {past:.3g}, the rest goes to its FUTURE; {nan} row(s) keep no key at all and are nan",
               fmt::arg("past", past), fmt::arg("nan", nan_rows(w)));
  return trf("article 004's mask as built here, read as 1 = keep: the largest weight a token gives itself or its past "
             "is {past:.3g}; {nan} row(s) keep no key at all and are nan",
             fmt::arg("past", past), fmt::arg("nan", nan_rows(w)));
}

std::string mixup_b_note(const Tensor& w, const Tensor& mask, bool causal) {
  const Tensor hide_b = 1.0f - mask;  // what the function hides: the kept keys of Step 2's mask
  const float past = max_on_or_below_diagonal(w, hide_b);
  const size_t T = w.shape()[w.dimension() - 1];
  if (causal)
    return trf("article 000's mask (1 = keep) given to article 004's function, which adds mask * -1e9 (1 = hide): the "
               "largest weight a token gives itself or its past is {past:.3g} (the rest goes to its future); the "
               "{full} row(s) with -1e9 on every score are uniform 1/{T} within {dev:.1e}, with no nan to warn you",
               fmt::arg("past", past), fmt::arg("full", empty_rows(hide_b)), fmt::arg("T", T),
               fmt::arg("dev", uniform_dev(w, hide_b, true)));
  return trf("Step 2's mask, which is not the causal triangle here, given to article 004's function (1 = hide): the "
             "largest weight a token gives itself or its past is {past:.3g}; {full} row(s) have -1e9 on every score",
             fmt::arg("past", past), fmt::arg("full", empty_rows(hide_b)));
}

void unseeded_note(Chapter& ch) {
  ch.say(trf("  Article 000 prints these masked scores as 26.8082, -0.6981, ... from a run that calls no "
             "torch.manual_seed, so its embedding table, and every number after it, differ from this run's (seed "
             "{s}); the shape and the -inf triangle are what can match.",
             fmt::arg("s", ch.seed_text)));
}

}  // namespace ts
