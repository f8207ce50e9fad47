// attention_notes.cpp: see attention_notes.hpp.
#include "course/attention_notes.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "course/i18n.hpp"
#include "course/weight_stats.hpp"

namespace ts {

std::string dropout_weights_note(const Dropout& dropout, const Tensor& attn) {
  if (!dropout.training) return _("eval mode: no dropout");
  const size_t zeroed = count_zeros(attn);
  if (zeroed == 0)
    return trf("train mode: dropout (p = {p:g}) zeroed none of the {N} attention weights this time",
               fmt::arg("p", dropout.p), fmt::arg("N", attn.size()));
  return trf("train mode: dropout (p = {p:g}) zeroed {n} of the {N} attention weights and scaled the rest by "
             "1/{keep:g}",
             fmt::arg("p", dropout.p), fmt::arg("n", zeroed), fmt::arg("N", attn.size()),
             fmt::arg("keep", 1.0 - dropout.p));
}

std::string weights_range_note(const Tensor& w) {
  const size_t S = w.shape()[w.dimension() - 1];
  return trf("each row is a weighted mean of the same {T} value rows; this head's weights lie between {lo:.3f} and "
             "{hi:.3f} (1/T = {uniform:.3f})",
             fmt::arg("T", S), fmt::arg("lo", *std::min_element(w.begin(), w.end())),
             fmt::arg("hi", *std::max_element(w.begin(), w.end())), fmt::arg("uniform", 1.0 / static_cast<double>(S)));
}

std::string self_weight_note(const Tensor& unprojected, const Tensor& projected) {
  return trf("  The mean weight a token puts on itself: {raw:.3f} in chapter 3 (q = k = v, no projections), "
             "{diag:.3f} here, where q and k come from different random projections; a uniform row gives "
             "1/T = {uniform:.3f}. Training is what would give each head a pattern of its own (one head for "
             "the previous word, one for the verb...).",
             fmt::arg("raw", mean_diagonal(unprojected)), fmt::arg("diag", mean_diagonal(projected)),
             fmt::arg("uniform", 1.0 / static_cast<double>(projected.shape()[projected.dimension() - 1])));
}

std::string not_tensorflow_draws_note(size_t inputs, size_t C, const std::string& seed) {
  return trf("  Printed TensorFlow's way, but not TensorFlow's numbers: the course drew the {n} inputs and the "
             "4 ({C}, {C}) weights with PyTorch's generator (seed {seed}); tf.random.uniform and Keras' initialisers "
             "draw other numbers, so only the shapes and the behaviour compare with the article's run.",
             fmt::arg("n", inputs), fmt::arg("C", C), fmt::arg("seed", seed));
}

std::string head_peaks_note(const Tensor& w) {
  const std::vector<float> peaks = max_per_head(w);
  return trf("The mean weight a position puts on itself is {diag:.3f} (1/T = {uniform:.3f}); the largest weight of "
             "a head ranges from {lo:.2f} to {hi:.2f}.",
             fmt::arg("diag", mean_diagonal(w)), fmt::arg("uniform", 1.0 / static_cast<double>(w.shape()[2])),
             fmt::arg("lo", *std::min_element(peaks.begin(), peaks.end())),
             fmt::arg("hi", *std::max_element(peaks.begin(), peaks.end())));
}

std::string row_spread_note(const Tensor& x) {
  const ColumnSpread sp = column_spread(x);
  return trf("across the {T} rows a column varies by at most {spread:.4f}, while the values range over "
             "[{lo:.3f}, {hi:.3f}]: every row is a mean of the same similar value rows (uniform random inputs)",
             fmt::arg("T", x.shape()[1]), fmt::arg("spread", sp.spread), fmt::arg("lo", sp.lo), fmt::arg("hi", sp.hi));
}

}  // namespace ts
