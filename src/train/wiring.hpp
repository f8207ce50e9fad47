// train/wiring.hpp: where a block of the trainable models puts its LayerNorms, measured on
// the block's output instead of typed (introduced in ch12, used by ch13), as ch09 measures a
// SublayerConnection (course/decoder_notes.cpp).
//
// The caller runs its model's forward on one token x, with both sublayers of its one block
// made identities (attention over one key returns its value, and the feed-forward's
// act(h) - act(-h) = h, which holds for GELU and ReLU), and reads what comes out. Then:
//   pre-LN:   z = x + norm_1(x),   out = z + norm_2(z)
//   post-LN:  z = norm_1(x + x),   out = norm_2(z + z)
// `after` maps the block's output to what the caller measured (ch12: the final ln_f).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ts::train {

// "pre-LN", "post-LN", or "" when the measured output is neither (max |difference| > tol);
// course/model_probes' wiring_words puts the answer in the learner's words.
template <class F, class Norm1, class Norm2, class After>
std::string block_wiring(const std::vector<F>& x, const std::vector<F>& measured, Norm1 norm_1, Norm2 norm_2,
                         After after, double tol) {
  auto add = [](const std::vector<F>& a, const std::vector<F>& b) {
    std::vector<F> s(a.size());
    for (size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i];
    return s;
  };
  auto gap = [&](const std::vector<F>& out) {
    const std::vector<F> seen = after(out);
    double g = seen.size() == measured.size() ? 0.0 : INFINITY;
    for (size_t i = 0; i < seen.size() && i < measured.size(); ++i)
      g = std::max(g, std::fabs(double(seen[i]) - double(measured[i])));
    return g;
  };
  const std::vector<F> pre_z = add(x, norm_1(x)), post_z = norm_1(add(x, x));
  const double pre = gap(add(pre_z, norm_2(pre_z))), post = gap(norm_2(add(post_z, post_z)));
  if (pre <= tol && pre < post) return "pre-LN";
  if (post <= tol && post < pre) return "post-LN";
  return "";
}

}  // namespace ts::train
